"""Load and validate isa/x86_64.yaml (the format is described in isa/README.md).

`load(path)` returns a list of `Form` records in file order. Every problem raises `SpecError`
naming the file, the line and the field; nothing is silently dropped.
"""
from __future__ import annotations

import dataclasses
import re
import sys
from dataclasses import dataclass

import yaml

REG_CLASSES = {"r8": 8, "r16": 16, "r32": 32, "r64": 64, "xmm": 128, "ymm": 256, "zmm": 512, "k": 64, "mm": 64, "tmm": 8192,
               "st": 80, "sreg": 16, "cr": 64, "dr": 64,   # x87 st(i), segment, control and debug registers
               "bnd": 128}   # MPX bound registers bnd0-bnd3: two 64-bit bounds (SDM Vol.1 17.3.1)
# memory sizes in bits; the x87 environment/state images and the fxsave area are written in bytes
# (m14byte m28byte m94byte m108byte m512byte, as iced-x86 and the SDM name them)
MEM_SIZES = {8, 16, 32, 64, 80, 128, 256, 384, 512}   # 384: the Key Locker handle of aes*128kl (48 bytes)
BYTE_MEM_SIZES = {14, 28, 94, 108, 512}
# Far pointers in memory (SDM Vol.2 CALL/JMP "m16:16/m16:32/m16:64", LFS/LGS/LSS): a 2-, 4- or 8-byte offset and a
# 2-byte segment selector, 4/6/10 bytes, by kind (in bits); their id part is M1616/M1632/M1664 (iced-x86's Code names)
FAR_POINTERS = {"m16:16": 32, "m16:32": 48, "m16:64": 80}
FIXED_REGS = {"al": 8, "cl": 8, "ax": 16, "dx": 16, "eax": 32, "ecx": 32, "edx": 32, "rax": 64, "rcx": 64, "rdx": 64,
              "st0": 80, "fs": 16, "gs": 16}
ROLES = {"R": "r", "W": "w", "RW": "rw", "CW": "cw", "RCW": "rcw", "CR": "cr", "N": "n"}
LOCS = {"reg", "rm", "vvvv", "opc", "is4", "imm", "fixed", "moffs"}
# implicit memory operands (isa/README.md, LOC): the address is a fixed register, nothing is encoded for it
# (SDM Vol.2 MOVS/LODS/STOS/CMPS/SCAS/INS/OUTS, XLAT, MASKMOVDQU)
IMPLICIT_MEM_LOCS = {"rsi": "[rsi]", "rdi": "[rdi]", "esrdi": "es:[rdi]", "rbxal": "[rbx+al]"}
LOCS |= set(IMPLICIT_MEM_LOCS)
# L: AC, alignment check (clac/stac, popf); U: UIF, the user-interrupt flag (clui/stui/testui, SDM Vol.3 UINTR), as
# iced-x86's RflagsBits.AC/UIF report them
FLAG_LETTERS = {"O": "OF", "S": "SF", "Z": "ZF", "A": "AF", "C": "CF", "P": "PF", "D": "DF", "I": "IF", "L": "AC",
                "U": "UIF"}
FLAG_GROUPS = {"r": "read", "w": "written", "u": "undefined", "0": "cleared", "1": "set"}
FAMILY_KEYS = {"forms", "cpuid", "flags", "isel", "note", "prefixes", "oracle", "source", "osize", "rex2"}
FORM_ATTRS = {"id", "cpuid", "flags", "imp", "tuple", "mask", "bcst", "rc", "prefixes", "memrole", "taken", "oracle",
              "osize", "rex2"}
# `oracle`: which byte oracle checks a form (isa/README.md, "Oracles"): iced-x86 1.21 for the forms it knows (the
# default; the id is iced's Code name), llvm-mc-22 for the forms iced does not know (AVX10.2, the newest AMX, MOVRS,
# USER_MSR…: tests/llvm_oracle.py). A family with llvm-mc-22 forms names its documentation in `source:`.
ORACLES = ("iced", "llvm-mc-22")
# `osize=d64`: the form's general registers are 64-bit in 64-bit mode without REX.W (the SDM's opcode-map superscript
# "d64"/"f64", Vol.2 Appendix A.2.5: push/pop, near branches, rdpid, urdmsr…): the consistency check then expects no
# REX.W on a 64-bit register, and an immediate is sign-extended to 64 bits.
OSIZES = ("d64",)
# prefix words a form may take (isa/README.md, `prefixes`); the first three only on a form with a memory destination
PREFIX_NAMES = ("lock", "xacquire", "xrelease", "rep", "repne", "bnd", "notrack")
MEMORY_DEST_PREFIXES = {"lock", "xacquire", "xrelease"}
# the encoding kinds written with legacy prefixes, REX and an 0F escape: legacy, and 3DNow! (0F 0F /r and a suffix byte
# after ModRM/SIB/displacement, AMD APM Vol.3 1.2.7), whose id is iced-x86's, D3NOW_ and the mnemonic's
LEGACY_KINDS = ("legacy", "d3now")
EVEX_ATTRS = {"tuple", "mask", "bcst", "rc"}   # only EVEX forms have them (isa/README.md, "EVEX")
# EVEX tuple types (SDM Vol.2 2.7.5, Tables 2-34/2-35), which give the disp8*N scale of a memory operand (`_disp8_n`):
# FV/HV/QV full/half/quarter vector (may broadcast: N = the element then), FVM/HVM/QVM/OVM full/half/quarter/eighth
# vector memory, T1S/T1F one element, T2/T4/T8 two/four/eight elements, M128 a 128-bit operand (shift counts),
# DUP (VMOVDDUP), T1_4X (4FMAPS/4VNNIW: one m128, four 32-bit elements).
# T1S8/T1S16/T1S32/T1S64: T1S whose element size is not the memory operand's, written out (VCOMPRESSPS/VEXPANDPS
# and the like read or write a whole vector but are T1S: N = one element, SDM Vol.2 VCOMPRESSPS "Tuple1 Scalar").
TUPLE_TYPES = {"FV", "HV", "QV", "FVM", "HVM", "QVM", "OVM", "T1S", "T1S8", "T1S16", "T1S32", "T1S64", "T1F", "T2", "T4",
               "T8", "M128", "DUP", "T1_4X"}
