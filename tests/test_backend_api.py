"""The API a compiler backend uses (issue 12): registers by number and width, `Form.accepts`,
`select_form` with an immediate policy, int-like immediates, branch fixups without an Assembler,
`Assembler.emit_form` and forced rel32 branches. Expected bytes come from iced-x86's encoder."""
from __future__ import annotations

import iced_x86 as I
import numpy as np
import pytest

import x86gen
from x86gen import Assembler, EncodeError, OperandError, eax, ecx, forms, r9, rdi, select_form
from x86gen.reference import TINYGRAD_X86OPS


def iced(ins: I.Instruction, ip: int = 0) -> bytes:
    enc = I.Encoder(64)
    enc.encode(ins, ip)
    return bytes(enc.take_buffer())


def test_gpr_vec_by_number_and_width():
    assert [x86gen.gpr(0, b).name for b in (8, 16, 32, 64)] == ["al", "ax", "eax", "rax"]
    assert x86gen.gpr(4, 8).name == "spl" and x86gen.gpr(12, 32).name == "r12d" and x86gen.gpr(9) is r9
    assert x86gen.vec(3).name == "xmm3" and x86gen.vec(15, 256).name == "ymm15"
    assert x86gen.rax.sized(8).name == "al" and x86gen.ymm7.sized(128).name == "xmm7" and x86gen.r8b.sized(64).name == "r8"
    assert x86gen.gpr(16, 64).name == "r16" and x86gen.gpr(31, 8).name == "r31b"   # APX's r16-r31
    for bad in ((32, 64), (-1, 64), (0, 12), ("x", 8)):
        with pytest.raises(OperandError): x86gen.gpr(*bad)
    with pytest.raises(OperandError): x86gen.vec(0, 64)
    with pytest.raises(OperandError): x86gen.REGISTERS["ah"].sized(16)


def test_accepts_is_what_encode_uses():
    f = forms.ADD_RM32_IMM8
    assert f.accepts(eax, 5) and f.accepts(eax, -128) and not f.accepts(eax, 300)
    assert not f.accepts(x86gen.rax, 5) and not f.accepts(eax) and not f.accepts(eax, ecx)
    assert f.accepts(x86gen.dword(rdi), 1) and f.accepts(x86gen.mem(rdi), 1) and not f.accepts(x86gen.qword(rdi), 1)
    assert forms.SHL_RM32_CL.accepts(eax, x86gen.cl) and not forms.SHL_RM32_CL.accepts(eax, x86gen.dl)
    assert forms.JNE_REL8_64.accepts(100, ip=0) and not forms.JNE_REL8_64.accepts(1000, ip=0)


def test_select_form_imm_policy():
    ids = TINYGRAD_X86OPS["ADDi"]
    assert select_form(ids, eax, 1).id == "ADD_RM32_IMM8"
    widest = select_form(ids, eax, 1, imm="widest")
    assert widest.id == "ADD_RM32_IMM32"
    assert widest(eax, 1) == iced(I.Instruction.create_reg_i32(I.Code.ADD_RM32_IMM32, I.Register.EAX, 1))
    assert select_form(ids, eax, 1, imm_bits=32).id == "ADD_RM32_IMM32"
    assert select_form(ids, x86gen.al, 1, imm="widest").id == "ADD_RM8_IMM8"
    assert select_form(TINYGRAD_X86OPS["SHLi"], eax, 1, imm="widest").id == "SHL_RM32_IMM8"   # not the D1 /4 "1" form
    with pytest.raises(OperandError): select_form(ids, eax, ecx)
    with pytest.raises(OperandError): select_form(ids, eax, 1, imm="longest")
    with pytest.raises(OperandError): select_form(ids, x86gen.mem(rdi), 1)   # byte/word/dword/qword: needs a size


def test_int_like_immediates():
    want = iced(I.Instruction.create_reg_i32(I.Code.ADD_RM32_IMM8, I.Register.EAX, 5))
    assert x86gen.encode("add", eax, np.int64(5)) == want and forms.ADD_RM32_IMM8(eax, np.uint8(5)) == want
    assert x86gen.encode("mov", x86gen.al, True) == iced(I.Instruction.create_reg_i32(I.Code.MOV_R8_IMM8, I.Register.AL, 1))
    with pytest.raises(EncodeError): x86gen.encode("add", eax, 1.5)
    with pytest.raises(EncodeError): forms.ADD_RM32_IMM8(eax, 1.5)


