"""Forms iced-x86 1.21 does not know, checked by llvm-mc 22 (isa/README.md, `oracle: llvm-mc-22`): USER_MSR, MSR_IMM,
MOVRS and its AVX10.2 EVEX loads, AMX-MOVRS, AMX-FP8, AMX-TF32, AMX-AVX512 and the AVX10.2 EVEX forms of SM4.

Expected bytes: llvm-mc 22 (``llvm-mc-22 -triple=x86_64 -x86-asm-syntax=intel -output-asm-variant=1 -show-encoding``)
on the text of each line, pasted from its output; `test_pasted_bytes_match_llvm_mc_22` runs it again on the table
where it is installed. The one line LLVM 22 refuses (an MSR address of 0x80000000 or more, which it reads as signed)
has GNU as's bytes (binutils' testsuite, gas/i386/x86-64-user_msr.d). None of it comes from x86gen.
tests/test_fuzz_llvm.py fuzzes every such form against llvm-mc-22 and llvm-objdump-22 over many more operands.
"""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

import x86gen
from x86gen.syntax import parse_text_line

# (Intel text, llvm-mc-22's bytes)
CASES = [
    # USER_MSR: the register forms have no REX.W (d64), the immediate ones are VEX map 7 (C4 .7)
    ("urdmsr rax, rbx", "f2 0f 38 f8 c3"),
    ("urdmsr r15, r8", "f2 45 0f 38 f8 f8"),
    ("uwrmsr rax, rbx", "f3 0f 38 f8 c3"),
    ("uwrmsr r9, rdx", "f3 44 0f 38 f8 ca"),
    ("urdmsr rax, 0x1b01", "c4 e7 7b f8 c0 01 1b 00 00"),
    ("urdmsr r12, -1", "c4 c7 7b f8 c4 ff ff ff ff"),
    ("uwrmsr 0x1b01, r9", "c4 c7 7a f8 c1 01 1b 00 00"),
    # MSR_IMM
    ("rdmsr rax, 0x12345678", "c4 e7 7b f6 c0 78 56 34 12"),
    ("rdmsr r9, 0x7fffffff", "c4 c7 7b f6 c1 ff ff ff 7f"),
    ("wrmsrns 0x12345678, r9", "c4 c7 7a f6 c1 78 56 34 12"),
    # MOVRS
    ("movrs al, byte ptr [rax]", "0f 38 8a 00"),
    ("movrs ah, byte ptr [rax]", "0f 38 8a 20"),
    ("movrs sil, byte ptr [rax]", "40 0f 38 8a 30"),
    ("movrs r9b, byte ptr [r9]", "45 0f 38 8a 09"),
    ("movrs ax, word ptr [rax]", "66 0f 38 8b 00"),
    ("movrs eax, dword ptr [rip + 16]", "0f 38 8b 05 10 00 00 00"),
    ("movrs r15, qword ptr [r12 + 4*r13 - 8]", "4f 0f 38 8b 7c ac f8"),
    ("prefetchrst2 byte ptr [rax]", "0f 18 20"),
    ("prefetchrst2 byte ptr [r8 + 4]", "41 0f 18 60 04"),
    ("vmovrsb xmm1, xmmword ptr [rax]", "62 f5 7f 08 6f 08"),
    ("vmovrsb ymm1 {k1} {z}, ymmword ptr [rax + 64]", "62 f5 7f a9 6f 48 02"),
    ("vmovrsw xmm1 {k1} {z}, xmmword ptr [rax + 16]", "62 f5 ff 89 6f 48 01"),
    ("vmovrsd zmm1, zmmword ptr [rax]", "62 f5 7e 48 6f 08"),
    ("vmovrsq zmm1 {k1} {z}, zmmword ptr [rax + 64]", "62 f5 fe c9 6f 48 01"),
    ("vmovrsb xmm31 {k7} {z}, xmmword ptr [r15]", "62 45 7f 8f 6f 3f"),
    # AMX-MOVRS: sibmem, [rax] with a SIB byte
    ("tileloaddrs tmm1, [rax + 2*rbx + 8]", "c4 e2 7b 4a 4c 58 08"),
    ("tileloaddrs tmm1, [rax]", "c4 e2 7b 4a 0c 20"),
    ("tileloaddrs tmm1, [r12 + 8*r13 + 4096]", "c4 82 7b 4a 8c ec 00 10 00 00"),
    ("tileloaddrst1 tmm1, [rax + 2*rbx + 8]", "c4 e2 79 4a 4c 58 08"),
    # AMX-FP8 (VEX map 5), AMX-TF32
    ("tdpbf8ps tmm1, tmm2, tmm3", "c4 e5 60 fd ca"),
    ("tdpbhf8ps tmm1, tmm2, tmm3", "c4 e5 63 fd ca"),
    ("tdphbf8ps tmm1, tmm2, tmm3", "c4 e5 62 fd ca"),
    ("tdphf8ps tmm1, tmm2, tmm3", "c4 e5 61 fd ca"),
    ("tmmultf32ps tmm1, tmm2, tmm3", "c4 e2 61 48 ca"),
    # AMX-AVX512: the row in a 32-bit register (EVEX.vvvv) or imm8
    ("tcvtrowd2ps zmm1, tmm2, ecx", "62 f2 76 48 4a ca"),
    ("tcvtrowd2ps zmm17, tmm7, r15d", "62 e2 06 48 4a cf"),
    ("tcvtrowd2ps zmm1, tmm2, 5", "62 f3 7e 48 07 ca 05"),
    ("tcvtrowps2bf16h zmm1, tmm2, ecx", "62 f2 77 48 6d ca"),
    ("tcvtrowps2bf16h zmm1, tmm2, 5", "62 f3 7f 48 07 ca 05"),
    ("tcvtrowps2bf16l zmm1, tmm2, ecx", "62 f2 76 48 6d ca"),
    ("tcvtrowps2bf16l zmm1, tmm2, 5", "62 f3 7e 48 77 ca 05"),
    ("tcvtrowps2phh zmm1, tmm2, ecx", "62 f2 74 48 6d ca"),
    ("tcvtrowps2phh zmm1, tmm2, 5", "62 f3 7c 48 07 ca 05"),
    ("tcvtrowps2phl zmm1, tmm2, ecx", "62 f2 75 48 6d ca"),
    ("tcvtrowps2phl zmm1, tmm2, 5", "62 f3 7f 48 77 ca 05"),
    ("tilemovrow zmm1, tmm2, r9d", "62 f2 35 48 4a ca"),
    ("tilemovrow zmm1, tmm2, 255", "62 f3 7d 48 07 ca ff"),
    # SM4: VEX where the registers allow it (as llvm-mc chooses), EVEX for 16-31, zmm or {evex}
    ("vsm4key4 xmm1, xmm2, xmm3", "c4 e2 6a da cb"),
    ("vsm4key4 xmm21, xmm2, xmm3", "62 e2 6e 08 da eb"),
    ("vsm4key4 ymm21, ymm2, ymm3", "62 e2 6e 28 da eb"),
    ("{evex} vsm4key4 xmm1, xmm2, xmm3", "62 f2 6e 08 da cb"),
    ("vsm4key4 zmm1, zmm2, zmm3", "62 f2 6e 48 da cb"),
    ("vsm4rnds4 zmm1, zmm2, zmmword ptr [rax + 64]", "62 f2 6f 48 da 48 01"),
    ("vsm4rnds4 xmm1, xmm2, xmm3", "c4 e2 6b da cb"),
    ("vsm4rnds4 ymm1, ymm22, ymmword ptr [rax + 32]", "62 f2 4f 20 da 48 01"),
]

