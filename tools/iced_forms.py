"""iced-x86's facts about instruction forms, in this spec's vocabulary (used by tools/coverage.py and
tools/draft_forms.py; development tools only, the runtime never imports iced).

- `iced_codes()`: every iced `Code` that is an instruction valid in 64-bit mode, with its encoding kind
  (LEGACY, VEX, EVEX, XOP, D3NOW, MVEX) — the universe the coverage report counts against.
- `cpuid_name(code)`: its CPUID feature(s) as the spec writes them (`AVX`, `AES+AVX`).
- `evex_attrs(code)`: an EVEX form's tuple=/mask=/bcst=/rc= (`sdm_tuple`: the SDM's tuple type, `iced_tuple`:
  iced's N and N with broadcast).
- `spec_operands(code)` / `spec_encoding(code)`: the form's operand kinds with their encoding slot and its
  encoding in the spec's SDM syntax (isa/README.md), or `Unsupported` with the reason why the spec cannot
  describe it yet (an operand kind, a memory size or an encoding token x86gen does not know).
"""
from __future__ import annotations

import re

import iced_x86 as I


def _names(enum) -> dict[int, str]:
    return {getattr(enum, n): n for n in dir(enum) if n.isupper() and isinstance(getattr(enum, n), int)}


CODE_NAMES = _names(I.Code)
ENCODING_NAMES = _names(I.EncodingKind)
CPUID_NAMES = _names(I.CpuidFeature)
OPCODE_KIND_NAMES = _names(I.OpCodeOperandKind)
MNEMONIC_NAMES = _names(I.Mnemonic)
# the encodings the coverage report counts (AMD's XOP, with TBM and LWP, and 3DNow! are in the spec; MVEX, Knights
# Corner's, is not x86-64 of today)
COUNTED = ("LEGACY", "VEX", "EVEX", "XOP", "D3NOW")


class Unsupported(Exception):
    """The spec (or x86gen's runtime) cannot describe this form yet; the message says why."""


def iced_codes() -> list[tuple[int, str, str]]:
    """(code, Code name, encoding kind name) of every iced form that is an instruction in 64-bit mode."""
    out = []
    for code, name in sorted(CODE_NAMES.items()):
        oc = I.OpCodeInfo(code)
        if oc.mode64 and oc.is_instruction:
            out.append((code, name, ENCODING_NAMES[oc.encoding]))
    return out


def cpuid_name(code: int) -> str:
    """iced's CPUID feature names of ``code`` joined with ``+`` in iced's order (one name for most forms)."""
    ins = I.Instruction()
    ins.code = code
    return "+".join(CPUID_NAMES[c] for c in ins.cpuid_features())


# --- operand kinds ------------------------------------------------------------------------------------

_GPR = {"R8": "r8", "R16": "r16", "R32": "r32", "R64": "r64", "XMM": "xmm", "YMM": "ymm", "ZMM": "zmm", "MM": "mm", "K": "k",
        "TMM": "tmm"}
_SLOT = {"REG": "reg", "RM": "rm", "VVVV": "vvvv", "OPCODE": "opc", "IS4": "is4"}
_IMM = {"IMM8": "imm8", "IMM16": "imm16", "IMM32": "imm32", "IMM64": "imm64", "IMM8SEX16": "simm8", "IMM8SEX32": "simm8",
        "IMM8SEX64": "simm8", "IMM32SEX64": "simm32", "IMM8_CONST_1": "1", "BR64_1": "rel8", "BR64_4": "rel32",
        "XBEGIN_2": "rel16", "XBEGIN_4": "rel32",   # xbegin's fallback offset: not truncated with o16 (SDM Vol.2 XBEGIN)
        # the 16-bit near branches (o16 jmp/jcc/call/loop/jrcxz): the target is a 16-bit IP (SDM Vol.2 JMP, operand size 16)
        "BR16_1": "rel8", "BR16_2": "rel16"}
