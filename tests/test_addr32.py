"""32-bit addresses in 64-bit mode: the address-size prefix 0x67 (SDM Vol.2 2.1.1 group 4, 3.6 "address-size
attribute"), as `x86gen.A32Mem`. Expected bytes are iced-x86's encoder's (its prefix order: segment, F0, 66, 67, F2/F3,
then a mandatory prefix, REX, VEX/EVEX); GNU as 2.40 (``as --64 -msyntax=intel -mnaked-reg``) writes the same bytes,
with 67 first where it meets 66 or F0 (the CPU reads legacy prefixes in any order, SDM Vol.2 2.1.1); its bytes are in
the comments."""
from __future__ import annotations

import pytest

import x86gen
from x86gen import A32Mem, Mem, OperandError, mem
from x86gen.registers import eax, ecx, eip, r12d, rax, rcx

# (text, iced's bytes)   # GNU as's bytes where they differ in order
CASES = [
    ("mov eax, dword ptr [ecx+edx*2]", "67 8b 04 51"),
    ("mov eax, dword ptr [ebp]", "67 8b 45 00"),                # ebp base: no mod=00 form, disp8 0 (Table 2-2)
    ("mov eax, dword ptr [r13d]", "67 41 8b 45 00"),            # r13d likewise, with REX.B
    ("mov eax, dword ptr [esp]", "67 8b 04 24"),                # esp base: a SIB byte (Table 2-3)
    ("mov eax, dword ptr [r12d+0x10]", "67 41 8b 44 24 10"),    # r12d likewise
    ("mov eax, dword ptr [ecx*4+0x100]", "67 8b 04 8d 00 01 00 00"),   # no base: SIB base=101, disp32
    ("mov eax, dword ptr [r13d+r12d*8-1]", "67 43 8b 44 e5 ff"),
    ("lea rax, [eip+0x10]", "67 48 8d 05 10 00 00 00"),         # eip-relative
    ("mov word ptr [eax], 1", "66 67 c7 00 01 00"),             # GNU as: 67 66 c7 00 01 00
    ("lock add word ptr [eax], ax", "f0 66 67 01 00"),          # GNU as: 67 66 f0 01 00
    ("add dword ptr fs:[eax+ecx*2], eax", "64 67 01 04 48"),
    ("movdqa xmm0, xmmword ptr [eax]", "67 66 0f 6f 00"),       # 67 before the mandatory 66
    ("addsd xmm8, qword ptr [r8d]", "67 f2 45 0f 58 00"),
    ("vaddps ymm0, ymm1, ymmword ptr [r13d]", "67 c4 c1 74 58 45 00"),   # 67 before VEX
    ("vaddps zmm0, zmm0, zmmword ptr [eax+0x40]", "67 62 f1 7c 48 58 40 01"),   # before EVEX; disp8*64
    ("vgatherdps xmm0, dword ptr [eax+xmm1*4], xmm2", "67 c4 e2 69 92 04 88"),   # a VSIB address with a 32-bit base
    ("mov rax, qword ptr [ebp+esi*1+0x80]", "67 48 8b 84 35 80 00 00 00"),
]


@pytest.mark.parametrize("text, want", CASES)
def test_addr32_bytes(text, want):
    assert x86gen.assemble(text).hex(" ") == want
    mn, ops = x86gen.parse(text)
    assert any(isinstance(x, A32Mem) or isinstance(getattr(x, "plain", None), A32Mem) for x in ops)   # (or a SegMem of one)
    assert x86gen.encode(mn, *ops).hex(" ") == want
    if " " not in mn and not any(x.__class__ is x86gen.SegMem for x in ops):   # the form called directly
        assert x86gen.select(mn, *ops)(*ops).hex(" ") == want


def test_addr32_operand():
    m = mem("ecx", "edx", 2, 8, size=32)
    assert isinstance(m, A32Mem) and m.sig == "a32:m32" and str(m) == "dword ptr [ecx+edx*2+0x8]"
    assert m.plain == Mem(rcx, x86gen.REGISTERS["rdx"], 2, 8, 32) and m.plain.__class__ is Mem
    assert mem(eip, disp=-4).plain.base is x86gen.REGISTERS["rip"]
    assert isinstance(m.with_size(64), A32Mem) and isinstance(m.with_disp32(), A32Mem)
    assert x86gen.encode("mov", eax, m.with_disp32()).hex(" ") == "67 8b 84 51 08 00 00 00"   # iced: mod=10, disp32


@pytest.mark.parametrize("base, index", [(eax, rcx), (rax, ecx), (eip, rcx), (x86gen.REGISTERS["rip"], ecx)])
def test_addr32_mixed_sizes_refused(base, index):
    with pytest.raises(OperandError, match="mixes 32- and 64-bit address registers"):
        Mem(base, index, 2)


@pytest.mark.parametrize("text, match", [
    ("mov eax, dword ptr [eax+rcx]", "mixes 32- and 64-bit address registers"),
    ("mov eax, dword ptr [rax+ecx*4]", "mixes 32- and 64-bit address registers"),
    ("mov eax, dword ptr [eax+esp]", "esp cannot be an index register"),
    ("mov eax, dword ptr [eip+eax]", "memory operand"),
])
def test_addr32_text_errors(text, match):
    with pytest.raises(x86gen.EncodeError, match=match):
        x86gen.assemble(text)


def test_addr32_in_assembler():
    a = x86gen.Assembler()
    a.mov(eax, mem(r12d, size=32))
    a.emit("add", mem("ebx", size=32), 1)
    assert a.assemble().hex(" ") == "67 41 8b 04 24 67 83 03 01"   # iced: 67 41 8b 04 24; 67 83 03 01
