#!/usr/bin/env python3
"""The instruction forms of 64-bit mode that LLVM 22 decodes and iced-x86 1.21 does not ("forms beyond iced"),
derived from LLVM itself, independently of isa/x86_64.yaml.

    python tools/llvm_forms.py            the totals per extension (from the committed tools/data/llvm22_forms.tsv)
    python tools/llvm_forms.py --write    decode the opcode space again and rewrite tools/data/llvm22_forms.tsv
    python tools/llvm_forms.py --check    decode again and say whether the committed file is current

`universe()` reads the committed file: a list of `LlvmForm` (id, extension, mnemonic, example, example_bytes,
encoding), sorted by id. tools/coverage.py counts the spec's `oracle: llvm-mc-22` forms against it.

How the file is made (`--write`, needs LLVM 22's shared library, the one llvm-mc-22/llvm-objdump-22 use, and iced-x86):

- The opcode space is decoded one candidate at a time with LLVM's disassembler (libLLVM-22's `LLVMDisasmInstruction`,
  the decoder of llvm-objdump-22, Intel syntax) and with `iced_x86.Decoder(64, …)`: VEX maps 1, 2, 3, 5, 7 and EVEX
  maps 1, 2, 3, 5, 6 × pp × W × L (EVEX L'L 0-2) × opcode × ModRM.reg 0-7 × a register and a memory ModRM.rm
  (`[rax+rcx]`, with a SIB byte, so AMX's sibmem forms decode too), and the legacy maps 0F and 0F 38 with no/66/F3/F2
  prefix × REX.W. Each candidate is followed by 0x90 bytes, which an immediate takes. EVEX candidates are decoded
  plain, with {k1}, with {k1}{z} and with EVEX.b (broadcast with memory, rounding/SAE with registers); the
  decorations only say what a form allows, as iced's one Code (`EVEX_VADDPS_ZMM_K1Z_ZMM_ZMMM512B32_ER`) does.
- A candidate LLVM decodes is known to iced when iced decodes the same bytes to an instruction of the same mnemonic
  (`_same_mnemonic`: a compare's predicate, `vcmpeqps`, and CMPccXADD's condition names, `cmpaexadd`, are LLVM's
  spellings of iced's `vcmpps`, `cmpnbxadd`). A form is beyond iced when none of its candidates is known to iced.
- Each form's example must assemble back to its bytes with llvm-mc-22 (with `{evex}` where LLVM would choose the VEX
  form of the same text). A form whose text llvm-mc-22 assembles to other bytes is a decoder alias and left out: LLVM
  22 decodes a 66/F2/F3 before many NP rows as if it were not there (`66 0F AE /0` is fxsave to it, iced refuses
  it), and EVEX.128.66.0F.W1 5B / 66.MAP5.W1 5B as vcvtqq2ps/vcvtqq2ph; the two AVX10.2 stores it decodes but never
  assembles are kept (`DECODE_ONLY`).
- Candidates are grouped into forms as iced counts them: one per opcode, ModRM.reg digit (`/r` when several digits
  give the same instruction), operand shape and vector length; a register and a memory ModRM.rm of one operand are
  one form (`zmm/m512`), W0 and W1 with the same operands are one (WIG), all vector lengths with the same operands
  one (LIG). The id is made by `codegen.spec.derive_id`, as the spec makes it.
- Left out: APX (EVEX map 4, REX2, and the EVEX promotions of VEX/legacy instructions in maps 1-3, the EVEX forms
  without an xmm/ymm/zmm operand: kmov*, BMI, AMX tile loads, CMPccXADD …; a later issue), and anything not 64-bit.
- The extension of a form comes from LLVM's instruction tables (the `Predicates` of X86InstrAVX10.td,
  X86InstrAMX.td, X86InstrMisc.td, X86InstrSystem.td, X86InstrSSE.td) and Intel's AVX10.2 and ISE specifications:
  `EXTENSIONS`, by mnemonic.
"""
from __future__ import annotations

