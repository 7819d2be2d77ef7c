"""The errors `x86gen.encode` raises when no form takes the operands (built when raised; loaded then)."""
from __future__ import annotations

from ._table import ip16_branch
from .errors import ImmediateRangeError, LabelContextError, OperandError, fmt_operands, fmt_value
from .forms import Form, describe_operand
from .memory import SIZE_NAMES, Mem


def far_address_error(mnemonic: str, ops: tuple) -> OperandError | None:
    """The error for a 64-bit absolute address that only moffs forms encode, or None (no such operand)."""
    far = next((x for x in ops if isinstance(x, Mem) and x.far), None)
    if far is None: return None
    return OperandError(
        f"{mnemonic} {fmt_operands(ops)}: address {far.disp & 0xFFFFFFFFFFFFFFFF:#x} is out of reach: an absolute [disp32] is"
        " sign-extended (SDM Vol.2 2.2.1.3), so it reaches only 0..0x7fffffff and 0xffffffff80000000..0xffffffffffffffff;"
        " a 64-bit address is encodable only in mov al/ax/eax/rax, [addr] and mov [addr], al/ax/eax/rax (moffs, movabs):"
        " load the address into a register")


def address_size_error(what: str, ops: tuple, forms: list[Form]) -> OperandError:
    """The error for a register address and a memory operand of different address sizes (``what``: the instruction or form
    id; ``forms``: the forms meant). In movdir64b/enqcmd/enqcmds the address size sizes the address in ModRM.reg as it
    sizes the memory operand (SDM Vol.2 MOVDIR64B, ENQCMD, ENQCMDS: 0x67 makes both 32-bit), so r64 goes with a 64-bit
    address and r32 with a 32-bit one (an `A32Mem`), as iced-x86 and GNU as have it."""
    mn = forms[0].mnemonic
    absolute = any(isinstance(x, Mem) and x.base is None and x.index is None for x in ops)
    return OperandError(f"{what} {fmt_operands(ops)}: the address in the register and the memory operand's address must"
                        f" have the same size (SDM Vol.2 {mn.upper()}: the address size applies to both): {mn} r64 with a"
                        f" 64-bit address ({mn} rdx, [rcx]), {mn} r32 with a 32-bit one ({mn} edx, [ecx], 0x67)"
                        + ("; an absolute [disp32] is a 64-bit address to x86gen (it has no 32-bit absolute one)" if absolute else ""))


def size_word(bits: int) -> str:
    """``dword`` for 32 (the size keyword of a memory operand size in bits)."""
    return SIZE_NAMES.get(bits, str(bits))


def no_form_error(mnemonic: str, ops: tuple, forms: list[Form]) -> OperandError:
    """The error for operands that no form of ``mnemonic`` takes, listing its forms."""
    from ._choose import _matches
    from ._narrow import address_size_fits
    if any(len(f.operands) == len(ops) and all(_matches(o, x) for o, x in zip(f.operands, ops)) and not address_size_fits(f, ops)
           for f in forms):
        return address_size_error(mnemonic, ops, forms)
    got = ", ".join(describe_operand(x) for x in ops) or "no operands"
    fit = "\n  ".join(f"{f.syntax:40s} {f.id}" for f in forms)
    return OperandError(f"no form of {mnemonic!r} takes {got}; its forms are:\n  {fit}")


def range_error(mnemonic, ops, forms) -> OperandError:
    """The error for immediates or a branch target that fit none of ``forms``."""
    got = fmt_operands(ops)
    why = ""
    if forms and all(ip16_branch(f.row) for f in forms) and any(x.__class__ is int and not 0 <= x <= 0xFFFF for x in ops):
        why = " (a 16-bit branch's target is a 16-bit IP, 0x0..0xffff: IP = (next IP + rel) AND 0xffff, SDM Vol.2 JMP/Jcc)"
    return ImmediateRangeError(f"{mnemonic} {got}: an immediate or branch target does not fit any form: "
                               + "; ".join(f"{f.syntax} ({f.id})" for f in forms) + why)


def label_error(mnemonic: str, ops: tuple) -> LabelContextError:
    """The error for a label operand given to `encode` (or a form): only an Assembler can resolve it."""
    return LabelContextError(f"{fmt_value(mnemonic)} {fmt_operands(ops)}: a label operand needs an Assembler or a program "
                             "(Assembler.emit / x86gen.assemble with the label defined), which knows where the label is; "
                             "encode() takes registers, memory operands and ints (branch targets as absolute addresses)")
