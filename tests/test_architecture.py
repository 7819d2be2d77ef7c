"""The encoder's architecture (issue 10, part 1): one form schema, encoders generated per shape (no compile
at run time), and an encoder core without import cycles."""
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
sys.path.insert(0, ROOT)


def test_schema_is_one_list():
    """codegen/schema.py names the row fields; the runtime's FormRow, spec.Form (its fields, or a property it
    computes, such as ``length``) and every table row agree."""
    from codegen import schema, spec
    from x86gen import _table
    from x86gen._table import FormRow, OperandRow
    assert FormRow._fields == schema.FORM_FIELD_NAMES and OperandRow._fields == schema.OPERAND_FIELD_NAMES
    spec_fields = set(spec.Form.__dataclass_fields__) | {n for n, v in vars(spec.Form).items() if isinstance(v, property)}
    assert set(schema.FORM_FIELD_NAMES) <= spec_fields, set(schema.FORM_FIELD_NAMES) - spec_fields
    assert set(schema.OPERAND_FIELD_NAMES) <= set(spec.Operand.__dataclass_fields__)
    for text in list(_table.table().values())[:50]:
        for line in text.split("\t"):
            row = json.loads(line)
            assert len(row) == len(FormRow._fields) and all(len(o) == len(OperandRow._fields) for o in row[2])
    f = F.get_form("ADD_RM32_IMM8")
    assert (f.opcode, f.opcode_map, f.mandatory_prefix, f.opsize16, f.w, f.modrm, f.imm_widths, f.operand_size, f.length) == \
        (0x83, 0, 0, False, 0, "0", (8,), 32, 3)   # length: 83 /0 ib (SDM Vol.2 ADD)


def _iced(code, *ops) -> bytes:
    e = I.Encoder(64)
    make = {0: I.Instruction.create, 2: I.Instruction.create_reg_reg, 3: I.Instruction.create_reg_reg_reg}[len(ops)]
    e.encode(make(code, *ops), 0)
    return bytes(e.take_buffer())


def test_form_encoders_compile_nothing(monkeypatch):
    """A form's encoder is its shape's generated function bound to its constants: building one calls neither
    compile nor exec (once the shape's generated module is imported, which an import does)."""
    ids = ["SUB_RM64_R64", "VEX_VPXOR_YMM_YMM_YMMM256", "LFENCE"]
    fresh = [F.Form(F.get_form(i).row) for i in ids]   # not built yet
    for f in fresh: encoders.shape(f.row.shape)   # import the modules of their shapes
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
    assert add.encode is not sub.encode and add.encode.__code__ is sub.encode.__code__
    src = sub.source
    assert src.startswith("def shape_") and "SUB_RM32_R32" in src
    n_shapes = len({f.row.shape for f in F.all_forms()})
    assert n_shapes < len(F.all_forms()) / 4   # 277 for 1,868 forms today
    n_modules = len([n for n in os.listdir(os.path.dirname(encoders.__file__)) if n.startswith("e")])
    assert encoders.SOLO + encoders.CHUNK * (n_modules - encoders.SOLO) >= n_shapes
    with pytest.raises(x86gen.OperandError, match=r"SUB_RM32_R32 \(sub r/m32, r32\): operand 2 is"):
        sub(x86gen.eax, x86gen.rcx)


CORE = ["x86gen._table", "x86gen._table_text", "x86gen._first_use", "x86gen._runtime", "x86gen._runtime_errors",
        "x86gen._gen.schema", "x86gen.registers", "x86gen.memory", "x86gen.errors"]


