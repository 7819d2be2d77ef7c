"""The text front end's rules, one test per rule: comments and statements, integer literals,
strings, data directives, register names, branches, aliases, messages.

Expected bytes come from GNU as 2.40 (`as --64 -msyntax=intel -mnaked-reg`, then
`objcopy -O binary -j .text`), marked `# GNU as 2.40`; where GNU as is on the machine, the
`gnu_as` cases also run it to check the hard-coded bytes.
"""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

import x86gen
from x86gen import AsmSyntaxError, EncodeError, OperandError, UnknownMnemonicError

HAVE_AS = shutil.which("as") is not None and shutil.which("objcopy") is not None


def gnu_as(src: str, tmp_path) -> bytes:
    """The .text bytes GNU as makes of an Intel-syntax program."""
    s, o, b = tmp_path / "p.s", tmp_path / "p.o", tmp_path / "p.bin"
    s.write_text(".intel_syntax noprefix\n.text\n" + src + "\n", encoding="utf-8")
    subprocess.run(["as", "--64", "-msyntax=intel", "-mnaked-reg", "-o", str(o), str(s)], check=True, capture_output=True)
    subprocess.run(["objcopy", "-O", "binary", "-j", ".text", str(o), str(b)], check=True)
    return b.read_bytes()


def check(src: str, hexbytes: str, tmp_path) -> None:
    """x86gen gives the bytes GNU as 2.40 gave (and gives, when it is installed)."""
    assert x86gen.assemble(src).hex() == hexbytes
    if HAVE_AS: assert gnu_as(src, tmp_path).hex() == hexbytes


# ---- comments and statements --------------------------------------------------------------------------

@pytest.mark.parametrize("src, expect", [
    ("xor eax, eax; ret", "31c0c3"),                        # GNU as 2.40
    ("xor eax, eax ; ret ; nop", "31c0c390"),               # GNU as 2.40
    ("nop\nxor eax, eax; ret\nint3", "9031c0c3cc"),         # GNU as 2.40
    ("l: nop; jmp l", "90ebfd"),                            # GNU as 2.40
    (".byte 1; .byte 2", "0102"),                           # GNU as 2.40
    ("xor eax, eax; ret\nxor eax, eax; ret", "31c0c331c0c3"),  # GNU as 2.40: a repeated line (the line cache)
    (".section .text; nop", "90"),                          # GNU as 2.40
])
def test_semicolon_separates_statements(src, expect, tmp_path):
    check(src, expect, tmp_path)


def test_semicolon_line_is_never_cached_as_one_instruction():
    """The text and program caches (and their flat fast paths) must not keep `xor eax, eax; ret` as its first statement."""
    for _ in range(3):
        assert x86gen.assemble("xor eax, eax; ret").hex() == "31c0c3"            # GNU as 2.40
        assert x86gen.assemble("nop\nxor eax, eax; ret").hex() == "9031c0c3"     # GNU as 2.40
    from x86gen.text import clear_caches
    clear_caches()
    assert x86gen.assemble("xor eax, eax\nxor eax, eax; ret").hex() == "31c031c0c3"  # GNU as 2.40


@pytest.mark.parametrize("src, expect", [
    ("ret # c", "c3"),                                      # GNU as 2.40
    ("ret # c ; nop", "c3"),                                # GNU as 2.40: `;` in a comment is comment
    ("// c\nret", "c3"),                                    # GNU as 2.40
    ("/* a */ ret", "c3"),                                  # GNU as 2.40
    ("ret /* a */ ; nop /* b */", "c390"),                  # GNU as 2.40
    ("ret /* a\n b */\nret", "c3c3"),                       # GNU as 2.40: a block comment spanning lines
    ("nop\n/*\nret\n*/\nint3", "90cc"),                     # GNU as 2.40
    ('.ascii "/* x" /* c */', "2f2a2078"),                  # GNU as 2.40
])
def test_comments_as_gnu_as(src, expect, tmp_path):
    check(src, expect, tmp_path)


def test_double_slash_comment_after_statement():
    """`ret // c`: llvm-mc reads `//` as a comment anywhere (GNU as only at the start of a line, an error
    elsewhere); x86gen as llvm-mc: the same bytes as without the comment."""
    assert x86gen.assemble("ret // c") == bytes.fromhex("c3")


@pytest.mark.parametrize("src, expect", [
    ('.ascii "a;b#c"', "613b622363"),                       # GNU as 2.40
    ('.ascii "a//b/*c*/"', "612f2f622f2a632a2f"),           # GNU as 2.40
    ("mov al, ';'", "b03b"),                                # GNU as 2.40
    ("mov al, '#'", "b023"),                                # GNU as 2.40
    ("mov al, ';'; ret", "b03bc3"),                         # GNU as 2.40
])
def test_quotes_protect_comment_characters(src, expect, tmp_path):
    check(src, expect, tmp_path)


@pytest.mark.parametrize("src", ["ret /* x", "nop\nret /* x\nnop", '.ascii "ab'])
def test_unterminated_comment_or_string_is_an_error(src):
    with pytest.raises(AsmSyntaxError, match="unterminated"):
        x86gen.assemble(src)


def test_block_comment_keeps_line_numbers():
    with pytest.raises(UnknownMnemonicError, match=r"line 4: .frob."):
        x86gen.assemble("nop /* one\ntwo\nthree */ nop\nfrob")


def test_symbol_assignment_after_a_semicolon_is_a_statement(tmp_path):
    """`x = 1` after a `;` meant as a comment is a symbol assignment, as GNU as reads it (symbols: issue 24; it was
    refused before x86gen read them): no bytes, and `total` is 0 afterwards."""
    check("xor eax, eax ; total = 0", "31c0", tmp_path)                          # GNU as 2.40
    check("xor eax, eax ; total = 0\nmov ecx, total", "31c0b900000000", tmp_path)  # GNU as 2.40


def test_instruction_parse_takes_one_statement():
    assert x86gen.Instruction.parse("ret # c").mnemonic == "ret"
    with pytest.raises(AsmSyntaxError, match="statements"):
        x86gen.Instruction.parse("xor eax, eax; ret")


# ---- integer literals ---------------------------------------------------------------------------------

@pytest.mark.parametrize("src, expect", [
    ("mov eax, 017", "b80f000000"),                         # GNU as 2.40: a leading 0 is octal
    ("mov eax, -017", "b8f1ffffff"),                        # GNU as 2.40
    ("mov eax, 0", "b800000000"),                           # GNU as 2.40
    ("mov eax, 0x1F", "b81f000000"),                        # GNU as 2.40
    ("mov eax, 0X1f", "b81f000000"),                        # GNU as 2.40
    ("mov eax, 0b101", "b805000000"),                       # GNU as 2.40
    ("mov eax, 0B101", "b805000000"),                       # GNU as 2.40
    ("mov eax, [rax+017]", "8b400f"),                       # GNU as 2.40
    ("mov eax, [rax-010]", "8b40f8"),                       # GNU as 2.40
    ("lea rax, [rbx+rcx*2+017]", "488d444b0f"),             # GNU as 2.40
    ("nop\nmov eax, 017", "90b80f000000"),                  # GNU as 2.40 (the program parser)
])
def test_integer_literals_as_gnu_as(src, expect, tmp_path):
    check(src, expect, tmp_path)


def test_h_suffix_hex():
    """`0ffh`, `10h`: iced-x86's default Intel formatter prints hex this way (GNU as and llvm-mc do not take it)."""
    assert x86gen.assemble("mov eax, 0ffh") == x86gen.assemble("mov eax, 0xff")
    assert x86gen.assemble("mov eax, [rax+10h]") == x86gen.assemble("mov eax, [rax+0x10]")
    with pytest.raises(EncodeError, match="undefined label 'ffh'"):
        x86gen.assemble("mov eax, ffh; ret")        # must start with a digit: ffh is a symbol (here: no label)


@pytest.mark.parametrize("src, expect", [
    ("mov eax, 'a'", "b861000000"),                         # GNU as 2.40
    ("mov eax, 'A'", "b841000000"),                         # GNU as 2.40: case kept
    ("mov al, '\\n'", "b00a"),                              # GNU as 2.40
    ("mov al, '\\''", "b027"),                              # GNU as 2.40
    ("push 'z'", "6a7a"),                                   # GNU as 2.40
    (".long 'a'", "61000000"),                              # GNU as 2.40
])
def test_character_constants(src, expect, tmp_path):
    check(src, expect, tmp_path)


@pytest.mark.parametrize("src, expect", [
    (".byte -'h'", "98"),                                   # GNU as 2.40
    (".byte +'a'", "61"),                                   # GNU as 2.40
    (".byte ~'a'", "9e"),                                   # GNU as 2.40
    (".byte - 'a'", "9f"),                                  # GNU as 2.40
    (".byte -~'a'", "62"),                                  # GNU as 2.40
    (".byte --'a'", "61"),                                  # GNU as 2.40
    (".byte -'a", "9f"),                                    # GNU as 2.40: unclosed
    (".byte -'\\n'", "f6"),                                 # GNU as 2.40
    (".byte -'''", "d9"),                                   # GNU as 2.40
    (".byte 'a'+'b'", "c3"),                                # GNU as 2.40 (x86gen stored the string a'+'b)
    (".byte 'a'+1", "62"),                                  # GNU as 2.40
    (".byte 1+'a'", "62"),                                  # GNU as 2.40
    (".byte -'a'+1", "a0"),                                 # GNU as 2.40
    (".byte -'a', 'b'", "9f62"),                            # GNU as 2.40
    (".short ~'a'", "9eff"),                                # GNU as 2.40
    (".long -'a'", "9fffffff"),                             # GNU as 2.40
    (".long 'a'-'b'", "ffffffff"),                          # GNU as 2.40
    (".quad -'a'", "9fffffffffffffff"),                     # GNU as 2.40
    (".byte ~5", "fa"),                                     # GNU as 2.40
    (".byte ~-1", "00"),                                    # GNU as 2.40
    (".quad ~0", "ffffffffffffffff"),                       # GNU as 2.40
    (".byte ~'a'+1", "9f"),                                 # GNU as 2.40: (~97)+1 (was refused before expressions)
])
def test_character_constants_in_data_expressions(src, expect, tmp_path):
    """A character constant is a number in a data value's expression, under unary -, + and ~ too."""
    check(src, expect, tmp_path)


@pytest.mark.parametrize("src", [".long 'ab'", ".byte 'a'b", ".byte 'a'''", ".byte -'é'", ".byte ~0x100"])
def test_bad_character_constants_in_data_are_errors(src):
    """GNU as: errors (backward ref to unknown label, junk) or a truncation warning; x86gen: an error."""
    with pytest.raises(EncodeError):
        x86gen.assemble(src)


@pytest.mark.parametrize("src", [
    "mov eax, 08", "mov eax, 09", "mov eax, [rax+08]",     # GNU as: junk `8' after expression
    "mov eax, 1_000", "mov eax, 0x1_0",                    # GNU as: junk `_000' / bignum error
    "mov eax, ١٢", "mov eax, １", "mov eax, [rax+١]",      # non-ASCII digits (Python's int() takes them)
    "mov eax, 0o17",                                       # GNU as and llvm-mc: junk `o17'
    "nop\nmov eax, 08", "nop\nmov eax, ١٢",
    "mov eax, 'é'", "mov al, '\\101'",                      # GNU as: not one character
])
def test_malformed_numbers_are_errors(src):
    with pytest.raises(AsmSyntaxError):
        x86gen.assemble(src)


@pytest.mark.parametrize("src", ["mov eax, [rax 5]", "mov eax, [rax rbx]", "mov eax, [rax*2 5]", "lea rax, [rip+T 5]\nT:",
                                 ".long T 5\nT:", "nop\nmov eax, [rbx 8]"])
def test_juxtaposed_terms_are_errors(src):
    """GNU as: `bad expression` / `junk`; x86gen read `[rax 5]` as `[rax+5]`."""
    with pytest.raises(AsmSyntaxError, match="missing [+] or -"):
        x86gen.assemble(src)


# ---- strings ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("src, expect", [
    ('.ascii "é"', "c3a9"),                                 # GNU as 2.40: UTF-8
    ('.ascii "\\x4142"', "42"),                             # GNU as 2.40: the last two hex digits
    ('.ascii "\\x1"', "01"),                                # GNU as 2.40
    ('.ascii "\\q"', "71"),                                 # GNU as 2.40
    ('.ascii "\\101"', "41"),                               # GNU as 2.40
    ('.ascii "\\1234"', "5334"),                            # GNU as 2.40: at most three octal digits
    ('.ascii "\\377"', "ff"),                               # GNU as 2.40
    ('.ascii "\\n\\t\\\\\\"\\b\\f\\r\\v"', "0a095c22080c0d0b"),     # GNU as 2.40
    ('.asciz "a" "b"', "616200"),                           # GNU as 2.40: juxtaposed strings are one
    ('.ascii "a" , "b"', "6162"),                           # GNU as 2.40
    ('.string "x", "y"', "78007900"),                       # GNU as 2.40
])
def test_strings_utf8_and_gnu_escapes(src, expect, tmp_path):
    check(src, expect, tmp_path)


def test_string_directive_matches_db():
    a = x86gen.Assembler()
    a.db("é")
    assert x86gen.assemble('.ascii "é"') == a.assemble()


@pytest.mark.parametrize("body", ["\\x", "\\xg", "\\777", "\\400", "\\u0100", "\\U00000100", "\\8", "\\a", "\\e"])
def test_malformed_escapes_are_syntax_errors(body):
    """GNU as reads these silently as something else (\\x: 0, \\777: 0xff, \\u: u); llvm-mc refuses them."""
    with pytest.raises(AsmSyntaxError, match="line 1"):
        x86gen.assemble(f'.ascii "{body}"')


# ---- data directives ------------------------------------------------------------------------------

@pytest.mark.parametrize("src", [".long 1.5", ".quad 1e2", ".int 1.0", ".byte 1.5", ".short 1e1", "db 1.5", "dw 1.5",
                                 "nop\n.long 1.5"])
def test_float_in_integer_directive_is_an_error(src):
    """GNU as: `junk at end of line`; llvm-mc: `out of range literal value`. x86gen stored float bits."""
    with pytest.raises(AsmSyntaxError, match="floating-point number in an integer directive"):
        x86gen.assemble(src)


