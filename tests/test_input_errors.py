"""Bad input gives an `x86gen.EncodeError` subclass naming the input, never a bare Python exception from deep inside
(issue 24, "Bare exceptions"). One test per rule; each case here raised a bare ValueError, TypeError, AttributeError,
UnicodeEncodeError or MemoryError before the rule (or, where noted, already raised the error it should and is kept as
a guard). No bytes here are expected from x86gen's own output: where bytes are compared, it is a program with itself
(pickled and back, the command line and `assemble`)."""
from __future__ import annotations

import ctypes
import io
import pickle
import sys

import pytest

import x86gen
from x86gen import Assembler, Instruction, eax, ecx, get_form
from x86gen.program_text import assemble_program, parse_program

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


# --- arguments of the wrong type ------------------------------------------------------------------


def _asm_with_ret() -> Assembler:
    a = Assembler()
    a.ret()
    return a


WRONG_TYPES = [   # (call, the function and argument its message names)
    (lambda: x86gen.assemble(None), "x86gen.assemble: text"),
    (lambda: x86gen.assemble(5), "x86gen.assemble: text"),
    (lambda: x86gen.assemble(b"nop"), "x86gen.assemble: text"),
    (lambda: x86gen.assemble(["nop"]), "x86gen.assemble: text"),
    (lambda: x86gen.assemble("jmp 0x40", ip="0"), "x86gen.assemble: ip"),
    (lambda: x86gen.assemble("nop\nnop", ip=1.5), "x86gen.assemble: ip"),
    (lambda: x86gen.parse(None), "x86gen.parse: text"),
    (lambda: x86gen.parse(b"nop"), "x86gen.parse: text"),
    (lambda: Instruction.parse(None), "x86gen.Instruction.parse: text"),
    (lambda: x86gen.encode("jmp", 0x40, ip="0"), "x86gen.encode: ip"),
    (lambda: x86gen.encode("jmp", 0x40, ip=1.5), "x86gen.encode: ip"),
    (lambda: x86gen.encode("bnd jmp", 0x40, ip="0"), "x86gen.encode: ip"),
    (lambda: x86gen.select("jmp", 0x40, ip="0"), "x86gen.select: ip"),
    (lambda: x86gen.select_form(5, eax, ecx), "x86gen.select_form: forms"),
    (lambda: x86gen.select_form("ADD_RM32_R32", eax, ecx), "x86gen.select_form: forms"),
    (lambda: get_form("JMP_REL32_64")(0x40, ip="0"), "Form JMP_REL32_64: ip"),
    (lambda: get_form("JMP_REL32_64").encode_rel("0"), "Form JMP_REL32_64.encode_rel: rel"),
    (lambda: Instruction("jmp", 0x40).encode(ip="0"), "x86gen.encode: ip"),
    (lambda: x86gen.isel.select(None, None, None), "x86gen.isel.select: op"),
    (lambda: x86gen.isel.select("ADD", [], 1), "x86gen.isel.select: dtype"),
    (lambda: x86gen.isel.select("ADD", "int32", "4"), "x86gen.isel.select: width"),
    (lambda: x86gen.reference.forms_for(None), "x86gen.reference.forms_for: op"),
    (lambda: parse_program("nop", base=1.5), "parse_program: base"),
    (lambda: parse_program(None), "parse_program: text"),
    (lambda: parse_program("nop", asm=5), "parse_program: asm"),
    (lambda: assemble_program(b"nop"), "parse_program: text"),
    (lambda: Assembler(base="0"), "x86gen.Assembler: base"),
    (lambda: Assembler().label(5), "Assembler.label: name"),
    (lambda: Assembler().get_label(b"x"), "Assembler.label: name"),
    (lambda: Assembler().bind(5), "Assembler.bind: label"),
    (lambda: Assembler().align("4"), "Assembler.align: n"),
    (lambda: Assembler().align(4, fill="0"), "Assembler.align: fill"),
    (lambda: Assembler().zero(1.5), "Assembler.zero: n"),
    (lambda: Assembler(listing=True).listing("x"), "Assembler.listing: width"),
    (lambda: _asm_with_ret().jit("int"), "Assembler.jit: restype"),
    (lambda: _asm_with_ret().jit(ctypes.c_int, ("int",)), "Assembler.jit: argtypes[0]"),
    (lambda: x86gen.jit.compile(5), "x86gen.jit.compile: code"),
    (lambda: x86gen.jit.compile("c3"), "x86gen.jit.compile: code"),
    (lambda: x86gen.jit.compile(b"\xc3", ctypes.c_int, 5), "x86gen.jit.compile: argtypes"),
]


