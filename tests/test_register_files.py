"""Rules of the register files issue 10 brings in: MMX (mm0-mm7), AVX-512 opmask (k0-k7) in VEX forms.

Expected bytes come from GNU as 2.40 (``as --64 -msyntax=intel -mnaked-reg``, output quoted in the
comments) or from iced-x86's encoder (computed in the test).
"""
from __future__ import annotations

import iced_x86 as I
import pytest

import x86gen
from x86gen import OperandError, mem
from x86gen.syntax import parse_text_line

R = x86gen.REGISTERS


def _iced(code: int, *regs) -> bytes:
    """iced-x86's bytes for ``code`` with these register operands, at address 0."""
    ins = I.Instruction.create_reg_reg(code, *regs) if len(regs) == 2 else I.Instruction.create_reg_reg_reg(code, *regs)
    e = I.Encoder(64)
    e.encode(ins, 0)
    return bytes(e.take_buffer())


# --- MMX ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, want", [
    ("movq mm0, rax", "480f6ec0"),                             # GNU as: 48 0f 6e c0  movq mm0,rax
    ("paddb mm7, qword ptr [r8+r15*2+1]", "430ffc7c7801"),     # 43 0f fc 7c 78 01: REX.X/B of the address only
    ("movq2dq xmm15, mm3", "f3440fd6fb"),                       # f3 44 0f d6 fb: REX.R for xmm15, none for mm3
    ("movdq2q mm1, xmm9", "f2410fd6c9"),                        # f2 41 0f d6 c9
    ("pextrw r10d, mm6, 3", "440fc5d603"),                      # 44 0f c5 d6 03
])
def test_mmx_registers_take_no_rex_bits(text, want):
    """mm0-mm7 are named by 3 ModRM bits; a REX prefix comes only from the other operands (SDM Vol.2 2.2.1.2)."""
    assert x86gen.assemble(text).hex() == want


def test_mmx_file_has_eight_registers():
    """There is no mm8: REX.R/B are ignored for MMX registers, so x86gen has no register a REX bit would name."""
    assert [r.name for r in R.values() if r.kind == "mm"] == [f"mm{i}" for i in range(8)]
    assert "mm8" not in R
    with pytest.raises(x86gen.EncodeError):   # a symbol, as for GNU as: no form takes a label there
        x86gen.assemble("paddb mm8, mm1")
    with pytest.raises(OperandError):
        R["mm3"].sized(128)   # an MMX register has no other width


def test_mmx_and_xmm_forms_are_told_apart():
    """paddb mm, mm/m64 (NP 0F FC) and paddb xmm, xmm/m128 (66 0F FC): the register file picks the form."""
    assert x86gen.encode("paddb", R["mm1"], R["mm2"]).hex() == "0ffcca"              # GNU as: 0f fc ca
    assert x86gen.encode("paddb", R["xmm1"], R["xmm2"]).hex() == "660ffcca"          # 66 0f fc ca
    assert x86gen.encode("paddb", R["mm1"], mem(R["rax"])).hex() == "0ffc08"         # unsized memory: the mm form's m64
    with pytest.raises(OperandError):
        x86gen.encode("paddb", R["mm1"], R["xmm2"])


# --- AVX-512 opmask registers in VEX forms -----------------------------------------------------------


@pytest.mark.parametrize("text, want", [
    ("kmovw k1, r9d", "c4c17892c9"),                 # GNU as: c4 c1 78 92 c9  (VEX.B̄ for r9d: the 3-byte prefix)
    ("kmovq r12, k7", "c461fb93e7"),                 # c4 61 fb 93 e7  (VEX.R̄ for r12)
    ("kandw k1, k2, k3", "c5ec41cb"),                # c5 ec 41 cb     (k2 in vvvv, VEX.L1)
    ("kshiftlw k7, k1, 5", "c4e3f932f905"),          # c4 e3 f9 32 f9 05
    ("kmovb byte ptr [r13], k2", "c4c179915500"),    # c4 c1 79 91 55 00
])
def test_mask_register_forms_match_gnu_as(text, want):
    assert x86gen.assemble(text).hex() == want


