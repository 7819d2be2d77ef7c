#!/usr/bin/env python3
"""Benchmark: x86gen against iced-x86 and GNU as, on real and synthetic backend code.

    python tools/bench.py            full run (whole corpus, 5 rounds, then start-up as installed; 3-5 minutes)
    python tools/bench.py --quick    a corpus sample, no start-up as installed (< 1 minute; for CI: no thresholds)
    python tools/bench.py --startup  only start-up as installed (about a minute)
    python tools/bench.py --profile  afterwards, cProfile of x86gen's paths on the synthetic stream

Workloads (built once, never timed):
  corpus     tinygrad-ops-kernels.jsonl.gz, from tests/data/ (else ../shared/corpus/ beside the
             repository): tinygrad's x86 kernels, decoded with iced; each kernel is one program at address 0.
  synthetic  a seeded stream of ~10,000 instructions: GP mov/ALU/lea/imul/shifts on r8-r15 with
             [base+index*scale+disp] (rsp/rbp/r12/r13 bases among others), AVX2/FMA ymm with
             register and memory sources, loops closed by cmp + jcc and forward jmps,
             and 7 AVX-512 zmm forms (each where x86gen encodes it like iced). Then ~5% more lines
             are inserted (their own seeded generator: the rest is unchanged; --no-decorated leaves
             them out): decorated AVX-512, a merge mask `zmm1 {k1}`, zeroing `{k1}{z}`, embedded
             broadcast `dword ptr [rax]{1to16}` or static rounding `{rn-sae}`, on 9 EVEX forms (each
             where x86gen encodes 40 random decorated instances like iced). Every path gets them: iced
             sets op_mask/zeroing_masking/is_broadcast/rounding_control after create_*, x86gen takes
             `zmm1.k(k1).z`, `dword(rax).bcst`, `rc=RN_SAE` (form.encode's row calls the form itself,
             `form(*ops, rc=...)`, for these), the text is GNU as's.

Paths, each run on the same programs (ns per instruction, median of interleaved rounds):
  x86gen Assembler      `x86gen.Assembler` methods on pre-built operands, labels, `assemble()`
                        (relaxes branches, like BlockEncoder); skipped if not importable.
  x86gen form.encode    `get_form(id).encoder(*ops)` (the generated encoder) on pre-built operands into a bytearray; branches
                        are the rel32 forms with targets precomputed (no labels, no relaxation).
  x86gen.encode         `encode(mnemonic, *ops)` (form selection); branch targets laid out for the
                        forms it picks (precomputed).
  x86gen.assemble       `assemble(text)` per program, the text GNU as gets (labels), with x86gen's
                        parse caches emptied before each program (as if it were new: this row
                        gives text/gnu-as; a line repeated within the program is parsed once).
  iced BlockEncoder     `Instruction.create_*` from prepared (function, args) + `BlockEncoder(64)`
                        `add_many`/`encode(0)`; labels by instruction ip, rel32 Codes (it may
                        shorten them: fix_branches=True, iced's default).
  iced BlockEncoder(no fix)  the same with fix_branches=False (keeps the rel32 forms).
  iced Encoder          `create_*` + `Encoder(64).encode(instr, ip)`, one `take_buffer()` per program,
                        absolute rel32 targets.
  floor: …              the Assembler and form.encode loops with methods/encoders that return at
                        once: the cost of one Python call per instruction, before any encoding (no
                        bytes, not checked; the least any per-instruction Python API can cost).
  GNU as                `as --64 -o /dev/null file.s` (.intel_syntax noprefix, labels), minus the time
                        for an empty file, per line.

Timing: every round runs each path on each chunk of ~20,000 instructions (5,000 with --quick) in
turn, in a rotating order, so that load from other processes on this small shared machine falls
on all paths alike; a path's time for a round is its sum over the chunks; the table shows the
median over rounds (the small synthetic workload is sampled several times per round). The header
shows the load average; with other work running, absolute numbers rise but the ratios hold better.
The figures are steady state: x86gen's plans, which it compiles after a number of uses of an operand signature
(x86gen.selection.plans.COMPILE_AFTER), are compiled in the untimed check run (the bench sets that number to 1);
first-use costs are the start-up section's (tools/startup.py).

Before any time is reported every path is checked: form.encode, iced Encoder and BlockEncoder(no fix)
must give iced Encoder's bytes exactly; the others (which may choose other forms or branch sizes)
must decode with iced to the same instructions (mnemonic, operands, branch targets by instruction).
A path that fails is reported as FAILED and the exit status is 1.

Decorated vs plain (issue 23: decorated <= 2x): for 7 EVEX instructions (merge mask, {z}, broadcast,
rounding, a masked store, combinations), ns per call through an Assembler's method (n calls, then
assemble()) and through x86gen.encode, with the decoration and without it (same registers and
memory; the broadcast's twin reads the full vector), medians of interleaved rounds of loops of ~20 ms
(5 with --quick); each call's bytes checked against iced first. The table and the worst ratio per path.

Start-up as installed (tools/startup.py; issue 23's targets in brackets): a wheel built from a temporary
copy of the checkout, pip-installed (bytecode compiled) into a fresh venv with --system-site-packages,
x86gen checked to come from there; medians of --startup-runs (11) fresh processes of each kind,
interleaved: python -c pass; import x86gen [<= 10 ms] and import iced_x86 (perf_counter in the process);
the first encode("add", eax, ecx) [<= 5 ms]; the first assemble() of a 40-line program [<= 20 ms]; the
`x86gen asm -f` console script on a 10-line file, wall [<= python + 40 ms], GNU as beside it; the
synthetic stream's text in a fresh process, per line over GNU as's: first assemble [<= 3], second (warm)
[<= 1], after text.clear_caches() (no target). Also import/first encode/first assemble with python -S,
for reference (this machine's site .pth files preload re, typing, pathlib...).

The last line: ``x86gen/iced=<corpus>,<synthetic> text/gnu-as=<synthetic> import_ms=<x86gen>
iced_import_ms=<iced> decorated_ratio=<worst> [startup_import_ms=… first_encode_ms=…
first_assemble_ms=… asm_cli_over_python_ms=… fresh_text_over_gas=… warm_text_over_gas=…
cleared_text_over_gas=… python_ms=… iced_import_ms_installed=…]``: x86gen's structured path (the
Assembler when available, else form.encode) over iced create_* + BlockEncoder; x86gen.assemble over
GNU as per line on the synthetic program; cumulative ``-X importtime`` of ``import x86gen`` /
``import iced_x86`` in a fresh interpreter from the checkout; the worst decorated/plain ratio; the
start-up figures as installed (not with --quick or --no-startup; --startup prints only these).
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import itertools
import os
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
sys.path.insert(0, SRC)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


# ---------------------------------------------------------------------------------------------
# import time (fresh interpreters)

def _env(cached: bool, pycache: str) -> dict:
    """A fresh interpreter's environment: x86gen from this checkout; with ``cached`` bytecode goes to
    (and is read from) ``pycache`` (PYTHONPYCACHEPREFIX, so the work tree stays clean), else every
    import of x86gen compiles its sources (PYTHONDONTWRITEBYTECODE=1, no cache)."""
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPYCACHEPREFIX", None)
    if cached: env["PYTHONPYCACHEPREFIX"] = pycache
    else: env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def import_ms(module: str, runs: int, pycache: str) -> float | None:
    """Median cumulative ``-X importtime`` of ``import module`` in ms, bytecode cached (after one
    warm-up run that writes the cache)."""
    env = _env(True, pycache)
    vals = []
    for i in range(runs + 1):
        r = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"], capture_output=True, text=True, env=env)
        for line in r.stderr.splitlines():
            parts = line.split("|")
            if len(parts) == 3 and parts[2].strip() == module:
                if i: vals.append(int(parts[1]) / 1000)
                break
    return statistics.median(vals) if vals else None


COLD = r"""
import time, sys
t0 = time.perf_counter()
import x86gen
t1 = time.perf_counter()
x86gen.encode("add", x86gen.eax, x86gen.ecx)
t2 = time.perf_counter()
fs = x86gen.all_forms()
t3 = time.perf_counter()
n = 0
for f in fs:
    try: f.encoder; n += 1
    except Exception: pass