@pytest.mark.parametrize("leaf", CORE)
def test_encoder_core_is_a_leaf(leaf):
    """The encoder core imports none of forms/encoder/_specialize (errors describe a form from its table row)."""
    code = (f"import sys, importlib; importlib.import_module({leaf!r}); "
            "print(sorted(m for m in sys.modules if m in ('x86gen.forms', 'x86gen.encoder', 'x86gen._specialize')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "src")})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_error_from_runtime_without_forms_module():
    """`x86gen._runtime` formats an encoder's operand error from the table row alone."""
    from x86gen._runtime import _operand_error, _range_error
    assert "ADD_RM32_IMM8 (add r/m32, simm8): operand 1 is immediate 0x5, expected r/m32" in str(
        _operand_error("ADD_RM32_IMM8", (5, 1), 0))
    assert "accepted: -0x80..0x7f, 0xffffff80..0xffffffff" in str(_range_error("ADD_RM32_IMM8", (x86gen.eax, 300), 1, 300))


def test_mnemonic_of_every_id(monkeypatch):
    """`_table.mnemonic_of` finds each form's mnemonic from its id's first word (VEX_VADDPS_… → vaddps, RETNQ → ret)
    without the id map where it can, and is right for every id either way (the map is the table's own rows)."""
    from x86gen import _table
    truth = {fid: mn for mn, text in _table.table().items() for fid in _table.row_ids(text)}
    guessed = 0
    for fid, mn in truth.items():   # each id in a fresh state: no rows decoded, no map
        monkeypatch.setattr(_table, "_ROWS", {})
        monkeypatch.setattr(_table, "_BY_ID", {})
        monkeypatch.setattr(_table, "_MNEMONIC_OF", None)
        assert _table.mnemonic_of(fid) == mn, fid
        guessed += _table._MNEMONIC_OF is None
    assert _table.mnemonic_of("NO_SUCH_FORM") is None
    assert guessed >= 0.95 * len(truth), (guessed, len(truth))


# What a process's first encode must not import (nor compile, without a bytecode cache): `Form` objects, the table's
# rows as named tuples and the selection code (a signature's first use is x86gen._first_use's), the EVEX decoration
# path, the plan compiler, the text and prefix layers, the Assembler and the backend helpers are loaded on their first
# use, and so are the rare parts of the core modules (x86gen._memory_rare, _table_rare, _form_rare, _operand_rewrites,
# _vex_rm_swap, _register_names).
COLD_START_LAZY = ("x86gen.forms", "x86gen._choose", "x86gen._table", "x86gen._evex", "x86gen._evex_text",
                   "x86gen._aliases", "x86gen._strings", "x86gen._prefixed", "x86gen._specialize", "x86gen.text",
                   "x86gen.assembler", "x86gen.prefixes", "x86gen.isel", "x86gen.groups",
                   "x86gen.instruction", "x86gen.jit", "x86gen.reference", "x86gen._gen.asm_methods", "x86gen._gen.ops",
                   "x86gen._gen.prefixes", "x86gen._plan_compiler", "x86gen._select",
                   "x86gen._encode_errors", "x86gen._narrow",
                   "x86gen._runtime_errors", "x86gen.evex", "x86gen._memory_rare", "x86gen._table_rare", "x86gen._form_rare",
                   "x86gen._operand_rewrites", "x86gen._vex_rm_swap", "x86gen._register_names")


@pytest.mark.parametrize("first, expected", [   # bytes: llvm-mc 14 (jne: iced-x86, JNE_REL8_64 to 0x40 at 0x10)
    ("x86gen.encode('add', x86gen.rax, 1)", "4883c001"),
    ("x86gen.encode('add', x86gen.eax, x86gen.ecx)", "01c8"),
    ("x86gen.encode('mov', x86gen.rax, x86gen.qword(x86gen.rbx, disp=8))", "488b4308"),
    ("x86gen.encode('vaddps', x86gen.ymm0, x86gen.ymm1, x86gen.ymm2)", "c5f458c2"),
    ("x86gen.encode('jne', 0x40, ip=0x10)", "752e"),
])
def test_cold_start_imports_only_the_core(first, expected):
    """``import x86gen`` and a first `x86gen.encode` in a fresh interpreter import none of `COLD_START_LAZY`: its
    cost without a bytecode cache is compiling what it imports (the issue's cold start: import <= 17 ms, first
    encode <= 10 ms). A signature's first encode compiles no plan (the forms' own encoders); the second does."""
    code = (f"import sys, x86gen; print({first}.hex()); "
            f"print(sorted(m for m in sys.modules if m in {COLD_START_LAZY!r})); "
            f"print({first}.hex(), len(x86gen.encoder._PLANS))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "src"), "PYTHONDONTWRITEBYTECODE": "1"})
    assert out.returncode == 0, out.stderr
    got, loaded, again = out.stdout.split("\n")[:3]
    assert loaded == "[]", f"{first} imports {loaded}"
    assert got == expected and again == f"{expected} 1"


# Without a bytecode cache, compiling the sources is most of what `import x86gen` and a first encode cost (issue 10:
# 5 and 7 ms with bytecode, 23 and 28 ms without), and compile time follows the amount of code: about 1 us per syntax
# node (`ast` node) here, while comments and docstrings cost next to nothing. So the cold start is guarded by the
# nodes of the x86gen modules those two steps import, not by a clock: before the rare parts moved out of the core
# modules (evex, _memory_rare, _table_rare, _form_rare, _operand_rewrites, _vex_rm_swap, _register_names) they were
# 7,190 and 9,526; before a signature's first use was chosen from the table's text (x86gen._first_use, with no
# `Form` and none of x86gen._choose) the first encode was about 6,200 (5,783 tokens, 57.2M valgrind instructions),
# after it 3,463 (3,126 tokens, 31.3M).
COLD_IMPORT_NODES = 5_200    # `import x86gen`
COLD_ENCODE_NODES = 3_900    # then `x86gen.encode("add", x86gen.eax, x86gen.ecx)`


def test_cold_start_compiles_within_a_node_budget():
    """The x86gen modules that ``import x86gen`` and then a first `x86gen.encode` import (and so compile, without a
    bytecode cache) have at most `COLD_IMPORT_NODES` and `COLD_ENCODE_NODES` syntax nodes: moving code back into a core
    module, or importing a lazy one eagerly, fails here."""
    code = ("import ast, json, sys\n"
            "def nodes(names):\n"
            "    return {m: sum(1 for _ in ast.walk(ast.parse(open(sys.modules[m].__file__, encoding='utf-8').read())))"
            " for m in names}\n"
            "import x86gen\n"
            "first = {m for m in sys.modules if m.split('.')[0] == 'x86gen'}\n"
            "x86gen.encode('add', x86gen.eax, x86gen.ecx)\n"
            "then = {m for m in sys.modules if m.split('.')[0] == 'x86gen'} - first\n"
            "print(json.dumps([nodes(first), nodes(then)]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "src"), "PYTHONDONTWRITEBYTECODE": "1"})
    assert out.returncode == 0, out.stderr
    imported, encoded = json.loads(out.stdout)
    assert "x86gen.memory" in imported and "x86gen.encoder" in encoded   # (what is measured)
    assert sum(imported.values()) <= COLD_IMPORT_NODES, imported
    assert sum(encoded.values()) <= COLD_ENCODE_NODES, encoded


def test_rows_text_reads_one_line(monkeypatch):
    """`_table_text.rows_text` finds a mnemonic's line in the table file's bytes without decoding the whole table, and
    gives what the whole table holds for every mnemonic; names it lacks are None, and after `MISS_MAX` of them the
    whole table is decoded (a miss reads the whole file)."""
    from x86gen import _table_rare, _table_text
    truth = _table_rare.table()
    for k, v in {"_ROWS_TEXT": None, "_FOUND": {}, "_MISSES": 0, "_READ": (b"", False)}.items(): monkeypatch.setattr(_table_text, k, v)
    assert _table_text.rows_text("add") == truth["add"] and _table_text._ROWS_TEXT is None
    assert len(_table_text._READ[0]) == _table_text.READ_FIRST and not _table_text._READ[1]   # the file's first bytes only
    monkeypatch.setattr(_table_text, "READ_FIRST", 1000)   # lines across the reads' boundaries
    monkeypatch.setattr(_table_text, "_READ", (b"", False))
    for mn in truth: assert _table_text.rows_text(mn) == truth[mn], mn
    assert _table_text._ROWS_TEXT is None and _table_text.has_mnemonic("vaddps") and _table_text._READ[1]
    for bad in ("", "ad", "add\t", "\nadd", "addé", "\udcff", "#", "GENERATED"):
        assert _table_text.rows_text(bad) is None and not _table_text.has_mnemonic(bad), repr(bad)
    assert _table_text._ROWS_TEXT is not None and _table_text._MISSES == _table_text.MISS_MAX


def test_table_json_reader_is_json_loads():
    """The table's rows read by `_table_text.json_array_reader` (json's C scanner, without the json package) are
    what json.loads reads, for every mnemonic; bad text is a ValueError as with json.loads."""
    from x86gen import _table_rare, _table_text
    loads = _table_text.json_array_reader()
    for mn, text in _table_rare.table().items():
        text = "[" + text.replace("\t", ",") + "]"
        assert loads(text) == json.loads(text), mn
    for bad in ("[1, 2] 3", "[1, ", "[nan]"):
        with pytest.raises(ValueError): loads(bad)


def test_cold_start_of_text_without_decorations():
    """A first `x86gen.assemble` of a line without AVX-512 decorations imports neither the EVEX text nor the EVEX
    encoding modules, nor the Assembler (bytes: llvm-mc 14)."""
    lazy = ("x86gen._evex", "x86gen._evex_text", "x86gen._specialize", "x86gen.assembler", "x86gen._plan_compiler")
    code = ("import sys, x86gen; print(x86gen.assemble('add rax, 1').hex()); "
            f"print(sorted(m for m in sys.modules if m in {lazy!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "src"), "PYTHONDONTWRITEBYTECODE": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["4883c001", "[]"]
