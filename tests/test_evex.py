"""The first EVEX (AVX-512) slice: registers 16-31 and zmm, the EVEX prefix, compressed displacement
disp8*N, VEX preferred over EVEX, and the legacy/VEX forms refusing registers only EVEX encodes.

Expected bytes come from llvm-mc 14 (``llvm-mc-14 -triple=x86_64 -x86-asm-syntax=intel -show-encoding``;
GNU as 2.40 gives the same bytes for every line of `DISP8N`). The per-form fuzz against iced-x86 is in
tests/test_fuzz_iced.py (it draws xmm/ymm/zmm 0-31 for EVEX forms, and masks, zeroing, broadcast and rounding).
"""
from __future__ import annotations

import pytest

import x86gen
from x86gen import EvexOnlyRegisterError, OperandError

R = x86gen.REGISTERS

# Compressed displacement (SDM Vol.2 2.7.5): for each tuple type of the spec's forms, N·(-128), N·127, N·128 (disp32)
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
("vcvtps2pd zmm1, ymmword ptr [rax-4096]", "62 f1 7c 48 5a 48 80"),   # HV N=32 (bcst N=4)
    ("vcvtps2pd zmm1, ymmword ptr [rax+4064]", "62 f1 7c 48 5a 48 7f"),
    ("vcvtps2pd zmm1, ymmword ptr [rax+4096]", "62 f1 7c 48 5a 88 00 10 00 00"),
    ("vcvtps2pd zmm1, ymmword ptr [rax+20]", "62 f1 7c 48 5a 88 14 00 00 00"),
    ("vpmovzxwd zmm1, ymmword ptr [rcx-4096]", "62 f2 7d 48 33 49 80"),   # HVM N=32
    ("vpmovzxwd zmm1, ymmword ptr [rcx+4064]", "62 f2 7d 48 33 49 7f"),
    ("vpmovzxwd zmm1, ymmword ptr [rcx+4096]", "62 f2 7d 48 33 89 00 10 00 00"),
    ("vpmovzxwd zmm1, ymmword ptr [rcx+48]", "62 f2 7d 48 33 89 30 00 00 00"),
    ("vpmovzxbd zmm1, xmmword ptr [rcx-2048]", "62 f2 7d 48 31 49 80"),   # QVM N=16
    ("vpmovzxbd zmm1, xmmword ptr [rcx+2032]", "62 f2 7d 48 31 49 7f"),
    ("vpmovzxbd zmm1, xmmword ptr [rcx+2048]", "62 f2 7d 48 31 89 00 08 00 00"),
    ("vpmovzxbd zmm1, xmmword ptr [rcx+8]", "62 f2 7d 48 31 89 08 00 00 00"),
    ("vpmovzxbq zmm1, qword ptr [rcx-1024]", "62 f2 7d 48 32 49 80"),   # OVM N=8
    ("vpmovzxbq zmm1, qword ptr [rcx+1016]", "62 f2 7d 48 32 49 7f"),
    ("vpmovzxbq zmm1, qword ptr [rcx+1024]", "62 f2 7d 48 32 89 00 04 00 00"),
    ("vpmovzxbq zmm1, qword ptr [rcx+12]", "62 f2 7d 48 32 89 0c 00 00 00"),
    ("vcvtss2si eax, dword ptr [rbx-512]", "c5 fa 2d 83 00 fe ff ff"),   # T1F m32: N=4
    ("vcvtss2si eax, dword ptr [rbx+508]", "c5 fa 2d 83 fc 01 00 00"),
    ("vcvtss2si eax, dword ptr [rbx+512]", "c5 fa 2d 83 00 02 00 00"),
    ("vcvtss2si eax, dword ptr [rbx+6]", "c5 fa 2d 43 06"),
    ("vcvtsd2si r9, qword ptr [rbx-1024]", "c4 61 fb 2d 8b 00 fc ff ff"),   # T1F m64: N=8
    ("vcvtsd2si r9, qword ptr [rbx+1016]", "c4 61 fb 2d 8b f8 03 00 00"),
    ("vcvtsd2si r9, qword ptr [rbx+1024]", "c4 61 fb 2d 8b 00 04 00 00"),
    ("vcvtsd2si r9, qword ptr [rbx+12]", "c4 61 fb 2d 4b 0c"),
    ("vmovlps xmm17, xmm2, qword ptr [rsi-1024]", "62 e1 6c 08 12 4e 80"),   # T2 (2 x 32 bits): N=8
    ("vmovlps xmm17, xmm2, qword ptr [rsi+1016]", "62 e1 6c 08 12 4e 7f"),
    ("vmovlps xmm17, xmm2, qword ptr [rsi+1024]", "62 e1 6c 08 12 8e 00 04 00 00"),
    ("vmovlps xmm17, xmm2, qword ptr [rsi+4]", "62 e1 6c 08 12 8e 04 00 00 00"),
    ("vinsertf32x4 zmm1, zmm2, xmmword ptr [rdi-2048], 1", "62 f3 6d 48 18 4f 80 01"),   # T4 (4 x 32 bits): N=16
    ("vinsertf32x4 zmm1, zmm2, xmmword ptr [rdi+2032], 1", "62 f3 6d 48 18 4f 7f 01"),
    ("vinsertf32x4 zmm1, zmm2, xmmword ptr [rdi+2048], 1", "62 f3 6d 48 18 8f 00 08 00 00 01"),
    ("vinsertf32x4 zmm1, zmm2, xmmword ptr [rdi+4], 1", "62 f3 6d 48 18 8f 04 00 00 00 01"),
    ("vbroadcastf64x4 zmm1, ymmword ptr [rdi-4096]", "62 f2 fd 48 1b 4f 80"),   # T4 (4 x 64 bits): N=32
    ("vbroadcastf64x4 zmm1, ymmword ptr [rdi+4064]", "62 f2 fd 48 1b 4f 7f"),
    ("vbroadcastf64x4 zmm1, ymmword ptr [rdi+4096]", "62 f2 fd 48 1b 8f 00 10 00 00"),
    ("vbroadcastf64x4 zmm1, ymmword ptr [rdi+8]", "62 f2 fd 48 1b 8f 08 00 00 00"),
    ("vpslld zmm1, zmm2, xmmword ptr [r8-2048]", "62 d1 6d 48 f2 48 80"),   # M128: N=16 at every vector length
    ("vpslld zmm1, zmm2, xmmword ptr [r8+2032]", "62 d1 6d 48 f2 48 7f"),
    ("vpslld zmm1, zmm2, xmmword ptr [r8+2048]", "62 d1 6d 48 f2 88 00 08 00 00"),
    ("vpslld zmm1, zmm2, xmmword ptr [r8+64]", "62 d1 6d 48 f2 48 04"),
    ("vmovddup zmm1, zmmword ptr [r9-8192]", "62 d1 ff 48 12 49 80"),   # DUP at 512: N=64
    ("vmovddup zmm1, zmmword ptr [r9+8128]", "62 d1 ff 48 12 49 7f"),
    ("vmovddup zmm1, zmmword ptr [r9+8192]", "62 d1 ff 48 12 89 00 20 00 00"),
    ("vmovddup zmm1, zmmword ptr [r9+8]", "62 d1 ff 48 12 89 08 00 00 00"),
    ("vexpandps zmm1, zmmword ptr [rax-512]", "62 f2 7d 48 88 48 80"),   # T1S (element 32 bits) of a whole vector: N=4
    ("vexpandps zmm1, zmmword ptr [rax+508]", "62 f2 7d 48 88 48 7f"),
    ("vexpandps zmm1, zmmword ptr [rax+512]", "62 f2 7d 48 88 88 00 02 00 00"),
    ("vexpandps zmm1, zmmword ptr [rax+64]", "62 f2 7d 48 88 48 10"),
    ("vcompresspd zmmword ptr [rax-1024], zmm1", "62 f2 fd 48 8a 48 80"),   # T1S (element 64 bits): N=8
    ("vcompresspd zmmword ptr [rax+1016], zmm1", "62 f2 fd 48 8a 48 7f"),
    ("vcompresspd zmmword ptr [rax+1024], zmm1", "62 f2 fd 48 8a 88 00 04 00 00"),
    ("vcompresspd zmmword ptr [rax+4], zmm1", "62 f2 fd 48 8a 88 04 00 00 00"),
    ("vpinsrd xmm17, xmm2, dword ptr [rax-512], 1", "62 e3 6d 08 22 48 80 01"),   # T1S r/m32 with imm8: N=4
    ("vpinsrd xmm17, xmm2, dword ptr [rax+508], 1", "62 e3 6d 08 22 48 7f 01"),
    ("vpinsrd xmm17, xmm2, dword ptr [rax+512], 1", "62 e3 6d 08 22 88 00 02 00 00 01"),
    ("vpinsrd xmm17, xmm2, dword ptr [rax+2], 1", "62 e3 6d 08 22 88 02 00 00 00 01"),
    ("vinsertf32x8 zmm1, zmm2, ymmword ptr [rdi-4096], 1", "62 f3 6d 48 1a 4f 80 01"),   # T8 (8 x 32 bits): N=32
    ("vinsertf32x8 zmm1, zmm2, ymmword ptr [rdi+4064], 1", "62 f3 6d 48 1a 4f 7f 01"),
    ("vinsertf32x8 zmm1, zmm2, ymmword ptr [rdi+4096], 1", "62 f3 6d 48 1a 8f 00 10 00 00 01"),
    ("vinsertf32x8 zmm1, zmm2, ymmword ptr [rdi+32], 1", "62 f3 6d 48 1a 4f 01 01"),
    ("vbroadcasti32x2 zmm1, qword ptr [rdi-1024]", "62 f2 7d 48 59 4f 80"),   # T2 (2 x 32 bits): N=8
    ("vbroadcasti32x2 zmm1, qword ptr [rdi+1016]", "62 f2 7d 48 59 4f 7f"),
    ("vbroadcasti32x2 zmm1, qword ptr [rdi+1024]", "62 f2 7d 48 59 8f 00 04 00 00"),
    ("vbroadcasti32x2 zmm1, qword ptr [rdi+4]", "62 f2 7d 48 59 8f 04 00 00 00"),
    ("vinsertf64x2 zmm1, zmm2, xmmword ptr [rdi-2048], 1", "62 f3 ed 48 18 4f 80 01"),   # T2 (2 x 64 bits): N=16
    ("vinsertf64x2 zmm1, zmm2, xmmword ptr [rdi+2032], 1", "62 f3 ed 48 18 4f 7f 01"),
    ("vinsertf64x2 zmm1, zmm2, xmmword ptr [rdi+2048], 1", "62 f3 ed 48 18 8f 00 08 00 00 01"),
    ("vinsertf64x2 zmm1, zmm2, xmmword ptr [rdi+8], 1", "62 f3 ed 48 18 8f 08 00 00 00 01"),
    ("vcvtps2pd xmm17, qword ptr [rax-1024]", "62 e1 7c 08 5a 48 80"),   # HV at 128: N=8
    ("vcvtps2pd xmm17, qword ptr [rax+1016]", "62 e1 7c 08 5a 48 7f"),
    ("vcvtps2pd xmm17, qword ptr [rax+1024]", "62 e1 7c 08 5a 88 00 04 00 00"),
    ("vcvtps2pd xmm17, qword ptr [rax+4]", "62 e1 7c 08 5a 88 04 00 00 00"),
    ("vpmovzxbq xmm21, word ptr [rdx-256]", "62 e2 7d 08 32 6a 80"),   # OVM at 128: N=2
    ("vpmovzxbq xmm21, word ptr [rdx+254]", "62 e2 7d 08 32 6a 7f"),
    ("vpmovzxbq xmm21, word ptr [rdx+256]", "62 e2 7d 08 32 aa 00 01 00 00"),
    ("vpmovzxbq xmm21, word ptr [rdx+1]", "62 e2 7d 08 32 aa 01 00 00 00"),
    ("vmovddup xmm17, qword ptr [r9-1024]", "62 c1 ff 08 12 49 80"),   # DUP at 128: N=8 (m64)
    ("vmovddup xmm17, qword ptr [r9+1016]", "62 c1 ff 08 12 49 7f"),
    ("vmovddup xmm17, qword ptr [r9+1024]", "62 c1 ff 08 12 89 00 04 00 00"),
    ("vmovddup xmm17, qword ptr [r9+4]", "62 c1 ff 08 12 89 04 00 00 00"),
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
        else:   # (a string instruction's implicit operand is at its register: [rdi] for maskmovdqu)
            base = {"rsi": "rsi", "rdi": "rdi", "esrdi": "rdi", "rbxal": "rbx"}.get(o.loc, "rax")
            ops.append(x86gen.Mem(R[base], None, 1, 0, o.mem or 0))
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