# implicit memory operands: ds:[rsi] (segment overridable), es:[rdi] (fixed), ds:[rdi] (maskmovdqu), ds:[rbx+al] (xlat)
_IMPLICIT_MEM = {"SEG_RSI": "rsi", "ES_RDI": "esrdi", "SEG_RDI": "rdi", "SEG_RBX_AL": "rbxal"}
_FIXED = {"AL": "al", "CL": "cl", "AX": "ax", "DX": "dx", "EAX": "eax", "RAX": "rax", "ST0": "st0"}
MEM_SIZES = {8, 16, 32, 64, 80, 128, 256, 384, 512}   # codegen/spec.py's sizes
MEMORY_SIZE_NAMES = _names(I.MemorySize)
FAR_POINTERS = {"SEG_PTR16": "m16:16", "SEG_PTR32": "m16:32", "SEG_PTR64": "m16:64"}   # codegen/spec.py's far pointers
BYTE_MEM_SIZES = {14, 28, 94, 108, 512}          # and those it writes in bytes (m14byte: x87 environment, fxsave area)
# Why an operand kind cannot be written in the spec yet (iced OpCodeOperandKind name prefix → reason).
KIND_REASONS = {
    "ST": "x87 register st(i)", "MM_": "MMX register mm0-mm7", "K_": "AVX-512 mask register k0-k7",
    "ZMMP3_": "a block of four zmm registers (zmm+3, 4FMAPS/4VNNIW)",
    "XMMP3_": "a block of four xmm registers (xmm+3, 4FMAPS/4VNNIW)", "MEM_VSIB32Z": "VSIB memory operand with a zmm index",
    "MEM_VSIB64Z": "VSIB memory operand with a zmm index",
    "TMM_": "AMX tile register tmm0-tmm7", "SIBMEM": "AMX sibmem operand", "MEM_VSIB": "VSIB memory operand (gathers)",
    "SEG_REG": "segment register", "FS": "segment register", "GS": "segment register", "ES": "segment register",
    "CS": "segment register", "SS": "segment register", "DS": "segment register", "CR_REG": "control register",
    "DR_REG": "debug register", "TR_REG": "test register", "BND": "MPX bound register", "MEM_MPX": "MPX memory operand",
    "MEM_MIB": "MPX memory operand", "R64_OR_MEM_MPX": "MPX memory operand", "MEM_OFFS": "moffs (absolute address) operand",
    "BR32": "32-bit branch",
    "BRDISP": "branch displacement", "FARBR": "far pointer",
}


def _kind_reason(name: str) -> str:
    for prefix, why in sorted(KIND_REASONS.items(), key=lambda kv: -len(kv[0])):
        if name.startswith(prefix): return why
    return f"operand kind {name}"


def memory_bits(code: int) -> int:
    """Size in bits of the form's memory operand (0 if iced gives none, as for lea's address)."""
    return I.MemorySizeInfo(I.OpCodeInfo(code).memory_size).size * 8


