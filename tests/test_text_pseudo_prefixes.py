"""GNU as's pseudo-prefixes (issue 24): {disp8}, {disp32}, {load}, {store}, {vex2}, and {vex}/{vex3}/{evex} where the
operands cannot have what they ask for. One test per rule; expected bytes from GNU as 2.40 (`.intel_syntax noprefix`,
`as --64`, `objdump -d -M intel`). GNU as takes these words as preferences and drops, without a word, the ones it cannot
honour; x86gen raises an `x86gen.PrefixError` (or the `x86gen.EncodeError` its door raises for those operands) that names
the pseudo-prefix and says why (the project's rule: a prefix that cannot be honoured is an error)."""
from __future__ import annotations

import re

import pytest

import x86gen
from x86gen import EncodeError, PrefixError, eax, ecx, mem, rax, xmm1, xmm2, xmm3

# ---- A. {disp8} / {disp32} ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("src, expect", [
    ("{disp32} mov eax, [rax]", "8b8000000000"),                       # GNU as 2.40
    ("{disp32} mov eax, [rbp]", "8b8500000000"),                       # GNU as 2.40
    ("{disp32} mov eax, [rax+0x10]", "8b8010000000"),                  # GNU as 2.40
    ("{disp32} lea rax, [rsp]", "488d842400000000"),                   # GNU as 2.40
    ("{disp32} mov eax, [rax*2]", "8b044500000000"),                   # GNU as 2.40 (no base: a disp32 anyway)
    ("{disp32} mov eax, [rip]", "8b0500000000"),                       # GNU as 2.40
    ("{disp32} mov eax, [eax]", "678b8000000000"),                     # GNU as 2.40
    ("{disp32} mov eax, fs:[rax]", "648b8000000000"),                  # GNU as 2.40
    ("{disp32} jmp qword ptr [rax]", "ffa000000000"),                  # GNU as 2.40
    ("{disp32} vaddps zmm1, zmm2, [rax+64]", "62f16c48588840000000"),  # GNU as 2.40 (no disp8*N)
    ("{disp32} vaddps zmm1, zmm2, dword ptr [rax+8]{1to16}", "62f16c58588808000000"),  # GNU as 2.40
    ("{disp32} vaddps xmm1, xmm2, dword ptr [rax]{1to4}", "62f16c18588800000000"),     # GNU as 2.40
    ("{disp32} vaddps zmm1{k1}{z}, zmm2, [rax]", "62f16cc9588800000000"),              # GNU as 2.40
    ("{disp32} vmovups [rax]{k1}, zmm1", "62f17c49118800000000"),                      # GNU as 2.40
    ("{disp32} vgatherdps zmm1{k1}, [rax+zmm2*4]", "62f27d49928c9000000000"),          # GNU as 2.40
    ("{disp32} {vex3} vaddps xmm1, xmm2, [rax]", "c4e168588800000000"),                # GNU as 2.40
])
def test_disp32_writes_a_disp32(src, expect):
    """``{disp32}``: the memory operand's displacement in a 32-bit field (mod 10) even where none or a disp8 would do."""
    assert x86gen.assemble(src).hex() == expect
    assert x86gen.assemble("nop\n" + src).hex() == "90" + expect   # (the program reader's path)


@pytest.mark.parametrize("src, expect", [
    ("{disp8} mov eax, [rax]", "8b4000"),                              # GNU as 2.40
    ("{disp8} mov eax, [rbp]", "8b4500"),                              # GNU as 2.40
    ("{disp8} mov eax, [r13]", "418b4500"),                            # GNU as 2.40
    ("{disp8} mov eax, [eax]", "678b4000"),                            # GNU as 2.40
    ("lock {disp8} add [rax], ecx", "f0014800"),                       # GNU as 2.40
    ("{disp8} vaddps zmm1, zmm2, [rax+64]", "62f16c48584801"),         # GNU as 2.40 (disp8*N, N = 64)
    ("{disp8} vaddps zmm1, zmm2, dword ptr [rax+8]{1to16}", "62f16c58584802"),  # GNU as 2.40 (N = 4 with {1to16})
])
def test_disp8_writes_a_disp8(src, expect):
    """``{disp8}``: the displacement in an 8-bit field (mod 01), a 0 too; in EVEX the disp8*N."""
    assert x86gen.assemble(src).hex() == expect


