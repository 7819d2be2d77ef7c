"""Every error message of the encoder, built from the facts its caller passes: form rows (or ids), operands, values.

Nothing here chooses a form or encodes: the generated encoders (`x86gen._gen.encoders`, through
`x86gen.encoding.runtime`), selection (`x86gen.selection`) and the forms raise what these functions return, and say
what went wrong where they found it. A row is a `x86gen.table.FormRow` or a `x86gen.forms.Form` (the same fields).
"""
from __future__ import annotations

from .errors import (
    DistinctRegistersError,
    EgprOperandError,
    EvexOnlyRegisterError,
    EvexOperandError,
    ImmediateRangeError,
    LabelContextError,
    OperandError,
    PrefixError,
    UnknownMnemonicError,
    fmt_int,
    fmt_operands,
    fmt_value,
)
from .memory import SIZE_NAMES, Mem
from .table import IMPLICIT_MEM, a32_memory, imm_ranges, ip16_branch, operand_display, row_of, syntax


def describe_operand(x) -> str:
    """An operand value for a message: ``immediate 0x5``, ``eax (r32)``, ``[rdi] (m32)``."""
    if x.__class__ is int: return f"immediate {fmt_int(x)}"
    k = getattr(x, "kind", None)
    if k is None: return f"{type(x).__name__} {fmt_value(x)}"
    return f"{x} ({k})"


def size_word(bits: int) -> str:
    """``dword`` for 32 (the size keyword of a memory operand size in bits)."""
    return SIZE_NAMES.get(bits, str(bits))


# ---- raised by a form's generated encoder (`x86gen.encoding.runtime` passes the form's id) --------------------------

def operand_error(fid: str, args: tuple, i: int) -> OperandError:
    """Operand ``i`` of ``args`` is not what form ``fid`` takes there (or ``args`` has the wrong number)."""
    row = row_of(fid)
    if len(args) != len(row.operands):
        return OperandError(f"{fid} ({syntax(row)}) takes {len(row.operands)} operands, got {len(args)}")
    x = args[i]
    if getattr(x, "encodings", None) is not None and "rex2" in x.encodings and row.encoding_kind != "rex2":
        return egpr_error(f"{fid} ({syntax(row)})", [x], [row])
    if getattr(x, "hi16", False) and row.encoding_kind != "evex" and x.kind == row.operands[i].reg:
        return EvexOnlyRegisterError(f"{fid} ({syntax(row)}): operand {i + 1} is {x}, which only EVEX encodes (registers 16-31:"
                                     f" EVEX.R'/V'/X, SDM Vol.2 2.7.1); this {row.encoding_kind} form takes {x.kind}0-{x.kind}15")
    if x.__class__ is Mem and row.operands[i].mem is not None and a32_memory(row):   # enqcmd r32 with [rcx]
        return address_size_error(fid, args, [row])
    return OperandError(f"{fid} ({syntax(row)}): operand {i + 1} is {describe_operand(args[i])}, expected"
                        f" {operand_display(row.operands[i])}")


def egpr_error(where: str, regs: list, rows) -> EgprOperandError:
    """APX's registers ``regs`` (r16-r31, or addresses with them) where the forms ``rows`` (those that took the operands'
    kinds) cannot carry them: REX2 reaches legacy maps 0 and 1 only, and not every instruction there (Intel APX
    Architecture Specification, 3.1.2.1); the forms of maps 2 and 3 (0F 38, 0F 3A) need APX's EVEX promotion (3.1.2.3),
    which x86gen does not encode yet."""
    names = ", ".join(str(x) for x in regs)
    legacy = [r for r in rows if r.encoding_kind in ("legacy", "d3now")]
    if legacy and all(r.opcode_map in (2, 3) for r in legacy):
        why = (f"{legacy[0].id} is in opcode map {legacy[0].opcode_map} ({'0F 38' if legacy[0].opcode_map == 2 else '0F 3A'}),"
               " which REX2 cannot reach: APX encodes it with an EVEX promotion (Intel APX Architecture Specification,"
               " 3.1.2.3), which x86gen does not encode yet")
    elif legacy:
        why = (f"{legacy[0].id} takes no REX2 prefix (Intel APX Architecture Specification, 3.1.2.1: not in legacy map 0"
               " rows 4, 7, A, E, map 1 rows 3 and 8, nor the instructions APX excludes), and x86gen has no APX EVEX form")
    else:
        kinds = sorted({r.encoding_kind for r in rows})
        why = (f"only REX2 and APX's EVEX encode registers 16-31 of the general file, and these are {'/'.join(kinds) or 'no'}"
               " forms (x86gen does not encode APX's EVEX yet)")
    return EgprOperandError(f"{where}: {names}: {why}")


