"""tools/bench.py keeps working: a tiny run (one round, a few kernels, 500 synthetic instructions)
must verify every path's bytes against iced (exit status 0) and print its summary line. No timing
is asserted: speed is measured by the script, not by tests."""
from __future__ import annotations

import os
import re
import subprocess
import sys

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
