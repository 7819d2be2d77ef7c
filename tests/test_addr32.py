"""32-bit addresses in 64-bit mode: the address-size prefix 0x67 (SDM Vol.2 2.1.1 group 4, 3.6 "address-size
attribute"), as `x86gen.A32Mem`. Expected bytes are iced-x86's encoder's (its prefix order: segment, F0, 66, 67, F2/F3,
then a mandatory prefix, REX, VEX/EVEX); GNU as 2.40 (``as --64 -msyntax=intel -mnaked-reg``) writes the same bytes,
with 67 first where it meets 66 or F0 (the CPU reads legacy prefixes in any order, SDM Vol.2 2.1.1); its bytes are in
the comments."""
from __future__ import annotations

import re

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
    # a 32-bit address wraps at 4 GiB: GNU as reads these displacements as their signed 32-bit values
    ("mov eax, [eax+0xffffffff]", "67 8b 40 ff"), ("mov eax, [eax+0x80000000]", "67 8b 80 00 00 00 80"),
    ("mov eax, [ecx*4+0xfffffff0]", "67 8b 04 8d f0 ff ff ff"), ("lea eax, [eip+0xffffffff]", "67 8d 05 ff ff ff ff"),
    # ... below -2^31 too (GNU as 2.40 and llvm-mc 14 give these bytes; for [eax-0xffffffff], [eax+1], GNU as keeps a
    # disp32 where llvm-mc writes the disp8, as x86gen does)
    ("mov eax, dword ptr [eax-0x80000001]", "67 8b 80 ff ff ff 7f"), ("lea eax, [ecx+edx*2-0x90000000]", "67 8d 84 51 00 00 00 70"),
    ("mov eax, dword ptr [eax-0xffffffff]", "67 8b 40 01"),
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
    ("mov eax, dword ptr [esp+esp]", "esp cannot be an index register"),   # ([eax+esp] is [esp+eax], as GNU as reads it)
    ("mov eax, dword ptr [eax+esp*2]", "esp cannot be an index register"),
    ("mov eax, dword ptr [eip+eax]", "eip with an index register"),
])
def test_addr32_text_errors(text, match):
    with pytest.raises(x86gen.EncodeError, match=match):
        x86gen.assemble(text)


def test_addr32_vsib_accepted_by_select_form():
    x0, x1, x2 = (x86gen.REGISTERS[f"xmm{i}"] for i in range(3))
    m = mem("eax", x1, 4, size=32)
    assert x86gen.select_form(["VEX_VGATHERDPS_XMM_VM32X_XMM"], x0, m, x2).id == "VEX_VGATHERDPS_XMM_VM32X_XMM"


def test_addr32_in_assembler():
    a = x86gen.Assembler()
    a.mov(eax, mem(r12d, size=32))
    a.emit("add", mem("ebx", size=32), 1)
    assert a.assemble().hex(" ") == "67 41 8b 04 24 67 83 03 01"   # iced: 67 41 8b 04 24; 67 83 03 01


