"""Exceptions raised by x86gen. All derive from `EncodeError` (itself a `ValueError`).

Bad input is an `EncodeError` subclass whose message names the input, never a bare Python exception from deep
inside. The rule for arguments of the wrong type: a public function or method given an argument of a type it does not
take (``assemble(None)``, ``encode("jmp", 0x40, ip="0")``, ``Assembler().label(5)``, ``a.jit("int")``) raises
`ArgumentTypeError`, which is a `TypeError` too, and whose message names the function, the argument and the type it
got. The instruction itself keeps its own errors, the same from every door (`encode`, forms, `Instruction`, the
`Assembler`): a mnemonic that is not a str is an `UnknownMnemonicError`, an operand that no form takes (None, a str, a
float) an `OperandError`, and so are the parts of a memory operand (`mem`) and the values of a data directive (`db` …).
Types are checked where a wrong one would fail (in an ``except``, where a cache misses), so a right call pays nothing.
"""
from __future__ import annotations


class EncodeError(ValueError):
    """An instruction that cannot be encoded; the message says which and why."""


class ArgumentTypeError(EncodeError, TypeError):
    """An argument of a public function that is not of a type the function takes (see the module doc): names the
    function, the argument and the type it got. Both ``except EncodeError`` and ``except TypeError`` catch it."""


def wrong_type(func: str, arg: str, value: object, expected: str) -> ArgumentTypeError:
    """The `ArgumentTypeError` of argument ``arg`` of ``func`` (``"x86gen.assemble"``): ``value`` is not ``expected``
    (``"a str"``)."""
    got = "None" if value is None else f"{type(value).__name__} {fmt_value(value, 40)}"
    return ArgumentTypeError(f"{func}: {arg} must be {expected}, not {got}")


class UnknownMnemonicError(EncodeError):
    """No form has this mnemonic."""


class OperandError(EncodeError):
    """Operands that no form accepts, or that break an encoding rule (AH with REX, RSP as index, …)."""


class DistinctRegistersError(OperandError):
    """Registers that an instruction needs to be different are the same: a VSIB gather's destination, index and
    mask (SDM Vol.2 VGATHERDPS/VPGATHERDD…: #UD "if any pair of the index, mask, or destination registers are the
    same"), the tile registers of an AMX dot product (TDPBSSD…: #UD unless all are different)."""


class ImmediateRangeError(OperandError):
    """An immediate or displacement that does not fit its field."""


class PrefixError(EncodeError):
    """A prefix the instruction does not take (``lock`` on a register destination or on ``mov``, ``rep`` on
    ``add``, two prefixes of one group, ``{vex3}`` on a legacy form, …); names instruction, prefix and why."""


class AsmSyntaxError(EncodeError):
    """Intel-syntax text that cannot be parsed; names the line."""


class UnsupportedRegisterError(OperandError):
    """A register of x86-64 that x86gen has no forms for (yet): cr0, dr7, zmm0, xmm16, st(0), fs, bnd0, …"""


class EvexOnlyRegisterError(OperandError):
    """A register only EVEX can encode (xmm16-31, ymm16-31: bit 4 of the number goes to EVEX.R'/V'/X, SDM
    Vol.2 2.7.1) given to a legacy or VEX form, whose fields hold 4 bits."""


class EgprOperandError(OperandError):
    """An APX register r16-r31 (or an address with one) given to a form whose encoding cannot carry it: only REX2 (legacy
    opcode maps 0 and 1) and APX's EVEX encode bit 4 of a general register's number (Intel APX Architecture
    Specification, 3.1.2); x86gen has REX2 forms only so far."""


class EvexOperandError(OperandError):
    """An AVX-512 decoration a form does not take (SDM Vol.2 2.7): a mask ``{k1}`` where the form has none (or k0 as
    a mask), zeroing ``{z}`` where the form has ``{k1}`` only or on a memory destination, a broadcast ``{1toN}``
    where the form has none or of another element size, rounding ``rc=`` / ``{sae}`` where the form has none or
    with a memory operand. The message names instruction, operands and the forms that would take them."""


class LabelContextError(OperandError):
    """A label operand where no `Assembler` (or program) can resolve it: `encode` and forms take
    registers, memory and ints only."""


class LabelOperand(LabelContextError):
    """A memory operand that names a label, met by a form's encoder or a plan (`x86gen.selection.plans`): the
    `Assembler` then takes its general path, which records the RIP-relative fixup; elsewhere it is the error. Raising
    one costs no message: it is written when read (the form's id and the operands, when the encoder gives them)."""

    def __init__(self, fid: str | None = None, args: tuple = ()):
        super().__init__()
        self.fid, self.operands = fid, args

    def __str__(self) -> str:
        what = f"{self.fid} {fmt_operands(self.operands)}: " if self.fid else ""
        return (f"{what}a label's memory operand needs an Assembler or a program (Assembler.emit, x86gen.assemble with the"
                " label defined), which knows where the label is")


class LabelError(EncodeError):
    """A label used wrongly in an `Assembler` or program: undefined, defined or bound twice, unbound, or of
    another Assembler."""


class NoListingError(EncodeError):
    """`Assembler.lines`, `listing` or `text` on an `Assembler` made without ``listing=True``, which keeps only the
    bytes of what it appends."""


class SizeLimitError(EncodeError):
    """A program, alignment or data directive larger than x86gen produces (see `MAX_OUTPUT`), or input larger than the
    command line reads (`x86gen.__main__.MAX_INPUT`)."""


MAX_OUTPUT = 1 << 30   # bytes: the most one Assembler emits (alignments and data past this are refused)


def fmt_int(v: int, decimal: bool = False) -> str:
    """An int for a message: hex (or decimal), or its size when it is too large to be worth printing."""
    if -(1 << 64) < v < (1 << 65): return str(v) if decimal else f"-{-v:#x}" if v < 0 else f"{v:#x}"
    return f"<{'negative ' if v < 0 else ''}int with {v.bit_length()} bits>"


def fmt_value(x: object, limit: int = 80) -> str:
    """An operand (or anything passed as one) for a message: ints via `fmt_int`, the rest by ``str``,
    cut to ``limit`` characters."""
    if x.__class__ is int: return fmt_int(x)
    try: s = str(x) if hasattr(x, "sig") else repr(x)
    except Exception: s = f"<{type(x).__name__}>"
    return s if len(s) <= limit else s[:limit - 3] + "..."


def clip(text: str, limit: int = 200) -> str:
    """``repr`` of ``text`` for an error message, cut to ``limit`` characters (a 10 MB line is not echoed)."""
    return repr(text if len(text) <= limit else text[:limit] + "…")


def fmt_operands(ops) -> str:
    """Operands for a message, comma separated (each bounded by `fmt_value`)."""
    return ", ".join(fmt_value(x) for x in ops)
