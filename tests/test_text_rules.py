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
from x86gen import AsmSyntaxError, UnknownMnemonicError

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
