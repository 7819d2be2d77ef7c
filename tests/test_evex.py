"""The first EVEX (AVX-512) slice: registers 16-31 and zmm, the EVEX prefix, compressed displacement
disp8*N, VEX preferred over EVEX, and the legacy/VEX forms refusing registers only EVEX encodes.

Expected bytes come from llvm-mc 14 (``llvm-mc-14 -triple=x86_64 -x86-asm-syntax=intel -show-encoding``;
GNU as 2.40 gives the same bytes for every line of `DISP8N`). The per-form fuzz against iced-x86 is in
tests/test_fuzz_iced.py (it draws xmm/ymm/zmm 0-31 for EVEX forms, no masking or broadcast yet).
"""
from __future__ import annotations

import pytest

import x86gen
from x86gen import EvexOnlyRegisterError, OperandError

R = x86gen.REGISTERS

# Compressed displacement (SDM Vol.2 2.7.5): for each tuple type used so far, N·(-128), N·127, N·128 (disp32)
# and a displacement that is not a multiple of N (disp32), plus a few base-register corners.
# FV without broadcast: N = vector length (vaddps zmm: 64, vaddpd ymm: 32, vpaddd xmm: 16);
# FVM: N = vector length (vmovups zmm: 64, vmovdqu64 ymm: 32, vmovups xmm: 16); T1S: N = the scalar's size.
DISP8N = [
    ("vaddps zmm1, zmm2, zmmword ptr [rax-8192]", "62 f1 6c 48 58 48 80"),            # FV N=64: -128*64
    ("vaddps zmm1, zmm2, zmmword ptr [rax+8128]", "62 f1 6c 48 58 48 7f"),            # 127*64
    ("vaddps zmm1, zmm2, zmmword ptr [rax+8192]", "62 f1 6c 48 58 88 00 20 00 00"),   # 128*64: disp32
    ("vaddps zmm1, zmm2, zmmword ptr [rax+65]", "62 f1 6c 48 58 88 41 00 00 00"),     # not a multiple: disp32
    ("vaddps zmm1, zmm2, zmmword ptr [rax+64]", "62 f1 6c 48 58 48 01"),
    ("vaddps zmm1, zmm2, zmmword ptr [rax-8256]", "62 f1 6c 48 58 88 c0 df ff ff"),   # -129*64: disp32
    ("vaddpd ymm17, ymm2, ymmword ptr [rax-4096]", "62 e1 ed 28 58 48 80"),           # FV N=32
    ("vaddpd ymm17, ymm2, ymmword ptr [rax+4064]", "62 e1 ed 28 58 48 7f"),
    ("vaddpd ymm17, ymm2, ymmword ptr [rax+4096]", "62 e1 ed 28 58 88 00 10 00 00"),
    ("vaddpd ymm17, ymm2, ymmword ptr [rax+16]", "62 e1 ed 28 58 88 10 00 00 00"),
    ("vpaddd xmm17, xmm2, xmmword ptr [rax-2048]", "62 e1 6d 08 fe 48 80"),           # FV N=16
    ("vpaddd xmm17, xmm2, xmmword ptr [rax+2032]", "62 e1 6d 08 fe 48 7f"),
    ("vpaddd xmm17, xmm2, xmmword ptr [rax+2048]", "62 e1 6d 08 fe 88 00 08 00 00"),
    ("vpaddd xmm17, xmm2, xmmword ptr [rax+8]", "62 e1 6d 08 fe 88 08 00 00 00"),
    ("vmovups zmm1, zmmword ptr [rax-8192]", "62 f1 7c 48 10 48 80"),                 # FVM N=64
    ("vmovups zmm1, zmmword ptr [rax+8128]", "62 f1 7c 48 10 48 7f"),
    ("vmovups zmm1, zmmword ptr [rax+8192]", "62 f1 7c 48 10 88 00 20 00 00"),
    ("vmovups zmm1, zmmword ptr [rax+100]", "62 f1 7c 48 10 88 64 00 00 00"),
    ("vmovdqu64 ymmword ptr [r13+r12*2-4096], ymm30", "62 01 fe 28 7f 74 65 80"),     # FVM N=32, SIB
    ("vmovdqu64 ymmword ptr [r13+r12*2+4064], ymm30", "62 01 fe 28 7f 74 65 7f"),
    ("vmovdqu64 ymmword ptr [r13+r12*2+4096], ymm30", "62 01 fe 28 7f b4 65 00 10 00 00"),
    ("vmovdqu64 ymmword ptr [r13+r12*2-1], ymm30", "62 01 fe 28 7f b4 65 ff ff ff ff"),
    ("vmovups xmm16, xmmword ptr [rsp-2048]", "62 e1 7c 08 10 44 24 80"),              # FVM N=16, rsp base (SIB)
    ("vmovups xmm16, xmmword ptr [rsp+2032]", "62 e1 7c 08 10 44 24 7f"),
    ("vmovups xmm16, xmmword ptr [rsp+2048]", "62 e1 7c 08 10 84 24 00 08 00 00"),
    ("vmovups xmm16, xmmword ptr [rsp+127]", "62 e1 7c 08 10 84 24 7f 00 00 00"),     # a plain disp8 is not one here
    ("vmovups xmm16, xmmword ptr [rbp]", "62 e1 7c 08 10 45 00"),                      # rbp: explicit disp8 0
    ("vmovups xmm16, xmmword ptr [rip+64]", "62 e1 7c 08 10 05 40 00 00 00"),          # RIP-relative: always disp32
    ("vaddss xmm17, xmm2, dword ptr [rax-512]", "62 e1 6e 08 58 48 80"),               # T1S m32: N=4
    ("vaddss xmm17, xmm2, dword ptr [rax+508]", "62 e1 6e 08 58 48 7f"),
    ("vaddss xmm17, xmm2, dword ptr [rax+512]", "62 e1 6e 08 58 88 00 02 00 00"),
    ("vaddss xmm17, xmm2, dword ptr [rax+2]", "62 e1 6e 08 58 88 02 00 00 00"),
    ("vfmadd231sd xmm20, xmm2, qword ptr [rcx+rdx*8-1024]", "62 e2 ed 08 b9 64 d1 80"),   # T1S m64: N=8
    ("vfmadd231sd xmm20, xmm2, qword ptr [rcx+rdx*8+1016]", "62 e2 ed 08 b9 64 d1 7f"),
    ("vfmadd231sd xmm20, xmm2, qword ptr [rcx+rdx*8+1024]", "62 e2 ed 08 b9 a4 d1 00 04 00 00"),
    ("vfmadd231sd xmm20, xmm2, qword ptr [rcx+rdx*8+4]", "62 e2 ed 08 b9 a4 d1 04 00 00 00"),
]