def test_nasm_dd_dq_floats_are_float32_float64():
    """NASM's `dd 1.5` is float32 1.5 (as `Assembler.dd(1.5)` and its listing `dd 1.5`); range-checked like .float."""
    assert x86gen.assemble("dd 1.5, 2") == x86gen.assemble(".float 1.5\n.long 2")
    assert x86gen.assemble("dq 1.5") == x86gen.assemble(".double 1.5")
    with pytest.raises(AsmSyntaxError, match="out of the range"):
        x86gen.assemble("dd 1e39")


@pytest.mark.parametrize("src", [".float 1e39", "dd 1e39", "dq 1e309", ".double 1e309", ".float 1e-50", ".double 1e-400",
                                 ".float 0x10", ".float 1_0.5", ".float １"])
def test_float_out_of_range_or_malformed_is_an_error(src):
    """GNU as: `cannot create floating-point number` (x86gen: OverflowError, or inf / 0 stored)."""
    with pytest.raises(AsmSyntaxError):
        x86gen.assemble(src)


@pytest.mark.parametrize("src, expect", [
    (".float 1.5", "0000c03f"),                             # GNU as 2.40
    (".double 1.5, 2", "000000000000f83f0000000000000040"), # GNU as 2.40
    (".float nan", "ffffff7f"),                             # GNU as 2.40 (and llvm-mc: 2147483647)
    (".float -nan", "ffffffff"),                            # GNU as 2.40
    (".double nan", "ffffffffffffff7f"),                    # GNU as 2.40
    (".float -inf", "000080ff"),                            # GNU as 2.40
    (".float 1e-40", "c2160100"),                           # GNU as 2.40: a denormal
])
def test_float_directives_as_gnu_as(src, expect, tmp_path):
    check(src, expect, tmp_path)


def test_integer_directive_range_error_is_short():
    with pytest.raises(x86gen.ImmediateRangeError) as ei:
        x86gen.assemble(".long 0x" + "f" * 100_000)
    assert len(str(ei.value)) < 1000


# ---- alignment and fill arguments ---------------------------------------------------------------------

@pytest.mark.parametrize("src", [".p2align -1", ".balign -8", ".align -4", ".p2align 1.5", ".p2align 64", ".zero -1",
                                 ".skip 1.5", ".zero 2, 300", ".p2align " + "1" * 5000])
# (.zero 10000000000 is a SizeLimitError: tests/test_core_rules.py::test_output_size_limit)
def test_negative_or_non_integer_directive_arguments_are_syntax_errors(src):
    """GNU as: `.p2align -1` is `alignment too large: 63 assumed`, then out of memory; x86gen: ValueError."""
    with pytest.raises(AsmSyntaxError):
        x86gen.assemble(src)


@pytest.mark.parametrize("src, expect", [
    ("nop\n.p2align 3\nret", "90" + "0f1f8000000000" + "c3"),  # GNU as 2.40
    (".skip 2, 0x41", "4141"),                              # GNU as 2.40
])
def test_directive_arguments_pass_through(src, expect, tmp_path):
    check(src, expect, tmp_path)


@pytest.mark.parametrize("src, expect", [
    ("nop\n.balign 8, , 0", "90" + "0f1f8000000000"),       # GNU as 2.40: max-skip 0 is no limit
    ("nop\n.balign 8, 0xcc, 0", "90" + "cc" * 7),           # GNU as 2.40
    ("nop\n.p2align 3, , 0", "90" + "0f1f8000000000"),      # GNU as 2.40
    ("nop\n.align 8, 0, 0", "90" + "00" * 7),               # GNU as 2.40
    ("nop\n.balign 8, , -1", "90" + "0f1f8000000000"),      # GNU as 2.40: below 0 too
    ("nop\n.p2align 3, , -100", "90" + "0f1f8000000000"),   # GNU as 2.40
    ("nop\n.balign 8, , 7", "90" + "0f1f8000000000"),       # GNU as 2.40: 7 bytes allowed, 7 needed
    ("nop\n.balign 8, , 6", "90"),                          # GNU as 2.40: 7 needed, so none
    ("nop\n.balign 8, , 6\nret", "90c3"),                   # GNU as 2.40
])
def test_align_max_skip_zero_is_no_limit(src, expect, tmp_path):
    check(src, expect, tmp_path)


# ---- GNU as's shorthands --------------------------------------------------------------------------

@pytest.mark.parametrize("src, expect", [
    ("shr si", "66d1ee"),                                   # GNU as 2.40: count 1 implied
    ("shl al", "d0e0"),                                     # GNU as 2.40
    ("sal r9", "49d1e1"),                                   # GNU as 2.40
    ("sar ecx", "d1f9"),                                    # GNU as 2.40
    ("rol rax", "48d1c0"),                                  # GNU as 2.40
    ("ror bl", "d0cb"),                                     # GNU as 2.40
    ("shr dword ptr [rax]", "d128"),                        # GNU as 2.40
    ("sal qword ptr [rax+8]", "48d16008"),                  # GNU as 2.40
    ("rol word ptr [rax]", "66d100"),                       # GNU as 2.40
    ("pushf", "9c"),                                        # GNU as 2.40: 64-bit operand size by default
    ("pushfq", "9c"),                                       # GNU as 2.40
    ("popf", "9d"),                                         # GNU as 2.40
    ("popfq", "9d"),                                        # GNU as 2.40
    ("fwait", "9b"),                                        # GNU as 2.40
    ("leaveq", "c9"),                                       # GNU as 2.40
    ("enterq 1, 2", "c8010002"),                            # GNU as 2.40
    ("in ax, dx", "66ed"),                                  # GNU as 2.40
    ("out 5, eax", "e705"),                                 # GNU as 2.40
    ("extrq xmm1, 1, 2", "660f78c10102"),                   # GNU as 2.40
    ("blendvps xmm1, xmm2, xmm0", "660f3814ca"),            # GNU as 2.40: the implicit xmm0 written out
    ("blendvps xmm1, xmm2", "660f3814ca"),                  # GNU as 2.40
    ("sha256rnds2 xmm1, [rax], xmm0", "0f38cb08"),          # GNU as 2.40
    ("vmrun rax", "0f01d8"),                                # GNU as 2.40: implicit registers written out
    ("invlpga rax, ecx", "0f01df"),                         # GNU as 2.40
    ("clzero rax", "0f01fc"),                               # GNU as 2.40
    ("invlpgb rax, ecx, edx", "0f01fe"),                    # GNU as 2.40
    ("rmpupdate rax, rcx", "f20f01fe"),                     # GNU as 2.40
    ("push [rax]", "ff30"),                                 # GNU as 2.40: unsized push/pop memory is qword
    ("pop [rax]", "8f00"),                                  # GNU as 2.40
    ("push [rip+0x10]", "ff3510000000"),                    # GNU as 2.40
    ("push [rbx+rcx*4+8]", "ff748b08"),                     # GNU as 2.40
    ("pop [rbx+rcx*8]", "8f04cb"),                          # GNU as 2.40
    ("pop [0x10]", "8f042510000000"),                       # GNU as 2.40
    ("test eax, dword ptr [rax]", "8500"),                  # GNU as 2.40: test r, m is test m, r
    ("test eax, [rax]", "8500"),                            # GNU as 2.40
    ("test al, [rax]", "8400"),                             # GNU as 2.40
    ("test cx, word ptr [rax]", "668508"),                  # GNU as 2.40
    ("test r9w, [rax]", "66448508"),                        # GNU as 2.40
    ("test r9, [rax+rbx*2]", "4c850c58"),                   # GNU as 2.40
    ("vmovd xmm1, rax", "c4e1f96ec8"),                      # GNU as 2.40: vmovd with a 64-bit register is vmovq
    ("vmovd rax, xmm1", "c4e1f97ec8"),                      # GNU as 2.40
    ("vmovd xmm15, r9", "c441f96ef9"),                      # GNU as 2.40
    ("vmovd r9, xmm15", "c441f97ef9"),                      # GNU as 2.40
    ("movd rcx, mm5", "480f7ee9"), ("movd mm5, rcx", "480f6ee9"),          # GNU as 2.40: movd with a 64-bit register is movq
    ("movd xmm1, rax", "66480f6ec8"), ("movd r9, xmm15", "664d0f7ef9"),    # GNU as 2.40
    ("or al, -'{'", "0c85"), ("mov al, '{'", "b07b"),                      # GNU as 2.40: a brace in a literal is no decoration
    ("movsx r9, eax", "4c63c8"),                            # GNU as 2.40: movsx r64, r/m32 is movsxd
    ("movsx rax, r10d", "4963c2"),                          # GNU as 2.40
    ("movsx r9, dword ptr [rax]", "4c6308"),                # GNU as 2.40
    ("movsx rax, dword ptr [rbx+8]", "48634308"),           # GNU as 2.40
    ("fnstsw", "dfe0"),                                     # GNU as 2.40: fnstsw ax
])
def test_gnu_as_shorthands(src, expect, tmp_path):
    """Lines GNU as takes for another instruction: x86gen encodes that one, on every path of the text
    (the one-line fast path, the program parser's line cache and flat plans, and a line with a label)."""
    check(src, expect, tmp_path)
    assert x86gen.assemble("nop\n" + src).hex() == "90" + expect
    assert x86gen.assemble("x: " + src).hex() == expect


@pytest.mark.parametrize("src, expect", [
    ("push [rip+L]\nL:", "ff3500000000"),                   # GNU as 2.40
    ("pop [rip+L]\nL:", "8f0500000000"),                    # GNU as 2.40
    ("test eax, [rip+L]\nL:", "850500000000"),              # GNU as 2.40
    ("shr dword ptr [rip+L]\nL:", "d12d00000000"),          # GNU as 2.40
    ("movsx rax, dword ptr [rip+L]\nL:", "486305" + "00000000"),  # GNU as 2.40
])
def test_gnu_as_shorthands_with_labels(src, expect, tmp_path):
    check(src, expect, tmp_path)


@pytest.mark.parametrize("src", ["shr [rax]", "test eax, byte ptr [rax]", "push dword ptr [rax]", "movsx r9, [rax]",
                                 "movsx r9, r9", "vmovd ymm1, rax", "vmovd xmm1, qword ptr [rax]", "shr xmm1",
                                 "vmrun rbx", "invlpga ecx, rax", "blendvps xmm1, xmm2, xmm3"])
def test_gnu_as_shorthands_keep_errors(src):
    """GNU as refuses these too (ambiguous operand size, operand size or type mismatch)."""
    with pytest.raises(x86gen.OperandError):
        x86gen.assemble(src)


@pytest.mark.parametrize("src, expect", [
    ("vpextrw r8, xmm7, 1", "c579c5c701"),                  # GNU as 2.40 (x86gen: W1 c4c3f915f801)
    ("vpextrw rax, xmm1, 1", "c5f9c5c101"),                 # GNU as 2.40
    ("vpextrw r15, xmm15, 7", "c44179c5ff07"),              # GNU as 2.40
    ("vpinsrw xmm1, xmm2, r8, 1", "c4c169c4c801"),          # GNU as 2.40 (x86gen: W1 c4c1e9c4c801)
    ("vpinsrw xmm1, xmm2, rax, 1", "c5e9c4c801"),           # GNU as 2.40
    ("vpinsrw xmm9, xmm10, r11, 3", "c44129c4cb03"),        # GNU as 2.40
    ("vpextrw r8d, xmm7, 1", "c579c5c701"),                 # GNU as 2.40
    ("vpextrw word ptr [rax], xmm1, 1", "c4e379150801"),    # GNU as 2.40
    ("vpinsrw xmm1, xmm2, word ptr [rax], 1", "c5e9c40801"),  # GNU as 2.40
])
def test_vpextrw_vpinsrw_64_bit_register_as_its_32_bit_one(src, expect, tmp_path):
    """GNU as encodes vpextrw/vpinsrw of a 64-bit register with the VEX.W0 form (2-byte VEX where it can):
    the same instruction (the word is zero-extended / only the low 16 bits are read), shorter."""
    check(src, expect, tmp_path)
    assert x86gen.assemble("nop\n" + src).hex() == "90" + expect
    assert x86gen.assemble("x: " + src).hex() == expect


@pytest.mark.parametrize("src, expect", [
    ("movmskps rbx, xmm0", "0f50d8"),                       # GNU as 2.40 (the REX.W form: 480f50d8)
    ("movmskps r15, xmm14", "450f50fe"),                    # GNU as 2.40
    ("movmskpd r15, xmm14", "66450f50fe"),                  # GNU as 2.40
    ("pmovmskb r15, xmm14", "66450fd7fe"),                  # GNU as 2.40
    ("pextrb r15, xmm14, 0xff", "66450f3a14f7ff"),          # GNU as 2.40
    ("pextrw rsi, xmm3, 2", "660fc5f302"),                  # GNU as 2.40
    ("extractps r15, xmm14, 0xff", "66450f3a17f7ff"),       # GNU as 2.40
    ("pinsrb xmm6, rbx, 0x30", "660f3a20f330"),             # GNU as 2.40
    ("pinsrw xmm15, r14, 0xff", "66450fc4feff"),            # GNU as 2.40
    ("vpinsrb xmm15, xmm14, r13, 0xff", "c4430920fdff"),    # GNU as 2.40
    ("vmovmskps r15, ymm14", "c4417c50fe"),                 # GNU as 2.40
    ("vpmovmskb r15, xmm14", "c44179d7fe"),                 # GNU as 2.40
    ("vextractps r15, xmm14, 0xff", "c4437917f7ff"),        # GNU as 2.40
])
def test_gpr64_whose_width_changes_nothing_is_its_32_bit_one(src, expect, tmp_path):
    """movmskps/pmovmskb/pextrb/pinsrb/... of a 64-bit register: GNU as's encoding, without REX.W / with VEX.W0
    (the result is zero-extended, or only the low bits are read: SDM Vol.2 MOVMSKPS, PEXTRB, PINSRB)."""
    check(src, expect, tmp_path)
    assert x86gen.assemble("nop\n" + src).hex() == "90" + expect


