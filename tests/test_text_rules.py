"""The text front end's rules, one test per rule: comments and statements, integer literals,
strings, data directives, register names, branches, aliases, messages.

Expected bytes come from GNU as 2.40 (`as --64 -msyntax=intel -mnaked-reg`, then
`objcopy -O binary -j .text`), marked `# GNU as 2.40`; where GNU as is on the machine, the
`gnu_as` cases also run it to check the hard-coded bytes.
"""
from __future__ import annotations

import shutil
import subprocess

import pytest

import x86gen
from x86gen import AsmSyntaxError, EncodeError, UnknownMnemonicError

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
])
def test_semicolon_separates_statements(src, expect, tmp_path):
    check(src, expect, tmp_path)


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


def test_symbol_assignment_is_refused():
    """`x = 1` (GNU as: a symbol assignment) is refused rather than misread, e.g. after a `;` meant as a comment."""
    with pytest.raises(AsmSyntaxError, match="symbol assignment"):
        x86gen.assemble("xor eax, eax ; total = 0")


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
                                 ".skip 1.5", ".zero 2, 300", ".p2align " + "1" * 5000, ".zero 10000000000"])
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
