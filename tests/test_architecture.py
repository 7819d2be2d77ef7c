"""The runtime's architecture: one-way layers (every import of src/x86gen read with `ast`, against the order declared
in tools/layers.py), one form schema, encoders generated per shape (nothing compiled per form at run time), and what a
first encode or assemble loads."""
from __future__ import annotations

import builtins
import json
import os
import subprocess
import sys

import iced_x86 as I
import pytest

import x86gen
from x86gen import forms as F
from x86gen._gen import encoders

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, ROOT)

import layers  # noqa: E402  (tools/layers.py)

# ---- layers: imports one way only ---------------------------------------------------------------------------------

def test_imports_follow_the_declared_layers():
    """Every import in src/x86gen (module level, in functions, importlib with a constant name) goes to a module declared
    before the importing one in `layers.LAYERS`; so there is no cycle, no module imports through the package facade,
    every module has a declared place, and no dynamic import hides an edge."""
    found = layers.check()
    assert not found["upward"] and not found["cycles"] and not found["undeclared"] and not found["facade"] \
        and not found["unresolved"], "\n".join(layers.report(found))
    assert found["modules"] >= 30 and found["imports"] >= 150   # (what was read)


def _package(tmp_path, files: dict[str, str]) -> str:
    """A package ``x86gen`` under ``tmp_path/src`` with these modules (name -> source)."""
    src = tmp_path / "src"
    for name, text in files.items():
        path = src / (name.replace(".", "/") + ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(src)


def test_layer_check_finds_cycles_upward_and_hidden_imports(tmp_path):
    """The check fails where it should: a cycle through imports inside functions, an import of a later layer, an
    import through the facade, a module without a place, an `import_module` of a computed name."""
    src = _package(tmp_path, {
        "x86gen.__init__": "from . import errors\n",
        "x86gen.errors": "def f():\n    from .registers import x\n",          # up (and a cycle with registers)
        "x86gen.registers": "from .errors import f\nx = 1\n",
        "x86gen.memory": "from . import encode\nimport importlib\nm = importlib.import_module('.' + 'x', __package__)\n",
        "x86gen.stray": "\n",
    })
    found = layers.check(src)
    assert found["cycles"] == [["x86gen.errors", "x86gen.registers"]]
    assert [(e.module, e.target, e.where) for e in found["upward"]] == [("x86gen.errors", "x86gen.registers", "function")]
    assert [e.module for e in found["facade"]] == ["x86gen.memory"]
    assert found["undeclared"] == ["x86gen.stray"] and found["unresolved"] == ["x86gen.memory:3"]


OLD = "6a2fef0"   # main before the layers (issue 23): 4 import cycles, upward imports


def test_layer_check_fails_on_the_runtime_before_the_layers(tmp_path):
    """On 6a2fef0 the check reports its 4 import cycles (where the clone has that commit)."""
    r = subprocess.run(["git", "-C", ROOT, "archive", OLD, "src/x86gen"], capture_output=True)
    if r.returncode: pytest.skip(f"commit {OLD} is not in this clone ({r.stderr.decode().strip()[:200]})")
    import io
    import tarfile
    tarfile.open(fileobj=io.BytesIO(r.stdout)).extractall(tmp_path)
    found = layers.check(str(tmp_path / "src"))
    assert len(found["cycles"]) == 4 and found["undeclared"], "\n".join(layers.report(found))
    assert any(c[:2] == ["x86gen._choose", "x86gen._encode_errors"] for c in found["cycles"])


# ---- the form table and its schema --------------------------------------------------------------------------------

def test_schema_is_one_list():
    """codegen/schema.py names the row fields; the runtime's FormRow, spec.Form (its fields, or a property it
    computes, such as ``length``) and every table row agree."""
    from codegen import schema, spec
    from x86gen import table
    from x86gen.table import FormRow, OperandRow
    assert FormRow._fields == schema.FORM_FIELD_NAMES and OperandRow._fields == schema.OPERAND_FIELD_NAMES
    spec_fields = set(spec.Form.__dataclass_fields__) | {n for n, v in vars(spec.Form).items() if isinstance(v, property)}
    assert set(schema.FORM_FIELD_NAMES) <= spec_fields, set(schema.FORM_FIELD_NAMES) - spec_fields
    assert set(schema.OPERAND_FIELD_NAMES) <= set(spec.Operand.__dataclass_fields__)
    gen = table._table()
    assert all(len(o) == len(OperandRow._fields) for o in gen.OPERANDS)
    for text in list(table.table().values())[:50]:   # (the mnemonic is the key, the operands are indices into OPERANDS)
        for row in json.loads(text):
            assert len(row) == len(FormRow._fields) - 1 and all(0 <= i < len(gen.OPERANDS) for i in row[1])
    f = F.get_form("ADD_RM32_IMM8")
    assert (f.opcode, f.opcode_map, f.mandatory_prefix, f.opsize16, f.w, f.modrm, f.imm_widths, f.operand_size, f.length) == \
        (0x83, 0, 0, False, 0, "0", (8,), 32, 3)   # length: 83 /0 ib (SDM Vol.2 ADD)


def test_table_reader_is_json_loads():
    """The table's rows read by the JSON scanner `x86gen.table` uses (json's C scanner, without the json package) are
    what json.loads reads, for every mnemonic; bad text is a ValueError as with json.loads."""
    from x86gen import table
    loads = table._json_array_reader()
    for mn, text in table.table().items():
        assert loads(text) == json.loads(text), mn
    for bad in ("[1, 2] 3", "[1, ", "[nan]"):
        with pytest.raises(ValueError): loads(bad)


def test_mnemonic_of_every_id(monkeypatch):
    """`table.mnemonic_of` finds each form's mnemonic from its id's first word (VEX_VADDPS_… → vaddps, RETNQ → ret)
    without the id map where it can, and is right for every id either way (the map is the table's own rows)."""
    from x86gen import table
    truth = {fid: mn for mn, text in table.table().items() for fid in table.row_ids(text)}
    assert len(truth) == len(F.all_forms())
    guessed = 0
    for fid, mn in truth.items():   # each id in a fresh state: no rows decoded, no map
        monkeypatch.setattr(table, "_ROWS", {})
        monkeypatch.setattr(table, "_BY_ID", {})
        monkeypatch.setattr(table, "_MNEMONIC_OF", None)
        assert table.mnemonic_of(fid) == mn, fid
        guessed += table._MNEMONIC_OF is None
    assert table.mnemonic_of("NO_SUCH_FORM") is None
    assert guessed >= 0.95 * len(truth), (guessed, len(truth))


# ---- encoders: generated per shape, bound per form ------------------------------------------------------------------

def _iced(code, *ops) -> bytes:
    e = I.Encoder(64)
    make = {0: I.Instruction.create, 2: I.Instruction.create_reg_reg, 3: I.Instruction.create_reg_reg_reg}[len(ops)]
    e.encode(make(code, *ops), 0)
    return bytes(e.take_buffer())


def test_form_encoders_compile_nothing(monkeypatch):
    """A form's encoder is its shape's generated function bound to its constants: building one calls neither
    compile nor exec (once the shape's generated module is imported, which an import does)."""
    ids = ["SUB_RM64_R64", "VEX_VPXOR_YMM_YMM_YMMM256", "LFENCE"]
    rows = [F.get_form(i).row for i in ids]
    for r in rows: encoders.shape(r.shape)   # import the modules of their shapes
    monkeypatch.setattr(F, "_ENCODERS", {})
    fresh = [F.Form(r) for r in rows]   # not built yet
    calls = []
    real_compile, real_exec = builtins.compile, builtins.exec
    monkeypatch.setattr(builtins, "compile", lambda *a, **k: calls.append("compile") or real_compile(*a, **k))
    monkeypatch.setattr(builtins, "exec", lambda *a, **k: calls.append("exec") or real_exec(*a, **k))
    R = I.Register
    sub, vpxor, lfence = fresh
    assert sub(x86gen.r9, x86gen.rax) == _iced(I.Code.SUB_RM64_R64, R.R9, R.RAX)
    assert vpxor(x86gen.ymm1, x86gen.ymm2, x86gen.ymm12) == _iced(I.Code.VEX_VPXOR_YMM_YMM_YMMM256, R.YMM1, R.YMM2, R.YMM12)
    assert lfence() == _iced(I.Code.LFENCE)
    assert calls == []


def test_shapes_shared_and_bound_per_form():
    """Forms of one shape share one function; each binds its own constants (opcode, form id)."""
    add, sub = F.get_form("ADD_RM32_R32"), F.get_form("SUB_RM32_R32")
    assert add.row.shape == sub.row.shape and add.row.shape_args != sub.row.shape_args
    assert add.encoder is not sub.encoder and add.encoder.__code__ is sub.encoder.__code__
    src = sub.source
    assert src.startswith("def shape_") and "SUB_RM32_R32" in src
    n_shapes = len({f.row.shape for f in F.all_forms()})
    assert n_shapes < len(F.all_forms()) / 4   # 545 shapes for 4,734 forms today
    n_modules = len([n for n in os.listdir(os.path.dirname(encoders.__file__)) if n.startswith("e")])
    assert encoders.CHUNK * n_modules >= n_shapes > encoders.CHUNK * (n_modules - 1)
    with pytest.raises(x86gen.OperandError, match=r"SUB_RM32_R32 \(sub r/m32, r32\): operand 2 is"):
        sub(x86gen.eax, x86gen.rcx)


def test_errors_from_facts():
    """`x86gen.diagnostics` builds an encoder's error from the form's id and the operands alone (no selection runs)."""
    from x86gen import diagnostics
    assert "ADD_RM32_IMM8 (add r/m32, simm8): operand 1 is immediate 0x5, expected r/m32" in str(
        diagnostics.operand_error("ADD_RM32_IMM8", (5, 1), 0))
    assert "accepted: -0x80..0x7f, 0xffffff80..0xffffffff" in str(
        diagnostics.immediate_range_error("ADD_RM32_IMM8", (x86gen.eax, 300), 1, 300))


# ---- what a first use loads ----------------------------------------------------------------------------------------

def _fresh(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "src")})
    assert out.returncode == 0, out.stderr
    return out.stdout.split("\n")


