"""Instructions whose operands `x86gen.encode` rewrites as GNU as does before choosing a form: xchg of two registers
(the accumulator forms take the accumulator second, ``xchg ax, ax`` is NOPW) or of a register and memory (the r/m form,
memory first), and lea of an absolute address that a disp32 cannot reach (its low bits). Loaded on first use: a plain
instruction needs none of it (`x86gen.encoder.xchg_choice` and `x86gen.encoder.lea_low_bits` stay importable)."""
from __future__ import annotations

from ._choose import canonical
from ._runtime import LabelOperand
from .forms import Form, get_form
from .memory import Mem, VsibMem
from .registers import Reg

# xchg of two registers as GNU as 2.40 encodes it where that is not the form the operands name (SDM Vol.2 XCHG, NOP):
# the accumulator forms 90+r take the accumulator second, and 90 with the accumulator itself is NOP's opcode
_XCHG_ACCUMULATOR = {"ax": "XCHG_R16_AX", "eax": "XCHG_R32_EAX", "rax": "XCHG_R64_RAX"}
_XCHG_SELF_NOP = {"ax": "NOPW", "rax": "NOPD"}   # xchg ax, ax / rax, rax change nothing: 66 90 / 90 (not eax: 87 C0 clears rax[63:32])
_XCHG_RM = {"r8": "XCHG_RM8_R8", "r16": "XCHG_RM16_R16", "r32": "XCHG_RM32_R32", "r64": "XCHG_RM64_R64"}   # xchg ecx, [rax]


def xchg_choice(mnemonic: str, ops: tuple) -> tuple[Form, tuple] | None:
    """``(form, its operands)`` for ``xchg`` of two registers where GNU as does not encode the form the operands
    name: ``xchg eax, ecx`` is ``xchg ecx, eax`` (91, the operands exchanged: the same instruction), ``xchg ecx, [rax]``
    is ``xchg [rax], ecx`` (87 08), ``xchg ax, ax`` is NOPW (66 90) and ``xchg rax, rax`` NOPD (90). None for every
    other instruction."""
    if len(ops) != 2 or canonical(mnemonic) != "xchg": return None
    a, b = ops
    if not isinstance(a, Reg): return None
    if isinstance(b, Mem) and b.__class__ is not VsibMem and a.kind in _XCHG_RM and b.size in (0, a.size):
        return get_form(_XCHG_RM[a.kind]), (b.with_size(a.size), a)   # xchg ecx, [rax]: the r/m form, memory first
    if not isinstance(b, Reg): return None
    if a is b and a.name in _XCHG_SELF_NOP: return get_form(_XCHG_SELF_NOP[a.name]), ()
    if a.name in _XCHG_ACCUMULATOR and b.kind == a.kind and b is not a: return get_form(_XCHG_ACCUMULATOR[a.name]), (b, a)
    return None


def xchg_plan(mnemonic: str, ops: tuple):
    """`x86gen._choose.plan_for`'s plan for ``xchg`` operands that `xchg_choice` rewrites (None for the others)."""
    xchg = xchg_choice(mnemonic, ops)
    if xchg is None: return None
    enc = xchg[0].encode
    if not xchg[1]: return lambda a, b: enc()
    if not isinstance(ops[1], Mem): return lambda a, b: enc(b, a)
    bits = xchg[0].operands[0].mem
    def swapped(a, b):
        if b.label is not None: raise LabelOperand
        return enc(b.with_size(bits), a)
    return swapped


def lea_low_bits(mnemonic: str, ops: tuple) -> tuple | None:
    """``lea r16/r32, [addr]`` with an absolute address a disp32 cannot reach (a far `Mem`): the same operands with
    the disp32 that has the address's low 32 bits, or None. lea with a 16/32-bit destination keeps only the low
    bits of the effective address (SDM Vol.2 LEA: the address is truncated to the operand size), so these are the
    same instruction. Addresses whose upper 32 bits are neither all 0 nor all 1 stay refused: GNU as truncates
    them with a warning ("shortened")."""
    if mnemonic != "lea" or len(ops) != 2: return None
    r, m = ops
    if m.__class__ is not Mem or not m.far or not isinstance(r, Reg) or r.size >= 64: return None
    a = m.disp & 0xFFFFFFFFFFFFFFFF
    if a >> 32 not in (0, 0xFFFFFFFF): return None
    low = a & 0xFFFFFFFF
    return (r, Mem(None, None, 1, low - (1 << 32) if low >> 31 else low, m.size))
