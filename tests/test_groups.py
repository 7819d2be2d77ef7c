"""x86gen.groups and x86gen.reference against tinygrad's x86 backend (tinygrad/renderer/isa/x86.py).

The reference's facts are copied below: the members of its `X86Ops` enum and of its `X86GroupOp` sets.
Where that source is present (shared/reference beside the repository, or $X86GEN_REFERENCE) the copies
are also compared with it, and so is every reference opcode with the forms of the name table. The opcodes
of the installed tinygrad 0.14.0 (a test dependency; a later version of the backend) are compared too, so
a clone without shared/reference checks those.

x86gen computes the groups from operand roles (checked against iced-x86 by test_roles_iced.py), so
they follow the hardware; every place where tinygrad's sets say otherwise is listed in DIFFERENCES with
the reason.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from x86gen import forms as F
from x86gen import groups
from x86gen.groups import X86GroupOp
from x86gen.reference import ALL_X86OPS as TINYGRAD_X86OPS  # the earlier change's names are checked here (0.14.0's: test_tinygrad.py)
from x86gen.reference import EARLIER_NOT_INSTRUCTIONS, NOT_INSTRUCTIONS, forms_for, ops_for
from x86gen.reference import TINYGRAD_X86OPS as TINYGRAD_0140_X86OPS  # 0.14.0's names only

# ---- facts copied from tinygrad/renderer/isa/x86.py ----------------------------------------------
X86OPS = """
    DEFINE_REG FRAME_INDEX LABEL LEA MOV MOVm MOVi MOVABS VMOVSS VMOVSD VMOVUPS VMOVSSm VMOVSDm VMOVUPSm MOVZX MOVSX MOVSXD
    VPMOVZXBW VPMOVZXBD VPMOVZXBQ VPMOVZXWD VPMOVZXWQ VPMOVZXDQ VPMOVSXBW VPMOVSXBD VPMOVSXBQ VPMOVSXWD VPMOVSXWQ VPMOVSXDQ
    VCVTDQ2PS VCVTDQ2PD VCVTTPS2DQ VCVTTPD2DQ VCVTPH2PS VCVTPS2PH VCVTPS2PD VCVTPD2PS VCVTSS2SD VCVTSD2SS VCVTSI2SS
    VCVTSI2SD VCVTTSS2SI VCVTTSD2SI VMOVD VMOVQ VMOVDm VMOVQm VUCOMISS VUCOMISD VCMPSS VCMPSD VCMPPS VCMPPD VPCMPGTB
    VPCMPGTW VPCMPGTD VPCMPGTQ VPCMPEQB VPCMPEQW VPCMPEQD VPCMPEQQ SETNE SETE SETL SETB CMOVNE CMOVE CMOVL CMOVB VPBLENDVB
    VBLENDVPS VBLENDVPD JNE JE JL JB JGE JMP VSHUFPS VSHUFPD VINSERTPS VPSRLDQ VPEXTRB VPEXTRW VPEXTRD VPEXTRQ VPINSRB
    VPINSRW VPINSRD VPINSRQ VPBROADCASTB VPBROADCASTW VPBROADCASTD VPBROADCASTQ VBROADCASTSS IDIV DIV ADD ADDi SUB SUBi IMUL
    IMULi AND ANDi XOR XORi OR ORi SHL SHLi SHR SHRi SAR SARi CMP CMPi VROUNDSS VROUNDSD VROUNDPS VROUNDPD VSQRTSS VSQRTSD
    VSQRTPS VSQRTPD VADDSS VADDSD VADDPS VADDPD VSUBSS VSUBSD VSUBPS VSUBPD VMULSS VMULSD VMULPS VMULPD VDIVSS VDIVSD VDIVPS
    VDIVPD VMAXSS VMAXSD VMAXPS VMAXPD VMINSS VMINSD VMINPS VMINPD VPADDB VPADDW VPADDD VPADDQ VPSUBB VPSUBW VPSUBD VPSUBQ
    VPMULLW VPMULLD VPAND VPOR VPXOR VPSLLVD VPSLLVQ VPSRLVD VPSRLVQ VPSRAVD VFMADD213SS VFMADD213SD VFMADD213PS VFMADD213PD
    RET
