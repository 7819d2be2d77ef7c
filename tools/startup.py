"""Start-up of x86gen as a user has it installed (issue 23), for tools/bench.py (``--startup``, and at the end of a
full run).

Set-up (not timed): the checkout's files (tracked and untracked-but-not-ignored, as ``git ls-files`` lists them) are
copied to a temporary directory, so that building writes no build/ or *.egg-info into the checkout; ``pip wheel
--no-deps --no-build-isolation`` builds the wheel there (with pip's build isolation when that fails, e.g. when the
interpreter's setuptools has no bdist_wheel: pip then fetches the build backend from the package index); ``python -m
venv --system-site-packages`` (so iced_x86 stays importable) makes a fresh venv and ``pip install --no-deps
--ignore-installed`` installs the wheel into it, compiling the bytecode as pip does for users. Inside the venv
``x86gen.__file__`` must be the venv's copy, not an editable install of some checkout.

Measured, each the median of ``runs`` fresh processes of the venv's python (after one warm-up round), the kinds of
process interleaved in a rotating order so that load from other processes falls on all alike:

  python -c pass              the interpreter's own start-up (wall time)
  import x86gen               perf_counter around the import, in the process         target <= 10 ms
  import iced_x86             the same, for reference
  first encode                x86gen.encode("add", eax, ecx) right after the import   target <= 5 ms
  first assemble              x86gen.assemble() of a 40-line program (GP, AVX2, a masked AVX-512 line, a label and a
                              backward jcc) right after the import                    target <= 20 ms
  x86gen asm -f <10 lines>    the console script as a whole process (wall), output to /dev/null, over python -c pass:
                                                                                     target <= 40 ms; GNU as on the
                              same file beside it
  big program                 bench's synthetic stream as GNU as gets it (labels, decorated lines): the first
                              x86gen.assemble(text) in a fresh process, per line, over GNU as per line (as --64 -o
                              /dev/null, minus an empty file's run)                   target <= 3;
                              a second assemble in the same process (warm)           target <= 1;
                              a third after x86gen.text.clear_caches() (warm process, parse caches cleared), no target.

Before any figure is reported, the bytes x86gen gives for the three programs in the venv are checked against GNU as's
(the same instructions, decoded with iced: `_bench_workload.Checker`).
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time

PROGRAM_40 = """\
.intel_syntax noprefix
.text
    push rbp
    mov rbp, rsp
    push rbx
    push r12
    xor eax, eax
    mov rcx, rdi
    lea rdx, [rsi+rdx*4]
    mov r8d, 64
    kmovw k1, r8d
    vxorps ymm0, ymm0, ymm0
    vbroadcastss ymm1, dword ptr [rcx]
.Lloop:
    vmovups ymm2, ymmword ptr [rsi+rax*4]
    vfmadd231ps ymm0, ymm1, ymm2
    vaddps ymm3, ymm0, ymmword ptr [rdx+rax*4+0x20]
    vmulps ymm3, ymm3, ymm1
    vmovups ymmword ptr [rdi+rax*4], ymm3
    vaddps zmm1 {k1}, zmm2, zmm3
    vmulps zmm4 {k1}{z}, zmm5, zmmword ptr [rsi+rax*4]
    vmovups zmmword ptr [rdi+rax*4+0x40], zmm4
    add rax, 16
    imul r9, rax, 12
    shl r10, 3
    cmp rax, r8
    jl .Lloop
    vzeroupper
    movzx ecx, byte ptr [rsi]
    movsxd r11, dword ptr [rdx+8]
    test ecx, ecx
    sete al
    cmovne r9, r11
    add rbx, qword ptr [rbp-0x10]
    sub r12, 0x1000
    and r12d, 0xff
    or r9, r10
    mov qword ptr [rbp-8], r9
    pop r12
    pop rbx
    pop rbp
    ret
"""

FILE_10 = """\
.intel_syntax noprefix
    xor eax, eax
.L1:
    add eax, dword ptr [rdi+rcx*4]
    vaddps ymm0, ymm1, ymmword ptr [rsi]
    vaddps zmm1 {k1}, zmm2, zmm3
    inc rcx
    cmp rcx, rdx
    jb .L1
    ret
