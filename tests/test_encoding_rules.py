"""One named test per x86-64 encoding rule, with expected bytes from GNU as.

The bytes below were produced by GNU as 2.40 (``as --64``, ``.intel_syntax noprefix``, read back
with ``objdump -d -M intel``); LLVM 14's ``llvm-mc --triple=x86_64 --x86-asm-syntax=intel
-show-encoding`` gives the same bytes for every line. `test_pasted_bytes_match_gnu_as` and
`test_pasted_bytes_match_llvm_mc` re-run both tools on the table (skipped if they are absent), so
the pasted bytes cannot drift from what the tools say.

Each entry is checked twice: `x86gen.assemble(text)` and `x86gen.encode(mnemonic, *operands)` with
operand objects.
"""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

import x86gen
from x86gen import (
    ah,
    al,
    ax,
    bh,
    bpl,
    ch,
    cl,
    cx,
    dh,
    dil,
    eax,
    ecx,
    mem,
    r8,
    r8b,
    r8w,
    r9,
    r9b,
    r9d,
    r10w,
    r11,
    r12,
    r13,
    r13d,
    r14,
    r15,
    rax,
    rbp,
    rcx,
    rdi,
    rip,
    rsp,
    sil,
    spl,
    xmm0,
    xmm1,
    xmm2,
    xmm3,
    xmm8,
    xmm9,
    xmm12,
    xmm13,
    xmm15,
    ymm0,
    ymm1,
    ymm2,
    ymm3,
    ymm8,
)

d32, b8, x128, y256, q64 = 32, 8, 128, 256, 64