# ---- masking, zeroing, broadcast, static rounding and SAE (SDM Vol.2 2.7: P2 = z L'L b V̄' aaa) ------------------
# Each case: the llvm-mc 14 line (GNU as 2.40 gives the same bytes for every one), the structured call, the bytes.

Z, X, Y, K = (lambda n: R[f"zmm{n}"]), (lambda n: R[f"xmm{n}"]), (lambda n: R[f"ymm{n}"]), (lambda n: R[f"k{n}"])
rax, rsi, rdi, rsp, r9, r12, r13, rcx, rip = (R[n] for n in ("rax", "rsi", "rdi", "rsp", "r9", "r12", "r13", "rcx", "rip"))
d, q = x86gen.dword, x86gen.qword
RC = {"rn": x86gen.RN_SAE, "rd": x86gen.RD_SAE, "ru": x86gen.RU_SAE, "rz": x86gen.RZ_SAE}

P2_CASES = [
    # aaa = the mask register (2.7.3), z = zeroing (2.7.4)
    ("vaddps zmm1 {k1}, zmm2, zmm3", ("vaddps", Z(1).k(K(1)), Z(2), Z(3)), {}, "62 f1 6c 49 58 cb"),
    ("vaddps zmm1 {k1} {z}, zmm2, zmm3", ("vaddps", Z(1).k(K(1)).z, Z(2), Z(3)), {}, "62 f1 6c c9 58 cb"),
    ("vaddps zmm1 {k7} {z}, zmm2, zmm3", ("vaddps", x86gen.masked(Z(1), K(7), zero=True), Z(2), Z(3)), {}, "62 f1 6c cf 58 cb"),
    ("vaddpd xmm17 {k3}, xmm18, xmm19", ("vaddpd", X(17).k(K(3)), X(18), X(19)), {}, "62 a1 ed 03 58 cb"),
    ("vpaddd ymm30 {k5} {z}, ymm29, ymmword ptr [r13+r12*2+64]",
     ("vpaddd", Y(30).k(K(5)).z, Y(29), x86gen.ymmword(r13, r12, 2, 64)), {}, "62 01 15 a5 fe 74 65 02"),
    # a masked store: merge-masking only (2.8: {z} with a memory destination is #UD)
    ("vmovups zmmword ptr [rdi] {k2}, zmm3", ("vmovups", x86gen.zmmword(rdi).k(K(2)), Z(3)), {}, "62 f1 7c 4a 11 1f"),
    ("vmovaps ymm5 {k4} {z}, ymmword ptr [rsi+32]", ("vmovaps", Y(5).k(K(4)).z, x86gen.ymmword(rsi, disp=32)), {},
     "62 f1 7c ac 28 6e 01"),
    ("vmovdqu64 xmmword ptr [rsp+16] {k6}, xmm20", ("vmovdqu64", x86gen.xmmword(rsp, disp=16).k(K(6)), X(20)), {},
     "62 e1 fe 0e 7f 64 24 01"),
    # b = 1 with memory: embedded broadcast (2.7.5); disp8*N with N = the element size (Table 2-34, FV with EVEX.b = 1)
    ("vaddps zmm1 {k1} {z}, zmm2, dword ptr [rax]{1to16}", ("vaddps", Z(1).k(K(1)).z, Z(2), d(rax).bcst), {}, "62 f1 6c d9 58 08"),
    ("vaddpd zmm1, zmm2, qword ptr [rax]{1to8}", ("vaddpd", Z(1), Z(2), q(rax).bcst), {}, "62 f1 ed 58 58 08"),
    ("vaddps xmm1, xmm2, dword ptr [rax]{1to4}", ("vaddps", X(1), X(2), d(rax).bcst), {}, "62 f1 6c 18 58 08"),
    ("vaddpd ymm1, ymm2, qword ptr [rax]{1to4}", ("vaddpd", Y(1), Y(2), q(rax).bcst), {}, "62 f1 ed 38 58 08"),
    ("vpandq zmm25 {k2}, zmm26, qword ptr [r9+rcx*8]{1to8}", ("vpandq", Z(25).k(K(2)), Z(26), q(r9, rcx, 8).bcst), {},
     "62 41 ad 52 db 0c c9"),
    ("vfmadd231ps zmm0 {k1}, zmm1, dword ptr [rip+64]{1to16}", ("vfmadd231ps", Z(0).k(K(1)), Z(1), d(rip, disp=64).bcst), {},
     "62 f2 75 59 b8 05 40 00 00 00"),
    # disp8*N with broadcast: N = 4 (m32bcst) and 8 (m64bcst) at N·(-128), N·127, N·128, a non-multiple; 64 = 16·4
    ("vaddps zmm1, zmm2, dword ptr [rax-512]{1to16}", ("vaddps", Z(1), Z(2), d(rax, disp=-512).bcst), {}, "62 f1 6c 58 58 48 80"),
    ("vaddps zmm1, zmm2, dword ptr [rax+508]{1to16}", ("vaddps", Z(1), Z(2), d(rax, disp=508).bcst), {}, "62 f1 6c 58 58 48 7f"),
    ("vaddps zmm1, zmm2, dword ptr [rax+512]{1to16}", ("vaddps", Z(1), Z(2), d(rax, disp=512).bcst), {},
     "62 f1 6c 58 58 88 00 02 00 00"),
    ("vaddps zmm1, zmm2, dword ptr [rax+2]{1to16}", ("vaddps", Z(1), Z(2), d(rax, disp=2).bcst), {}, "62 f1 6c 58 58 88 02 00 00 00"),
    ("vaddps zmm1, zmm2, dword ptr [rax+64]{1to16}", ("vaddps", Z(1), Z(2), d(rax, disp=64).bcst), {}, "62 f1 6c 58 58 48 10"),
    ("vaddpd zmm1, zmm2, qword ptr [rax-1024]{1to8}", ("vaddpd", Z(1), Z(2), q(rax, disp=-1024).bcst), {}, "62 f1 ed 58 58 48 80"),
    ("vaddpd zmm1, zmm2, qword ptr [rax+1016]{1to8}", ("vaddpd", Z(1), Z(2), q(rax, disp=1016).bcst), {}, "62 f1 ed 58 58 48 7f"),
    ("vaddpd zmm1, zmm2, qword ptr [rax+1024]{1to8}", ("vaddpd", Z(1), Z(2), q(rax, disp=1024).bcst), {},
     "62 f1 ed 58 58 88 00 04 00 00"),
    ("vaddpd zmm1, zmm2, qword ptr [rax+4]{1to8}", ("vaddpd", Z(1), Z(2), q(rax, disp=4).bcst), {}, "62 f1 ed 58 58 88 04 00 00 00"),
    ("vaddpd xmm1, xmm2, qword ptr [rax+24]{1to2}", ("vaddpd", X(1), X(2), q(rax, disp=24).bcst), {}, "62 f1 ed 18 58 48 03"),
    # b = 1 with registers: static rounding, L'L = the mode (2.7.8, Table 2-36)
    ("vaddps zmm1, zmm2, zmm3, {rn-sae}", ("vaddps", Z(1), Z(2), Z(3)), {"rc": RC["rn"]}, "62 f1 6c 18 58 cb"),
    ("vaddps zmm1, zmm2, zmm3, {rd-sae}", ("vaddps", Z(1), Z(2), Z(3)), {"rc": RC["rd"]}, "62 f1 6c 38 58 cb"),
    ("vaddps zmm1, zmm2, zmm3, {ru-sae}", ("vaddps", Z(1), Z(2), Z(3)), {"rc": RC["ru"]}, "62 f1 6c 58 58 cb"),
    ("vaddps zmm1, zmm2, zmm3, {rz-sae}", ("vaddps", Z(1), Z(2), Z(3)), {"rc": RC["rz"]}, "62 f1 6c 78 58 cb"),
    ("vaddss xmm1 {k1} {z}, xmm2, xmm3, {rd-sae}", ("vaddss", X(1).k(K(1)).z, X(2), X(3)), {"rc": RC["rd"]}, "62 f1 6e b9 58 cb"),
    ("vaddsd xmm17, xmm2, xmm30, {ru-sae}", ("vaddsd", X(17), X(2), X(30)), {"rc": RC["ru"]}, "62 81 ef 58 58 ce"),
    ("vsqrtsd xmm1, xmm2, xmm3, {rz-sae}", ("vsqrtsd", X(1), X(2), X(3)), {"rc": RC["rz"]}, "62 f1 ef 78 51 cb"),
    # {sae} alone: b = 1, L'L = 00 (2.7.9/2.7.10; what llvm-mc, GNU as and iced write)
    ("vminps zmm1, zmm2, zmm3, {sae}", ("vminps", Z(1), Z(2), Z(3)), {"rc": x86gen.SAE}, "62 f1 6c 18 5d cb"),
    ("vmaxss xmm1 {k2}, xmm2, xmm3, {sae}", ("vmaxss", X(1).k(K(2)), X(2), X(3)), {"rc": x86gen.SAE}, "62 f1 6e 1a 5f cb"),
    ("vmaxpd zmm1 {k1} {z}, zmm2, zmm31, {sae}", ("vmaxpd", Z(1).k(K(1)).z, Z(2), Z(31)), {"rc": x86gen.SAE},
     "62 91 ed 99 5f cf"),
]