"""

# the child processes (the venv's python; times in ms on one line; x86gen's file last, to check where it came from)
IMPORT_ENCODE = """\
import time
t0 = time.perf_counter()
import x86gen
t1 = time.perf_counter()
x86gen.encode("add", x86gen.eax, x86gen.ecx)
t2 = time.perf_counter()
print((t1 - t0) * 1e3, (t2 - t1) * 1e3, x86gen.__file__)
"""
IMPORT_ICED = """\
import time
t0 = time.perf_counter()
import iced_x86
t1 = time.perf_counter()
print((t1 - t0) * 1e3)
"""
FIRST_ASSEMBLE = """\
import sys, time
text = open(sys.argv[1]).read()
t0 = time.perf_counter()
import x86gen
t1 = time.perf_counter()
out = x86gen.assemble(text)
t2 = time.perf_counter()
if len(sys.argv) > 2:
    with open(sys.argv[2], "wb") as f: f.write(out)
print((t1 - t0) * 1e3, (t2 - t1) * 1e3, x86gen.__file__)
"""
BIG = """\
import sys, time
text = open(sys.argv[1]).read()
import x86gen
t0 = time.perf_counter()
out = x86gen.assemble(text)
t1 = time.perf_counter()
x86gen.assemble(text)
t2 = time.perf_counter()
from x86gen.text import clear_caches
clear_caches()
t3 = time.perf_counter()
x86gen.assemble(text)
t4 = time.perf_counter()
if len(sys.argv) > 2:
    with open(sys.argv[2], "wb") as f: f.write(out)
print((t1 - t0) * 1e3, (t2 - t1) * 1e3, (t4 - t3) * 1e3, x86gen.__file__)
"""

CHECK = """\
import sys
n = len(sys.modules)
pre = [m for m in ("re", "typing", "pathlib", "enum") if m in sys.modules]
import os, x86gen
print(x86gen.__file__)
print(sum(f.endswith(".pyc") for f in os.listdir(os.path.join(os.path.dirname(x86gen.__file__), "__pycache__"))))
print(n, ",".join(pre) or "-")
"""

TARGETS = {"import": 10.0, "encode": 5.0, "assemble": 20.0, "cli": 40.0, "fresh": 3.0, "warm": 1.0}


class StartupError(Exception):
    pass


def _run(cmd, what: str, **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        tail = (r.stderr or r.stdout).strip().splitlines()[-3:]
        raise StartupError(f"{what} failed (exit {r.returncode}): {' | '.join(tail)}")
    return r


def clean_env() -> dict:
    """The environment of the venv's processes: nothing that points Python elsewhere or changes bytecode."""
    drop = ("PYTHONPATH", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "PYTHONSTARTUP", "VIRTUAL_ENV",
            "PYTHONNOUSERSITE", "PYTHONSAFEPATH", "PYTHONINSPECT", "PYTHONOPTIMIZE", "PYTHONPROFILEIMPORTTIME", "PYTHONDEVMODE")
    return {k: v for k, v in os.environ.items() if k not in drop}


def copy_checkout(root: str, dst: str) -> int:
    """Copy the checkout's files to ``dst``: what ``git ls-files`` lists (tracked, and untracked but not ignored), else
    the tree without .git, build/, dist/, *.egg-info and caches. Returns the number of files."""
    try:
        r = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                           capture_output=True, check=True)
        files = [f for f in r.stdout.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = None
    if not files:
        shutil.copytree(root, dst, ignore=shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__",
                                                                 ".pytest_cache", ".ruff_cache", ".hypothesis"))
        return sum(len(fs) for _, _, fs in os.walk(dst))
    n = 0
    for f in files:
        src = os.path.join(root, f)
        if not os.path.isfile(src): continue     # deleted in the work tree
        out = os.path.join(dst, f)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        shutil.copy2(src, out)
        n += 1
    return n


