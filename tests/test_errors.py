"""Errors: what x86gen refuses, with which exception and message; and what the spec loader refuses
(`codegen.spec.load` on small malformed YAML files: the `SpecError` names file, line and field)."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import x86gen
from x86gen import ah, bh, eax, ecx, mem, r8, r9b, rax, rdi, rsi, rsp, sil, xmm0, xmm1, ymm1

ROOT = Path(__file__).resolve().parent.parent


# --- encoding errors ---------------------------------------------------------------------------------


def test_exception_hierarchy():
    assert issubclass(x86gen.EncodeError, ValueError)
    for e in (x86gen.OperandError, x86gen.UnknownMnemonicError, x86gen.AsmSyntaxError):
        assert issubclass(e, x86gen.EncodeError)
    assert issubclass(x86gen.ImmediateRangeError, x86gen.OperandError)


def test_every_error_class_is_exported():
    """Every exception class of x86gen.errors is importable from `x86gen` and listed in its `__all__`."""
    import inspect

    import x86gen.errors
    classes = [c for _, c in inspect.getmembers(x86gen.errors, inspect.isclass) if c.__module__ == "x86gen.errors"]
    assert x86gen.errors.UnsupportedRegisterError in classes
    for c in classes:
        assert issubclass(c, x86gen.EncodeError)
        assert getattr(x86gen, c.__name__) is c and c.__name__ in x86gen.__all__
    from x86gen import UnsupportedRegisterError
    with pytest.raises(UnsupportedRegisterError):
        x86gen.assemble("mov rax, cr1")   # reserved (SDM Vol.3 2.5): #UD


def test_unknown_mnemonic():
    with pytest.raises(x86gen.UnknownMnemonicError, match=r"unknown mnemonic 'aadd2'.*did you mean aadd, add\b"):
        x86gen.encode("aadd2", eax, ecx)
    with pytest.raises(x86gen.UnknownMnemonicError, match="addd"):
        x86gen.assemble("addd eax, 1")
    with pytest.raises(x86gen.UnknownMnemonicError, match="NOPE"):
        x86gen.get_form("NOPE")


def test_wrong_operand_kinds_names_instruction_operands_and_forms():
    with pytest.raises(x86gen.OperandError) as ei:
        x86gen.encode("add", eax, xmm0)
    msg = str(ei.value)
    assert "'add'" in msg and "eax" in msg and "xmm0" in msg
    for form in x86gen.forms_of("add"):      # every form is listed, with its id (the REX2 twins by a note: same syntax)
        if form.encoding_kind != "rex2": assert form.id in msg and form.syntax in msg
    assert "REX2" in msg
    with pytest.raises(x86gen.OperandError, match=r"vaddps(.|\n)*VEX_VADDPS_XMM_XMM_XMMM128(.|\n)*VEX_VADDPS_YMM_YMM_YMMM256"):
        x86gen.encode("vaddps", xmm0, ymm1, xmm1)
    with pytest.raises(x86gen.OperandError, match="add"):
        x86gen.encode("add", eax)          # no form takes one operand
    with pytest.raises(x86gen.OperandError, match="mov"):
        x86gen.assemble("mov eax, xmm0")


def test_wrong_operand_kind_at_form_level():
    with pytest.raises(x86gen.OperandError, match=r"ADD_RM32_R32 \(add r/m32, r32\): operand 2 is rcx \(r64\), expected r32"):
        x86gen.get_form("ADD_RM32_R32")(eax, x86gen.rcx)
    with pytest.raises(x86gen.OperandError, match="ADD_RM32_R32"):
        x86gen.get_form("ADD_RM32_R32")(xmm0, eax)
    with pytest.raises(x86gen.OperandError, match="SHL_RM32_1"):
        x86gen.get_form("SHL_RM32_1")(eax, 2)


def test_high_byte_register_with_rex():
    for ops in [("mov", ah, sil), ("mov", ah, r9b), ("movzx", rax, bh), ("mov", mem(r8, size=8), ah)]:
        with pytest.raises(x86gen.OperandError, match=r"ah/bh/ch/dh.*REX") as ei:
            x86gen.encode(*ops)
        assert not isinstance(ei.value, x86gen.ImmediateRangeError)
    with pytest.raises(x86gen.OperandError, match="REX"):
        x86gen.get_form("MOV_RM8_R8")(sil, ah)
    assert x86gen.encode("mov", ah, x86gen.al) == bytes.fromhex("88 c4")   # fine without REX


def test_rsp_as_index():
    with pytest.raises(x86gen.OperandError, match="rsp cannot be an index"):
        mem(rax, rsp, 1)
    with pytest.raises(x86gen.OperandError, match="rsp"):
        x86gen.assemble("lea rax, [rdi + rsp*8]")


@pytest.mark.parametrize("mn, ops, text", [
    ("add", (rax, 0xFFFFFFFF), "add rax, 0xffffffff"),          # simm32 sign-extends: 0xffffffff is not a 64-bit value it can make
    ("add", (rax, 0x80000000), "add rax, 0x80000000"),
    ("add", (eax, 1 << 32), "add eax, 0x100000000"),
    ("add", (eax, -(1 << 31) - 1), "add eax, -0x80000001"),
    ("shl", (eax, 256), "shl eax, 256"),
    ("shl", (eax, -129), "shl eax, -129"),
    ("mov", (x86gen.al, 0x100), "mov al, 0x100"),
    ("mov", (rax, 1 << 64), "mov rax, 0x10000000000000000"),
    ("ret", (0x10000,), "ret 0x10000"),
])
def test_immediate_out_of_range(mn, ops, text):
    with pytest.raises(x86gen.ImmediateRangeError, match=re.escape(mn)):
        x86gen.encode(mn, *ops)
    with pytest.raises(x86gen.ImmediateRangeError):
        x86gen.assemble(text)


def test_immediate_out_of_range_names_form_and_accepted_values():
    with pytest.raises(x86gen.ImmediateRangeError, match=r"ADD_RM32_IMM8.*0x12c.*-0x80\.\.0x7f"):
        x86gen.get_form("ADD_RM32_IMM8")(eax, 300)


def test_branch_target_out_of_range():
    with pytest.raises(x86gen.ImmediateRangeError, match="jmp"):
        x86gen.encode("jmp", 1 << 40, ip=0)
    with pytest.raises(x86gen.ImmediateRangeError, match="JMP_REL8_64"):
        x86gen.get_form("JMP_REL8_64")(0x1000 + 2 + 128, ip=0x1000)


@pytest.mark.parametrize("disp", [1 << 31, -(1 << 31) - 1, 1 << 40])
def test_displacement_out_of_int32_range(disp):
    with pytest.raises(x86gen.ImmediateRangeError, match="displacement"):
        mem(rax, disp=disp)
    with pytest.raises(x86gen.ImmediateRangeError, match="displacement"):
        mem(None, rsi, 4, disp)
    with pytest.raises(x86gen.ImmediateRangeError, match="displacement"):
        x86gen.assemble(f"mov eax, dword ptr [rax + {disp:#x}]" if disp > 0 else f"mov eax, dword ptr [rax - {-disp:#x}]")
    mem(rax, disp=(1 << 31) - 1), mem(rax, disp=-(1 << 31))   # the edges are fine


def test_ambiguous_memory_size():
    with pytest.raises(x86gen.OperandError, match=r"needs a size \(byte/dword/qword/word ptr\)"):
        x86gen.encode("add", mem(rdi), 1)
    with pytest.raises(x86gen.OperandError, match="needs a size"):
        x86gen.assemble("add [rdi], 1")
    with pytest.raises(x86gen.OperandError, match="needs a size"):
        x86gen.assemble("inc [rdi]")
    assert x86gen.assemble("add dword ptr [rdi], 1") == bytes.fromhex("83 07 01")   # GNU as: 83 07 01
    assert x86gen.assemble("add [rdi], eax") == bytes.fromhex("01 07")              # the register decides: 01 07


def test_syntax_errors_name_the_text():
    for text in ("mov eax, [rax", "mov eax, [rax+rbx+rcx]", "mov eax, [rax-rbx]"):
        with pytest.raises(x86gen.AsmSyntaxError, match=re.escape(text.split(", ")[1][:4])):
            x86gen.assemble(text)


# --- malformed spec files ----------------------------------------------------------------------------

GOOD = """\
add:
  cpuid: X64
  flags: w=OSZAPC
  forms:
  - RW:r/m32, r32    | 01 /r
  - RW:r32, r/m32    | 03 /r