# The forms whose implicit address is 32-bit (spec `a32`): chosen by addr32 or their 32-bit spelling, never by default.
# Bytes: GNU as 2.40 (the same as iced-x86's encoder); text at ip 0.
IMPLICIT = [
    ("addr32 monitor", "67 0f 01 c8", "MONITORD"), ("monitor eax, ecx, edx", "67 0f 01 c8", "MONITORD"),
    ("monitor", "0f 01 c8", "MONITORQ"), ("monitor rax, ecx, edx", "0f 01 c8", "MONITORQ"),
    ("addr32 monitorx", "67 0f 01 fa", "MONITORXD"), ("umonitor eax", "67 f3 0f ae f0", "UMONITOR_R32"),
    ("umonitor rax", "f3 0f ae f0", "UMONITOR_R64"), ("addr32 clzero", "67 0f 01 fc", "CLZEROD"),
    ("clzero eax", "67 0f 01 fc", "CLZEROD"), ("clzero", "0f 01 fc", "CLZEROQ"),
    ("addr32 invlpga", "67 0f 01 df", "INVLPGAD"), ("invlpga eax, ecx", "67 0f 01 df", "INVLPGAD"),
    ("addr32 invlpgb", "67 0f 01 fe", "INVLPGBD"), ("invlpgb eax, ecx, edx", "67 0f 01 fe", "INVLPGBD"),
    ("addr32 pvalidate", "67 f2 0f 01 ff", "PVALIDATED"), ("pvalidate eax", "67 f2 0f 01 ff", "PVALIDATED"),
    ("addr32 vmload", "67 0f 01 da", "VMLOADD"), ("vmload", "0f 01 da", "VMLOADQ"), ("vmload rax", "0f 01 da", "VMLOADQ"),
    ("addr32 vmrun", "67 0f 01 d8", "VMRUND"), ("addr32 vmsave", "67 0f 01 db", "VMSAVED"), ("vmsave", "0f 01 db", "VMSAVEQ"),
    ("jecxz 0x10", "67 e3 0d", "JECXZ_REL8_64"), ("jrcxz 0x10", "e3 0e", "JRCXZ_REL8_64"),
    ("addr32 loop 0x10", "67 e2 0d", "LOOP_REL8_64_ECX"), ("loop 0x10", "e2 0e", "LOOP_REL8_64_RCX"),
    ("addr32 loope 0x10", "67 e1 0d", "LOOPE_REL8_64_ECX"), ("addr32 loopne 0x10", "67 e0 0d", "LOOPNE_REL8_64_ECX"),
    ("addr32 mov eax, [ecx]", "67 8b 01", "MOV_R32_RM32"),   # GNU as: the operand's 67 once
    # xbegin: rel32 unless data16 asks for rel16 (objdump: xbeginw), which is not truncated (SDM Vol.2 XBEGIN)
    ("xbegin 0x100", "c7 f8 fa 00 00 00", "XBEGIN_REL32"), ("data16 xbegin 0x100", "66 c7 f8 fb 00", "XBEGIN_REL16"),
    ("xbeginw 0x100", "66 c7 f8 fb 00", "XBEGIN_REL16"),
    # VIA PadLock: [esi]/[edi] and ecx with addr32; iced-x86 prints `addr32 rep xsha1`, objdump `addr32 repz xsha1`
    ("addr32 xsha1", "67 f3 0f a6 c8", "XSHA1_32"), ("addr32 rep xsha1", "67 f3 0f a6 c8", "XSHA1_32"),
    ("addr32 repz xsha1", "67 f3 0f a6 c8", "XSHA1_32"), ("xsha1", "f3 0f a6 c8", "XSHA1_64"),
    ("addr32 xsha256", "67 f3 0f a6 d0", "XSHA256_32"), ("addr32 montmul", "67 f3 0f a6 c0", "MONTMUL_32"),
    ("addr32 xstore", "67 0f a7 c0", "XSTORE_32"), ("addr32 xstorerng", "67 0f a7 c0", "XSTORE_32"),
    ("addr32 xstore-rng", "67 0f a7 c0", "XSTORE_32"), ("xstore", "0f a7 c0", "XSTORE_64"),
    ("addr32 rep xstore", "67 f3 0f a7 c0", "XSTORE_32"),   # the form's 67 before the F3, as GNU as and iced-x86
    ("rep addr32 xstore", "67 f3 0f a7 c0", "XSTORE_32"),   # (GNU as: the same bytes; llvm-mc 14 refuses this order)
    ("addr32 xcryptecb", "67 f3 0f a7 c8", "XCRYPTECB_32"), ("addr32 repz xcrypt-ecb", "67 f3 0f a7 c8", "XCRYPTECB_32"),
    ("addr32 xcryptofb", "67 f3 0f a7 e8", "XCRYPTOFB_32"),
]