import argparse
import collections
import ctypes
import os
import re
import sys
from typing import NamedTuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
DATA = os.path.join(ROOT, "tools", "data", "llvm22_forms.tsv")
LIBLLVM = os.environ.get("LIBLLVM", "/usr/lib/llvm-22/lib/libLLVM-22.so")
HEADER = ("id", "extension", "mnemonic", "encoding", "example", "example_bytes")


class LlvmForm(NamedTuple):
    id: str             # iced's naming scheme, made by codegen.spec.derive_id (EVEX_VMINMAXPS_ZMM_K1Z_ZMM_ZMMM512B32_IMM8_SAE)
    extension: str      # AVX10_2, AMX_AVX512, MOVRS, USER_MSR, MSR_IMM, SM4 … (`EXTENSIONS`)
    mnemonic: str       # LLVM's
    example: str        # one instance in LLVM's Intel syntax
    example_bytes: str  # its bytes, hex, space separated
    encoding: str       # what was decoded, in the spec's SDM syntax (EVEX.512.66.0F3A.W0 52 /r ib); a draft, not a fact


def universe(path: str = DATA) -> list[LlvmForm]:
    """The forms of the committed data file (LLVM 22 decodes them, iced-x86 1.21 does not), sorted by id."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("#") or not line.strip(): continue
            f = dict(zip(HEADER, line.rstrip("\n").split("\t")))
            if f["id"] == "id": continue
            out.append(LlvmForm(f["id"], f["extension"], f["mnemonic"], f["example"], f["example_bytes"], f["encoding"]))
    return out


# --- the extension of each mnemonic (LLVM 22's Predicates; Intel's AVX10.2 spec rev 3.0+ and ISE rev 056+) -----------
# AMX-AVX512 (tcvtrow*, tilemovrow), AMX-FP8 (tdp*f8ps), AMX-MOVRS (tileloaddrs*), AMX-TF32 (tmmultf32ps), MOVRS
# (movrs, prefetchrst2, vmovrs*: EVEX vmovrs needs AVX10.2 too), USER_MSR (urdmsr/uwrmsr), MSR_IMM (rdmsr/wrmsrns with
# an immediate MSR index), SM4 (the EVEX vsm4key4/vsm4rnds4: SM4 + AVX10.2); the rest of the EVEX forms are AVX10.2.
EXTENSIONS = [
    (r"tcvtrow.*|tilemovrow", "AMX_AVX512"),
    (r"tdp(bf8|bhf8|hbf8|hf8)ps", "AMX_FP8"),
    (r"tileloaddrs(t1)?", "AMX_MOVRS"),
    (r"tmmultf32ps|ttmmultf32ps", "AMX_TF32"),
    (r"movrs|prefetchrst2|vmovrs[bwdq]", "MOVRS"),
    (r"urdmsr|uwrmsr", "USER_MSR"),
    (r"rdmsr|wrmsrns", "MSR_IMM"),
    (r"vsm4key4|vsm4rnds4", "SM4"),
]


def extension(mnemonic: str, kind: str) -> str:
    for pat, ext in EXTENSIONS:
        if re.fullmatch(pat, mnemonic): return ext
    if kind == "evex": return "AVX10_2"
    return "UNKNOWN"


# --- LLVM's disassembler ------------------------------------------------------------------------------------------

class Llvm:
    """libLLVM-22's C disassembler (llvm-c/Disassembler.h), Intel syntax: what llvm-objdump-22 -M intel prints."""

    def __init__(self, lib: str = LIBLLVM):
        L = ctypes.CDLL(lib)
        for f in ("LLVMInitializeX86TargetInfo", "LLVMInitializeX86TargetMC", "LLVMInitializeX86Disassembler"): getattr(L, f)()
        L.LLVMCreateDisasm.restype = ctypes.c_void_p
        L.LLVMCreateDisasm.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
        L.LLVMSetDisasmOptions.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
        L.LLVMDisasmInstruction.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint64, ctypes.c_uint64,
                                            ctypes.c_char_p, ctypes.c_size_t]
        self.L = L
        self.dc = L.LLVMCreateDisasm(b"x86_64-unknown-linux-gnu", None, 0, None, None)
        if not self.dc: raise SystemExit(f"{lib}: no x86-64 disassembler")
        if not L.LLVMSetDisasmOptions(self.dc, 4): raise SystemExit("LLVMSetDisasmOptions(AsmPrinterVariant) refused")   # Intel
        self.buf = ctypes.create_string_buffer(512)

    def decode(self, data: bytes) -> tuple[int, str]:
        n = self.L.LLVMDisasmInstruction(self.dc, data, len(data), 0, self.buf, 512)
        return (n, " ".join(self.buf.value.decode().split())) if n else (0, "")