""".split()
PLACEHOLDERS = {"DEFINE_REG", "FRAME_INDEX", "LABEL"}   # not instructions

REFERENCE_SETS: dict[str, set[str]] = {
    "TwoAddress": set("""
        ADD ADDi AND ANDi CMOVB CMOVE CMOVL CMOVNE DIV IDIV IMUL OR ORi SAR SARi SHL SHLi SHR SHRi SUB SUBi
        VFMADD213PD VFMADD213PS VFMADD213SD VFMADD213SS XOR XORi
    """.split()),
    "ReadMem1st": set("""
        CMPi IMULi LEA MOV MOVSX MOVSXD MOVZX VBROADCASTSS VCVTDQ2PD VCVTDQ2PS VCVTPD2PS VCVTPH2PS VCVTPS2PD
        VCVTTPD2DQ VCVTTPS2DQ VCVTTSD2SI VCVTTSS2SI VMOVD VMOVQ VMOVSD VMOVSS VMOVUPS VPBROADCASTB VPBROADCASTD
        VPBROADCASTQ VPBROADCASTW VPMOVSXBD VPMOVSXBQ VPMOVSXBW VPMOVSXDQ VPMOVSXWD VPMOVSXWQ VPMOVZXBD VPMOVZXBQ
        VPMOVZXBW VPMOVZXDQ VPMOVZXWD VPMOVZXWQ VROUNDPD VROUNDPS VSQRTPD VSQRTPS
    """.split()),
    "ReadMem2nd": set("""
        ADD AND CMOVB CMOVE CMOVL CMOVNE CMP DIV IDIV IMUL OR SAR SHL SHR SUB VADDPD VADDPS VADDSD VADDSS VBLENDVPD
        VBLENDVPS VCMPPD VCMPPS VCMPSD VCMPSS VCVTSD2SS VCVTSI2SD VCVTSI2SS VCVTSS2SD VDIVPD VDIVPS VDIVSD VDIVSS
        VINSERTPS VMAXPD VMAXPS VMAXSD VMAXSS VMINPD VMINPS VMINSD VMINSS VMULPD VMULPS VMULSD VMULSS VPADDB VPADDD
        VPADDQ VPADDW VPAND VPBLENDVB VPCMPEQB VPCMPEQD VPCMPEQQ VPCMPEQW VPCMPGTB VPCMPGTD VPCMPGTQ VPCMPGTW VPINSRB
        VPINSRD VPINSRQ VPINSRW VPMULLD VPMULLW VPOR VPSLLVD VPSLLVQ VPSRAVD VPSRLVD VPSRLVQ VPSUBB VPSUBD VPSUBQ
        VPSUBW VPXOR VROUNDSD VROUNDSS VSHUFPD VSHUFPS VSQRTSD VSQRTSS VSUBPD VSUBPS VSUBSD VSUBSS VUCOMISD VUCOMISS
        XOR
    """.split()),
    "ReadMem3rd": set("""
        VFMADD213PD VFMADD213PS VFMADD213SD VFMADD213SS
    """.split()),
    "WriteMem": set("""
        ADDi ANDi MOVi MOVm ORi SARi SETB SETE SETL SETNE SHLi SHRi SUBi VCVTPS2PH VMOVDm VMOVQm VMOVSDm VMOVSSm
        VMOVUPSm VPEXTRB VPEXTRD VPEXTRQ VPEXTRW XORi
    """.split()),
    "ReadFlags": set("""
        CMOVB CMOVE CMOVL CMOVNE JB JE JGE JL JNE SETB SETE SETL SETNE
    """.split()),
    "WriteFlags": set("""
        ADD ADDi AND ANDi CMP CMPi DIV IDIV IMUL IMULi OR ORi SAR SARi SHL SHLi SHR SHRi SUB SUBi VUCOMISD VUCOMISS
        XOR XORi
    """.split()),
}
# tinygrad derives these two (Rm1st = ReadMem1st | (ReadMem2nd & TwoAddress) | {VPSRLDQ}; Rm2nd = ReadMem2nd | (ReadMem3rd & TwoAddress))
REFERENCE_SETS["Rm1st"] = REFERENCE_SETS["ReadMem1st"] | (REFERENCE_SETS["ReadMem2nd"] & REFERENCE_SETS["TwoAddress"]) | {"VPSRLDQ"}
REFERENCE_SETS["Rm2nd"] = REFERENCE_SETS["ReadMem2nd"] | (REFERENCE_SETS["ReadMem3rd"] & REFERENCE_SETS["TwoAddress"])
NINE = ("TwoAddress", "ReadMem1st", "ReadMem2nd", "ReadMem3rd", "WriteMem", "ReadFlags", "WriteFlags", "Rm1st", "Rm2nd")

# ---- where x86gen (following the hardware) differs from tinygrad's sets -----------------------------
_SHIFT_CL = ("a variable shift count must be in cl: `shl r/m, cl` (D3 /4) has no r, r/m form, so the count is neither a memory "
             "source nor in ModRM.rm, and the destination (ModRM.rm) may be memory; tinygrad encodes no SHL/SHR/SAR at all")
_RM2ND_ARTIFACT = ("tinygrad's Rm2nd = ReadMem2nd | ... also takes two-address ops whose r/m source is the first one once the tied "
                   "destination is dropped; its encoder and formatter test Rm1st first, so that membership is never used")
_VMOVSS_COPY = ("the register copy form vmovss xmm, xmm, xmm (F3 0F 10 /r) takes the merge source in vvvv and the copied register in "
                "ModRM.rm, i.e. as second source; tinygrad encodes it with vvvv = xmm0 and does not count that operand")
DIFFERENCES: dict[tuple[str, str], str] = {   # (group, op) -> why x86gen's membership is the opposite of tinygrad's
    ("ReadMem1st", "LEA"): "lea computes the address and reads no memory (iced: NO_MEM_ACCESS, no used memory); its address "
                           "is still the rm source, so LEA stays in Rm1st",
    **{(g, op): _SHIFT_CL for op in ("SHL", "SHR", "SAR") for g in ("ReadMem2nd", "Rm1st", "Rm2nd", "WriteMem")},
    **{("Rm2nd", op): _RM2ND_ARTIFACT for op in ("ADD", "SUB", "AND", "OR", "XOR", "IMUL", "CMOVNE", "CMOVE", "CMOVL", "CMOVB",
                                                 "IDIV", "DIV")},
    ("Rm2nd", "VMOVSS"): _VMOVSS_COPY, ("Rm2nd", "VMOVSD"): _VMOVSS_COPY,
}

# Commutative has no counterpart in tinygrad (a TODO there); these are the reference ops x86gen marks.
COMMUTATIVE_OPS = set("""
    ADD AND OR XOR IMUL VADDSS VADDSD VADDPS VADDPD VMULSS VMULSD VMULPS VMULPD VPADDB VPADDW VPADDD VPADDQ VPMULLW VPMULLD
    VPAND VPOR VPXOR VPCMPEQB VPCMPEQW VPCMPEQD VPCMPEQQ VFMADD213SS VFMADD213SD VFMADD213PS VFMADD213PD