@pytest.mark.parametrize("src, why", [
    ("{disp8} mov eax, [rax+0x1000]", "does not fit in a disp8"),      # GNU as 2.40: 8b 80 00 10 00 00 (disp32)
    ("{disp8} mov eax, [rax*2]", "no base register"),                  # GNU as 2.40: 8b 04 45 00 00 00 00
    ("{disp8} mov eax, [rip+8]", "no base register"),                  # GNU as 2.40: 8b 05 08 00 00 00
    ("{disp8} mov eax, [0x10]", "no base register"),                   # GNU as 2.40: 8b 04 25 10 00 00 00
    ("{disp8} vaddps zmm1, zmm2, [rax+68]", "scaled by N = 64"),       # GNU as 2.40: 62 f1 6c 48 58 88 44 00 00 00
    ("{disp32} movabs eax, [0x10]", "moffs"),                          # GNU as 2.40: a1 + 8-byte address
    ("{disp16} mov eax, [rax]", "no 16-bit addressing"),               # GNU as 2.40: invalid `{disp16}' prefix
])
def test_displacement_size_that_cannot_be_honoured_is_an_error(src, why):
    """A displacement size the address cannot have is an error naming the pseudo-prefix (GNU as writes another one)."""
    word = src.split()[0] if src[0] == "{" else src.split()[1]
    for text in (src, "nop\n" + src):
        with pytest.raises(PrefixError, match=rf"{re.escape(word)} pseudo-prefix cannot be honoured: .*{why}"):
            x86gen.assemble(text)


def test_disp8_and_disp32_on_a_branch_choose_rel8_or_rel32():
    """On a branch, ``{disp32}`` is its rel32 form and ``{disp8}`` its rel8 form, relaxation or not."""
    src = ("L: nop\n{disp32} jmp L\n{disp8} jmp L\n{disp32} je L\n{disp8} je L\n{disp32} call L\n{disp32} jmp M\n"
           "{disp32} xbegin L\n.zero 300\nM: nop\n{disp32} jmp L\n")
    # GNU as 2.40 (objcopy -O binary -j .text)
    expect = ("90e9faffffffebf80f84f2ffffff74f0e8ebffffffe932010000c7f8e0ffffff" + "00" * 300 + "90e9aefeffff")
    assert x86gen.assemble(src).hex() == expect
    assert x86gen.encode("{disp32} jmp", 0x1000).hex() == "e9fb0f0000"   # (GNU as 2.40: `{disp32} jmp 0x1000` at 0)


@pytest.mark.parametrize("src", ["{disp32} loop L", "{disp32} jrcxz L", "{disp8} call L", "{disp8} xbegin L",
                                 "{load} jmp L"])
def test_pseudo_prefix_a_branch_cannot_honour_is_an_error(src):
    """loop/jrcxz have no rel32, call and xbegin no rel8 (GNU as 2.40 writes the form they have); a branch to a label
    has no direction to choose."""
    with pytest.raises(PrefixError, match="pseudo-prefix cannot be honoured"):
        x86gen.assemble("L: nop\n" + src)


def test_disp8_branch_out_of_reach_is_an_error():
    """``{disp8} jmp`` to a target beyond a rel8 (GNU as 2.40 relaxes it to E9 rel32)."""
    with pytest.raises(EncodeError, match=r"\{disp8\} jmp .*rel8"):
        x86gen.assemble("{disp8} jmp N\n.zero 300\nN: nop")
    with pytest.raises(PrefixError, match=r"\{disp8\} pseudo-prefix cannot be honoured: the target is out of a rel8's reach"):
        x86gen.encode("{disp8} jmp", 0x1000)