BCST_TUPLES = {"FV", "HV", "QV"}   # the tuple types of forms that broadcast (Table 2-34)
EVEX_MASKS = {"k1", "k1z"}
IMM_SIZES = {"ib": 8, "iw": 16, "id": 32, "io": 64, "cb": 8, "cw": 16, "cd": 32}
MAPS = {"": 0, "0F": 1, "0F38": 2, "0F3A": 3}
MAP_ESCAPE_BYTES = {0: 0, 1: 1, 2: 2, 3: 2}   # how many bytes a legacy map's escape takes: 0F, 0F 38, 0F 3A (SDM Vol.2 2.1.2)
# EVEX.mmm = 101 / 110: the opcode maps 5 and 6 of AVX512-FP16 (SDM Vol.2 2.7.1 P0[2:0]; EVEX only, no legacy bytes)
EVEX_MAPS = {"MAP5": 5, "MAP6": 6}
# VEX.mmmmm = 00101 / 00111: the VEX opcode maps 5 (AMX-FP8's TDPBF8PS …) and 7 (USER_MSR's and MSR_IMM's immediate
# forms, URDMSR r64, imm32 …), which only the 3-byte C4 prefix can name (Intel ISE 319433, "VEX.128.NP.MAP5.W0 FD",
# "VEX.LZ.F2.M7.W0 F8 /0 id"; SDM Vol.2 2.3.6.1 gives mmmmm 00001-00011 and reserves the rest); no legacy bytes either
VEX_MAPS = {"MAP5": 5, "MAP7": 7}
PP = {"NP": 0, "66": 1, "F3": 2, "F2": 3}
# XOP.mmmmm (AMD APM Vol.3 1.8 "XOP prefix", Vol.4 2.4): the AMD opcode maps 8 (the forms with an is4 or ib), 9 and 0Ah,
# written as AMD writes them (XOP.128.08.W0 A2 /r /is4; iced-x86 writes X8, X9, XA). The escape byte 8F is POP r/m64's
# opcode too (8F /0): read as a ModRM byte, RXB.mmmmm has B̄ m4 m3 in its reg field, and an mmmmm of 8 or more makes it
# non-zero, which tells XOP apart (AMD APM Vol.3 1.8). XOP.pp is 00 in every XOP instruction (only NP is written).
XOP_MAPS = {"08": 8, "09": 9, "0A": 10}


# REX2 (Intel APX Architecture Specification, 3.1.2.1 "REX2 prefix"): D5 and one payload byte M0 R4 X4 B4 W R3 X3 B3, the
# REX prefix of APX's registers r16-r31, for the legacy instructions of opcode maps 0 and 1 (M0 = 1 is the 0F escape).
# The loader derives a REX2 form from every legacy form REX2 reaches (`rex2_forms`), by the rule the specification
# gives: map 0 or 1 (never 0F 38 / 0F 3A, whose instructions APX promotes to EVEX instead), except the rows whose
# opcodes REX2 makes #UD or another instruction: map 0 row 4 (the REX bytes themselves), row 7 (Jcc rel8), row A (moffs
# mov, the string instructions, test al/ax/eax/rax, imm: A1 with REX2 is JMPABS), row E (loop/jcxz, in/out, call/jmp
# rel); map 1 row 3 (wrmsr, rdtsc, sysenter… and the 0F 38/0F 3A escapes) and row 8 (Jcc rel32). A family the
# specification excludes beside those rows (the XSAVE family) says `rex2: no`, and so does a family LLVM 22 cannot
# check with REX2; a single such form says `rex2=no` (isa/README.md "REX2", with the reason). Only forms with an
# operand that can name r16-r31 get one: a general register in ModRM.reg, ModRM.rm or the opcode (+r), or a ModRM
# memory operand.
REX2_ROWS_EXCLUDED = {0: (0x4, 0x7, 0xA, 0xE), 1: (0x3, 0x8)}
REX2_SOURCE = ("Intel APX Architecture Specification, 3.1.2.1 (REX2 prefix), derived by codegen/spec.py from the legacy"
               " form; bytes and text from llvm-mc-22")
REX2_CHOICES = ("no",)
GPR_CLASSES = ("r8", "r16", "r32", "r64")


def rex2_eligible(f: Form) -> bool:
    """Does REX2 reach legacy form ``f``, and can one of its operands name r16-r31 (see `REX2_ROWS_EXCLUDED`)?"""
    # (9B forms, fstenv = 9B D9 /6, are two instructions to a decoder: their second, fnstenv, has its REX2 form)
    if f.encoding_kind != "legacy" or f.opcode_map not in REX2_ROWS_EXCLUDED or f.addrsize32 or f.fwait: return False
    if f.opcode >> 4 in REX2_ROWS_EXCLUDED[f.opcode_map]: return False
    # 66 as a mandatory prefix with W (movq xmm, r/m64; pextrw r64, xmm; movmskpd r64, xmm): llvm-objdump-22 reads
    # 66 D5 (W=1) 6E … as the MMX form (movq mm, r/m64), and llvm-mc-22 never writes it for memory: unsure, left out
    if f.mandatory_prefix == 1 and f.w == 1: return False
    return any((o.loc in ("reg", "rm", "opc") and o.reg in GPR_CLASSES) or (o.loc == "rm" and o.mem is not None)
               for o in f.operands)


def rex2_forms(forms: list[Form], excluded_families: set[str], excluded_ids: set[str] = frozenset()) -> list[Form]:
    """``forms`` with, after each legacy form REX2 reaches (`rex2_eligible`, families not in ``excluded_families``, forms
    not in ``excluded_ids``: `rex2: no`, `rex2=no`), its REX2 form: the same fields, encoding kind ``rex2``, id ``REX2_``
    and the legacy id, checked by llvm-mc-22."""
    out: list[Form] = []
    for f in forms:
        out.append(f)
        if f.mnemonic not in excluded_families and f.id not in excluded_ids and rex2_eligible(f):
            out.append(dataclasses.replace(f, id="REX2_" + f.id, encoding_kind="rex2", encoding="REX2 " + f.encoding,
                                           oracle="llvm-mc-22", source=REX2_SOURCE))
    return out


class SpecError(Exception):
    """A malformed entry in the ISA spec; the message names file, line and field."""

    def __init__(self, file: str, line: int, field: str, msg: str):
        super().__init__(f"{file}:{line}: {field}: {msg}")
        self.file, self.line, self.field = file, line, field


@dataclass(frozen=True)
class Operand:
    kind: str          # as written, with r/m32 normalised to r32/m32
    role: str          # r w rw cw n
    loc: str           # reg rm vvvv opc is4 imm fixed
    reg: str | None    # register class (r32, xmm, ...) or a fixed register name
    mem: int | None    # memory size in bits, 0 for `m` (any), None if no memory allowed
    imm: int | None    # immediate width in bits
    sext: bool = False # immediate sign-extended to the operand size (simm8/simm32)

    @property
    def text(self) -> str:
        role = {v: k for k, v in ROLES.items()}[self.role]
        return f"{role}:{self.kind}"