def install(root: str, tmp: str) -> tuple[str, str, str]:
    """Build the wheel of ``root`` (from a copy) and install it into a fresh venv under ``tmp``. Returns (the venv's
    python, its x86gen console script, a note on how)."""
    copy = os.path.join(tmp, "checkout")
    nfiles = copy_checkout(root, copy)
    dist = os.path.join(tmp, "dist")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    how = "pip wheel --no-build-isolation"
    r = subprocess.run(pip + ["wheel", "--no-deps", "--no-build-isolation", "-w", dist, copy], capture_output=True, text=True)
    if r.returncode:
        how = "pip wheel with build isolation: --no-build-isolation failed, pip took the build backend from the package index"
        _run(pip + ["wheel", "--no-deps", "-w", dist, copy], "pip wheel")
    wheels = [f for f in os.listdir(dist) if f.startswith("x86gen-") and f.endswith(".whl")]
    if len(wheels) != 1: raise StartupError(f"pip wheel: expected one x86gen wheel in {dist}, found {wheels}")
    venv = os.path.join(tmp, "venv")
    _run([sys.executable, "-m", "venv", "--system-site-packages", venv], "python -m venv")
    bindir = os.path.join(venv, "Scripts" if os.name == "nt" else "bin")
    py = os.path.join(bindir, "python")
    _run([py, "-m", "pip", "--disable-pip-version-check", "install", "--no-deps", "--no-index", "--ignore-installed", "-q",
          os.path.join(dist, wheels[0])], "pip install", env=clean_env(), cwd=tmp)
    script = os.path.join(bindir, "x86gen")
    if not os.path.exists(script): raise StartupError(f"pip install: no console script {script}")
    return py, script, f"{wheels[0]} ({nfiles} files copied, {how})"


def check_installed(py: str, venv_root: str, cwd: str) -> tuple[str, str]:
    """x86gen as the venv's python imports it: its copy in the venv's site-packages, with bytecode. Returns its file
    and a note on what the interpreter has imported before any code of its own (site and the .pth files it runs)."""
    r = _run([py, "-c", CHECK], "import x86gen in the venv", env=clean_env(), cwd=cwd)
    file, npyc, nmod, pre = r.stdout.split()
    real, venv_real = os.path.realpath(file), os.path.realpath(venv_root)
    if not real.startswith(venv_real + os.sep) or "site-packages" not in real:
        raise StartupError(f"the venv's python imports x86gen from {file}, not from the venv's site-packages ({venv_root})")
    if int(npyc) == 0: raise StartupError(f"no bytecode beside {file} (pip compiles it at install)")
    return file, f"the interpreter starts with {nmod} modules imported" + (f", {pre.replace(',', ', ')} among them" if pre != "-" else "")


def gas_bytes(path: str, tmp: str) -> bytes | None:
    """GNU as's .text for ``path`` (None without as/objcopy)."""
    if not (shutil.which("as") and shutil.which("objcopy")): return None
    obj, binf = os.path.join(tmp, "gas-check.o"), os.path.join(tmp, "gas-check.bin")
    _run(["as", "--64", "-o", obj, path], f"as {os.path.basename(path)}")
    _run(["objcopy", "-O", "binary", "-j", ".text", obj, binf], "objcopy")
    with open(binf, "rb") as f: return f.read()


def _wall(cmd, env, cwd) -> float:
    t0 = time.perf_counter_ns()
    r = subprocess.run(cmd, capture_output=True, env=env, cwd=cwd)
    t = (time.perf_counter_ns() - t0) / 1e6
    if r.returncode: raise StartupError(f"{' '.join(map(str, cmd[:4]))} failed: {r.stderr.decode().strip()[-300:]}")
    return t


def _out(cmd, env, cwd, file: str | None) -> list[float]:
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    if r.returncode: raise StartupError(f"{' '.join(map(str, cmd[:2]))} {os.path.basename(str(cmd[-1]))} failed: "
                                        f"{r.stderr.strip()[-300:]}")
    parts = r.stdout.split()
    if file is not None and parts[-1] != file:
        raise StartupError(f"a measured process imported x86gen from {parts[-1]}, not {file}")
    return [float(x) for x in (parts[:-1] if file is not None else parts)]