@pytest.mark.parametrize("text, expected", DISP8N)
def test_disp8n_table(text, expected):
    """Each tuple type in use at N*-128, N*127, N*128 and a non-multiple, as llvm-mc and GNU as encode it."""
    assert x86gen.assemble(text).hex(" ") == expected


@pytest.mark.parametrize("text, expected", [
    ("vaddps ymm1, ymm2, ymm3", "c5 ec 58 cb"),                      # every operand allows VEX: VEX
    ("vmovups xmm1, xmmword ptr [rax-2048]", "c5 f8 10 88 00 f8 ff ff"),   # disp8*N would be shorter: still VEX
    ("vaddps ymm1, ymm2, ymm19", "62 b1 6c 28 58 cb"),               # ymm19 needs EVEX
    ("vaddps zmm1, zmm2, zmm3", "62 f1 6c 48 58 cb"),
    ("vfmadd231ps zmm31, zmm16, zmmword ptr [r15+rcx*8+0x40]", "62 42 7d 40 b8 7c cf 01"),
    ("vpxord xmm1, xmm2, xmm3", "62 f1 6d 08 ef cb"),                # EVEX-only mnemonic with xmm0-15
    ("vmovdqu32 zmm5, zmm24", "62 91 7e 48 6f e8"),
])
def test_vex_preferred_evex_when_needed(text, expected):
    """VEX when every operand allows it (as GNU as and llvm-mc choose), EVEX for zmm and registers 16-31."""
    assert x86gen.assemble(text).hex(" ") == expected


@pytest.mark.parametrize("text, expected", [
    ("vpcmpltub k1, xmm2, xmm3", "62 f3 6d 08 3e cb 01"),                          # GNU as 2.40
    ("vpcmpnequw k2, zmm20, zmmword ptr [rax+64]", "62 f3 dd 40 3e 50 01 04"),     # GNU as 2.40 (disp8*64)
    ("vpcmpnleb k3, ymm1, ymm2", "62 f3 75 28 3f da 06"),                          # GNU as 2.40
    ("vpcmpequb k1, xmm2, xmm3", "62 f3 6d 08 3e cb 00"),                          # GNU as 2.40
    ("vpcmptrueuw k1, xmm2, xmm3", "62 f3 ed 08 3e cb 07"),                        # iced-x86 prints it (GNU as: no)
    ("{evex} vpclmulhqlqdq xmm3, xmm10, xmmword ptr [rax]", "62 f3 2d 08 44 18 01"),  # GNU as 2.40; objdump prints it
])
def test_vpcmp_predicate_pseudo_ops(text, expected):
    """`vpcmpltub k, x, y` is `vpcmpub k, x, y, 1` (SDM Vol.2 VPCMPB/VPCMPUB pseudo-ops), as iced-x86 prints it."""
    assert x86gen.assemble(text).hex(" ") == expected