@dataclass
class Form:
    """One form of the spec. The attributes named in `codegen.schema.FORM_FIELDS` become the generated
    table's row (`codegen.render.row`), under the same names at run time (`x86gen._table.FormRow`)."""
    id: str
    mnemonic: str
    operands: tuple[Operand, ...]
    implicit: tuple[tuple[str, str], ...]   # (role, register)
    encoding: str                           # as written in the spec (SDM syntax)
    encoding_kind: str                      # legacy | d3now | vex | evex | xop
    opcode: int
    opcode_map: int                         # 0 none, 1 0F, 2 0F38, 3 0F3A; 5 MAP5 (VEX, EVEX), 6 MAP6 (EVEX), 7 MAP7 (VEX); 8 9 10 (XOP)
    mandatory_prefix: int                   # 0 none, 1 66, 2 F3, 3 F2 (VEX.pp)
    opsize16: bool                          # 0x66 operand-size prefix (legacy 16-bit forms)
    w: int | None                           # REX.W / VEX.W; None = ignored (encoded as 0)
    vex_l: int | None                       # VEX.L / EVEX.L'L: 0, 1, 2; None = ignored (encoded as 0)
    modrm: str | None                       # "r", "0".."7", a fixed ModRM byte "E8" (two hex digits), or None
    reg_in_opcode: bool                     # register in the opcode's low 3 bits (+rb/+rw/+rd/+ro)
    imm_widths: tuple[int, ...]             # immediate field widths in bits, in order
    is4: bool
    cpuid: str
    flags: dict[str, tuple[str, ...]]
    operand_size: int                       # operand size used for immediate sign extension
    line: int
    tuple_type: str | None = None           # EVEX tuple type (SDM Vol.2 2.7.5), None outside EVEX
    disp8_n: int = 0                        # EVEX disp8*N scale (bytes) without broadcast; 0 outside EVEX
    disp8_n_bcst: int = 0                   # EVEX disp8*N scale with broadcast (the element's bytes); 0 if none
    evex_mask: str = ""                     # '' | 'k1' | 'k1z': masking the form allows (encoded k0 for now)
    evex_bcst: int = 0                      # broadcast element bits (32/64), 0 if none (not encoded yet)
    evex_rc: str = ""                       # '' | 'er' | 'sae' (not encoded yet)
    mem_role: str = ""                      # operand 1's role with a memory r/m operand where it differs (memrole=)
    shape: int = -1                         # its encoder's shape and constants (codegen/shapes.py, set by codegen/render.py)
    shape_args: tuple = ()
    prefixes: tuple[str, ...] = ()          # prefix words it takes (PREFIX_NAMES), see `form_prefixes`
    fwait: bool = False                     # 9B (WAIT) first: finit = 9B DB E3 (SDM Vol.2 FINIT/FNINIT)
    taken_reg: int = 0                      # ModRM.reg values (bitmask) that are another instruction, register r/m (`taken=`)
    taken_mem: int = 0                      # and with a memory r/m
    addrsize32: bool = False                # 0x67 address-size prefix (`a32`): a 32-bit implicit address (or memory operand)
    default64: bool = False                 # `osize=d64`: 64-bit general registers without REX.W (SDM Vol.2 A.2.5 "d64")
    oracle: str = "iced"                    # the byte oracle that checks it (ORACLES): iced-x86, or llvm-mc-22 beyond iced
    source: str = ""                        # the documentation of a form beyond iced (the family's `source:`)
    suffix: int = 0                         # 3DNow!: the opcode byte after ModRM/SIB/displacement (`0F 0F /r 9E`), 0 none

    @property
    def length(self) -> int:
        """Length in bytes with no memory operand, a 2-byte VEX where legal and no optional REX: the order in which
        `x86gen.encode` tries a mnemonic's forms (GNU as's choice of the shortest encoding)."""
        n = (1 + (self.modrm is not None) + sum(self.imm_widths) // 8 + bool(self.is4)
             + 8 * sum(o.loc == "moffs" for o in self.operands))   # moffs: a 64-bit address (SDM Vol.2 MOV, A0-A3)
        if self.encoding_kind in LEGACY_KINDS:   # (3DNow!: its suffix byte, an imm8's place)
            return (n + bool(self.suffix) + self.fwait + self.opsize16 + self.addrsize32 + bool(self.mandatory_prefix) + (self.w == 1)
                    + MAP_ESCAPE_BYTES[self.opcode_map])
        if self.encoding_kind == "rex2":   # D5 and its payload, which holds W and the 0F escape (M0)
            return n + self.fwait + self.opsize16 + bool(self.mandatory_prefix) + 2
        if self.encoding_kind == "evex": return n + 4   # 62 P0 P1 P2 (SDM Vol.2 2.7.1)
        if self.encoding_kind == "xop": return n + 3    # 8F RXB.mmmmm W.vvvv.L.pp (AMD APM Vol.3 1.8): no short form
        # VEX: C5 with one payload byte for map 0F and W = 0, else C4 with two (SDM Vol.2 2.3.5)
        return n + (2 if self.opcode_map == 1 and self.w != 1 else 3)


def _err(ctx, field, msg):
    raise SpecError(ctx[0], ctx[1], field, msg)


def parse_flags(text: str, ctx, sep=None) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for group in (text or "").replace(";", " ").split(sep):
        if "=" not in group: _err(ctx, "flags", f"expected GROUP=LETTERS, got {group!r}")
        g, letters = group.split("=", 1)
        if g not in FLAG_GROUPS: _err(ctx, "flags", f"unknown flag group {g!r} (use {', '.join(FLAG_GROUPS)})")
        bad = [c for c in letters if c not in FLAG_LETTERS]
        if bad: _err(ctx, "flags", f"unknown flag letter(s) {''.join(bad)!r} (use {''.join(FLAG_LETTERS)})")
        out[FLAG_GROUPS[g]] = tuple(sorted(FLAG_LETTERS[c] for c in letters))
    return out


_OPERAND = re.compile(r"^(?:(R|W|RW|CW|RCW|CR|N):)?([a-z0-9/]+|m16:(?:16|32|64))(?:@([a-z0-9]+))?$")


def parse_operand(text: str, ctx) -> Operand:
    m = _OPERAND.match(text.strip())
    if not m: _err(ctx, "operands", f"cannot parse operand {text.strip()!r} (expected [ROLE:]KIND[@LOC])")
    role, kind, loc = m.group(1) or "R", m.group(2), m.group(3)
    if loc is not None and loc not in LOCS: _err(ctx, "operands", f"unknown location @{loc} (use {', '.join(sorted(LOCS))})")
    if kind.startswith("r/m"): kind = f"r{kind[3:]}/m{kind[3:]}"
    reg = mem = imm = None
    sext = False
    if kind in REG_CLASSES: reg = kind
    elif kind == "kp1": reg = "k"   # a pair of mask registers k(2n), k(2n+1) (SDM Vol.2 VP2INTERSECTD/Q): named by the even one
    elif kind in FIXED_REGS or kind == "1": reg = kind; loc = loc or ("fixed" if kind != "1" else "imm")
    elif kind == "imm4": imm = 4   # vpermil2ps's imm8[3:0] beside the /is5 register (encoding `/is5`)
    elif re.fullmatch(r"s?imm(8|16|32|64)", kind):
        imm, sext = int(kind.lstrip("s")[3:]), kind.startswith("s")
    elif re.fullmatch(r"rel(8|16|32)", kind): imm = int(kind[3:])
    elif re.fullmatch(r"moffs(8|16|32|64)", kind): mem, loc = int(kind[5:]), loc or "moffs"   # 8-byte absolute address after the opcode
    elif re.fullmatch(r"vm(32|64)[xyz]", kind): mem = -1   # VSIB: the element size comes from VEX.W/EVEX.W (`load`)
    elif kind in ("m", "sibmem", "mib"): mem = 0   # sibmem: an address that must have a SIB byte (AMX tile loads/stores);
    # mib: MPX bndldx/bndstx's base + index address, no RIP-relative, the index unscaled (SDM Vol.2 BNDLDX)
    elif kind in FAR_POINTERS: mem = FAR_POINTERS[kind]   # a far pointer in memory: offset, then the 16-bit selector
    elif re.fullmatch(r"m\d+", kind): mem = int(kind[1:])
    elif re.fullmatch(r"m\d+byte", kind):
        if int(kind[1:-4]) not in BYTE_MEM_SIZES:
            _err(ctx, "operands", f"bad memory size in {kind!r} (use m{'byte, m'.join(map(str, sorted(BYTE_MEM_SIZES)))}byte)")
        mem = int(kind[1:-4]) * 8
    elif "/" in kind:
        r, _, mm = kind.partition("/")
        if r not in REG_CLASSES or not re.fullmatch(r"m\d+", mm): _err(ctx, "operands", f"unknown kind {kind!r}")
        reg, mem = r, int(mm[1:])
    else: _err(ctx, "operands", f"unknown kind {kind!r}")
    if mem and mem > 0 and mem not in MEM_SIZES and not kind.endswith("byte") and kind not in FAR_POINTERS:
        _err(ctx, "operands", f"bad memory size in {kind!r}")
    if imm is not None: loc = loc or "imm"
    if loc in IMPLICIT_MEM_LOCS and not (reg is None and mem and mem > 0):
        _err(ctx, "operands", f"@{loc} is an implicit memory operand: its kind is m8 … m128, not {kind!r}")
    # lea's address, prefetch's m8, nop's r/m32, hreset's imm8 (SDM Vol.2 HRESET: "imm8 is ignored")
    if role == "N" and reg is None and mem is None and imm is None:
        _err(ctx, "operands", f"role N (not accessed) is only for a register, memory or immediate operand, not {kind!r}")
    return Operand(kind, ROLES[role], loc or "", reg, mem, imm, sext)