# --- candidates ---------------------------------------------------------------------------------------------------

PAD = b"\x90" * 8
RM_REG = 2            # the register in ModRM.rm of a register candidate (xmm2, k2, tmm2, rdx …)
SIB_MEM = (0b100, 0x08)   # ModRM.rm = 100 and SIB = [rax + rcx*1]: every memory form, AMX sibmem too


class Cand(NamedTuple):
    kind: str      # legacy | vex | evex
    map: int
    pp: int
    w: int
    l: int
    opcode: int
    mem: bool
    digit: int
    var: str       # '' | 'k' ({k1}) | 'kz' ({k1}{z}) | 'b' (EVEX.b)
    data: bytes
    head: int      # bytes before the immediate


def modrm_bytes(mem: bool, digit: int) -> bytes:
    if mem: return bytes([(digit << 3) | SIB_MEM[0], SIB_MEM[1]])
    return bytes([0xC0 | (digit << 3) | RM_REG])


def vex(mp, pp, w, l, op, mem, d) -> Cand:
    # C4 [R X B mmmmm] [W vvvv L pp] (SDM Vol.2 2.3.5); R X B and vvvv inverted: 111, 1111 (no register)
    body = bytes([0xC4, 0xE0 | mp, (w << 7) | (0xF << 3) | (l << 2) | pp, op]) + modrm_bytes(mem, d)
    return Cand("vex", mp, pp, w, l, op, mem, d, "", body + PAD, len(body))


def evex(mp, pp, w, l, op, mem, d, var="") -> Cand:
    # 62 [R X B R' 0 mmm] [W vvvv 1 pp] [z L'L b V' aaa] (SDM Vol.2 2.7.1); R X B R' vvvv V' inverted (no extension)
    z, b, aaa = var == "kz", var == "b", 1 if var in ("k", "kz") else 0
    p2 = (z << 7) | (l << 5) | (b << 4) | 0x08 | aaa
    body = bytes([0x62, 0xF0 | mp, (w << 7) | (0xF << 3) | 0x04 | pp, p2, op]) + modrm_bytes(mem, d)
    return Cand("evex", mp, pp, w, l, op, mem, d, var, body + PAD, len(body))


LEGACY_PP = {0: b"", 1: b"\x66", 2: b"\xf3", 3: b"\xf2"}


def legacy(mp, pp, w, op, mem, d) -> Cand:
    body = LEGACY_PP[pp] + (b"\x48" if w else b"") + (b"\x0f" if mp == 1 else b"\x0f\x38") + bytes([op]) + modrm_bytes(mem, d)
    return Cand("legacy", mp, pp, w, 0, op, mem, d, "", body + PAD, len(body))


def candidates():
    for mp in (1, 2):
        for pp in range(4):
            for w in (0, 1):
                for op in range(256):
                    for mem in (False, True):
                        for d in range(8): yield legacy(mp, pp, w, op, mem, d)
    for mp in (1, 2, 3, 5, 7):
        for pp in range(4):
            for w in (0, 1):
                for l in (0, 1):
                    for op in range(256):
                        for mem in (False, True):
                            for d in range(8): yield vex(mp, pp, w, l, op, mem, d)
    for mp in (1, 2, 3, 5, 6):
        for pp in range(4):
            for w in (0, 1):
                for l in (0, 1, 2):
                    for op in range(256):
                        for mem in (False, True):
                            for d in range(8): yield evex(mp, pp, w, l, op, mem, d)


# --- LLVM's text, read back -----------------------------------------------------------------------------------------