@pytest.mark.parametrize("text, want, form_id", IMPLICIT)
def test_implicit_address_size_forms(text, want, form_id):
    assert x86gen.assemble(text).hex(" ") == want
    mn, ops = x86gen.parse(text)
    assert x86gen.select(mn, *ops).id == form_id


def test_addr32_against_the_register_of_umonitor_is_refused():
    """umonitor's address is its register, sized by the address size: GNU as 2.40 writes `addr32 umonitor rax` as
    67 f3 0f ae f0, which iced-x86 decodes as `umonitor eax`. x86gen refuses the word rather than drop it (which gave
    the bytes of `umonitor rax`) or change the register written."""
    with pytest.raises(x86gen.PrefixError, match="address size from its register"):
        x86gen.assemble("addr32 umonitor rax")
    with pytest.raises(x86gen.PrefixError, match="address size from its register"):
        x86gen.encode("addr32 umonitor", x86gen.rax)
    assert x86gen.assemble("umonitor eax").hex(" ") == "67 f3 0f ae f0"   # GNU as 2.40, iced-x86


def test_relaxation_never_picks_a32_or_16_bit_branches():
    # loop out of rel8 reach must not become addr32 loop (3 bytes, the same reach, another count register)
    with pytest.raises(x86gen.EncodeError):
        x86gen.encode("loop", 0x1000 + 2 + 128, ip=0x1000)
    # xbegin to a near label stays rel32 (GNU as), never the 5-byte data16 form
    assert x86gen.assemble("xbegin 1f\nnop\n1:").hex(" ") == "c7 f8 01 00 00 00 90"
    assert x86gen.assemble("top:\njecxz top\nloop top").hex(" ") == "67 e3 fd e2 fb"   # GNU as: the same


@pytest.mark.parametrize("text, match", [
    ("addr32 mov eax, dword ptr [rax]", "32-bit implicit address"),   # would silently become [eax]
    ("data16 mov eax, ecx", "16-bit branch"),
    ("data16 xbegin 0x100000", "does not fit"),
    ("clzero ebx", "no form"),
    # GNU as writes montmul as F3 0F A6 C0 (MONTMUL_64, not in the spec): never silently the 32-bit address form
    ("montmul", "write `addr32 montmul`"), ("rep montmul", "write `addr32 montmul`"),
    ("mov eax, [eax+0x100000000]", "does not fit"),
])
def test_size_prefix_words_refused(text, match):
    with pytest.raises(x86gen.EncodeError, match=match):
        x86gen.assemble(text)


@pytest.mark.parametrize("call", [
    lambda: x86gen.encode("mov", x86gen.REGISTERS["ah"], mem("r8d", size=8)),
    lambda: x86gen.forms.MOV_R8_RM8(x86gen.REGISTERS["ah"], mem("r8d", size=8)),
    lambda: x86gen.encode("mov", x86gen.REGISTERS["ah"], mem("r8d", size=8, seg="fs")),
    lambda: x86gen.forms.MOV_R32_RM32(eax, mem("eax", size=64)),
])
def test_addr32_errors_name_the_address_as_given(call):
    with pytest.raises(OperandError) as ei: call()
    assert "[r8d]" in str(ei.value) or "[eax]" in str(ei.value)
    assert "[r8]" not in str(ei.value) and "[rax]" not in str(ei.value)


def test_syntax_names_the_size_prefix_word():
    # the forms chosen by addr32/data16 say so in their syntax (error messages list forms by it)
    assert [x86gen.get_form(i).syntax for i in ("MONITORD", "MONITORQ", "XBEGIN_REL16", "UMONITOR_R32", "LOOP_REL8_64_ECX")] == \
        ["addr32 monitor", "monitor", "data16 xbegin rel16", "umonitor r32", "addr32 loop rel8"]


