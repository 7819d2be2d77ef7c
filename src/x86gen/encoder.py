"""`encode(mnemonic, *operands)`: choose the form from the operands and encode it.

Forms are chosen as GNU as chooses them: among the forms whose operand kinds match, the shortest
(`Form.length`, then file order), taking the first whose immediates fit — so ``add eax, 1`` is
``83 /0 ib``, ``add eax, 1000`` is ``05 id`` and ``jmp`` takes rel8 when the target is in reach.
`encode` keeps one plan per (mnemonic, operand signature): a function that encodes that signature. The first time
it meets a signature, `x86gen._first_use` chooses from the table's text and the chosen forms' generated encoders
encode (so a one-off encode, such as a process's first, builds no `Form` and compiles no code); the second time,
`x86gen._choose.plan_for` compiles the plan, which is kept.

Only what a plain instruction needs is here (its source is compiled by every process without a bytecode
cache); the rest loads on first use: x86gen._choose (candidates and plans), _aliases, _strings, _prefixed, _narrow
(pseudo-prefixes, movabs, prefix words, registers 16-31), _select, _plan_compiler, _encode_errors,
_operand_rewrites (xchg, lea of a far address), _vex_rm_swap (their names stay importable from this module,
`_ELSEWHERE`).
"""
from __future__ import annotations

import sys

from ._first_use import first_plan
from ._runtime import LabelOperand, label_error
from .memory import A32Mem, Bcst, SegMem


def _decorated(ops: tuple) -> bool:
    """Is one of ``ops`` a masked destination or a broadcast source, which only the EVEX slow path (x86gen._evex,
    imported when one is met) encodes (`x86gen._evex.DECORATED`)? A `x86gen.evex.Masked` exists only once
    x86gen.evex is imported, so a plain encode does not import it."""
    evex = sys.modules.get(f"{__package__}.evex")
    masked = evex.Masked if evex is not None else Bcst
    return any(x.__class__ is Bcst or x.__class__ is masked for x in ops)

EVEX_PREFIX = "{evex}"   # a mnemonic "{evex}vaddps" encodes with an EVEX form only (the text pseudo-prefix `{evex} vaddps`)
VEX_PREFIX = "{vex}"     # and "{vex}vaddps" with a VEX form only (`{vex} vpdpbusd`, as objdump prints AVX-VNNI)

# Parts of the encoder that a plain instruction does not need, in modules loaded on first use (their names stay
# importable from here, through `__getattr__`): each line is a module and the names it holds. (One string: a plain
# encode compiles one constant, not a dict of them.)
_ELSEWHERE = """
_choose canonical candidates plan_for keep_plan no_form_error range_error _matches _accumulator_nop _sized_kind
_choose _CANDIDATES _COMPILED REG_MEMO_MAX _fallback _compile_plan _far_address_error _size_word
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


def _key(mnemonic: str, ops: tuple) -> tuple:
    """The operand signature: register kind (or the register, for al/cl/eax/…), memory size, 'i', 'l'."""
    return (mnemonic, *["i" if x.__class__ is int else x.sig for x in ops])


# encode()'s plans: published complete (built in locals, stored last), so that another thread (free-threaded CPython
# included) that finds one finds it whole
_PLANS: dict[tuple, object] = {}      # (mnemonic, *signature) → plan
_RPLANS: set = set()                  # the plans of rel8/rel32 forms, which take ``ip=``
_MET: set = set()                     # the (mnemonic, *signature) met once, whose plan the next use compiles


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
    if mnemonic.__class__ is not str or " " in mnemonic or mnemonic in STRING_MNEMONICS or SegMem in map(type, ops) \
            or A32Mem in map(type, ops):   # prefix words, segment overrides, 32-bit addresses, string instructions
        from ._encode_rare import rewritten
        done = rewritten(mnemonic, ops, ip, _encode)
        if done is not None: return done
    try: key = _key(mnemonic, ops)
    except AttributeError:   # immediates given as bool / numpy integers (operator.index), or no operand at all
        from ._encode_rare import int_like
        return int_like(mnemonic, ops, ip, _encode)
    if "l" in key[1:]: raise label_error(mnemonic, ops)   # (never cached: the fast path comes back here)
    if key[0] == "lea" and key[-1][:5] == "moffs":
        from ._encode_rare import lea_far
        done = lea_far(mnemonic, ops, ip, _encode)
        if done is not None: return done
    plan = _PLANS.get(key)
    if plan is None:
        if _decorated(ops):   # masks, broadcast: the EVEX slow path (no plan)
            return _evex_encode(mnemonic, ops, None, ip)
        if key not in _MET:
            # the signature's first use: the chosen forms' own (generated) encoders, chosen from the table's text
            # where `first_plan` can (else by x86gen._choose, as its `_fallback` calls them); the plan is compiled on
            # the second use (a one-off encode, such as a process's first, builds no Form and compiles no code)
            first = first_plan(mnemonic, key[1:])
            if first is None:
                from ._choose import plan_for
                first = plan_for(mnemonic, key[1:], ops, compiled=False)
            plan, rel = first
            _MET.add(key)
            try: return plan(*ops, ip=ip) if rel else plan(*ops)
            except LabelOperand: raise label_error(mnemonic, ops) from None
        from ._choose import keep_plan
        plan = keep_plan(mnemonic, key, ops, _PLANS, _RPLANS, _TABLES)
    try: return plan(*ops, ip=ip) if plan in _RPLANS else plan(*ops)
    except LabelOperand: raise label_error(mnemonic, ops) from None


def _evex_encode(mnemonic, ops: tuple, rc, ip: int) -> bytes:
    from ._encode_rare import evex_encode
    return evex_encode(mnemonic, ops, rc, ip)