GPR = {}
for _i, _n in enumerate("ax cx dx bx sp bp si di".split()):
    GPR["r" + _n], GPR["e" + _n], GPR[_n] = ("r64", _i), ("r32", _i), ("r16", _i)
for _i, _n in enumerate("al cl dl bl spl bpl sil dil".split()): GPR[_n] = ("r8", _i)
for _i in range(8, 16):
    GPR[f"r{_i}"], GPR[f"r{_i}d"], GPR[f"r{_i}w"], GPR[f"r{_i}b"] = ("r64", _i), ("r32", _i), ("r16", _i), ("r8", _i)
MEM_PTR = {"byte": 8, "word": 16, "dword": 32, "qword": 64, "tbyte": 80, "xmmword": 128, "ymmword": 256, "zmmword": 512}


class Decoded(NamedTuple):
    mnemonic: str
    shape: tuple            # per operand: ('reg', class, number) | ('mem', bits) | ('imm',)
    mask: bool
    zero: bool
    bcst: int               # broadcast element bits
    rc: str                 # '' | 'er' | 'sae'


def parse(text: str) -> Decoded | None:
    mn, _, rest = text.partition(" ")
    if mn.startswith("{") or mn in ("rep", "repne", "lock", "data16", "rex64", "addr32"): return None   # a prefix word
    ops = [o.strip() for o in rest.split(",")] if rest.strip() else []
    shape, mask, zero, bcst, rc = [], False, False, 0, ""
    for o in ops:
        if o in ("{rn-sae}", "{rd-sae}", "{ru-sae}", "{rz-sae}"): rc = "er"; continue
        if o == "{sae}": rc = rc or "sae"; continue
        if "{k" in o: mask = True
        if "{z}" in o: zero = True
        m = re.search(r"\{1to(\d+)\}", o)
        base = re.sub(r"\s*\{[^}]*\}", "", o).strip()
        if "[" in base:
            mm = re.match(r"(\w+) ptr ", base)
            bits = MEM_PTR.get(mm.group(1), -1) if mm else 0
            if m: bcst, bits = bits, bits * int(m.group(1))
            shape.append(("mem", bits))
        elif re.fullmatch(r"[xyz]mm\d+", base): shape.append(("reg", base[:3], int(base[3:])))
        elif re.fullmatch(r"k\d", base): shape.append(("reg", "k", int(base[1:])))
        elif re.fullmatch(r"tmm\d", base): shape.append(("reg", "tmm", int(base[3:])))
        elif base in GPR: shape.append(("reg", *GPR[base]))
        elif re.fullmatch(r"-?(0x[0-9a-f]+|\d+)", base): shape.append(("imm",))
        else: return None   # an operand this reader does not know (st, segment, cr …): not a vector form of interest
    return Decoded(mn, tuple(shape), mask, zero, bcst, rc)


def _same_mnemonic(llvm: str, iced: str) -> bool:
    """LLVM prints a compare's predicate in the mnemonic (vcmpeqps, vpcmpltud) where iced has one mnemonic (vcmpps)."""
    if llvm == iced: return True
    m = re.fullmatch(r"cmp([a-z]+)xadd", llvm)   # CMPccXADD: LLVM's condition names are iced's others (ae = nb …)
    if m: return iced == f"cmp{CC_ALIASES.get(m.group(1), m.group(1))}xadd"
    m = re.fullmatch(r"(v?p?cmp)[a-z_]+?(ps|pd|ss|sd|ph|sh|b|w|d|q|ub|uw|ud|uq|bf16)", llvm)
    return bool(m) and iced == m.group(1) + m.group(2)


CC_ALIASES = {"ae": "nb", "e": "z", "ne": "nz", "a": "nbe", "ge": "nl", "g": "nle", "c": "b", "nc": "nb", "na": "be",
              "nae": "b", "pe": "p", "po": "np", "nge": "l", "ng": "le"}


# --- grouping -------------------------------------------------------------------------------------------------------