def test_mask_register_file_has_eight_registers_and_vvvv_top_bit_stays_clear():
    """k0-k7 only: VEX.vvvv holds ~k (its top bit stored 1) and R̄ stays 1; iced's encoder agrees for every pair."""
    ks = [r for r in R.values() if r.kind == "k"]
    assert [r.name for r in ks] == [f"k{i}" for i in range(8)]
    iced_k = [getattr(I.Register, f"K{i}") for i in range(8)]
    for a in range(8):
        for b in range(8):
            want = _iced(I.Code.VEX_KANDW_KR_KR_KR, iced_k[a], iced_k[b], iced_k[7 - a])
            assert x86gen.encode("kandw", ks[a], ks[b], ks[7 - a]) == want


def test_register_files_are_exported():
    assert x86gen.mm0 is R["mm0"] and x86gen.k7 is R["k7"]
    assert {"mm0", "mm7", "k0", "k7"} <= set(x86gen.__all__)


# --- VSIB: the AVX2 gathers ------------------------------------------------------------------------------


@pytest.mark.parametrize("text, want", [
    ("vgatherdps xmm1, dword ptr [rax+xmm2*4+0x10], xmm3", "c4e261924c9010"),    # GNU as: c4 e2 61 92 4c 90 10
    ("vpgatherqq ymm9, qword ptr [r13+ymm12*8], ymm10", "c402ad914ce500"),        # c4 02 ad 91 4c e5 00: VEX.X̄ = 0 (ymm12)
    ("vgatherdpd xmm0, qword ptr [xmm4*2], xmm1", "c4e2f192046500000000"),        # xmm4 is an index (not "none")
    ("vgatherqps xmm2, dword ptr [rsp+ymm15*1-0x80], xmm7", "c4a24593543c80"),    # c4 a2 45 93 54 3c 80
    ("vgatherdps xmm1, [xmm2+0x10], xmm3", "c4e261920c1510000000"),               # GNU as reads a lone xmm2 as the index
    ("vgatherdps xmm1, [xmm2+rax], xmm3", "c4e261920c10"),                        # … and [xmm2+rax] as [rax+xmm2*1]
    ("vpgatherdd ymm5, [r12+ymm4*4+0x12345678], ymm6", "c4c24d90aca478563412"),   # c4 c2 4d 90 ac a4 78 56 34 12
])
def test_vsib_text_matches_gnu_as(text, want):
    assert x86gen.assemble(text).hex() == want


def test_vsib_structured_api():
    """A `Mem` with an xmm/ymm index is a `VsibMem`; `mem`, `dword`, … build one as for a general index."""
    m = mem(R["rax"], R["xmm2"], 4, 0x10, size=32)
    assert isinstance(m, x86gen.VsibMem) and str(m) == "dword ptr [rax+xmm2*4+0x10]"
    assert x86gen.encode("vgatherdps", R["xmm1"], m, R["xmm3"]).hex() == "c4e261924c9010"
    assert x86gen.encode("vgatherdps", R["xmm1"], x86gen.dword(R["rax"], R["xmm2"], 4, 0x10), R["xmm3"]).hex() == "c4e261924c9010"
    assert x86gen.forms.VEX_VGATHERDPS_XMM_VM32X_XMM(R["xmm1"], m.with_size(0), R["xmm3"]).hex() == "c4e261924c9010"
    assert type(x86gen.Mem(R["rax"], R["rcx"])) is x86gen.Mem


@pytest.mark.parametrize("text", [
    "vgatherdps xmm1, [rax+xmm1*4], xmm3",     # destination = index
    "vgatherdps xmm1, [rax+xmm2*4], xmm1",     # destination = mask
    "vgatherdps xmm1, [rax+xmm3*4], xmm3",     # index = mask
    "vgatherdpd ymm1, [rax+xmm1*4], ymm3",     # xmm1 and ymm1 are one register
    "vpgatherqd xmm4, [rax+ymm4*8], xmm5",
])
def test_vsib_registers_must_be_distinct(text):
    """SDM Vol.2 VGATHERDPS: #UD if any two of destination, index and mask are the same (GNU as only warns:
    "mask, index, and destination registers should be distinct")."""
    with pytest.raises(x86gen.DistinctRegistersError, match="three different registers"):
        x86gen.assemble(text)
    mn, ops = parse_text_line(text)
    with pytest.raises(x86gen.DistinctRegistersError):   # the form's own encoder checks it too
        x86gen.select(mn, *ops)(*ops)
    assert issubclass(x86gen.DistinctRegistersError, OperandError)