t4 = time.perf_counter()
print((t1 - t0) * 1e3, (t2 - t1) * 1e3, (t4 - t3) * 1e3, n)
"""


def iced_version() -> str:
    try:
        from importlib.metadata import version
        return version("iced-x86")
    except Exception:   # noqa: BLE001
        return "?"


def cold_start(pycache: str) -> list[str]:
    """What the first use costs in a fresh interpreter (a signature's first encode reads its mnemonic's line of the
    table and binds the chosen form's generated encoder: x86gen.selection), with and without a bytecode cache."""
    lines = []
    for cached in (True, False):
        env = _env(cached, pycache)
        vals = []
        for _ in range(3):
            r = subprocess.run([sys.executable, "-c", COLD], capture_output=True, text=True, env=env)
            if r.returncode:
                return [f"x86gen cold start: failed ({r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode})"]
            vals.append([float(x) for x in r.stdout.split()])
        imp, first, comp, n = (statistics.median(v[i] for v in vals) for i in range(4))
        lines.append(f"x86gen cold start ({'bytecode cached' if cached else 'no bytecode cache'}): import {imp:.1f} ms, "
                     f"first encode (reads its mnemonic's line of the table, binds one encoder) {first:.1f} ms, "
                     f"building all {int(n)} form encoders {comp:.0f} ms "
                     f"({comp * 1e3 / max(n, 1):.0f} us per form, paid on the first use of each)")
    return lines


# ---------------------------------------------------------------------------------------------
# the timed paths (each returns the bytes of every program)

def run_form(progs):
    out = []
    for calls in progs:
        buf = bytearray()
        for enc, ops, br in calls:
            if br: buf += enc(*ops, ip=len(buf))
            else: buf += enc(*ops)
        out.append(buf)
    return out


def make_run_encode(encode):
    def run_encode(progs):
        out = []
        for calls in progs:
            buf = bytearray()
            for mn, ops, how in calls:    # how: False (plain), True (branch: ip=) or the keywords (rc=)
                if how is False: buf += encode(mn, *ops)
                elif how is True: buf += encode(mn, *ops, ip=len(buf))
                else: buf += encode(mn, *ops, **how)
            out.append(buf)
        return out
    return run_encode


def make_run_assembler(Assembler):
    def run_assembler(progs):
        out = []
        for nlab, calls in progs:
            a = Assembler()
            new = a.label
            labs = [new() for _ in range(nlab)]
            bind = a.bind
            for b, m, ops, t in calls:
                if b >= 0: bind(labs[b])
                if t >= 0: m(a, labs[t])
                else: m(a, *ops)
            out.append(a.assemble())
        return out
    return run_assembler


class NullAssembler:
    """For the floor rows: labels and `assemble` that do nothing."""
    def label(self): return None
    def bind(self, lab): return None
    def assemble(self): return b""


def null_method(self, a=None, b=None, c=None, d=None):
    """For the floor rows: an Assembler method that returns at once."""
    return None


def null_encode(a=None, b=None, c=None, d=None):
    """For the floor rows: a form encoder that returns at once."""
    return b""


def floor_calls(data, assembler: bool):
    """The same calls as ``data`` (Assembler calls or form.encode calls) with `null_method` instead."""
    if assembler: return [(nlab, [(b, null_method, ops, t) for b, _m, ops, t in calls]) for nlab, calls in data]
    return [[(null_encode, ops, False) for _e, ops, _br in calls] for calls in data]


def make_run_assemble(assemble):
    """x86gen's parse caches are emptied before each program, so every program is parsed as if seen
    for the first time (rounds repeat the same text, which the caches would otherwise replay)."""
    from x86gen.text import clear_caches
    def run_assemble(texts):
        out = []
        for t in texts:
            clear_caches()
            out.append(assemble(t))
        return out
    return run_assemble


def make_run_block(BlockEncoder, fix_branches):
    def run_block(progs):
        out = []
        for calls in progs:
            instrs = []
            app = instrs.append
            for fn, args, lbl in calls:
                ins = fn(*args)
                if lbl: ins.ip = lbl
                app(ins)
            be = BlockEncoder(64, fix_branches)
            be.add_many(instrs)
            out.append(be.encode(0))
        return out
    return run_block


def make_run_encoder(Encoder):
    def run_encoder(progs):
        out = []
        for calls in progs:
            enc = Encoder(64)
            e = enc.encode
            ip = 0
            for fn, args in calls:
                ip += e(fn(*args), ip)
            out.append(enc.take_buffer())
        return out
    return run_encoder


# ---------------------------------------------------------------------------------------------
# decorated AVX-512 instructions against the same ones undecorated (issue 23)

def _deco_loop(kind: str, mn: str, ops: tuple, rc, n: int) -> int:
    """ns for ``n`` calls of one instruction: ``kind`` "asm" (an Assembler's method, then ``assemble()``) or
    "encode" (`x86gen.encode`); ``rc`` None calls without the keyword."""
    import x86gen
    loop = itertools.repeat(None, n)
    if kind == "asm":
        a = x86gen.Assembler()
        m = getattr(a, mn)
        t0 = time.perf_counter_ns()
        if rc is None:
            for _ in loop: m(*ops)
        else:
            for _ in loop: m(*ops, rc=rc)
        a.assemble()
        return time.perf_counter_ns() - t0
    enc = x86gen.encode
    t0 = time.perf_counter_ns()
    if rc is None:
        for _ in loop: enc(mn, *ops)
    else:
        for _ in loop: enc(mn, *ops, rc=rc)
    return time.perf_counter_ns() - t0


DECO_PATHS = (("asm", "Assembler method"), ("encode", "x86gen.encode"))


def decorated_report(W, rounds: int, target_ms: float) -> tuple[list[str], float | None, list[str]]:
    """Per instruction of `_bench_workload.DECORATED_CASES`, the time of one call with the decoration and without it
    (same registers and memory) through each of DECO_PATHS: loops of about ``target_ms`` each, every (case, path,
    variant) once per round in a rotated order, medians over ``rounds``. First each call's bytes are checked against
    iced's. Returns the report's lines, the worst ratio and the failures."""
    import x86gen
    ops = W.Operands()
    jobs, failed = [], []
    cases = W.decorated_cases()
    for ci, pair in enumerate(cases):
        for ins in pair:
            ref = W.reference([ins], ops)[0]
            xo, kw = ops.xs(ins), W.rc_kw(ins)
            mn = ins.form.mnemonic
            a = x86gen.Assembler()
            try:
                getattr(a, mn)(*xo, **kw)
                got = {"asm": bytes(a.assemble()), "encode": bytes(x86gen.encode(mn, *xo, **kw))}
            except Exception as ex:   # noqa: BLE001
                failed.append(f"decorated vs plain / {W.ins_text(ins)}: raised {type(ex).__name__}: {str(ex)[:200]}")
                continue
            for kind, name in DECO_PATHS:
                if got[kind] != ref:
                    failed.append(f"decorated vs plain / {name} / {W.ins_text(ins)}: {got[kind].hex()}, iced {ref.hex()}")
                    continue
                # calibrate: about target_ms per loop (after the first calls above, which paid the first use)
                per = max(_deco_loop(kind, mn, xo, kw.get("rc"), 20) / 20, 50)
                n = int(min(50_000, max(20, target_ms * 1e6 / per)))
                jobs.append((ci, ins.deco is not None, kind, mn, xo, kw.get("rc"), n))
    times: dict[tuple, list[float]] = {}
    for r in range(rounds):
        gc.collect()
        k = (r * 5) % max(len(jobs), 1)
        for ci, deco, kind, mn, xo, rc, n in jobs[k:] + jobs[:k]:
            times.setdefault((ci, deco, kind), []).append(_deco_loop(kind, mn, xo, rc, n) / n)
    med = {key: statistics.median(v) for key, v in times.items()}
    lines = [f"decorated AVX-512 vs the same instruction undecorated (ns per instruction, median of {rounds} interleaved rounds "
             f"of loops of ~{target_ms:g} ms; Assembler: n method calls, assemble(); issue 23's target: decorated <= 2x plain)"]
    hdr = f"{'instruction (decorated)':60s}" + "".join(f"{name + ' plain':>24s}{'decorated':>11s}{'ratio':>8s}" for _, name in DECO_PATHS)
    lines += [hdr, "-" * len(hdr)]
    worst: dict[str, tuple[float, str]] = {}
    for ci, (dins, _pins) in enumerate(cases):
        row = f"{W.ins_text(dins):60s}"
        for kind, _name in DECO_PATHS:
            p, d = med.get((ci, False, kind)), med.get((ci, True, kind))
            if p is None or d is None:
                row += f"{'FAILED':>24s}{'':>11s}{'':>8s}"
                continue
            row += f"{p:24.0f}{d:11.0f}{d / p:8.2f}"
            if d / p > worst.get(kind, (0.0, ""))[0]: worst[kind] = (d / p, W.ins_text(dins))
        lines.append(row)
    w = max((v for v, _ in worst.values()), default=None)
    per_path = [f"{name} {worst[kind][0]:.2f}x ({worst[kind][1]})" for kind, name in DECO_PATHS if kind in worst]
    lines.append("worst ratio: " + "; ".join(per_path) + (f"; target <= 2x: {'met' if w <= 2 else 'NOT met'}" if w is not None else ""))
    return lines, w, failed


# ---------------------------------------------------------------------------------------------
# workloads

class Path:
    def __init__(self, name, fn, data, exact, note="", floor=False):
        self.name, self.fn, self.data, self.exact, self.note, self.floor = name, fn, data, exact, note, floor
        self.times: list[int] = []
        self.error: str | None = None


class Workload:
    def __init__(self, name: str, progs, W, with_gas: bool, tmp: str):
        import iced_x86 as I

        import x86gen
        self.name, self.progs = name, progs
        self.n = sum(len(p) for p in progs)
        self.branches = sum(ins.is_branch for p in progs for ins in p)
        ops = W.Operands()
        chk = W.Checker()
        self.checker = chk
        refs = [W.reference(p, ops) for p in progs]
        self.ref = [r[0] for r in refs]
        self.ref_keys = [chk.keys(r) for r in self.ref]
        addrs = [r[1] for r in refs]
        self.paths: list[Path] = []
        notes = []

        try:
            from x86gen.assembler import Assembler
            data = [W.assembler_calls(p, ops, Assembler) for p in progs]
            self.paths.append(Path("x86gen Assembler (labels)", make_run_assembler(Assembler), data, False))
        except Exception as ex:   # noqa: BLE001 - not there yet, or its API differs
            notes.append(f"x86gen Assembler: skipped ({type(ex).__name__}: {ex})")
        self.paths.append(Path("x86gen form.encode (rel32)", run_form, [W.x86gen_calls(p, ops, a) for p, a in zip(progs, addrs)], True))
        enc_layouts = [W.encode_layout(p, ops) for p in progs]
        self.paths.append(Path("x86gen.encode", make_run_encode(x86gen.encode),
                               [W.encode_calls(p, ops, a) for p, a in zip(progs, enc_layouts)], False))
        header = [".intel_syntax noprefix", ".text"]
        bodies = [W.text_lines(p, f".L{k}_") for k, p in enumerate(progs)]
        try:
            from x86gen.program_text import assemble_program  # noqa: F401
            texts = ["\n".join(header + b) + "\n" for b in bodies]     # for one program: GNU as's file
            how = "labels"
        except ImportError:
            texts = ["\n".join(header + W.text_lines(p, None, a)) + "\n" for p, a in zip(progs, enc_layouts)]
            how = "absolute branch targets"
        self.paths.append(Path(f"x86gen.assemble (text, {how})", make_run_assemble(x86gen.assemble), texts, False))
        self.paths.append(Path("iced create_* + BlockEncoder", make_run_block(I.BlockEncoder, True),
                               [W.iced_block_calls(p, ops, a[1:]) for p, a in zip(progs, addrs)], False))
        self.paths.append(Path("iced create_* + BlockEncoder(no fix)", make_run_block(I.BlockEncoder, False),
                               [W.iced_block_calls(p, ops, a[1:]) for p, a in zip(progs, addrs)], True))
        self.paths.append(Path("iced create_* + Encoder", make_run_encoder(I.Encoder), [r[2] for r in refs], True))
        # floors: the timing loops above with methods / encoders that return at once (what the call of one
        # Python function per instruction costs before any encoding; these rows produce no bytes)
        for p in list(self.paths):
            if p.name == "x86gen Assembler (labels)":
                self.paths.append(Path("floor: Assembler loop, empty methods", make_run_assembler(NullAssembler),
                                       floor_calls(p.data, True), False, floor=True))
            elif p.name == "x86gen form.encode (rel32)":
                self.paths.append(Path("floor: form loop, empty encoders", run_form, floor_calls(p.data, False), False, floor=True))
        self.lines = self.n
        self.gas = None
        self.notes = notes
        if with_gas:
            self.gas = os.path.join(tmp, f"{name}.s")
            with open(self.gas, "w") as f: f.write("\n".join(header + [ln for b in bodies for ln in b]) + "\n")
            self.gas_times: list[int] = []
            self.gas_error = self.check_gas(tmp, W)

    def check_gas(self, tmp: str, W) -> str | None:
        obj, binf = os.path.join(tmp, "check.o"), os.path.join(tmp, "check.bin")
        r = subprocess.run(["as", "--64", "-o", obj, self.gas], capture_output=True, text=True)
        if r.returncode: return "as failed: " + r.stderr.strip()[:500]
        if not shutil.which("objcopy"): return None
        subprocess.run(["objcopy", "-O", "binary", "-j", ".text", obj, binf], check=True)
        with open(binf, "rb") as f: data = f.read()
        return self.checker.same(data, W.concat_keys(self.ref_keys))

    def verify(self):
        for p in self.paths:
            if p.floor: continue   # no bytes to check
            try: out = p.fn(p.data)
            except Exception as ex:   # noqa: BLE001
                p.error = f"raised {type(ex).__name__}: {str(ex)[:300]}"
                continue
            for k, (got, ref) in enumerate(zip(out, self.ref)):
                got = bytes(got)
                if p.exact:
                    if got != ref:
                        i = next((i for i, (a, b) in enumerate(zip(got, ref)) if a != b), min(len(got), len(ref)))
                        p.error = f"program {k}: bytes differ from iced's at offset {i} ({got[i:i + 8].hex()} vs {ref[i:i + 8].hex()})"
                        break
                else:
                    why = self.checker.same(got, self.ref_keys[k])
                    if why:
                        p.error = f"program {k}: {why}"
                        break


def time_gas(path: str, empty: str) -> tuple[int, int]:
    t0 = time.perf_counter_ns()
    subprocess.run(["as", "--64", "-o", os.devnull, empty], check=True)
    t1 = time.perf_counter_ns()
    subprocess.run(["as", "--64", "-o", os.devnull, path], check=True)
    t2 = time.perf_counter_ns()
    return t1 - t0, t2 - t1


def chunks(progs, size: int) -> list[slice]:
    """Consecutive runs of programs of about ``size`` instructions."""
    out, start, n = [], 0, 0
    for k, p in enumerate(progs):
        n += len(p)
        if n >= size:
            out.append(slice(start, k + 1))
            start, n = k + 1, 0
    if start < len(progs): out.append(slice(start, len(progs)))
    return out


def measure(workloads, rounds: int, reps: dict, empty: str | None, chunk: int) -> None:
    """Interleaved rounds. A sample of a workload runs every path on each chunk of its programs
    (about ``chunk`` instructions) before going on to the next chunk, in an order rotated from chunk
    to chunk, so that a burst of load on this shared machine falls on all paths alike; a path's
    sample is the sum over the chunks. Each round takes one sample of every workload (``reps[name]``
    samples of small ones) and times GNU as once on each workload's file."""
    n = 0
    for _ in range(rounds):
        for w in workloads:
            paths = [p for p in w.paths if p.error is None]
            if not paths: continue
            parts = chunks(w.progs, chunk)
            for _ in range(reps.get(w.name, 1)):
                gc.collect()
                acc = [0] * len(paths)
                for sl in parts:
                    n += 1
                    k = n % len(paths)
                    for i in list(range(k, len(paths))) + list(range(k)):
                        p = paths[i]
                        data = p.data[sl]
                        t0 = time.perf_counter_ns()
                        p.fn(data)
                        acc[i] += time.perf_counter_ns() - t0
                for p, t in zip(paths, acc): p.times.append(t)
            if w.gas and not w.gas_error and empty:
                for _ in range(reps.get(w.name, 1)):
                    e, f = time_gas(w.gas, empty)
                    w.gas_times.append(f - e)


# ---------------------------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a corpus sample (every 25th kernel), smaller chunks (< 1 minute)")
    ap.add_argument("--rounds", type=int, help="rounds (default 5)")
    ap.add_argument("--every", type=int, help="use every N-th corpus kernel (default 1, --quick 25)")
    ap.add_argument("--synthetic", type=int, default=10_000, help="synthetic stream length (default 10000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-decorated", action="store_true",
                    help="the synthetic stream without its decorated AVX-512 lines (the stream before they were added)")
    ap.add_argument("--structured", choices=("assembler", "form"), default="assembler",
                    help="x86gen's structured path in x86gen/iced: the Assembler (labels, like BlockEncoder; the default, "
                         "form.encode if the Assembler is missing) or form.encode (rel32, targets precomputed)")
    ap.add_argument("--profile", action="store_true", help="print cProfile of x86gen's paths on the synthetic stream")
    ap.add_argument("--startup", action="store_true",
                    help="only start-up as installed (tools/startup.py: wheel, fresh venv, fresh processes); a full run ends with it")
    ap.add_argument("--startup-runs", type=int, default=11, help="fresh processes per start-up figure (default 11)")
    ap.add_argument("--no-startup", action="store_true", help="a full run without start-up as installed (--quick never has it)")
    args = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="x86gen-bench-")
    try: return run_startup(args, tmp) if args.startup else run(args, tmp)
    finally: shutil.rmtree(tmp, ignore_errors=True)


