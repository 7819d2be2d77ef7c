"""Bad input gives an `x86gen.EncodeError` subclass naming the input, never a bare Python exception from deep inside
(issue 24, "Bare exceptions"). One test per rule; each case here raised a bare ValueError, TypeError, AttributeError,
UnicodeEncodeError or MemoryError before the rule (or, where noted, already raised the error it should and is kept as
a guard). No bytes here are expected from x86gen's own output: where bytes are compared, it is a program with itself
(pickled and back, the command line and `assemble`)."""
from __future__ import annotations

import pytest

import x86gen
from x86gen import Assembler, Instruction, eax, ecx, get_form

BIG = "9" * 5000   # more decimal digits than int() converts (sys.int_info.str_digits_check_threshold: 4300)


# --- numbers too long for int() ----------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    f"mov eax, [rax+{BIG}]",            # the common memory operand (`_simple_address`): a bare ValueError before
    f"mov eax, dword ptr [rax-{BIG}]",
    f"mov eax, [rax+rbx*4+{BIG}]",
    f"mov eax, [rax+rbx*{BIG}]",        # (guards from here: these were AsmSyntaxErrors already)
    f"mov eax, {BIG}", f".long {BIG}", f".byte {BIG}", f".quad -{BIG}", f".zero {BIG}", f".space {BIG}",
    f".align {BIG}", f".p2align {BIG}", f".balign 4, {BIG}", f"jmp {BIG}", f'.ascii "\\{BIG}"', f".uleb128 {BIG}",
    ".long 08", "dd 08",   # (a decimal the integer reader refuses was read as a float: `dd 08` was float32 8.0)
], ids=lambda t: t.replace(BIG, "9…9"))
def test_a_number_too_long_is_a_syntax_error(text):
    """A number int() does not convert (more than 4300 digits), or a malformed decimal, anywhere in a line: an
    AsmSyntaxError naming the line, as a long immediate is."""
    for t in (text, text + "\n"):   # one line (x86gen.syntax, when it is one) and a program (x86gen.program_text)
        with pytest.raises(x86gen.AsmSyntaxError) as e:
            x86gen.assemble(t)
        msg = str(e.value)
        assert "floating-point" not in msg and (BIG[:100] in msg or "08" in msg)
        if "\n" in t: assert msg.startswith("line 1: ")


def test_a_number_too_long_is_a_syntax_error_in_parse():
    with pytest.raises(x86gen.AsmSyntaxError, match="number too long"):
        x86gen.parse(f"mov eax, [rax+{BIG}]")


def test_a_long_decimal_displacement_still_reads():
    """A displacement of more than 20 digits takes the general address parser: the same value (here one that does
    not fit, as before; and a 20-digit one that wraps as objdump's [rip+0xffff...] does)."""
    with pytest.raises(x86gen.ImmediateRangeError):
        x86gen.assemble("mov eax, [rax+" + "1" + "0" * 25 + "]")
    assert x86gen.parse("mov eax, [rax+000000000000000000000000001]") == x86gen.parse("mov eax, [rax+1]")


# --- text that UTF-8 has no bytes for ---------------------------------------------------------------


@pytest.mark.parametrize("text", ['.ascii "\udcff"', '.asciz "a\udcffb"', '.string "\udcff"', ".byte '\udcff'",
                                  "mov al, '\udcff'", '.ascii "\\n\udcff"'])
def test_text_without_utf8_bytes_is_a_syntax_error(text):
    """A lone surrogate (what ``errors="surrogateescape"`` makes of a byte that is no UTF-8) in a string or character
    constant: an AsmSyntaxError naming the character and the line, not a UnicodeEncodeError."""
    with pytest.raises(x86gen.AsmSyntaxError, match=r"U\+DCFF.*no UTF-8") as e:
        x86gen.assemble(text)
    assert "line 1" in str(e.value)


def test_db_of_text_without_utf8_bytes_is_an_operand_error():
    with pytest.raises(x86gen.OperandError, match="no UTF-8"):
        Assembler().db("ok\udcff")


# --- an instruction's operands and form -----------------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda: Instruction("add", eax, None).encode(),
    lambda: Instruction("add", eax, None).form,
    lambda: Instruction("add", eax, ecx, form="SUB_RM32_R32"),
    lambda: Instruction("add", eax, ecx, form=get_form("SUB_RM32_R32")),
    lambda: Instruction("lock add", eax, ecx, form=get_form("SUB_RM32_R32")),
])
def test_an_instruction_of_no_form_is_an_operand_error(make):
    """(A guard: on the parent commit these were OperandErrors already, as `encode("add", eax, None)` is.) A form of
    another mnemonic is refused when the Instruction is made."""
    with pytest.raises(x86gen.OperandError):
        make()