# ---- A. {load} / {store} -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("src, expect", [
    ("{load} mov eax, ecx", "8bc1"),                # GNU as 2.40
    ("{store} mov eax, ecx", "89c8"),               # GNU as 2.40
    ("{store} mov al, bl", "88d8"),                 # GNU as 2.40
    ("{load} cmp eax, ecx", "3bc1"),                # GNU as 2.40
    ("{store} cmp eax, ecx", "39c8"),               # GNU as 2.40
    ("{load} movaps xmm1, xmm2", "0f28ca"),         # GNU as 2.40
    ("{store} movaps xmm1, xmm2", "0f29d1"),        # GNU as 2.40
    ("{store} movdqa xmm1, xmm2", "660f7fd1"),      # GNU as 2.40
    ("{load} movq xmm1, xmm2", "f30f7eca"),         # GNU as 2.40
    ("{store} movq xmm1, xmm2", "660fd6d1"),        # GNU as 2.40
    ("{load} movq mm0, mm1", "0f6fc1"),             # GNU as 2.40
    ("{store} movq mm0, mm1", "0f7fc8"),            # GNU as 2.40
    ("{store} movsd xmm1, xmm2", "f20f11d1"),       # GNU as 2.40
    ("{load} vmovaps xmm1, xmm2", "c5f828ca"),      # GNU as 2.40
    ("{store} vmovaps xmm1, xmm2", "c5f829d1"),     # GNU as 2.40
    ("{store} vmovaps xmm8, xmm1", "c4c17829c8"),   # GNU as 2.40 (C4: xmm8 in ModRM.rm)
    ("{load} vmovaps xmm8, xmm1", "c57828c1"),      # GNU as 2.40
    ("{load} vmovsd xmm1, xmm2, xmm3", "c5eb10cb"),     # GNU as 2.40
    ("{store} vmovsd xmm1, xmm2, xmm3", "c5eb11d9"),    # GNU as 2.40
    ("{store} vmovq xmm1, xmm2", "c5f9d6d1"),           # GNU as 2.40
    ("{store} vmovaps zmm1, zmm2", "62f17c4829d1"),     # GNU as 2.40
    ("{store} vmovdqu8 zmm1, zmm2", "62f17f487fd1"),    # GNU as 2.40
    ("{load} pextrw eax, xmm1, 1", "660fc5c101"),       # GNU as 2.40
    ("{store} pextrw eax, xmm1, 1", "660f3a15c801"),    # GNU as 2.40
    ("{load} test ecx, edx", "85ca"),               # GNU as 2.40 (the operands swapped into test r/m32, r32)
    ("{store} test ecx, edx", "85d1"),              # GNU as 2.40
    ("{load} xchg ecx, edx", "87ca"),               # GNU as 2.40
    ("{store} xchg ecx, edx", "87d1"),              # GNU as 2.40
    ("{store} xchg eax, ecx", "87c8"),              # GNU as 2.40 (not 91: no ModRM)
    ("{load} test ecx, [rax]", "8508"),             # GNU as 2.40 (test/xchg with memory: one encoding)
    ("{load} mov eax, [rax]", "8b00"),              # GNU as 2.40
    ("{store} mov [rax], eax", "8900"),             # GNU as 2.40
    ("{store} mov eax, ecx\n{load} mov eax, ecx", "89c88bc1"),   # GNU as 2.40 (a program: kept apart per line)
])
def test_load_and_store_choose_the_direction(src, expect):
    """``{load}``/``{store}``: the form with the destination in ModRM.reg / ModRM.rm where the instruction has both."""
    assert x86gen.assemble(src).hex() == expect