def measure(root: str, tmp: str, big_text: str, big_lines: int, runs: int = 11) -> tuple[list[str], dict, list[str]]:
    """Build, install, check and time (see the module's docstring). Returns the report's lines, the figures for the
    bench's last line (name -> value or None) and failures (empty when all went well)."""
    keys = dict.fromkeys(("startup_import_ms", "first_encode_ms", "first_assemble_ms", "asm_cli_over_python_ms",
                          "fresh_text_over_gas", "warm_text_over_gas", "cleared_text_over_gas", "python_ms", "iced_import_ms_installed"))
    t_setup = time.perf_counter()
    try:
        py, script, note = install(root, tmp)
        venv = os.path.dirname(os.path.dirname(py))
        work = os.path.join(tmp, "run")
        os.makedirs(work)
        file, pre_note = check_installed(py, venv, work)
        nosite = f"import sys; sys.path.insert(0, {os.path.dirname(os.path.dirname(file))!r})\n"
    except StartupError as ex:
        return [f"start-up as installed: not measured: {ex}"], keys, [f"start-up: {ex}"]
    env = clean_env()
    paths = {}
    for name, text in (("p40.s", PROGRAM_40), ("f10.s", FILE_10), ("big.s", big_text), ("empty.s", ".intel_syntax noprefix\n")):
        paths[name] = os.path.join(work, name)
        with open(paths[name], "w") as f: f.write(text)
    have_gas = shutil.which("as") is not None

    # check: x86gen's bytes in the venv against GNU as's (the same instructions, decoded with iced)
    failed = []
    import _bench_workload as W
    chk = W.Checker()
    outs = {n: os.path.join(work, n + ".bin") for n in ("p40", "f10", "big")}
    try:
        _out([py, "-c", FIRST_ASSEMBLE, paths["p40.s"], outs["p40"]], env, work, file)
        _wall([script, "asm", "-f", paths["f10.s"], "-o", outs["f10"]], env, work)
        _out([py, "-c", BIG, paths["big.s"], outs["big"]], env, work, file)
        for n in ("p40", "f10", "big"):
            ref = gas_bytes(paths[n + ".s"], work)
            if ref is None: continue
            with open(outs[n], "rb") as f: why = chk.same(f.read(), chk.keys(ref))
            if why: failed.append(f"start-up: {n}.s: x86gen in the venv and GNU as differ: {why}")
    except StartupError as ex:
        failed.append(f"start-up: {ex}")
    if failed: return ["start-up as installed: not measured (check failed)"], keys, failed
    setup_s = time.perf_counter() - t_setup

    jobs = {
        "python": lambda: {"python": _wall([py, "-c", "pass"], env, work)},
        "import": lambda: dict(zip(("import", "encode"), _out([py, "-c", IMPORT_ENCODE], env, work, file))),
        "import -S": lambda: dict(zip(("import -S", "encode -S"), _out([py, "-S", "-c", nosite + IMPORT_ENCODE], env, work, file))),
        "assemble -S": lambda: {"assemble -S": _out([py, "-S", "-c", nosite + FIRST_ASSEMBLE, paths["p40.s"]], env, work, file)[1]},
        "iced": lambda: {"iced": _out([py, "-c", IMPORT_ICED], env, work, None)[0]},
        "assemble": lambda: {"assemble": _out([py, "-c", FIRST_ASSEMBLE, paths["p40.s"]], env, work, file)[1]},
        "cli": lambda: {"cli": _wall([script, "asm", "-f", paths["f10.s"], "-o", os.devnull], env, work)},
        "big": lambda: dict(zip(("fresh", "warm", "cleared"), _out([py, "-c", BIG, paths["big.s"]], env, work, file))),
    }
    if have_gas:
        jobs["gas10"] = lambda: {"gas10": _wall(["as", "--64", "-o", os.devnull, paths["f10.s"]], env, work)}
        # the empty file's run, then the program's, back to back (as tools/bench.py's time_gas)
        jobs["gasbig"] = lambda: {"gas_big": -_wall(["as", "--64", "-o", os.devnull, paths["empty.s"]], env, work)
                                  + _wall(["as", "--64", "-o", os.devnull, paths["big.s"]], env, work)}
    names = list(jobs)
    vals: dict[str, list[float]] = {}
    t0 = time.perf_counter()
    try:
        for r in range(runs + 1):     # round 0 warms the page cache and is not counted
            k = r % len(names)
            for name in names[k:] + names[:k]:
                for key, v in jobs[name]().items():
                    if r: vals.setdefault(key, []).append(v)
    except StartupError as ex:
        return ["start-up as installed: not measured"], keys, [f"start-up: {ex}"]
    timing_s = time.perf_counter() - t0
    med = {k: statistics.median(v) for k, v in vals.items()}

    def verdict(v, target, unit=""): return f"target <= {target:g}{unit}: {'met' if v <= target else 'NOT met'}"
    lines = [f"start-up as installed: {note}; a fresh venv (--system-site-packages), x86gen from {file}; "
             f"median of {runs} fresh processes of each kind, interleaved (set-up {setup_s:.0f} s, timing {timing_s:.0f} s); "
             f"{pre_note}"]
    row = "  {:58s}{:>10s}  {}"
    lines.append(row.format("python -c pass (the interpreter's start-up, wall)", f"{med['python']:.1f} ms", ""))
    lines.append(row.format("import x86gen (in the process)", f"{med['import']:.1f} ms", verdict(med["import"], TARGETS["import"], " ms")))
    lines.append(row.format("import iced_x86 (in the process)", f"{med['iced']:.1f} ms", "(for reference)"))
    lines.append(row.format('first x86gen.encode("add", eax, ecx) after the import', f"{med['encode']:.1f} ms",
                            verdict(med["encode"], TARGETS["encode"], " ms")))
    lines.append(row.format("first x86gen.assemble(40-line program) after the import", f"{med['assemble']:.1f} ms",
                            verdict(med["assemble"], TARGETS["assemble"], " ms")))
    for what, key in (("import x86gen", "import -S"), ("first encode", "encode -S"), ("first assemble", "assemble -S")):
        lines.append(row.format(f"  {what}, python -S (nothing preloaded)", f"{med[key]:.1f} ms", "(for reference: no site, no .pth)"))
    cli_over = med["cli"] - med["python"]
    lines.append(row.format("x86gen asm -f <10-line .s> -o /dev/null (wall)", f"{med['cli']:.1f} ms",
                            f"python + {cli_over:.1f} ms: {verdict(cli_over, TARGETS['cli'], ' ms')}"))
    if "gas10" in med: lines.append(row.format("GNU as on the same file (wall)", f"{med['gas10']:.1f} ms", "(for reference)"))
    per = {k: med[k] * 1e3 / big_lines for k in ("fresh", "warm", "cleared")}
    gas = med.get("gas_big", 0) * 1e3 / big_lines if have_gas else 0
    ratios = {k: (v / gas if gas > 0 else None) for k, v in per.items()}

    def rt(k): return f"{ratios[k]:.2f}x GNU as" if ratios[k] is not None else "GNU as: nan"
    lines.append(f"  {big_lines:,}-line program (the synthetic stream's text as GNU as gets it), per line: GNU as {gas:.2f} us "
                 "(start-up subtracted)" if have_gas else f"  {big_lines:,}-line program: no GNU as")
    lines.append(row.format("  first x86gen.assemble in a fresh process", f"{per['fresh']:.2f} us",
                            rt("fresh") + (f": {verdict(ratios['fresh'], TARGETS['fresh'])}" if ratios["fresh"] is not None else "")))
    lines.append(row.format("  second assemble, same process (warm)", f"{per['warm']:.2f} us",
                            rt("warm") + (f": {verdict(ratios['warm'], TARGETS['warm'])}" if ratios["warm"] is not None else "")))
    lines.append(row.format("  after x86gen.text.clear_caches() (warm process)", f"{per['cleared']:.2f} us",
                            rt("cleared") + " (no target)"))
    keys.update(startup_import_ms=med["import"], first_encode_ms=med["encode"], first_assemble_ms=med["assemble"],
                asm_cli_over_python_ms=cli_over, fresh_text_over_gas=ratios["fresh"], warm_text_over_gas=ratios["warm"],
                cleared_text_over_gas=ratios["cleared"], python_ms=med["python"], iced_import_ms_installed=med["iced"])
    return lines, keys, []


def keys_text(keys: dict) -> str:
    """``name=value`` items for the bench's last line (nan where not measured)."""
    def f(k, v):
        if v is None: return "nan"
        return f"{v:.2f}" if k.endswith("_over_gas") else f"{v:.1f}"
    return " ".join(f"{k}={f(k, v)}" for k, v in keys.items())