@pytest.mark.parametrize("call", [
    lambda: x86gen.assemble("mov eax, [rax+xmm1*2]"),                       # a vector index in a general memory operand
    lambda: x86gen.forms.ADD_R32_RM32(R["eax"], mem(R["rax"], R["xmm1"])),   # … also through the form itself
    lambda: x86gen.forms.VEX_VADDPS_XMM_XMM_XMMM128(R["xmm0"], R["xmm1"], mem(R["rax"], R["xmm1"])),
    lambda: x86gen.assemble("vgatherdps xmm1, [rax+rcx*4], xmm3"),           # a general index in a VSIB operand
    lambda: x86gen.forms.VEX_VGATHERDPS_XMM_VM32X_XMM(R["xmm1"], mem(R["rax"], R["rcx"], 4), R["xmm3"]),
    lambda: x86gen.assemble("vgatherdps xmm1, [rax+ymm2*4], xmm3"),          # vm32x takes an xmm index, not ymm
    lambda: x86gen.assemble("vgatherdps xmm1, qword ptr [rax+xmm2*4], xmm3"),  # dword elements (GNU as: size mismatch)
    lambda: x86gen.assemble("vgatherdps xmm1, [rip+xmm2], xmm3"),            # no rip-relative VSIB
    lambda: x86gen.assemble("vgatherdps xmm1, [0x10], xmm3"),                # no index at all
])
def test_vsib_and_general_memory_operands_are_kept_apart(call):
    with pytest.raises(x86gen.EncodeError):
        call()


# --- AMX tile registers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text, want", [
    ("tdpbssd tmm1, tmm2, tmm3", "c4e2635eca"),      # GNU as: c4 e2 63 5e ca (tmm3 in VEX.vvvv, tmm2 in ModRM.rm)
    ("tdpbf16ps tmm7, tmm0, tmm6", "c4e24a5cf8"),    # c4 e2 4a 5c f8
    ("tilerelease", "c4e27849c0"),                   # c4 e2 78 49 c0 (a fixed ModRM byte)
    ("ldtilecfg [r9+rax*2]", "c4c278490441"),        # c4 c2 78 49 04 41
    ("tilezero tmm5", "c4e27b49e8"),                 # c4 e2 7b 49 e8 (11:rrr:000: tmm5 in the fixed byte's reg field)
    ("tilezero tmm0", "c4e27b49c0"),
])
def test_amx_forms_match_gnu_as(text, want):
    assert x86gen.assemble(text).hex() == want


@pytest.mark.parametrize("text", ["tdpbssd tmm1, tmm1, tmm3", "tdpbssd tmm1, tmm2, tmm1", "tdpbuud tmm4, tmm2, tmm2"])
def test_amx_tiles_must_be_distinct(text):
    """SDM Vol.2 TDPBSSD (AMX-E4): #UD unless the three tiles differ (GNU as: "all tmm registers must be distinct")."""
    with pytest.raises(x86gen.DistinctRegistersError, match="tile registers must all be different"):
        x86gen.assemble(text)
    mn, ops = parse_text_line(text)
    with pytest.raises(x86gen.DistinctRegistersError):
        x86gen.select(mn, *ops)(*ops)


def test_tile_file_has_eight_registers():
    assert [r.name for r in R.values() if r.kind == "tmm"] == [f"tmm{i}" for i in range(8)]
    assert x86gen.tmm7 is R["tmm7"]