_VEX = re.compile(r"^(VEX|EVEX|XOP)\.([A-Z0-9.]+)$")


def parse_encoding(text: str, ctx) -> dict:
    toks = text.split()
    if not toks: _err(ctx, "encoding", "empty")
    e = dict(encoding_kind="legacy", opsize16=False, addrsize32=False, mandatory_prefix=0, w=0, vex_l=None, opcode_map=0, modrm=None,
             reg_in_opcode=False, imm_widths=[], is4=False, sti=False, fwait=False, suffix=0)
    i = 0
    m = _VEX.match(toks[0])
    if m:
        e["encoding_kind"] = m.group(1).lower()
        parts = m.group(2).split(".")
        e["w"], e["vex_l"] = None, None
        for p in parts:
            if p in ("128", "L0", "LZ"): e["vex_l"] = 0
            elif p in ("256", "L1"): e["vex_l"] = 1
            elif p == "512" and e["encoding_kind"] == "evex": e["vex_l"] = 2
            elif p == "LIG": e["vex_l"] = None
            elif p in PP and (e["encoding_kind"] != "xop" or p == "NP"): e["mandatory_prefix"] = PP[p]
            elif p in ("0F", "0F38", "0F3A") and e["encoding_kind"] != "xop": e["opcode_map"] = MAPS[p]
            elif p in EVEX_MAPS and e["encoding_kind"] == "evex": e["opcode_map"] = EVEX_MAPS[p]   # AVX512-FP16
            elif p in VEX_MAPS and e["encoding_kind"] == "vex": e["opcode_map"] = VEX_MAPS[p]   # AMX-FP8, USER_MSR
            elif p in XOP_MAPS and e["encoding_kind"] == "xop": e["opcode_map"] = XOP_MAPS[p]   # AMD XOP maps 8, 9, 0Ah
            elif p in ("W0", "W1"): e["w"] = int(p[1])
            elif p == "WIG": e["w"] = None
            else: _err(ctx, "encoding", f"unknown {m.group(1)} field {p!r} in {toks[0]!r}")
        if not e["opcode_map"]:
            _err(ctx, "encoding", f"{toks[0]!r} names no opcode map (0F, 0F38, 0F3A; VEX: MAP5, MAP7; EVEX: MAP5, MAP6; "
                                  "XOP: 08, 09, 0A)")
        i = 1
    else:
        if toks[0] == "9B" and len(toks) > 1:   # the WAIT of finit/fstsw/fsave… (SDM Vol.2 FINIT: 9B DB E3), iced's order
            e["fwait"], i = True, 1
        while i < len(toks) and toks[i] in ("o16", "a32", "66", "F2", "F3", "REX.W"):
            t = toks[i]
            if t == "o16": e["opsize16"] = True
            elif t == "a32": e["addrsize32"] = True   # 0x67: 32-bit addressing (SDM Vol.2 3.6), as iced's opcode strings
            elif t == "REX.W": e["w"] = 1
            else: e["mandatory_prefix"] = PP[t]
            i += 1
        if i < len(toks) and toks[i] == "0F":
            e["opcode_map"], i = 1, i + 1
            if i + 1 < len(toks) and toks[i] in ("38", "3A") and re.fullmatch(r"[0-9A-F]{2}", toks[i + 1]):
                e["opcode_map"], i = MAPS["0F" + toks[i]], i + 1
    if i >= len(toks) or not re.fullmatch(r"[0-9A-F]{2}(\+r[bwdo])?", toks[i]):
        _err(ctx, "encoding", f"expected an opcode byte (two upper-case hex digits) in {text!r}")
    e["opcode"] = int(toks[i][:2], 16)
    e["reg_in_opcode"] = "+" in toks[i]
    for j, t in enumerate(toks[i + 1:]):
        if j == 0 and re.fullmatch(r"[0-9A-F]{2}", t) and not e["reg_in_opcode"]:
            e["modrm"] = t   # a fixed ModRM byte that completes the opcode (lfence: 0F AE E8, rdtscp: 0F 01 F9)
        elif j == 0 and re.fullmatch(r"[0-9A-F]{2}\+i", t) and not e["reg_in_opcode"]:
            # x87 `D8 C0+i`: the second byte is a ModRM with mod = 11, reg = an opcode digit and rm = i of st(i)
            # (SDM Vol.2 A.5, "Escape Opcode Instructions"), so it is written as that /digit with st(i) in rm
            b = int(t[:2], 16)
            if b & 0xC7 != 0xC0: _err(ctx, "encoding", f"{t!r}: the byte before +i must be C0, C8, D0 … F8 (mod = 11, rm = 0)")
            e["modrm"], e["sti"] = str((b >> 3) & 7), True
        elif t == "/r" or re.fullmatch(r"/[0-7]", t):
            if e["modrm"] is not None: _err(ctx, "encoding", "two ModRM specifiers")
            e["modrm"] = t[1:]
        elif (re.fullmatch(r"[0-9A-F]{2}", t) and t != "00" and e["modrm"] == "r" and e["opcode_map"] == 1 and e["opcode"] == 0x0F
              and not e["suffix"] and not e["imm_widths"]):
            # 3DNow!: 0F 0F /r XX, whose last byte names the operation and follows ModRM, SIB and displacement where an
            # imm8 would be (AMD APM Vol.3 1.2.7 / Vol.5 "3DNow! instruction format"; iced-x86's EncodingKind.D3NOW)
            e["suffix"], e["encoding_kind"] = int(t, 16), "d3now"
        elif t in IMM_SIZES: e["imm_widths"].append(IMM_SIZES[t])
        elif t == "/is4": e["is4"] = True
        elif t == "/is5": e["is4"] = True; e["imm_widths"].append(4)   # /is4 with an imm4 in imm8[3:0] (vpermil2ps)
        else: _err(ctx, "encoding", f"unknown token {t!r} in {text!r}")
    if e["reg_in_opcode"] and e["modrm"] is not None: _err(ctx, "encoding", "+r and ModRM together")
    return e


