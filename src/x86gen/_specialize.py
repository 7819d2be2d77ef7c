"""Write the Python encoder of a form from its row of the generated form table.

The form table (``_gen/forms.tsv``) is data: opcode, map, prefixes, W, L and where each operand
goes. `build` writes a short Python function for exactly one form (every constant folded in, one
branch per register/memory case), so each form costs only a few attribute loads and one
``struct.pack`` of its bytes. The generator runs it for every form and renders the results, grouped
by shape, into ``_gen/encoders`` (codegen/shapes.py): forms use those, and nothing is compiled per
form at run time. At run time `parts` writes the per-signature plans of `x86gen.encoder` (the same
code without the checks a signature answers). ``Form.source`` shows a form's encoder.

`parts` writes the code in two steps: a pass shared by every encoding kind (`_Operands`: operand
checks, encoding slots, immediates), then the emitter of the form's encoding kind (`EMITTERS`:
`emit_legacy`, `emit_vex`, `emit_evex`) over shared pieces (`_modrm_cases` for ModRM/SIB/memory,
`_return` for the packed bytes), as iced-x86 has one handler per encoding kind.

Byte layout (SDM Vol.2 2.1, 2.2.1, 2.3):
  legacy: [66 (o16)] [F2|F3|66 mandatory] [REX] [0F [38|3A]] opcode [ModRM [SIB] [disp]] [imm]
  VEX:    C5 R̄vvvvLpp                  opcode ModRM [SIB] [disp] [imm | is4]   (2-byte)
          C4 R̄X̄B̄mmmmm Wvvvv̄Lpp         opcode ModRM [SIB] [disp] [imm | is4]   (3-byte)
  EVEX:   62 R̄X̄B̄R̄'00mm W v̄v̄v̄v̄1pp zL'LbV̄'aaa   opcode ModRM [SIB] [disp8*N | disp32] [imm]   (SDM Vol.2 2.7.1)
"""
from __future__ import annotations

from . import _runtime
from . import registers as R
from ._table import IMPLICIT_MEM, MAP_BYTES, imm_ranges, ip16_branch
from .memory import A32Mem, Mem, VsibMem

# the FP16 complex multiplies, whose destination must differ from both sources (SDM Vol.2 VFCMULCPH: #UD otherwise;
# GNU as: "destination and source registers must be distinct", iced-x86's decoder: INVALID)
COMPLEX_FP16 = frozenset(f"vf{c}{op}c{s}" for c in ("", "c") for op in ("mul", "madd") for s in ("ph", "sh"))

REG_CLASS = {"r8": "Gpr8", "r16": "Gpr16", "r32": "Gpr32", "r64": "Gpr64", "xmm": "Xmm", "ymm": "Ymm", "zmm": "Zmm", "k": "KReg",
             "mm": "Mmx", "tmm": "Tmm", "st": "StReg", "sreg": "SegReg", "cr": "CrReg", "dr": "DrReg"}
PP_BYTE = {0: (), 1: (0x66,), 2: (0xF3,), 3: (0xF2,)}
# xmm16-31 / ymm16-31 have classes of their own (`x86gen.registers.XmmHigh`), which only EVEX encoders accept
HIGH_CLASS = {"xmm": "XmmHigh", "ymm": "YmmHigh"}
CLASS_NAMES = (*REG_CLASS.values(), *HIGH_CLASS.values())   # every register class encoder code may name


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


def build(row) -> tuple[str, str | None]:
    """Python source of ``enc(a0, …)`` for this form, and of ``fits(a0, …)`` if it has immediates."""
    body, fits, rel = parts(row)
    args = ", ".join(f"a{i}" for i in range(len(row.operands))) + (", ip=0" if rel else "") + (", aaa=0" if mask_required(row) else "")
    src = f"def enc({args}):\n" + "".join(f"    {ln}\n" for ln in body)
    return src, (f"def fits({args}):\n    return {fits}\n" if fits else None)


def mask_required(row) -> bool:
    """Does the form need a mask k1-k7: an EVEX gather or scatter (a VSIB operand; EVEX.aaa = 000 is #UD, SDM Vol.2
    VPGATHERDD/VPSCATTERDD)? Its encoder takes the mask's number as ``aaa=`` (`x86gen._evex.encode_form` passes it;
    0, the plain call, is the error)."""
    return row.encoding_kind == "evex" and any(o.kind[:2] == "vm" for o in row.operands)