@pytest.mark.parametrize("text, want", [
    ("tileloadd tmm1, [rax]", "c4e27b4b0c20"),                  # GNU as: c4 e2 7b 4b 0c 20 (SIB: no index, base rax)
    ("tileloadd tmm1, [r13+rcx*1]", "c4c27b4b4c0d00"),          # c4 c2 7b 4b 4c 0d 00
    ("tilestored [rsp+r8*1+0x10], tmm2", "c4a27a4b540410"),     # c4 a2 7a 4b 54 04 10
    ("tileloaddt1 tmm3, [rbx*2+0x40]", "c4e2794b1c5d40000000"),  # c4 e2 79 4b 1c 5d 40 00 00 00
    ("tileloadd tmm1,[r13+riz*1+0x0]", "c4c27b4b4c2500"),       # objdump's spelling of [r13] with a SIB byte
])
def test_amx_sibmem_always_has_a_sib_byte(text, want):
    """sibmem (SDM Vol.2 TILELOADD/TILESTORED): the address is encoded with a SIB byte even where ModRM alone would
    do (iced decodes `c4 e2 7b 4b 08`, [rax] without SIB, as invalid)."""
    assert x86gen.assemble(text).hex() == want


def test_amx_sibmem_refuses_rip_relative():
    with pytest.raises(OperandError, match="RIP-relative address has no SIB byte"):
        x86gen.assemble("tileloadd tmm1, [rip+0x10]")
    with pytest.raises(OperandError):
        x86gen.forms.VEX_TILELOADD_TMM_SIBMEM(R["tmm1"], mem(R["rip"], disp=0x10))


def test_with_sib_keeps_the_address():
    """`Mem.with_sib` gives the same address (iced decodes both to it), one byte longer where ModRM alone did."""
    for base in [R[n] for n in ("rax", "rbp", "r12", "r13", "r15")]:
        for disp in (0, 1, -0x80, 0x1000):
            m = mem(base, disp=disp, size=32)
            plain, sib = x86gen.forms.MOV_R32_RM32(R["eax"], m), x86gen.forms.MOV_R32_RM32(R["eax"], m.with_sib())
            a, b = I.Decoder(64, plain).decode(), I.Decoder(64, sib).decode()
            assert (a.memory_base, a.memory_index, a.memory_displacement) == (b.memory_base, b.memory_index, b.memory_displacement)
            assert len(sib) == len(plain) + (base.lo != 4)


def test_spec_register_in_a_fixed_modrm_byte_needs_its_reg_field_clear(tmp_path):
    """`@reg` with a fixed ModRM byte ORs the register into bits 5:3, so the byte must have 000 there."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from codegen import spec
    p = tmp_path / "s.yaml"
    p.write_text("tilezero:\n  cpuid: AMX_TILE\n  forms:\n  - W:tmm@reg | VEX.128.F2.0F38.W0 49 C8\n")
    with pytest.raises(spec.SpecError, match="reg field is not 000"):
        spec.load(str(p))
    p.write_text("tilezero:\n  cpuid: AMX_TILE\n  forms:\n  - W:tmm@reg | VEX.128.F2.0F38.W0 49 C0\n")
    (f,) = spec.load(str(p))
    assert f.id == "VEX_TILEZERO_TMM" and f.operands[0].loc == "reg" and f.modrm == "C0"


# --- AMD 3DNow! ------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, want", [
    ("pfadd mm0, qword ptr [rax+8]", "0f0f40089e"),              # GNU as: 0f 0f 40 08 9e
    ("pfadd mm0, mm1", "0f0fc19e"),                              # 0f 0f c1 9e
    ("pi2fw mm0, qword ptr [r8]", "410f0f000c"),                 # 41 0f 0f 00 0c (iced's Encoder drops the 41)
    ("pfmul mm2, [rip+0x10]", "0f0f1510000000b4"),               # 0f 0f 15 10 00 00 00 b4: disp32 from the suffix's end
    ("pswapd mm7, [r13+rax*4+0x1000]", "410f0fbc8500100000bb"),  # 41 0f 0f bc 85 00 10 00 00 bb
    ("pavgusb mm3, [rsp]", "0f0f1c24bf"),                        # 0f 0f 1c 24 bf
])
def test_3dnow_suffix_follows_modrm_sib_and_displacement(text, want):
    """3DNow! (AMD APM Vol.3 1.2.7): 0F 0F ModRM [SIB] [disp] and the operation's opcode byte last."""
    assert x86gen.assemble(text).hex() == want