def spec_operands(code: int) -> list[tuple[str, str]]:
    """(spec kind, slot) of each explicit operand: ("r32/m32", "rm"), ("xmm", "vvvv"), ("imm8", "imm")…"""
    oc = I.OpCodeInfo(code)
    out = []
    for i in range(oc.op_count):
        name = OPCODE_KIND_NAMES[oc.op_kind(i)]
        head, _, tail = name.partition("_")
        if name in _IMM: out.append((_IMM[name], "imm")); continue
        if name in _FIXED: out.append((_FIXED[name], "fixed")); continue
        if name == "SIBMEM": out.append(("sibmem", "rm")); continue   # AMX: an address with a SIB byte
        if name in _IMPLICIT_MEM:   # string instructions, xlat, maskmovdqu: m8@rsi, m8@esrdi … (isa/README.md)
            out.append((f"m{memory_bits(code)}", _IMPLICIT_MEM[name])); continue
        if name == "IMM4_M2Z": out.append(("imm4", "imm")); continue   # vpermil2ps: imm8[3:0] (/is5)
        if name in ("XMM_IS5", "YMM_IS5"): out.append((name[:3].lower(), "is4")); continue   # and imm8[7:4]
        if name in ("MEM_VSIB32X", "MEM_VSIB32Y", "MEM_VSIB32Z", "MEM_VSIB64X", "MEM_VSIB64Y", "MEM_VSIB64Z"):   # VSIB: vm32x … vm64z
            out.append((f"vm{name[8:10]}{name[10].lower()}", "rm")); continue
        if name == "STI_OPCODE": out.append(("st", "rm")); continue   # D8 C0+i: st(i) in ModRM.rm
        if name in ("CR_REG", "DR_REG"): out.append((name[:2].lower(), "reg")); continue
        # enqcmd/enqcmds/movdir64b: ModRM.reg holds a destination address (es:[r64]), written as the register
        if name in ("R32_REG_MEM", "R64_REG_MEM"): out.append((name[:3].lower(), "reg")); continue
        if name == "SEG_REG": out.append(("sreg", "reg")); continue
        # MPX (SDM Vol.1 17): bnd0-bnd3; mib, bndldx/bndstx's base + index address; bndmk's address; bndcl's r64 or address;
        # bndmov's bound pair (two 64-bit bounds in memory)
        if name == "BND_REG": out.append(("bnd", "reg")); continue
        if name == "MEM_MIB": out.append(("mib", "rm")); continue
        if name == "MEM_MPX": out.append((f"m{memory_bits(code)}", "rm")); continue
        if name == "R64_OR_MEM_MPX": out.append((f"r/m{memory_bits(code)}", "rm")); continue
        if name == "BND_OR_MEM_MPX": out.append((f"bnd/m{memory_bits(code)}", "rm")); continue
        if name == "KP1_REG": out.append(("kp1", "reg")); continue   # vp2intersectd/q: a pair of mask registers
        if name in ("FS", "GS"): out.append((name.lower(), "fixed")); continue
        if name == "MEM" and MEMORY_SIZE_NAMES[oc.memory_size] in FAR_POINTERS:   # m16:16/m16:32/m16:64 (call/jmp far, lfs…)
            out.append((FAR_POINTERS[MEMORY_SIZE_NAMES[oc.memory_size]], "rm")); continue
        if name == "MEM" or (head in _GPR and tail == "OR_MEM"):
            bits = memory_bits(code)
            in_bytes = name == "MEM" and bits not in MEM_SIZES and bits // 8 in BYTE_MEM_SIZES
            if bits and bits not in MEM_SIZES and not in_bytes: raise Unsupported(f"memory operand of {bits // 8} bytes")
            if in_bytes: out.append((f"m{bits // 8}byte", "rm")); continue
            if name == "MEM": out.append(("m" if not bits else f"m{bits}", "rm")); continue
            if not bits: raise Unsupported(f"{name} without a memory size")
            r = _GPR[head]
            out.append((f"r/m{bits}" if r == f"r{bits}" else f"{r}/m{bits}", "rm"))
            continue
        if head in _GPR and tail in _SLOT:
            out.append((_GPR[head], _SLOT[tail]))
            continue
        raise Unsupported(_kind_reason(name))
    return out


# --- encodings ----------------------------------------------------------------------------------------


def needs_rex_w(code: int) -> bool:
    """A legacy form that needs REX.W: iced's ``o64`` where 64-bit is not the default operand size."""
    oc = I.OpCodeInfo(code)
    return "o64" in oc.op_code_string.split() and not oc.default_op_size64 and not oc.force_op_size64


