"""The errors the generated encoders raise (`x86gen._runtime`'s error functions call these; loaded when the first
is raised). A leaf of the encoder core, as `x86gen._runtime`: a form is described from its table row."""
from __future__ import annotations

from ._runtime import describe_operand
from ._table import a32_memory, imm_ranges, row_of, syntax
from .errors import EvexOnlyRegisterError, ImmediateRangeError, LabelContextError, OperandError, fmt_int, fmt_operands
from .memory import Mem


def operand_error(fid: str, args: tuple, i: int) -> OperandError:
    """Operand ``i`` of ``args`` is not what form ``fid`` takes there (or ``args`` has the wrong number)."""
    row = row_of(fid)
    if len(args) != len(row.operands):
        return OperandError(f"{fid} ({syntax(row)}) takes {len(row.operands)} operands, got {len(args)}")
    from ._table import operand_display
    x = args[i]
    if getattr(x, "hi16", False) and row.encoding_kind != "evex" and x.kind == row.operands[i].reg:
        return EvexOnlyRegisterError(f"{fid} ({syntax(row)}): operand {i + 1} is {x}, which only EVEX encodes (registers 16-31:"
                                     f" EVEX.R'/V'/X, SDM Vol.2 2.7.1); this {row.encoding_kind} form takes {x.kind}0-{x.kind}15")
    if x.__class__ is Mem and row.operands[i].mem is not None and a32_memory(row):   # enqcmd r32 with [rcx]
        from ._encode_errors import address_size_error
        return address_size_error(fid, args, [row])
    return OperandError(f"{fid} ({syntax(row)}): operand {i + 1} is {describe_operand(args[i])}, expected"
                        f" {operand_display(row.operands[i])}")


def _range_error(fid, args, i, value):
    row = row_of(fid)
    o = row.operands[i]
    ranges = imm_ranges(o.imm, row.operand_size, o.sext, o.kind.startswith("rel"))
    return ImmediateRangeError(f"{fid} ({syntax(row)}): operand {i + 1} value {fmt_int(value)} does not fit {o.kind}"
                               f" (accepted: {', '.join(f'{lo:#x}..{hi:#x}' for lo, hi in ranges)})")


def _ip16_error(fid, args, i):
    return ImmediateRangeError(f"{fid} ({syntax(row_of(fid))}): operand {i + 1} target {fmt_int(args[i])} is out of reach of a"
                               " 16-bit branch, whose new IP is (next IP + rel) AND 0xffff (SDM Vol.2 JMP/Jcc, operand size 16):"
                               " targets 0x0..0xffff only")


def _label_error(fid, args):
    return LabelContextError(f"{fid} ({syntax(row_of(fid))}) {fmt_operands(args)}: a label's memory operand needs an Assembler or a"
                             " program (Assembler.emit, x86gen.assemble with the label defined), which knows where the label is")


def _moffs_error(fid, args, i):
    return OperandError(f"{fid} ({syntax(row_of(fid))}): operand {i + 1} is {args[i]}; a moffs operand is an absolute address"
                        " (no base or index register)")


def _high8_error(fid, args):
    return OperandError(f"{row_of(fid).mnemonic} {fmt_operands(args)}: ah/bh/ch/dh cannot be encoded in an instruction that needs"
                        " a REX prefix (needed here for spl/bpl/sil/dil, r8-r15 or REX.W; SDM Vol.2 2.2.1.2)")


def _load_cs_error(fid):
    return OperandError(f"{fid} ({syntax(row_of(fid))}): cs cannot be loaded with mov (#UD; SDM Vol.2 MOV), only by a far jmp,"
                        " call or ret")


def _kp1_error(fid, args, i):
    """Operand ``i`` names a pair of mask registers by an odd k (vp2intersectd/q)."""
    return OperandError(f"{fid} ({syntax(row_of(fid))}): operand {i + 1} is {args[i]}; the destination is a pair of mask"
                        " registers, which must be k0, k2, k4 or k6 (the pair's first register; SDM Vol.2 VP2INTERSECTD/Q"
                        " masks off the low bit of an odd one, and assemblers disagree about it)")