@pytest.mark.parametrize("text, call, kw, expected", P2_CASES, ids=[c[0] for c in P2_CASES])
def test_evex_p2_bits(text, call, kw, expected):
    """Masks, zeroing, broadcast (with disp8*N by the element size), static rounding and SAE through every structured
    entry point: x86gen.encode, select + the form, the form by id, the Assembler's method, emit and emit_form,
    Instruction (expected bytes from llvm-mc 14 / GNU as 2.40)."""
    mn, *ops = call
    assert [x86gen.encode(mn, *ops, **kw).hex(" ") for _ in range(2)] == [expected] * 2   # (the second: the kept plan)
    f = x86gen.select(mn, *ops, **kw)
    assert f.encoding_kind == "evex" and f(*ops, **kw).hex(" ") == expected
    assert getattr(x86gen.forms, f.id)(*ops, **kw).hex(" ") == expected and f.accepts(*ops, **kw)
    assert x86gen.select_form(["VEX_VADDPS_XMM_XMM_XMMM128", f.id], *ops, **kw) is f
    a = x86gen.Assembler()
    getattr(a, mn)(*ops, **kw)
    getattr(a, mn)(*ops, **kw)   # (the method's kept plan)
    a.emit(mn, *ops, **kw)
    a.emit_form(f.id, *ops, **kw)
    assert a.assemble().hex(" ") == " ".join([expected] * 4)
    assert x86gen.Instruction(mn, *ops, **kw).encode().hex(" ") == expected


