"""`encode(mnemonic, *operands)`: choose the form from the operands and encode it.

Forms are chosen as GNU as chooses them: among the forms whose operand kinds match, the shortest
(`Form.length`, then file order), taking the first whose immediates fit — so ``add eax, 1`` is
``83 /0 ib``, ``add eax, 1000`` is ``05 id`` and ``jmp`` takes rel8 when the target is in reach.
The candidate list for each operand signature is computed once and cached, and so is its plan: one
function that encodes that signature (see `plan_for`), compiled when `encode` meets the signature the second
time (the first time the chosen forms' own generated encoders do it, so that a one-off encode, such as a
process's first, compiles no code).

Only what a plain instruction needs is here (its source is compiled by every process without a bytecode
cache); the rest loads on first use: x86gen._aliases, _strings, _prefixed, _narrow (the rarer candidates: pseudo-prefixes,
movabs, prefix words, registers 16-31), _select, _plan_compiler, _encode_errors, _operand_rewrites (xchg, lea of a far
address), _vex_rm_swap (their names stay importable from this module, `_ELSEWHERE`).
"""
from __future__ import annotations

import functools
import sys

from ._table import A32_SPELLED, REG_ADDRESS, has_mnemonic
from .errors import LabelContextError, OperandError, UnknownMnemonicError, fmt_operands, fmt_value
from .forms import Form, forms_of
from .memory import A32Mem, Bcst, Mem, SegMem, VsibMem
from .registers import Reg


def _decorated(ops: tuple) -> bool:
    """Is one of ``ops`` a masked destination or a broadcast source, which only the EVEX slow path (x86gen._evex,
    imported when one is met) encodes (`x86gen._evex.DECORATED`)? A `x86gen.evex.Masked` exists only once
    x86gen.evex is imported, so a plain encode does not import it."""
    evex = sys.modules.get(f"{__package__}.evex")
    masked = evex.Masked if evex is not None else Bcst
    return any(x.__class__ is Bcst or x.__class__ is masked for x in ops)

_CANDIDATES: dict[tuple, tuple[tuple[Form, ...], bool]] = {}
EVEX_PREFIX = "{evex}"   # a mnemonic "{evex}vaddps" encodes with an EVEX form only (the text pseudo-prefix `{evex} vaddps`)
VEX_PREFIX = "{vex}"     # and "{vex}vaddps" with a VEX form only (`{vex} vpdpbusd`, as objdump prints AVX-VNNI)

# Parts of the encoder that a plain instruction does not need, in modules loaded on first use (their names stay
# importable from here, through `__getattr__`): each line is a module and the names it holds. (One string: a plain
# encode compiles one constant, not a dict of them.)
_ELSEWHERE = """
_aliases MNEMONIC_ALIASES
_strings string_operands _implied _SIZE_SUFFIX _ACCUMULATORS
_prefixed encode_prefixed _encode_prefixed _encode_prefixed_a32 _segment _string_segments
_plan_compiler _parts _nofit
_select select select_form IMM_POLICIES _evex_choose
_operand_rewrites xchg_choice _XCHG_ACCUMULATOR _XCHG_SELF_NOP _XCHG_RM lea_low_bits
_vex_rm_swap _rm_index _by_rm_register _shortest_of _vex_alternatives
_narrow _movabs_form SELECTOR_READ
"""