""".split())


# ---- the sources, where present ----------------------------------------------------------------------
# Two versions of tinygrad's x86.py:
# - the earlier change the facts above are copied from (a diff: shared/reference/000_29830b1fa4d17003.txt beside the
#   repository, or $X86GEN_REFERENCE); only a checkout beside the shared directory has it;
# - tinygrad 0.14.0 from PyPI (the `dev` extra's tinygrad==0.14.0), read from the installed package. It is a later
#   version: 20 of the earlier change's ops are gone (VFMADD213*, VMAX*/VMIN*, VBROADCASTSS, VPBROADCAST*, VSHUFPS/PD),
#   DEFINE_REG became DEFINE, LOOP_CMP is new, there is no ReadMem3rd and SHL/SHR/SAR are WriteMem and encoded. So the
#   copied facts are compared with the earlier change only (0.14.0's names and sets: test_tinygrad.py's
#   test_names_groups_and_layouts_are_tinygrads), and the opcode check runs against whichever of the two is present.
REFERENCE_FILE = "000_29830b1fa4d17003.txt"


def _reference_source() -> str | None:
    here = Path(__file__).resolve().parent.parent
    for p in (os.environ.get("X86GEN_REFERENCE"), here.parent / "shared" / "reference" / REFERENCE_FILE,
              Path("/work/shared/reference") / REFERENCE_FILE):
        if p and Path(p).is_file():
            text = Path(p).read_text(encoding="utf-8", errors="replace")
            if "class X86Ops" in text:   # a diff: drop the leading "+" of added lines
                return "\n".join(ln[1:] if ln.startswith("+") else ln for ln in text.splitlines())
    return None


def _installed_source() -> tuple[str | None, str]:
    """tinygrad 0.14.0's tinygrad/renderer/isa/x86.py from the installed package (not imported), or None and why not."""
    from importlib import metadata
    try:
        dist = metadata.distribution("tinygrad")
    except metadata.PackageNotFoundError:
        return None, "tinygrad is not installed (pip install -e '.[dev]' installs tinygrad==0.14.0)"
    if dist.version != "0.14.0":
        return None, f"tinygrad {dist.version} is installed; this check knows 0.14.0's x86.py (pip install tinygrad==0.14.0)"
    p = Path(str(dist.locate_file("tinygrad/renderer/isa/x86.py")))
    if not p.is_file() or "class X86Ops" not in (text := p.read_text(encoding="utf-8", errors="replace")):
        return None, f"tinygrad 0.14.0 is installed but {p} with its X86Ops is not"
    return text, ""


