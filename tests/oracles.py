"""Which byte oracle checks each form: the spec's `oracle:` (isa/README.md "Oracles").

iced-x86 1.21 checks the forms it knows (tests/test_fuzz_iced.py, tests/test_roles_iced.py and the tests built on
tests/iced_oracle.py); llvm-mc-22 checks the forms iced does not know (tests/test_fuzz_llvm.py). The tests that ask
iced about a form take `forms_checked_by("iced")`, so a form iced lacks never reaches iced's tables.
"""
from __future__ import annotations

import functools
import sys
from pathlib import Path

import x86gen

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))

from codegen import spec  # noqa: E402


@functools.cache
def spec_forms() -> tuple:
    """The spec's forms as `codegen.spec` loads them (with `oracle` and `source`)."""
    return tuple(spec.load(str(ROOT / "isa" / "x86_64.yaml")))


@functools.cache
def oracle_of() -> dict[str, str]:
    """form id → the oracle that checks it ("iced" or "llvm-mc-22")."""
    return {f.id: f.oracle for f in spec_forms()}


def forms_checked_by(oracle: str) -> list:
    """The forms of `x86gen.all_forms()` whose oracle is ``oracle``, in table order."""
    of = oracle_of()
    return [f for f in x86gen.all_forms() if of[f.id] == oracle]