def immediate_range_error(fid: str, args: tuple, i: int, value: int) -> ImmediateRangeError:
    """Operand ``i`` (value ``value``: an immediate, or a branch's displacement) does not fit form ``fid``'s field."""
    row = row_of(fid)
    o = row.operands[i]
    ranges = imm_ranges(o.imm, row.operand_size, o.sext, o.kind.startswith("rel"))
    return ImmediateRangeError(f"{fid} ({syntax(row)}): operand {i + 1} value {fmt_int(value)} does not fit {o.kind}"
                               f" (accepted: {', '.join(f'{lo:#x}..{hi:#x}' for lo, hi in ranges)})")


def ip16_error(fid: str, args: tuple, i: int) -> ImmediateRangeError:
    return ImmediateRangeError(f"{fid} ({syntax(row_of(fid))}): operand {i + 1} target {fmt_int(args[i])} is out of reach of a"
                               " 16-bit branch, whose new IP is (next IP + rel) AND 0xffff (SDM Vol.2 JMP/Jcc, operand size 16):"
                               " targets 0x0..0xffff only")


def moffs_error(fid: str, args: tuple, i: int) -> OperandError:
    return OperandError(f"{fid} ({syntax(row_of(fid))}): operand {i + 1} is {args[i]}; a moffs operand is an absolute address"
                        " (no base or index register)")


def high8_error(fid: str, args: tuple) -> OperandError:
    return OperandError(f"{row_of(fid).mnemonic} {fmt_operands(args)}: ah/bh/ch/dh cannot be encoded in an instruction that needs"
                        " a REX prefix (needed here for spl/bpl/sil/dil, r8-r15 or REX.W; SDM Vol.2 2.2.1.2)")


def load_cs_error(fid: str) -> OperandError:
    return OperandError(f"{fid} ({syntax(row_of(fid))}): cs cannot be loaded with mov (#UD; SDM Vol.2 MOV), only by a far jmp,"
                        " call or ret")


def kp1_error(fid: str, args: tuple, i: int) -> OperandError:
    """Operand ``i`` names a pair of mask registers by an odd k (vp2intersectd/q)."""
    return OperandError(f"{fid} ({syntax(row_of(fid))}): operand {i + 1} is {args[i]}; the destination is a pair of mask"
                        " registers, which must be k0, k2, k4 or k6 (the pair's first register; SDM Vol.2 VP2INTERSECTD/Q"
                        " masks off the low bit of an odd one, and assemblers disagree about it)")


def mpx_address_error(fid: str, args: tuple, i: int, why: str) -> OperandError:
    """Operand ``i`` is an address an MPX form cannot encode: RIP-relative (``why`` "rip": bndmk, bndldx, bndstx) or, in a
    mib operand (bndldx/bndstx), an index scaled by more than 1 (``why`` "scale")."""
    row = row_of(fid)
    head = f"{row.mnemonic} {fmt_operands(args)}: operand {i + 1} is {args[i]}; "
    if why == "scale":
        return OperandError(head + f"{fid} ({syntax(row)}) ignores the scale of its index register (the pointer value, SDM"
                                   " Vol.2 BNDLDX/BNDSTX: \"the scale field of the SIB byte has no effect\"); write the index"
                                   " unscaled")
    return OperandError(head + f"{fid} ({syntax(row)}) cannot take a RIP-relative address (#UD in 64-bit mode, SDM Vol.2"
                               f" {row.mnemonic.upper()})")