SOURCE = _reference_source()
NO_SOURCE = (f"the X86Ops/X86GroupOp facts copied here are the earlier tinygrad change's: needs shared/reference/{REFERENCE_FILE} "
             "beside the repository or $X86GEN_REFERENCE (the installed tinygrad 0.14.0's x86.py is a later version that "
             "differs, and test_tinygrad.py checks that one)")
INSTALLED, NO_INSTALLED = _installed_source()


def test_copied_facts_match_the_reference_source():
    if SOURCE is None: pytest.skip(NO_SOURCE)
    body = SOURCE.split("class X86Ops(FastEnum):")[1].split("class X86GroupOp")[0]
    assert re.findall(r"\b([A-Z][A-Za-z0-9_]*) = auto\(\)", body) == X86OPS
    sets = SOURCE.split("class X86GroupOp:")[1].split("All = set(X86Ops)")[0]
    for m in re.finditer(r"(\w+) = \{(.*?)\}", sets, re.S):
        assert {x.strip().removeprefix("X86Ops.") for x in m.group(2).split(",") if x.strip()} == REFERENCE_SETS[m.group(1)], m.group(1)


# ---- the name table -------------------------------------------------------------------------------
def test_every_reference_op_maps_to_forms():
    assert set(NOT_INSTRUCTIONS) - {"DEFINE", "LOOP_CMP"} | set(EARLIER_NOT_INSTRUCTIONS) == PLACEHOLDERS   # 0.14.0: DEFINE, LOOP_CMP
    assert list(TINYGRAD_X86OPS) == [op for op in X86OPS if op not in PLACEHOLDERS]
    for op, ids in TINYGRAD_X86OPS.items():
        assert ids, op
        for fid in ids:
            F.get_form(fid)   # raises if there is no such form
        mnemonics = {F.get_form(fid).mnemonic for fid in ids}
        base = {"MOVABS": "mov", "RET": "ret"}.get(op, re.sub(r"[im]$", "", op).lower() if op[-1] in "im" else op.lower())
        assert mnemonics == {base}, (op, mnemonics)