def __getattr__(name: str):
    for line in _ELSEWHERE.strip().splitlines():
        mod, *names = line.split()
        if name in names:
            import importlib
            return getattr(importlib.import_module(f".{mod}", __package__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def canonical(mnemonic: str) -> str:
    """The table's mnemonic for ``mnemonic``: itself, or what its alias names if the table has that;
    otherwise itself, so that errors name what was written (`cltq`, not `cdqe`)."""
    if has_mnemonic(mnemonic): return mnemonic
    from ._aliases import MNEMONIC_ALIASES
    target = MNEMONIC_ALIASES.get(mnemonic)
    return target if target is not None and has_mnemonic(target) else mnemonic


def _accumulator_nop(f: Form, ops: tuple) -> bool:
    """Form ``f`` is xchg's 90+r and ``ops`` give it the accumulator itself, which it refuses (90 is NOP)."""
    return f.opcode == 0x90 and f.opcode_map == 0 and any(o.loc == "opc" and isinstance(x, Reg) and x.num == 0
                                                          for o, x in zip(f.operands, ops))


def _matches(o, x, movabs: bool = False) -> bool:
    """Does operand value ``x`` have a kind form operand ``o`` accepts (ignoring immediate ranges)?

    A moffs operand (``mov eax, moffs32``) takes the memory operands whose address only it can encode (64-bit
    absolute, signature ``moffsN``), or with ``movabs`` any memory operand (its plan checks it is absolute);
    the other memory operands take every other memory operand."""
    if o.imm is not None or o.kind == "1":
        return x.__class__ is int or (o.kind.startswith("rel") and getattr(x, "sig", None) == "l")
    if isinstance(x, Reg):
        if o.loc == "fixed": return x.name == o.reg
        return x.kind == o.reg
    if isinstance(x, Mem):
        if x.__class__ is A32Mem: x = x.plain   # a 32-bit address: as its 64-bit operand (a VSIB one too)
        if o.mem is None or (o.mem and x.size not in (0, o.mem)) or x.__class__ is Bcst: return False   # Bcst: x86gen._evex
        if o.kind[:2] == "vm" or x.__class__ is VsibMem:   # a VSIB operand (vm32x …) takes a VsibMem of its index class only
            return o.kind[:2] == "vm" and x.__class__ is VsibMem and x.index.kind[0] == o.kind[-1]
        return (o.loc == "moffs") == x.far or (movabs and o.loc == "moffs")
    return False


# ---- string instructions: operands the text may leave out, and the names without a size -------------------------
#
# The string instructions (SDM Vol.2 MOVS, CMPS, SCAS, LODS, STOS, INS, OUTS), xlat and maskmovdqu/maskmovq address
# memory through fixed registers (isa/README.md: m8@rsi, m8@esrdi, m8@rbxal, m128@rdi). Their forms take those
# operands explicitly, as iced-x86's Codes do (``encode("movsb", byte(rdi), byte(rsi))``); GNU as also takes them
# without operands (``movsb``, ``rep stosq``, ``xlatb``), with some left out (iced-x86's ``lodsb byte ptr [rsi]``,
# ``maskmovdqu xmm0, xmm1``), and by the name without a size suffix, sized by the operands (``movs byte ptr [rdi],
# byte ptr [rsi]``, ``lods eax, dword ptr [rsi]``). `x86gen._strings.string_operands` turns each of those into a
# form's operands; `x86gen._prefixed` applies segment overrides and prefix words to them.
# (Written out, not computed: a plain encode compiles two constants. tests/test_strings.py checks the rule: each
# generic name with each size suffix b/w/d/q, but no insq/outsq.)
STRING_GENERIC = frozenset("movs cmps scas lods stos ins outs".split())
STRING_MNEMONICS = frozenset("""movs movsb movsw movsd movsq cmps cmpsb cmpsw cmpsd cmpsq scas scasb scasw scasd scasq
    lods lodsb lodsw lodsd lodsq stos stosb stosw stosd stosq ins insb insw insd outs outsb outsw outsd
    xlat xlatb maskmovdqu maskmovq vmaskmovdqu""".split())


def _sized_kind(f: Form) -> str:
    """"addr32" for a form with a 32-bit implicit address (MONITORD), "data16" for a 16-bit branch (o16: XBEGIN_REL16,
    JMP_REL16), "data16 addr32" for both (LOOP_REL8_16_ECX), else "": the forms that only their prefix words (or their
    own spelling) ask for. jecxz and umonitor r32 say their 32-bit address themselves (`A32_SPELLED`), enqcmd r32, m512
    by its memory operand (an `A32Mem`: the `a32` forms of `REG_ADDRESS`)."""
    a32 = f.addrsize32 and f.mnemonic not in A32_SPELLED and f.mnemonic not in REG_ADDRESS
    o16 = f.opsize16 and f.is_branch
    return "data16 addr32" if o16 and a32 else "addr32" if a32 else "data16" if o16 else ""


def candidates(mnemonic: str, sig: tuple, ops: tuple, sized: str = "") -> tuple[tuple[Form, ...], bool]:
    """Forms of ``mnemonic`` that accept operands like ``ops``, best first; and whether any needs a fit check.

    A form whose implicit address is 32-bit (`Form.addrsize32`: MONITORD, LOOP_REL8_64_ECX) is another operation than
    its 64-bit twin with the same operands, and a 16-bit branch (o16) truncates its target to 16 bits on AMD CPUs
    (SDM Vol.2 JMP; xbegin's is not truncated, but GNU as writes rel32 for it too): such a form is a candidate only where
    the mnemonic has no other and says it itself (jecxz, ``umonitor r32``: `Form.syntax` without the prefix word), or with
    ``sized`` = its prefix word, ``"addr32"`` or ``"data16"``: then only those forms are (`_sized_kind`). Without its
    prefix word, a form that needs one is refused, not taken (``montmul``: GNU as writes F3 0F A6 C0, x86gen has only
    MONTMUL_32, ``addr32 montmul``)."""
    key = (mnemonic, *sig) if not sized else (mnemonic, *sig, sized)
    hit = _CANDIDATES.get(key)
    if hit is not None: return hit
    if sized or mnemonic.startswith("{") or mnemonic == "movabs" or mnemonic in REG_ADDRESS or any(getattr(x, "hi16", False) for x in ops):
        # `{evex} vaddps …` (text: `EVEX_PREFIX` + mnemonic), `{vex}`, movabs, a prefix word, movdir64b/enqcmd (r32 with
        # [ecx], r64 with [rcx]: `address_size_fits`), registers 16-31: x86gen._narrow
        from ._narrow import special_candidates
        forms, ok = special_candidates(mnemonic, ops, sized)
    else:
        forms = forms_of(canonical(mnemonic))
        ok = [f for f in forms if len(f.operands) == len(ops) and all(_matches(o, x) for o, x in zip(f.operands, ops))]
        ok = [f for f in ok if not _accumulator_nop(f, ops)]   # xchg eax, eax: 87 C0, not 90 (NOP)
        if ok:
            plain = [f for f in ok if not _sized_kind(f)]
            if not plain:
                from ._narrow import spelled_sized
                plain = spelled_sized(mnemonic, ops, ok)
            ok = plain
    if not ok:
        raise _far_address_error(mnemonic, ops) or no_form_error(mnemonic, ops, forms)
    for i, x in enumerate(ops):
        if isinstance(x, Mem) and not x.size:
            # an unsized `call [rax]` / `jmp [rax]` is the near indirect branch (FF /2, FF /4: r/m64), as GNU as reads it;
            # a far pointer in memory (m16:16/m16:32/m16:64, FF /3, FF /5) is taken by its size (`call fword ptr [rax]`)
            # where another form takes the operand too (lfs/lgs/lss have far pointers only: their register gives the size)
            near = [f for f in ok if ":" not in f.operands[i].kind]
            if near and len(near) < len(ok): ok = near
            sizes = {f.operands[i].mem for f in ok if f.operands[i].mem}
            if len(sizes) > 1:
                names = "/".join(sorted({_size_word(s) for s in sizes}))
                raise OperandError(f"{mnemonic} {fmt_operands(ops)}: operand {i + 1} needs a size ({names} ptr)")
    ok.sort(key=lambda f: f.length)   # stable: file order among equals
    res = (tuple(ok), any(f.imm_widths or any(o.kind == "1" for o in f.operands) for f in ok))
    _CANDIDATES[key] = res
    return res








def _far_address_error(mnemonic: str, ops: tuple) -> OperandError | None:
    from ._encode_errors import far_address_error
    return far_address_error(mnemonic, ops)


def _size_word(bits: int) -> str:
    from ._encode_errors import size_word
    return size_word(bits)


def no_form_error(mnemonic: str, ops: tuple, forms: list[Form]) -> OperandError:
    """The error for operands that no form of ``mnemonic`` takes, listing its forms (`x86gen._encode_errors`)."""
    from ._encode_errors import no_form_error
    return no_form_error(mnemonic, ops, forms)


def range_error(mnemonic, ops, forms) -> OperandError:
    """The error for immediates or a branch target that fit none of ``forms`` (`x86gen._encode_errors`)."""
    from ._encode_errors import range_error
    return range_error(mnemonic, ops, forms)


def label_error(mnemonic: str, ops: tuple) -> LabelContextError:
    """The error for a label operand given to `encode` (or a form): only an Assembler can resolve it."""
    from ._encode_errors import label_error
    return label_error(mnemonic, ops)


# ---- plans: how one operand signature of a mnemonic is encoded -------------------------------------
#
# A plan is one function that encodes operands of one signature exactly as `select` chooses. It is
# compiled from the bodies of the candidate forms' encoders, written for that signature by
# `_specialize.parts` (so without the checks the signature answers: operand classes, memory size,
# fixed registers): when the choice needs a run-time test (immediates that may not fit the short
# form, equally long VEX forms) each body goes under its test, so there is one Python frame and
# nothing is encoded twice. Signatures of registers only are memoized instead (see `plan_for`).
#
# Plans are the one place where x86gen still compiles code at run time (one function per operand signature
# met, never per form: a form's own encoder is generated, in _gen/encoders). They pay: `tools/bench.py --quick`
# with every plan replaced by calls of the forms' encoders (`_fallback`) ran x86gen.encode at 2.8-3.9x iced and
# the Assembler at 3.3-4.2x, against 1.8-2.1x and 1.7-2.6x with plans, in the same runs (2 rounds each). A
# signature's first `encode` uses `_fallback` all the same (``plan_for(..., compiled=False)``): a plan pays only
# when it is used again, and compiling it (with x86gen._specialize, 26 KB of source) was most of a first encode.

# Every cache here is keyed by operand signatures (register kinds, memory sizes, 'i'), whose number is bounded by
# the spec (only signatures some form accepts are kept), except the register-only memos, which keep at most
# REG_MEMO_MAX entries each. Each entry is published complete (built in locals, stored last), so another thread
# (free-threaded CPython included) that finds it finds it whole.
REG_MEMO_MAX = 512
_PLANS: dict[tuple, object] = {}      # encode(): (mnemonic, *signature) → plan
_RPLANS: set = set()                  # the plans of rel8/rel32 forms, which take ``ip=``
_COMPILED: dict[tuple, object] = {}   # plans by (mnemonic, how, label check, signature, forms)
_MET: set = set()                     # encode(): the (mnemonic, *signature) met once, whose plan the next use compiles


class LabelOperand(Exception):
    """Raised by an `Assembler` plan (``labels=True``) when its memory operand names a label: the
    Assembler then takes its general path, which records the RIP-relative fixup."""


def _key(mnemonic: str, ops: tuple) -> tuple:
    """The operand signature: register kind (or the register, for al/cl/eax/…), memory size, 'i', 'l'."""
    return (mnemonic, *["i" if x.__class__ is int else x.sig for x in ops])


def plan_for(mnemonic: str, sig: tuple, ops: tuple, labels: bool = False, compiled: bool = True):
    """(plan, takes ``ip=``) for operands like ``ops`` with signature ``sig``. A plan with a memory operand
    raises `LabelOperand` when that operand names a label (the `Assembler` then records a fixup; `encode`
    raises `LabelContextError`); ``labels`` is accepted for compatibility and changes nothing. With
    ``compiled=False`` a plan that would be compiled is the calls of the forms' encoders instead (`_fallback`,
    not kept: the same choice and bytes, slower)."""
    if len(ops) == 2 and canonical(mnemonic) == "xchg":   # GNU as's xchg operands (x86gen._operand_rewrites)
        from ._operand_rewrites import xchg_plan
        plan = xchg_plan(mnemonic, ops)
        if plan is not None: return plan, False
    forms, check = candidates(mnemonic, sig, ops)
    rel = any(f.is_branch for f in forms)
    mem_at = next((i for i, s in enumerate(sig) if s[0] == "m"), None)
    if check: mode, chosen = "fit", forms
    elif len(forms) > 1 and forms[0].encoding_kind == "vex" and forms[1].length == forms[0].length:
        # equally long VEX forms: the one with the shorter bytes for the registers given (x86gen._vex_rm_swap)
        from ._vex_rm_swap import _by_rm_register, _vex_alternatives
        alts = _vex_alternatives(forms)
        if _by_rm_register(alts, sig): mode, chosen = "vex", alts
        else: return _fallback(mnemonic, "vex", alts, mem_at), rel
    else: mode, chosen = "one", forms[:1]
    key = (mnemonic, mode, mem_at, sig, tuple(f.id for f in chosen))
    plan = _COMPILED.get(key)
    if plan is None and not compiled: return _fallback(mnemonic, mode, chosen, mem_at), rel
    if plan is None:
        if sig and all(s != "i" and s[0] != "m" and s != "l" for s in sig):
            # registers only: the bytes depend on which registers alone, so they are remembered (a C-level cache
            # keyed by the register objects, the last REG_MEMO_MAX combinations); then how fast the function is
            # matters little, and one form needs no plan of its own
            plan = functools.lru_cache(maxsize=REG_MEMO_MAX)(chosen[0].encode if mode == "one" else
                                                             _compile_plan(mnemonic, sig, mode, mem_at, chosen, rel))
        else: plan = _compile_plan(mnemonic, sig, mode, mem_at, chosen, rel)
        _COMPILED[key] = plan
    return plan, rel


def _compile_plan(mnemonic: str, sig: tuple, mode: str, mem_at: int | None, chosen: tuple[Form, ...], rel: bool):
    """The plan compiled (`x86gen._plan_compiler`, loaded on the first signature met twice)."""
    from ._plan_compiler import compile_plan
    return compile_plan(mnemonic, sig, mode, mem_at, chosen, rel)


def _fallback(mnemonic: str, mode: str, forms: tuple[Form, ...], mem_at: int | None):
    """The plan as calls of the forms' own functions (VEX alternatives that the rm register cannot tell apart)."""
    if mode == "vex":
        from ._vex_rm_swap import _shortest_of
        inner = _shortest_of(forms)
    elif mode == "one": inner = forms[0].encode
    else:
        def inner(*ops, ip=0):
            for f in forms:
                if f.fits(*ops, ip=ip): return f(*ops, ip=ip) if f.is_branch else f(*ops)
            raise range_error(mnemonic, ops, forms)
    if mem_at is None: return inner
    def plan(*ops, **kw):
        if ops[mem_at].label is not None: raise LabelOperand
        return inner(*ops, **kw)
    return plan


def encode(mnemonic: str, *ops, ip: int = 0, rc: int | None = None) -> bytes:
    """Encode one instruction, e.g. ``encode("vaddps", ymm0, ymm1, mem(rdi, size=256))``.

    Operands are registers, `Mem` operands and ints (immediates; for branches the absolute target
    address, with the instruction at ``ip``). Raises `EncodeError` subclasses on bad input.
    AVX-512 (`x86gen.evex`): a masked destination (``zmm1.k(k1)``, ``zmm1.k(k1).z``), a broadcast source
    (``dword(rax).bcst``) and ``rc=`` (`x86gen.RN_SAE` … `x86gen.RZ_SAE`, `x86gen.SAE`) choose among the EVEX forms
    that allow them (`x86gen.EvexOperandError` when none does).
    """
    if rc is not None: return _evex_encode(mnemonic, ops, rc, ip)
    # fast path: the plan from the mnemonic's table, one dict level per operand signature (no tuple to build
    # or hash), then the plan's one frame; a plan of a branch form takes ip= (and defaults to ip=0)
    try:
        n = len(ops)
        if n == 2:
            a, b = ops
            plan = _TABLES[mnemonic][2]["i" if type(a) is int else a.sig]["i" if type(b) is int else b.sig]
        elif n == 3:
            a, b, c = ops
            plan = _TABLES[mnemonic][3]["i" if type(a) is int else a.sig]["i" if type(b) is int else b.sig][
                "i" if type(c) is int else c.sig]
        elif n == 1:
            a = ops[0]
            plan = _TABLES[mnemonic][1]["i" if type(a) is int else a.sig]
        else: return _encode(mnemonic, ops, ip)
    except (KeyError, AttributeError, TypeError): return _encode(mnemonic, ops, ip)
    try:
        if ip and plan in _RPLANS: return plan(*ops, ip=ip)
        return plan(*ops)
    except LabelOperand: raise label_error(mnemonic, ops) from None


_TABLES: dict[str, dict] = {}   # encode(): mnemonic → {number of operands: {signature: …: plan}}


def _encode(mnemonic: str, ops: tuple, ip: int) -> bytes:
    """`encode` for a signature met the first time (and for 0 or 4 operands, and errors): choose and keep its plan."""
    if mnemonic.__class__ is not str: raise UnknownMnemonicError(f"a mnemonic is a string, not {fmt_value(mnemonic)}")
    if " " in mnemonic or SegMem in map(type, ops) or A32Mem in map(type, ops):
        from ._prefixed import encode_prefixed
        return encode_prefixed(mnemonic, ops, ip)[0]
    if mnemonic in STRING_MNEMONICS:   # `movsb`, `lods eax, dword ptr [rsi]`: the form's name and operands
        from ._strings import string_operands
        mn, filled = string_operands(mnemonic, ops)
        if mn is not mnemonic or filled is not ops: return _encode(mn, filled, ip)
    try: key = _key(mnemonic, ops)
    except AttributeError:
        from ._form_rare import int_operands
        ints = int_operands(ops)   # immediates given as bool / numpy integers (operator.index)
        if ints is not None: return _encode(mnemonic, ints, ip)
        raise no_form_error(mnemonic, ops, forms_of(canonical(mnemonic))) from None
    if "l" in key[1:]: raise label_error(mnemonic, ops)   # (never cached: the fast path comes back here)
    if key[0] == "lea" and key[-1][:5] == "moffs":
        from ._operand_rewrites import lea_low_bits
        near = lea_low_bits(mnemonic, ops)
        if near is not None: return _encode(mnemonic, near, ip)
    plan = _PLANS.get(key)
    if plan is None:
        if _decorated(ops):   # masks, broadcast: the EVEX slow path (no plan)
            return _evex_encode(mnemonic, ops, None, ip)
        if key not in _MET:
            # the signature's first use: the chosen forms' own (generated) encoders, as `_fallback` calls them; its
            # plan is compiled on the second (a one-off encode, such as a process's first, compiles no code and
            # needs no x86gen._specialize)
            plan, rel = plan_for(mnemonic, key[1:], ops, compiled=False)
            _MET.add(key)
            try: return plan(*ops, ip=ip) if rel else plan(*ops)
            except LabelOperand: raise label_error(mnemonic, ops) from None
        plan, rel = plan_for(mnemonic, key[1:], ops)
        if rel: _RPLANS.add(plan)   # before the plan is published: whoever finds it must know it takes ip=
        _PLANS[key] = plan
        if 1 <= len(ops) <= 3:
            t = _TABLES.setdefault(mnemonic, {}).setdefault(len(ops), {})
            for s in key[1:-1]: t = t.setdefault(s, {})
            t[key[-1]] = plan
    try: return plan(*ops, ip=ip) if plan in _RPLANS else plan(*ops)
    except LabelOperand: raise label_error(mnemonic, ops) from None


def _evex_encode(mnemonic, ops: tuple, rc, ip: int) -> bytes:
    from . import _evex
    if mnemonic.__class__ is not str: raise UnknownMnemonicError(f"a mnemonic is a string, not {fmt_value(mnemonic)}")
    return _evex.encode(mnemonic, ops, rc, ip)