@pytest.mark.parametrize("src", [
    "{store} mov eax, [rax]",       # GNU as 2.40: 8b 00 (the word dropped)
    "{load} mov [rax], eax",        # GNU as 2.40: 89 00
    "{load} add eax, 1",            # GNU as 2.40: 83 c0 01
    "{store} imul eax, ecx",        # GNU as 2.40: 0f af c1
    "{load} bt eax, ecx",           # GNU as 2.40: 0f a3 c8
    "{store} kmovw k1, k2",         # GNU as 2.40: c5 f8 90 ca
    "{load} nop",                   # GNU as 2.40: 90
])
def test_load_or_store_that_cannot_be_honoured_is_an_error(src):
    """An instruction whose forms have no such direction: an error naming the pseudo-prefix (GNU as drops the word)."""
    word = src.split()[0]
    with pytest.raises(PrefixError, match=rf"{re.escape(word)} pseudo-prefix cannot be honoured"):
        x86gen.assemble(src)


# ---- A. {vex2} ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("src, expect", [
    ("{vex2} vaddps xmm1, xmm2, xmm3", "c5e858cb"),     # GNU as 2.40
    ("{vex2} vaddps ymm1, ymm2, ymm3", "c5ec58cb"),     # GNU as 2.40
])
def test_vex2_writes_the_two_byte_vex_prefix(src, expect):
    assert x86gen.assemble(src).hex() == expect


@pytest.mark.parametrize("src, why", [
    ("{vex2} vaddps xmm8, xmm9, xmm10", "VEX.B"),                  # GNU as 2.40: c4 41 30 58 c2
    ("{vex2} vpdpbusd xmm1, xmm2, xmm3", "opcode map 0F38"),       # GNU as 2.40: c4 e2 69 50 cb
    ("{vex2} vaddps xmm1, xmm2, dword ptr [rax]{1to4}", "need EVEX"),   # GNU as 2.40: unsupported instruction
    ("{vex2} add eax, ecx", "add has no VEX form"),                # GNU as 2.40: unsupported instruction
])
def test_vex2_that_cannot_be_honoured_is_an_error(src, why):
    """The 2-byte VEX prefix has no X̄/B̄, map or W field (SDM Vol.2 2.3.5.6): an instruction needing one is an error."""
    with pytest.raises(PrefixError, match=rf"\{{vex2\}} pseudo-prefix cannot be honoured: .*{why}"):
        x86gen.assemble(src)


@pytest.mark.parametrize("src", ["{load} {store} mov eax, ecx", "{disp8} {disp32} mov eax, [rax]",
                                 "{vex3} {vex2} vaddps xmm1, xmm2, xmm3", "{vex2} {evex} vaddps xmm1, xmm2, xmm3"])
def test_contradicting_pseudo_prefixes_are_an_error(src):
    """Two pseudo-prefixes asking for different encodings (GNU as 2.40 takes the last one)."""
    with pytest.raises(PrefixError, match="ask for different encodings"):
        x86gen.assemble(src)


def test_pseudo_prefixes_as_words_of_encode():
    """The Python API takes them as prefix words of the mnemonic, as ``lock`` and ``{vex3}`` (bytes: GNU as 2.40)."""
    assert x86gen.encode("{disp32} mov", eax, mem(rax, size=32)).hex() == "8b8000000000"
    assert x86gen.encode("{disp8} mov", eax, mem(rax, size=32)).hex() == "8b4000"
    assert x86gen.encode("{load} mov", eax, ecx).hex() == "8bc1"
    assert x86gen.encode("{vex2} vaddps", xmm1, xmm2, xmm3).hex() == "c5e858cb"
    a = x86gen.Assembler()
    a.emit("{store} mov", eax, ecx)
    a.emit("{disp32} mov", eax, mem(rax, size=32))
    assert a.assemble().hex() == "89c8" + "8b8000000000"


# ---- B. {vex}/{vex3}/{evex} that the operands cannot have ----------------------------------------------------------