def test_name_table_conventions():
    assert TINYGRAD_X86OPS["ADD"] == ("ADD_R8_RM8", "ADD_R16_RM16", "ADD_R32_RM32", "ADD_R64_RM64")
    assert set(TINYGRAD_X86OPS["ADDi"]) == {"ADD_RM8_IMM8", "ADD_RM16_IMM16", "ADD_RM32_IMM32", "ADD_RM64_IMM32", "ADD_RM16_IMM8",
                                            "ADD_RM32_IMM8", "ADD_RM64_IMM8"}
    assert TINYGRAD_X86OPS["MOVm"] == ("MOV_RM8_R8", "MOV_RM16_R16", "MOV_RM32_R32", "MOV_RM64_R64")
    assert TINYGRAD_X86OPS["MOVABS"] == ("MOV_R64_IMM64",)
    assert TINYGRAD_X86OPS["VMOVD"] == ("VEX_VMOVD_XMM_RM32",) and TINYGRAD_X86OPS["VMOVDm"] == ("VEX_VMOVD_RM32_XMM",)
    assert TINYGRAD_X86OPS["VMOVQ"] == ("VEX_VMOVQ_XMM_RM64",) and TINYGRAD_X86OPS["VMOVQm"] == ("VEX_VMOVQ_RM64_XMM",)
    assert TINYGRAD_X86OPS["JNE"] == ("JNE_REL8_64", "JNE_REL32_64") and TINYGRAD_X86OPS["JMP"] == ("JMP_REL8_64", "JMP_REL32_64")
    assert TINYGRAD_X86OPS["SHL"] == ("SHL_RM8_CL", "SHL_RM16_CL", "SHL_RM32_CL", "SHL_RM64_CL")
    assert TINYGRAD_X86OPS["IMUL"] == ("IMUL_R16_RM16", "IMUL_R32_RM32", "IMUL_R64_RM64")   # no 8-bit two-operand imul
    assert TINYGRAD_X86OPS["LEA"] == ("LEA_R64_M",)
    assert TINYGRAD_X86OPS["RET"] == ("RETNQ",)
    # `m` variants write their r/m operand, plain ones their register
    for op, ids in TINYGRAD_X86OPS.items():
        for fid in ids:
            f = F.get_form(fid)
            if op.endswith("m"): assert f.operands[0].loc == "rm" and f.operands[0].role == "w", fid
            if op.endswith("i"): assert any(o.imm is not None or o.kind == "1" for o in f.operands), fid
    assert ops_for("ADD_R32_RM32") == ("ADD",) and ops_for("ADC_R32_RM32") == ()
    with pytest.raises(KeyError, match="placeholder"): forms_for("LABEL")
    with pytest.raises(KeyError, match="VADDPS"): forms_for("VADDPX")


# immediate-width variants of the same layout (83 /0 ib next to 81 /0 id, 6B next to 69, D1 /4 next to C1 /4 ib)
ALT_OPCODES = {**{op: {0x83} for op in ("ADDi", "SUBi", "ANDi", "ORi", "XORi", "CMPi")}, "IMULi": {0x6B},
               **{op: {0xD0, 0xD1} for op in ("SHLi", "SHRi", "SARi")}}


def _reference_encodings(source: str) -> dict[str, dict]:
    block = source.split("encodings = {")[1].split("\nclass X86Renderer")[0]
    out = {}
    for m in re.finditer(r"X86Ops\.(\w+): lambda x: encode\(x, (0x[0-9A-Fa-f]+)([^)]*)\)", block):
        kw = {k: v.strip() for k, v in re.findall(r"(\w+)=([^,]+)", m.group(3))}
        out[m.group(1)] = {"opc": int(m.group(2), 16), **{k: (int(v) if v.isdigit() else None) for k, v in kw.items()}}
    for m in re.finditer(r"X86Ops\.(\w+): lambda x: bytes\(\[([0-9xA-Fa-f, ]+)\]\)", block):
        out[m.group(1)] = {"bytes": bytes(int(b, 16) for b in m.group(2).split(","))}
    return out