def test_3dnow_rip_relative_target_counts_the_suffix():
    """A RIP-relative address counts from the end of the instruction, after the suffix byte (AMD APM Vol.3 1.2.7)."""
    data = x86gen.encode("pfadd", R["mm1"], mem(R["rip"], disp=0x20, size=64))
    ins = I.Decoder(64, data, ip=0x1000).decode()
    assert ins.code == I.Code.D3NOW_PFADD_MM_MMM64 and ins.memory_displacement == 0x1000 + len(data) + 0x20


def test_spec_3dnow_suffix_needs_0f_0f_r(tmp_path):
    """`0F 0F /r XX` is the 3DNow! form (kind d3now, iced's D3NOW_ id); a byte after another /r form is refused."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from codegen import spec
    p = tmp_path / "s.yaml"
    p.write_text("pfadd:\n  cpuid: D3NOW\n  forms:\n  - RW:mm, mm/m64 | 0F 0F /r 9E\n")
    (f,) = spec.load(str(p))
    assert (f.id, f.encoding_kind, f.suffix, f.length) == ("D3NOW_PFADD_MM_MMM64", "d3now", 0x9E, 4)
    p.write_text("paddw:\n  cpuid: MMX\n  forms:\n  - RW:mm, mm/m64 | 0F FD /r 9E\n")
    with pytest.raises(spec.SpecError, match="unknown token '9E'"):
        spec.load(str(p))


# --- Intel MPX -------------------------------------------------------------------------------------


def test_bound_register_file_has_four_registers():
    assert [r.name for r in R.values() if r.kind == "bnd"] == [f"bnd{i}" for i in range(4)]
    assert x86gen.bnd3 is R["bnd3"] and all(R[f"bnd{i}"].rex_r == R[f"bnd{i}"].rex_b == 0 for i in range(4))


@pytest.mark.parametrize("text, want", [
    ("bndmk bnd0, [rax+8]", "f30f1b4008"),                      # GNU as: f3 0f 1b 40 08
    ("bndmov bnd1, bnd2", "660f1aca"),                          # 66 0f 1a ca
    ("bndcl bnd0, rax", "f30f1ac0"),                            # f3 0f 1a c0 (r64, no REX.W)
    ("bndcu bnd3, [r9+rcx*4+0x10]", "f2410f1a5c8910"),          # f2 41 0f 1a 5c 89 10
    ("bndcn bnd2, r15", "f2410f1bd7"),                          # f2 41 0f 1b d7
    ("bndmov bnd1, [rip+0x10]", "660f1a0d10000000"),            # 66 0f 1a 0d 10 00 00 00
    ("bndmov xmmword ptr [r8], bnd3", "66410f1b18"),            # 66 41 0f 1b 18
    ("bndldx bnd0, [rax+rbx]", "0f1a0418"),                     # 0f 1a 04 18
    ("bndstx [r12+r13*1+0x40], bnd1", "430f1b4c2c40"),          # 43 0f 1b 4c 2c 40
    ("bndldx bnd2, [rbx*1+0x100]", "0f1a141d00010000"),         # 0f 1a 14 1d 00 01 00 00: an index, no base
    ("bndmk bnd1, [rbp]", "f30f1b4d00"),                        # f3 0f 1b 4d 00
    ("bnd jmp rax", "f2ffe0"),                                  # f2 ff e0: the prefix word still
])
def test_mpx_forms_give_gnu_as_bytes(text, want):
    assert x86gen.assemble(text).hex() == want


@pytest.mark.parametrize("text, match", [
    ("bndmk bnd0, [rip+8]", "RIP-relative"),               # #UD (SDM Vol.2 BNDMK); GNU as: cannot be used here
    ("bndldx bnd0, [rip+8]", "RIP-relative"),              # (SDM Vol.2 BNDLDX)
    ("bndstx [rip], bnd0", "RIP-relative"),
    ("bndldx bnd0, [rax+rbx*2]", "scale"),                 # the scale is ignored (GNU as: warning, and encodes it)
    ("bndmk bnd0, [eax]", "32-bit address"),               # GNU as: 32-bit address isn't allowed in 64-bit MPX
    ("bndcl bnd0, [eax]", "32-bit address"),
    ("bndcl bnd0, eax", "no form"),                        # GNU as: operand size mismatch
])
def test_mpx_refuses_what_64_bit_mode_cannot_encode(text, match):
    with pytest.raises(OperandError, match=match):
        x86gen.assemble(text)
