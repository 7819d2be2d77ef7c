"""Choosing a form without encoding: `select` (the form `x86gen.encode` uses) and `select_form` (the form among a
backend's allowed forms that encodes some operands, by an immediate policy). Loaded on first use."""
from __future__ import annotations

from ._choose import candidates, range_error
from ._runtime import label_error
from .encoder import STRING_MNEMONICS, _decorated, _key, xchg_choice
from .errors import OperandError, UnknownMnemonicError, fmt_value
from .forms import Form, describe_operand, get_form
from .memory import A32Mem, Mem, SegMem


def _evex_choose(mnemonic, ops: tuple, rc, ip: int) -> Form:
    from . import _evex
    if mnemonic.__class__ is not str: raise UnknownMnemonicError(f"a mnemonic is a string, not {fmt_value(mnemonic)}")
    return _evex.choose(mnemonic, ops, rc, ip)


def select(mnemonic: str, *ops, ip: int = 0, rc: int | None = None) -> Form:
    """The form `encode` would use for these operands (and rounding ``rc``, see `encode`)."""
    if rc is not None: return _evex_choose(mnemonic, ops, rc, ip)
    # prefix words (`lock add`), a segment override or a 32-bit address: the prefix layer (SegMem is a Mem, so the forms would take it
    # and drop the override); `SegMem in map(type, ops)` is the cheap test, select() runs it on every call
    if " " in mnemonic or SegMem in map(type, ops) or A32Mem in map(type, ops):
        from ._prefixed import encode_prefixed
        return encode_prefixed(mnemonic, ops, ip)[1]
    if mnemonic in STRING_MNEMONICS:   # `movsb`: its implied operands
        from ._strings import string_operands
        mnemonic, ops = string_operands(mnemonic, ops)
    key = _key(mnemonic, ops)
    if "l" in key[1:]: raise label_error(mnemonic, ops)
    xchg = xchg_choice(mnemonic, ops)
    if xchg is not None: return xchg[0]   # (with the operands xchg_choice gives)
    try: forms, check = candidates(mnemonic, key[1:], ops)
    except OperandError:   # no plain form takes them: masked or broadcast operands take the EVEX path (x86gen._evex)
        if _decorated(ops): return _evex_choose(mnemonic, ops, None, ip)
        raise
    if not check:
        from ._vex_rm_swap import _vex_alternatives
        alts = _vex_alternatives(forms)
        return forms[0] if len(alts) < 2 else min(alts, key=lambda f: len(f.encode(*ops)))   # first among equals
    for f in forms:
        if f.fits(*ops, ip=ip): return f
    raise range_error(mnemonic, ops, forms)

IMM_POLICIES = ("shortest", "widest")


def select_form(forms, *ops, imm: str = "shortest", imm_bits: int | None = None, ip: int = 0, rc: int | None = None) -> Form:
    """The form among ``forms`` (form ids or `Form` objects: the ones a backend allows for one of its
    instructions) that encodes ``ops``, by a policy:

    - ``imm="shortest"`` (default): the shortest form that accepts the operands (`Form.accepts`), as
      `encode` chooses: ``add eax, 1`` takes ``83 /0 ib``;
    - ``imm="widest"``: the form with the widest immediate field that accepts them: ``add eax, 1`` takes
      ``81 /0 id`` (a fixed slot a JIT can patch, or bytes that match a backend that always emits it);
    - ``imm_bits=N``: only forms whose immediates are N bits wide (forms without one also qualify).

    Ties go to the first in ``forms``. An unsized memory operand that forms of different memory sizes
    accept is an error (give it a size). Raises `x86gen.OperandError` when no form accepts the operands.
    AVX-512 masks, broadcasts and ``rc=`` count as operands here: only forms that allow them accept them.
    """
    if imm not in IMM_POLICIES: raise OperandError(f"imm= must be one of {', '.join(IMM_POLICIES)}, not {str(imm)[:20]!r}")
    fl = [f if isinstance(f, Form) else get_form(f) for f in forms]
    ok = [f for f in fl if f.accepts(*ops, ip=ip, rc=rc)]
    if imm_bits is not None: ok = [f for f in ok if all(o.imm in (None, imm_bits) for o in f.operands if o.kind != "1")]
    if not ok:
        got = ", ".join(describe_operand(x) for x in ops) or "no operands"
        listed = "; ".join(f"{f.syntax} ({f.id})" for f in fl[:12]) + (" …" if len(fl) > 12 else "")
        raise OperandError(f"none of the forms {listed} takes {got}" + (f" with {imm_bits}-bit immediates" if imm_bits else ""))
    for i, x in enumerate(ops):
        if isinstance(x, Mem) and not x.size and len({f.operands[i].mem for f in ok}) > 1:
            raise OperandError(f"operand {i + 1} ({x}) needs a size: forms {', '.join(f.id for f in ok)} take it")
    if imm == "widest": return max(ok, key=lambda f: sum(o.imm or 0 for o in f.operands if o.kind != "1"))   # first among equals
    return min(ok, key=lambda f: f.length)
