"""Run a few instructions on the Bochs CPU core that the PyPI package ``bochscpu-python`` bundles (Bochs 3.0 era).

Debian's bochs (2.7) has no CPU model with AVX10; this core carries AVX10.1/AVX10.2 execute methods, but its only
CPU model reachable from Python is the one its Rust layer hard-codes (``tigerlake``: AVX-512 without AVX10), so
every AVX10.2 encoding is #UD there. Bochs's own switch for that is the ``cpu.add_features`` parameter (a bochsrc
``cpu: add_features=avx10_1,avx10_2`` line; ``BX_CPU_C::initialize`` applies it): the package creates it with room
for 0 characters and offers no setter. Two more things stand between the wheel and this machine:

* the wheel is tagged manylinux_2_28 but references ``__isoc23_strtoull`` and ``__isoc23_sscanf`` (glibc 2.38), so
  it does not import on Debian 12's glibc 2.36;
* nanobind reports leaks and frees an invalid pointer when the interpreter exits.

So each run happens in a worker process (this file run as a script) that first loads a small shared object built
here with ``cc`` (`SHIM_C`): it defines the two glibc 2.38 names over their C99 forms, and it answers the core's
look-up of ``cpu.add_features`` with a parameter made by the package's own ``sim_new_param_string`` holding the
requested feature list (every other parameter goes to the package's look-up). The worker leaves with ``os._exit``
after printing its JSON answer. Nothing here changes what an instruction computes: the core decodes and executes
the bytes it is given, and the caller compares its registers with a Python model.

`run(cases, features)` -> one `Outcome` per case: a case is code bytes (``hlt`` is appended) and initial ZMM
registers; the guest runs in 64-bit ring 0 with CR4.OSXSAVE/OSFXSR/OSXMMEXCPT set and XCR0 = 0xE7 (x87, SSE, AVX,
opmask, ZMM_Hi256, Hi16_ZMM), MXCSR at its reset value 0x1F80, until ``hlt`` or the first exception.

The added features reach the decoder (an AVX10.2 encoding is #UD without them and executes with them) but not the
guest's CPUID: the tigerlake model's leaves stay as they are (maximum basic leaf 16h, CPUID.(7,1).EDX = 0), so a
program that checks CPUID before using AVX10.2 would not use it here.
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "bochscpu-python"
AVX10_2 = "avx10_1,avx10_2"        # Bochs feature names (cpu/cpuid.cc): AVX10.2 needs AVX10.1 (its sanity check)
CODE_VA = 0x400000
DATA_VA = 0x600000
PML4 = 0x100000
TIMEOUT = 120
MAX_CASES = 256                    # code pages from CODE_VA stay below DATA_VA

SHIM_C = r"""
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* glibc 2.38 names the wheel was linked against; their C99 behaviour is all Bochs needs */
unsigned long long __isoc23_strtoull(const char *s, char **end, int base) { return strtoull(s, end, base); }
int __isoc23_sscanf(const char *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsscanf(s, fmt, ap);
    va_end(ap);
    return n;
}

/* the core calls sim_get_param_string through the PLT, so this definition (loaded first, RTLD_GLOBAL) is the one
   it reaches; the package's own look-up and constructor are handed in by shim_setup */
static void *(*package_lookup)(const char *);
static void *add_features;

void shim_setup(void *(*lookup)(const char *), void *(*make)(const char *, const char *, unsigned), const char *list)
{
    package_lookup = lookup;
    add_features = make("add_features", list, (unsigned)strlen(list) + 1);
}

