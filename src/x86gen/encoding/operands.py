"""The pass every encoding kind shares when the code of a form's encoder is written (`x86gen.encoding.writer`):
operand checks, the encoding slot of each operand (ModRM.reg, ModRM.rm, vvvv, opcode bits, is4, moffs), immediates,
and the ModRM/SIB/displacement cases of the ModRM.rm operand. The emitters (`x86gen.encoding.legacy`, `vex`, `evex`)
write the prefix and opcode bytes around them.

The code written is Python source: one function per form, every constant of the form folded in, so that encoding is
a few attribute loads of the operands (registers and memory operands carry their REX/VEX bits and ModRM/SIB bytes,
`x86gen.registers`, `x86gen.memory`) and one ``struct.pack``.
"""
from __future__ import annotations

from ..table import IMPLICIT_MEM, imm_ranges, ip16_branch

# the FP16 complex multiplies, whose destination must differ from both sources (SDM Vol.2 VFCMULCPH: #UD otherwise;
# GNU as: "destination and source registers must be distinct", iced-x86's decoder: INVALID)
COMPLEX_FP16 = frozenset(f"vf{c}{op}c{s}" for c in ("", "c") for op in ("mul", "madd") for s in ("ph", "sh"))

REG_CLASS = {"r8": "Gpr8", "r16": "Gpr16", "r32": "Gpr32", "r64": "Gpr64", "xmm": "Xmm", "ymm": "Ymm", "zmm": "Zmm", "k": "KReg",
             "mm": "Mmx", "tmm": "Tmm", "st": "StReg", "sreg": "SegReg", "cr": "CrReg", "dr": "DrReg", "bnd": "BndReg"}
PP_BYTE = {0: (), 1: (0x66,), 2: (0xF3,), 3: (0xF2,)}
# the forms that refuse a RIP-relative address beside those with a mib operand: MPX's bndmk (SDM Vol.2 BNDMK: #UD in
# 64-bit mode "if RIP-relative addressing is used")
NO_RIP_RELATIVE = frozenset({"bndmk"})
# xmm16-31 / ymm16-31 have classes of their own (`x86gen.registers.XmmHigh`), which only EVEX encoders accept
HIGH_CLASS = {"xmm": "XmmHigh", "ymm": "YmmHigh"}
# and so have r16-r31 (APX, `x86gen.registers.Gpr64X`), which only REX2 encoders accept (`x86gen.encoding.rex2`)
EGPR_CLASS = {"r8": "Gpr8X", "r16": "Gpr16X", "r32": "Gpr32X", "r64": "Gpr64X"}
CLASS_NAMES = (*REG_CLASS.values(), *HIGH_CLASS.values(), *EGPR_CLASS.values())   # every register class encoder code may name



def _is_const(e: str) -> bool:
    try: int(e, 0)
    except ValueError: return False
    return True


def _fold(e: str) -> str:
    """Fold the constant terms of an OR expression: ``0xC0 | 32 | a0.lo`` → ``0xe0 | a0.lo``."""
    terms = e.split(" | ")
    const, var = 0, []
    for t in terms:
        if _is_const(t): const |= int(t, 0)
        else: var.append(t)
    if not var: return f"{const:#04x}"
    return " | ".join(([f"{const:#04x}"] if const else []) + var)


def _cond(var: str, ranges) -> str:
    return " or ".join(f"{lo} <= {var} <= {hi}" for lo, hi in ranges)


def _imm_bytes(var: str, width: int) -> tuple[list[str], str]:
    """(expressions inside the bytes tuple when nothing follows the ModRM byte, expression appended
    after a memory operand's SIB/displacement bytes)."""
    if width == 8: return [f"{var} & 0xFF"], f" + _BYTE[{var} & 0xFF]"
    if width == 16: return [f"{var} & 0xFF", f"({var} >> 8) & 0xFF"], f" + _le16({var} & 0xFFFF)"
    if width == 32: return [], f" + _le32({var} & 0xFFFFFFFF)"
    return [], f" + _le64({var} & 0xFFFFFFFFFFFFFFFF)"