def test_masked_broadcast_rounding_force_evex():
    """xmm/ymm operands VEX could encode take the EVEX form once masked, broadcast or rounded (VEX has no field for it)."""
    assert x86gen.select("vaddps", Y(1), Y(2), Y(3)).encoding_kind == "vex"
    assert x86gen.select("vaddps", Y(1).k(K(1)), Y(2), Y(3)).id == "EVEX_VADDPS_YMM_K1Z_YMM_YMMM256B32"
    assert x86gen.select("vaddps", Y(1), Y(2), d(rax).bcst).id == "EVEX_VADDPS_YMM_K1Z_YMM_YMMM256B32"
    assert x86gen.select("vaddps", Z(1).k(K(1)).z, Z(2), d(rax).bcst).id == "EVEX_VADDPS_ZMM_K1Z_ZMM_ZMMM512B32_ER"
    assert x86gen.select("vaddss", X(1), X(2), X(3), rc=x86gen.RZ_SAE).id == "EVEX_VADDSS_XMM_K1Z_XMM_XMMM32_ER"
    # the plain fast path is not affected by what went before (decorated operands are never planned)
    assert x86gen.encode("vaddps", Y(1), Y(2), Y(3)).hex(" ") == "c5 ec 58 cb"


def test_evex_operand_objects():
    m = Z(1).k(K(1))
    assert (m.op, m.mask, m.zero) == (Z(1), K(1), False) and m.z.zero and m.z == x86gen.masked(Z(1), K(1), True)
    assert isinstance(m, x86gen.Masked) and str(m.z) == "zmm1 {k1} {z}" and K(2).k(K(3)).op is K(2)
    b = d(rax, disp=8).bcst
    assert isinstance(b, x86gen.Bcst) and isinstance(b, x86gen.Mem) and b.size == 32 and b.plain == d(rax, disp=8)
    assert x86gen.word(rax).bcst.size == 16 and q(rax).bcst.sig == "b64" and b != d(rax, disp=8)
    assert (x86gen.RN_SAE, x86gen.RD_SAE, x86gen.RU_SAE, x86gen.RZ_SAE, x86gen.SAE) == (0, 1, 2, 3, 4)


