"""tools/bench.py keeps working: a tiny run (one round, a few kernels, 500 synthetic instructions)
must verify every path's bytes against iced (exit status 0) and print its summary line; --startup
(start-up as installed, tools/startup.py) must install and check x86gen in a fresh venv. No timing
is asserted: speed is measured by the script, not by tests."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = "tinygrad-ops-kernels.jsonl.gz"


def test_bench_tiny_run_verifies_every_path():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "bench.py"), "--quick", "--rounds", "1",
                        "--every", "400", "--synthetic", "500"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "FAILED" not in r.stdout
    for row in ("x86gen Assembler (labels)", "x86gen form.encode (rel32)", "x86gen.encode", "x86gen.assemble (text, labels)",
                "floor: Assembler loop, empty methods", "iced create_* + BlockEncoder"):
        assert row in r.stdout, row
    assert "decorated AVX-512: 9 of 9 forms" in r.stdout, "a decorated form x86gen no longer encodes like iced"
    assert "decorated AVX-512 vs the same instruction undecorated" in r.stdout
    last = r.stdout.strip().splitlines()[-1]
    # one ratio per workload: the corpus's (when the corpus is there; the bench says so when not) and the synthetic's;
    # then the worst decorated/plain ratio (--quick measures no start-up as installed: no startup keys)
    assert re.fullmatch(r"x86gen/iced=([\d.]+,)?[\d.]+ text/gnu-as=([\d.]+|nan) import_ms=[\d.]+ iced_import_ms=[\d.]+"
                        r" decorated_ratio=[\d.]+", last), last
    # the corpus: in the repository (tests/data/), else ../shared/corpus/ beside it (tools/_bench_workload.corpus_paths)
    corpus = [os.path.join(ROOT, "tests", "data", CORPUS), os.path.join(os.path.dirname(ROOT), "shared", "corpus", CORPUS)]
    assert ("," in last.split()[0]) == any(os.path.exists(p) for p in corpus), last


def test_bench_startup_as_installed():
    """--startup: a wheel of the checkout in a fresh venv, x86gen imported from there (not from a checkout), its bytes
    for the programs timed checked against GNU as's, every figure on the last line. Skipped when no wheel can be built
    here (pip needs the build backend: the interpreter's setuptools, or the package index)."""
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "bench.py"), "--startup", "--startup-runs", "1",
                        "--synthetic", "500"], capture_output=True, text=True, timeout=600)
    if "pip wheel failed" in r.stdout:
        pytest.skip("no wheel could be built here: " + next(ln for ln in r.stdout.splitlines() if "pip wheel failed" in ln))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "FAILED" not in r.stdout
    assert re.search(r"x86gen from \S*/venv/lib/python[\d.]+/site-packages/x86gen/__init__\.py", r.stdout), r.stdout
    last = r.stdout.strip().splitlines()[-1]
    num = r"(-?[\d.]+|nan)"
    assert re.fullmatch(rf"startup_import_ms={num} first_encode_ms={num} first_assemble_ms={num} asm_cli_over_python_ms={num} "
                        rf"fresh_text_over_gas={num} warm_text_over_gas={num} cleared_text_over_gas={num} python_ms={num} "
                        rf"iced_import_ms_installed={num}", last), last
    assert "nan" not in last.split()[0], last