@pytest.mark.parametrize("version", ["earlier change", "tinygrad 0.14.0"])
def test_name_table_matches_reference_opcodes(version):
    """Every form of a name has tinygrad's opcode (or its 8-bit neighbour, or an immediate-width variant), opcode map,
    mandatory prefix, ModRM digit and VEX.W, and one form has exactly tinygrad's encoding; against the earlier change's
    `encodings` and against the installed tinygrad 0.14.0's (a clone has the latter)."""
    if version == "earlier change":
        if SOURCE is None: pytest.skip(f"the earlier change's encodings: needs shared/reference/{REFERENCE_FILE} beside the "
                                       "repository or $X86GEN_REFERENCE")
        enc = _reference_encodings(SOURCE)
        assert len(enc) > 150
        unencoded = set(TINYGRAD_X86OPS) - set(enc) - {"MOVABS"}
        assert unencoded == {"SHL", "SHR", "SAR"}, unencoded   # tinygrad has no encoding for its variable shifts (see DIFFERENCES)
    else:
        if INSTALLED is None: pytest.skip(NO_INSTALLED)
        enc = _reference_encodings(INSTALLED)
        # every 0.14.0 op but MOVABS (its entry is not an encode() call; its one form is checked by the name table) is parsed
        assert set(enc) == set(TINYGRAD_0140_X86OPS) - {"MOVABS"}, sorted(set(enc) ^ (set(TINYGRAD_0140_X86OPS) - {"MOVABS"}))
    for op, e in enc.items():
        forms = [F.get_form(fid) for fid in TINYGRAD_X86OPS[op]]
        if "bytes" in e:   # jumps (rel32, placeholder displacement) and ret
            f = next(f for f in forms if f.id.endswith("REL32_64") or f.id == "RETNQ")
            data = f(f.length) if f.operands else f()   # jump to the next instruction: tinygrad's placeholder displacement 0
            assert data == e["bytes"] + (bytes(4) if f.operands else b""), op
            continue
        opc, sel, pp, digit, we = e["opc"], e.get("sel", 0), e.get("pp", 0), e.get("reg"), e.get("we", 0)
        mp, opc = (1, opc & 0xFF) if opc > 0xFF else (sel, opc)
        exact = 0
        for f in forms:
            assert (f.opcode_map, f.mandatory_prefix) == (mp, pp), (op, f.id)
            if digit is not None: assert f.modrm == str(digit), (op, f.id)
            if sel and we is not None: assert (f.w or 0) == we, (op, f.id)
            ok = {opc} | ({opc - 1} if not sel else set()) | ALT_OPCODES.get(op, set())
            assert f.opcode in ok, (op, f.id, hex(f.opcode))
            exact += f.opcode == opc
        assert exact, op


# ---- the groups -------------------------------------------------------------------------------------
def test_reference_memberships():
    """All nine of tinygrad's sets, op by op; the differences are exactly DIFFERENCES."""
    found = {}
    for g in NINE:
        ours = getattr(X86GroupOp, g)
        for op in TINYGRAD_X86OPS:
            if (op in ours) != (op in REFERENCE_SETS[g]): found[(g, op)] = "x86gen has it" if op in ours else "tinygrad has it"
    unexplained = sorted(k for k in found if k not in DIFFERENCES)
    stale = sorted(k for k in DIFFERENCES if k not in found)
    assert not unexplained, f"memberships that differ from tinygrad without a reason: {[(k, found[k]) for k in unexplained]}"
    assert not stale, f"DIFFERENCES entries that are no longer differences: {stale}"


def test_commutative():
    assert set(X86GroupOp.Commutative) == COMMUTATIVE_OPS
    for fid in ("ADD_R32_RM32", "VEX_VADDPS_YMM_YMM_YMMM256", "VEX_VFMADD213PS_XMM_XMM_XMMM128", "MUL_RM32", "TEST_RM32_R32"):
        assert fid in groups.Commutative, fid
    for fid in ("SUB_R32_RM32", "ADD_RM32_IMM32", "VEX_VMAXPS_XMM_XMM_XMMM128", "VEX_VFMADD231PS_XMM_XMM_XMMM128",
                "VEX_VCMPPS_XMM_XMM_XMMM128_IMM8", "IMUL_R32_RM32_IMM8"):
        assert fid not in groups.Commutative, fid