# rule -> [(Intel text, bytes from GNU as 2.40 (= llvm-mc 14), (mnemonic, *operands) for x86gen.encode)]
RULES: dict[str, list[tuple[str, str, tuple]]] = {
    "rex_w_for_64bit_operands": [
        ("add rax, rcx", "48 01 c8", ("add", rax, rcx)),
        ("movsx rax, dl", "48 0f be c2", ("movsx", rax, x86gen.dl)),
    ],
    "rex_r_extends_modrm_reg": [
        ("add eax, r9d", "44 01 c8", ("add", eax, r9d)),
    ],
    "rex_x_extends_sib_index": [
        ("mov eax, dword ptr [rax + r9*4]", "42 8b 04 88", ("mov", eax, mem(rax, r9, 4, size=d32))),
    ],
    "rex_b_extends_modrm_rm_and_sib_base": [
        ("add r9d, eax", "41 01 c1", ("add", r9d, eax)),
        ("mov eax, dword ptr [r9]", "41 8b 01", ("mov", eax, mem(r9, size=d32))),
    ],
    "rex_wrxb_together": [
        ("mov r15, qword ptr [r14 + r13*8 + 0x10]", "4f 8b 7c ee 10", ("mov", r15, mem(r14, r13, 8, 0x10, size=q64))),
    ],
    "rex_forced_for_spl_bpl_sil_dil": [
        ("mov sil, al", "40 88 c6", ("mov", sil, al)),
        ("mov byte ptr [rax], dil", "40 88 38", ("mov", mem(rax, size=b8), dil)),
        ("movzx eax, spl", "40 0f b6 c4", ("movzx", eax, spl)),
        ("add bpl, 1", "40 80 c5 01", ("add", bpl, 1)),
    ],
    "ah_ch_dh_bh_without_rex": [
        ("mov ah, al", "88 c4", ("mov", ah, al)),
        ("movzx eax, ah", "0f b6 c4", ("movzx", eax, ah)),
    ],
    "operand_size_prefix_66": [
        ("add ax, cx", "66 01 c8", ("add", ax, cx)),
        ("mov ax, 0x1234", "66 b8 34 12", ("mov", ax, 0x1234)),
    ],
    # x86gen has no legacy SSE forms (66/F2/F3 0F ..): the 66 prefix with REX shows the same ordering rule.
    "prefix_66_before_rex": [
        ("movsx r8w, r9b", "66 45 0f be c1", ("movsx", r8w, r9b)),
        ("add r8w, 1", "66 41 83 c0 01", ("add", r8w, 1)),
        ("movzx r10w, byte ptr [r11]", "66 45 0f b6 13", ("movzx", r10w, mem(r11, size=b8))),
    ],
    "8bit_opcode_variants": [
        ("add al, cl", "00 c8", ("add", al, cl)),
        ("add eax, ecx", "01 c8", ("add", eax, ecx)),
        ("mov byte ptr [rdi], 1", "c6 07 01", ("mov", mem(rdi, size=b8), 1)),
        ("mov dword ptr [rdi], 1", "c7 07 01 00 00 00", ("mov", mem(rdi, size=d32), 1)),
        ("add cl, 1", "80 c1 01", ("add", cl, 1)),
    ],
    # xchg (SDM Vol.2 XCHG, NOP): the accumulator forms 90+r take the accumulator second, so GNU as and llvm-mc exchange
    # the operands for them; 90 with the accumulator is NOP (xchg eax, eax is 87 c0: it clears rax[63:32]); a register
    # before memory is the r/m form with the operands exchanged
    "xchg_accumulator_and_operand_order": [
        ("xchg eax, ecx", "91", ("xchg", eax, ecx)),
        ("xchg ecx, eax", "91", ("xchg", ecx, eax)),
        ("xchg eax, eax", "87 c0", ("xchg", eax, eax)),
        ("xchg ax, ax", "66 90", ("xchg", ax, ax)),
        ("xchg rax, rax", "90", ("xchg", rax, rax)),
        ("xchg r8, rax", "49 90", ("xchg", r8, rax)),
        ("xchg rax, r8", "49 90", ("xchg", rax, r8)),
        ("xchg cl, byte ptr [rax]", "86 08", ("xchg", cl, mem(rax, size=b8))),
        ("xchg dword ptr [rdi], r9d", "44 87 0f", ("xchg", mem(rdi, size=d32), r9d)),
        ("xchg r9d, dword ptr [rdi]", "44 87 0f", ("xchg", r9d, mem(rdi, size=d32))),
    ],
    "rsp_r12_base_needs_sib": [
        ("mov eax, dword ptr [rsp]", "8b 04 24", ("mov", eax, mem(rsp, size=d32))),
        ("mov eax, dword ptr [r12]", "41 8b 04 24", ("mov", eax, mem(r12, size=d32))),
        ("mov eax, dword ptr [rsp + 8]", "8b 44 24 08", ("mov", eax, mem(rsp, disp=8, size=d32))),
    ],
    "rbp_r13_base_needs_disp8_zero": [
        ("mov eax, dword ptr [rbp]", "8b 45 00", ("mov", eax, mem(rbp, size=d32))),
        ("mov eax, dword ptr [r13]", "41 8b 45 00", ("mov", eax, mem(r13, size=d32))),
        ("mov eax, dword ptr [rbp + rax]", "8b 44 05 00", ("mov", eax, mem(rbp, rax, size=d32))),
        ("mov eax, dword ptr [r13 + rax*2]", "41 8b 44 45 00", ("mov", eax, mem(r13, rax, 2, size=d32))),
    ],
    "r12_is_a_valid_index": [
        ("mov eax, dword ptr [rax + r12]", "42 8b 04 20", ("mov", eax, mem(rax, r12, size=d32))),
        ("mov eax, dword ptr [r12 + r12*8]", "43 8b 04 e4", ("mov", eax, mem(r12, r12, 8, size=d32))),
    ],
    "disp8_disp32_edges": [
        ("mov eax, dword ptr [rax + 127]", "8b 40 7f", ("mov", eax, mem(rax, disp=127, size=d32))),
        ("mov eax, dword ptr [rax + 128]", "8b 80 80 00 00 00", ("mov", eax, mem(rax, disp=128, size=d32))),
        ("mov eax, dword ptr [rax - 128]", "8b 40 80", ("mov", eax, mem(rax, disp=-128, size=d32))),
        ("mov eax, dword ptr [rax - 129]", "8b 80 7f ff ff ff", ("mov", eax, mem(rax, disp=-129, size=d32))),
    ],
    # `[rip + 0x10]`: the displacement as written, counted from the end of the instruction (after
    # any immediate), as GNU as and llvm-mc encode it.
    "rip_relative": [
        ("mov eax, dword ptr [rip + 0x10]", "8b 05 10 00 00 00", ("mov", eax, mem(rip, disp=0x10, size=d32))),
        ("mov dword ptr [rip + 0x10], 1", "c7 05 10 00 00 00 01 00 00 00", ("mov", mem(rip, disp=0x10, size=d32), 1)),
        ("add byte ptr [rip - 8], 5", "80 05 f8 ff ff ff 05", ("add", mem(rip, disp=-8, size=b8), 5)),
    ],
    "vex2_when_legal": [
        ("vaddps xmm0, xmm1, xmm2", "c5 f0 58 c2", ("vaddps", xmm0, xmm1, xmm2)),
        ("vaddps xmm8, xmm1, xmm2", "c5 70 58 c2", ("vaddps", xmm8, xmm1, xmm2)),      # R̄ exists in C5
        ("vaddps xmm0, xmm9, xmm2", "c5 b0 58 c2", ("vaddps", xmm0, xmm9, xmm2)),      # vvvv is 4 bits
        ("vmovups xmm0, xmm8", "c5 78 11 c0", ("vmovups", xmm0, xmm8)),                # 11 /r keeps xmm8 out of rm
    ],
    "vex3_when_rm_index_w1_or_map_need_it": [
        ("vaddps xmm0, xmm1, xmm8", "c4 c1 70 58 c0", ("vaddps", xmm0, xmm1, xmm8)),               # B̄
        ("vaddps ymm0, ymm1, ymm8", "c4 c1 74 58 c0", ("vaddps", ymm0, ymm1, ymm8)),               # B̄, ymm
        ("vaddps xmm0, xmm1, xmmword ptr [r8]", "c4 c1 70 58 00", ("vaddps", xmm0, xmm1, mem(r8, size=x128))),
        ("vaddps xmm0, xmm1, xmmword ptr [rax + r9]", "c4 a1 70 58 04 08", ("vaddps", xmm0, xmm1, mem(rax, r9, size=x128))),  # X̄
        ("vmovq xmm0, rax", "c4 e1 f9 6e c0", ("vmovq", xmm0, rax)),                               # W1
        ("vpmulld xmm0, xmm1, xmm2", "c4 e2 71 40 c2", ("vpmulld", xmm0, xmm1, xmm2)),             # 0F38
        ("vroundps xmm0, xmm1, 4", "c4 e3 79 08 c1 04", ("vroundps", xmm0, xmm1, 4)),              # 0F3A
    ],
    "vex_l_and_w": [
        ("vaddps ymm0, ymm1, ymm2", "c5 f4 58 c2", ("vaddps", ymm0, ymm1, ymm2)),                  # L=1
        ("vfmadd213ps xmm0, xmm1, xmm2", "c4 e2 71 a8 c2", ("vfmadd213ps", xmm0, xmm1, xmm2)),     # W0
        ("vfmadd213pd xmm0, xmm1, xmm2", "c4 e2 f1 a8 c2", ("vfmadd213pd", xmm0, xmm1, xmm2)),     # W1
        ("vcvtsi2sd xmm0, xmm0, rax", "c4 e1 fb 2a c0", ("vcvtsi2sd", xmm0, xmm0, rax)),           # W1: 64-bit GPR
        ("vcvtsi2sd xmm0, xmm0, eax", "c5 fb 2a c0", ("vcvtsi2sd", xmm0, xmm0, eax)),              # W0
    ],
    "vex_vvvv": [
        ("vaddps xmm0, xmm15, xmm1", "c5 80 58 c1", ("vaddps", xmm0, xmm15, xmm1)),
        ("vpsrldq xmm1, xmm2, 4", "c5 f1 73 da 04", ("vpsrldq", xmm1, xmm2, 4)),                    # /3: dest in vvvv
    ],
    "register_in_imm8_high_nibble": [
        ("vblendvps xmm0, xmm1, xmm2, xmm15", "c4 e3 71 4a c2 f0", ("vblendvps", xmm0, xmm1, xmm2, xmm15)),
        ("vpblendvb ymm0, ymm1, ymmword ptr [rdi], ymm3", "c4 e3 75 4c 07 30",
         ("vpblendvb", ymm0, ymm1, mem(rdi, size=y256), ymm3)),
    ],
    "shortest_form": [
        ("add eax, 1", "83 c0 01", ("add", eax, 1)),
        ("add eax, 1000", "05 e8 03 00 00", ("add", eax, 1000)),
        ("add ecx, 1000", "81 c1 e8 03 00 00", ("add", ecx, 1000)),
        ("add rax, -1", "48 83 c0 ff", ("add", rax, -1)),
        ("add al, 1", "04 01", ("add", al, 1)),
        ("mov rax, 1", "48 c7 c0 01 00 00 00", ("mov", rax, 1)),
        ("mov rax, 0x1122334455", "48 b8 55 44 33 22 11 00 00 00", ("mov", rax, 0x1122334455)),
        ("mov eax, 1", "b8 01 00 00 00", ("mov", eax, 1)),
        ("shl eax, 1", "d1 e0", ("shl", eax, 1)),
        ("shl eax, 5", "c1 e0 05", ("shl", eax, 5)),
        ("shl eax, cl", "d3 e0", ("shl", eax, cl)),
    ],
    # AMD XOP (AMD APM Vol.3 1.8): 8F R̄X̄B̄.mmmmm W.v̄v̄v̄v̄.L.pp, the 3-byte VEX layout with AMD's maps 8, 9, 0Ah; XOP.W
    # swaps ModRM.rm with vvvv (vprot* by register) or with is4 (vpcmov): registers only, GNU as takes W0; TBM and
    # the vpcom pseudo-ops (vpcomltb = vpcomb …, 0) too
    "xop_prefix_8f_and_w_operand_order": [
        ("vprotd xmm1, xmm2, 3", "8f e8 78 c2 ca 03", ("vprotd", xmm1, xmm2, 3)),
        ("vprotd xmm1, xmm2, xmm13", "8f e9 10 92 ca", ("vprotd", xmm1, xmm2, xmm13)),
        ("vprotd xmm1, xmm12, xmm3", "8f c9 60 92 cc", ("vprotd", xmm1, xmm12, xmm3)),
        ("vpcmov ymm1, ymm2, ymmword ptr [rax], ymm3", "8f e8 6c a2 08 30", ("vpcmov", ymm1, ymm2, mem(rax, size=y256), ymm3)),
        ("vpcmov ymm1, ymm2, ymm3, ymmword ptr [rax]", "8f e8 ec a2 08 30", ("vpcmov", ymm1, ymm2, ymm3, mem(rax, size=y256))),
        ("vpcmov xmm1, xmm2, xmm3, xmm12", "8f e8 68 a2 cb c0", ("vpcmov", xmm1, xmm2, xmm3, xmm12)),
        ("vpcomltb xmm1, xmm2, xmm3", "8f e8 68 cc cb 00", ("vpcomb", xmm1, xmm2, xmm3, 0)),
        ("blcfill eax, ecx", "8f e9 78 01 c9", ("blcfill", eax, ecx)),
        ("blcfill rax, qword ptr [rcx]", "8f e9 f8 01 09", ("blcfill", rax, mem(rcx, size=q64))),
        ("bextr eax, ecx, 0x1234", "8f ea 78 10 c1 34 12 00 00", ("bextr", eax, ecx, 0x1234)),
    ],
}