_IMPLICIT_SDM = {"movs": "MOVS/MOVSB/MOVSW/MOVSD/MOVSQ", "cmps": "CMPS/CMPSB/CMPSW/CMPSD/CMPSQ", "scas": "SCAS/SCASB/SCASW/SCASD/SCASQ",
                 "lods": "LODS/LODSB/LODSW/LODSD/LODSQ", "stos": "STOS/STOSB/STOSW/STOSD/STOSQ", "insb": "INS/INSB/INSW/INSD",
                 "insw": "INS/INSB/INSW/INSD", "insd": "INS/INSB/INSW/INSD", "outs": "OUTS/OUTSB/OUTSW/OUTSD", "xlat": "XLAT/XLATB",
                 "mask": "MASKMOVDQU/MASKMOVQ", "vmas": "MASKMOVDQU"}


def implicit_error(fid: str, args: tuple, i: int) -> OperandError:
    """Operand ``i`` is memory, but not at the address the instruction implies (``movs byte ptr [rax], …``)."""
    row = row_of(fid)
    where = IMPLICIT_MEM[row.operands[i].loc]
    return OperandError(f"{row.mnemonic} {fmt_operands(args)}: operand {i + 1} is {args[i]}; {fid} ({syntax(row)}) addresses"
                        f" {where} only (an implicit operand: no other base, index or displacement; SDM Vol.2"
                        f" {_IMPLICIT_SDM.get(row.mnemonic[:4], row.mnemonic.upper())})")


def taken_error(fid: str, args: tuple) -> OperandError:
    """ModRM.reg names another instruction of the hint-NOP space (the row's ``taken_reg`` / ``taken_mem``)."""
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


def nop_alias_error(fid: str, args: tuple) -> OperandError:
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


def distinct_error(fid: str, args: tuple, why: str) -> DistinctRegistersError:
    return DistinctRegistersError(f"{row_of(fid).mnemonic} {fmt_operands(args)}: {_DISTINCT[why]}")


def mask_required_error(fid: str, args: tuple) -> EvexOperandError:
    return EvexOperandError(f"{row_of(fid).mnemonic} {fmt_operands(args)}: {fid} needs a mask k1-k7 on its"
                            f" {'memory operand' if fid.split('_')[2][:2] == 'VM' else 'destination'}"
                            " (k0 is #UD, SDM Vol.2 VPGATHERDD/VPSCATTERDD: EVEX.aaa = 000), e.g. zmm1.k(k1) or mem.k(k1)")


# ---- raised by selection: the operands fit no form, or not well enough --------------------------------------------

# Names iced-x86 prints for several forms whose bytes differ, which x86gen cannot honour as a mnemonic (the text does not
# say which form): name -> those forms' ids (AMD APM Vol.3 PREFETCH: 0F 0D /4-/7 are reserved aliases of /0)
SEVERAL_FORMS = {"prefetch_reserved": tuple(f"PREFETCHRESERVED{i}_M8" for i in range(4, 8))}


def unknown_mnemonic_error(mnemonic, known: list[str]) -> UnknownMnemonicError:
    """The error for a mnemonic the table does not have, with up to three close ones of ``known``."""
    if mnemonic.__class__ is not str: return UnknownMnemonicError(f"a mnemonic is a string, not {fmt_value(mnemonic)}")
    ids = SEVERAL_FORMS.get(mnemonic)
    if ids is not None:
        return UnknownMnemonicError(f"{mnemonic} is iced-x86's name of {len(ids)} forms ({', '.join(ids)}), and cannot say"
                                    f" which: encode one by its form id (x86gen.get_form({ids[0]!r})(byte(rax)))")
    import difflib
    close = difflib.get_close_matches(mnemonic, known, 3) if len(mnemonic) <= 32 else []
    return UnknownMnemonicError(f"unknown mnemonic {fmt_value(mnemonic)}" + (f" (did you mean {', '.join(close)}?)" if close else ""))