@pytest.mark.parametrize("make, match", [
    (lambda: Z(1).k(K(0)), r"k0 cannot be a mask \(EVEX.aaa = 000 means no masking"),
    (lambda: x86gen.zmmword(rdi).k(K(1)).z, r"zeroing-masking with a memory destination is #UD"),
    (lambda: x86gen.masked(x86gen.zmmword(rdi), K(1), zero=True), r"memory destination is #UD"),
    (lambda: Z(1).k(Z(2)), r"a mask is a k register k1-k7, not zmm2"),
    (lambda: x86gen.byte(rax).bcst, r"a broadcast element is a word, dword or qword"),
    (lambda: x86gen.mem(rax).bcst, r"not unsized"),
    (lambda: d(rax).bcst.k(K(1)), r"a broadcast operand is a source"),
    (lambda: x86gen.masked(R["eax"], K(1)), r"only xmm/ymm/zmm/k registers and memory destinations take a mask"),
])
def test_evex_operand_errors(make, match):
    with pytest.raises(x86gen.EvexOperandError, match=match):
        make()


@pytest.mark.parametrize("call, kw, match", [
    # rounding where the form has none / the other kind / with memory
    (("vaddps", X(1), X(2), X(3)), {"rc": 0}, r"vaddps xmm1, xmm2, xmm3 \{rn-sae\}: EVEX_VADDPS_XMM_K1Z_XMM_XMMM128B32 takes no"
     r" rounding or \{sae\}; the forms for these operands: EVEX_VADDPS_XMM_K1Z_XMM_XMMM128B32 \(\{k1\}\{z\} m32bcst\)"),
    (("vaddps", Z(1), Z(2), Z(3)), {"rc": x86gen.SAE}, r"takes static rounding \{er\} \(rc=RN_SAE…RZ_SAE\), not \{sae\} alone"),
    (("vminps", Z(1), Z(2), Z(3)), {"rc": x86gen.RZ_SAE}, r"takes \{sae\} \(rc=SAE\) only, no static rounding"),
    (("vaddps", Z(1), Z(2), x86gen.zmmword(rax)), {"rc": 0}, r"rounding and \{sae\} are register-only"),
    (("vaddps", Z(1), Z(2), Z(3)), {"rc": 5}, r"rc= must be x86gen.RN_SAE, RD_SAE, RU_SAE, RZ_SAE \(static rounding\) or SAE"),
    (("vaddps", Z(1), Z(2), Z(3)), {"rc": "rn"}, r"rc= must be"),
    # broadcast of the wrong element size; on a form without one
    (("vaddps", Z(1), Z(2), q(rax).bcst), {}, r"broadcasts 32-bit elements, not 64-bit ones"),
    (("vaddss", X(1), X(2), d(rax).bcst), {}, r"EVEX_VADDSS_XMM_K1Z_XMM_XMMM32_ER takes no broadcast"),
    (("vmovups", Z(1), d(rax).bcst), {}, r"takes no broadcast"),
    # a mask anywhere but the destination; on a mnemonic without EVEX forms (VEX has no mask field)
    (("vaddps", X(1), X(2).k(K(1)), X(3)), {}, r"operand 2 \(xmm2 \{k1\}\) is masked: only the destination"),
    (("vaddsubps", X(1).k(K(1)), X(2), X(3)), {}, r"VEX_VADDSUBPS_XMM_XMM_XMMM128 is a vex form \(masking, broadcast and"
     r" rounding are EVEX only"),
    (("vaddsubps", X(1), X(2), X(3)), {"rc": 0}, r"is a vex form"),
])
def test_evex_decoration_errors(call, kw, match):
    """Decorations a form does not take raise EvexOperandError naming instruction, operands and the forms that fit,
    from encode, select, the Assembler and the form itself."""
    mn, *ops = call
    with pytest.raises(x86gen.EvexOperandError, match=match):
        x86gen.encode(mn, *ops, **kw)
    with pytest.raises(x86gen.EvexOperandError):
        x86gen.select(mn, *ops, **kw)
    with pytest.raises(x86gen.EvexOperandError):
        x86gen.Assembler().emit(mn, *ops, **kw)