# Branches, from GNU as with labels (`jmp 1f` / `.skip 127, 0x90` / `1:` …), objdump addresses:
# (mnemonic, address of the branch, target, bytes)
BRANCHES = [
    ("jmp", 0x0, 0x81, "eb 7f"),                  # rel8 +127: short
    ("jmp", 0x81, 0x106, "e9 80 00 00 00"),       # +128 from a 5-byte jmp: near
    ("jmp", 0x184, 0x106, "eb 80"),               # rel8 -128: short
    ("jmp", 0x205, 0x186, "e9 7c ff ff ff"),      # -129 as rel8: near
    ("je", 0x20A, 0x28B, "74 7f"),
    ("je", 0x28B, 0x311, "0f 84 80 00 00 00"),
]
BRANCH_SOURCE = """
jmp 1f
.skip 127, 0x90
1:
jmp 2f
.skip 128, 0x90
2:
3:
.skip 126, 0x90
jmp 3b
4:
.skip 127, 0x90
jmp 4b
je 5f
.skip 127, 0x90
5:
je 6f
.skip 128, 0x90
6:
"""


def _hex(s: str) -> bytes: return bytes.fromhex(s)


@pytest.mark.parametrize("rule", list(RULES))
def test_rule(rule):
    for text, want, (mn, *ops) in RULES[rule]:
        assert x86gen.assemble(text).hex(" ") == _hex(want).hex(" "), text
        assert x86gen.encode(mn, *ops).hex(" ") == _hex(want).hex(" "), f"encode({mn}, {ops})"