# GNU as (binutils' gas/i386/x86-64-user_msr.d: `urdmsr $0x80000000, %r12`): the MSR address is an unsigned imm32;
# LLVM 22 refuses it as written and gives these bytes for -0x80000000
GNU_CASES = [("urdmsr r12, 0x80000000", "c4 c7 7b f8 c4 00 00 00 80"),
             ("uwrmsr 0x80000000, r12", "c4 c7 7a f8 c4 00 00 00 80")]


@pytest.mark.parametrize("text, want", CASES + GNU_CASES, ids=[t for t, _ in CASES + GNU_CASES])
def test_text_gives_llvm_mc_22_bytes(text, want):
    assert x86gen.assemble(text).hex(" ") == want
    if not text.startswith("{"):   # the same through encode(mnemonic, *operands)
        mnemonic, ops = parse_text_line(text)
        assert x86gen.encode(mnemonic, *ops).hex(" ") == want


@pytest.mark.parametrize("text, form_id", [
    ("urdmsr rax, rbx", "URDMSR_R64_R64"),
    ("urdmsr rax, 5", "VEX_URDMSR_R64_IMM32"),
    ("uwrmsr 5, rax", "VEX_UWRMSR_IMM32_R64"),
    ("rdmsr rax, 5", "VEX_RDMSR_R64_IMM32"),
    ("rdmsr", "RDMSR"),
    ("wrmsrns 5, rax", "VEX_WRMSRNS_IMM32_R64"),
    ("wrmsrns", "WRMSRNS"),
    ("movrs cl, byte ptr [rax]", "MOVRS_R8_M8"),
    ("vmovrsq ymm1, ymmword ptr [rax]", "EVEX_VMOVRSQ_YMM_K1Z_M256"),
    ("tilemovrow zmm1, tmm2, 3", "EVEX_TILEMOVROW_ZMM_TMM_IMM8"),
    ("vsm4key4 xmm1, xmm2, xmm3", "VEX_VSM4KEY4_XMM_XMM_XMMM128"),
    ("vsm4key4 xmm17, xmm2, xmm3", "EVEX_VSM4KEY4_XMM_XMM_XMMM128"),
    ("vsm4rnds4 zmm1, zmm2, zmm3", "EVEX_VSM4RNDS4_ZMM_ZMM_ZMMM512"),
])
def test_text_chooses_the_form(text, form_id):
    mnemonic, ops = parse_text_line(text)
    assert x86gen.Instruction(mnemonic, *ops).form.id == form_id