def synthetic_stream(W, args) -> tuple[list, str]:
    """The synthetic program for ``args`` (its AVX-512 and decorated forms: those x86gen encodes like iced) and a note."""
    def check(ins):   # is an AVX-512 form encoded like iced?
        ops = W.Operands()
        ref = W.reference([ins], ops)[0]
        enc, xo, _ = W.x86gen_calls([ins], ops, [0, len(ref)])[0]
        return bytes(enc(*xo)) == ref
    extra, avx512_note = W.avx512_forms(check)
    if args.no_decorated: deco, deco_note = [], "no decorated lines (--no-decorated)"
    else: deco, deco_note = W.decorated_forms(check)
    return W.synthetic(args.synthetic, args.seed, extra, deco), avx512_note + "; " + deco_note


def startup_section(args, tmp: str, W, syn) -> tuple[list[str], dict, list[str]]:
    """tools/startup.py's measures, the big program being ``syn``'s text as GNU as gets it."""
    import startup
    text = "\n".join([".intel_syntax noprefix", ".text"] + W.text_lines(syn, ".L0_")) + "\n"
    d = os.path.join(tmp, "startup")
    os.makedirs(d)
    return startup.measure(ROOT, d, text, len(syn), args.startup_runs)


def run_startup(args, tmp: str) -> int:
    """--startup alone: start-up as installed; the last line has only its keys."""
    import _bench_workload as W
    import startup
    t0 = time.perf_counter()
    syn, note = synthetic_stream(W, args)
    lines, keys, failed = startup_section(args, tmp, W, syn)
    print(f"x86gen start-up: CPython {platform.python_version()}, iced-x86 {iced_version()}; {os.cpu_count()} cpus "
          f"(load average {os.getloadavg()[0]:.1f}); synthetic seed {args.seed}: {len(syn):,} instructions; {note}")
    for line in lines: print(line)
    for err in failed: print(f"FAILED {err}")
    print(f"({time.perf_counter() - t0:.0f} s in all)")
    print(startup.keys_text(keys))
    return 1 if failed else 0