@pytest.mark.parametrize("src, expect", [
    ("shld dword ptr [rax], eax", "0fa500"),                # GNU as 2.40: the count is cl
    ("shrd rax, rbx", "480fadd8"),                          # GNU as 2.40
    ("movq rax, rbx", "4889d8"),                            # GNU as 2.40: movq without a vector register is mov
    ("movq qword ptr [rax], rbx", "488918"),                # GNU as 2.40
    ("movq rax, 5", "48c7c005000000"),                      # GNU as 2.40
    ("movq rdi, qword ptr [0x10]", "488b3c2510000000"),     # GNU as 2.40
    ("movq xmm0, rax", "66480f6ec0"),                       # GNU as 2.40: still movq
    ("prefetchw dword ptr [rax]", "0f0d08"),                # GNU as 2.40: any size keyword on a prefetch/flush address
    ("clflush xmmword ptr [rax]", "0fae38"),                # GNU as 2.40
    ("cldemote dword ptr [r13+rdx*2+0x7fffffff]", "410f1c8455ffffff7f"),  # GNU as 2.40
    ("clwb byte ptr [rax]", "660fae30"),                    # GNU as 2.40
    ("pcmpestriq xmm1, xmm2, 1", "66480f3a61ca01"),         # GNU as 2.40 (iced: pcmpestri64)
    ("vpcmpestrmq xmm1, xmm2, 1", "c4e3f960ca01"),          # GNU as 2.40
    ("{vex} vpdpbusd xmm1, xmm2, xmm3", "c4e26950cb"),      # GNU as 2.40 (objdump prints AVX-VNNI with {vex})
    ("vpdpbusd xmm1, xmm2, xmm3", "62f26d0850cb"),          # GNU as 2.40, llvm-mc 14: AVX512_VNNI unless {vex}
    ("vpdpwssds ymm8, ymm1, ymmword ptr [r13+0x80]", "62527528534504"),   # GNU as 2.40 (disp8*32)
    ("vpmadd52luq xmm1, xmm2, xmm3", "62f2ed08b4cb"),       # GNU as 2.40, llvm-mc 14: AVX512_IFMA unless {vex}
    ("{vex} vpmadd52luq xmm1, xmm2, xmm3", "c4e2e9b4cb"),   # GNU as 2.40
    ("vcvtneps2bf16 xmm1, xmm2", "62f27e0872ca"),           # GNU as 2.40, llvm-mc 14: AVX512_BF16 unless {vex}
    ("vcvtneoph2ps xmm1, xmmword ptr [rax]", "c4e278b008"),  # GNU as 2.40: AVX-NE-CONVERT alone (no EVEX twin)
    ("prefetch byte ptr [rax]", "0f0d00"),                  # GNU as 2.40 (iced: prefetch_exclusive)
    ("pcmpestrmq xmm1, xmm2, 1", "66480f3a60ca01"),         # GNU as 2.40 (iced: pcmpestrm64)
    ("movdir64b rax, [rsi]", "660f38f806"),                 # GNU as 2.40: the destination address in ModRM.reg
    ("enqcmd rdi, [rsi]", "f20f38f83e"),                    # GNU as 2.40
    ("enqcmds r9, [r8+0x40]", "f3450f38f84840"),            # GNU as 2.40
    ("xchg al, cl", "86c8"),                                # GNU as 2.40: two registers, the first in ModRM.rm
    ("xchg ecx, edx", "87d1"),                              # GNU as 2.40 (llvm-mc 14: 87 ca, the same exchange)
    ("xchg r15w, word ptr [rip+0x10]", "6644873d10000000"),   # GNU as 2.40: the r/m form, memory first
    ("lock xchg qword ptr [rax], rcx", "f0488708"),         # GNU as 2.40
    ("xacquire xchg dword ptr [rax], ecx", "f28708"),       # GNU as 2.40 (xchg with memory needs no lock for HLE)
    ("fnsavew [rax]", "66dd30"),                            # GNU as 2.40
    ("frstor [rax]", "dd20"),                               # GNU as 2.40
])
def test_gnu_shorthands_and_spellings(src, expect, tmp_path):
    """GNU as's two-operand shld/shrd, movq as mov, size-less prefetch addresses, pcmpestriq and {vex}."""
    check(src, expect, tmp_path)
    assert x86gen.assemble("x: " + src).hex() == expect


@pytest.mark.parametrize("src, expect", [
    ("prefetch_exclusive byte ptr [rax]", "0f0d00"),        # iced-x86 1.21 prints 0f 0d 00 so (GNU as: prefetch)
    ("movsxd ax, cx", "6663c1"),                            # iced-x86 encoder, MOVSXD_R16_RM16 (GNU as 2.40 refuses it)
    ("movsxd r9w, word ptr [rax]", "66446308"),             # iced-x86 encoder
    ("fstpnce st(1)", "d9d9"),                              # iced-x86 encoder, FSTPNCE_STI (undocumented D9 D8+i)
    ("fstpnce st(2), st", "d9da"),                          # iced's Intel text of it
])
def test_iced_spellings(src, expect):
    """Text only iced-x86 writes (GNU as refuses it): iced's names of prefetch and the 16-bit movsxd."""
    assert x86gen.assemble(src).hex() == expect


def test_vex_pseudo_prefix_needs_a_vex_form():
    with pytest.raises(AsmSyntaxError, match=r"\{vex\} 'add': no VEX-encoded form"):
        x86gen.assemble("{vex} add eax, ecx")
    with pytest.raises(AsmSyntaxError, match="no VEX-encoded form"):
        x86gen.assemble("nop\n{vex} add eax, ecx")
# ---- x87: st(i) registers, implied st(0), memory sizes -------------------------------------------------

@pytest.mark.parametrize("src, expect", [
    ("fld st(1)", "d9c1"),                                 # GNU as 2.40
    ("fld ST(3)", "d9c3"),                                 # GNU as 2.40
    ("fld st", "d9c0"),                                    # GNU as 2.40
    ("fadd st, st(1)", "d8c1"),                            # GNU as 2.40
    ("fadd st(2)", "d8c2"),                                # GNU as 2.40
    ("fadd st(2), st", "dcc2"),                            # GNU as 2.40
    ("faddp", "dec1"),                                     # GNU as 2.40
    ("faddp st(2)", "dec2"),                               # GNU as 2.40
    ("fsubp", "dee9"),                                     # GNU as 2.40
    ("fsubrp", "dee1"),                                    # GNU as 2.40
    ("fdivp st(3)", "defb"),                               # GNU as 2.40
    ("fxch", "d9c9"),                                      # GNU as 2.40
    ("fxch st(3)", "d9cb"),                                # GNU as 2.40
    ("fcom", "d8d1"),                                      # GNU as 2.40
    ("fcomp st(2)", "d8da"),                               # GNU as 2.40
    ("fucom st(4)", "dde4"),                               # GNU as 2.40
    ("fcomi st, st(7)", "dbf7"),                           # GNU as 2.40
    ("fucomip st, st(1)", "dfe9"),                         # GNU as 2.40
    ("fcomi st(2)", "dbf2"),                               # GNU as 2.40
    ("fcmovnbe st, st(5)", "dbd5"),                        # GNU as 2.40
    ("fcmovb st(0), st(1)", "dac1"),                       # GNU as 2.40
    ("ffree st(7)", "ddc7"),                               # GNU as 2.40
    ("fstp st(0)", "ddd8"),                                # GNU as 2.40
    ("fld tbyte ptr [rax]", "db28"),                       # GNU as 2.40
    ("fstp tbyte ptr [r9+rcx*2+0x10]", "41db7c4910"),      # GNU as 2.40
    ("fbstp tbyte ptr [rax]", "df30"),                     # GNU as 2.40
    ("fild qword ptr [rip+0x10]", "df2d10000000"),         # GNU as 2.40
    ("fisttp word ptr [rax]", "df08"),                     # GNU as 2.40
    ("fldenv [rsi]", "d926"),                              # GNU as 2.40
    ("fldenvw [rsi]", "66d926"),                           # GNU as 2.40
    ("fnstenv [r12]", "41d93424"),                         # GNU as 2.40
    ("fnstenvw [r13]", "6641d97500"),                      # GNU as 2.40
    ("fxsave [rax]", "0fae00"),                            # GNU as 2.40
    ("fxsave64 [r8]", "490fae00"),                         # GNU as 2.40
    ("fxrstor [rsp]", "0fae0c24"),                         # GNU as 2.40
    ("fxrstor64 [rax+8]", "480fae4808"),                   # GNU as 2.40
    ("fnstsw ax", "dfe0"),                                 # GNU as 2.40
    ("fnstsw word ptr [rax]", "dd38"),                     # GNU as 2.40
    ("fldcw word ptr [rax]", "d928"),                      # GNU as 2.40
    ("fld1", "d9e8"),                                      # GNU as 2.40
    ("fchs", "d9e0"),                                      # GNU as 2.40
    ("fcompp", "ded9"),                                    # GNU as 2.40
    ("fucompp", "dae9"),                                   # GNU as 2.40
    ("fwait", "9b"),                                       # GNU as 2.40
    ("finit", "9bdbe3"),                                   # GNU as 2.40: WAIT, then fninit
    ("fclex", "9bdbe2"),                                   # GNU as 2.40
    ("fstsw ax", "9bdfe0"),                                # GNU as 2.40
    ("fstsw word ptr [rax]", "9bdd38"),                    # GNU as 2.40
    ("fsave [rax]", "9bdd30"),                             # GNU as 2.40
    ("fsavew [rax]", "9b66dd30"),                          # GNU as 2.40
    ("fstenvw [rax]", "9b66d930"),                         # GNU as 2.40
    ("fstcw word ptr [rax]", "9bd938"),                    # GNU as 2.40
    ("fsetpm", "9bdbe4"),                                  # GNU as 2.40
    ("wait", "9b"),                                        # GNU as 2.40
])
def test_x87_as_gnu_as(src, expect, tmp_path):
    """st(i) as `st(i)` and `st`, st(0) left out where GNU as allows it (`fadd st(2)`, `faddp`, `fcom`),
    `tbyte ptr`, and fldenvw/fnstenvw for the 14-byte environment (o16), on every path of the text."""
    check(src, expect, tmp_path)
    assert x86gen.assemble("nop\n" + src).hex() == "90" + expect
    assert x86gen.assemble("x: " + src).hex() == expect


@pytest.mark.parametrize("src, expect", [
    ("fld st, dword ptr [rsi]", "d906"), ("fistp qword ptr [rax], st", "df38"), ("fld st, st(1)", "d9c1"),
    ("fstp st(1), st", "ddd9"), ("fst st(3), st", "ddd3"), ("fadd st, qword ptr [rax+8]", "dc4008"),
    ("fldenv fpuenv14 ptr [rsi]", "66d926"), ("fnstenv fpuenv14 ptr [rsi]", "66d936"),
    ("fld st, tbyte ptr [rsi]", "db2e"), ("fcom st, st(2)", "d8d2"), ("fxch st, st(5)", "d9cd"), ("faddp", "dec1"),
])
def test_x87_as_iced_prints_it(src, expect):
    """iced-x86's Intel formatter names the implicit st(0) (`fld st, dword ptr [rsi]`) and the 14-byte
    environment (`fpuenv14 ptr`): its text of the expected bytes is the line, and the line gives them back."""
    import iced_x86 as I
    f = I.Formatter(I.FormatterSyntax.INTEL)
    f.memory_size_options = I.MemorySizeOptions.ALWAYS
    f.space_after_operand_separator = True
    assert f.format(I.Decoder(64, bytes.fromhex(expect)).decode()) == src
    assert x86gen.assemble(src).hex() == expect


@pytest.mark.parametrize("src, error", [
    ("fld [rax]", OperandError),              # GNU as 2.40: ambiguous operand size (dword/qword/tbyte)
    ("fadd st(1), st(2)", OperandError),      # GNU as 2.40: operand type mismatch (one operand is st(0))
    ("fcmovb st(1)", OperandError),           # GNU as 2.40: number of operands mismatch
    ("fadd", OperandError),                   # GNU as 2.40 makes it faddp st(1), st with a warning
    ("fldenv dword ptr [rax]", OperandError), ("fld st(8)", AsmSyntaxError), ("fld dword ptr [st]", OperandError),
])
def test_x87_errors(src, error):
    with pytest.raises(error):
        x86gen.assemble(src)


@pytest.mark.parametrize("src, expect", [("fneni(8087 only)", "dbe0"), ("fndisi(8087 only)", "dbe1"), ("fnsetpm(287 only)", "dbe4")])
def test_objdump_8087_only_spelling(src, expect, tmp_path):
    """GNU objdump 2.40 prints DB E0 / DB E1 / DB E4 so (`objdump -M intel`); the bytes are GNU as's for the bare name."""
    assert x86gen.assemble(src).hex() == expect
    check(src.partition("(")[0], expect, tmp_path)


def test_x87_registers():
    """x86gen.st0 … st7 are the st(i) registers (iced-x86's names), printed as GNU as writes them."""
    assert [str(getattr(x86gen, f"st{i}")) for i in range(8)] == [f"st({i})" for i in range(8)]
    assert x86gen.REGISTERS["st3"] is x86gen.st3 and x86gen.st3.kind == "st"
    assert x86gen.encode("fadd", x86gen.st0, x86gen.st3).hex() == "d8c3"     # GNU as 2.40: fadd st, st(3)
    assert x86gen.encode("fmulp", x86gen.st1, x86gen.st0).hex() == "dec9"    # GNU as 2.40: fmulp
    with pytest.raises(OperandError):
        x86gen.st1.sized(64)
    with pytest.raises(OperandError):
        x86gen.encode("fadd", x86gen.st1, x86gen.st2)


# ---- segment, control and debug registers ----------------------------------------------------------