def test_encode_picks_vex_for_low_registers():
    assert x86gen.encode("vaddps", R["ymm1"], R["ymm2"], R["ymm3"]) == bytes.fromhex("c5ec58cb")
    assert x86gen.select("vaddps", R["ymm1"], R["ymm2"], R["ymm3"]).id == "VEX_VADDPS_YMM_YMM_YMMM256"
    assert x86gen.select("vaddps", R["ymm1"], R["ymm2"], R["ymm19"]).id == "EVEX_VADDPS_YMM_K1Z_YMM_YMMM256B32"


def _vector_slots():
    """(form, operand index, register class) of every legacy/VEX form's xmm/ymm register operand."""
    for f in x86gen.all_forms():
        if f.encoding_kind == "evex": continue
        for i, o in enumerate(f.operands):
            if o.reg in ("xmm", "ymm") and o.loc != "fixed": yield f, i, o.reg


def _default_operands(f):
    ops = []
    for o in f.operands:
        if o.loc == "fixed": ops.append(R[o.reg])
        elif o.kind == "1" or o.imm is not None: ops.append(1)
        elif o.reg is not None: ops.append(next(r for r in R.values() if r.kind == o.reg and r.num == 1))
        else: ops.append(x86gen.Mem(R["rax"], None, 1, 0, o.mem or 0))
    return ops


def test_legacy_and_vex_forms_refuse_registers_16_31():
    """Their fields hold 4 bits of a register number (REX.R/X/B, VEX R̄/X̄/B̄/vvvv): bit 4 would be dropped, so
    xmm16-31/ymm16-31 raise EvexOnlyRegisterError naming the operand, in every position of every such form."""
    slots = list(_vector_slots())
    assert len(slots) > 1000
    for f, i, cls in slots:
        if f.is_branch: continue
        ops = _default_operands(f)
        ops[i] = R[f"{cls}{17 + i}"]
        with pytest.raises(EvexOnlyRegisterError, match=f"operand {i + 1} is {cls}{17 + i}, which only EVEX encodes"):
            f(*ops)


def test_encode_without_evex_form_refuses_registers_16_31():
    with pytest.raises(EvexOnlyRegisterError, match="xmm20 only EVEX encodes"):
        x86gen.encode("vaddsubps", R["xmm1"], R["xmm2"], R["xmm20"])
    with pytest.raises(EvexOnlyRegisterError):
        x86gen.assemble("addps xmm16, xmm1")


def test_registers_16_31_and_zmm():
    for n in range(32):
        z, x, y = R[f"zmm{n}"], R[f"xmm{n}"], R[f"ymm{n}"]
        assert (z.kind, z.size, x.kind, y.kind) == ("zmm", 512, "xmm", "ymm") and z.num == x.num == y.num == n
        assert x.hi16 == (n >= 16) and x86gen.vec(n, 512) is z and x.sized(512) is z and z.sized(256) is y
        # the inverted EVEX bits: R̄/R̄' (P0 0x80/0x10), B̄/X̄ for a register rm (P0 0x20/0x40), V̄' (P2 0x08)
        assert z.evr == (0 if n & 8 else 0x80) | (0 if n & 16 else 0x10)
        assert z.evxb == (0 if n & 8 else 0x20) | (0 if n & 16 else 0x40)
        assert z.evv == (0 if n & 16 else 0x08)
    with pytest.raises(OperandError):
        x86gen.vec(32, 512)


@pytest.mark.parametrize("text, expected", [
    # objdump prints EVEX encodings that VEX could encode with the pseudo-prefix; GNU as and llvm-mc read it
    ("{evex} vaddps xmm1, xmm2, xmm3", "62 f1 6c 08 58 cb"),
    ("{evex} vaddps ymm1,ymm2,YMMWORD PTR [rax+0x40]", "62 f1 6c 28 58 48 02"),
    ("{EVEX} vmovups XMMWORD PTR [rip+0x12345678],xmm3", "62 f1 7c 08 11 1d 78 56 34 12"),
    ("nop\n{evex} vpaddq xmm1, xmm2, xmm3", "90 62 f1 ed 08 d4 cb"),     # the program parser too
])
def test_evex_pseudo_prefix_forces_evex(text, expected):
    assert x86gen.assemble(text).hex(" ") == expected