def test_rule_branch_short_vs_near():
    for mn, ip, target, want in BRANCHES:
        assert x86gen.encode(mn, target, ip=ip).hex(" ") == _hex(want).hex(" "), f"{mn} {target:#x} at {ip:#x}"
        assert x86gen.assemble(f"{mn} {target:#x}", ip=ip).hex(" ") == _hex(want).hex(" ")


def test_rule_ah_ch_dh_bh_with_rex_raise():
    """ah..bh share their ModRM codes with spl..dil; with any REX prefix they mean spl..dil, so an
    instruction that needs REX (REX.W, r8-r15 anywhere, spl..dil) cannot name them."""
    for mn, *ops in [("mov", ah, sil), ("mov", ah, r8b), ("mov", r8b, ch), ("movzx", rax, ah), ("movzx", r13d, bh),
                     ("mov", ah, mem(r8, size=8)), ("mov", mem(rax, r9, size=8), dh), ("add", spl, ah)]:
        with pytest.raises(x86gen.OperandError, match="REX"):
            x86gen.encode(mn, *ops)
    for text in ("mov ah, sil", "movzx rax, ah", "mov byte ptr [r8], ah"):
        with pytest.raises(x86gen.OperandError):
            x86gen.assemble(text)


def test_rule_xchg_forms_encode_exactly_their_form():
    """A form encodes the instruction it names: the 90+r forms refuse the accumulator itself (90 is NOP, SDM Vol.2
    XCHG), the r/m forms keep the operand order they are given (iced-x86's encoder: 87 c8 for XCHG_RM32_R32(eax, ecx))."""
    for fid, ops in (("XCHG_R32_EAX", (eax, eax)), ("XCHG_R16_AX", (ax, ax)), ("XCHG_R64_RAX", (rax, rax))):
        with pytest.raises(x86gen.OperandError, match="NOP"):
            x86gen.get_form(fid)(*ops)
    assert x86gen.get_form("XCHG_RM32_R32")(eax, ecx).hex() == "87c8"   # iced-x86 1.21
    assert x86gen.get_form("XCHG_R32_EAX")(ecx, eax).hex() == "91"      # iced-x86 1.21
    assert x86gen.get_form("XCHG_RM16_R16")(ax, ax).hex() == "6687c0"   # iced-x86 1.21
    assert x86gen.Instruction("xchg", eax, ecx).encode().hex() == "91"  # GNU as 2.40, as encode
    assert x86gen.Instruction("xchg", ax, ax).form.id == "NOPW"
    with pytest.raises(x86gen.PrefixError):
        x86gen.assemble("lock xchg eax, ecx")   # lock needs a memory destination


