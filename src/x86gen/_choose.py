"""Choosing forms for an operand signature: the candidates (`candidates`) and the plan that encodes them (`plan_for`).

`x86gen.encode` meets each (mnemonic, operand signature) a first time, when `x86gen._first_use` chooses from the
table's text where it can (and this module where it cannot: prefix words, unsized memory, registers 16-31, equally
long VEX forms, a mnemonic's other names, errors), and a second time, when `plan_for` here compiles the signature's
plan, which `encode` keeps. `select`, the text and prefix layers and the `Assembler` choose here too. Forms are
chosen as GNU as chooses them: among the forms whose operand kinds match, the shortest (`Form.length`, then file
order), taking the first whose immediates fit.
"""
from __future__ import annotations

import functools

from ._first_use import VEX_ON_REQUEST, takes
from ._runtime import LabelOperand
from ._table import A32_SPELLED, REG_ADDRESS, has_mnemonic
from .errors import OperandError, fmt_operands
from .forms import Form, forms_of
from .memory import A32Mem, Mem, SegMem
from .registers import Reg

_CANDIDATES: dict[tuple, tuple[tuple[Form, ...], bool]] = {}


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
    """Does operand value ``x`` have a kind form operand ``o`` accepts (ignoring immediate ranges)? `takes` with its
    signature: a segment override or a 32-bit address is matched as the plain memory operand it holds."""
    while x.__class__ is SegMem or x.__class__ is A32Mem: x = x.plain
    s = "i" if x.__class__ is int else getattr(x, "sig", None)
    return s.__class__ is str and takes(o, s, movabs)


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
            if any(f.cpuid in VEX_ON_REQUEST for f in ok):   # vpdpbusd: EVEX unless `{vex}`, as GNU as and llvm-mc
                evex = [f for f in ok if f.cpuid not in VEX_ON_REQUEST]
                if any(f.encoding_kind == "evex" for f in evex): ok = evex
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


def range_error(mnemonic: str, ops: tuple, forms) -> OperandError:
    """The error for immediates or a branch target that fit none of ``forms`` (`x86gen._encode_errors`)."""
    from ._encode_errors import range_error
    return range_error(mnemonic, ops, forms)


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
# signature's first `encode` compiles no plan: a plan pays only when it is used again, and compiling it (with
# x86gen._specialize, 26 KB of source) was most of a first encode. The first use is `x86gen._first_use`'s, or, where
# that leaves the choice to this module, `_fallback`'s (``plan_for(..., compiled=False)``).

# Every cache here is keyed by operand signatures (register kinds, memory sizes, 'i'), whose number is bounded by
# the spec (only signatures some form accepts are kept), except the register-only memos, which keep at most
# REG_MEMO_MAX entries each. Each entry is published complete (built in locals, stored last), so another thread
# (free-threaded CPython included) that finds it finds it whole.
REG_MEMO_MAX = 512
_COMPILED: dict[tuple, object] = {}   # plans by (mnemonic, how, label check, signature, forms)


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


def keep_plan(mnemonic: str, key: tuple, ops: tuple, plans: dict, rel_plans: set, tables: dict):
    """`x86gen.encode`'s second use of signature ``key`` (mnemonic and signature): its plan, compiled and published in
    ``plans`` (and, for 1-3 operands, in ``tables``, the nested dicts of encode's fast path); a plan of a branch form
    also in ``rel_plans`` (it takes ``ip=``), first, so that whoever finds it knows."""
    plan, rel = plan_for(mnemonic, key[1:], ops)
    if rel: rel_plans.add(plan)
    plans[key] = plan
    if 1 <= len(ops) <= 3:
        t = tables.setdefault(mnemonic, {}).setdefault(len(ops), {})
        for s in key[1:-1]: t = t.setdefault(s, {})
        t[key[-1]] = plan
    return plan