@pytest.mark.parametrize("src, expect", [
    ("mov es, ax", "8ec0"),                                # GNU as 2.40
    ("mov es, eax", "8ec0"),                               # GNU as 2.40
    ("mov es, rax", "8ec0"),                               # GNU as 2.40
    ("mov fs, r9", "418ee1"),                              # GNU as 2.40
    ("mov ds, r8w", "418ed8"),                             # GNU as 2.40
    ("mov ss, word ptr [rax]", "8e10"),                    # GNU as 2.40
    ("mov es, [rax]", "8e00"),                             # GNU as 2.40
    ("mov eax, es", "8cc0"),                               # GNU as 2.40
    ("mov rax, es", "8cc0"),                               # GNU as 2.40
    ("mov r10, gs", "418cea"),                             # GNU as 2.40
    ("mov word ptr [rax], es", "8c00"),                    # GNU as 2.40
    ("mov [rax], cs", "8c08"),                             # GNU as 2.40
    ("push fs", "0fa0"),                                   # GNU as 2.40
    ("push gs", "0fa8"),                                   # GNU as 2.40
    ("pop fs", "0fa1"),                                    # GNU as 2.40
    ("pop gs", "0fa9"),                                    # GNU as 2.40
    ("in al, dx", "ec"),                                   # GNU as 2.40
    ("in eax, 0x60", "e560"),                              # GNU as 2.40
    ("in ax, dx", "66ed"),                                 # GNU as 2.40
    ("out dx, al", "ee"),                                  # GNU as 2.40
    ("out 0x80, al", "e680"),                              # GNU as 2.40
    ("out dx, eax", "ef"),                                 # GNU as 2.40
    ("clts", "0f06"),                                      # GNU as 2.40
    ("sysexitq", "480f35"),                                # GNU as 2.40
    ("pushw fs", "660fa0"),                                # GNU as 2.40
    ("popw gs", "660fa9"),                                 # GNU as 2.40
    ("pushw r9w", "664151"),                               # GNU as 2.40
    ("popw word ptr [rax]", "668f00"),                     # GNU as 2.40
    ("mov cr8, rax", "440f22c0"),                          # GNU as 2.40
    ("mov rax, cr0", "0f20c0"),                            # GNU as 2.40
    ("mov r9, cr3", "410f20d9"),                           # GNU as 2.40
    ("mov cr4, r15", "410f22e7"),                          # GNU as 2.40
    ("mov dr7, rax", "0f23f8"),                            # GNU as 2.40
    ("mov rax, dr6", "0f21f0"),                            # GNU as 2.40
    ("mov r8, dr0", "410f21c0"),                           # GNU as 2.40
])
def test_system_registers_as_gnu_as(src, expect, tmp_path):
    """mov to/from es..gs (a load takes any GPR width as the 16 bits it reads, a store in r64 is the r32 form),
    push/pop fs/gs, mov to/from cr0/2/3/4/8 and dr0-dr7 (a 64-bit GPR without REX.W; cr8 with REX.R)."""
    check(src, expect, tmp_path)
    assert x86gen.assemble("nop\n" + src).hex() == "90" + expect
    assert x86gen.assemble("x: " + src).hex() == expect


@pytest.mark.parametrize("src, expect", [
    ("retf", "cb"), ("lret", "cb"), ("retfd", "cb"), ("retfw", "66cb"), ("lretw", "66cb"), ("retfq", "48cb"),
    ("lretq", "48cb"), ("retf 16", "ca1000"), ("retfw 16", "66ca1000"), ("retfq 0x10", "48ca1000"),   # GNU as 2.40
    ("iret", "cf"), ("iretd", "cf"), ("iretw", "66cf"), ("iretq", "48cf"),                             # GNU as 2.40
    ("sysretd", "0f07"), ("sysretq", "480f07"), ("skinit", "0f01de"), ("vmsave", "0f01db"),            # GNU as 2.40
    ("pushfw", "669c"), ("popfw", "669d"), ("pushw 5", "666a05"), ("pushw -1", "666aff"),              # GNU as 2.40
    ("pushw 0x1234", "66683412"), ("pushw 0xffff", "666aff"), ("pushw -0x8000", "66680080"),            # GNU as 2.40
    ("enterw 16, 5", "66c8100005"), ("leavew", "66c9"),                                                # GNU as 2.40
    ("encodekey128 eax, ecx", "f30f38fac1"), ("encodekey256 r9d, r10d", "f3450f38fbca"),               # GNU as 2.40
])
def test_far_returns_and_16_bit_stack_forms_as_gnu_as(src, expect, tmp_path):
    """retf/lret (GNU as: 32-bit operand size, with a warning), iret (GNU as and objdump: CF, iretd; llvm-mc and
    iced-x86 read it as the 16-bit form), the 16-bit pushf/popf/push imm/enter/leave, ENCODEKEY128/256."""
    check(src, expect, tmp_path)


@pytest.mark.parametrize("src, expect", [
    ("lldt ax", "0f00d0"), ("data16 lldt ax", "660f00d0"), ("data16 ltr word ptr [rax]", "660f0018"),   # GNU as 2.40
    ("ltr word ptr [rax]", "0f0018"), ("data16 lmsw ax", "660f01f0"), ("data16 verr word ptr [rbx]", "660f0023"),
    ("data16 verw bx", "660f00eb"),                                                                         # GNU as 2.40
])
def test_selector_reads_with_data16_as_gnu_as(src, expect, tmp_path):
    """lldt/ltr/lmsw/verr/verw take 16 bits whatever the operand size: plain they are 0F 00 /r, and data16 (objdump's text
    of 66 0F 00 /r) asks for the o16 form."""
    check(src, expect, tmp_path)


@pytest.mark.parametrize("src, expect", [
    ("data16 sldt word ptr [r12+r13*8-0x80]", "66430f0044ec80"), ("data16 str word ptr [rax]", "660f0008"),  # GNU as 2.40
    ("data16 smsw word ptr [rax]", "660f0120"), ("data16 mov ds, word ptr [r12+r13*8-0x80]", "66438e5cec80"),   # GNU as 2.40
    ("sldt word ptr [rax]", "0f0000"), ("mov ds, word ptr [rax]", "8e18"),                                       # GNU as 2.40
])
def test_word_stores_with_data16_as_gnu_as(src, expect, tmp_path):
    """sldt/str/smsw store 16 bits and mov to/from a segment register moves 16 whatever the operand size: data16 (objdump's
    text of the o16 forms with a memory operand) asks for the o16 form, 66 0F 00 /0 …"""
    check(src, expect, tmp_path)


@pytest.mark.parametrize("src, expect", [
    ("mov ax, es", "668cc0"), ("mov r8w, es", "66418cc0"), ("mov ax, ds", "668cd8"), ("mov r15w, gs", "66418cef"),  # GNU as 2.40
    ("mov cx, cs", "668cc9"),                                                                                 # GNU as 2.40
    ("mov word ptr [rax], es", "8c00"), ("mov [rax], es", "8c00"),   # GNU as 2.40: no 66 for memory (the store is 16 bits)
    ("data16 mov word ptr [rax], es", "668c00"), ("data16 mov [rax], ds", "668c18"),                          # GNU as 2.40
    ("mov eax, es", "8cc0"), ("mov rax, es", "8cc0"), ("mov es, ax", "8ec0"),       # GNU as 2.40: as before, no 66 / REX.W
    # data16 with a 32- or 64-bit register: GNU as writes the 66 before 8C / 8E, the 16-bit move (MOV_RM16_SREG, …)
    ("data16 mov eax, ds", "668cd8"), ("data16 mov rax, es", "668cc0"), ("data16 mov r9, fs", "66418ce1"),    # GNU as 2.40
    ("data16 mov es, ax", "668ec0"), ("data16 mov es, eax", "668ec0"), ("data16 mov ds, r9d", "66418ed9"),    # GNU as 2.40
])
def test_mov_from_a_segment_register_to_16_bits_as_gnu_as(src, expect, tmp_path):
    """``mov ax, es`` is o16 8C /r (MOV_RM16_SREG, which writes ax only); a word in memory takes the shorter 8C /r, as GNU as
    writes it, unless data16 asks for the o16 form (issue 24)."""
    check(src, expect, tmp_path)


def test_mov_from_a_segment_register_like_iced():
    """The o16 form's bytes are iced-x86's encoder's for MOV_RM16_SREG (a second oracle)."""
    import iced_x86 as I
    for reg, sreg, text in ((I.Register.AX, I.Register.ES, "mov ax, es"), (I.Register.R8W, I.Register.ES, "mov r8w, es")):
        enc = I.Encoder(64)
        enc.encode(I.Instruction.create_reg_reg(I.Code.MOV_RM16_SREG, reg, sreg), 0)
        assert x86gen.assemble(text) == bytes(enc.take_buffer())


@pytest.mark.parametrize("src, expect", [
    ("data16 ret", "66c3"), ("data16 ret 8", "66c20800"), ("retw", "66c3"), ("retw 8", "66c20800"),          # GNU as 2.40
    ("retw -1", "66c2ffff"), ("bnd retw", "66f2c3"), ("rep data16 ret", "66f3c3"),                          # GNU as 2.40
    ("call word ptr [rax]", "66ff10"), ("jmp word ptr [rax]", "66ff20"), ("call ax", "66ffd0"),              # GNU as 2.40
    ("jmp ax", "66ffe0"), ("jmp r8w", "6641ffe0"), ("call r8w", "6641ffd0"), ("call word ptr [r8]", "6641ff10"),  # GNU as 2.40
    ("callw [rax]", "66ff10"), ("jmpw [rax]", "66ff20"), ("callw ax", "66ffd0"), ("jmpw ax", "66ffe0"),      # GNU as 2.40
    ("data16 call [rax]", "66ff10"), ("data16 jmp [rax]", "66ff20"),                                        # GNU as 2.40
    ("notrack call word ptr [rax]", "3e66ff10"), ("bnd call ax", "66f2ffd0"), ("notrack jmp ax", "3e66ffe0"),  # GNU as 2.40
    ("bnd jmp word ptr [rax]", "66f2ff20"),                                                                 # GNU as 2.40
    ("call word ptr [rip+x]\nx: .word 0", "66ff15000000000000"),                                            # GNU as 2.40
    # and without a 16-bit operand or data16, the 64-bit forms as before
    ("ret", "c3"), ("ret 8", "c20800"), ("call [rax]", "ff10"), ("jmp [rax]", "ff20"), ("call rax", "ffd0"),  # GNU as 2.40
])
def test_16_bit_near_returns_and_indirect_branches_as_gnu_as(src, expect, tmp_path):
    """o16 ret (RETNW, RETNW_IMM16) and call/jmp r/m16 (CALL_RM16, JMP_RM16): chosen by a 16-bit operand, by data16, or
    by GNU as's retw/callw/jmpw; a 16-bit IP on AMD CPUs (Intel ones ignore the 66 in 64-bit mode, SDM Vol.2 CALL/JMP/RET;
    issue 24)."""
    check(src, expect, tmp_path)


@pytest.mark.parametrize("src, code", [
    ("data16 ret", "RETNW"), ("data16 ret 8", "RETNW_IMM16"), ("call word ptr [rax]", "CALL_RM16"), ("jmp r8w", "JMP_RM16"),
])
def test_16_bit_near_returns_and_indirect_branches_like_iced(src, code):
    """x86gen's bytes are the form iced-x86 decodes with DecoderOptions.AMD (`iced_oracle.decoder_options`), and iced's
    encoder writes them back the same."""
    import iced_x86 as I
    from iced_oracle import decode_one, decoder_options, reencode
    data = x86gen.assemble(src)
    ins = decode_one(data, 0, decoder_options(x86gen.get_form(code)))
    assert ins.code == getattr(I.Code, code) and reencode(ins) == data


@pytest.mark.parametrize("src", ["data16 call rax", "data16 jmp qword ptr [rax]", "retw 0x10000"])
def test_16_bit_near_branches_other_operands_refused(src):
    """GNU as 2.40 writes 66 before the 64-bit form for `data16 call rax` and `data16 jmp qword ptr [rax]` (66 FF D0,
    66 FF 20: `call ax`, `jmp word ptr [rax]` to an AMD CPU, not the operands written) and cuts `retw 0x10000` to 0 with
    a warning: x86gen refuses them."""
    with pytest.raises(x86gen.EncodeError):
        x86gen.assemble(src)


def test_data16_mov_segment_register_with_a_wide_register_through_encode():
    """`encode` reads ``data16 mov eax, ds`` as the text does: MOV_RM16_SREG with ax (GNU as 2.40: 66 8c d8)."""
    R = x86gen.REGISTERS
    assert x86gen.encode("data16 mov", R["eax"], R["ds"]).hex() == "668cd8"                  # GNU as 2.40
    assert x86gen.encode("data16 mov", R["es"], R["rax"]).hex() == "668ec0"                  # GNU as 2.40
    assert x86gen.encode("data16 mov", R["r9d"], R["fs"]).hex() == "66418ce1"                # GNU as 2.40


def test_data16_on_a_mov_without_a_segment_register_is_refused():
    with pytest.raises(x86gen.PrefixError, match="data16 mov ax, bx"):
        x86gen.assemble("data16 mov ax, bx")


def test_data16_on_a_selector_read_needs_a_16_bit_operand():
    with pytest.raises(x86gen.PrefixError, match="data16 lldt eax.*16-bit operand"):
        x86gen.assemble("data16 lldt eax")


@pytest.mark.parametrize("src, expect", [
    ("aesdec128kl xmm0, [rax]", "f30f38dd00"),                      # GNU as 2.40
    ("aesenc128kl xmm9, [r12+rax*2+8]", "f3450f38dc4c4408"),        # GNU as 2.40
])
def test_key_locker_handle_as_gnu_as(src, expect, tmp_path):
    """The 48-byte handle of aesenc128kl/aesdec128kl: GNU as writes no size keyword, iced-x86 `mem384 ptr`."""
    check(src, expect, tmp_path)
    assert x86gen.assemble(src.replace("[", "mem384 ptr [")).hex() == expect


@pytest.mark.parametrize("src, expect", [("data16 push fs", "660fa0"), ("data16 pop gs", "660fa9"), ("mov es, ax", "8ec0"),
                                         ("sysexit", "0f35"),   # (GNU as 2.40 refuses bare sysexit: ambiguous operand size)
                                         ("data16 push 5", "666a05"), ("data16 push 0x1234", "66683412"),
                                         ("data16 enter 0x10, 5", "66c8100005"), ("data16 leave", "66c9"),
                                         ("ret far", "cb"), ("data16 ret far", "66cb"), ("data64 ret far", "48cb"),
                                         ("ret far 0x10", "ca1000"), ("data16 ret far 0x10", "66ca1000"),
                                         ("data64 ret far 0x10", "48ca1000"), ("sysret", "0f07"), ("iretd", "cf"),
                                         ("skinit eax", "0f01de"), ("vmload rax", "0f01da")])
def test_system_registers_as_iced_prints_them(src, expect):
    """iced-x86's Intel text of the expected bytes is the line (`data16 push fs`: objdump and GNU as say pushw fs)."""
    import iced_x86 as I
    f = I.Formatter(I.FormatterSyntax.INTEL)
    f.space_after_operand_separator = True
    f.hex_prefix, f.hex_suffix = "0x", ""
    assert f.format(I.Decoder(64, bytes.fromhex(expect)).decode()) == src
    assert x86gen.assemble(src).hex() == expect


@pytest.mark.parametrize("src", [
    "mov cs, ax",          # GNU as 2.40 encodes 8e c8, which is #UD (SDM Vol.2 MOV) and iced decodes as (bad)
    "mov cs, word ptr [rax]", "pop cs",
    "mov cr0, eax", "mov dr0, ax",
    "pushw 0x10000", "pushw -0x8001",   # 66 68 iw has 16 bits (GNU as 2.40 truncates them: 66 68 00 00, 66 68 ff 7f)
])
def test_system_register_errors(src):
    with pytest.raises(OperandError):
        x86gen.assemble(src)