def steady_state() -> None:
    """The paths are timed as a long-running process has them: every operand signature's plan compiled where
    x86gen compiles plans (`x86gen.selection.plans`: after `COMPILE_AFTER` uses, which a compiler backend reaches
    early, but a few bench rounds of a stream with hundreds of signatures would not), so in the untimed check run.
    First-use costs are the start-up section's (tools/startup.py: a fresh process per figure)."""
    try:
        from x86gen.selection import plans
    except ImportError: return   # (an x86gen without run-time plans)
    plans.COMPILE_AFTER = 1


def run(args, tmp: str) -> int:
    rounds = args.rounds or 5
    every = args.every or (25 if args.quick else 1)
    t_start = time.perf_counter()
    load0 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")

    # import times first, in fresh interpreters, before this process imports anything heavy
    runs = 3 if args.quick else 7
    pycache = os.path.join(tmp, "pycache")
    x_imp, i_imp = import_ms("x86gen", runs, pycache), import_ms("iced_x86", runs, pycache)
    cold = cold_start(pycache)

    import _bench_workload as W
    steady_state()

    have_gas = shutil.which("as") is not None
    empty = None
    if have_gas:
        empty = os.path.join(tmp, "empty.s")
        with open(empty, "w") as f: f.write(".intel_syntax noprefix\n")

    t0 = time.perf_counter()
    workloads = []
    cpath = W.corpus_path(ROOT)
    corpus_note = ""
    if os.path.exists(cpath):
        progs, skipped = W.load_corpus(cpath, every=every)
        corpus_note = f"corpus: {len(progs)} kernels" + (f" (every {every}th)" if every > 1 else "") + \
                      (f", {skipped} left out (a form x86gen lacks)" if skipped else "")
        workloads.append(Workload("corpus", progs, W, have_gas, tmp))
    else:
        corpus_note = f"corpus: not found at {cpath}"

    syn, avx512_note = synthetic_stream(W, args)
    workloads.append(Workload("synthetic", [syn], W, have_gas, tmp))
    setup_s = time.perf_counter() - t0
    for w in workloads: w.verify()

    gc.collect()
    gc.freeze()    # the setup's objects are not the collector's business while timing
    t0 = time.perf_counter()
    syn_reps = 3 if not workloads[:-1] else max(3, min(20, workloads[0].n // (4 * workloads[-1].n)))
    measure(workloads, rounds, {"synthetic": syn_reps}, empty, 5_000 if args.quick else 20_000)
    timing_s = time.perf_counter() - t0
    deco_lines, deco_worst, deco_failed = decorated_report(W, 3 if args.quick else 7, 5 if args.quick else 20)
    load1 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")

    # ---- report ----
    print(f"x86gen bench: CPython {platform.python_version()}, iced-x86 {iced_version()}, "
          f"{subprocess.run(['as', '--version'], capture_output=True, text=True).stdout.splitlines()[0] if have_gas else 'no GNU as'}; "
          f"{os.cpu_count()} cpus (load average {load0:.1f} at start, {load1:.1f} at end); {rounds} rounds "
          f"(synthetic x{syn_reps} per round), medians")
    for w in workloads:
        ndeco = sum(ins.deco is not None for p in w.progs for ins in p)
        print(f"  {w.name}: {w.n:,} instructions in {len(w.progs):,} program(s), {w.branches:,} branches"
              + (f", {ndeco:,} decorated" if ndeco else "")
              + (f"; {corpus_note}" if w.name == "corpus" else f"; seed {args.seed}; {avx512_note}"))
        for n in w.notes: print(f"    {n}")
        if w.gas and w.gas_error: print(f"    GNU as: check FAILED: {w.gas_error}")
    print(f"  setup {setup_s:.1f} s (not timed), timing {timing_s:.1f} s")
    print()
    names = [p.name for p in workloads[-1].paths]
    hdr = f"{'path':40s}" + "".join(f"{w.name + ' ns/ins':>18s}{'x iced':>8s}" for w in workloads)
    print(hdr)
    print("-" * len(hdr))
    res: dict[tuple[str, str], float] = {}
    for w in workloads:
        for p in w.paths:
            if p.error is None and p.times: res[(w.name, p.name)] = statistics.median(p.times) / w.n
        if w.gas and not w.gas_error and w.gas_times:
            res[(w.name, "GNU as (per line, start-up subtracted)")] = statistics.median(w.gas_times) / w.lines
    iced_name = "iced create_* + BlockEncoder"
    failed = []
    for name in names + ["GNU as (per line, start-up subtracted)"]:
        row = f"{name:40s}"
        for w in workloads:
            p = next((p for p in w.paths if p.name == name), None)
            v = res.get((w.name, name))
            base = res.get((w.name, iced_name))
            if p is not None and p.error:
                row += f"{'FAILED':>18s}{'':>8s}"
                failed.append((w.name, name, p.error))
            elif v is None: row += f"{'-':>18s}{'':>8s}"
            else: row += f"{v:18.0f}{(v / base if base else float('nan')):8.2f}"
        print(row)
    print()
    def ms(v): return f"{v:.1f}" if v is not None else "nan"
    print(f"import (cumulative -X importtime, bytecode cached, median of {runs}): x86gen {ms(x_imp)} ms, iced_x86 {ms(i_imp)} ms")
    for line in cold: print(line)
    print()
    for line in deco_lines: print(line)
    for wn, name, err in failed: print(f"FAILED {wn} / {name}: {err}")
    for err in deco_failed: print(f"FAILED {err}")

    order = ("x86gen Assembler (labels)", "x86gen form.encode (rel32)")

    def ratio(wname):
        for name in (order if args.structured == "assembler" else order[1:]):
            v, base = res.get((wname, name)), res.get((wname, iced_name))
            if v is not None and base: return v / base, name
        return None, None
    parts, used = [], set()
    for w in workloads:
        r, name = ratio(w.name)
        parts.append(f"{r:.2f}" if r is not None else "nan")
        if name: used.add(name)
    t = res.get(("synthetic", next((n for n in names if n.startswith("x86gen.assemble")), "")))
    g = res.get(("synthetic", "GNU as (per line, start-up subtracted)"))
    # GNU as's per-line time is a difference of two process timings; on a loaded machine with a tiny program it
    # can come out at or below 0, which measures nothing: report nan then
    text_ratio = f"{t / g:.2f}" if t and g and g > 0 else "nan"
    print(f"(x86gen/iced = {' / '.join(sorted(used))} over {iced_name}, for "
          f"{','.join(w.name for w in workloads)}; text/gnu-as on synthetic; {time.perf_counter() - t_start:.0f} s in all)")
    if args.profile: profile(workloads)
    last = (f"x86gen/iced={','.join(parts)} text/gnu-as={text_ratio} import_ms={ms(x_imp)} iced_import_ms={ms(i_imp)}"
            f" decorated_ratio={f'{deco_worst:.2f}' if deco_worst is not None else 'nan'}")
    st_failed = []
    if args.quick or args.no_startup:
        print(f"start-up as installed: not measured with {'--quick' if args.quick else '--no-startup'} (python tools/bench.py --startup)")
    else:
        import startup
        print()
        st_lines, st_keys, st_failed = startup_section(args, tmp, W, syn)
        for line in st_lines: print(line)
        for err in st_failed: print(f"FAILED {err}")
        last += " " + startup.keys_text(st_keys)
    print(last)
    return 1 if failed or deco_failed or st_failed else 0


def profile(workloads) -> None:
    w = workloads[-1]
    for p in w.paths:
        if not p.name.startswith("x86gen") or p.error: continue
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(3): p.fn(p.data)
        pr.disable()
        print(f"\n==== cProfile: {p.name} on {w.name} (3 runs, {w.n} instructions each) ====")
        st = pstats.Stats(pr)
        st.sort_stats("tottime").print_stats(14)


if __name__ == "__main__":
    sys.exit(main())