@pytest.mark.parametrize("call, named", WRONG_TYPES, ids=[n for _, n in WRONG_TYPES])
def test_wrong_argument_type_is_an_encode_error(call, named):
    """An argument of a type the function does not take: `x86gen.ArgumentTypeError`, an EncodeError and a TypeError,
    whose message names the function, the argument and the type it got."""
    if "jit" in named and not x86gen.jit.available(): pytest.skip("x86gen.jit runs on Linux x86-64 only")
    with pytest.raises(x86gen.ArgumentTypeError) as e:
        call()
    assert isinstance(e.value, x86gen.EncodeError) and isinstance(e.value, TypeError)
    msg = str(e.value)
    assert msg.startswith(named + " must be "), msg
    assert msg.rsplit(", not ", 1)[1].split()[0] in ("None", "int", "str", "bytes", "list", "float"), msg


def test_argument_type_error_is_exported():
    assert "ArgumentTypeError" in x86gen.__all__
    assert issubclass(x86gen.ArgumentTypeError, x86gen.EncodeError) and issubclass(x86gen.ArgumentTypeError, TypeError)
    assert x86gen.errors.ArgumentTypeError is x86gen.ArgumentTypeError


@pytest.mark.parametrize("call", [lambda: Assembler().float32(None), lambda: Assembler().float64("x"),
                                  lambda: Assembler().float32(1.0, [1])])
def test_a_data_value_of_the_wrong_type_is_an_operand_error(call):
    """The values of a data directive are operands (as `Assembler.db(None)`'s are): an OperandError naming the value."""
    with pytest.raises(x86gen.OperandError, match="cannot store"):
        call()


def test_ints_of_other_types_are_still_taken():
    """Arguments checked on the failure path take what ``operator.index`` takes (numpy integers, bool)."""
    class Index:
        def __index__(self): return 16
    a = Assembler(base=Index())
    a.nop()
    a.align(Index())
    b = Assembler(base=16)
    b.nop()
    b.align(16)
    assert a.assemble() == b.assemble()


# --- pickling an Assembler ------------------------------------------------------------------------


@pytest.mark.parametrize("listing", [False, True])
def test_an_assembler_pickles_after_assemble(listing):
    """An Assembler with branches holds their forms, whose encoders are closures: a form pickles as its id."""
    a = parse_program("top: jmp done\n mov eax, [rip+top]\n .p2align 4\n jne top\ndone: ret\n .quad top", 0x1000,
                      listing=listing)
    code = a.assemble()
    b = pickle.loads(pickle.dumps(a))
    assert b.assemble() == code
    b.nop()   # and it goes on as the original would
    a.nop()
    assert b.assemble() == a.assemble()
    if listing: assert b.listing() == a.listing()
    assert pickle.loads(pickle.dumps(get_form("JMP_REL8_64"))) is get_form("JMP_REL8_64")


# --- the command line's input ---------------------------------------------------------------------


def test_command_line_input_is_capped(tmp_path, monkeypatch, capsys):
    """`x86gen asm -f` reads at most `x86gen.__main__.MAX_INPUT` bytes (file, /dev/zero, standard input): more is an
    error with exit status 1, not a MemoryError."""
    import x86gen.__main__ as cli
    monkeypatch.setattr(cli, "MAX_INPUT", 64)
    ok = tmp_path / "ok.s"
    ok.write_text("nop\n" * 16)   # 64 bytes: taken
    assert cli.main(["asm", "-f", str(ok)]) == 0
    assert capsys.readouterr().out.strip() == x86gen.assemble("nop\n" * 16).hex()
    big = tmp_path / "big.s"
    big.write_text("nop\n" * 17)
    for args, name in ((["asm", "-f", str(big)], str(big)), (["asm", "-f", "/dev/zero"], "/dev/zero")):
        assert cli.main(args) == 1
        err = capsys.readouterr().err
        assert f"{name}: more than 64 bytes of input" in err and "MAX_INPUT" in err
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"nop\n" * 100)))
    assert cli.main(["asm", "-f", "-"]) == 1
    assert "standard input: more than 64 bytes" in capsys.readouterr().err