def _implicit_error(fid, args, i):
    """Operand ``i`` is memory, but not at the address the instruction implies (``movs byte ptr [rax], …``)."""
    from ._table import IMPLICIT_MEM
    row = row_of(fid)
    where = IMPLICIT_MEM[row.operands[i].loc]
    return OperandError(f"{row.mnemonic} {fmt_operands(args)}: operand {i + 1} is {args[i]}; {fid} ({syntax(row)}) addresses"
                        f" {where} only (an implicit operand: no other base, index or displacement; SDM Vol.2"
                        f" {_IMPLICIT_SDM.get(row.mnemonic[:4], row.mnemonic.upper())})")


_IMPLICIT_SDM = {"movs": "MOVS/MOVSB/MOVSW/MOVSD/MOVSQ", "cmps": "CMPS/CMPSB/CMPSW/CMPSD/CMPSQ", "scas": "SCAS/SCASB/SCASW/SCASD/SCASQ",
                 "lods": "LODS/LODSB/LODSW/LODSD/LODSQ", "stos": "STOS/STOSB/STOSW/STOSD/STOSQ", "insb": "INS/INSB/INSW/INSD",
                 "insw": "INS/INSB/INSW/INSD", "insd": "INS/INSB/INSW/INSD", "outs": "OUTS/OUTSB/OUTSW/OUTSD", "xlat": "XLAT/XLATB",
                 "mask": "MASKMOVDQU/MASKMOVQ", "vmas": "MASKMOVDQU"}


def _taken_error(fid, args):
    row = row_of(fid)
    reg = next(x for o, x in zip(row.operands, args) if o.loc == "reg")
    rm = next(x for o, x in zip(row.operands, args) if o.loc == "rm")
    is_mem = hasattr(rm, "base")   # (a Mem has a base, a Reg none)
    free = [n for n in range(8) if not (row.taken_mem if is_mem else row.taken_reg) >> n & 1]
    what = "memory" if is_mem else "a register"
    return OperandError(f"{fid} ({syntax(row)}) {fmt_operands(args)}: ModRM.reg {reg.num & 7} ({reg}) with {what} in ModRM.rm"
                        f" is another instruction ({row.encoding.split('/')[0].strip()} /{reg.num & 7}; the reserved-NOP opcodes,"
                        " SDM Vol.2 NOP); " + (f"with {what} this form takes registers whose number's low 3 bits are "
                                               + "/".join(map(str, free)) if free else f"this form takes no {what} operand"))


def _nop_alias_error(fid, args):
    return OperandError(f"{fid} ({syntax(row_of(fid))}) {fmt_operands(args)}: 90 with the accumulator is NOP, not xchg (SDM Vol.2"
                        " XCHG: 90H is an alias for NOP); xchg of the accumulator with itself is the r/m form (87 C0)")


_DISTINCT = {
    "gather": "the destination, index and mask registers must be three different registers (SDM Vol.2 VGATHERDPS/VPGATHERDD:"
              " #UD if any two are the same)",
    "complex": "the destination must differ from both sources (SDM Vol.2 VFMULCPH/VFCMADDCPH…: #UD otherwise)",
    "evex_gather": "the destination and index registers must be different (SDM Vol.2 VPGATHERDD/VGATHERDPS…, EVEX: #UD if"
                   " they are the same)",
    "tiles": "the tile registers must all be different (SDM Vol.2 TDPBSSD/TDPBF16PS…: #UD if any two are the same)",
}


def _distinct_error(fid, args, why):
    from .errors import DistinctRegistersError
    return DistinctRegistersError(f"{row_of(fid).mnemonic} {fmt_operands(args)}: {_DISTINCT[why]}")


def _mask_required_error(fid, args):
    from .errors import EvexOperandError
    return EvexOperandError(f"{row_of(fid).mnemonic} {fmt_operands(args)}: {fid} needs a mask k1-k7 on its"
                            f" {'memory operand' if fid.split('_')[2][:2] == 'VM' else 'destination'}"
                            " (k0 is #UD, SDM Vol.2 VPGATHERDD/VPSCATTERDD: EVEX.aaa = 000), e.g. zmm1.k(k1) or mem.k(k1)")