# The code writer (plans are compiled only for signatures used often: x86gen.selection.plans.COMPILE_AFTER), the text and
# Assembler layers, the backend helpers: what a first plain encode does not load.
NOT_FOR_A_FIRST_ENCODE = ("x86gen.encoding.writer", "x86gen.encoding.operands", "x86gen.encoding.legacy", "x86gen.encoding.vex",
                          "x86gen.encoding.evex", "x86gen.syntax", "x86gen.assembler", "x86gen.program_text", "x86gen.text",
                          "x86gen.instruction", "x86gen.isel", "x86gen.groups", "x86gen.reference", "x86gen._gen.asm_methods",
                          "x86gen._gen.ops", "x86gen._gen.isel", "x86gen._gen.groups", "x86gen.jit")


@pytest.mark.parametrize("first, expected", [   # bytes: llvm-mc 14 (jne: iced-x86, JNE_REL8_64 to 0x40 at 0x10)
    ("x86gen.encode('add', x86gen.rax, 1)", "4883c001"),
    ("x86gen.encode('add', x86gen.eax, x86gen.ecx)", "01c8"),
    ("x86gen.encode('mov', x86gen.rax, x86gen.qword(x86gen.rbx, disp=8))", "488b4308"),
    ("x86gen.encode('vaddps', x86gen.ymm0, x86gen.ymm1, x86gen.ymm2)", "c5f458c2"),
    ("x86gen.encode('jne', 0x40, ip=0x10)", "752e"),
])
def test_first_encode_loads_only_the_encoder(first, expected):
    """``import x86gen`` and a first `x86gen.encode` in a fresh interpreter load none of `NOT_FOR_A_FIRST_ENCODE`, and
    compile no plan (a signature's first uses call the forms' generated encoders)."""
    got, loaded, plans = _fresh(f"import sys, x86gen; print({first}.hex()); "
                                f"print(sorted(m for m in sys.modules if m in {NOT_FOR_A_FIRST_ENCODE!r})); "
                                "from x86gen.selection import plans; print(len(plans._COMPILED))")[:3]
    assert (got, loaded, plans) == (expected, "[]", "0")


def test_first_assemble_of_a_line_loads_no_code_writer():
    """A first `x86gen.assemble` of a plain line loads neither the code writer nor the Assembler (bytes: llvm-mc 14)."""
    lazy = ("x86gen.encoding.writer", "x86gen.assembler", "x86gen._gen.asm_methods")
    out = _fresh(f"import sys, x86gen; print(x86gen.assemble('add rax, 1').hex()); print(sorted(m for m in sys.modules if m in {lazy!r}))")
    assert out[:2] == ["4883c001", "[]"]