def test_form_level_decoration_errors():
    f = x86gen.forms.EVEX_VADDPS_XMM_K1Z_XMM_XMMM128B32
    with pytest.raises(x86gen.EvexOperandError, match=r"EVEX_VADDPS_XMM_K1Z_XMM_XMMM128B32 \(vaddps xmm, xmm, xmm/m128\)"
                       r" xmm1, xmm2, xmm3 \{ru-sae\}: EVEX_VADDPS_XMM_K1Z_XMM_XMMM128B32 takes no rounding"):
        f(X(1), X(2), X(3), rc=x86gen.RU_SAE)
    with pytest.raises(x86gen.EvexOperandError, match="is a vex form"):
        x86gen.forms.VEX_VADDPS_XMM_XMM_XMMM128(X(1).k(K(1)), X(2), X(3))
    assert not f.accepts(X(1), X(2), q(rax).bcst) and f.accepts(X(1), X(2), d(rax).bcst)
    assert not x86gen.forms.VEX_VADDPS_XMM_XMM_XMMM128.accepts(X(1).k(K(1)), X(2), X(3))
    # a form whose mask is {k1} only (compares into a k register, scatters: none in the spec yet) refuses {z}
    k1_only = x86gen.Form(f.row._replace(evex_mask="k1"))
    assert k1_only(X(1).k(K(1)), X(2), X(3)).hex(" ") == "62 f1 6c 09 58 cb"   # llvm-mc: vaddps xmm1 {k1}, xmm2, xmm3
    with pytest.raises(x86gen.EvexOperandError, match=r"takes merge-masking \{k1\} only, no zeroing \{z\}"):
        k1_only(X(1).k(K(1)).z, X(2), X(3))
    no_mask = x86gen.Form(f.row._replace(evex_mask=""))
    with pytest.raises(x86gen.EvexOperandError, match="takes no mask"):
        no_mask(X(1).k(K(1)), X(2), X(3))
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