@pytest.mark.parametrize("text", ["{evex} vaddsubps xmm1, xmm2, xmm3", "nop\n{evex} vaddsubps xmm1, xmm2, xmm3",
                                  "{evex} {evex} vaddps xmm1, xmm2, xmm3", "{evex}"])
def test_evex_pseudo_prefix_without_evex_form_is_an_error(text):
    with pytest.raises(x86gen.EncodeError):
        x86gen.assemble(text)


def test_assembler_methods_take_evex_operands():
    """The generated Assembler methods choose as `encode` does (bytes from llvm-mc 14)."""
    a = x86gen.Assembler()
    a.vpxord(R["zmm1"], R["zmm2"], R["zmm3"])
    a.vaddps(R["ymm1"], R["ymm2"], R["ymm19"])
    a.vaddps(R["ymm1"], R["ymm2"], R["ymm3"])
    a.vmovups(R["zmm0"], x86gen.zmmword(R["rdi"], None, 1, 128))
    assert a.assemble().hex(" ") == "62 f1 6d 48 ef cb 62 b1 6c 28 58 cb c5 ec 58 cb 62 f1 7c 48 10 47 02"


@pytest.mark.parametrize("line, message", [
    ("W:zmm, zmm, zmm/m512 | EVEX.512.0F.W0 58 /r", "needs tuple="),
    ("W:zmm, zmm, zmm/m512 | EVEX.512.0F.W0 58 /r | tuple=T3", "supported tuple types are DUP, FV, FVM, HV"),
    ("W:zmm, zmm, zmm/m512 | EVEX.512.0F.W0 58 /r | tuple=HV", "the memory operand is m512, the tuple type says m256"),
    ("W:zmm, zmm, xmm/m128 | EVEX.512.0F.W1 58 /r | tuple=T4", "the memory operand is m128, the tuple type says m256"),
    ("W:zmm, zmm, ymm/m256 | EVEX.512.0F.W1 58 /r | tuple=T8", "tuple=T8 has 32-bit elements"),
    ("W:zmm, zmm, xmm/m64 | EVEX.512.0F.W0 58 /r | tuple=M128", "the memory operand is m64, the tuple type says m128"),
    ("W:zmm, zmm, xmm/m64 | EVEX.LIG.0F.W0 58 /r | tuple=QVM", "tuple=QVM needs EVEX.128/256/512"),
    ("W:ymm, ymm, zmm/m512 | EVEX.256.0F.W0 58 /r | tuple=FV", "the memory operand is m512, the tuple type says m256"),
    ("W:xmm, xmm, xmm/m128 | VEX.128.0F.WIG 58 /r | tuple=FV", "only apply to EVEX forms"),
    ("W:xmm, xmm, xmm/m32 | EVEX.LIG.F3.0F.W0 58 /r | tuple=T1S bcst=32", "bcst= needs tuple=FV, HV or QV"),
])
def test_spec_checks_evex_attributes(tmp_path, line, message):
    """The loader refuses EVEX attributes it cannot turn into a disp8*N scale (codegen/spec.py evex_fields)."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from codegen.spec import SpecError, load
    p = tmp_path / "x.yaml"
    p.write_text(f"vaddps:\n  cpuid: AVX512F\n  forms:\n  - {line}\n")
    with pytest.raises(SpecError, match=message):
        load(str(p))


def test_spec_disp8_n_of_each_tuple_type():
    n = {f.id: f.disp8_n for f in x86gen.all_forms()}
    assert n["EVEX_VADDPS_ZMM_K1Z_ZMM_ZMMM512B32_ER"] == 64 and n["EVEX_VADDPD_YMM_K1Z_YMM_YMMM256B64"] == 32
    assert n["EVEX_VMOVUPS_XMM_K1Z_XMMM128"] == 16 and n["EVEX_VADDSS_XMM_K1Z_XMM_XMMM32_ER"] == 4
    assert n["EVEX_VADDSD_XMM_K1Z_XMM_XMMM64_ER"] == 8 and n["VEX_VADDPS_YMM_YMM_YMMM256"] == 0


# disp8*N of every tuple type as SDM Vol.2 Tables 2-34 (with broadcast: EVEX.b = 1) and 2-35 give it:
# (spec line, N without broadcast, N with broadcast or 0).
TUPLE_N = [
    ("W:zmm, zmm, zmm/m512 | EVEX.512.0F.W0 58 /r | tuple=FV bcst=32", 64, 4),
    ("W:ymm, ymm, ymm/m256 | EVEX.256.66.0F.W1 58 /r | tuple=FV bcst=64", 32, 8),
    ("W:xmm, xmm, xmm/m128 | EVEX.128.0F.W0 58 /r | tuple=FV bcst=16", 16, 2),
    ("W:zmm, ymm/m256 | EVEX.512.0F.W0 5A /r | tuple=HV bcst=32", 32, 4),
    ("W:xmm, xmm/m64 | EVEX.128.0F.W0 5A /r | tuple=HV bcst=32", 8, 4),
    ("W:zmm, xmm/m128 | EVEX.512.0F.W0 5A /r | tuple=QV bcst=16", 16, 2),
    ("W:xmm, xmm/m32 | EVEX.128.0F.W0 5A /r | tuple=QV bcst=16", 4, 2),
    ("W:zmm, zmm/m512 | EVEX.512.0F.W0 10 /r | tuple=FVM", 64, 0),
    ("W:zmm, ymm/m256 | EVEX.512.0F38.WIG 30 /r | tuple=HVM", 32, 0),
    ("W:ymm, xmm/m64 | EVEX.256.0F38.WIG 31 /r | tuple=QVM", 8, 0),
    ("W:xmm, xmm/m16 | EVEX.128.0F38.WIG 32 /r | tuple=OVM", 2, 0),
    ("W:zmm, xmm/m64 | EVEX.512.0F38.WIG 32 /r | tuple=OVM", 8, 0),
    ("W:xmm, xmm, r/m8, imm8 | EVEX.128.66.0F3A.WIG 20 /r ib | tuple=T1S", 1, 0),
    ("W:xmm, xmm, xmm/m16 | EVEX.LIG.F3.0F.W0 58 /r | tuple=T1S", 2, 0),
    ("W:xmm, xmm, xmm/m32 | EVEX.LIG.F3.0F.W0 58 /r | tuple=T1S", 4, 0),
    ("W:xmm, xmm, xmm/m64 | EVEX.LIG.F2.0F.W1 58 /r | tuple=T1S", 8, 0),
    ("W:zmm/m512, zmm | EVEX.512.66.0F38.W1 8A /r | tuple=T1S64", 8, 0),   # vcompresspd: one element of a vector
    ("W:xmm, xmm/m128 | EVEX.128.66.0F38.W0 88 /r | tuple=T1S32", 4, 0),
    ("W:r32, xmm/m32 | EVEX.LIG.F3.0F.W0 2D /r | tuple=T1F", 4, 0),
    ("W:r64, xmm/m64 | EVEX.LIG.F2.0F.W1 2D /r | tuple=T1F", 8, 0),
    ("W:ymm, xmm/m64 | EVEX.256.66.0F38.W0 19 /r | tuple=T2", 8, 0),
    ("W:zmm, xmm/m128 | EVEX.512.66.0F38.W1 1A /r | tuple=T2", 16, 0),
    ("W:zmm, xmm/m128 | EVEX.512.66.0F38.W0 1A /r | tuple=T4", 16, 0),
    ("W:zmm, ymm/m256 | EVEX.512.66.0F38.W1 1B /r | tuple=T4", 32, 0),
    ("W:zmm, ymm/m256 | EVEX.512.66.0F38.W0 1B /r | tuple=T8", 32, 0),
    ("W:zmm, zmm, xmm/m128 | EVEX.512.66.0F.W0 F2 /r | tuple=M128", 16, 0),
    ("W:ymm, ymm, xmm/m128 | EVEX.256.66.0F.W0 F2 /r | tuple=M128", 16, 0),
    ("W:xmm, xmm/m64 | EVEX.128.F2.0F.W1 12 /r | tuple=DUP", 8, 0),
    ("W:ymm, ymm/m256 | EVEX.256.F2.0F.W1 12 /r | tuple=DUP", 32, 0),
    ("W:zmm, zmm/m512 | EVEX.512.F2.0F.W1 12 /r | tuple=DUP", 64, 0),
    ("W:zmm, zmm, m128 | EVEX.512.F2.0F38.W0 9A /r | tuple=T1_4X", 16, 0),
]


@pytest.mark.parametrize("line, n, n_bcst", TUPLE_N)
def test_spec_disp8_n_by_tuple_type(tmp_path, line, n, n_bcst):
    """codegen/spec.py's N (``disp8_n``) and N with broadcast (``disp8_n_bcst``) for each tuple type, its vector
    lengths and element sizes, against the SDM's tables."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from codegen.spec import load
    p = tmp_path / "x.yaml"
    p.write_text(f"vfoo:\n  cpuid: AVX512F\n  forms:\n  - {line} id=X\n")
    (f,) = load(str(p))
    assert (f.disp8_n, f.disp8_n_bcst) == (n, n_bcst)