def spec_encoding(code: int) -> str:
    """The encoding in the spec's syntax, from iced's opcode string (`o32`/`NP` dropped, `o64` → REX.W,
    `!(11):rrr:bbb` → /r)."""
    oc = I.OpCodeInfo(code)
    if oc.encoding == I.EncodingKind.D3NOW: return oc.op_code_string   # 0F 0F /r 9E: the spec's syntax (isa/README.md)
    toks = oc.op_code_string.split()
    out: list[str] = []
    hexes: list[str] = []
    for t in toks:
        if t in ("o32", "NP"): continue
        if t == "o64":
            if needs_rex_w(code): out.append("REX.W")
            continue
        if t == "a64": continue   # the default address size of 64-bit mode: no prefix
        if t == "a32": out.append("a32"); continue   # 0x67: the form's implicit address is 32-bit (monitor's [eax])
        if t.startswith("VEX."):
            if not any(m in t.split(".") for m in ("0F", "0F38", "0F3A")):
                raise Unsupported("VEX form without an opcode map (Knights Corner)")
            out.append(t); continue
        if t.startswith("EVEX."):
            out.append(t); continue
        if t.startswith("XOP."):   # iced's XOP.128.X8.W0: the spec writes the map as AMD does, XOP.128.08.W0
            out.append(".".join({"X8": "08", "X9": "09", "XA": "0A"}.get(p, p) for p in t.split("."))); continue
        # (100: sibmem's SIB; /vsib: the EVEX gathers' and scatters' ModRM, a VSIB memory r/m; after /1 (the AVX512PF
        # prefetches) ModRM.reg is the opcode extension)
        if t == "/vsib" and out and re.fullmatch(r"/[0-7]", out[-1]): continue
        if t in ("!(11):rrr:bbb", "11:rrr:bbb", "!(11):rrr:100", "/vsib"): out.append("/r"); continue
        if t == "11:rrr:000": hexes.append("C0"); out.append("C0"); continue   # tilezero: a fixed ModRM, the operand @reg
        if t.startswith("!(11):") and t.endswith(":bbb") and len(t) == 13:
            out.append(f"/{int(t[6:9], 2)}"); continue
        if t in ("66", "F2", "F3") and not hexes and not any(x.startswith(("VEX.", "EVEX.", "XOP.")) for x in out):
            out.append(t); continue
        if t in ("/r", "ib", "iw", "id", "io", "cb", "cw", "cd", "/is4", "/is5", "o16", "REX.W") \
                or (len(t) == 2 and t[0] == "/" and t[1] in "01234567"):
            out.append(t); continue
        if re.fullmatch(r"[0-9A-F]{2}(\+r[bwdo])?", t): hexes.append(t); out.append(t); continue
        if re.fullmatch(r"[0-9A-F]{2}\+i", t): out.append(t); continue   # x87 D8 C0+i (the opcode byte is before it)
        raise Unsupported(f"encoding token {t!r}")
    h = hexes[1:] if hexes[:1] == ["0F"] and not oc.encoding else hexes
    if h[:1] in (["38"], ["3A"]) and len(h) > 1 and hexes[:1] == ["0F"]: h = h[1:]
    if len(h) == 2 and not any(t.startswith("/") or "+r" in t for t in out):
        pass   # opcode and a fixed ModRM byte (lfence: NP 0F AE E8; tilerelease: VEX… 49 C0): the spec writes it the same way
    elif len(h) != 1: raise Unsupported("opcode with more than one fixed byte")
    return " ".join(out)


# --- EVEX attributes -----------------------------------------------------------------------------------

TUPLE_NAMES = _names(I.TupleType)   # iced's TupleType: N and N with broadcast (N64B4), not the SDM's names
M128_SHIFTS = {"vpsllw", "vpslld", "vpsllq", "vpsraw", "vpsrad", "vpsraq", "vpsrlw", "vpsrld", "vpsrlq"}


def iced_tuple(code: int) -> tuple[int, int]:
    """(N, N with broadcast or 0) of iced's tuple type of ``code``: ``N64B4`` is (64, 4), ``N16`` (16, 0)."""
    n, _, b = TUPLE_NAMES[I.OpCodeInfo(code).tuple_type][1:].partition("B")
    return int(n), int(b or 0)