def test_assembler_records_decorations():
    """An Assembler keeps the decorated operands, and the rounding as an `x86gen.evex.Rounding` after them, in its
    records (what `lines()` and listings print from)."""
    from x86gen.evex import Rounding
    a = x86gen.Assembler(listing=True)
    a.vaddps(Z(1).k(K(1)).z, Z(2), d(rax).bcst)
    a.vaddps(Z(1), Z(2), Z(3), rc=x86gen.RD_SAE)
    (_, b1, t1), (_, b2, t2) = a.lines()
    assert (b1.hex(" "), b2.hex(" ")) == ("62 f1 6c d9 58 08", "62 f1 6c 38 58 cb")   # llvm-mc 14
    from x86gen.assembler import TEXT_LEN  # listing record width: mnemonic, operand slots
    rec = a._text
    assert rec[1:5] == [Z(1).k(K(1)).z, Z(2), d(rax).bcst, None]
    assert rec[TEXT_LEN + 1:TEXT_LEN + 5] == [Z(1), Z(2), Z(3), Rounding(x86gen.RD_SAE)]
    assert str(Rounding(x86gen.RD_SAE)) == "{rd-sae}" and "{rd-sae}" in t2
    # a masked label memory operand (RIP-relative): llvm-mc-22 `vaddps zmm1 {k1}, zmm2, zmmword ptr [rip + c]` / `c:`
    b = x86gen.Assembler()
    c = b.label("c")
    b.vaddps(Z(1).k(K(1)), Z(2), c.mem(512))
    b.bind(c)
    assert b.assemble().hex(" ") == "62 f1 6c 49 58 0d 00 00 00 00"


@pytest.mark.parametrize("text, expected", [
    # AVX-512 integer-compare pseudo-ops as iced-x86 and objdump print them (bytes from llvm-mc 14)
    ("vpcmpequd k0, zmm0, zmm1", "62 f3 7d 48 1e c1 00"),
    ("vpcmpnltud k0,zmm0,zmm1", "62 f3 7d 48 1e c1 05"),
    ("vpcmpnleq k3,zmm0,zmm1", "62 f3 fd 48 1f d9 06"),
])
def test_vpcmp_pseudo_ops(text, expected):
    assert x86gen.assemble(text).hex(" ") == expected


@pytest.mark.parametrize("text, expected", [
    # the decorations go into P2 of the EVEX prefix after the 0x67 and segment prefixes (llvm-mc 14 bytes)
    ("vpaddd zmm0 {k1}, zmm0, zmmword ptr [eax]", "67 62 f1 7d 49 fe 00"),
    ("vaddps zmm1 {k2} {z}, zmm2, zmmword ptr fs:[ecx+64]", "64 67 62 f1 6c ca 58 49 01"),
])
def test_decorations_after_address_size_and_segment_prefixes(text, expected):
    assert x86gen.assemble(text).hex(" ") == expected


@pytest.mark.parametrize("text, expected", [
    ("vfmulcph zmm0, zmm1, zmm2", "62 f6 76 48 d6 c2"),                                   # llvm-mc 14
    ("vfmulcsh xmm0, xmm1, dword ptr [rax+8]", "62 f6 76 08 d7 40 02"),                    # T1S, N = 4 (an FP16 pair)
    ("vfcmaddcph zmm3 {k1}, zmm1, dword ptr [rax+0x100]{1to16}", "62 f6 77 59 56 58 40"),  # bcst of m32, N = 4
    ("vfmaddcsh xmm5, xmm1, dword ptr [rax-0x200]", "62 f6 76 08 57 68 80"),
    ("vfmulcph ymm20, ymm1, ymm2", "62 e6 76 28 d6 e2"),
])
def test_fp16_complex_multiply(text, expected):
    assert x86gen.assemble(text).hex(" ") == expected


@pytest.mark.parametrize("text", ["vfmulcph zmm0, zmm1, zmm0", "vfmulcph zmm1, zmm1, zmm0", "vfcmaddcph xmm2, xmm2, [rax]",
                                  "vfmaddcsh xmm4, xmm3, xmm4"])
def test_fp16_complex_multiply_destination_must_differ(text):
    """SDM Vol.2 VFMULCPH/VFCMADDCPH: #UD if the destination is either source (GNU as refuses it; iced decodes INVALID)."""
    with pytest.raises(x86gen.DistinctRegistersError, match="destination must differ from both sources"):
        x86gen.assemble(text)


# The AVX-512 gathers and scatters (SDM Vol.2 VPGATHERDD…VSCATTERQPD, 2.7.2): a VSIB operand with an xmm/ymm/zmm index
# 0-31 (EVEX.X̄ bit 3, EVEX.V̄' bit 4 of the index), a required mask k1-k7 (EVEX.aaa), Tuple1 Scalar disp8*N (N = the
# element size). Bytes from llvm-mc 14 (`echo "..." | llvm-mc-14 -x86-asm-syntax=intel -show-encoding`).
GATHER_SCATTER = [
    ("vpgatherdd zmm1 {k1}, [rax+zmm2*4]", "62f27d49900c90"),
    ("vpgatherdd zmm1 {k1}, [rax+zmm18*4+0x40]", "62f27d41904c9010"),            # index 18: V̄' = 0; disp8*4 = 0x10
    ("vgatherqpd zmm3 {k7}, [r13+zmm31*8-0x400]", "6292fd47935cfd80"),            # disp8*8 = -128, X̄ and V̄' clear
    ("vgatherdps xmm17 {k2}, [rsp+xmm20*1+0x7f]", "62e27d02928c247f000000"),       # 0x7f is no multiple of 4: disp32
    ("vpgatherqd ymm5 {k1}, [rax+zmm6*4+0x200]", "62f27d4991acb000020000"),        # 0x200 / 4 = 128: disp32
    ("vpscatterdd [rax+zmm2*4] {k3}, zmm1", "62f27d4ba00c90"),
    ("vpscatterdd [rax+zmm1*4] {k3}, zmm1", "62f27d4ba00c88"),                     # a scatter may store its index
    ("vscatterqps [rdi+zmm19*2-0x204] {k5}, ymm28", "62627d45a3a45ffcfdffff"),
    ("vpscatterqq [r8+ymm16*8+0x3f8] {k6}, ymm9", "6252fd26a14cc07f"),             # disp8*8 = 127
    ("vpgatherdd zmm1 {k1}, [eax+zmm2*4]", "6762f27d49900c90"),                    # a 32-bit address: 0x67
    # the AVX512PF prefetches (ModRM.reg /1 … /6): llvm-mc 14 refuses them, bytes from GNU as 2.40 (`as --64`, .intel_syntax)
    ("vgatherpf0dps [rax+zmm2*4] {k1}", "62f27d49c60c90"),
    ("vscatterpf1qpd [r9+zmm30*8+0x3f8] {k7}", "6292fd47c774f17f"),
]