def decode_all(progress=False):
    """{candidate key without digit/var: {(var, mem): {digit: (Cand, Decoded, n, text, iced_known)}}} for every candidate
    LLVM decodes (EVEX decorations only where the plain candidate decodes)."""
    import iced_x86 as I
    names = {getattr(I.Mnemonic, n): n.lower() for n in dir(I.Mnemonic) if n.isupper()}
    llvm = Llvm()
    out: dict = collections.defaultdict(lambda: collections.defaultdict(dict))

    def look(c: Cand) -> bool:
        n, text = llvm.decode(c.data)
        if not n: return False
        d = parse(text)
        if d is None: return False
        ins = I.Decoder(64, c.data).decode()
        # (the same mnemonic at another length is a form iced knows, read differently: 66 0F 80 is jo rel16 to LLVM, as
        # AMD CPUs run it, jo rel32 to iced, as Intel's do)
        known = ins.code != I.Code.INVALID and _same_mnemonic(d.mnemonic, names[ins.mnemonic])
        out[(c.kind, c.map, c.pp, c.w, c.l, c.opcode)][(c.var, c.mem)][c.digit] = (c, d, n, text, known)
        return True

    count = 0
    for c in candidates():
        count += 1
        if progress and count % 100000 == 0: print(f"  {count} candidates", file=sys.stderr)
        ok = look(c)
        if c.kind == "evex":
            # {k1} too: the form allows masking, or needs it (a gather/scatter: k0 is #UD, iced refuses it)
            ok = look(evex(c.map, c.pp, c.w, c.l, c.opcode, c.mem, c.digit, "k")) or ok
            if ok:
                for var in ("kz", "b"): look(evex(c.map, c.pp, c.w, c.l, c.opcode, c.mem, c.digit, var))
    return out


class Proto:
    """A form under construction: the candidates of one opcode, digit, mnemonic, operand shape, W and L."""

    def __init__(self):
        self.ws, self.ls = set(), set()
        self.mask = self.zero = False
        self.bcst, self.rc = 0, ""
        self.reg = self.mem = None        # the ModRM.rm operand as a register class / memory size
        self.cands = []                   # (Cand, Decoded, text, n, known)
        self.notes = []

    def absorb(self, o: Proto) -> None:
        self.ws |= o.ws
        self.ls |= o.ls
        self.mask, self.zero = self.mask or o.mask, self.zero or o.zero
        self.bcst, self.rc = self.bcst or o.bcst, self.rc or o.rc
        self.reg = self.reg or o.reg
        self.mem = self.mem if self.mem is not None else o.mem
        self.cands += o.cands
        self.notes += o.notes


def shape_key(d: Decoded, rm_pos: int | None) -> tuple:
    """The operand shape with register numbers dropped and the ModRM.rm operand (at ``rm_pos``) written 'RM'."""
    out = []
    for i, s in enumerate(d.shape):
        if i == rm_pos: out.append("RM")
        elif s[0] == "reg": out.append(s[1])
        elif s[0] == "mem": out.append(f"m{s[1]}")
        else: out.append("imm")
    return tuple(out)


# LLVM 22 prints `dword ptr` for the m16 of VMOVW xmm1/m16, xmm2 (EVEX.128.F3.MAP5.W0 7E /r, Intel AVX10.2 spec
# "VMOVW"), and its assembler takes only `word ptr` there: the memory size as the specification has it
MEMORY_SIZE_FIX = {("vmovw", "evex", 5, 2, 0x7E): 16}


