"""Side by side: tinygrad 0.14.0's own x86 encoder vs x86gen through `x86gen.integrations.tinygrad`.

    DEV=CPU:X86 python tools/tinygrad_bench.py [--repeat 7]

1. Runs the programs of tests/test_tinygrad.py once (in-process) and keeps every kernel's final uop list.
2. Per instruction, warm, over the same instructions in one run: tinygrad's ``encodings[op](uop)`` and the
   integration's ``encode_uop`` + the form's encoder (best of ``--repeat`` passes, µs per instruction), and the
   whole ``render`` of both (uops -> hex, including labels and jump fixups).
3. Start-up per process (what a replaced compile worker pays), in fresh interpreters: importing the integration
   (tinygrad already imported) plus building the encoders of every form tinygrad uses
   (`x86gen.reference.TINYGRAD_X86OPS`), best of 5; with a cold and a warm on-disk code cache
   (`x86gen.integrations.tinygrad.prebuild`).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]
os.environ.setdefault("DEV", "CPU:X86")
os.environ["PARALLEL"] = "0"

STARTUP = """
import time, tinygrad.renderer.isa.x86, tinygrad.runtime.ops_cpu
t0 = time.perf_counter()
from x86gen.integrations import tinygrad as xg
n = xg.prebuild()
print(time.perf_counter() - t0, n)
"""


def collect():
    import test_tinygrad
    from tinygrad.renderer.isa import x86 as tx
    from tinygrad.uop import Ops

    from x86gen.integrations import tinygrad as xg
    kernels = []
    render = xg.X86Renderer.render
    def capture(self, uops):
        kernels.append(list(uops))
        return render(self, uops)
    xg.X86Renderer.render = capture
    xg.install()
    for _name, thunk, _want, _tol in test_tinygrad.programs(): thunk().numpy()
    xg.X86Renderer.render = render
    insns = [u for k in kernels for u in k if u.op is Ops.INS and u.arg not in xg.SKIP and u.arg is not tx.X86Ops.LABEL]
    return kernels, insns


def best(fns, repeat: int) -> list[float]:
    """The best time of each function over ``repeat`` rounds, the functions interleaved in each round (the machine is
    shared: whichever ran in a quiet moment would otherwise win)."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, ts in zip(fns, times):
            t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return [min(ts) for ts in times]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    from tinygrad.renderer.isa import x86 as tx

    from x86gen.integrations import tinygrad as xg
    kernels, insns = collect()
    plain = [u for u in insns if u.arg not in xg.JUMPS and u.arg is not tx.X86Ops.RET]
    enc_t, enc_x = tx.encodings, xg.encode_uop
    def tiny(): [enc_t[u.arg](u) for u in insns]
    def x86gen_():
        for u in plain:
            _f, enc, ops = enc_x(u)
            enc(*ops)
    tiny(); x86gen_()
    t_tiny, t_x = (t / n for t, n in zip(best((tiny, x86gen_), args.repeat), (len(insns), len(plain))))
    ren = xg.X86Renderer.__new__(xg.X86Renderer)
    ren.options = {}
    def render_tiny(): [tx.X86Renderer.render(ren, k) for k in kernels]
    def render_x(): [xg.X86Renderer.render(ren, k) for k in kernels]
    r_tiny, r_x = (t / len(insns) for t in best((render_tiny, render_x), args.repeat))
    print(f"{len(kernels)} kernels, {len(insns)} instructions ({len(plain)} with operands), best of {args.repeat}")
    print(f"per instruction, encode:  tinygrad {t_tiny * 1e6:.2f} us   x86gen integration {t_x * 1e6:.2f} us   ({t_tiny / t_x:.2f}x)")
    print(f"per instruction, render:  tinygrad {r_tiny * 1e6:.2f} us   x86gen integration {r_x * 1e6:.2f} us   ({r_tiny / r_x:.2f}x)")
    # bytecode written as usual (into a temporary prefix, not the source tree), so start-up is measured as users see it
    pyc = tempfile.mkdtemp()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""), "PYTHONPYCACHEPREFIX": pyc}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-c", STARTUP], env={**env, "X86GEN_CACHE_DIR": ""}, check=True, capture_output=True)
    def startup(cache: str, n: int) -> tuple[float, str]:
        outs = [subprocess.run([sys.executable, "-c", STARTUP], env={**env, "X86GEN_CACHE_DIR": cache}, capture_output=True, text=True,
                               check=True).stdout.split() for _ in range(n)]
        return min(float(o[0]) for o in outs), outs[0][1]
    with tempfile.TemporaryDirectory() as cache:
        for label, n in (("cold code cache", 1), ("warm code cache", 5)):
            t, forms = startup(cache, n)
            print(f"start-up per process ({label}): import integration + build {forms} forms' encoders {t * 1e3:.1f} ms")
    t, forms = startup("", 3)
    print(f"start-up per process (no code cache): import integration + build {forms} forms' encoders {t * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