@pytest.mark.parametrize("text, expected", GATHER_SCATTER)
def test_gather_scatter_bytes(text, expected):
    assert x86gen.assemble(text).hex() == expected


def test_gather_scatter_api_and_iced_text():
    """The same bytes from `encode` with `Masked` operands (a gather's destination, a scatter's memory) and from
    iced-x86's Intel text, which writes the mask as an operand."""
    d = x86gen.dword
    assert x86gen.encode("vpgatherdd", Z(1).k(K(1)), d(rax, Z(18), 4, 0x40)).hex() == "62f27d41904c9010"
    assert x86gen.encode("vpscatterdd", d(rax, Z(2), 4).k(K(3)), Z(1)).hex() == "62f27d4ba00c90"
    assert x86gen.assemble("vpgatherdd zmm1,k1,[rax+zmm18*4+0x40]").hex() == "62f27d41904c9010"
    assert x86gen.assemble("vpscatterdd dword ptr [rax+zmm2*4], k3, zmm1").hex() == "62f27d4ba00c90"
    assert str(x86gen.Instruction("vpscatterdd", d(rax, Z(2), 4).k(K(1)), Z(1))) == "vpscatterdd dword ptr [rax+zmm2*4] {k1}, zmm1"
    assert str(x86gen.Instruction("vpgatherdd", Z(1).k(K(1)), d(rax, Z(2), 4))) == "vpgatherdd zmm1 {k1}, dword ptr [rax+zmm2*4]"


@pytest.mark.parametrize("make, error, match", [
    # no mask (k0): #UD (SDM Vol.2 VPGATHERDD/VPSCATTERDD: EVEX.aaa = 000)
    (lambda: x86gen.assemble("vpgatherdd zmm1, [rax+zmm2*4]"), x86gen.EvexOperandError,
     r"EVEX_VPGATHERDD_ZMM_K1_VM32Z needs a mask k1-k7 on its destination \(k0 is #UD"),
    (lambda: x86gen.encode("vpscatterdd", x86gen.dword(rax, Z(2), 4), Z(1)), x86gen.EvexOperandError,
     r"EVEX_VPSCATTERDD_VM32Z_K1_ZMM needs a mask k1-k7 on its memory operand"),
    (lambda: x86gen.forms.EVEX_VGATHERDPS_XMM_K1_VM32X(X(1), x86gen.dword(rax, X(2), 4)), x86gen.EvexOperandError, r"needs a mask"),
    (lambda: x86gen.assemble("vgatherpf0dps [rax+zmm2*4]"), x86gen.EvexOperandError, r"needs a mask k1-k7 on its memory operand"),
    # the encoder's aaa= (the mask number x86gen.encoding.decorated passes) is 1-7 or refused, never other P2 bits
    (lambda: x86gen.forms.EVEX_VPGATHERDD_ZMM_K1_VM32Z(Z(1), x86gen.dword(rax, Z(2), 4), aaa=9), x86gen.EvexOperandError,
     r"needs a mask"),
    (lambda: x86gen.assemble("vpgatherdd zmm1 {k0}, [rax+zmm2*4]"), x86gen.EncodeError, r"k0 cannot be a write mask"),
    (lambda: Z(1).k(K(0)), x86gen.EvexOperandError, r"k0 cannot be a mask"),
    # zeroing: merge-masking only
    (lambda: x86gen.assemble("vpgatherdd zmm1 {k1} {z}, [rax+zmm2*4]"), x86gen.EvexOperandError, r"merge-masking \{k1\} only"),
    # destination = index: #UD (SDM Vol.2 VPGATHERDD; iced-x86 decodes 62 f2 7d 49 90 14 90 as invalid)
    (lambda: x86gen.assemble("vpgatherdd zmm2 {k1}, [rax+zmm2*4]"), x86gen.DistinctRegistersError,
     r"the destination and index registers must be different"),
    # a VEX gather's index is xmm0-15/ymm0-15; a zmm index needs vm32z
    (lambda: x86gen.assemble("vgatherdps xmm1, [rax+xmm17*4], xmm2"), OperandError, r"no form|expected vm32x"),
    (lambda: x86gen.assemble("vpgatherdd ymm1 {k1}, [rax+zmm2*4]"), OperandError, r"no form"),
])
def test_gather_scatter_errors(make, error, match):
    with pytest.raises(error, match=match):
        make()