def assign_locations(ops: list[Operand], e: dict, ctx) -> list[Operand]:
    """Give each operand its encoding slot (isa/README.md, 'Inference'); explicit @loc wins."""
    ops = list(ops)
    if e["modrm"] is not None and len(e["modrm"]) == 2:
        # a fixed ModRM byte holds no operand, but for one written @reg whose number goes into its reg field (tilezero:
        # `W:tmm@reg | ... 49 C0` is the SDM's 11:rrr:000), which must then be 000
        if any(o.loc == "reg" for o in ops) and int(e["modrm"], 16) & 0b00_111_000:
            _err(ctx, "operands", f"@reg with the fixed ModRM byte {e['modrm']}, whose reg field is not 000")
        e = {**e, "modrm": None}
    def setloc(i, loc): ops[i] = Operand(**{**ops[i].__dict__, "loc": loc})
    if e["reg_in_opcode"]:
        for i, o in enumerate(ops):
            if not o.loc and o.reg in REG_CLASSES: setloc(i, "opc"); break
    if e["is4"]:
        for i in reversed(range(len(ops))):
            if not ops[i].loc and ops[i].reg in ("xmm", "ymm"): setloc(i, "is4"); break
    free = [i for i, o in enumerate(ops) if not o.loc]
    taken = {o.loc for o in ops if o.loc}
    nfield = len(free) + sum(1 for o in ops if o.loc in ("reg", "rm", "vvvv"))
    if e["modrm"] is not None and "rm" not in taken:
        memish = [i for i in free if ops[i].mem is not None]
        if len(memish) > 1: _err(ctx, "operands", "more than one operand may be memory")
        if memish: setloc(memish[0], "rm"); free.remove(memish[0]); taken.add("rm")
    if e["modrm"] == "r": slots = ["reg", "vvvv", "rm"] if e["encoding_kind"] not in LEGACY_KINDS and nfield == 3 else ["reg", "rm"]
    elif e["modrm"] is not None: slots = ["vvvv", "rm"] if e["encoding_kind"] not in LEGACY_KINDS and nfield == 2 else ["rm"]
    else: slots = []
    slots = [s for s in slots if s not in taken]
    if len(free) > len(slots):
        _err(ctx, "operands", f"cannot place operand(s) {[ops[i].kind for i in free]}: no encoding slot left (write @loc)")
    for i, s in zip(free, slots): setloc(i, s)
    locs = [o.loc for o in ops]
    for loc in ("reg", "rm", "vvvv", "opc", "is4"):
        if locs.count(loc) > 1: _err(ctx, "operands", f"two operands in {loc}")
    if e["modrm"] == "r" and "reg" not in locs: _err(ctx, "operands", "/r but no operand in ModRM.reg")
    if e["modrm"] is not None and "rm" not in locs: _err(ctx, "operands", "ModRM but no operand in ModRM.rm")
    if e["modrm"] is not None and e["modrm"] != "r" and "reg" in locs: _err(ctx, "operands", "/digit leaves no room for a reg operand")
    if "vvvv" in locs and e["encoding_kind"] in LEGACY_KINDS: _err(ctx, "operands", "vvvv only exists in VEX/EVEX/XOP")
    if e["is4"] and "is4" not in locs: _err(ctx, "operands", "/is4 but no register for imm8[7:4]")
    sti = [o for o in ops if o.reg == "st" and o.loc != "fixed"]
    if e["sti"] and not (len(sti) == 1 and sti[0].loc == "rm" and sti[0].mem is None):
        _err(ctx, "operands", "`XX+i` needs one st operand, in ModRM.rm (write it `st`)")
    if sti and not e["sti"]: _err(ctx, "encoding", "an st(i) operand is encoded as `XX+i` (D8 C0+i)")
    for o in ops:
        if o.mem is not None and o.loc not in ("rm", "moffs", *IMPLICIT_MEM_LOCS):
            _err(ctx, "operands", f"memory-capable {o.kind} must be in ModRM.rm, not {o.loc}")
        if o.loc == "moffs" and (e["modrm"] is not None or e["encoding_kind"] not in LEGACY_KINDS or not o.kind.startswith("moffs")):
            _err(ctx, "operands", f"{o.kind}@moffs: only a moffs operand of a legacy form without ModRM goes there")
    nimm = sum(1 for o in ops if o.loc == "imm" and o.kind != "1")
    if nimm != len(e["imm_widths"]): _err(ctx, "encoding", f"{nimm} immediate operand(s) but {len(e['imm_widths'])} immediate field(s)")
    return ops


def is_vsib(o: Operand) -> bool:
    """A VSIB memory operand (vm32x … vm64z: 32-/64-bit indices in an xmm/ymm/zmm register)."""
    return o.kind[:2] == "vm"


def vsib_element_size(ops: list[Operand], e: dict, ctx) -> list[Operand]:
    """``ops`` with each VSIB operand's memory size set to its element size: 32 bits with VEX.W0, 64 with W1
    (SDM Vol.2 VGATHERDPS/VGATHERDPD, VPGATHERDD/VPGATHERDQ …: W picks the element size, the kind the index size)."""
    out = []
    for o in ops:
        if is_vsib(o):
            if e["encoding_kind"] in LEGACY_KINDS or e["w"] is None:
                _err(ctx, "operands", f"{o.kind}: a VSIB operand needs VEX.W0 or VEX.W1 (its element size)")
            o = Operand(**{**o.__dict__, "mem": 32 if e["w"] == 0 else 64})
        out.append(o)
    return out


def derive_id(mnemonic: str, ops: list[Operand], enc: str, evex: dict | None = None, opsize16: bool = False) -> str:
    """iced's Code name (``opsize16``: the form has o16, a 16-bit branch is ``JMP_REL16``/``JE_REL8_16``): a VEX, EVEX or
    XOP form's starts with its encoding kind (``VEX_``, ``EVEX_``, ``XOP_VPCMOV_XMM_XMM_XMMM128_XMM``); ``EVEX_`` forms
    add the masking after the first operand (``K1``, ``K1Z``), the broadcast
    element to the ModRM.rm operand (``ZMMM512B32``) and ``_ER``/``_SAE`` (`evex`: the form's EVEX attrs)."""
    evex = evex or {}
    parts = [mnemonic.upper()]
    for o in ops:
        if o.imm is not None and o.kind.startswith("rel"):
            # a near branch with o16 (the 0x66 prefix): iced's JMP_REL16, JE_REL8_16; without it REL8_64/REL32_64
            parts.append(("REL16" if o.imm == 16 else f"REL{o.imm}_16") if opsize16 else f"REL{o.imm}_64")
        elif o.imm is not None: parts.append(f"IMM{o.imm}")
        elif o.loc == "moffs" or is_vsib(o) or o.kind in ("sibmem", "mib"): parts.append(o.kind.upper())   # MOFFS32, VM32X, SIBMEM
        elif o.kind == "1": parts.append("1")
        elif o.reg in FIXED_REGS: parts.append(o.reg.upper())
        elif o.reg == "st": parts.append("STI")
        elif o.kind.endswith("byte"): parts.append(o.kind.upper())   # m14byte: M14BYTE
        elif o.kind in FAR_POINTERS: parts.append(o.kind.upper().replace(":", ""))   # m16:32: M1632
        elif o.reg and o.mem is not None:
            parts.append(f"RM{o.mem}" if o.reg == f"r{o.mem}" else f"{o.reg.upper()}M{o.mem}")
        elif o.kind == "kp1": parts.append("KP1")   # iced's KP1 (a pair of mask registers)
        elif o.reg: parts.append("KR" if o.reg == "k" else o.reg.upper())   # iced spells a mask register KR
        else: parts.append("M" if o.mem == 0 else f"M{o.mem}")
        if o.loc == "rm" and o.mem and evex.get("bcst"): parts[-1] += f"B{evex['bcst']}"
        if len(parts) == 2 and evex.get("mask"): parts.append(evex["mask"].upper())
    if evex.get("rc"): parts.append(evex["rc"].upper())
    return ("" if enc == "legacy" else enc.upper() + "_") + "_".join(parts)