@pytest.mark.parametrize("text, error, match", [
    # USER_MSR has no 32-bit form (LLVM 22 and GNU as refuse it too), and its register forms no memory operand (with
    # memory, F2/F3 0F 38 F8 are ENQCMD/ENQCMDS)
    ("urdmsr eax, ecx", x86gen.OperandError, "no form of 'urdmsr'"),
    ("uwrmsr rax, qword ptr [rax]", x86gen.OperandError, "no form of 'uwrmsr'"),
    ("urdmsr rax, 0x100000000", x86gen.ImmediateRangeError, "does not fit"),
    ("rdmsr eax, 5", x86gen.OperandError, "no form of 'rdmsr'"),
    # MOVRS loads from memory only; ah cannot go with REX
    ("movrs eax, ecx", x86gen.OperandError, "no form of 'movrs'"),
    ("movrs ah, byte ptr [r8]", x86gen.OperandError, "ah/bh/ch/dh"),
    ("prefetchrst2 eax", x86gen.OperandError, "prefetchrst2"),
    # no broadcast for vmovrs*, no masking for the SM4 EVEX forms, AMX-AVX512 or a 64-bit row register
    ("vmovrsd zmm1 {k1}, dword ptr [rax]{1to16}", x86gen.EvexOperandError, "takes no broadcast"),
    ("vsm4key4 xmm1 {k1}, xmm2, xmm3", x86gen.EvexOperandError, "takes no mask"),
    ("tcvtrowd2ps zmm1 {k1}, tmm2, ecx", x86gen.EvexOperandError, "takes no mask"),
    ("tilemovrow zmm1, tmm2, rcx", x86gen.OperandError, "no form of 'tilemovrow'"),
    ("tilemovrow zmm1, tmm2, 256", x86gen.ImmediateRangeError, "does not fit"),
    # AMX: #UD unless the tiles differ (binutils marks tdpbf8ps/tmmultf32ps with a repeated tile bad; llvm-mc 22 does
    # not check); a sibmem needs a SIB byte, which a RIP-relative address has not (llvm-mc 22 refuses it too)
    ("tdpbf8ps tmm1, tmm1, tmm3", x86gen.DistinctRegistersError, "tile registers must all be different"),
    ("tmmultf32ps tmm1, tmm2, tmm1", x86gen.DistinctRegistersError, "tile registers must all be different"),
    ("tileloaddrs tmm1, [rip + 8]", x86gen.OperandError, "SIB"),
    # the ttransposed/ttmmultf32ps of AMX-TRANSPOSE, withdrawn (LLVM 22 does not know them)
    ("ttmmultf32ps tmm1, tmm2, tmm3", x86gen.UnknownMnemonicError, "unknown mnemonic"),
])
def test_refusals(text, error, match):
    with pytest.raises(error, match=match):
        x86gen.assemble(text)


def test_reserved_nop_0f18_refuses_prefetchrst2():
    """0F 18 /4 with memory is prefetchrst2 (llvm-objdump-22 decodes 0f 18 20, and 44/66/48 0f 18 20, so), so the
    reserved-NOP forms of 0F 18 refuse ModRM.reg 4 with memory; with a register r/m they take it (0f 18 e0 is no
    prefetch). Bytes: iced-x86 1.21's encoder, RESERVEDNOP_RM32_R32_0F18 eax, esp."""
    nop = x86gen.get_form("RESERVEDNOP_RM32_R32_0F18")
    for reg in (x86gen.esp, x86gen.r12d):
        with pytest.raises(x86gen.OperandError, match="takes registers whose"):
            nop(x86gen.mem(x86gen.rax, size=32), reg)
    assert nop(x86gen.eax, x86gen.esp).hex() == "0f18e0"


@pytest.mark.skipif(not shutil.which("llvm-mc-22"), reason="llvm-mc-22 not installed")
def test_pasted_bytes_match_llvm_mc_22():
    out = subprocess.run(["llvm-mc-22", "-triple=x86_64", "-x86-asm-syntax=intel", "-output-asm-variant=1",
                          "-show-encoding"], input="\n".join(t for t, _ in CASES) + "\n", capture_output=True, text=True)
    assert not out.stderr
    got = [" ".join(f"{int(b, 16):02x}" for b in m.group(1).split(","))
           for m in re.finditer(r"# encoding: \[([0-9a-fx,]+)\]", out.stdout)]
    assert got == [want for _, want in CASES]