def far_address_error(mnemonic: str, ops: tuple) -> OperandError | None:
    """The error for a 64-bit absolute address that only moffs forms encode, or None (no such operand)."""
    far = next((x for x in ops if isinstance(x, Mem) and x.far), None)
    if far is None: return None
    return OperandError(
        f"{mnemonic} {fmt_operands(ops)}: address {far.disp & 0xFFFFFFFFFFFFFFFF:#x} is out of reach: an absolute [disp32] is"
        " sign-extended (SDM Vol.2 2.2.1.3), so it reaches only 0..0x7fffffff and 0xffffffff80000000..0xffffffffffffffff;"
        " a 64-bit address is encodable only in mov al/ax/eax/rax, [addr] and mov [addr], al/ax/eax/rax (moffs, movabs):"
        " load the address into a register")


def address_size_error(what: str, ops: tuple, rows) -> OperandError:
    """The error for a register address and a memory operand of different address sizes (``what``: the instruction or form
    id; ``rows``: the forms meant). In movdir64b/enqcmd/enqcmds the address size sizes the address in ModRM.reg as it
    sizes the memory operand (SDM Vol.2 MOVDIR64B, ENQCMD, ENQCMDS: 0x67 makes both 32-bit), so r64 goes with a 64-bit
    address and r32 with a 32-bit one (an `A32Mem`), as iced-x86 and GNU as have it."""
    mn = rows[0].mnemonic
    absolute = any(isinstance(x, Mem) and x.base is None and x.index is None for x in ops)
    return OperandError(f"{what} {fmt_operands(ops)}: the address in the register and the memory operand's address must"
                        f" have the same size (SDM Vol.2 {mn.upper()}: the address size applies to both): {mn} r64 with a"
                        f" 64-bit address ({mn} rdx, [rcx]), {mn} r32 with a 32-bit one ({mn} edx, [ecx], 0x67)"
                        + ("; an absolute [disp32] is a 64-bit address to x86gen (it has no 32-bit absolute one)" if absolute else ""))


def no_form_error(mnemonic: str, ops: tuple, rows, address_size: bool = False) -> OperandError:
    """The error for operands that no form of ``mnemonic`` takes, listing its forms (``rows``); ``address_size``: forms
    take the operands' kinds, but not with their address sizes (`address_size_error`)."""
    if address_size: return address_size_error(mnemonic, ops, rows)
    got = ", ".join(describe_operand(x) for x in ops) or "no operands"
    shown = [r for r in rows if r.encoding_kind != "rex2"] or rows   # (a REX2 form is its legacy form's twin: same syntax)
    fit = "\n  ".join(f"{syntax(r):40s} {r.id}" for r in shown)
    twins = " (with r16-r31: the REX2 form of each legacy form of maps 0 and 1, id REX2_…)" if len(shown) < len(rows) else ""
    return OperandError(f"no form of {mnemonic!r} takes {got}; its forms are{twins}:\n  {fit}")


def range_error(mnemonic, ops: tuple, rows) -> OperandError:
    """The error for immediates or a branch target that fit none of ``rows``."""
    got = fmt_operands(ops)
    why = ""
    if rows and all(ip16_branch(r) for r in rows) and any(x.__class__ is int and not 0 <= x <= 0xFFFF for x in ops):
        why = " (a 16-bit branch's target is a 16-bit IP, 0x0..0xffff: IP = (next IP + rel) AND 0xffff, SDM Vol.2 JMP/Jcc)"
    return ImmediateRangeError(f"{mnemonic} {got}: an immediate or branch target does not fit any form: "
                               + "; ".join(f"{syntax(r)} ({r.id})" for r in rows) + why)