@pytest.mark.parametrize("src, why", [
    ("{vex} vaddps xmm1, xmm2, dword ptr [rax]{1to4}", r"broadcast \(dword bcst \[rax\]\) needs EVEX"),
    ("{vex3} vaddps xmm1, xmm2, dword ptr [rax]{1to4}", r"broadcast \(dword bcst \[rax\]\) needs EVEX"),
    ("{vex} vmovups xmmword ptr [rax]{k1}, xmm1", r"masking \(\{k1\}\) needs EVEX"),
    ("{vex} vaddps xmm1{k1}{z}, xmm2, xmm3", r"masking \(\{k1\} \{z\}\) needs EVEX"),
])
def test_vex_with_evex_decorations_is_an_error(src, why):
    """``{vex}`` asks for VEX; masking and broadcast need EVEX (GNU as 2.40: unsupported masking / instruction). It was
    dropped for a broadcast (EVEX bytes) and its error said "unknown mnemonic" for a masked store."""
    word = src.split()[0]
    for text in (src, "nop\n" + src):
        with pytest.raises(PrefixError, match=rf"{re.escape(word)} pseudo-prefix cannot be honoured: {why}"):
            x86gen.assemble(text)


@pytest.mark.parametrize("src, why", [
    ("{evex} vfmaddps xmm1, xmm2, xmm3, xmm4", "vfmaddps has no EVEX form"),   # GNU as 2.40: unsupported instruction
    ("{evex} add eax, ecx", "add has no EVEX form"),                           # GNU as 2.40: unsupported instruction
    ("{vex} add eax, ecx", "no VEX-encoded form of 'add'"),                    # GNU as 2.40: unsupported instruction
    ("{vex3} add eax, ecx", "not VEX-encoded"),                                # GNU as 2.40: unsupported instruction
    ("{vex} vaddps xmm16, xmm1, xmm2", "only EVEX encodes xmm16"),             # GNU as 2.40: unsupported instruction
])
def test_vex_or_evex_without_such_a_form_says_it_cannot_be_honoured(src, why):
    word = src.split()[0]
    with pytest.raises(EncodeError, match=rf"{re.escape(word)}.*{why}|{why}.*{re.escape(word)} pseudo-prefix cannot be honoured"):
        x86gen.assemble(src)
    with pytest.raises(EncodeError, match="pseudo-prefix cannot be honoured"):
        x86gen.assemble(src)


# ---- C. messages that named the wrong thing -----------------------------------------------------------------------


def test_disp32_without_a_memory_operand_names_the_pseudo_prefix():
    """``{disp32} sbb cl, bh`` said "cannot parse memory operand 'sbb cl'" (GNU as 2.40 drops the word: 18 f9)."""
    with pytest.raises(PrefixError, match=r"\{disp32\} pseudo-prefix cannot be honoured: .*sbb cl, bh has no memory operand"):
        x86gen.assemble("{disp32} sbb cl, bh")


def test_load_on_an_instruction_without_a_direction_names_the_pseudo_prefix():
    """``{load} fbstp tbyte ptr [rip+256]`` said "missing + or - before 'TBYTE'" (GNU as 2.40: df 35 00 01 00 00)."""
    with pytest.raises(PrefixError, match=r"\{load\} pseudo-prefix cannot be honoured"):
        x86gen.assemble("{load} fbstp tbyte ptr [rip+256]")


def test_data16_on_mov_from_a_segment_register_cites_movs_o16_forms():
    """``data16 mov ax, ds`` cited "66 0F 00 /r" (sldt/str's opcode); the message lists mov's o16 forms with a segment
    register. (``data16 mov ax, ds`` is MOV_RM16_SREG now, 66 8C D8 with its one 66, as x86gen takes ``data16 sldt ax``;
    GNU as 2.40 refuses both: "same type of prefix used twice", and writes 66 8c d8 for `data16 mov eax, ds`.)"""
    with pytest.raises(PrefixError) as ex:
        x86gen.assemble("data16 mov al, ds")   # (GNU as 2.40: "operand type mismatch")
    assert "0F 00" not in str(ex.value) and "MOV_SREG_RM16 (o16 8E /r" in str(ex.value) and "MOV_RM16_SREG (o16 8C /r" in str(ex.value)
    assert x86gen.assemble("data16 mov ax, ds") == x86gen.assemble("mov ax, ds") == bytes.fromhex("668cd8")   # GNU as 2.40: mov ax, ds