def test_rule_reserved_nops_refuse_the_reg_values_of_other_instructions():
    """The reserved-NOP space 0F 0D, 0F 18-1F /r (RESERVEDNOP_*): a ModRM.reg value that is another instruction there
    is refused (`taken=`), the others encode (bytes from iced-x86 1.21's encoder); text `nop r/m, r` is 0F 19 /r."""
    f = x86gen.get_form
    assert f("RESERVEDNOP_RM32_R32_0F19")(eax, ecx).hex() == "0f19c8"
    assert f("RESERVEDNOP_RM64_R64_0F1F")(r9, x86gen.r10).hex() == "4d0f1fd1"          # reg field 2: no nop r/m64 (/0)
    assert f("RESERVEDNOP_RM16_R16_0F0D")(ax, cx).hex() == "660f0dc8"
    assert f("RESERVEDNOP_RM32_R32_0F18")(mem(rax, size=d32), x86gen.r13d).hex() == "440f1828"   # /5: no prefetch
    assert f("RESERVEDNOP_RM16_R16_0F1C")(mem(rax, size=16), ax).hex() == "660f1c00"   # 66: no cldemote (NP 0F 1C /0)
    assert x86gen.assemble("nop eax, ecx").hex() == "0f19c8"                          # iced-x86 1.21: RESERVEDNOP_RM32_R32_0F19
    assert x86gen.assemble("nop dword ptr [rax], esp").hex() == "0f1920"
    for fid, ops, why in (("RESERVEDNOP_RM32_R32_0F1F", (eax, x86gen.r8d), "ModRM.reg 0"),            # 0F 1F /0: nop r/m32
                          ("RESERVEDNOP_RM32_R32_0F18", (mem(rax, size=d32), ecx), "takes registers whose"),  # prefetcht0
                          # 0F 18 /4 with memory is MOVRS's prefetchrst2 (Intel ISE 319433; iced-x86 1.21 does not know
                          # it, llvm-objdump-22 decodes 44 0f 18 20 as prefetchrst2 byte ptr [rax]), REX.R or not
                          ("RESERVEDNOP_RM32_R32_0F18", (mem(rax, size=d32), x86gen.r12d), "takes registers whose"),
                          ("RESERVEDNOP_RM64_R64_0F0D", (mem(rax, size=q64), rcx), "takes no memory operand"),   # prefetchw
                          ("RESERVEDNOP_RM64_R64_0F1C", (mem(rax, size=q64), rax), "0F 1C /0")):               # cldemote
        with pytest.raises(x86gen.OperandError, match=why):
            f(fid)(*ops)


