"""The generated type stubs (src/x86gen/_gen/*.pyi) against the runtime modules they describe, and their packaging.

The Assembler methods (_gen/asm_methods.py) and `Op` (_gen/ops.py) keep only code and plain ints at run time;
their signatures, per-method form lists and the member declarations live in stubs that type checkers and IDEs
read instead of the module (PEP 561: a .pyi beside a .py takes precedence), so they must match the runtime.
"""
from __future__ import annotations

import ast
import fnmatch
import inspect
import os
from pathlib import Path

import pytest

import x86gen
from x86gen import forms as F
from x86gen._gen import asm_methods, ops

ROOT = Path(__file__).resolve().parent.parent
GEN = ROOT / "src" / "x86gen" / "_gen"


def _stub_class(name: str, cls: str) -> ast.ClassDef:
    tree = ast.parse((GEN / name).read_text(encoding="utf-8"))
    return next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)


def _params(args: ast.arguments) -> list[tuple[str, str]]:
    out = [(a.arg, "POSITIONAL_OR_KEYWORD") for a in args.args]
    if args.vararg: out.append((args.vararg.arg, "VAR_POSITIONAL"))
    out += [(a.arg, "KEYWORD_ONLY") for a in args.kwonlyargs]
    return out


def test_asm_methods_stub_matches_the_runtime_methods():
    stub = {n.name: n for n in _stub_class("asm_methods.pyi", "AsmMethods").body if isinstance(n, ast.FunctionDef)}
    runtime = {k: v for k, v in asm_methods.all_methods().items() if inspect.isfunction(v)}   # (each made on first use)
    assert set(stub) == set(runtime) and len(runtime) == len(asm_methods.MNEMONICS)
    by_mnemonic: dict[str, list[str]] = {}
    for f in F.all_forms(): by_mnemonic.setdefault(f.mnemonic, []).append(f.id)
    for name, fn in runtime.items():
        sig = [(p.name, p.kind.name) for p in inspect.signature(fn).parameters.values()]
        assert _params(stub[name].args) == sig, name
        assert fn.__doc__ is None, name   # the forms are listed in the stub only
        doc = ast.get_docstring(stub[name])
        mnemonic = name.rstrip("_")
        assert doc.startswith(f"{mnemonic}: {len(by_mnemonic[mnemonic])} form"), name
        assert [ln.split()[-2] for ln in doc.splitlines()[2:]] == by_mnemonic[mnemonic], name


@pytest.mark.parametrize("method, expected", [
    # every method but a branch's takes rc= (AVX-512 rounding), as x86gen.encode does:
    # where no form takes it, the error says so
    ("add", "(self, a: _Reg | _Mem, b: _Reg | _Mem | _Imm, *, rc: int | None=None) -> None"),
    ("adcx", "(self, a: _Reg, b: _Reg | _Mem, *, rc: int | None=None) -> None"),
    ("lea", "(self, a: _Reg, b: _Mem, *, rc: int | None=None) -> None"),
    # the int n instruction: its method shadows the builtin (hence the aliases)
    ("int", "(self, a: _Imm, *, rc: int | None=None) -> None"),
    ("jne", "(self, *ops: _Target, rel32: bool=False) -> None"),
    ("jmp", "(self, *ops: _Target | _Reg | _Mem, rel32: bool=False) -> None"),
    ("imul", "(self, *ops: _Operand, rc: int | None=None) -> None"),
])
def test_asm_methods_stub_types(method, expected):
    fn = next(n for n in _stub_class("asm_methods.pyi", "AsmMethods").body if isinstance(n, ast.FunctionDef) and n.name == method)
    assert f"({ast.unparse(fn.args)}) -> {ast.unparse(fn.returns)}" == expected


def test_asm_methods_stub_declares_the_module_names():
    tree = ast.parse((GEN / "asm_methods.pyi").read_text(encoding="utf-8"))
    declared = {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)} | \
        {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    imported = ("LabelOperand", "Replan", "MNEMONIC_ALIASES", "ROUNDING_RECORDS")
    public = {k for k in vars(asm_methods) if not k.startswith("_") and k not in imported}
    assert public == declared - {k for k in declared if k.startswith("_")}


def test_op_is_plain_ints_and_its_stub_declares_every_member():
    assert x86gen.Op is ops.Op and type(ops.Op.ADD_R32_RM32) is int
    ids = [f.id for f in F.all_forms()]
    assert list(ops.Op.NAMES) == ids and [getattr(ops.Op, i) for i in ids] == list(range(len(ids)))
    assert x86gen.get_form(ops.Op.NAMES[ops.Op.VEX_VADDPS_YMM_YMM_YMMM256]).id == "VEX_VADDPS_YMM_YMM_YMMM256"
    body = _stub_class("ops.pyi", "Op").body
    members = [(n.target.id, n.value.value) for n in body if isinstance(n, ast.AnnAssign) and n.value is not None]
    assert members == [(i, k) for k, i in enumerate(ids)]
    docs = [n.value.value for n in body if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)][1:]   # after the class's own
    assert len(docs) == len(ids) and docs[ids.index("ADD_R32_RM32")].startswith("``add RW:r32, R:r32/m32`` ``03 /r``")


def test_stubs_and_py_typed_are_package_data():
    tomllib = pytest.importorskip("tomllib")   # Python 3.11+
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = conf["tool"]["setuptools"]["package-data"]["x86gen"]
    pkg = ROOT / "src" / "x86gen"
    typed = sorted(p.relative_to(pkg).as_posix() for p in pkg.rglob("*") if p.suffix == ".pyi" or p.name == "py.typed")
    assert "py.typed" in typed and "_gen/asm_methods.pyi" in typed and "_gen/ops.pyi" in typed
    for rel in typed:
        assert any(fnmatch.fnmatch(rel, pat) and os.path.dirname(rel) == os.path.dirname(pat) for pat in patterns), rel