# ---- the command line and long lines ---------------------------------------------------------------

def test_cli_non_utf8_file_is_a_clean_error(tmp_path, capsys):
    from x86gen.__main__ import main
    prog = tmp_path / "latin1.s"
    prog.write_bytes(b"nop\nmov al, 1 # caf\xe9\n")
    assert main(["asm", "-f", str(prog)]) == 1
    err = capsys.readouterr().err
    assert "line 2: not UTF-8" in err and "Traceback" not in err


def test_cli_non_utf8_stdin_is_a_clean_error():
    import os
    import sys
    from pathlib import Path
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src")}
    r = subprocess.run([sys.executable, "-m", "x86gen", "asm", "-f", "-"], input=b"nop\n\xff\n", capture_output=True, env=env,
                       timeout=120)
    assert r.returncode == 1 and b"not UTF-8" in r.stderr and b"Traceback" not in r.stderr


@pytest.mark.parametrize("src", [
    "mov eax, [rax+" + "x" * 1_000_000,                  # one line (text's parser)
    "nop\nmov eax, [rax " + "1" * 1_000_000 + "]",       # a program
    "nop\n.ascii " + "x" * 1_000_000,
    "nop\nmov eax, " + "9" * 1_000_000,
    "nop\n" + "frob " * 200_000,
])
def test_error_messages_truncate_long_lines(src):
    with pytest.raises(EncodeError) as ei:
        x86gen.assemble(src)
    assert len(str(ei.value)) < 2000


# ---- register names ----------------------------------------------------------------------------------

@pytest.mark.parametrize("src, reg", [
    ("mov cr1, rax", "cr1"), ("mov rax, dr8", "dr8"), ("nop\nmov cr9, rax", "cr9"),
    ("bndmov bnd0, cr9", "cr9"), ("jmp cr5", "cr5"), ("mov eax, [rax+dr9*2]", "dr9"), ("mov eax, [riz]", "riz"),
    (".quad cr7", "cr7"),
])
def test_register_of_another_register_file_is_unsupported_not_a_label(src, reg):
    """GNU as encodes these (`mov cr0, rax` is 0f 22 c0); x86gen said "undefined label 'cr0'" or took [rip+zmm0]."""
    with pytest.raises(OperandError, match=f"{reg.replace('(', '[(]').replace(')', '[)]')}.* not supported by x86gen"):
        x86gen.assemble(src)


def test_unsupported_register_table_shrinks_with_registers():
    """A register x86gen has (REGISTERS) is never reported as unsupported, so a register file added there
    (zmm, xmm16-31, …) leaves the table by itself."""
    from x86gen.errors import UnsupportedRegisterError
    from x86gen.registers import REGISTERS, X86_REGISTER_NAMES
    from x86gen.syntax import UNSUPPORTED_REGISTERS
    assert not UNSUPPORTED_REGISTERS & REGISTERS.keys()
    assert UNSUPPORTED_REGISTERS <= X86_REGISTER_NAMES and REGISTERS.keys() <= X86_REGISTER_NAMES
    assert issubclass(UnsupportedRegisterError, OperandError)


@pytest.mark.parametrize("src", ["mov \u0435ax, 1", "add \u0435ax, [rdi]", "mov eax, [r\u0430x]", "jmp \u0444oo",
                                 "lea rax, [rip+\u0444oo]", ".quad \u0444oo", "nop\nmov eax, \u0444oo"])
def test_non_ascii_identifier_is_a_syntax_error(src):
    """A Cyrillic homoglyph (`е` U+0435 in `eax`) is named, not taken for a label ("needs a size")."""
    with pytest.raises(AsmSyntaxError, match="non-ASCII character"):
        x86gen.assemble(src)


@pytest.mark.parametrize("src, expect", [
    ("jmp .L1$x\n.L1$x: ret", "eb00c3"),                    # GNU as 2.40
    ("_a.b: jmp _a.b", "ebfe"),                             # GNU as 2.40
    ("lea rax, [rip+t_1]\nt_1: ret", "488d0500000000c3"),   # GNU as 2.40
])
def test_gnu_symbol_names_are_labels(src, expect, tmp_path):
    check(src, expect, tmp_path)


# ---- branches ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("src, expect", [
    ("T: jmp qword ptr [rip+T]", "ff25faffffff"),               # GNU as 2.40
    ("T: call qword ptr [rip+T]", "ff15faffffff"),              # GNU as 2.40
    ("jmp qword ptr [rip+T]\nT: .quad 0", "ff25000000000000000000000000"),   # GNU as 2.40
    ("call [rip+T]\nT:", "ff1500000000"),                       # GNU as 2.40
    ("jmp qword ptr [rip+T+8]\nT:", "ff2508000000"),            # GNU as 2.40
    ("jmp T[rip]\nT:", "ff2500000000"),                         # GNU as 2.40
])
def test_indirect_branch_through_rip_relative_label(src, expect, tmp_path):
    """As `a.jmp(T.mem(64))` in the Assembler API; the text parser said "bad branch target"."""
    check(src, expect, tmp_path)


@pytest.mark.parametrize("src", ["jmp far 0x10", "call far 0x10", "jmp FAR 0x10", "jmp 0x10:0x20", "ljmp 0x10", "ljmp 0x10, 0x20",
                                 "lcall 0x10, 0x20", "call far 0x10:0x20", "nop\njmp far 0x10", "nop\nljmp 0x10, 0x20"])
def test_far_branches_to_an_immediate_are_refused(src):
    """GNU as and llvm-mc refuse `jmp far 0x10` (x86gen gave eb 0e, a near jump); a far branch to an immediate
    segment:offset (EA/9A ptr16:32) is invalid in 64-bit mode (SDM Vol.2 JMP/CALL). Through memory it is valid (below)."""
    with pytest.raises(EncodeError, match="far"):
        x86gen.assemble(src)


@pytest.mark.parametrize("src, expect", [
    ("jmp far ptr [rax]", "ff28"), ("call far ptr [rax]", "ff18"), ("ljmp [rax]", "ff28"), ("lcall [rax]", "ff18"),   # GNU as 2.40
    ("ljmpw [rax]", "66ff28"), ("lcallw [r12+r13*8-0x80]", "6643ff5cec80"),                                          # GNU as 2.40
    ("jmp fword ptr [rax]", "ff28"), ("call fword ptr [rip+0x10]", "ff1d10000000"),                                  # GNU as 2.40
    ("jmp dword ptr [rax]", "66ff28"), ("call dword ptr [rax]", "66ff18"),                                           # GNU as 2.40
    ("call [rax]", "ff10"), ("jmp [rax]", "ff20"), ("call qword ptr [rax]", "ff10"),            # GNU as 2.40: still near
    ("lfs eax, fword ptr [rax]", "0fb400"), ("lfs eax, [rax]", "0fb400"), ("lgs ax, dword ptr [rax]", "660fb500"),   # GNU as 2.40
    ("lss ax, [r12]", "66410fb20424"),                                                                               # GNU as 2.40
])
def test_far_branches_through_memory_as_gnu_as(src, expect, tmp_path):
    """Far call/jmp through an m16:16 (dword), m16:32 (fword) far pointer in memory (FF /3, FF /5; SDM Vol.2 CALL/JMP)
    and lfs/lgs/lss: GNU as's spellings; an unsized `call [rax]` stays the near indirect call."""
    check(src, expect, tmp_path)


@pytest.mark.parametrize("src, expect", [
    ("call far tbyte ptr [rax]", "48ff18"), ("jmp far dword ptr [rax]", "66ff28"), ("call far fword ptr [rsp+0x10]", "ff5c2410"),
    ("lss rax, tbyte ptr [rax]", "480fb200"), ("jmp far tbyte ptr [r12]", "49ff2c24"),
])
def test_far_branches_through_memory_as_iced_prints_them(src, expect):
    """iced-x86 writes `far` and the far pointer's size (tbyte: m16:64, REX.W; GNU as 2.40 has no Intel spelling
    of it but `rex.w call fword ptr`); its text of the expected bytes is the line."""
    import iced_x86 as I
    f = I.Formatter(I.FormatterSyntax.INTEL)
    f.space_after_operand_separator = True
    f.hex_prefix, f.hex_suffix = "0x", ""
    f.memory_size_options = I.MemorySizeOptions.ALWAYS
    assert f.format(I.Decoder(64, bytes.fromhex(expect)).decode()) == src
    assert x86gen.assemble(src).hex() == expect


@pytest.mark.parametrize("src, expect", [
    ("lldt ax", "0f00d0"), ("ltr r9w", "410f00d9"), ("verw ax", "0f00e8"), ("verr word ptr [r12]", "410f002424"),   # GNU as 2.40
    ("lldt word ptr [rax]", "0f0010"), ("lmsw ax", "0f01f0"), ("lmsw word ptr [rax]", "0f0130"),                   # GNU as 2.40
    ("sldt rax", "0f00c0"), ("sldt r9", "410f00c1"), ("sldt eax", "0f00c0"), ("sldt ax", "660f00c0"),              # GNU as 2.40
    ("str rax", "0f00c8"), ("str word ptr [rax]", "0f0008"),                                                       # GNU as 2.40
    ("smsw rax", "480f01e0"), ("smsw eax", "0f01e0"), ("smsw ax", "660f01e0"), ("smsw word ptr [rax]", "0f0120"),  # GNU as 2.40
    ("lgdt [rax]", "0f0110"), ("lgdt tbyte ptr [rax]", "0f0110"), ("sidt [rax]", "0f0108"),                        # GNU as 2.40
])
def test_system_table_instructions_as_gnu_as(src, expect, tmp_path):
    """lldt/ltr/verr/verw/lmsw read 16 bits with any operand size: GNU as takes `lldt ax` and encodes it without 0x66
    (the r32/m16 form); sldt/str of a 64-bit register is the 32-bit form (the selector zero-extended, no REX.W), smsw
    keeps its REX.W; lgdt & co. take their 10-byte m16&64 pointer unsized or as tbyte ptr."""
    check(src, expect, tmp_path)


@pytest.mark.parametrize("src, expect", [
    ("lgdt fword ptr [rax]", "0f0110"), ("sidt fword ptr [rax]", "0f0108"),   # iced-x86's text of 0f 01 10 / 0f 01 08
    ("lkgs ax", "f20f00f0"), ("lkgs eax", "f20f00f0"), ("lkgs r9d", "f2410f00f1"), ("lkgs rax", "f2480f00f0"),   # iced-x86's encoder
])
def test_system_table_instructions_as_iced(src, expect):
    """iced-x86 names lgdt's pseudo-descriptor fword ptr; lkgs (binutils 2.40 and llvm-mc 14 predate it) with iced's
    forms (`lkgs ax` is the r32/m16 one, as for lldt)."""
    assert x86gen.assemble(src).hex() == expect


@pytest.mark.parametrize("src", ["lgdt dword ptr [rax]", "lgdt qword ptr [rax]", "lldt al", "sidt rax"])   # GNU as refuses them
def test_system_table_operand_errors(src):
    with pytest.raises(OperandError):
        x86gen.assemble(src)


@pytest.mark.parametrize("src", ["bnd call fword ptr [rax]", "bnd jmp dword ptr [rax]", "notrack jmp fword ptr [rax]"])
def test_far_branches_take_no_bnd_or_notrack(src):
    """bnd and notrack are for near branches (SDM Vol.1 17.4 MPX, CET: near indirect CALL/JMP); GNU as 2.40: "expecting
    valid branch instruction after `bnd'"; iced-x86: can_use_bnd_prefix is False for FF /3, FF /5."""
    with pytest.raises(EncodeError):
        x86gen.assemble(src)


def test_far_pointer_load_as_objdump_prints_it():
    """objdump 2.40 prints REX.W 0F B2 /r (lss r64, m16:64) with FWORD PTR: x86gen reads it as the 10-byte form."""
    assert x86gen.assemble("lss r15, FWORD PTR [rax]").hex() == "4c0fb238"   # objdump 2.40: 4c 0f b2 38


@pytest.mark.parametrize("src", ["lfs ax, fword ptr [rax]", "lfs eax, dword ptr [rax]", "lss rax, dword ptr [rax]",   # GNU as refuses
                                 "jmp far qword ptr [rax]", "lfs eax, eax"])
def test_far_pointer_size_errors(src):
    """A far pointer of another size than the register's (GNU as: "operand size mismatch"), a qword or word far pointer
    (no such form; `call word ptr [rax]` is the near 16-bit call, CALL_RM16)."""
    with pytest.raises(OperandError):
        x86gen.assemble(src)


# ---- mnemonic aliases ----------------------------------------------------------------------------------

@pytest.mark.parametrize("alias, gnu", [
    ("cltq", "4898"), ("cqto", "4899"), ("cwtl", "98"), ("cltd", "99"), ("cwtd", "6699"), ("cbtw", "6698"),   # GNU as 2.40
])
def test_att_aliases_work_or_are_unknown_under_their_own_name(alias, gnu):
    """GNU as's AT&T names (accepted in its Intel mode): the right bytes if the table has the target
    (cqto → cqo), else an unknown mnemonic named as written (was "unknown mnemonic 'cdqe'" for cltq)."""
    for src in (alias, f"nop\n{alias}"):
        try: code = x86gen.assemble(src)
        except UnknownMnemonicError as ex:
            assert f"unknown mnemonic {alias!r}" in str(ex)
        else: assert code.hex().removeprefix("90" if src != alias else "") == gnu
    try: code = x86gen.encode(alias)
    except UnknownMnemonicError as ex: assert f"unknown mnemonic {alias!r}" in str(ex)
    else: assert code.hex() == gnu


def test_every_alias_names_a_mnemonic_or_is_unknown_as_itself():
    from x86gen.forms import mnemonics
    from x86gen.selection.request import MNEMONIC_ALIASES
    known = set(mnemonics())
    for alias, target in MNEMONIC_ALIASES.items():
        if target in known: continue
        with pytest.raises(UnknownMnemonicError, match=f"unknown mnemonic '{alias}'"):
            x86gen.encode(alias)


# ---- messages ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("src", ["mov eax, foo ptr [rax]", "nop\nmov eax, foo ptr [rax]", "mov eax, sword ptr [rax]"])
def test_unknown_size_keyword_is_named(src):
    """Was "two labels in memory operand" (GNU as: junk `ptr [rax]' after expression)."""
    with pytest.raises(AsmSyntaxError, match="unknown size keyword '.?.?word'|unknown size keyword 'foo'"):
        x86gen.assemble(src)