def evex_fields(attrs: dict[str, str], ops: list[Operand], e: dict, ctx) -> dict:
    """The EVEX attributes of a form (tuple=, mask=, bcst=, rc=) checked, and its disp8*N scales (SDM Vol.2 2.7.5,
    Tables 2-34 and 2-35): ``disp8_n`` for a memory operand without broadcast, ``disp8_n_bcst`` with one (the
    broadcast element's size, 0 if the form does not broadcast)."""
    given = {k: attrs[k] for k in EVEX_ATTRS if k in attrs}
    if e["encoding_kind"] != "evex":
        if given: _err(ctx, "attrs", f"{', '.join(sorted(given))}= only apply to EVEX forms")
        return {}
    mem = next((o.mem for o in ops if o.mem is not None), None)
    tt = given.get("tuple")
    if mem is not None and tt is None: _err(ctx, "attrs", "an EVEX form with a memory operand needs tuple= (its disp8*N, SDM Vol.2 2.7.5)")
    if tt is not None and tt not in TUPLE_TYPES:
        _err(ctx, "attrs", f"tuple={tt}: supported tuple types are {', '.join(sorted(TUPLE_TYPES))}")
    mask = given.get("mask", "")
    if mask and mask not in EVEX_MASKS: _err(ctx, "attrs", f"mask={mask}: use k1 or k1z")
    bcst = given.get("bcst", "0")
    if bcst not in ("0", "16", "32", "64"): _err(ctx, "attrs", f"bcst={bcst}: use 16, 32 or 64 (element bits)")
    if bcst != "0" and tt not in BCST_TUPLES:
        _err(ctx, "attrs", "bcst= needs tuple=FV, HV or QV (only full/half/quarter-vector forms broadcast)")
    rc = given.get("rc", "")
    if rc not in ("", "er", "sae"): _err(ctx, "attrs", f"rc={rc}: use er or sae")
    n = 0
    if mem is not None:
        n = _disp8_n(tt, mem, e, ctx)
    return dict(tuple_type=tt, disp8_n=n, disp8_n_bcst=int(bcst) // 8 if mem is not None else 0, evex_mask=mask,
                evex_bcst=int(bcst), evex_rc=rc)