def forms_of(decoded) -> dict:
    """{form key: Proto}: candidates grouped into forms (register and memory ModRM.rm together; W0/W1 and the vector
    lengths with the same operands together, as WIG/LIG)."""
    protos: dict = collections.defaultdict(Proto)
    rounding = []

    def add(p: Proto, rm_pos, c: Cand, d: Decoded, n, text, known):
        if rm_pos is not None:
            if c.mem: p.mem = MEMORY_SIZE_FIX.get((d.mnemonic, c.kind, c.map, c.pp, c.opcode), d.shape[rm_pos][1])
            else: p.reg = d.shape[rm_pos][1]
        p.mask |= d.mask
        p.zero |= d.zero
        p.bcst = p.bcst or d.bcst
        p.rc = p.rc or d.rc
        p.cands.append((c, d, text, n, known))

    for (kind, mp, pp, w, l, op), by_var in decoded.items():
        for (var, mem), digits in by_var.items():
            # the same instruction at several ModRM.reg values is a /r form; at one value a /digit form
            sigs = collections.Counter((d.mnemonic, shape_key(d, None)) for _c, d, *_ in digits.values())
            for digit, (c, d, n, text, known) in digits.items():
                modrm = "r" if sigs[(d.mnemonic, shape_key(d, None))] > 1 else str(digit)
                if mem:
                    rm_pos = next((i for i, s in enumerate(d.shape) if s[0] == "mem"), None)
                else:   # the operand that holds ModRM.rm's register (ModRM.reg's, if both are RM_REG, is the earlier)
                    regs = [i for i, s in enumerate(d.shape) if s[0] == "reg" and s[2] == RM_REG]
                    rm_pos = regs[-1] if regs else None
                key = (kind, mp, pp, op, modrm, d.mnemonic, shape_key(d, rm_pos), n - c.head, w, l)
                if var == "b" and not mem:
                    # EVEX.b with a register ModRM.rm is rounding/SAE: its L'L is the rounding mode and the vector
                    # length 512 (SDM Vol.2 2.7.3), so it belongs to the 512-bit form; to the one LLVM decodes at this
                    # L'L where there is none (vcomxsh: EVEX.128 to LLVM 22)
                    rounding.append((key, rm_pos, c, d, n, text, known))
                    continue
                p = protos[key]
                if var in ("", "k"): p.ws.add(w); p.ls.add(l)
                add(p, rm_pos, c, d, n, text, known)
    for key, rm_pos, c, d, n, text, known in rounding:
        k512 = key[:9] + (2,)
        add(protos[k512 if k512 in protos else key], rm_pos, c, d, n, text, known)
    # A register form LLVM prints with its operands in another order than the memory form of the same bytes (the
    # register form of VMOVD xmm1/m32, xmm2, EVEX.128.66.0F.W0 D6, is `vmovd xmm21, xmm22` to LLVM 22, its test
    # avx10.2-copy-64-intel.s): one form, in the memory form's order.
    for key, p in list(protos.items()):
        if p.mem is not None or p.reg is None or not p.ws: continue
        conc = sorted(p.reg if s == "RM" else s for s in key[6])
        for k2, q in protos.items():
            if k2[:6] == key[:6] and k2[7:] == key[7:] and k2 != key and q.mem is not None and q.reg is None and \
                    len(k2[6]) == len(key[6]) and sorted(p.reg if s == "RM" else s for s in k2[6]) == conc:
                q.absorb(p)
                q.notes.append(f"register form printed as {p.cands[0][2]!r}, merged with the memory form")
                del protos[key]
                break
    # W0/W1 and the vector lengths with the same operands: one form (WIG, LIG)
    merged: dict = {}
    for key, p in protos.items():
        if not p.ws: continue   # only decorated candidates (a rounding one of a form that is not 512-bit): no form
        k = key[:6] + (tuple(operand_kinds(key, p)), key[7], p.bcst)
        if k in merged: merged[k].absorb(p)
        else:
            merged[k] = Proto()
            merged[k].absorb(p)
    return merged


def operand_kinds(key, p: Proto) -> list[str]:
    kinds = []
    for s in key[6]:
        if s == "RM":
            if p.reg and p.mem is not None: kinds.append(f"{p.reg}/m{p.mem}" if p.mem else p.reg)
            elif p.mem is not None: kinds.append(f"m{p.mem}" if p.mem else "m")
            else: kinds.append(p.reg)
        elif s == "imm": kinds.append("imm8" if key[7] == 1 else f"imm{8 * key[7]}")
        elif s.startswith("m"): kinds.append(s if s != "m0" else "m")
        else: kinds.append(s)
    # AMX tile loads/stores: an address with a SIB byte, the spec's `sibmem` (iced's SIBMEM)
    if "tmm" in kinds and "m" in kinds: kinds[kinds.index("m")] = "sibmem"
    return kinds