@pytest.mark.parametrize("fid, expected", [
    ("ADD_R32_RM32", {"TwoAddress", "ReadMem2nd", "WriteFlags", "Rm1st", "Commutative"}),
    ("ADD_RM32_IMM8", {"TwoAddress", "WriteMem", "WriteFlags"}),
    ("ADC_R32_RM32", {"TwoAddress", "ReadMem2nd", "ReadFlags", "WriteFlags", "Rm1st", "Commutative"}),
    ("CMP_R32_RM32", {"ReadMem2nd", "WriteFlags", "Rm2nd"}),
    ("CMP_RM32_IMM32", {"ReadMem1st", "WriteFlags", "Rm1st"}),
    ("MOV_R32_RM32", {"ReadMem1st", "Rm1st"}),
    ("MOV_RM32_R32", {"WriteMem"}),
    ("LEA_R64_M", {"Rm1st"}),
    ("SHL_RM32_CL", {"TwoAddress", "WriteMem", "WriteFlags"}),
    ("IDIV_RM32", {"TwoAddress", "ReadMem2nd", "WriteFlags", "Rm1st"}),
    ("CMOVL_R32_RM32", {"TwoAddress", "ReadMem2nd", "ReadFlags", "Rm1st"}),
    ("SETL_RM8", {"WriteMem", "ReadFlags"}),
    ("JL_REL32_64", {"ReadFlags"}),
    ("VEX_VADDPS_XMM_XMM_XMMM128", {"ReadMem2nd", "Rm2nd", "Commutative"}),
    ("VEX_VFMADD213SS_XMM_XMM_XMMM32", {"TwoAddress", "ReadMem3rd", "Rm2nd", "Commutative"}),
    ("VEX_VPSRLDQ_XMM_XMM_IMM8", {"Rm1st"}),
    ("VEX_VPEXTRD_RM32_XMM_IMM8", {"WriteMem"}),
    ("VEX_VUCOMISS_XMM_XMMM32", {"ReadMem2nd", "WriteFlags", "Rm2nd"}),
    ("VEX_VBLENDVPS_XMM_XMM_XMMM128_XMM", {"ReadMem2nd", "Rm2nd"}),
    ("PUSH_R64", set()),
])
def test_form_groups(fid, expected):
    assert set(groups.groups_of(fid)) == expected


def test_sources_and_registers():
    assert groups.sources("ADD_R32_RM32") == ("0", "1") and groups.destination("ADD_R32_RM32") == "0"
    assert groups.sources("IDIV_RM32") == ("eax", "0", "edx") and groups.destination("IDIV_RM32") == "eax"
    assert groups.sources("VEX_VADDPS_XMM_XMM_XMMM128") == ("1", "2")
    assert groups.sources("LEA_R64_M") == ("1",)
    assert groups.sources("CDQ") == ("eax",) and groups.destination("CDQ") == "edx"
    assert groups.destination("PUSH_R64") is None   # rsp is a side effect, not a destination
    assert groups.implicit("DIV_RM64") == (("rw", "rax"), ("rw", "rdx"))
    assert groups.implicit("ADD_R32_RM32") == ()
    assert groups.fixed("SHL_RM32_CL") == ((1, "r", "cl"),)
    assert groups.cpuid("ADD_R32_RM32") == "INTEL386" and groups.cpuid("VEX_VPADDD_YMM_YMM_YMMM256") == "AVX2"
    assert groups.OP_CPUID["VPADDD"] == ("AVX", "AVX2") and groups.OP_CPUID["ADD"] == ("INTEL386", "INTEL8086", "X64")
    assert groups.OP_IMPLICIT["IDIV"] == (("rw", "ax"), ("rw", "dx"), ("rw", "eax"), ("rw", "edx"), ("rw", "rax"), ("rw", "rdx"))
    with pytest.raises(Exception, match="no form"): groups.cpuid("NOPE")