"""


@pytest.fixture(scope="module")
def spec():
    pytest.importorskip("yaml")
    sys.path.insert(0, str(ROOT))
    try:
        import codegen.spec as spec
    finally:
        sys.path.remove(str(ROOT))
    return spec


def _load(spec, tmp_path, text, name="bad.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return spec.load(str(p)), str(p)


def test_spec_good_file_loads(spec, tmp_path):
    forms, _ = _load(spec, tmp_path, GOOD, "good.yaml")
    # each legacy form REX2 reaches is followed by its REX2 form, which the loader derives (isa/README.md, "REX2")
    assert [f.id for f in forms] == ["ADD_RM32_R32", "REX2_ADD_RM32_R32", "ADD_R32_RM32", "REX2_ADD_R32_RM32"]


# (what is wrong, the file text, line of the error, field named, words of the message)
BAD = {
    "unknown_family_key": (GOOD.replace("  flags: w=OSZAPC\n", "  flags: w=OSZAPC\n  colour: red\n"), 4, "add.colour", "unknown key"),
    "bad_kind": (GOOD.replace("RW:r32, r/m32 ", "RW:r32, q/m32 "), 6, "operands", "unknown kind 'q/m32'"),
    "bad_memory_size": (GOOD.replace("RW:r32, r/m32 ", "RW:r32, r32/m24"), 6, "operands", "m24"),
    "unknown_role": (GOOD.replace("RW:r32, r/m32", "XX:r32, r/m32"), 6, "operands", "XX:r32"),
    "unknown_location": (GOOD.replace("RW:r32, r/m32", "RW:r32@foo, r/m32"), 6, "operands", "@foo"),
    "duplicate_id": (GOOD + "  - RW:r/m32, r32    | 01 /r\n", 7, "id", "duplicate id ADD_RM32_R32 (first on line 5)"),
    "duplicate_id_by_attribute": (GOOD.replace("| 03 /r", "| 03 /r | id=ADD_RM32_R32"), 6, "id", "duplicate id ADD_RM32_R32"),
    "same_encoding_twice": (GOOD + "  - RW:r/m32, r32    | 01 /r | id=ADD_OTHER\n", 7, "encoding",
                            "same encoding as ADD_RM32_R32 (line 5)"),
    "bad_opcode": (GOOD.replace("| 03 /r", "| 3G /r"), 6, "encoding", "opcode byte"),
    "lower_case_opcode": (GOOD.replace("| 03 /r", "| 0f /r"), 6, "encoding", "opcode byte"),
    "unknown_encoding_token": (GOOD.replace("| 03 /r", "| 03 /r iq"), 6, "encoding", "unknown token 'iq'"),
    "unknown_vex_field": (GOOD.replace("| 03 /r", "| VEX.128.66.0F.W2 03 /r"), 6, "encoding", "W2"),
    "unknown_attribute": (GOOD.replace("| 03 /r", "| 03 /r | colour=red"), 6, "attrs", "colour=red"),
    "bad_flags": (GOOD.replace("w=OSZAPC", "w=OSZAPQ"), 3, "flags", "'Q'"),
    "missing_cpuid": (GOOD.replace("  cpuid: X64\n", ""), 1, "add.cpuid", "missing"),
    "missing_forms": ("add:\n  cpuid: X64\n", 1, "add", "missing `forms:`"),
    "missing_encoding": (GOOD.replace("  - RW:r32, r/m32    | 03 /r", "  - RW:r32, r/m32"), 6, "add.forms", "2 or 3"),
    "immediate_count": (GOOD.replace("| 03 /r", "| 03 /r ib"), 6, "encoding", "0 immediate operand(s) but 1"),
    "operand_size_mismatch": (GOOD.replace("| 03 /r", "| o16 03 /r"), 6, "encoding", "o16"),
    "bad_yaml": (GOOD + "  - [unclosed\n", 8, "yaml", "flow sequence"),   # PyYAML marks the end of the file
}


@pytest.mark.parametrize("case", list(BAD))
def test_spec_error_names_file_line_field(spec, tmp_path, case):
    text, line, fld, words = BAD[case]
    with pytest.raises(spec.SpecError) as ei:
        _load(spec, tmp_path, text)
    e = ei.value
    path = str(tmp_path / "bad.yaml")
    msg = str(e)
    assert msg.startswith(f"{path}:{line}: {fld}: "), msg
    assert (e.file, e.line, e.field) == (path, line, fld)
    assert words in msg, msg


def test_spec_validator_cli_reports_error(spec, tmp_path, capsys):
    p = tmp_path / "bad.yaml"
    p.write_text(BAD["duplicate_id"][0])
    assert spec.main(["spec", str(p)]) == 1
    assert f"{p}:7: id: duplicate id" in capsys.readouterr().err


def test_real_spec_loads(spec):
    forms = spec.load(str(ROOT / "isa" / "x86_64.yaml"))
    assert len(forms) == len(x86gen.all_forms())
    assert [f.id for f in forms] == [f.id for f in x86gen.all_forms()]


def test_form_called_with_wrong_operand_count():
    """A form called with too few or too many operands names the form and the count, not a TypeError."""
    f = x86gen.get_form("ADD_RM32_R32")
    with pytest.raises(x86gen.OperandError, match=r"ADD_RM32_R32 .*takes 2 operands, got 1"):
        f(x86gen.eax)
    with pytest.raises(x86gen.OperandError, match="takes 2 operands, got 3"):
        f(x86gen.eax, x86gen.ecx, 1)


def test_scale_text_spacing_and_bad_scale():
    """`rbx * 2` with spaces is GNU as's syntax too (bytes from GNU as 2.40: lea rax,[rax+rbx*2] = 48 8d 04 58);
    a scale that is not a number is a syntax error, never a bare ValueError."""
    assert x86gen.assemble("lea rax, [rax + rbx * 2]") == bytes.fromhex("488d0458")
    assert x86gen.assemble("lea rax, [rax+rbx* 2]") == bytes.fromhex("488d0458")
    with pytest.raises(x86gen.AsmSyntaxError, match="scale|cannot parse memory operand"):
        x86gen.assemble("lea rax, [rax+rbx*x]")