void *sim_get_param_string(const char *name)
{
    if (add_features != NULL && strcmp(name, "cpu.add_features") == 0) return add_features;
    return package_lookup(name);
}
"""


class EmulatorError(RuntimeError):
    """The worker did not answer (crash, timeout, or a setup problem)."""


@dataclass(frozen=True)
class Case:
    code: bytes
    zmm: dict[int, list[int]]          # register number -> 8 little-endian qwords
    rax: int = 0
    rcx: int = 0


@dataclass(frozen=True)
class Outcome:
    stop: str                          # "hlt" or "exception"
    vector: int | None                 # exception vector (6 = #UD) when stop == "exception"
    zmm: list[list[int]]               # all 32 ZMM registers after the run, 8 qwords each
    rax: int
    rbx: int
    rcx: int
    rdx: int


def _package_importable() -> str | None:
    """Why the package cannot be used (None when it can): it must be installed for this interpreter."""
    from importlib.util import find_spec
    if find_spec("bochscpu") is None:
        return f"{PACKAGE} is not installed (pip install {PACKAGE}; Linux x86-64 wheels only)"
    return None


@functools.cache
def _shim() -> Path:
    out = Path(tempfile.mkdtemp(prefix="x86gen-bochscpu-")) / "bochscpu_shim.so"
    src = out.with_suffix(".c")
    src.write_text(SHIM_C)
    done = subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(out), str(src)], capture_output=True, text=True)
    if done.returncode != 0:
        raise EmulatorError(f"cc could not build the loader shim: {done.stderr.strip()}")
    return out


def unavailable() -> str | None:
    """Why `run` cannot work here (None when it can)."""
    reason = _package_importable()
    if reason: return reason
    if shutil.which("cc") is None: return "no C compiler (cc) to build the loader shim the wheel needs on this glibc"
    try:
        _shim()
    except EmulatorError as e:
        return str(e)
    return None


def run(cases: list[Case], features: str = AVX10_2) -> list[Outcome]:
    """Run each case on a fresh CPU state of one emulated CPU with `features` added to its model."""
    if len(cases) > MAX_CASES: raise ValueError(f"at most {MAX_CASES} cases a run (one code page each)")
    request = {"shim": str(_shim()), "features": features,
               "cases": [{"code": c.code.hex(), "zmm": {str(k): v for k, v in c.zmm.items()},
                          "rax": c.rax, "rcx": c.rcx} for c in cases]}
    try:
        done = subprocess.run([sys.executable, __file__], input=json.dumps(request), capture_output=True, text=True,
                              timeout=TIMEOUT)
    except subprocess.TimeoutExpired as e:
        raise EmulatorError(f"the emulator worker did not finish in {TIMEOUT} s") from e
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or not lines:
        raise EmulatorError(f"the emulator worker failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}")
    answer = json.loads(lines[-1])
    return [Outcome(**o) for o in answer["outcomes"]]


# ----------------------------------------------------------------------------------------------------------------
# the worker (runs in its own process)

def _worker(request: dict) -> dict:
    import ctypes
    shim = ctypes.CDLL(request["shim"], mode=os.RTLD_GLOBAL)
    sys.setdlopenflags(os.RTLD_NOW | os.RTLD_GLOBAL)
    import bochscpu
    import bochscpu.cpu
    import bochscpu.memory as mem

    core = ctypes.CDLL(bochscpu._bochscpu.__file__)
    shim.shim_setup.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p]
    shim.shim_setup(ctypes.cast(core.sim_get_param_string, ctypes.c_void_p),
                    ctypes.cast(core.sim_new_param_string, ctypes.c_void_p), request["features"].encode())

    session = bochscpu.Session()            # creates the CPU: BX_CPU_C::initialize reads cpu.add_features here
    # Each case gets its own code page: writes through the package's memory API do not reach the core's decoded-
    # instruction cache, so a second program written over the first one at the same address would not be seen.
    cases = request["cases"]
    table = mem.PageMapLevel4Table()
    pages = [(CODE_VA + 0x1000 * n, 0) for n in range(len(cases))] + [(DATA_VA, 1)]
    for va, writable in pages:
        hva = mem.allocate_host_page()
        mem.page_insert(va, hva)            # guest-physical == guest-virtual for these two pages
        table.insert(va, va, writable)
    for hva, gpa in table.commit(PML4):
        mem.page_insert(gpa, hva)

    def segment(selector: int, attr: int):
        s = bochscpu.Segment()
        s.present, s.selector, s.base, s.limit, s.attr = True, selector, 0, 0xFFFFFFFF, attr
        return s

    events: list = []

    def on_exception(sess, cpu_id, vector, error_code):
        events.append(("exception", vector))
        sess.stop()

    def on_hlt(sess, cpu_id):
        events.append(("hlt", None))
        sess.stop()

    hook = bochscpu.Hook()
    hook.exception = on_exception
    hook.hlt = on_hlt

    outcomes = []
    for n, case in enumerate(cases):
        code_va = CODE_VA + 0x1000 * n
        code = bytes.fromhex(case["code"]) + b"\xf4"
        if len(code) > 0x1000 or not mem.virt_write(PML4, code_va, list(code)):
            raise RuntimeError("could not write the code page")
        state = bochscpu.State()
        bochscpu.cpu.set_long_mode(state)
        cr4 = bochscpu.cpu.ControlRegister(state.cr4)
        cr4.OSFXSR = cr4.OSXMMEXCPT = cr4.OSXSAVE = True
        state.cr4 = int(cr4)
        state.xcr0 = 0xE7
        state.mxcsr = 0x1F80
        state.cr3 = PML4
        state.rip = code_va
        state.rsp = DATA_VA + 0x800
        state.rflags = 0x2
        state.rax, state.rcx = case["rax"], case["rcx"]
        state.cs = segment(0x10, 0x209B)    # 64-bit ring-0 code (L=1, P, DPL 0, execute/read, accessed)
        data = segment(0x18, 0xC93)
        state.ds = state.ss = state.es = state.fs = state.gs = data
        zmm = state.zmm
        for reg, qwords in case["zmm"].items():
            zmm[int(reg)].q = qwords
        state.zmm = zmm
        session.cpu.state = state
        events.clear()
        session.run([hook])
        out = session.cpu.state
        stop, vector = events[0] if events else ("none", None)
        outcomes.append({"stop": stop, "vector": vector, "zmm": [list(z.q) for z in out.zmm],
                         "rax": out.rax, "rbx": out.rbx, "rcx": out.rcx, "rdx": out.rdx})
    return {"outcomes": outcomes}


if __name__ == "__main__":
    answer = _worker(json.loads(sys.stdin.read()))
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
    os._exit(0)                             # skip interpreter teardown: the package's bindings crash in it