def label_error(mnemonic, ops: tuple) -> LabelContextError:
    """The error for a label operand given to `encode` (or a form): only an Assembler can resolve it."""
    return LabelContextError(f"{fmt_value(mnemonic)} {fmt_operands(ops)}: a label operand needs an Assembler or a program "
                             "(Assembler.emit / x86gen.assemble with the label defined), which knows where the label is; "
                             "encode() takes registers, memory operands and ints (branch targets as absolute addresses)")


def unsized_error(mnemonic: str, ops: tuple, i: int, sizes) -> OperandError:
    """Operand ``i`` is memory without a size, and the forms that take it differ in size (``sizes``, bits)."""
    names = "/".join(sorted({size_word(s) for s in sizes}))
    return OperandError(f"{mnemonic} {fmt_operands(ops)}: operand {i + 1} needs a size ({names} ptr)")


def a32_error(err: Exception, plain: tuple, ops: tuple) -> Exception:
    """``err`` (an `EncodeError` raised for the `x86gen.A32Mem.plain` operands ``plain``) with the addresses as they
    were given in ``ops`` (``[eax]``, not the ``[rax]`` of the bytes without 0x67), of the same class."""
    msg = str(err)
    for p, o in zip(plain, ops):
        if p is not o and isinstance(o, Mem): msg = msg.replace(p.address(), o.address())
    return type(err)(msg)


# ---- AVX-512 decorations ------------------------------------------------------------------------------------------

def decorations_allowed(row) -> str:
    """What an EVEX form allows, as text: ``{k1}{z} m32bcst {er}``."""
    parts = [{"k1": "{k1}", "k1z": "{k1}{z}", "": "no mask"}[row.evex_mask]]
    if row.evex_bcst: parts.append(f"m{row.evex_bcst}bcst")
    if row.evex_rc: parts.append("{er}" if row.evex_rc == "er" else "{sae}")
    return " ".join(parts)


def decoration_error(where: str, reason: str, rows) -> EvexOperandError:
    """No form takes the decorations of ``where`` (the instruction as text): ``reason`` is the first candidate's (see
    `x86gen.encoding.decorated.why_not`), ``rows`` the forms that take the plain operands."""
    evex = [r for r in rows if r.encoding_kind == "evex"]
    allowed = "; ".join(f"{r.id} ({decorations_allowed(r)})" for r in evex) or "none is EVEX"
    return EvexOperandError(f"{where}: {reason}; the forms for these operands: {allowed}")


# ---- pseudo-prefixes ({vex}, {vex3}, {evex}, {disp32}, {load} …) that cannot be honoured ----------------------------

def cannot_honour(word: str, insn: str, why: str, cls=None):
    """The error (a `x86gen.PrefixError`, or ``cls``) for pseudo-prefix ``word`` that instruction ``insn`` cannot
    honour, ``why``."""
    return (cls or PrefixError)(f"{insn}: the {word} pseudo-prefix cannot be honoured: {why}")


def evex_needs(ops: tuple, rc=None) -> str:
    """What in ``ops``/``rc`` needs EVEX, for a message: ``masking ({k1})``, ``broadcast ({1toN}: dword bcst [rax])``,
    ``rounding``."""
    parts = []
    for x in ops:
        cls = type(x).__name__
        if cls == "Masked": parts.append(f"masking ({{{x.mask}}}" + (" {z}" if x.zero else "") + ")")
        elif cls == "Bcst": parts.append(f"broadcast ({x})")
    if rc is not None: parts.append("rounding/SAE")
    return " and ".join(parts) + " need" + ("s" if len(parts) == 1 else "") + " EVEX (SDM Vol.2 2.7)"