def _disp8_n(tt: str, mem: int, e: dict, ctx) -> int:
    """N of a memory operand of ``mem`` bits without broadcast, by tuple type (SDM Vol.2 Tables 2-34, 2-35), after
    checking that the memory size is the one the tuple type and the form's EVEX.L'L/W say."""
    def need(bits: int) -> int:
        if mem != bits: _err(ctx, "operands", f"tuple={tt}: the memory operand is m{mem}, the tuple type says m{bits}")
        return bits // 8
    if tt.startswith("T1S") and tt != "T1S":
        if mem < int(tt[3:]): _err(ctx, "operands", f"tuple={tt}: the memory operand m{mem} is smaller than the element")
        return int(tt[3:]) // 8
    if tt in ("T1S", "T1F"):   # one element: N = its size (T1F: 32/64-bit, fixed by the instruction, not W)
        if mem not in ((8, 16, 32, 64) if tt == "T1S" else (16, 32, 64)):
            _err(ctx, "operands", f"tuple={tt}: a scalar memory operand is m8..m64, not m{mem}")
        return mem // 8
    if tt in ("T2", "T4", "T8"):   # 2/4/8 elements of 32 bits (W0) or 64 bits (W1): N = their size
        count, elem = int(tt[1]), 64 if e["w"] == 1 else 32
        if tt == "T8" and elem == 64: _err(ctx, "encoding", "tuple=T8 has 32-bit elements (EVEX.W0)")
        return need(count * elem)
    if tt in ("M128", "T1_4X"):   # a 128-bit operand at every vector length (shift counts; 4FMAPS/4VNNIW)
        return need(128)
    if e["vex_l"] is None: _err(ctx, "encoding", f"tuple={tt} needs EVEX.128/256/512 (N depends on the vector length)")
    vl = 128 << e["vex_l"]
    if tt == "DUP":   # VMOVDDUP: 64 bits at 128, the full vector at 256/512
        return need(64 if vl == 128 else vl)
    return need(vl // {"FV": 1, "FVM": 1, "HV": 2, "HVM": 2, "QV": 4, "QVM": 4, "OVM": 8}[tt])


def _operand_size(default64: bool, ops: list[Operand], e: dict) -> int:
    """Operand size that an immediate is sign-extended to: the size of the first GPR/memory operand
    (push imm: 64, the default operand size of push in 64-bit mode, SDM Vol.1 3.6.1)."""
    if default64 and not any(o.reg for o in ops): return 64
    for o in ops:
        if o.reg in REG_CLASSES and o.reg.startswith("r"): return REG_CLASSES[o.reg]
        if o.reg in FIXED_REGS: return FIXED_REGS[o.reg]
        if o.mem: return o.mem
    return 64 if e["w"] == 1 else 16 if e["opsize16"] else 32


def _choice(value: str, allowed: tuple[str, ...], ctx, field: str) -> str:
    if value not in allowed: _err(ctx, field, f"{value!r}: expected {' or '.join(allowed)}")
    return value


def _prefix_words(text: str, ctx, field: str) -> list[str]:
    words = [] if text == "none" else text.replace("+", " ").split()
    for w in words:
        if w not in PREFIX_NAMES: _err(ctx, field, f"unknown prefix {w!r} (use {', '.join(PREFIX_NAMES)}, or none)")
    return words


def memory_destination(ops: list[Operand]) -> bool:
    """A form whose first operand is a written r/m or memory operand and whose others are general registers or
    immediates: the forms lock (and the HLE hints) may go on (SDM Vol.2 LOCK: "only … when the destination operand is
    a memory operand")."""
    return (bool(ops) and ops[0].loc == "rm" and ops[0].mem is not None and ops[0].role in ("w", "rw", "rcw")
            and all(o.imm is not None or o.reg in ("r8", "r16", "r32", "r64") for o in ops[1:]))


def taken_fields(attr: str | None, ops: list[Operand], e: dict, ctx) -> dict:
    """``taken=``: the ModRM.reg values with which a `/r` form's bytes are another instruction (the hint-NOP space,
    SDM Vol.2 NOP and Intel's reserved-NOP opcodes 0F 0D, 0F 18-0F 1F: 0F 1F /0 is nop r/m32, 0F 18 /0-/3 with memory
    the prefetches). ``taken=0`` refuses reg field 0 whatever ModRM.rm holds, ``taken=m:0-3,6-7`` only with memory
    there; several groups are comma separated within each. Returns the row's taken_reg/taken_mem bitmasks."""
    if attr is None: return {}
    if e["modrm"] != "r" or not any(o.loc == "reg" for o in ops) or e["encoding_kind"] != "legacy":
        _err(ctx, "taken", "taken= applies to a legacy /r form with a register in ModRM.reg")
    mem_only = attr.startswith("m:")
    mask = 0
    for part in (attr[2:] if mem_only else attr).split(","):
        m = re.fullmatch(r"([0-7])(?:-([0-7]))?", part)
        if not m or int(m.group(2) or m.group(1)) < int(m.group(1)):
            _err(ctx, "taken", f"taken={attr}: expected [m:]N or N-M (ModRM.reg values 0-7), comma separated")
        for n in range(int(m.group(1)), int(m.group(2) or m.group(1)) + 1): mask |= 1 << n
    return {"taken_mem": mask, "taken_reg": 0 if mem_only else mask}


def form_prefixes(family: list[str], attr: str | None, ops: list[Operand], ctx) -> tuple[str, ...]:
    """The prefixes a form takes: its ``prefixes=`` attribute if it has one (``none``: no prefix), else its family's
    ``prefixes:``, lock/xacquire/xrelease only where the form has a memory destination (`memory_destination`)."""
    if attr is not None: return tuple(_prefix_words(attr, ctx, "prefixes"))
    return tuple(w for w in family if w not in MEMORY_DEST_PREFIXES or memory_destination(ops))


def _ctx_nodes(node):
    """Map a YAML mapping node to {key: (key_node, value_node)}."""
    return {k.value: (k, v) for k, v in node.value}


def compose(path: str, what: str) -> yaml.MappingNode:
    """The YAML node tree of a spec file (nodes keep their line numbers); its top level must be a mapping."""
    with open(path, encoding="utf-8") as f: text = f.read()
    try: root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as ex:
        mark = getattr(ex, "problem_mark", None)
        raise SpecError(path, mark.line + 1 if mark else 0, "yaml", str(ex).splitlines()[0]) from None
    if not isinstance(root, yaml.MappingNode): raise SpecError(path, 1, "top level", f"expected a mapping of {what}")
    return root


def load(path: str) -> list[Form]:
    root = compose(path, "mnemonic: family")
    forms: list[Form] = []
    seen_ids: dict[str, int] = {}
    seen_mn: set[str] = set()
    no_rex2: set[str] = set()   # families with `rex2: no`
    no_rex2_ids: set[str] = set()   # forms with `rex2=no`
    excluded_node = None
    for knode, fam in root.value:
        mn, line = knode.value, knode.start_mark.line + 1
        ctx = (path, line)
        if mn == EXCLUDED_KEY:
            excluded_node = (knode, fam)
            continue
        if mn in seen_mn: _err(ctx, mn, "duplicate family")
        seen_mn.add(mn)
        # (`_`: iced-x86's names of VIA PadLock instructions GNU as does not know: xsha512_alt, ccs_hash)
        if not re.fullmatch(r"[a-z][a-z0-9_]*", mn): _err(ctx, mn, "mnemonic must be lower case letters, digits and _")
        if not isinstance(fam, yaml.MappingNode): _err(ctx, mn, "family must be a mapping with a `forms:` list")
        keys = _ctx_nodes(fam)
        for k, (kn, _) in keys.items():
            if k not in FAMILY_KEYS:
                _err((path, kn.start_mark.line + 1), f"{mn}.{k}", f"unknown key (allowed: {', '.join(sorted(FAMILY_KEYS))})")
        if "forms" not in keys: _err(ctx, mn, "missing `forms:`")
        cpuid = keys["cpuid"][1].value if "cpuid" in keys else None
        if cpuid is None: _err(ctx, f"{mn}.cpuid", "missing (every family names its CPUID feature)")
        fam_flags = parse_flags(keys["flags"][1].value, (path, keys["flags"][1].start_mark.line + 1)) if "flags" in keys else {}
        fam_prefixes = (_prefix_words(keys["prefixes"][1].value, (path, keys["prefixes"][1].start_mark.line + 1), f"{mn}.prefixes")
                        if "prefixes" in keys else [])
        fam_oracle = _choice(keys["oracle"][1].value, ORACLES, (path, keys["oracle"][1].start_mark.line + 1), f"{mn}.oracle") \
            if "oracle" in keys else "iced"
        fam_osize = _choice(keys["osize"][1].value, OSIZES, (path, keys["osize"][1].start_mark.line + 1), f"{mn}.osize") \
            if "osize" in keys else ""
        source = str(keys["source"][1].value).strip() if "source" in keys else ""
        if "rex2" in keys:
            _choice(str(keys["rex2"][1].value), REX2_CHOICES, (path, keys["rex2"][1].start_mark.line + 1), f"{mn}.rex2")
            no_rex2.add(mn)
        fnode = keys["forms"][1]
        if not isinstance(fnode, yaml.SequenceNode) or not fnode.value: _err(ctx, f"{mn}.forms", "must be a non-empty list")
        for item in fnode.value:
            fl = item.start_mark.line + 1
            fctx = (path, fl)
            if not isinstance(item, yaml.ScalarNode): _err(fctx, f"{mn}.forms", "each form is one line: operands | encoding [| attrs]")
            fields = [s.strip() for s in item.value.split("|")]
            if len(fields) not in (2, 3): _err(fctx, f"{mn}.forms", f"expected 2 or 3 |-separated fields, got {len(fields)}")
            attrs: dict[str, str] = {}
            for a in (fields[2].split() if len(fields) == 3 else []):
                k, eq, v = a.partition("=")
                if not eq or k not in FORM_ATTRS: _err(fctx, "attrs", f"unknown attribute {a!r} (allowed: {', '.join(sorted(FORM_ATTRS))})")
                attrs[k] = v
            e = parse_encoding(fields[1], fctx)
            ops = [parse_operand(t, fctx) for t in fields[0].split(",")] if fields[0] else []
            ops = assign_locations(vsib_element_size(ops, e, fctx), e, fctx)
            implicit: list[tuple[str, str]] = []
            for t in filter(None, attrs.get("imp", "").split(",")):
                role, _, reg = t.partition(":")
                if role not in ROLES or not re.fullmatch(r"[a-z0-9]+", reg): _err(fctx, "imp", f"expected ROLE:register, got {t!r}")
                implicit.append((ROLES[role], reg))
            ev = evex_fields(attrs, ops, e, fctx)
            mem_role = ""
            if "memrole" in attrs:   # operand 1's role when the r/m operand is memory (isa/README.md, attributes)
                rm = [o for o in ops if o.loc == "rm"]
                if attrs["memrole"] not in ROLES or not rm or rm[0].reg is None or rm[0].mem is None:
                    _err(fctx, "memrole", "memrole=ROLE is for a form whose ModRM.rm operand may be a register or memory")
                mem_role = ROLES[attrs["memrole"]]
                if mem_role == ops[0].role: _err(fctx, "memrole", "memrole= repeats the operand's own role")
            fid = attrs.get("id") or derive_id(mn, ops, e["encoding_kind"], ev and {"mask": ev["evex_mask"], "rc": ev["evex_rc"],
                                                                                 "bcst": ev["evex_bcst"]}, e["opsize16"])
            if fid in seen_ids: _err(fctx, "id", f"duplicate id {fid} (first on line {seen_ids[fid]})")
            seen_ids[fid] = fl
            if "rex2" in attrs:
                _choice(attrs["rex2"], REX2_CHOICES, fctx, "rex2")
                no_rex2_ids.add(fid)
            flags = parse_flags(attrs["flags"], fctx) if "flags" in attrs else fam_flags
            oracle = _choice(attrs["oracle"], ORACLES, fctx, "oracle") if "oracle" in attrs else fam_oracle
            if oracle != "iced" and not source:
                _err(fctx, "oracle", f"a form checked by {oracle} (not from iced-x86) needs its family's `source:` (the "
                                     "documentation its roles, flags and CPUID come from)")
            default64 = (_choice(attrs["osize"], OSIZES, fctx, "osize") if "osize" in attrs else fam_osize) == "d64"
            forms.append(Form(id=fid, mnemonic=mn, operands=tuple(ops), implicit=tuple(implicit), encoding=fields[1],
                              encoding_kind=e["encoding_kind"], opcode=e["opcode"], opcode_map=e["opcode_map"],
                              mandatory_prefix=e["mandatory_prefix"], opsize16=e["opsize16"], w=e["w"], vex_l=e["vex_l"],
                              modrm=e["modrm"], reg_in_opcode=e["reg_in_opcode"], imm_widths=tuple(e["imm_widths"]), is4=e["is4"],
                              fwait=e["fwait"],
                              cpuid=attrs.get("cpuid", cpuid), flags=flags, operand_size=_operand_size(default64, ops, e), line=fl,
                              prefixes=form_prefixes(fam_prefixes, attrs.get("prefixes"), ops, fctx), mem_role=mem_role,
                              addrsize32=e["addrsize32"], default64=default64, oracle=oracle,
                              source=source if oracle != "iced" else "", suffix=e["suffix"], **ev,
                              **taken_fields(attrs.get("taken"), ops, e, fctx)))
    _check_consistency(forms, path)
    for f in forms:   # `rex2=no` only where a REX2 form would be derived
        if f.id in no_rex2_ids and (f.mnemonic in no_rex2 or not rex2_eligible(f)):
            _err((path, f.line), "rex2", f"{f.id} gets no REX2 form anyway (isa/README.md \"REX2\"): drop rex2=no")
    forms = rex2_forms(forms, no_rex2, no_rex2_ids)
    if excluded_node is not None:
        for fid, (fl, _reason) in _parse_excluded(path, *excluded_node).items():
            if fid in seen_ids: _err((path, fl), f"{EXCLUDED_KEY}.{fid}", f"is also a form (line {seen_ids[fid]})")
    return forms


# The top-level `excluded:` mapping: iced-x86 Code name -> why the spec leaves that form out
# (tools/coverage.py reports them apart from the forms still missing).
EXCLUDED_KEY = "excluded"


def _parse_excluded(path: str, knode, node) -> dict[str, tuple[int, str]]:
    ctx = (path, knode.start_mark.line + 1)
    if not isinstance(node, yaml.MappingNode): _err(ctx, EXCLUDED_KEY, "must be a mapping of iced Code name: reason")
    out: dict[str, tuple[int, str]] = {}
    for k, v in node.value:
        fl = k.start_mark.line + 1
        if not isinstance(k, yaml.ScalarNode) or not re.fullmatch(r"[A-Z][A-Z0-9_]*", k.value):
            _err((path, fl), EXCLUDED_KEY, f"key {getattr(k, 'value', k)!r} is not an iced Code name (upper case)")
        if not isinstance(v, yaml.ScalarNode) or not str(v.value).strip():
            _err((path, fl), f"{EXCLUDED_KEY}.{k.value}", "needs a reason (a non-empty string)")
        if k.value in out: _err((path, fl), f"{EXCLUDED_KEY}.{k.value}", f"listed twice (first on line {out[k.value][0]})")
        out[k.value] = (fl, str(v.value).strip())
    return out


def excluded(path: str) -> dict[str, str]:
    """The spec's `excluded:` forms: iced Code name -> the reason written in the YAML."""
    root = compose(path, "mnemonic: family")
    for knode, node in root.value:
        if knode.value == EXCLUDED_KEY: return {k: r for k, (_l, r) in _parse_excluded(path, knode, node).items()}
    return {}


def _check_consistency(forms: list[Form], path: str) -> None:
    """Cross-form checks: operand sizes agree with o16 (opsize16)/REX.W, and no two forms share an encoding."""
    seen: dict[tuple, Form] = {}
    for f in forms:
        ctx = (path, f.line)
        gpr = [REG_CLASSES[o.reg] for o in f.operands if o.loc in ("reg", "rm", "opc") and o.reg in ("r16", "r32", "r64")]
        # mov to/from cr/dr: a 64-bit GPR without REX.W (SDM Vol.2 MOV-Move to/from Control Registers); MPX bndcl/bndcu/
        # bndcn r64: 64-bit in 64-bit mode whatever REX.W (SDM Vol.1 17.5.1)
        system = any(o.reg in ("cr", "dr", "sreg", "bnd") for o in f.operands)
        if f.encoding_kind in LEGACY_KINDS and gpr and f.mnemonic not in NO_OSIZE_CHECK and not system:
            size = gpr[0]
            if (size == 16) != f.opsize16: _err(ctx, "encoding", f"16-bit operand {'needs' if size == 16 else 'must not have'} o16")
            if (size == 64) != (f.w == 1) and not f.default64:
                _err(ctx, "encoding", f"64-bit operand {'needs' if size == 64 else 'must not have'} REX.W")
        # two forms whose bytes could coincide: same opcode fields and the same register/memory shape per operand
        shape = tuple((o.loc, o.reg is not None, o.mem is not None, o.reg if o.loc == "fixed" else None) for o in f.operands)
        key = (f.encoding_kind, f.suffix, f.fwait, f.opsize16, f.addrsize32, f.mandatory_prefix, f.w or 0, f.vex_l or 0, f.opcode_map,
               f.opcode, f.modrm,
               f.reg_in_opcode, shape)
        if key in seen: _err(ctx, "encoding", f"same encoding as {seen[key].id} (line {seen[key].line})")
        seen[key] = f


# movzx/movsx/movsxd decide o16/REX.W by their destination, which is also the first GPR: checked normally.
# crc32's o16 sizes its source (`crc32 r32, r/m16`, SDM Vol.2 CRC32), not its destination.
NO_OSIZE_CHECK: set[str] = {"crc32"}


def main(argv: list[str]) -> int:
    path = argv[1] if len(argv) > 1 else "isa/x86_64.yaml"
    try: forms = load(path)
    except SpecError as ex:
        print(f"error: {ex}", file=sys.stderr)
        return 1
    print(f"{path}: {len(forms)} forms, {len({f.mnemonic for f in forms})} mnemonics, ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