def test_rule_x87_aliases_encode_as_their_form_and_text_as_the_documented_one():
    """The undocumented x87 aliases iced-x86 decodes (DC D0+i fcom, DF C8+i fxch, …) are forms of their own (bytes from
    iced-x86 1.21's encoder); text and encode() keep choosing the documented opcode (GNU as 2.40: fcom st(2) = d8 d2)."""
    st = x86gen.REGISTERS
    assert x86gen.get_form("FCOM_ST0_STI_DCD0")(st["st0"], st["st2"]).hex() == "dcd2"
    assert x86gen.get_form("FXCH_ST0_STI_DFC8")(st["st0"], st["st7"]).hex() == "dfcf"
    assert x86gen.get_form("FSTP_STI_DFD8")(st["st3"]).hex() == "dfdb"
    assert x86gen.assemble("fcom st(2)").hex() == "d8d2"
    assert x86gen.encode("fxch", st["st0"], st["st7"]).hex() == "d9cf"


def test_rule_is5_register_and_imm4_share_imm8():
    """vpermil2ps/pd (/is5): imm8[7:4] is the fourth register, imm8[3:0] the imm4 (AMD APM Vol.4 VPERMIL2PS); bytes
    from GNU as 2.40 (= iced-x86 1.21's encoder)."""
    assert x86gen.assemble("vpermil2ps xmm1, xmm2, xmm3, xmm4, 3").hex() == "c4e36948cb43"
    assert x86gen.assemble("vpermil2pd ymm1, ymm2, ymm3, ymmword ptr [rax], 2").hex() == "c4e3ed490832"
    with pytest.raises(x86gen.ImmediateRangeError):
        x86gen.assemble("vpermil2ps xmm1, xmm2, xmm3, xmm4, 16")


def test_rule_wait_forms_take_prefixes_after_the_wait():
    """finit/fsave/fstsw… are 9B (WAIT) and the no-wait instruction (SDM Vol.2 FINIT/FNINIT); a segment override
    belongs to the second one, after 9B (bytes from iced-x86 1.21's encoder: FSAVE_M108BYTE fs:[rax])."""
    assert x86gen.assemble("fsave fs:[rax]").hex() == "9b64dd30"
    assert x86gen.assemble("fstenvw fs:[rax]").hex() == "9b6466d930"
    assert x86gen.get_form("FINIT")().hex() == "9bdbe3"
    assert x86gen.assemble("fnsave fs:[rax]").hex() == "64dd30"