def sdm_tuple(code: int) -> str | None:
    """The SDM tuple type (SDM Vol.2 2.7.5, Tables 2-34/2-35) of an EVEX form with a memory operand (None without one).

    iced gives N only (`iced_tuple`); the SDM's name follows from the instruction and its memory operand: the
    broadcasting forms are FV/HV/QV by the memory operand's share of the vector, VMOVDDUP is DUP, the
    4FMAPS/4VNNIW forms T1_4X, the shifts by an xmm/m128 count M128, the ``…32x4``-style insert/extract/broadcast
    forms T2/T4/T8 by their element count, a scalar memory operand T1S (T1F for a conversion to a general register),
    the other packed memory operands FVM/HVM/QVM/OVM by their share of the vector."""
    oc = I.OpCodeInfo(code)
    bits = memory_bits(code)
    kinds = [OPCODE_KIND_NAMES[k] for k in oc.op_kinds()]
    if any(k.startswith("MEM_VSIB") for k in kinds): return "T1S"   # gathers/scatters: N = one element (SDM VPGATHERDD: Tuple1 Scalar)
    if not any(k == "MEM" or k.endswith("OR_MEM") for k in kinds): return None
    mn = MNEMONIC_NAMES[oc.mnemonic].lower()
    vl = {0: 128, 1: 256, 2: 512}.get(oc.l, 0) if not oc.is_lig else 0
    share = {vl: "F", vl // 2: "H", vl // 4: "Q", vl // 8: "O"} if vl else {}
    if oc.can_broadcast:
        if bits not in share or share[bits] == "O":
            raise Unsupported(f"a broadcasting form whose m{bits} is no FV/HV/QV share of the vector")
        return share[bits] + "V"
    if mn == "vmovddup": return "DUP"
    if mn.startswith(("v4f", "vp4d")): return "T1_4X"
    if mn in M128_SHIFTS and bits == 128 and kinds[-1] == "XMM_OR_MEM": return "M128"
    m = re.search(r"(32|64)x([248])$", mn)
    if m: return f"T{m.group(2)}"
    if re.fullmatch(r"vp?(expand|compress)(ps|pd|[bwdq])", mn):   # a whole vector, N = one element (SDM: Tuple1 Scalar)
        return f"T1S{I.MemorySizeInfo(oc.memory_size).element_size * 8}"
    if mn in ("vmovlps", "vmovhps"): return "T2"   # two 32-bit elements (SDM VMOVLPS/VMOVHPS: Tuple2)
    if not I.MemorySizeInfo(oc.memory_size).is_packed and bits <= 64:
        return "T1F" if mn.startswith("vcvt") and kinds[0] in ("R32_REG", "R64_REG") else "T1S"
    if bits in share: return share[bits] + "VM"
    raise Unsupported(f"no tuple type for m{bits} at vector length {vl}")


def evex_attrs(code: int) -> dict[str, str]:
    """The spec's EVEX attributes of ``code`` (isa/README.md): tuple=, mask=, bcst=, rc= (only those that apply)."""
    oc = I.OpCodeInfo(code)
    out = {}
    tt = sdm_tuple(code)
    if tt: out["tuple"] = tt
    if oc.can_use_op_mask_register: out["mask"] = "k1z" if oc.can_use_zeroing_masking else "k1"
    if oc.can_broadcast: out["bcst"] = str(I.MemorySizeInfo(oc.broadcast_memory_size).size * 8)
    if oc.can_use_rounding_control: out["rc"] = "er"
    elif oc.can_suppress_all_exceptions: out["rc"] = "sae"
    return out


def unsupported_reason(code: int) -> str | None:
    """Why the spec cannot describe ``code`` yet (None if its operands and encoding can be written)."""
    try:
        spec_operands(code)
        spec_encoding(code)
        if ENCODING_NAMES[I.OpCodeInfo(code).encoding] == "EVEX": evex_attrs(code)
    except Unsupported as ex:
        return str(ex)
    return None