class OperandPass:
    """What every emitter needs to know of a form's operands, for operands of signature ``sig`` (or any):
    the check lines (``checks``), the fit conditions of its immediates (``fits``), the argument in each
    encoding slot (``reg``, ``rm`` = (argument, register class, memory size), ``vvvv``, ``opc``, ``is4``,
    ``moffs``), the byte registers (``r8``) and the immediate bytes (`imm_bytes`)."""

    def __init__(self, row, sig: tuple | None, range_checked: bool, decorations: bool = False):
        self.row, self.sig, self.fid = row, sig, row.id
        self.decorations = decorations   # EVEX: the encoder takes p2= and n= (`x86gen.encoding.evex`)
        ops = row.operands
        self.args = args = [f"a{i}" for i in range(len(ops))]
        self.allargs = "(" + "".join(a + ", " for a in args) + ")"
        self.rel = any(o.kind.startswith("rel") for o in ops)
        self.checks: list[str] = []
        self.fits: list[str] = []
        self.reg = self.rm = self.vvvv = self.opc = self.is4 = self.moffs = self.imm4 = None
        self.r8: list[str] = []
        self.imm_inline: list[str] = []   # immediate bytes packed with the opcode and ModRM bytes
        self.imm_tail = ""                # the same immediates as bytes appended after them
        self.imm_after_mem = ""           # immediates appended after a memory operand's tail
        for i, o in enumerate(ops): self._operand(i, o, range_checked)
        if self.is4:   # imm8[7:4] holds a register; with /is5 (vpermil2ps) imm8[3:0] an imm4 (`self.imm4`)
            byte = f"{self.is4}.is4" + (f" | {self.imm4} & 15" if self.imm4 else "")
            self.imm_inline.insert(0, byte)
            self.imm_after_mem = f" + _BYTE[{byte}]" + self.imm_after_mem
        if self.imm_tail and self.imm_inline:   # mixed inline/appended immediates (e.g. enter iw, ib): append them all
            self.imm_inline, self.imm_tail = [], self.imm_after_mem

    def is_class(self, a: str, reg: str) -> str:
        """The test that ``a`` is a register of class ``reg``: EVEX forms also take xmm16-31/ymm16-31."""
        if self.row.encoding_kind == "evex" and reg in HIGH_CLASS:
            return f"({a}.__class__ is {REG_CLASS[reg]} or {a}.__class__ is {HIGH_CLASS[reg]})"
        if self.row.encoding_kind == "rex2" and reg in EGPR_CLASS:
            return f"({a}.__class__ is {REG_CLASS[reg]} or {a}.__class__ is {EGPR_CLASS[reg]})"
        return f"{a}.__class__ is {REG_CLASS[reg]}"

    def bad(self, i: int) -> str:
        """The statement that raises the operand error for operand ``i``."""
        return f"raise _operand_error({self.fid!r}, {self.allargs}, {i})"

    def known(self, i: int) -> bool:
        """Does the signature say what operand ``i`` is (register class, memory size, fixed register, int)?"""
        return self.sig is not None and self.sig[i] != "l"

    def _operand(self, i: int, o, range_checked: bool) -> None:
        a, fid, sig, body = self.args[i], self.fid, self.sig, self.checks
        # int checks, class checks and fixed registers: left out where the signature answers them
        is_int = "" if self.known(i) else f"{a}.__class__ is int and "
        if o.loc == "fixed":
            if not (self.known(i) and sig[i] == o.reg):   # al/cl/eax/… have signatures of their own
                body.append(f"if {a} is not R_{o.reg}: {self.bad(i)}")
            return
        if o.kind == "1":
            body.append(f"if {'' if self.known(i) else f'{a}.__class__ is not int or '}{a} != 1: {self.bad(i)}")
            self.fits.append(f"{is_int}{a} == 1")
            return
        if o.imm is not None:
            self._immediate(i, o, is_int, range_checked)
            return
        if o.loc == "moffs":
            # the operand's 64-bit absolute address follows the opcode (SDM Vol.2 MOV, moffs); a far address (signature
            # moffsN) is absolute by construction, any other memory operand (movabs with a near one) is checked
            if sig is None: body.append(f"if {a}.__class__ is not Mem or {a}.size not in (0, {o.mem}): {self.bad(i)}")
            elif sig[i][0] != "m": body.append(self.bad(i))
            if sig is None: body.append(f"if {a}.label is not None: raise _label_error({fid!r}, {self.allargs})")
            if sig is None or not sig[i].startswith("moffs"):
                body.append(f"if {a}.base is not None or {a}.index is not None: raise _moffs_error({fid!r}, {self.allargs}, {i})")
            self.moffs = a
            return
        if o.loc in IMPLICIT_MEM:
            # a string instruction's [rsi] / es:[rdi], xlat's [rbx+al], maskmovdqu's [rdi]: the address is implied by the
            # opcode and nothing encodes it (SDM Vol.2 MOVS, XLAT); a segment override is the prefix layer's (a SegMem
            # never reaches a form)
            if not self.known(i): body.append(f"if {a}.__class__ is not Mem or {a}.size not in (0, {o.mem}): {self.bad(i)}")
            base = "rbx" if o.loc == "rbxal" else o.loc[-3:]
            body.append(f"if {a}.base is not R_{base} or {a}.index is not None or {a}.disp or {a}.label is not None:"
                        f" raise _implicit_error({fid!r}, {self.allargs}, {i})")
            return
        if o.reg == "r8": self.r8.append(a)
        if o.loc == "rm":
            self.rm = (a, o.reg, o.mem)
            return
        if o.mem is not None: raise ValueError(fid)   # memory-only operand outside rm cannot happen (checked by the loader)
        if not self.known(i): body.append(f"if not {self.is_class(a, o.reg)}: {self.bad(i)}")
        if o.kind == "kp1": body.append(f"if {a}.num & 1: raise _kp1_error({fid!r}, {self.allargs}, {i})")   # an even k only
        if o.reg == "sreg" and "w" in o.role: body.append(f"if {a} is R_cs: raise _load_cs_error({fid!r})")   # mov cs, r/m16: #UD
        if o.loc == "is4": self.is4 = a
        elif o.loc == "reg": self.reg = a
        elif o.loc == "vvvv": self.vvvv = a
        elif o.loc == "opc": self.opc = a

    def _immediate(self, i: int, o, is_int: str, range_checked: bool) -> None:
        """An immediate or branch displacement: its type and range checks, its fit condition, its bytes."""
        a, fid, body = self.args[i], self.fid, self.checks
        rng = imm_ranges(o.imm, self.row.operand_size, o.sext, o.kind.startswith("rel"))
        if not self.known(i): body.append(f"if {a}.__class__ is not int: {self.bad(i)}")
        if o.kind.startswith("rel") and ip16_branch(self.row):
            # a 16-bit near branch (o16): the target is an IP of 16 bits, reached as (next IP + rel) AND 0FFFFH (SDM Vol.2
            # JMP/Jcc, operand size 16; `ip16_branch`), so its displacement is counted modulo 2^16
            reach, d = f"0 <= {a} <= 0xFFFF", f"((({a} - ip - LEN + 0x8000) & 0xFFFF) - 0x8000)"
            if not range_checked: body.append(f"if not ({reach}): raise _ip16_error({fid!r}, {self.allargs}, {i})")
            body.append(f"d = {d}")
            if not range_checked and o.imm == 8:
                body.append(f"if not ({_cond('d', rng)}): raise _range_error({fid!r}, {self.allargs}, {i}, d)")
            self.fits.append(f"{is_int}({reach}) and ({_cond(d, rng)})" if o.imm == 8 else f"{is_int}({reach})")
            p, t = _imm_bytes("d", o.imm)
        elif o.kind.startswith("rel"):
            body.append(f"d = {a} - ip - LEN")
            if not range_checked: body.append(f"if not ({_cond('d', rng)}): raise _range_error({fid!r}, {self.allargs}, {i}, d)")
            self.fits.append(f"{is_int}({_cond(f'({a} - ip - LEN)', rng)})")
            p, t = _imm_bytes("d", o.imm)
        else:
            if not range_checked: body.append(f"if not ({_cond(a, rng)}): raise _range_error({fid!r}, {self.allargs}, {i}, {a})")
            self.fits.append(f"{is_int}({_cond(a, rng)})")
            if o.imm == 4:   # the imm4 of /is5: packed into the is4 byte
                self.imm4 = a
                return
            p, t = _imm_bytes(a, o.imm)
        self.imm_after_mem += t
        if p: self.imm_inline += p
        else:
            # a wide immediate that follows inline bytes: keep order by moving all later imms out
            self.imm_tail += t

    def imm_bytes(self, tail: str) -> tuple[list[str], str]:
        """(immediate byte expressions inside the packed bytes, the expression appended last) after the
        ModRM byte and ``tail`` (a memory operand's SIB/displacement bytes, or "")."""
        if tail: return [], tail + self.imm_after_mem
        return self.imm_inline, self.imm_tail

    @property
    def reg3(self) -> str:
        """The ModRM.reg field: the reg operand, or the /digit of the opcode (shifted into place)."""
        modrm = self.row.modrm
        if self.reg: return f"{self.reg}.reg3"
        return f"{int(modrm) << 3}" if modrm is not None and len(modrm) == 1 and modrm != "r" else "0"

    @property
    def fixed_modrm(self) -> list[str]:
        """A fixed ModRM byte ("E8": lfence is 0F AE E8, SDM Vol.2 2.1.5 "opcodes with a fixed ModRM"), which follows
        the opcode; [] for the others."""
        modrm = self.row.modrm
        if modrm is None or len(modrm) != 2: return []
        # tilezero: 11:rrr:000, a register operand in the fixed byte's reg field (the loader checks those bits are 0)
        return [f"{int(modrm, 16):#04x}" + (f" | {self.reg}.reg3" if self.reg else "")]