MAP_NAMES = {("legacy", 1): "0F", ("legacy", 2): "0F 38", 1: "0F", 2: "0F38", 3: "0F3A", 5: "MAP5", 6: "MAP6", 7: "MAP7"}


def encoding_text(key, p: Proto) -> str:
    kind, mp, pp, op, modrm = key[:5]
    imm = {0: "", 1: " ib", 4: " id"}.get(key[7], f" ?imm{key[7]}")
    tail = f"{op:02X} " + ("/r" if modrm == "r" else f"/{modrm}") + imm
    if kind == "legacy":
        pfx = {0: "NP ", 1: "66 ", 2: "F3 ", 3: "F2 "}[pp]
        return f"{pfx}{'REX.W ' if p.ws == {1} else ''}{MAP_NAMES[('legacy', mp)]} {tail}"
    nl = 3 if kind == "evex" else 2
    if len(p.ls) == nl: length = "LIG"
    elif kind == "evex": length = "/".join(str(128 << x) for x in sorted(p.ls))
    else: length = "/".join(f"L{x}" for x in sorted(p.ls))
    w = "WIG" if p.ws == {0, 1} else f"W{min(p.ws)}"
    return f"{kind.upper()}.{length}.{['NP', '66', 'F3', 'F2'][pp]}.{MAP_NAMES[mp]}.{w} {tail}"


def llvm_mc_bytes(lines: list[str]) -> list[str | None]:
    """llvm-mc-22's bytes of each line (one process), None where it refuses the line."""
    import subprocess
    r = subprocess.run(["llvm-mc-22", "-triple=x86_64", "-x86-asm-syntax=intel", "-output-asm-variant=1", "-show-encoding"],
                       input="\n".join(lines) + "\n", capture_output=True, text=True)
    bad = {int(m.group(1)) - 1 for m in re.finditer(r"<stdin>:(\d+):\d+: error", r.stderr)}
    enc = [" ".join(f"{int(b, 16):02x}" for b in m.group(1).split(","))
           for m in re.finditer(r"encoding: \[([0-9a-fx,]+)\]", r.stdout)]
    out, it = [], iter(enc)
    for i in range(len(lines)): out.append(None if i in bad else next(it, None))
    return out


# Forms of the AVX10.2 spec that LLVM 22 decodes but never chooses when it assembles (Intel AVX10.2 spec, VMOVD/VMOVW
# "zero-extending" moves: VMOVD xmm1/m32, xmm2 = EVEX.128.66.0F.W0 D6 /r, VMOVW xmm1/m16, xmm2 = EVEX.128.F3.MAP5.W0
# 7E /r): the same text is the AVX-512 (AVX512F/AVX512-FP16) store, or the F3 0F 7E / MAP5 6E load, to llvm-mc-22.
DECODE_ONLY = {("vmovd", "EVEX.128.66.0F.W0 D6 /r"): "the AVX512F store 66 0F 7E, or the load F3 0F 7E",
               ("vmovw", "EVEX.128.F3.MAP5.W0 7E /r"): "the AVX512-FP16 store 66 MAP5 7E, or the load F3 MAP5 6E"}


