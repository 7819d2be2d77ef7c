"""The 16-bit near branches (o16: JMP_REL16, CALL_REL16, Jcc_REL16, Jcc_REL8_16, JMP_REL8_16, LOOP*_REL8_16_*,
JRCXZ/JECXZ_REL8_16), chosen by the ``data16`` prefix word only.

With operand size 16 the new IP is (next IP + rel) AND 0FFFFH (SDM Vol.2 JMP/Jcc/CALL/LOOP), so a target is a 16-bit IP
(0..0xffff) and the displacement is counted modulo 2^16 from anywhere. Intel CPUs ignore 0x66 on near branches in 64-bit
mode (SDM Vol.2 JMP: "In 64-bit mode the operand size is fixed at 64 bits"); AMD ones honour it, as iced-x86 decodes
them with DecoderOptions.AMD (`iced_oracle.decoder_options`). Expected bytes are iced-x86's encoder's.
"""
from __future__ import annotations

import iced_x86 as I
import pytest
from iced_oracle import decode_one, decoder_options

import x86gen


def iced_branch(code: str, target: int, ip: int, bnd: bool = False) -> str:
    """iced's bytes for the branch ``code`` to ``target`` at ``ip`` (iced takes the target modulo 2^16 for BR16)."""
    ins = I.Instruction.create_branch(getattr(I.Code, code), target)
    ins.has_repne_prefix = bnd
    enc = I.Encoder(64)
    enc.encode(ins, ip)
    return bytes(enc.take_buffer()).hex(" ")


CASES = [   # (text, target, ip, iced Code)
    ("data16 jmp", 0x1100, 0x1000, "JMP_REL16"), ("data16 jmp", 0x1010, 0x1000, "JMP_REL8_16"),
    ("jmpw", 0x1100, 0x1000, "JMP_REL16"), ("callw", 0x0F00, 0x1000, "CALL_REL16"),
    ("data16 call", 0x10, 0x12340000, "CALL_REL16"),
    ("data16 je", 0x1100, 0x1000, "JE_REL16"), ("data16 je", 0x10, 0x1234FFF0, "JE_REL8_16"),   # across the 16-bit wrap
    ("data16 jg", 0xFFFF, 0x7FFF00000000, "JG_REL8_16"), ("data16 jo", 0x0, 0x80001000, "JO_REL16"),
    ("data16 loop", 0x1010, 0x1000, "LOOP_REL8_16_RCX"), ("data16 addr32 loop", 0x1010, 0x1000, "LOOP_REL8_16_ECX"),
    ("addr32 data16 loope", 0x1010, 0x1000, "LOOPE_REL8_16_ECX"), ("data16 loopne", 0x0FF0, 0x1000, "LOOPNE_REL8_16_RCX"),
    ("data16 jrcxz", 0x1010, 0x1000, "JRCXZ_REL8_16"), ("data16 jecxz", 0x1010, 0x1000, "JECXZ_REL8_16"),
]


@pytest.mark.parametrize("mnemonic, target, ip, code", CASES, ids=[f"{c[0]}-{c[3]}" for c in CASES])
def test_data16_branch_like_iced(mnemonic, target, ip, code):
    want = iced_branch(code, target, ip)
    if mnemonic not in ("jmpw", "callw"):   # (objdump's names: text only, as xbeginw)
        assert x86gen.encode(mnemonic, target, ip=ip).hex(" ") == want
    assert x86gen.assemble(f"{mnemonic} {target:#x}", ip=ip).hex(" ") == want
    form = x86gen.get_form(code)
    ins = decode_one(bytes.fromhex(want), ip, decoder_options(form))
    assert ins.code == getattr(I.Code, code) and ins.near_branch16 == target


def test_bnd_data16_branch_like_iced():
    assert x86gen.assemble("bnd data16 je 0x10").hex(" ") == iced_branch("JE_REL8_16", 0x10, 0, bnd=True)
    assert x86gen.assemble("bnd data16 jmp 0x100").hex(" ") == iced_branch("JMP_REL16", 0x100, 0, bnd=True)