def test_group_objects():
    # aadd/aand [mem], r (RAO-INT): the memory destination is read and written, so they are TwoAddress
    assert sorted(map(str, groups.TwoAddress))[:3] == ["AADD_M32_R32", "AADD_M64_R64", "AAND_M32_R32"]
    for name in groups.NAMES:
        g, og = getattr(groups, name), getattr(X86GroupOp, name)
        assert isinstance(g, frozenset) and g <= groups.All and og <= X86GroupOp.All
        assert g.name == name and name in g.__doc__ and len(g.__doc__) > 60
        assert og == {op for op, ids in TINYGRAD_X86OPS.items() if any(f in g for f in ids)}
    assert len(groups.All) == len(F.all_forms()) and set(X86GroupOp.All) == set(TINYGRAD_X86OPS)
    # forms with a tied destination and two more sources, the last of which may be memory: all FMA 132/213/231
    # forms, FMA4, vpdpbusd (AVX-VNNI), the 8 EVEX vfmadd231ps/pd/ss/sd, ... (12 before the rest of FMA and the VNNI families
    # were in the spec)
    # (the count grows with the table: it was 175 with the first 142 EVEX forms)
    assert repr(groups.ReadMem3rd) == f"<Group ReadMem3rd: {len(groups.ReadMem3rd)} members>" and len(groups.ReadMem3rd) >= 175
    assert "EVEX_VFMADD231PS_ZMM_K1Z_ZMM_ZMMM512B32_ER" in groups.ReadMem3rd
    assert "VEX_VFMADD132PS_YMM_YMM_YMMM256" in groups.ReadMem3rd and "VEX_VADDPS_YMM_YMM_YMMM256" not in groups.ReadMem3rd


def test_groups_follow_roles():
    """Spot checks of the definitions on every form (the roles themselves are checked against iced)."""
    for f in F.all_forms():
        gs = set(groups.groups_of(f.id))
        srcs = groups.sources(f.id)
        if "TwoAddress" in gs: assert srcs and srcs[0] == groups.destination(f.id)
        for k, g in enumerate(("ReadMem1st", "ReadMem2nd", "ReadMem3rd")):
            if g in gs:
                o = f.operands[int(srcs[k])]
                assert o.mem is not None and o.role == "r", (f.id, g)
        if "WriteMem" in gs: assert any(o.mem is not None and o.role in ("w", "rw", "cw", "rcw") for o in f.operands), f.id
        assert ("ReadFlags" in gs) == bool(f.flags_read), f.id
        assert ("WriteFlags" in gs) == bool(f.flags_modified), f.id


def test_not_imported_by_x86gen():
    import subprocess
    import sys
    code = "import sys, x86gen; print(sorted(m for m in ('x86gen.groups', 'x86gen.isel', 'x86gen.reference') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}).stdout
    assert out.strip() == "[]"


def test_compact_table_decodes():
    """_gen/groups.py stores one line per form (a group bitmask and indices into tables of distinct values); decoded, it
    agrees with the form table (x86gen.forms, generated separately) and groups_of agrees with the Group sets."""
    forms = F.all_forms()
    assert list(groups.SOURCES) == list(groups.DEST) == list(groups.CPUID) == [f.id for f in forms]
    assert groups.CPUID == {f.id: f.cpuid for f in forms}
    assert groups.IMPLICIT == {f.id: f.implicit for f in forms if f.implicit}
    assert groups.FIXED == {f.id: tuple((i, o.role, o.reg) for i, o in enumerate(f.operands) if o.loc == "fixed")
                            for f in forms if any(o.loc == "fixed" for o in f.operands)}
    for f in forms:
        assert groups.groups_of(f.id) == tuple(n for n in groups.NAMES if f.id in getattr(groups, n)), f.id
    assert sum(map(len, (getattr(groups, n) for n in groups.NAMES))) > len(forms)
    with pytest.raises(AttributeError): groups.NOPE  # noqa: B018