def parts(row, sig: tuple | None = None, range_checked: bool = False) -> tuple[list[str], str | None, bool]:
    """The encoder of a form as parts: its body lines (unindented, ending in a return or raise), the
    condition under which its immediates fit (None if it has none) and whether it takes ``ip=``.

    With ``sig`` (an operand signature as `x86gen.encode` computes it: ``("ymm", "ymm", "m256")``,
    ``("eax", "i")``) the body is for operands of that signature only: the class, size and fixed
    register checks that it answers are left out, and so is every branch for other operand kinds.
    With ``range_checked`` the caller has tested the fit condition, so the immediates' range checks
    are left out too. `x86gen.encoder` pastes such bodies into one function per signature.

    The shared pass (`_Operands`: operand checks, immediates) runs first; then the emitter of the
    form's encoding kind (`EMITTERS`) writes the returns: prefixes, opcode, ModRM/SIB/displacement
    (`_modrm_cases`), immediates.
    """
    c = _Operands(row, sig, range_checked)
    out = c.checks + EMITTERS[row.encoding_kind](c)
    cond = " and ".join(f"({x})" for x in c.fits) if c.fits else None
    if c.rel:   # a branch's displacement is counted from the end of the instruction, whose length is fixed
        n = str(row.length)
        out = [ln.replace("LEN", n) for ln in out]
        cond = cond.replace("LEN", n) if cond else None
    return out, cond, c.rel


# ---- the shared pass: operand checks, where each operand goes, immediates ---------------------------------------


class _Operands:
    """What every emitter needs to know of a form's operands, for operands of signature ``sig`` (or any):
    the check lines (``checks``), the fit conditions of its immediates (``fits``), the argument in each
    encoding slot (``reg``, ``rm`` = (argument, register class, memory size), ``vvvv``, ``opc``, ``is4``,
    ``moffs``), the byte registers (``r8``) and the immediate bytes (`imm_bytes`)."""

    def __init__(self, row, sig: tuple | None, range_checked: bool):
        self.row, self.sig, self.fid = row, sig, row.id
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


def _return(ind: str, elems: list[str], tail: str, cond: str | None = None) -> str:
    """A return of these byte expressions (constants folded; all-constant → a bytes literal)."""
    folded = [_fold(e) for e in elems]
    if all(_is_const(e) for e in folded): expr = repr(bytes(int(e, 0) for e in folded))
    else: expr = f"_bytes{len(folded)}(" + ", ".join(folded) + ")"   # struct.pack of n bytes: half the cost of bytes((…))
    return f"{ind}{'if ' + cond + ': ' if cond else ''}return {expr}{tail}"


def _modrm_cases(c: _Operands, returns) -> list[str]:
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
        if not known: out.append(f"if {a}.__class__ is {cls}{'' if mem == 0 else f' and {a}.size in (0, {mem})'}:")
        if c.sig is None: out.append(f"{ind}if {a}.label is not None: raise _label_error({c.fid!r}, {c.allargs})")   # (plans check first)
        if complex_fp16:
            out.append(f"{ind}if {c.reg}.num == {c.vvvv}.num: raise _distinct_error({c.fid!r}, {c.allargs}, 'complex')")
        if kind == "sibmem":   # AMX: the address must have a SIB byte (SDM Vol.2 TILELOADD), [rax] too
            out.append(f"{ind}{a} = {a}.with_sib()")
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


# ---- one emitter per encoding kind: ``emit(c) -> body lines`` after the operand checks -----------------------------


def _legacy_returns(c: _Operands, ind: str, rex_bits: list[str], middle: list[str], tail: str, r8: list[str]) -> list[str]:
    """The REX/no-REX returns of a legacy form. ``middle`` are the byte expressions from the opcode on,
    ``tail`` an expression appended after them (a memory operand's SIB/displacement), ``r8`` the byte
    registers that may force (spl…dil) or forbid (ah…bh) a REX prefix (SDM Vol.2 2.2.1)."""
    row = c.row
    imm, tail_s = c.imm_bytes(tail)
    # 9B (fwait: WAIT, first; finit is 9B DB E3, fsave 9B [66] DD /6: SDM Vol.2 FINIT/FSAVE), 66 (o16), then 67 (a32,
    # SDM Vol.2 3.6), then the mandatory prefix: iced-x86's order (x86gen.prefixes.layout)
    head = [f"{b:#04x}" for b in ([0x9B] if row.fwait else []) + ([0x66] if row.opsize16 else []) + ([0x67] if row.addrsize32 else [])
            + list(PP_BYTE[row.mandatory_prefix])]
    body = [f"{b:#04x}" for b in MAP_BYTES[row.opcode_map]] + middle + imm
    bits = rex_bits + [f"{x}.rex8" for x in r8]
    w = row.w
    if not bits:   # no register can need REX: it is present exactly when the form has REX.W
        return [_return(ind, head + (["0x48"] if w == 1 else []) + body, tail_s)]
    if w == 1 and not r8: return [_return(ind, head + [" | ".join(["0x48"] + bits)] + body, tail_s)]
    res = [f"{ind}rex = {' | '.join((['0x48'] if w == 1 else []) + bits)}"]
    if r8:
        hi = " or ".join(f"{x}.high" for x in r8)
        res.append(f"{ind}if rex and ({hi}): raise _high8_error({c.fid!r}, {c.allargs})")
    if w == 1: res.append(_return(ind, head + ["rex"] + body, tail_s))
    else:
        res.append(_return(ind, head + ["0x40 | rex"] + body, tail_s, "rex"))
        res.append(_return(ind, head + body, tail_s))
    return res