def build(decoded) -> tuple[list[LlvmForm], list[str]]:
    from codegen import spec
    forms, notes, pending = [], [], []
    for key, p in sorted(forms_of(decoded).items(), key=lambda kv: repr(kv[0])):
        kind, mn = key[0], key[5]
        kinds = list(key[6])
        if any(x[4] for x in p.cands): continue   # iced knows it
        if kind == "evex" and not any(k.split("/")[0] in ("xmm", "ymm", "zmm") for k in kinds):
            notes.append(f"APX (an EVEX form without a vector register, left out): {mn} {', '.join(kinds)} {encoding_text(key, p)}")
            continue
        ops = [spec.parse_operand(k, ("llvm", 0)) for k in kinds]
        for i, k in enumerate(kinds):
            if "/" in k or (k.startswith("m") and k != "m") or k in ("m", "sibmem"):
                ops[i] = spec.Operand(**{**ops[i].__dict__, "loc": "rm"})
        ev = ({"mask": "k1z" if p.zero else "k1" if p.mask else "", "rc": p.rc, "bcst": p.bcst} if kind == "evex" else None)
        o16 = kind == "legacy" and key[2] == 1 and any(k.startswith("r16") for k in kinds)
        fid = spec.derive_id(mn, ops, kind, ev, o16)
        # the example: a plain candidate (no decoration) that llvm-mc-22 assembles back to the same bytes
        plain = sorted((x for x in p.cands if x[0].var == ""), key=lambda x: (x[0].w, x[0].l, x[0].digit != 3, x[0].mem))
        pending.append((fid, extension(mn, kind), mn, encoding_text(key, p), [(x[2], x[0].data[:x[3]].hex(" ")) for x in plain],
                        p.notes))
    # The example must assemble back to its bytes with llvm-mc-22 (one process for all), written with {evex} where
    # LLVM would choose the VEX form of the same text (vpdpbssd xmm, vsm4key4 ymm, vmpsadbw xmm). A form whose text
    # LLVM assembles to other bytes is a decoder alias (LLVM 22 decodes 66-prefixed NP rows, `66 0F AE /0` as
    # fxsave, or EVEX.128.66.0F.W1 5B as vcvtqq2ps) and left out, unless the AVX10.2 spec has it (`DECODE_ONLY`).
    lines = [t2 for *_, exs, _n in pending for t, _b in exs for t2 in (t, "{evex} " + t)]
    got = iter(llvm_mc_bytes(lines))
    for fid, ext, mn, enc, exs, pnotes in pending:
        good = []
        for t, b in exs:
            plain, evexed = next(got), next(got)
            if plain == b: good.append((t, b))
            elif evexed == b and enc.startswith("EVEX"): good.append(("{evex} " + t, b))
        notes += [f"{fid}: {n}" for n in pnotes]
        if not good and (mn, enc) in DECODE_ONLY:
            notes.append(f"{fid}: llvm-mc-22 decodes {exs[0][0]!r} ({exs[0][1]}) but assembles that text to other bytes "
                         f"({DECODE_ONLY[mn, enc]})")
            good = [x for x in exs if "[" in x[0]][:1] or exs[:1]
        if not good:
            notes.append(f"decoder alias (llvm-mc-22 assembles {exs[0][0]!r} to other bytes than {exs[0][1]}), left out: {enc}")
            continue
        forms.append(LlvmForm(fid, ext, mn, good[0][0], good[0][1], enc))
    ids = collections.Counter(f.id for f in forms)
    for f in forms:
        if ids[f.id] > 1: notes.append(f"duplicate id {f.id}: {f.encoding} {f.example}")
    return sorted(forms), notes


def write(forms: list[LlvmForm], path: str = DATA) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write("# The 64-bit instruction forms LLVM 22 decodes and iced-x86 1.21 does not (APX left out).\n"
                 "# Made by `python tools/llvm_forms.py --write`; read by tools/llvm_forms.py universe(). Do not edit.\n")
        fh.write("\t".join(HEADER) + "\n")
        for f in forms:
            fh.write("\t".join((f.id, f.extension, f.mnemonic, f.encoding, f.example, f.example_bytes)) + "\n")


def totals(forms: list[LlvmForm]) -> str:
    c = collections.Counter(f.extension for f in forms)
    return ", ".join(f"{e} {n}" for e, n in sorted(c.items())) + f"; total {len(forms)}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="decode the opcode space and rewrite " + os.path.relpath(DATA, ROOT))
    ap.add_argument("--check", action="store_true", help="decode again and compare with the committed file")
    ap.add_argument("--notes", action="store_true", help="print what was left out and why")
    args = ap.parse_args(argv)
    if args.write or args.check:
        forms, notes = build(decode_all(progress=True))
        if args.notes:
            for n in notes: print(n)
        if args.check:
            same = forms == universe()
            print(f"{os.path.relpath(DATA, ROOT)} is {'current' if same else 'STALE'}")
            return 0 if same else 1
        write(forms)
    else: forms = universe()
    print(totals(forms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