@pytest.mark.parametrize("src", ["mov eax, fword ptr [rax]", "nop\nmov eax, fword ptr [rax]"])
def test_fword_is_a_far_pointer_size(src):
    """fword (6 bytes, m16:32) is a size keyword since the far pointers; mov has no such operand (GNU as: operand size
    mismatch)."""
    with pytest.raises(OperandError, match="fword ptr"):
        x86gen.assemble(src)


def test_cli_info_unknown_form_id_says_form_id(capsys):
    from x86gen.__main__ import main
    assert main(["info", "VEX_NOPE"]) == 1
    err = capsys.readouterr().err
    assert "no form with id 'VEX_NOPE'" in err and "mnemonic" not in err
    assert main(["info", "frob"]) == 1
    assert "unknown mnemonic 'frob'" in capsys.readouterr().err
    assert main(["info", "ADD_RM32_R32"]) == 0 and "ADD_RM32_R32" in capsys.readouterr().out


# ---- differential: random literals and strings against GNU as ----------------------------------------

def _literal(rng, v: int) -> str:
    a = abs(v)
    s = rng.choice([hex(a), hex(a).upper(), "0b" + bin(a)[2:], "0B" + bin(a)[2:], ("0" + oct(a)[2:]) if a else "0", str(a)])
    return ("-" if v < 0 else "") + s