def test_spec_taken_attribute(tmp_path):
    """`taken=` (the reserved-NOP space) is checked by the loader: a legacy /r form, values 0-7."""
    from codegen import spec
    p = tmp_path / "s.yaml"
    for line, err in (("N:r/m32, N:r32 | 0F 1F /r | taken=8", "expected"), ("N:r/m32 | 0F 1F /0 | taken=0", "/r form"),
                      ("N:r/m32, N:r32 | 0F 18 /r | taken=m:3-1", "expected")):
        p.write_text(f"nop:\n  cpuid: MULTIBYTENOP\n  forms:\n  - {line}\n")
        with pytest.raises(spec.SpecError, match=err):
            spec.load(str(p))
    p.write_text("nop:\n  cpuid: MULTIBYTENOP\n  forms:\n  - N:r/m32, N:r32 | 0F 18 /r | id=X taken=m:0-3,6-7\n")
    form, rex2 = spec.load(str(p))   # (its REX2 form, which the loader derives: the same fields)
    assert (form.taken_mem, form.taken_reg) == (rex2.taken_mem, rex2.taken_reg) == (0b11001111, 0)


def test_rule_rsp_is_never_an_index():
    """SIB.index = 100 means "no index" and REX.X does not change that for rsp (it does for r12)."""
    with pytest.raises(x86gen.OperandError, match="rsp"):
        mem(rax, rsp, 2)
    with pytest.raises(x86gen.OperandError, match="rsp"):
        x86gen.Mem(None, rsp, 4, 0, 32)
    with pytest.raises(x86gen.OperandError, match="rsp"):
        x86gen.assemble("mov eax, dword ptr [rax + rsp*2]")


# --- the pasted bytes are what the tools say ---------------------------------------------------------

ALL_LINES = [(text, want) for entries in RULES.values() for text, want, _ in entries]


def _objdump_bytes(obj: str) -> list[bytes]:
    out = subprocess.run(["objdump", "-d", "-M", "intel", obj], capture_output=True, text=True, check=True).stdout
    res: list[bytes] = []
    for ln in out.splitlines():
        m = re.match(r"^\s*[0-9a-f]+:\t([0-9a-f ]+?)\s*(\t.*)?$", ln)
        if not m: continue
        if m.group(2): res.append(bytes.fromhex(m.group(1)))
        else: res[-1] += bytes.fromhex(m.group(1))     # objdump wraps long instructions
    return res


def _gas(src: str, tmp_path) -> list[bytes]:
    s, o = tmp_path / "t.s", tmp_path / "t.o"
    s.write_text(".intel_syntax noprefix\n" + src + "\n")
    subprocess.run(["as", "--64", str(s), "-o", str(o)], check=True, capture_output=True)
    return _objdump_bytes(str(o))


@pytest.mark.skipif(not (shutil.which("as") and shutil.which("objdump")), reason="GNU as/objdump not installed")
def test_pasted_bytes_match_gnu_as(tmp_path):
    got = _gas("\n".join(t for t, _ in ALL_LINES), tmp_path)
    assert [g.hex(" ") for g in got] == [_hex(w).hex(" ") for _, w in ALL_LINES]
    got = [b for b in _gas(BRANCH_SOURCE, tmp_path) if b[0] != 0x90]
    assert [g.hex(" ") for g in got] == [_hex(w).hex(" ") for *_, w in BRANCHES]


@pytest.mark.skipif(not shutil.which("llvm-mc"), reason="llvm-mc not installed")
def test_pasted_bytes_match_llvm_mc():
    out = subprocess.run(["llvm-mc", "--triple=x86_64", "--x86-asm-syntax=intel", "-show-encoding"],
                         input="\n".join(t for t, _ in ALL_LINES) + "\n", capture_output=True, text=True, check=True).stdout
    got = [bytes(int(x, 16) for x in m.group(1).split(",")) for m in re.finditer(r"encoding: \[([^\]]*)\]", out)]
    assert [g.hex(" ") for g in got] == [_hex(w).hex(" ") for _, w in ALL_LINES]