def test_without_data16_never_a_16_bit_branch():
    # jmp/je/loop/jecxz out of rel8 reach: rel32 or an error, never 66 (IP truncated to 16 bits on AMD)
    assert x86gen.encode("jmp", 0x1100, ip=0x1000).hex(" ") == iced_branch("JMP_REL32_64", 0x1100, 0x1000)
    assert x86gen.encode("je", 0x1100, ip=0x1000).hex(" ") == iced_branch("JE_REL32_64", 0x1100, 0x1000)
    assert x86gen.encode("jecxz", 0x1010, ip=0x1000).hex(" ") == iced_branch("JECXZ_REL8_64", 0x1010, 0x1000)
    assert x86gen.encode("addr32 jecxz", 0x1010, ip=0x1000).hex(" ") == iced_branch("JECXZ_REL8_64", 0x1010, 0x1000)
    assert x86gen.encode("addr32 loop", 0x1010, ip=0x1000).hex(" ") == iced_branch("LOOP_REL8_64_ECX", 0x1010, 0x1000)
    for mn in ("loop", "jecxz", "jrcxz"):
        with pytest.raises(x86gen.ImmediateRangeError):
            x86gen.encode(mn, 0x1000 + 200, ip=0x1000)
    assert x86gen.assemble("jmp 1f\nnop\n1:").hex(" ") == "eb 01 90"


@pytest.mark.parametrize("mnemonic, target", [
    ("data16 jmp", 0x10000), ("data16 jmp", -1), ("data16 call", 0x12345678), ("data16 je", 1 << 64),
    ("data16 loop", 0x10000 + 0x1010),   # near the IP's low bits but above 0xffff: no 16-bit IP
])
def test_target_beyond_16_bits_refused(mnemonic, target):
    # iced's encoder would write the low 16 bits (a jump elsewhere): x86gen refuses
    with pytest.raises(x86gen.ImmediateRangeError, match="does not fit any form.*16-bit IP, 0x0..0xffff"):
        x86gen.encode(mnemonic, target, ip=0x1000)
    with pytest.raises(x86gen.ImmediateRangeError, match="16-bit branch"):
        x86gen.get_form("JMP_REL16")(target, ip=0x1000)


def test_rel8_16_reach_is_modulo_2_16():
    with pytest.raises(x86gen.ImmediateRangeError):
        x86gen.forms.JMP_REL8_16(0x1100, ip=0x1000)
    assert x86gen.forms.JMP_REL8_16(0x10, ip=0x1234FFF0).hex(" ") == iced_branch("JMP_REL8_16", 0x10, 0x1234FFF0)


def test_syntax_names_data16():
    assert [x86gen.get_form(i).syntax for i in ("JMP_REL16", "JE_REL8_16", "LOOP_REL8_16_ECX", "JECXZ_REL8_16")] == \
        ["data16 jmp rel16", "data16 je rel8", "data16 addr32 loop rel8", "data16 jecxz rel8"]


@pytest.mark.parametrize("text, parts", [
    ("data16 jmp 1f\nnop\n1:", [("JMP_REL8_16", 0x1004, 0x1000), "90"]),
    ("data16 je 1f\n.zero 200\n1:", [("JE_REL16", 0x1000 + 5 + 200, 0x1000), "00" * 200]),
    ("top:\ndata16 loop top", [("LOOP_REL8_16_RCX", 0x1000, 0x1000)]),
    ("top:\ndata16 addr32 loope top", [("LOOPE_REL8_16_ECX", 0x1000, 0x1000)]),
    ("top:\ndata16 jecxz top\ndata16 jrcxz top", [("JECXZ_REL8_16", 0x1000, 0x1000), ("JRCXZ_REL8_16", 0x1000, 0x1004)]),
    ("data16 call f\nf: ret", [("CALL_REL16", 0x1004, 0x1000), "c3"]),
])
def test_data16_branch_to_label_like_iced(text, parts):
    want = b"".join(bytes.fromhex(p if isinstance(p, str) else iced_branch(*p)) for p in parts)
    for _ in range(2):   # (the second time through the Assembler's line cache)
        assert x86gen.assemble(text, ip=0x1000) == want


def test_data16_branch_to_label_above_0xffff_refused():
    with pytest.raises(x86gen.ImmediateRangeError, match="line 1: .*16-bit branch"):
        x86gen.assemble("data16 jmp 1f\nnop\n1:", ip=0x12340000)


def test_bnd_data16_branch_to_label_like_iced():
    """bnd on a 16-bit branch to a label (issue 23: every door takes prefix words on branches, the Assembler too): the
    forms that take bnd (JMP_REL16; not JMP_REL8_16, as iced-x86's OpCodeInfo has it; GNU as writes 66 F2 EB there)."""
    assert x86gen.assemble("1:\nbnd data16 jmp 1b", ip=0x1000).hex(" ") == iced_branch("JMP_REL16", 0x1000, 0x1000, bnd=True)
    assert x86gen.assemble("bnd data16 jmp 0x1000", ip=0x1000).hex(" ") == iced_branch("JMP_REL16", 0x1000, 0x1000, bnd=True)