def emit_legacy(c: _Operands) -> list[str]:
    """Legacy encoding (SDM Vol.2 2.1): [66] [mandatory prefix] [REX] [0F [38|3A]] opcode [ModRM …] [imm]."""
    opcode = f"{c.row.opcode:#04x}"
    if c.rm is not None:
        rbits = [f"{c.reg}.rex_r"] if c.reg else []
        def returns(ind, a, is_reg, modrm, tail):
            if is_reg: return _legacy_returns(c, ind, rbits + [f"{a}.rex_b"], [opcode, modrm], "", c.r8)
            return _legacy_returns(c, ind, rbits + [f"{a}.rex"], [opcode, modrm], tail, [x for x in c.r8 if x != a])
        return _modrm_cases(c, returns)
    if c.opc is not None:   # +rb/+rw/+rd/+ro: the register in the opcode's low 3 bits, REX.B above
        body = _legacy_returns(c, "", [f"{c.opc}.rex_b"], [f"{opcode} | {c.opc}.lo"], "", c.r8)
        if c.row.opcode == 0x90 and c.row.opcode_map == 0:
            # xchg r, ax/eax/rax (90+r) with the accumulator itself is 90, which is NOP, not an exchange: without REX.B
            # 90 is NOP whatever the operand size (SDM Vol.2 XCHG: "XCHG (E)AX, (E)AX (encoded instructions 90H) is an
            # alias for NOP"; in 64-bit mode it does not clear the upper half of rax as xchg eax, eax 87 C0 does)
            body = [f"if {c.opc}.num == 0: raise _nop_alias_error({c.fid!r}, {c.allargs})"] + body
        return body
    if c.moffs is not None:
        return _legacy_returns(c, "", [], [opcode], f" + _le64({c.moffs}.disp & 0xFFFFFFFFFFFFFFFF)", c.r8)
    return _legacy_returns(c, "", [], [opcode] + c.fixed_modrm, "", c.r8)


def _vex_returns(c: _Operands, ind: str, rm_reg: bool, a: str | None, middle: list[str], tail: str) -> list[str]:
    """VEX prefix (SDM Vol.2 2.3.5): the 2-byte C5 form only with map 0F, W0 (or WIG) and X̄ = B̄ = 1;
    else the 3-byte C4 form. R̄, X̄, B̄ and vvvv are stored inverted. ``a`` is the ModRM.rm operand
    (a register if ``rm_reg``), ``middle`` the ModRM byte expression (or the fixed ModRM), ``tail`` as
    in `_legacy_returns`."""
    row = c.row
    r = f"{c.reg}.vr" if c.reg else "0x80"
    vv = f"{c.vvvv}.vv" if c.vvvv else "0x78"
    lpp = ((row.vex_l or 0) << 2) | row.mandatory_prefix
    wbit = 0x80 if row.w == 1 else 0
    imm, tail_s = c.imm_bytes(tail)
    body = [f"{row.opcode:#04x}"] + middle + imm
    res = []
    xb = (f"0x40 | {a}.vb" if rm_reg else f"{a}.vxb") if a else "0x60"
    if row.opcode_map == 1 and row.w != 1:
        cond = (f"{a}.vb" if rm_reg else f"{a}.vxb == 0x60") if a else None
        res.append(_return(ind, ["0xC5", f"{r} | {vv} | {lpp:#x}"] + body, tail_s, cond))
        if cond is None: return res
    res.append(_return(ind, ["0xC4", f"{r} | {xb} | {row.opcode_map}", f"{vv} | {wbit | lpp:#x}"] + body, tail_s))
    return res


def emit_vex(c: _Operands) -> list[str]:
    """VEX encoding (SDM Vol.2 2.3): C5/C4 prefix, opcode, ModRM [SIB] [disp], [imm | is4]."""
    if c.opc is not None or c.moffs is not None: raise ValueError(f"{c.fid}: no +r or moffs operand in a VEX form")
    if c.rm is not None:
        return _modrm_cases(c, lambda ind, a, is_reg, modrm, tail: _vex_returns(c, ind, is_reg, a, [modrm], tail))
    return _vex_returns(c, "", False, None, c.fixed_modrm, "")   # e.g. vzeroupper: no ModRM