# movdir64b/enqcmd/enqcmds: ModRM.reg holds the destination address (es:[reg], a 64-byte write), and the address size
# sizes it as it sizes the m512 source (SDM Vol.2 MOVDIR64B, ENQCMD, ENQCMDS): r32 goes with a 32-bit address, the
# forms with `a32` (their 0x67 once), r64 with a 64-bit one. Bytes: GNU as 2.40 and iced-x86's encoder (the same).
REG_ADDRESS_CASES = [
    ("enqcmd eax, [ecx]", "67 f2 0f 38 f8 01", "ENQCMD_R32_M512"),
    ("movdir64b eax, [ecx]", "67 66 0f 38 f8 01", "MOVDIR64B_R32_M512"),   # 67 before the mandatory 66
    ("enqcmds eax, [ecx]", "67 f3 0f 38 f8 01", "ENQCMDS_R32_M512"),
    ("enqcmds r8d, [r9d+r10d*2+0x40]", "67 f3 47 0f 38 f8 44 51 40", "ENQCMDS_R32_M512"),
    ("enqcmd eax, [ebp]", "67 f2 0f 38 f8 45 00", "ENQCMD_R32_M512"),                 # disp8 0 (SDM Vol.2 Table 2-2)
    ("enqcmd eax, [esp]", "67 f2 0f 38 f8 04 24", "ENQCMD_R32_M512"),                 # a SIB byte (Table 2-3)
    ("enqcmd eax, [eax*4]", "67 f2 0f 38 f8 04 85 00 00 00 00", "ENQCMD_R32_M512"),   # no base: SIB base=101, disp32
    ("movdir64b r15d, [r13d]", "67 66 45 0f 38 f8 7d 00", "MOVDIR64B_R32_M512"),
    ("movdir64b edx, [r12d+0x80]", "67 66 41 0f 38 f8 94 24 80 00 00 00", "MOVDIR64B_R32_M512"),
    ("enqcmd rax, [rcx]", "f2 0f 38 f8 01", "ENQCMD_R64_M512"),
    ("movdir64b rax, [rcx]", "66 0f 38 f8 01", "MOVDIR64B_R64_M512"),
]
# (GNU as only: iced-x86's encoder has no text; a prefix word, a segment override or eip)
REG_ADDRESS_TEXT = [
    ("enqcmd eax, [eip+8]", "67 f2 0f 38 f8 05 08 00 00 00"),
    ("enqcmd eax, [ecx+0xffffffff]", "67 f2 0f 38 f8 41 ff"),   # a 32-bit address wraps at 4 GiB: [ecx-1]
    ("addr32 enqcmd eax, [ecx]", "67 f2 0f 38 f8 01"),          # the 0x67 once
    ("enqcmd eax, fs:[ecx]", "64 67 f2 0f 38 f8 01"),           # (iced-x86 with seg=FS: the same)
]


@pytest.mark.parametrize("text, want, form_id", REG_ADDRESS_CASES)
def test_register_address_forms(text, want, form_id):
    assert x86gen.assemble(text).hex(" ") == want
    mn, ops = x86gen.parse(text)
    assert x86gen.encode(mn, *ops).hex(" ") == want
    form = x86gen.select(mn, *ops)
    assert form.id == form_id and form(*ops).hex(" ") == want and form.accepts(*ops)
    assert x86gen.select_form(x86gen.forms.forms_of(mn), *ops).id == form_id
    a = x86gen.Assembler()
    a.emit(mn, *ops)
    getattr(a, mn)(*ops)
    assert a.assemble().hex(" ") == f"{want} {want}"
    assert x86gen.assemble(str(x86gen.Instruction(mn, *ops))).hex(" ") == want   # x86gen's own text of it


@pytest.mark.parametrize("text, want", REG_ADDRESS_TEXT)
def test_register_address_text(text, want):
    assert x86gen.assemble(text).hex(" ") == want


def test_register_address_syntax():
    # iced-x86's OpCodeInfo: `MOVDIR64B r32, m512`, opcode `a32 66 0F 38 F8 /r` (no addr32 word: the operands say it)
    f = x86gen.get_form("MOVDIR64B_R32_M512")
    assert (f.syntax, f.encoding, f.addrsize32) == ("movdir64b r32, m512", "a32 66 0F 38 F8 /r", True)
    assert [g.id for g in x86gen.forms.forms_of("enqcmd")] == ["ENQCMD_R64_M512", "ENQCMD_R32_M512"]


