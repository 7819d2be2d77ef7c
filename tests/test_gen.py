"""tools/gen.py: the size budgets of the generated modules (`BUDGETS`, checked by ``--check``)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def gen():
    spec = importlib.util.spec_from_file_location("x86gen_tools_gen", ROOT / "tools" / "gen.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_budget_errors(gen):
    out = {"src/x86gen/_gen/a.py": "x" * 100, "src/x86gen/_gen/a.pyi": "x" * 10_000}
    assert gen.budget_errors(out, 10, {"src/x86gen/_gen/a.py": (0, 10)}) == []   # exactly at the budget; stubs have none
    [msg] = gen.budget_errors(out, 10, {"src/x86gen/_gen/a.py": (50, 4)})
    assert msg.startswith("src/x86gen/_gen/a.py: 100 bytes is over its budget of 90 (50 + 4 per form x 10 forms)")
    [msg] = gen.budget_errors(out, 10, {})
    assert "no size budget" in msg


def test_check_fails_over_budget(gen, monkeypatch, capsys):
    """The committed modules are within their budgets; a tiny budget makes `gen.py --check` fail, naming the module."""
    assert gen.main(["--check"]) == 0
    out = capsys.readouterr().out
    assert "src/x86gen/_gen/groups.py" in out and "B/form" in out and "over budget" not in out
    monkeypatch.setitem(gen.BUDGETS, "src/x86gen/_gen/groups.py", (1_000, 1))
    assert gen.main(["--check"]) == 1
    assert "over budget: src/x86gen/_gen/groups.py:" in capsys.readouterr().out


def test_remove_stale_deletes_only_what_gen_made(gen, tmp_path):
    """A module an earlier run generated and this one does not (e.g. e130.py after the shapes were regrouped) is
    deleted by `gen.py`; a file without the generated header is left (and `--check` names it)."""
    (tmp_path / "e130.py").write_text(gen.GENERATED_HEADER + " from codegen/templates/encoders.py.j2\n")
    (tmp_path / "mine.py").write_text("x = 1\n")
    assert gen.remove_stale(str(tmp_path), ["e130.py", "mine.py"]) == ["e130.py"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.py"]