def return_line(ind: str, elems: list[str], tail: str, cond: str | None = None) -> str:
    """A return of these byte expressions (constants folded; all-constant → a bytes literal)."""
    folded = [_fold(e) for e in elems]
    if all(_is_const(e) for e in folded): expr = repr(bytes(int(e, 0) for e in folded))
    else: expr = f"_bytes{len(folded)}(" + ", ".join(folded) + ")"   # struct.pack of n bytes: half the cost of bytes((…))
    return f"{ind}{'if ' + cond + ': ' if cond else ''}return {expr}{tail}"



def modrm_cases(c: OperandPass, returns) -> list[str]:
    """The ModRM.rm operand's cases, shared by the encoding kinds: a register (ModRM mod=11) and/or memory
    (its ModRM, SIB and displacement from the `Mem`), each under its class test unless the signature decides
    it, then the operand error. ``returns(ind, a, is_reg, modrm, tail)`` writes one case's returns, given the
    ModRM byte expression and the bytes appended after it (``tail``: a memory operand's SIB/displacement)."""
    a, reg, mem = c.rm
    i = c.args.index(a)
    known = c.known(i)
    is_mem = c.sig[i][0] == "m" if known else None   # None: decided at run time
    ind = "" if known else "    "
    out = []
    if (reg is None and is_mem is False) or (mem is None and is_mem): out.append(c.bad(i))   # not this form's operand
    ops = c.row.operands
    tiles = [c.args[k] for k, o in enumerate(ops) if o.reg == "tmm"]
    # FP16 complex multiply: #UD if the destination is either source (SDM Vol.2 VFCMULCPH/VFMULCPH, VFCMADDCPH…)
    complex_fp16 = c.row.mnemonic in COMPLEX_FP16
    if reg is not None and not is_mem:
        if not known: out.append(f"if {c.is_class(a, reg)}:")
        if len(tiles) > 1:   # AMX: #UD unless the tile registers are all different (SDM Vol.2 TDPBSSD, AMX-E4)
            same = " or ".join(f"{x}.num == {y}.num" for k, x in enumerate(tiles) for y in tiles[k + 1:])
            out.append(f"{ind}if {same}: raise _distinct_error({c.fid!r}, {c.allargs}, 'tiles')")
        if complex_fp16:
            out.append(f"{ind}if {c.reg}.num == {c.vvvv}.num or {c.reg}.num == {a}.num:"
                       f" raise _distinct_error({c.fid!r}, {c.allargs}, 'complex')")
        if c.row.taken_reg:   # ModRM.reg values that are another instruction with a register r/m (the hint-NOP space)
            out.append(f"{ind}if {c.row.taken_reg} >> ({c.reg}.num & 7) & 1: raise _taken_error({c.fid!r}, {c.allargs})")
        out += returns(ind, a, True, f"0xC0 | {c.reg3} | {a}.lo", "")
    if mem is not None and is_mem is not False:
        kind = ops[i].kind
        vsib = kind[:2] == "vm"   # vm32x …: a VsibMem with an xmm/ymm/zmm index (SDM Vol.2 2.3.12)
        evex = c.row.encoding_kind == "evex"
        if vsib:   # EVEX: index registers 0-31 (EVEX.V̄' is the index's bit 4, SDM Vol.2 2.7.2); VEX: 0-15
            index = {"x": "Xmm", "y": "Ymm", "z": "Zmm"}[kind[-1]]
            index = f"in ({index}, {HIGH_CLASS[kind[-1] + 'mm']})" if evex and kind[-1] != "z" else f"is {index}"
        # a form with a 32-bit address size (`a32` and a memory operand: ENQCMD_R32_M512) takes a 32-bit address, an
        # A32Mem (the same ModRM/SIB/displacement as its 64-bit operand, SDM Vol.2 2.1.5), its 0x67 in the form's bytes
        cls = f"VsibMem and {a}.index.__class__ {index}" if vsib else "A32Mem" if c.row.addrsize32 else "Mem"
        # a REX2 form takes an address with r16-r31 too (`x86gen.memory.EgprMem`; no other form's encoder does)
        test = f"({a}.__class__ is Mem or {a}.__class__ is EgprMem)" if c.row.encoding_kind == "rex2" and cls == "Mem" \
            else f"{a}.__class__ is {cls}"
        if not known: out.append(f"if {test}{'' if mem == 0 else f' and {a}.size in (0, {mem})'}:")
        if c.sig is None: out.append(f"{ind}if {a}.label is not None: raise _label_error({c.fid!r}, {c.allargs})")   # (plans check first)
        if complex_fp16:
            out.append(f"{ind}if {c.reg}.num == {c.vvvv}.num: raise _distinct_error({c.fid!r}, {c.allargs}, 'complex')")
        if kind == "sibmem":   # AMX: the address must have a SIB byte (SDM Vol.2 TILELOADD), [rax] too
            out.append(f"{ind}{a} = {a}.with_sib()")
        if kind == "mib" or c.row.mnemonic in NO_RIP_RELATIVE:
            # MPX: bndmk, bndldx and bndstx #UD with a RIP-relative address in 64-bit mode (SDM Vol.2 BNDMK, BNDLDX, BNDSTX)
            out.append(f"{ind}if {a}.base is R_rip: raise _mpx_address_error({c.fid!r}, {c.allargs}, {i}, 'rip')")
        if kind == "mib":   # bndldx/bndstx ignore the index's scale (SDM Vol.2 BNDLDX: "the scale field … is ignored")
            out.append(f"{ind}if {a}.scale != 1 and {a}.index is not None:"
                       f" raise _mpx_address_error({c.fid!r}, {c.allargs}, {i}, 'scale')")
        if vsib and known and not evex:   # (the signature "mx32" does not tell xmm0-15 from xmm16-31: VEX takes 0-15)
            out.append(f"{ind}if {a}.index.hi16: {c.bad(i)}")
        if vsib and evex:   # AVX-512: k0 is #UD (SDM Vol.2 VPGATHERDD/VPSCATTERDD, EVEX.aaa = 000); `mask_required`
            out.append(f"{ind}if aaa.__class__ is not int or not 0 < aaa < 8: raise _mask_required_error({c.fid!r}, {c.allargs})")
        if vsib and i != 0:   # a gather #UDs if any two of destination, index and mask are the same register (SDM Vol.2
            # VGATHERDPS; the AVX-512 ones: destination and index, the mask is a k register); a scatter may store its index
            regs = [x for x in (c.reg, c.vvvv) if x] + [f"{a}.index"]
            same = " or ".join(f"{x}.num == {y}.num" for k, x in enumerate(regs) for y in regs[k + 1:])
            out.append(f"{ind}if {same}: raise _distinct_error({c.fid!r}, {c.allargs}, {'evex_gather' if evex else 'gather'!r})")
        if c.row.taken_mem:   # and with a memory r/m (0F 18 /0-/3 are the prefetches, 0F 0D /0-/7 too)
            out.append(f"{ind}if {c.row.taken_mem} >> ({c.reg}.num & 7) & 1: raise _taken_error({c.fid!r}, {c.allargs})")
        out += returns(ind, a, False, f"{a}.modrm | {c.reg3}", f" + {a}.tail")
    if not known: out.append(c.bad(i))
    return out