@pytest.mark.skipif(not HAVE_AS, reason="GNU as not installed")
def test_random_literals_and_strings_match_gnu_as(tmp_path):
    """Integer literals in every GNU style, character constants, and strings with every accepted escape,
    comments and `;` after them: x86gen's bytes (line by line and as one program) equal GNU as's."""
    import random
    rng = random.Random(5)
    lines = []
    for _ in range(300):
        v = rng.choice([rng.randrange(-300, 300), rng.randrange(-2**31, 2**31), rng.randrange(256)])
        lines.append(rng.choice([f"mov eax, {_literal(rng, v)}", f"mov eax, [rax+{_literal(rng, abs(v) % 2**31)}]",
                                 f"lea rax, [rbx+rcx*4-{_literal(rng, abs(v) % 2**31)}]", f"add ecx, {_literal(rng, v % 128)}",
                                 f"mov al, '{rng.choice('abcXYZ019;#,/*')}'"]))
    pieces = ["a", "Z", " ", ";", "#", "/*", "*/", "//", ",", "'", "é", "€", "\\n", "\\t", "\\\\", '\\"', "\\b", "\\f", "\\r",
              "\\v", "\\q", "\\'", "\\0", "\\7", "\\12", "\\101", "\\377", "\\1234", "\\x41", "\\x4142", "\\xf", "\\xAb", "0"]
    for _ in range(200):
        strs = ['"' + "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 6))) + '"' for _ in range(rng.randrange(1, 3))]
        lines.append(f"{rng.choice(['.ascii', '.asciz', '.string'])} {rng.choice([', ', ' ']).join(strs)}"
                     + rng.choice(["", " # c", " ; nop", " /* c */"]))
    gnu = gnu_as("\n".join(lines), tmp_path)
    assert x86gen.assemble("\n".join(lines)) == gnu
    assert b"".join(x86gen.assemble(ln) for ln in lines) == gnu


# ---- VIA PadLock: the F3 that is part of the opcode, and the names of each tool ------------------------

@pytest.mark.parametrize("src, expect", [
    ("xsha1", "f30fa6c8"),                                  # GNU as 2.40
    ("rep xsha1", "f30fa6c8"),                              # GNU as 2.40: iced-x86's text of the same bytes
    ("repz xsha1", "f30fa6c8"),                             # GNU as 2.40: objdump's text
    ("xcryptecb", "f30fa7c8"),                              # GNU as 2.40
    ("rep xcryptecb", "f30fa7c8"),                          # GNU as 2.40
    ("repe xcryptcbc", "f30fa7d0"),                         # GNU as 2.40
    ("xsha256", "f30fa6d0"),                                # GNU as 2.40
    ("xcryptofb", "f30fa7e8"),                              # GNU as 2.40
    ("xstore", "0fa7c0"),                                   # GNU as 2.40
    ("xstorerng", "0fa7c0"),                                # GNU as 2.40
    ("rep xstore", "f30fa7c0"),                             # GNU as 2.40: xstore takes rep as a real prefix
])
def test_padlock_spellings_as_gnu_as(src, expect, tmp_path):
    check(src, expect, tmp_path)
    assert x86gen.assemble("nop\n" + src).hex() == "90" + expect


@pytest.mark.parametrize("src, code", [
    ("repz xcrypt-ecb", "XCRYPTECB_64"), ("xstore-rng", "XSTORE_64"), ("repz xcrypt-cfb", "XCRYPTCFB_64"),   # objdump's names
    ("rep xsha512", "XSHA512_64"), ("rep xsha512_alt", "XSHA512_ALT_64"), ("rep xstore_alt", "XSTORE_ALT_64"),   # iced-x86's
    ("rep ccs_hash", "CCS_HASH_64"), ("rep ccs_encrypt", "CCS_ENCRYPT_64"), ("xsha512", "XSHA512_64"),
])
def test_padlock_spellings_of_objdump_and_iced(src, code):
    """Names GNU as does not know (objdump's xcrypt-ecb, iced-x86's xsha512 …): the bytes iced-x86 encodes."""
    import iced_x86 as I
    e = I.Encoder(64)
    e.encode(I.Instruction.create(getattr(I.Code, code)), 0)
    assert x86gen.assemble(src) == e.take_buffer()


@pytest.mark.parametrize("src", ["repne xsha1", "lock xcryptecb", "rep rep xsha1", "repne xstore"])
def test_padlock_wrong_prefixes_are_errors(src):
    """GNU as 2.40 refuses these too (`same type of prefix used twice` for repne xsha1)."""
    with pytest.raises(x86gen.PrefixError):
        x86gen.assemble(src)


# ---- directives that lay out bytes are honoured or refused (issue 24) -------------------------------------------

@pytest.mark.parametrize("src, expect", [
    (".uleb128 300\nnop", "ac0290"),                                        # GNU as 2.40
    ("jmp L2\n.uleb128 300\nL2:", "eb02ac02"),                              # GNU as 2.40: the label after it moves
    (".uleb128 0, 127, 128, 624485", "007f8001e58e26"),                     # GNU as 2.40 (DWARF 5 7.6's example)
    (".sleb128 -1, 63, 64, -64, -65, 127, 128", "7f3fc00040bf7fff008001"),  # GNU as 2.40
])
def test_leb128_directives_lay_out_their_bytes(src, expect, tmp_path):
    check(src, expect, tmp_path)


def test_uleb128_of_a_negative_value_is_refused():
    # GNU as 2.40 writes `.uleb128 -1` as the 64-bit two's complement (ten bytes); x86gen says so instead
    with pytest.raises(AsmSyntaxError, match=r"\.uleb128 -1: a negative value"):
        x86gen.assemble(".uleb128 -1")


@pytest.mark.parametrize("src, expect", [
    ("nop\n.end\nnop", "90"),                  # GNU as 2.40: nothing after .end is read
    ("nop\n.end\nthis is not read", "90"),     # GNU as 2.40
])
def test_end_stops_the_input(src, expect, tmp_path):
    check(src, expect, tmp_path)


@pytest.mark.parametrize("src, line, section", [
    ("nop\n.section .rodata\n.long 5\n.text\nret", 3, ".rodata"),   # GNU as 2.40's .text: 90 c3 (the .long is apart)
    ("nop\n.data\nx:\n.text\nret", 3, ".data"),
    ("nop\n.bss\n.zero 8", 3, ".bss"),
    ("nop\n.pushsection .rodata.cst4\n.align 4\n.popsection", 3, ".rodata.cst4"),
    ("nop\n.section .text.startup,\"ax\",@progbits\nret", 3, ".text.startup"),
    ("nop\n.data\n.text\n.previous\nret", 5, ".data"),
])
def test_bytes_in_another_section_are_refused(src, line, section):
    """x86gen lays out .text only; a line that would put bytes or a label in another section is an error (flattened
    into .text they would be other bytes than GNU as's .text)."""
    with pytest.raises(AsmSyntaxError, match=rf"line {line}: .*in section {re.escape(section)}: x86gen lays out one section"):
        x86gen.assemble(src)


@pytest.mark.parametrize("src, expect", [
    ("nop\n.section .note.GNU-stack,\"\",@progbits", "90"),          # GNU as 2.40 (compilers end with it)
    ("nop\n.pushsection .rodata\n.globl f\n.popsection\nret", "90c3"),   # GNU as 2.40: nothing laid out elsewhere
    ("nop\n.data\n.text\nret", "90c3"),                                # GNU as 2.40
    ("nop\n.section .text\nret", "90c3"),                              # GNU as 2.40
])
def test_sections_without_bytes_are_read(src, expect, tmp_path):
    check(src, expect, tmp_path)


@pytest.mark.parametrize("src, match", [
    (".balign 4,1,2,3", r"\.balign takes an alignment, a fill value and a maximum skip, got 4"),   # GNU as: junk at end of line
    (".endbr", r"unknown directive '\.endbr'"),   # GNU as 2.40: unknown pseudo-op
    (".popsection", r"\.popsection without a \.pushsection"),
    (".text 1\nnop", r"subsections are not supported"),
])
def test_directives_that_cannot_be_honoured_are_errors(src, match):
    with pytest.raises(AsmSyntaxError, match=match):
        x86gen.assemble(src)


# ---- silent wrong bytes and text GNU as refuses (issue 24) ----------------------------------------------------------

@pytest.mark.parametrize("src, expect", [
    ("mov eax, ds:[ebp]", "3e678b4500"),                                     # GNU as 2.40 (the default is SS there)
    ("mov eax, ds:[esp]", "3e678b0424"),                                     # GNU as 2.40
    ("mov eax, ds:[ebp+eax*2]", "3e678b444500"),                             # GNU as 2.40
    ("vgatherdps xmm1, dword ptr ds:[ebp+xmm2*4], xmm3", "3e67c4e261924c9500"),  # GNU as 2.40
    ("mov eax, ss:[ebp]", "678b4500"),                                       # GNU as 2.40: SS is the default, no byte
    ("mov eax, ss:[esp+4]", "678b442404"),                                   # GNU as 2.40
    ("mov eax, ds:[rbp]", "3e8b4500"),                                       # GNU as 2.40
    ("mov eax, ss:[rbp]", "8b4500"),                                         # GNU as 2.40
])
def test_segment_override_on_an_ebp_or_esp_base_is_kept(src, expect, tmp_path):
    """SDM Vol.1 3.7.4: an address with an (e/r)bp or (e/r)sp base uses SS by default, so DS there needs its 3E byte."""
    check(src, expect, tmp_path)
    assert x86gen.Instruction.parse(src).encode().hex() == expect


def test_segment_override_on_an_ebp_base_in_the_api():
    # GNU as 2.40: mov eax, ds:[ebp] is 3e 67 8b 45 00, ss:[ebp] 67 8b 45 00
    assert x86gen.encode("mov", x86gen.eax, x86gen.mem(x86gen.ebp, size=32, seg="ds")).hex() == "3e678b4500"
    assert x86gen.encode("mov", x86gen.eax, x86gen.mem(x86gen.ebp, size=32, seg="ss")).hex() == "678b4500"


@pytest.mark.parametrize("src", ["mov eax, dword [rax]", "movaps xmm0, xmmword [rax]", "mov eax, dword fs:[rax]",
                                 "mov eax, dword [rip+L]\nL:", "jmp qword [rax]"])
def test_size_keyword_without_ptr_is_refused(src):
    """GNU as 2.40 reads `dword [rax]` as the number 4 plus [rax] (`mov eax, dword [rax]` is 8b 40 04), llvm-mc refuses it."""
    with pytest.raises(AsmSyntaxError, match=r"(d|q|xmm)word without ptr: write \w+ ptr "):
        x86gen.assemble(src)


@pytest.mark.parametrize("src, expect", [
    ("int 3", "cc"),          # GNU as 2.40 and llvm-mc: the one-byte breakpoint
    ("int 0x3", "cc"),        # GNU as 2.40
    ("L: int 3", "cc"),       # GNU as 2.40
    ("int 4", "cd04"),        # GNU as 2.40
])
def test_int_3_is_the_breakpoint_byte(src, expect, tmp_path):
    check(src, expect, tmp_path)
    assert x86gen.Instruction.parse(src.removeprefix("L: ")).encode().hex() == expect


def test_int_3_by_its_form_keeps_cd_03():
    # SDM Vol.2 INT n/INTO/INT3: CD 03 is INT imm8 with 3 (iced-x86 1.21 encodes INT_IMM8 3 so)
    assert x86gen.get_form("INT_IMM8")(3).hex() == "cd03"
    assert x86gen.encode("int", 3).hex() == "cd03"


def test_prefetch_reserved_names_four_encodings_and_is_refused():
    with pytest.raises(UnknownMnemonicError, match=r"prefetch_reserved is iced-x86's name of 4 forms .*cannot say which"):
        x86gen.assemble("prefetch_reserved byte ptr [rax]")
    assert x86gen.get_form("PREFETCHRESERVED5_M8")(x86gen.byte(x86gen.rax)).hex() == "0f0d28"   # iced-x86 1.21 encoder


def test_near_without_ptr_is_refused():
    # GNU as 2.40: "junk `L' after expression"; llvm-mc 14: "unknown token in expression"
    with pytest.raises(AsmSyntaxError, match=r"`near` without ptr"):
        x86gen.assemble("jmp near L\nL:")


def test_near_ptr_branch_is_sized_as_gnu_as_sizes_it(tmp_path):
    check("jmp near ptr L\nL:", "eb00", tmp_path)   # GNU as 2.40: rel8 (it relaxes `near ptr` like a plain label)


@pytest.mark.parametrize("src", [
    "vaddps zmm1{k1}{Z}, zmm2, zmm3",                          # GNU as 2.40: unknown vector operation `{Z}'
    "vaddps zmm1{k1}, zmm2, dword ptr [rax]{1TO16}",           # GNU as 2.40: unknown vector operation `{1TO16}'
    "vaddps zmm1, zmm2, zmm3, {RN-SAE}",                       # GNU as 2.40: junk `}' after expression
])
@pytest.mark.parametrize("how", ["assemble", "program", "parse"])
def test_decorations_are_lower_case(src, how):
    """GNU as and llvm-mc read {z}, {1toN} and {rn-sae} in lower case only; x86gen reads text as they do, by every door."""
    with pytest.raises(AsmSyntaxError, match=r"decorations are written in lower case"):
        if how == "assemble": x86gen.assemble(src)
        elif how == "program": x86gen.assemble("L:\n" + src + "\njmp L")
        else: x86gen.Instruction.parse(src)


@pytest.mark.parametrize("src, expect", [
    ("vaddps zmm1{K1}, zmm2, zmm3", "62f16c4958cb"),                          # GNU as 2.40: a register in any case
    ("vaddps zmm1{k1}{z}, zmm2, dword ptr [rax]{1to16}", "62f16cd95808"),     # GNU as 2.40
])
def test_mask_register_in_any_case(src, expect, tmp_path):
    check(src, expect, tmp_path)
    assert x86gen.assemble("L:\n" + src + "\njmp L").hex().startswith(expect)
    assert x86gen.Instruction.parse(src).encode().hex() == expect


@pytest.mark.parametrize("src, form_id", [
    ("vcvtdq2pd zmm1, ymm2, {rn-sae}", "EVEX_VCVTDQ2PD_ZMM_K1Z_YMMM256B32_ER"),
    ("vcvtudq2pd zmm1, ymm2, {rz-sae}", "EVEX_VCVTUDQ2PD_ZMM_K1Z_YMMM256B32_ER"),
    ("vcvtsi2sd xmm1, xmm2, eax, {rn-sae}", "EVEX_VCVTSI2SD_XMM_XMM_RM32_ER"),
    ("vcvtusi2sd xmm1, xmm2, eax, {rd-sae}", "EVEX_VCVTUSI2SD_XMM_XMM_RM32_ER"),
])
def test_exact_conversions_take_no_rounding(src, form_id):
    """SDM Vol.2 VCVTDQ2PD, VCVTUDQ2PD, VCVTSI2SD/VCVTUSI2SD r/m32: no {er} (exact); GNU as 2.40: "unsupported static
    rounding/sae"; iced-x86's OpCodeInfo allows EVEX.b there (its Code names end in _ER)."""
    with pytest.raises(x86gen.EvexOperandError, match=r"takes no rounding or \{sae\} \(the conversion is exact"):
        x86gen.assemble(src)
    assert not x86gen.get_form(form_id).evex_rc


@pytest.mark.parametrize("src, expect", [
    ("vcvtsi2sd xmm1, xmm2, rax, {rn-sae}", "62f1ef182ac8"),   # GNU as 2.40: a 64-bit integer rounds
    ("vcvtdq2pd zmm1, ymm2", "62f17e48e6ca"),                  # GNU as 2.40
])
def test_conversions_that_round_still_take_rounding(src, expect, tmp_path):
    check(src, expect, tmp_path)


# ---- EVEX decorations on a memory operand with a segment override or a 32-bit address (issue 24) --------------------

@pytest.mark.parametrize("src, expect", [
    ("vandps xmm1{k1}{z}, xmm2, dword ptr fs:[rax]{1to4}", "6462f16c995408"),            # GNU as 2.40
    ("vandps xmm1{k1}{z}, xmm2, dword ptr [eax]{1to4}", "6762f16c995408"),               # GNU as 2.40
    ("vaddps zmm1, zmm2, dword ptr gs:[ebp]{1to16}", "656762f16c58584d00"),              # GNU as 2.40
    ("vaddps zmm1, zmm2, dword ptr ds:[ebp]{1to16}", "3e6762f16c58584d00"),              # GNU as 2.40 (SS is the default)
    ("vaddps zmm1, zmm2, dword ptr fs:[eax+0x40]{1to16}", "646762f16c58584810"),         # GNU as 2.40: disp8*4
    ("vaddps zmm1, zmm2, dword ptr ss:[rbp+0x40]{1to16}", "62f16c58584d10"),             # GNU as 2.40: no byte for SS
    ("vmovups xmmword ptr fs:[rax]{k1}, xmm1", "6462f17c091108"),                        # GNU as 2.40
    ("vmovups xmmword ptr [eax]{k1}, xmm1", "6762f17c091108"),                           # GNU as 2.40
    ("vpscatterdd dword ptr fs:[rax+zmm1*4]{k1}, zmm2", "6462f27d49a01488"),             # GNU as 2.40
    # the plain broadcast first, then the same with an override: each keeps its own plan (GNU as 2.40)
    ("vaddps zmm1, zmm2, dword ptr [rax+0x40]{1to16}\nvaddps zmm1, zmm2, dword ptr fs:[rax+0x40]{1to16}",
     "62f16c585848106462f16c58584810"),
])
def test_broadcast_and_masked_store_with_segment_or_32_bit_address(src, expect, tmp_path):
    check(src, expect, tmp_path)
    if "\n" not in src: assert x86gen.Instruction.parse(src).encode().hex() == expect


def test_broadcast_with_segment_by_every_door():
    # GNU as 2.40: vandps xmm1{k1}{z}, xmm2, dword ptr fs:[rax]{1to4} is 64 62 f1 6c 99 54 08
    src = x86gen.dword(x86gen.rax).with_segment("fs").bcst
    dst = x86gen.xmm1.k(x86gen.k1).z
    assert str(src) == "dword bcst fs:[rax]"
    form = x86gen.select("vandps", dst, x86gen.xmm2, src)
    assert form.accepts(dst, x86gen.xmm2, src)
    a = x86gen.Assembler()
    a.vandps(dst, x86gen.xmm2, src)
    for data in (x86gen.encode("vandps", dst, x86gen.xmm2, src), form(dst, x86gen.xmm2, src),
                 x86gen.Instruction("vandps", dst, x86gen.xmm2, src).encode(), a.assemble()):
        assert data.hex() == "6462f16c995408"


# ---- directives that lay out bytes as GNU as does (issue 24) --------------------------------------------------------

@pytest.mark.parametrize("src, expect", [
    (".fill 3, 2, 0x1234", "341234123412"),                                  # GNU as 2.40
    (".fill 2, 8, 0x11223344", "44332211000000004433221100000000"),          # GNU as 2.40: 4 bytes of value, then zeros
    (".fill 2", "0000"),                                                     # GNU as 2.40: size 1, value 0
    (".fill 1, 3, -1", "ffffff"),                                            # GNU as 2.40
    (".fill 0, 4, 1", ""),                                                   # GNU as 2.40
    (".octa 1", "01" + "00" * 15),                                           # GNU as 2.40
    (".octa -1", "ff" * 16),                                                 # GNU as 2.40
    (".octa 0x112233445566778899aabbccddeeff00", "00ffeeddccbbaa998877665544332211"),   # GNU as 2.40
    (".dc.b 1, 2\n.dc.w 1\n.dc.l 1\n.dc 5", "0102" "0100" "01000000" "0500"),    # GNU as 2.40 (.dc is .dc.w)
    (".dc.s 1.0\n.dc.d 1.0", "0000803f" "000000000000f03f"),                 # GNU as 2.40
    (".ds.b 2\n.ds.w 2, 0x1234\n.ds.l 1\n.ds 1", "0000" "34123412" "00000000" "0000"),   # GNU as 2.40
    (".nops 12", "66662e0f1f840000000000" "90"),                             # GNU as 2.40: 11 bytes, then 1
    (".nops 20", "66662e0f1f840000000000" "660f1f840000000000"),             # GNU as 2.40
    (".nops 10, 4", "0f1f4000" "0f1f4000" "6690"),                           # GNU as 2.40: at most 4 bytes each
    (".nops 7, 1", "90" * 7),                                                # GNU as 2.40
    (".nops 0", ""),                                                         # GNU as 2.40
    ("nop\n.org 4\nnop\n.org 8, 0xcc\nret", "90000000" "90cccccc" "c3"),     # GNU as 2.40
    ("jmp L\n.org 0x90\nL: nop", "e98b000000" + "00" * (0x90 - 5) + "90"),   # GNU as 2.40: rel32 past the .org
    ("L: jmp L\n.org 2", "ebfe"),                                            # GNU as 2.40
])
def test_fill_org_octa_nops_and_m68k_data_names(src, expect, tmp_path):
    check(src, expect, tmp_path)


@pytest.mark.parametrize("src, cls, match", [
    ("nop\nnop\n.org 1", OperandError, r"line 3: '\.org 1': \.org 0x1: the code before it is 0x2 bytes long"),  # GNU as: error
    (".nops 12, 15", AsmSyntaxError, r"a NOP has 1 to 11 bytes, not 15"),           # GNU as 2.40: invalid single nop size
    (".fill 1, 16, 1", AsmSyntaxError, r"the size is at most 8 bytes"),              # GNU as 2.40 clamps it (a warning)
    (".fill 1, 8, -1", x86gen.ImmediateRangeError, r"GNU as stores its low 4 bytes"),  # GNU as 2.40: ff ff ff ff 00 00 00 00
    (".fill 1, 1, 0x1234", x86gen.ImmediateRangeError, r"does not fit in 8 bits"),   # GNU as 2.40 truncates (a warning)
    (".fill -1, 1, 5", AsmSyntaxError, r"the count cannot be negative"),             # GNU as 2.40 ignores it (a warning)
    (".ds.b 2, 300", x86gen.ImmediateRangeError, r"does not fit in 8 bits"),         # GNU as 2.40 truncates (a warning)
    (".octa L\nL:", OperandError, r"a label's address goes in 1 to 8 bytes"),
    (".dc.q 1", AsmSyntaxError, r"unknown directive '\.dc\.q'"),                     # GNU as 2.40: unknown pseudo-op
])
def test_fill_org_octa_nops_errors(src, cls, match):
    with pytest.raises(cls, match=match):
        x86gen.assemble(src)


def test_org_in_the_listing_assembles_back():
    from x86gen.program_text import parse_program
    a = parse_program("nop\n.org 4, 0xcc\nL: .nops 3\njmp L")
    assert a.assemble().hex() == "90cccccc0f1f00ebfb"   # GNU as 2.40
    assert x86gen.assemble(a.text()).hex() == "90cccccc0f1f00ebfb"


# ---- memory syntax GNU as takes: parts around brackets, rsp written as an index (issue 24) ---------------------------

@pytest.mark.parametrize("src, expect", [
    ("mov eax, 8[rax]", "8b4008"),                      # GNU as 2.40
    ("mov eax, -8[rbp]", "8b45f8"),                     # GNU as 2.40
    ("mov eax, dword ptr 8[rax]", "8b4008"),            # GNU as 2.40
    ("mov eax, fs:8[rax]", "648b4008"),                 # GNU as 2.40
    ("mov eax, [rax]+4", "8b4004"),                     # GNU as 2.40
    ("mov eax, [rax]-4", "8b40fc"),                     # GNU as 2.40
    ("mov eax, 4+[rax]", "8b4004"),                     # GNU as 2.40
    ("mov eax, [rax+4][rcx]", "8b440804"),              # GNU as 2.40
    ("mov eax, [rax][rcx*4]", "8b0488"),                # GNU as 2.40
    ("mov eax, 8[rax][rcx*2]", "8b444808"),             # GNU as 2.40
    ("mov eax, [rax]+[rcx]", "8b0408"),                 # GNU as 2.40
    ("mov rax, qword ptr 8[rip]", "488b0508000000"),    # GNU as 2.40
    ("L: mov eax, 8[rax]\njmp L", "8b4008ebfb"),        # GNU as 2.40
    ("mov eax, [rax+rsp]", "8b0404"),                   # GNU as 2.40: rsp is the base (it cannot be an index)
    ("mov eax, [eax+esp]", "678b0404"),                 # GNU as 2.40
    ("mov eax, [r12+rsp]", "428b0424"),                 # GNU as 2.40
    ("lea rax, [rbx+rsp+8]", "488d441c08"),             # GNU as 2.40
    ("mov eax, [rax+rsp+1<<2]", "8b440404"),            # GNU as 2.40 (an expression: << before +)
])
def test_address_in_parts_and_rsp_as_base(src, expect, tmp_path):
    check(src, expect, tmp_path)
    if "\n" not in src: assert x86gen.Instruction.parse(src).encode().hex() == expect


@pytest.mark.parametrize("src", ["mov eax, [rax+rsp*1]", "mov eax, [rsp+rsp]", "mov eax, 4-[rax]"])
def test_rsp_with_a_scale_or_a_subtracted_address_is_refused(src):
    with pytest.raises(EncodeError):   # GNU as 2.40: not a valid base/index expression / bad expression
        x86gen.assemble(src)


@pytest.mark.parametrize("src, cls", [
    ("movsb byte ptr [rdi]", OperandError),                  # GNU as 2.40: number of operands mismatch for `movsb'
    ("cmpsb byte ptr [rsi]", OperandError),                  # GNU as 2.40: number of operands mismatch
    ("mov eax, dword ptr es:ss:[rbp]", x86gen.PrefixError),  # GNU as 2.40: redundant segment overrides (keeps es)
])
def test_one_of_two_string_operands_and_two_segment_overrides_are_refused(src, cls):
    with pytest.raises(cls):
        x86gen.assemble(src)


# ---- forms GNU as takes (issue 24) ------------------------------------------------------------------------------------

@pytest.mark.parametrize("src, expect", [
    ("movsb byte ptr [edi], byte ptr [esi]", "67a4"),                  # GNU as 2.40
    ("lodsb al, byte ptr [esi]", "67ac"),                              # GNU as 2.40
    ("lods byte ptr [esi]", "67ac"),                                   # GNU as 2.40
    ("stos dword ptr [edi], eax", "67ab"),                             # GNU as 2.40
    ("stosb byte ptr [edi]", "67aa"),                                  # GNU as 2.40
    ("rep movsd dword ptr es:[edi], dword ptr [esi]", "67f3a5"),       # GNU as 2.40
    ("movsq qword ptr [edi], qword ptr [esi]", "6748a5"),              # GNU as 2.40
    ("cmpsb byte ptr [esi], byte ptr [edi]", "67a6"),                  # GNU as 2.40
    ("repe cmps byte ptr [esi], byte ptr [edi]", "67f3a6"),            # GNU as 2.40
    ("scasb al, byte ptr [edi]", "67ae"),                              # GNU as 2.40
    ("xlat byte ptr [ebx]", "67d7"),                                   # GNU as 2.40
    ("insb byte ptr [edi], dx", "676c"),                               # GNU as 2.40
    ("outsb dx, byte ptr [esi]", "676e"),                              # GNU as 2.40
    ("movsb byte ptr [edi], byte ptr fs:[esi]", "6467a4"),             # GNU as 2.40
    ("addr32 movsb", "67a4"),                                          # GNU as 2.40: the implicit operands 32-bit
    ("addr32 rep stosq", "67f348ab"),                                  # GNU as 2.40
    ("fs addr32 lodsb", "6467ac"),                                     # GNU as 2.40
    ("addr32 xlatb", "67d7"),                                          # GNU as 2.40
    ("addr32 movsb byte ptr [edi], byte ptr [esi]", "67a4"),           # GNU as 2.40
    ("addr32 maskmovdqu xmm0, xmm1", "67660ff7c1"),                    # GNU as 2.40: 67 before the mandatory 66
])
def test_string_instruction_with_32_bit_addresses(src, expect, tmp_path):
    """SDM Vol.2 MOVS, XLAT: 0x67 makes a string instruction's addresses [esi]/[edi]/[ebx+al]; GNU as writes it for those
    registers or for `addr32`."""
    check(src, expect, tmp_path)
    assert x86gen.Instruction.parse(src).encode().hex() == expect
    assert x86gen.assemble("L:\n" + src + "\njmp L").hex().startswith(expect)


@pytest.mark.parametrize("src, iced, gnu", [
    ("lods ax, word ptr [esi]", "6667ad", "6766ad"),
    ("lods ax, word ptr fs:[esi]", "646667ad", "646766ad"),
    ("addr32 rep movsw", "6667f3a5", "6766f3a5"),
])
def test_string_instruction_with_32_bit_addresses_16_bit(src, iced, gnu, tmp_path):
    """The 16-bit ones: iced-x86 1.21's encoder (create_lodsw(32), …) writes 66 67, GNU as 2.40 67 66; x86gen writes
    iced's order, as for every 16-bit operand with a 32-bit address (tests/test_addr32.py)."""
    assert x86gen.assemble(src).hex() == iced
    if HAVE_AS: assert gnu_as(src, tmp_path).hex() == gnu


def test_string_instruction_with_32_bit_addresses_in_the_api():
    from x86gen.registers import al, ebx, edi, esi, rdi
    b, d = x86gen.byte, x86gen.dword
    # GNU as 2.40: movsb [edi], [esi] 67 a4; lodsb al, [esi] 67 ac; xlat [ebx] 67 d7; rep movsd 67 f3 a5
    assert x86gen.encode("movsb", b(edi), b(esi)).hex() == "67a4"
    assert x86gen.encode("lodsb", al, b(esi)).hex() == "67ac"
    assert x86gen.encode("xlat", b(ebx)).hex() == "67d7"
    assert x86gen.encode("rep movsd", d(edi), d(esi)).hex() == "67f3a5"
    assert x86gen.encode("addr32 movsb").hex() == "67a4"
    assert x86gen.select("movsb", b(edi), b(esi))(b(edi), b(esi)).hex() == "67a4"
    a = x86gen.Assembler()
    a.movsb(b(edi), b(esi))
    assert a.assemble().hex() == "67a4"
    # GNU as 2.40: "`byte ptr [esi]' is not a valid base/index expression"
    with pytest.raises(OperandError, match=r"a 32-bit and a 64-bit address"):
        x86gen.encode("movsb", b(rdi), b(esi))
    with pytest.raises(OperandError, match=r"a 32-bit and a 64-bit address"):
        x86gen.assemble("movsb byte ptr [rdi], byte ptr [esi]")


@pytest.mark.parametrize("src, expect", [
    ("repne lodsb", "f2ac"),                                           # GNU as 2.40
    ("repnz lodsb", "f2ac"),                                           # GNU as 2.40
    ("repne stosb", "f2aa"),                                           # GNU as 2.40
    ("repnz stosd", "f2ab"),                                           # GNU as 2.40
    ("repne movsb", "f2a4"),                                           # GNU as 2.40
    ("repne movsq", "f248a5"),                                         # GNU as 2.40
    ("repne movs byte ptr [rdi], byte ptr [rsi]", "f2a4"),             # GNU as 2.40
    ("repne insb", "f26c"),                                            # GNU as 2.40
    ("repne insd", "f26d"),                                            # GNU as 2.40
    ("repne outsb", "f26e"),                                           # GNU as 2.40
    ("repne lodsw", "66f2ad"),                                         # GNU as 2.40
    ("repne outsw", "66f26f"),                                         # GNU as 2.40
    ("repne lodsb al, byte ptr fs:[rsi]", "64f2ac"),                   # GNU as 2.40
    ("addr32 repne lodsb", "67f2ac"),                                  # GNU as 2.40
    ("repne cmpsb", "f2a6"),                                           # GNU as 2.40 (as before)
    ("repne scasb", "f2ae"),                                           # GNU as 2.40 (as before)
])
def test_repne_on_every_string_instruction(src, expect, tmp_path):
    """GNU as 2.40 takes repne/repnz on every string instruction (F2; SDM Vol.2 REP/REPE/REPZ/REPNE/REPNZ gives it a
    meaning on cmps/scas only, the CPU repeats the others as with rep); iced-x86 decodes F2 AC as `repne lodsb`."""
    check(src, expect, tmp_path)
    assert x86gen.Instruction.parse(src).encode().hex() == expect
    assert x86gen.assemble("L:\n" + src + "\njmp L").hex().startswith(expect)


@pytest.mark.parametrize("src", ["rep xlat", "repe xlatb", "repne xlat"])
def test_rep_on_xlat_is_refused(src):
    # GNU as 2.40: "invalid instruction `xlat' after `rep'"
    with pytest.raises(x86gen.PrefixError, match=r"does not take the rep"):
        x86gen.assemble(src)


@pytest.mark.parametrize("src, expect", [
    ("addr32 mov al, [0x12345678]", "67a078563412"),                   # GNU as 2.40: moffs, a 4-byte address
    ("addr32 mov eax, [0x12345678]", "67a178563412"),                  # GNU as 2.40
    ("addr32 mov rax, [0x12345678]", "6748a178563412"),                # GNU as 2.40
    ("addr32 mov [0x12345678], al", "67a278563412"),                   # GNU as 2.40
    ("addr32 mov dword ptr [0x12345678], eax", "67a378563412"),        # GNU as 2.40
    ("addr32 mov [0x12345678], rax", "6748a378563412"),                # GNU as 2.40
    ("addr32 movabs al, [0x12345678]", "67a078563412"),                # GNU as 2.40
    ("addr32 mov al, [0xffffffff]", "67a0ffffffff"),                   # GNU as 2.40
    ("addr32 mov al, [-1]", "67a0ffffffff"),                           # GNU as 2.40
    ("addr32 mov al, byte ptr fs:[0x12345678]", "6467a078563412"),     # GNU as 2.40
    ("fs addr32 mov al, [0x12345678]", "6467a078563412"),              # GNU as 2.40
    ("addr32 mov ecx, [0x12345678]", "678b0c2578563412"),              # GNU as 2.40: not the accumulator, ModRM
    ("addr32 mov ecx, [0xffffffff]", "678b0c25ffffffff"),              # GNU as 2.40: zero-extended with 0x67
    ("addr32 mov ecx, dword ptr gs:[0x12345678]", "65678b0c2578563412"),   # GNU as 2.40
    ("addr32 add dword ptr [0x80000000], 1", "678304250000008001"),    # GNU as 2.40
    ("addr32 xchg eax, [0x10]", "6787042510000000"),                   # GNU as 2.40
    ("addr32 lea eax, [0x12345678]", "678d042578563412"),              # GNU as 2.40
])
def test_addr32_with_an_absolute_address(src, expect, tmp_path):
    """addr32 makes an absolute address 32-bit (SDM Vol.2 3.6: zero-extended); mov between it and the accumulator is
    then the moffs form with a 4-byte address (SDM Vol.2 MOV: moffs is sized by the address size), as GNU as writes it."""
    check(src, expect, tmp_path)
    assert x86gen.Instruction.parse(src).encode().hex() == expect
    assert x86gen.assemble("L:\n" + src + "\njmp L").hex().startswith(expect)


@pytest.mark.parametrize("src, iced, gnu", [
    ("addr32 mov ax, [0x12345678]", "6667a178563412", "6766a178563412"),
    ("addr32 mov [0x12345678], ax", "6667a378563412", "6766a378563412"),
])
def test_addr32_with_an_absolute_address_16_bit(src, iced, gnu, tmp_path):
    """iced-x86 1.21 (MOV_AX_MOFFS16 with a 4-byte displacement) writes 66 67, GNU as 2.40 67 66: x86gen writes iced's order."""
    assert x86gen.assemble(src).hex() == iced
    if HAVE_AS: assert gnu_as(src, tmp_path).hex() == gnu


def test_addr32_with_an_absolute_address_in_the_api():
    # GNU as 2.40: addr32 mov al, [0x12345678] is 67 a0 78 56 34 12
    assert x86gen.encode("addr32 mov", x86gen.al, x86gen.mem(disp=0x12345678, size=8)).hex() == "67a078563412"
    a = x86gen.Assembler()
    a.emit("addr32 mov", x86gen.ecx, x86gen.mem(disp=0x12345678))
    assert a.assemble().hex() == "678b0c2578563412"   # GNU as 2.40
    # GNU as 2.40 keeps the low 32 bits with a warning ("0x123456789 shortened to 0x23456789"): refused
    with pytest.raises(x86gen.PrefixError, match=r"beyond a 32-bit address"):
        x86gen.assemble("addr32 mov al, [0x123456789]")


@pytest.mark.parametrize("src, expect", [
    ("lock xchg eax, dword ptr [rdx]", "f08702"),                      # GNU as 2.40
    ("lock xchg al, byte ptr [rdx]", "f08602"),                        # GNU as 2.40
    ("lock xchg rax, qword ptr [rdx]", "f0488702"),                    # GNU as 2.40
    ("lock xchg dword ptr [rdx], eax", "f08702"),                      # GNU as 2.40 (as before)
    ("xchg eax, dword ptr [rdx]", "8702"),                             # GNU as 2.40 (as before)
    ("xacquire xchg eax, dword ptr [rdx]", "f28702"),                  # GNU as 2.40: xchg with memory takes the hint alone
    ("xrelease xchg r8, qword ptr fs:[rdx]", "64f34c8702"),            # GNU as 2.40
])
def test_lock_xchg_register_first(src, expect, tmp_path):
    """xchg reg, [mem] is xchg [mem], reg (the same instruction, SDM Vol.2 XCHG), with prefix words too."""
    check(src, expect, tmp_path)
    assert x86gen.Instruction.parse(src).encode().hex() == expect
    assert x86gen.assemble("L:\n" + src + "\njmp L").hex().startswith(expect)


def test_lock_xchg_register_first_16_bit_and_in_the_api(tmp_path):
    # GNU as 2.40: 66 f0 87 02, the same prefixes in another order; x86gen's order (F0 66) is iced-x86's, as for
    # lock xchg word ptr [rdx], ax
    assert x86gen.assemble("lock xchg ax, word ptr [rdx]") == x86gen.assemble("lock xchg word ptr [rdx], ax") \
        == bytes.fromhex("f0668702")
    if HAVE_AS: assert gnu_as("lock xchg ax, word ptr [rdx]", tmp_path).hex() == "66f08702"
    assert x86gen.encode("lock xchg", x86gen.eax, x86gen.dword(x86gen.rdx)).hex() == "f08702"   # GNU as 2.40
    a = x86gen.Assembler()
    a.emit("lock xchg", x86gen.ecx, x86gen.dword(x86gen.rax))
    assert a.assemble().hex() == "f08708"   # GNU as 2.40: lock xchg ecx, dword ptr [rax]


@pytest.mark.parametrize("src, expect", [
    ("loopz L\nL:", "e100"),                                           # GNU as 2.40
    ("loopnz L\nL:", "e000"),                                          # GNU as 2.40
    ("L: loopnz L", "e0fe"),                                           # GNU as 2.40
    ("addr32 loopz L\nL:", "67e100"),                                  # GNU as 2.40
])
def test_loopz_and_loopnz_are_loope_and_loopne(src, expect, tmp_path):
    """GNU as's names (SDM Vol.2 LOOP/LOOPcc: LOOPE/LOOPZ E1, LOOPNE/LOOPNZ E0); GNU as has no loopzl/loopel."""
    check(src, expect, tmp_path)


@pytest.mark.parametrize("src", ["loopzl L\nL:", "loopnzl L\nL:"])
def test_loopzl_is_unknown(src):
    with pytest.raises(UnknownMnemonicError):   # GNU as 2.40: "no such instruction"
        x86gen.assemble(src)


@pytest.mark.parametrize("src, expect", [
    ("bnd jmp L\nL:", "f2eb00"),                                       # GNU as 2.40: relaxed to rel8
    ("L: bnd jmp L", "f2ebfd"),                                        # GNU as 2.40
    ("bnd jmp L\nnop\nL: ret", "f2eb0190c3"),                          # GNU as 2.40
    ("bnd jmp L\n.zero 200\nL: ret", "f2e9c8000000" + "00" * 200 + "c3"),   # GNU as 2.40: beyond rel8, rel32
    ("bnd call L\nL:", "f2e800000000"),                                # GNU as 2.40
    ("bnd je L\nL:", "f27400"),                                        # GNU as 2.40
])
def test_bnd_jmp_to_a_label_is_relaxed(src, expect, tmp_path):
    """GNU as relaxes `bnd jmp L` as a plain jmp: F2 EB cb where rel8 reaches, F2 E9 cd beyond (its BNDPrefixOk jmp)."""
    check(src, expect, tmp_path)


def test_bnd_jmp_to_a_label_in_the_assembler():
    a = x86gen.Assembler()
    L = a.label()
    a.emit("bnd jmp", L)
    a.bind(L)
    assert a.assemble().hex() == "f2eb00"   # GNU as 2.40: bnd jmp L / L: is f2 eb 00


@pytest.mark.parametrize("src, expect", [
    ("fstsw", "9bdfe0"),                          # GNU as 2.40: fstsw ax
    ("fnstsw", "dfe0"),                           # GNU as 2.40
    ("movsx r11d, ecx", "4463d9"),                # GNU as 2.40: movsxd r32, r/m32 (63 /r, no REX.W)
    ("movsx eax, ecx", "63c1"),                   # GNU as 2.40
    ("movsx eax, dword ptr [rax]", "6300"),       # GNU as 2.40
    ("movsx rax, ecx", "4863c1"),                 # GNU as 2.40
])
def test_gnu_shorthands_the_thorough_fuzz_found(src, expect, tmp_path):
    check(src, expect, tmp_path)
    assert x86gen.Instruction.parse(src).encode().hex() == expect

