"""String instructions written without their implicit operands or size suffix (`string_operands`): part of
`x86gen.encode`, loaded on the first string mnemonic (see the comment at `x86gen.encoder.STRING_GENERIC`)."""
from __future__ import annotations

from ._choose import _matches, canonical
from ._table import IMPLICIT_MEM
from .encoder import STRING_GENERIC
from .errors import OperandError, fmt_operands
from .forms import Form, forms_of
from .memory import Mem
from .registers import REGISTERS, Reg

_SIZE_SUFFIX = {8: "b", 16: "w", 32: "d", 64: "q"}
_ACCUMULATORS = frozenset({"al", "ax", "eax", "rax"})


def string_operands(mnemonic: str, ops: tuple) -> tuple[str, tuple]:
    """``(mnemonic, operands)`` of the form a string instruction (`STRING_MNEMONICS`) written ``mnemonic ops`` stands
    for: the suffixed name for a generic one (``movs`` with byte operands is ``movsb``), the implicit operands
    filled in where they were left out (``movsb`` → ``movsb byte ptr [rdi], byte ptr [rsi]``, ``lodsb byte ptr [rsi]``
    → ``lodsb al, byte ptr [rsi]``). Operands a form takes as they are stay; those no form fits are left for
    the ordinary operand error."""
    mn = mnemonic
    if mn in STRING_GENERIC:
        sizes = [x.size for x in ops if isinstance(x, Mem) and x.size]
        sizes += [x.size for x in ops if isinstance(x, Reg) and x.name in _ACCUMULATORS]
        suffix = _SIZE_SUFFIX.get(sizes[0]) if sizes else None
        if suffix is None or (mn in ("ins", "outs") and suffix == "q"):
            raise OperandError(f"{mnemonic} {fmt_operands(ops)}: the operand size is not given (write byte/word/dword"
                               f"{'' if mn in ('ins', 'outs') else '/qword'} ptr, or {mnemonic}b, {mnemonic}w, …)")
        mn += suffix
    forms = forms_of(canonical(mn))
    if any(len(f.operands) == len(ops) and all(_matches(o, x) for o, x in zip(f.operands, ops)) for f in forms):
        return mn, ops
    for f in forms:
        filled = _implied(f, ops)
        if filled is not None: return mn, filled
    return mn, ops


def _implied(f: Form, ops: tuple) -> tuple | None:
    """``ops`` with the fixed registers and implicit memory operands of form ``f`` that they leave out filled in, in
    order; None if they are not ``f``'s operands with some of those left out."""
    if not any(o.loc in IMPLICIT_MEM for o in f.operands): return None
    out, k = [], 0
    given_fixed = filled_mem = False
    for o in f.operands:
        if k < len(ops) and _matches(o, ops[k]):
            out.append(ops[k]); k += 1
            given_fixed |= o.loc == "fixed"
        elif o.loc == "fixed": out.append(REGISTERS[o.reg])
        elif o.loc in IMPLICIT_MEM:
            out.append(Mem(REGISTERS["rbx" if o.loc == "rbxal" else o.loc[-3:]], size=o.mem))
            filled_mem = True
        else: return None
    # the memory operand left out but a fixed register written (`scasb al`): GNU as and llvm-mc refuse it too
    if given_fixed and filled_mem: return None
    return tuple(out) if k == len(ops) else None
