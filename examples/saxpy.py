#!/usr/bin/env python3
"""Build an AVX2 SAXPY kernel with x86gen.Assembler, run it through x86gen.jit and check it.

    void saxpy(int64 n, float a, float *x, float *y)    # y[i] = a * x[i] + y[i]

8 lanes per iteration (vfmadd213ps), then a scalar tail (vfmadd213ss). The instructions come from
`x86gen.isel` (tinygrad-style ops: LOAD/STORE/BROADCAST/MULACC for float32 at widths 8 and 1).
Run from a checkout:

    PYTHONPATH=src python examples/saxpy.py [n]
"""
from __future__ import annotations

import array
import ctypes
import random
import struct
import sys

import x86gen
from x86gen import Assembler, isel, jit, mem
from x86gen.registers import eax, rax, rcx, rdi, rdx, rsi, xmm0, xmm2, ymm1, ymm2


def choose(op: str, width: int) -> tuple[str, str]:
    """(mnemonic, a note) for a float32 generic op at this vector width, from the isel table."""
    form_id = isel.select(op, "float32", width).form
    return x86gen.get_form(form_id).mnemonic, f"{op:9s} x{width}: {form_id}"


def build() -> tuple[Assembler, list[str]]:
    ld8, c1 = choose("LOAD", 8)
    st8, c2 = choose("STORE", 8)
    bc8, c3 = choose("BROADCAST", 8)
    fma8, c4 = choose("MULACC", 8)      # d = d*s1 + s2 (213 order): x*a + y
    ld1, c5 = choose("LOAD", 1)
    st1, c6 = choose("STORE", 1)
    fma1, c7 = choose("MULACC", 1)
    a = Assembler(listing=True)   # (main prints its listing)
    vec, tail, tail_loop, done = (a.label(n) for n in ("vec", "tail", "tail_loop", "done"))
    a.emit(bc8, ymm1, xmm0)                              # a in all 8 lanes
    a.xor(eax, eax)                                      # i = 0
    a.mov(rcx, rdi)
    a.and_(rcx, -8)                                      # n8 = n & ~7
    a.je(tail)
    a.bind(vec)
    a.emit(ld8, ymm2, mem(rsi, rax, 4, size=256))        # x[i:i+8]
    a.emit(fma8, ymm2, ymm1, mem(rdx, rax, 4, size=256)) # * a + y[i:i+8]
    a.emit(st8, mem(rdx, rax, 4, size=256), ymm2)
    a.add(rax, 8)
    a.cmp(rax, rcx)
    a.jl(vec)
    a.bind(tail)
    a.cmp(rax, rdi)
    a.jge(done)
    a.bind(tail_loop)
    a.emit(ld1, xmm2, mem(rsi, rax, 4, size=32))
    a.emit(fma1, xmm2, xmm0, mem(rdx, rax, 4, size=32))
    a.emit(st1, mem(rdx, rax, 4, size=32), xmm2)
    a.inc(rax)
    a.cmp(rax, rdi)
    a.jl(tail_loop)
    a.bind(done)
    a.vzeroupper()
    a.ret()
    return a, [c1, c2, c3, c4, c5, c6, c7]


def f32(v: float) -> float:
    return struct.unpack("<f", struct.pack("<f", v))[0]


def main(argv: list[str]) -> int:
    n = int(argv[1]) if len(argv) > 1 else 1003
    a, choices = build()
    print("instruction selection:")
    for c in choices: print("  " + c)
    print(f"\nlisting ({a.size} bytes, {a.relaxation_passes} relaxation pass(es)):")
    print(a.listing())
    need = {"AVX2", "FMA"}
    if not jit.available() or not need <= jit.cpu_features():
        print(f"\ncannot run here: needs the JIT (Linux x86-64) and {', '.join(sorted(need))}")
        return 0
    saxpy = a.jit(None, (ctypes.c_int64, ctypes.c_float, ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_float)),
                  name="saxpy")
    rnd = random.Random(0)
    x = array.array("f", [rnd.uniform(-10, 10) for _ in range(n)])
    y = array.array("f", [rnd.uniform(-10, 10) for _ in range(n)])
    alpha = f32(2.5)
    expect = [f32(alpha * xi + yi) for xi, yi in zip(x, y)]   # fused: one rounding (the exact value fits a double)
    saxpy(n, alpha, (ctypes.c_float * n).from_buffer(x), (ctypes.c_float * n).from_buffer(y))
    worst = max((abs(g - e) / max(abs(e), 1e-30) for g, e in zip(y, expect)), default=0.0)
    exact = sum(g == e for g, e in zip(y, expect))
    ok = worst <= 1e-6
    print(f"\nsaxpy(n={n}, a={alpha}) via {saxpy!r}")
    print(f"  {exact}/{n} results bit-identical to the Python reference, worst relative error {worst:.2e}: {'OK' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