def test_encode_rel_fixup():
    for fid, code in (("JNE_REL32_64", I.Code.JNE_REL32_64), ("JMP_REL32_64", I.Code.JMP_REL32_64), ("JL_REL8_64", I.Code.JL_REL8_64)):
        f = forms.__getattr__(fid)
        b, off = f.encode_rel(0)
        assert b == iced(I.Instruction.create_branch(code, len(b)))          # rel 0: the next instruction
        b2, off2 = f.encode_rel(-20)
        assert off2 == off and b2 == iced(I.Instruction.create_branch(code, 0x1000 + len(b) - 20), 0x1000)
        assert len(b) - off == f.operands[0].imm // 8
    with pytest.raises(x86gen.ImmediateRangeError): forms.JL_REL8_64.encode_rel(200)
    with pytest.raises(OperandError): forms.ADD_RM32_IMM8.encode_rel(0)


def test_assembler_emit_form_and_rel32():
    a = Assembler(listing=True)
    top = a.here("top")
    a.emit_form("ADD_RM32_IMM32", eax, 1)
    a.jne(top, rel32=True)
    a.jne(top)
    a.emit_form(forms.JMP_REL32_64, top)
    a.jmp(top, rel32=True)
    a.ret()
    code = a.assemble()
    want = iced(I.Instruction.create_reg_i32(I.Code.ADD_RM32_IMM32, I.Register.EAX, 1))
    want += iced(I.Instruction.create_branch(I.Code.JNE_REL32_64, 0), 6)
    want += iced(I.Instruction.create_branch(I.Code.JNE_REL8_64, 0), 12)
    want += iced(I.Instruction.create_branch(I.Code.JMP_REL32_64, 0), 14)
    want += iced(I.Instruction.create_branch(I.Code.JMP_REL32_64, 0), 19) + b"\xc3"
    assert code == want
    text = a.listing()
    assert "add eax, 0x1" in text and text.count("jne top") == 2 and text.count("jmp top") == 2
    with pytest.raises(OperandError): a.emit_form("ADD_RM32_IMM32", eax, top)


def test_emit_form_of_the_other_encoding_lists_its_pseudo_prefix():
    """A VEX or EVEX form that the mnemonic alone would not choose is listed with ``{vex}``/``{evex}``, so that
    `Assembler.text` assembles back to its bytes (GNU as 2.40 gives these bytes for the listed lines)."""
    xmm1, xmm2, xmm3 = x86gen.xmm1, x86gen.xmm2, x86gen.xmm3
    a = Assembler(listing=True)
    for fid in ("VEX_VPDPBUSD_XMM_XMM_XMMM128", "EVEX_VPDPBUSD_XMM_K1Z_XMM_XMMM128B32", "VEX_VADDPS_XMM_XMM_XMMM128",
                "EVEX_VADDPS_XMM_K1Z_XMM_XMMM128B32"):
        a.emit_form(fid, xmm1, xmm2, xmm3)
    lines = [ln.strip() for ln in a.text().splitlines()]
    assert lines == ["{vex} vpdpbusd xmm1, xmm2, xmm3", "vpdpbusd xmm1, xmm2, xmm3", "vaddps xmm1, xmm2, xmm3",
                     "{evex} vaddps xmm1, xmm2, xmm3"]
    want = bytes.fromhex("c4e26950cb" "62f26d0850cb" "c5e858cb" "62f16c0858cb")   # GNU as 2.40, line by line
    assert a.assemble() == want and x86gen.assemble(a.text()) == want


def test_parse_is_one_line_to_mnemonic_and_operands():
    """`x86gen.parse` (lazily x86gen.syntax.parse_text_line, through x86gen.text) reads one line,
    any case, comments allowed, into what `encode` takes: `add eax, [rdi+4]` is GNU as's 03 47 04."""
    mn, ops = x86gen.parse("ADD eax, dword ptr [rdi+4]  # c")
    assert (mn, ops) == ("add", (x86gen.eax, x86gen.dword(x86gen.rdi, disp=4)))
    assert x86gen.encode(mn, *ops).hex() == "034704"
    with pytest.raises(x86gen.AsmSyntaxError):
        x86gen.parse("add eax, [rdi+")