def _evex_returns(c: _Operands, ind: str, rm_reg: bool, a: str | None, modrm: str, tail: str) -> list[str]:
    """The EVEX prefix (SDM Vol.2 2.7.1), opcode, ModRM and the memory tail.

    P0 = R̄ X̄ B̄ R̄' 0 0 m m: R̄/R̄' are bits 3/4 of the ModRM.reg register (``evr``); for a register in ModRM.rm
    B̄/X̄ are its bits 3/4 (``evxb``, SDM Vol.2 2.7.2), for memory X̄/B̄ are bit 3 of index/base (``vxb``, as in
    VEX). P1 = W v̄v̄v̄v̄ 1 pp. P2 = z L'L b V̄' aaa, V̄' bit 4 of vvvv (``evv``). Inverted fields of an unused slot
    are 1s. The plain instruction is written here (aaa = 000 = k0, z = 0, b = 0, L'L the vector length): masks,
    zeroing, broadcast and rounding are set afterwards by the slow path `x86gen._evex`, so this common case stays
    as fast as it is."""
    row = c.row
    r = f"{c.reg}.evr" if c.reg else "0x90"
    xb = (f"{a}.evxb" if rm_reg else f"{a}.vxb") if a else "0x60"
    p1 = f"{c.vvvv}.vv | {(0x80 if row.w == 1 else 0) | 0x04 | row.mandatory_prefix:#x}" if c.vvvv else \
        f"{(0x80 if row.w == 1 else 0) | 0x78 | 0x04 | row.mandatory_prefix:#x}"
    p2 = f"{c.vvvv}.evv | {(row.vex_l or 0) << 5:#x}" if c.vvvv else f"{((row.vex_l or 0) << 5) | 0x08:#x}"
    if mask_required(row):   # a gather/scatter: V̄' is bit 4 of the VSIB index (SDM Vol.2 2.7.2), aaa the mask (2.7.1)
        if c.vvvv or rm_reg: raise ValueError(f"{c.fid}: an EVEX VSIB form has no vvvv operand and a memory r/m")
        p2 = f"{a}.index.evv | aaa | {(row.vex_l or 0) << 5:#x}"
    imm, tail_s = c.imm_bytes(tail)
    return [_return(ind, ["0x62", f"{r} | {xb} | {row.opcode_map}", p1, p2, f"{row.opcode:#04x}", modrm] + imm, tail_s)]


def emit_evex(c: _Operands) -> list[str]:
    """EVEX encoding (SDM Vol.2 2.7): 62 P0 P1 P2, opcode, ModRM [SIB] [disp8*N | disp32] [imm].

    A memory operand's displacement is compressed (SDM Vol.2 2.7.5): a disp8 is scaled by N (the form's
    ``disp8_n``, from its tuple type), so the `Mem`'s own ModRM/tail (disp8 unscaled) is recomputed by
    `Mem.disp8n`: disp8 = disp / N when N divides disp and the quotient fits -128..127, else disp32."""
    if c.opc is not None or c.moffs is not None or c.is4 is not None or c.rm is None:
        raise ValueError(f"{c.fid}: an EVEX form has a ModRM.rm operand and no +r, moffs or is4 operand")
    n = c.row.disp8_n

    def returns(ind, a, is_reg, modrm, tail):
        if is_reg: return _evex_returns(c, ind, True, a, modrm, "")
        return [f"{ind}m, t = {a}.disp8n({n})"] + _evex_returns(c, ind, False, a, f"m | {c.reg3}", " + t")
    return _modrm_cases(c, returns)


EMITTERS = {"legacy": emit_legacy, "vex": emit_vex, "evex": emit_evex}   # encoding kind → its emitter


# the helpers of `x86gen._runtime` by the names encoder code uses: byte and field packers, errors
HELPERS = {**_runtime._BYTES_PACKERS, **{n: getattr(_runtime, n) for n in ("_BYTE", "_le16", "_le32", "_le64", "_operand_error",
                                                                         *_runtime.ERROR_NAMES.split())}}
# Names the encoder code sees: register classes (Gpr32, Ymm, …), fixed registers (R_eax, …), `Mem`, the helpers
# of `x86gen._runtime`. The generated shapes (``_gen/encoders.py``) import the same names.
GLOBALS = {**{c: getattr(R, c) for c in CLASS_NAMES}, **{f"R_{n}": r for n, r in R.REGISTERS.items()},
           "Mem": Mem, "VsibMem": VsibMem, "A32Mem": A32Mem, **HELPERS}