# mixed sizes: iced-x86's encoder refuses both ("Register operand size must equal memory addressing mode (16/32/64)"),
# GNU as too ("invalid register operand size"; llvm-mc 14 takes them)
MIXED = "the address in the register and the memory operand's address must have the same size"


@pytest.mark.parametrize("text, error, match", [
    ("enqcmd eax, [rcx]", OperandError, MIXED),
    ("enqcmd rax, [ecx]", OperandError, MIXED),
    ("movdir64b eax, [rip+8]", OperandError, MIXED),
    ("enqcmds rax, [eip]", OperandError, MIXED),
    ("movdir64b rax, zmmword ptr [ecx+edx*2]", OperandError, MIXED),
    # GNU as 2.40 reads this as a 32-bit absolute address (67 f2 0f 38 f8 04 25 00 10 00 00); x86gen has none
    ("enqcmd eax, [0x1000]", OperandError, "no 32-bit absolute one"),
    # addr32 with 64-bit registers: GNU as: "`[rcx]' is not a valid base/index expression"
    ("addr32 enqcmd eax, [rcx]", x86gen.PrefixError, "32-bit registers"),
    ("addr32 movdir64b rax, [rcx]", x86gen.PrefixError, "32-bit registers"),
    ("lock enqcmd eax, [ecx]", x86gen.PrefixError, "does not take the lock prefix"),   # GNU as: not lockable
    ("enqcmd ax, [ecx]", OperandError, "no form of 'enqcmd' takes ax"),
    ("movdir64b eax, qword ptr [ecx]", OperandError, "no form of 'movdir64b'"),   # m512 only
])
def test_register_address_errors(text, error, match):
    with pytest.raises(error, match=re.escape(match)) as ei:
        x86gen.assemble(text)
    assert type(ei.value) is error
    mn, ops = x86gen.parse(text) if not text.startswith(("addr32", "lock")) else (None, None)
    if mn is not None:
        for call in (lambda: x86gen.encode(mn, *ops), lambda: x86gen.select(mn, *ops), lambda: x86gen.Assembler().emit(mn, *ops)):
            with pytest.raises(error, match=re.escape(match)): call()


@pytest.mark.parametrize("form_id, ops, match", [
    ("ENQCMD_R32_M512", (eax, mem(rcx)), MIXED),           # a 64-bit address in the 32-bit address form
    ("ENQCMD_R64_M512", (rax, mem("ecx")), MIXED),         # 0x67 would make the register's address 32-bit: the other form
    ("MOVDIR64B_R32_M512", (eax, mem(rcx, size=512)), MIXED),
    ("MOVDIR64B_R32_M512", (rax, mem("ecx")), "operand 1 is rax (r64), expected r32"),   # the form's register first
    ("MOVDIR64B_R64_M512", (eax, mem(rcx)), "operand 1 is eax (r32), expected r64"),
])
def test_register_address_forms_refuse_mixed_sizes(form_id, ops, match):
    form = x86gen.get_form(form_id)
    with pytest.raises(OperandError, match=re.escape(match)) as ei:
        form(*ops)
    assert type(ei.value) is OperandError and form_id in str(ei.value)
    assert not form.accepts(*ops)


def test_register_address_mnemonics_are_those_with_32bit_address_forms():
    # `REG_ADDRESS` (x86gen.table) names the mnemonics whose 32-bit addresses are forms of their own (`a32_memory`)
    from x86gen.table import REG_ADDRESS, a32_memory
    assert {f.mnemonic for f in x86gen.all_forms() if a32_memory(f)} == REG_ADDRESS
    assert all(a32_memory(f) == f.id.endswith("_R32_M512") for mn in REG_ADDRESS for f in x86gen.forms.forms_of(mn))
