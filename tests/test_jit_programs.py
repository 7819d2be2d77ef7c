"""Whole functions built with x86gen.Assembler (or program text) and run through x86gen.jit.

Results are checked against plain Python (array/ctypes; no numpy needed). AVX2/FMA tests are skipped,
with a message, on CPUs without those features.
"""
from __future__ import annotations

import array
import ctypes
import random
import struct

import iced_x86 as I
import pytest

import x86gen
from x86gen import Assembler, jit, mem
from x86gen.registers import eax, ecx, edi, rax, rcx, rdi, rdx, rsi, xmm0, xmm1, xmm2, ymm0, ymm1, ymm2

pytestmark = pytest.mark.skipif(not jit.available(), reason="x86gen.jit needs Linux on x86-64")

I64, F32, F64 = ctypes.c_int64, ctypes.c_float, ctypes.c_double
P_F32 = ctypes.POINTER(ctypes.c_float)


def needs(*features):
    missing = [f for f in features if f not in jit.cpu_features()]
    return pytest.mark.skipif(bool(missing), reason=f"CPU lacks {', '.join(missing)} (has: {' '.join(sorted(jit.cpu_features()))})")


def f32(x: float) -> float:
    """Round to float32."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


# ---- integer loop --------------------------------------------------------------------------------

def build_sum() -> Assembler:
    """int64 sum(int64 n) = 1 + 2 + ... + n (0 for n <= 0)."""
    a = Assembler()
    loop, done = a.label("loop"), a.label("done")
    a.xor(eax, eax)
    a.test(rdi, rdi)
    a.jle(done)
    a.bind(loop)
    a.add(rax, rdi)
    a.dec(rdi)
    a.jne(loop)
    a.bind(done)
    a.ret()
    return a


def test_sum_loop():
    fn = build_sum().jit(I64, (I64,), name="sum")
    for n in (0, 1, 2, 10, 1000, 123456, -5):
        assert fn(n) == (n * (n + 1) // 2 if n > 0 else 0)


def test_sum_loop_from_text():
    code = x86gen.assemble("""
        .intel_syntax noprefix
        .text
    sum:                        # int64 sum(int64 n)
        xor eax, eax
        test rdi, rdi
        jle .Ldone
    .Lloop:
        add rax, rdi
        dec rdi
        jnz .Lloop
    .Ldone:
        ret
    """)
    assert code == build_sum().assemble()
    fn = jit.compile(code, I64, (I64,))
    assert fn(100) == 5050


# ---- scalar float with a constant pool -------------------------------------------------------------

@needs("AVX", "FMA")
def test_scalar_float_polynomial():
    """double p(double x) = ((c3*x + c2)*x + c1)*x + c0, Horner with vfmadd213sd and RIP-relative constants."""
    coef = [0.5, -1.25, 2.0, 3.0]           # c0..c3
    a = Assembler()
    c = a.label("coef")
    a.vmovapd(xmm1, xmm0)                   # x
    a.vmovsd(xmm0, c.mem(64, disp=24))      # c3
    for k in (2, 1, 0):
        a.vfmadd213sd(xmm0, xmm1, c.mem(64, disp=8 * k))   # xmm0 = xmm0*x + c_k
    a.ret()
    a.align(8)
    a.bind(c)
    a.dq(*coef)
    fn = a.jit(F64, (F64,))
    for x in (0.0, 1.0, -2.5, 3.75, 1e3):
        expect = ((coef[3] * x + coef[2]) * x + coef[1]) * x + coef[0]
        assert fn(x) == pytest.approx(expect, rel=1e-15, abs=1e-15)


@needs("AVX")
def test_scalar_float_mixed_args():
    """float f(float x, float y) = x*y + 1.0f - y/4 (vmulss/vaddss/vdivss, a float32 pool)."""
    a = Assembler()
    one, four = a.label("one"), a.label("four")
    a.vmulss(xmm2, xmm0, xmm1)
    a.vaddss(xmm2, xmm2, one.mem(32))
    a.vdivss(xmm1, xmm1, four.mem(32))
    a.vsubss(xmm0, xmm2, xmm1)
    a.ret()
    a.align(4)
    a.bind(one); a.dd(1.0)
    a.bind(four); a.dd(4.0)
    fn = a.jit(F32, (F32, F32))
    for x, y in ((1.5, 2.0), (-3.0, 0.25), (100.0, -8.0)):
        assert fn(x, y) == f32(f32(f32(x * y) + 1.0) - f32(y / 4))


# ---- AVX2 SAXPY with a scalar tail -------------------------------------------------------------------

def build_saxpy() -> Assembler:
    """void saxpy(int64 n, float a, float *x, float *y): y[i] = a*x[i] + y[i].

    8 lanes at a time with vfmadd213ps, then a scalar tail with vfmadd213ss.
    """
    a = Assembler()
    vec, tail, tail_loop, done = (a.label(n) for n in ("vec", "tail", "tail_loop", "done"))
    a.vbroadcastss(ymm1, xmm0)              # a in every lane
    a.xor(eax, eax)                         # i = 0
    a.mov(rcx, rdi)
    a.and_(rcx, -8)                         # n rounded down to a multiple of 8
    a.je(tail)
    a.bind(vec)
    a.vmovups(ymm2, mem(rsi, rax, 4, size=256))
    a.vfmadd213ps(ymm2, ymm1, mem(rdx, rax, 4, size=256))   # a*x + y
    a.vmovups(mem(rdx, rax, 4, size=256), ymm2)
    a.add(rax, 8)
    a.cmp(rax, rcx)
    a.jl(vec)
    a.bind(tail)
    a.cmp(rax, rdi)
    a.jge(done)
    a.bind(tail_loop)
    a.vmovss(xmm2, mem(rsi, rax, 4, size=32))
    a.vfmadd213ss(xmm2, xmm0, mem(rdx, rax, 4, size=32))
    a.vmovss(mem(rdx, rax, 4, size=32), xmm2)
    a.inc(rax)
    a.cmp(rax, rdi)
    a.jl(tail_loop)
    a.bind(done)
    a.vzeroupper()
    a.ret()
    return a


def saxpy_reference(alpha: float, x, y):
    """float32 fused multiply-add: round(a*x + y) once (the exact value fits a double here, see the data)."""
    return [f32(alpha * xi + yi) for xi, yi in zip(x, y)]


@needs("AVX2", "FMA")
@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 16, 100, 1003])
def test_saxpy_avx2(n):
    fn = build_saxpy().jit(None, (I64, F32, P_F32, P_F32), name="saxpy")
    rnd = random.Random(n)
    # multiples of 1/64 in a small range: a*x + y is exact in double, so the reference is the fma result
    x = array.array("f", [rnd.randint(-4096, 4096) / 64 for _ in range(n)])
    y = array.array("f", [rnd.randint(-4096, 4096) / 64 for _ in range(n)])
    alpha = 1.75
    expect = saxpy_reference(alpha, x, y)
    xb = (ctypes.c_float * max(n, 1)).from_buffer(x) if n else (ctypes.c_float * 1)()
    yb = (ctypes.c_float * max(n, 1)).from_buffer(y) if n else (ctypes.c_float * 1)()
    fn(n, alpha, xb, yb)
    assert list(y) == expect
    assert list(x) == list(array.array("f", x))   # x untouched


@needs("AVX2", "FMA")
def test_saxpy_random_floats_close():
    n = 1000
    rnd = random.Random(1)
    x = array.array("f", [rnd.uniform(-1e3, 1e3) for _ in range(n)])
    y = array.array("f", [rnd.uniform(-1e3, 1e3) for _ in range(n)])
    alpha = f32(0.3)
    expect = saxpy_reference(alpha, x, y)
    fn = build_saxpy().jit(None, (I64, F32, P_F32, P_F32))
    fn(n, alpha, (ctypes.c_float * n).from_buffer(x), (ctypes.c_float * n).from_buffer(y))
    assert list(y) == pytest.approx(expect, rel=1e-6)


@needs("AVX2", "FMA")
def test_saxpy_with_numpy_if_available():
    np = pytest.importorskip("numpy", reason="numpy not installed: the array/ctypes tests cover SAXPY")
    n = 517
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    expect = (np.float64(np.float32(2.5)) * x.astype(np.float64) + y.astype(np.float64)).astype(np.float32)
    fn = build_saxpy().jit(None, (I64, F32, P_F32, P_F32))
    fn(n, 2.5, x.ctypes.data_as(P_F32), y.ctypes.data_as(P_F32))
    np.testing.assert_allclose(y, expect, rtol=1e-6)


# ---- a loop whose branch needs relaxation ---------------------------------------------------------------

def build_big_loop(body: int = 200) -> tuple[Assembler, int]:
    """int64 f(int64 n): n passes over `body` add instructions; the back branch spans > 128 bytes."""
    a = Assembler()
    top, done = a.label("top"), a.label("done")
    a.xor(eax, eax)
    a.test(rdi, rdi)
    a.jle(done)
    a.bind(top)
    per_pass = 0
    for i in range(body):
        k = (i % 7) + 1
        if i % 3 == 0: a.add(rax, k)
        elif i % 3 == 1: a.lea(rax, mem(rax, disp=k))
        else: a.sub(rax, -k)
        per_pass += k
    a.dec(rdi)
    a.jne(top)
    a.bind(done)
    a.ret()
    return a, per_pass


def test_loop_needing_relaxation_runs_and_matches_iced_length():
    a, per_pass = build_big_loop(200)
    code = a.assemble()
    sizes = {m: s for m, _, s in a.branch_sizes()}
    assert sizes == {"jle": 6, "jne": 6}          # both branches span the 200-instruction body
    be = I.BlockEncoder(64)
    be.add_many(list(I.Decoder(64, code)))
    assert len(code) == len(be.encode(0))
    fn = jit.compile(code, I64, (I64,))
    for n in (0, 1, 3, 1000):
        assert fn(n) == n * per_pass


@pytest.mark.parametrize("pad, short", [(0, True), (1, False)])
def test_loop_at_the_rel8_limit_runs(pad, short):
    """Loop body sized so the back branch displacement is exactly -128 (short jne), or -129 (near jne)."""
    a = Assembler()
    top, done = a.label("top"), a.label("done")
    a.xor(eax, eax); a.test(rdi, rdi); a.jle(done)
    a.bind(top)
    for _ in range(30): a.add(rax, 1)             # 30 * 4 = 120 bytes
    a.inc(eax)                                    # 2 bytes
    for _ in range(1 + pad): a.nop()              # 1 (+1) bytes
    a.dec(rdi)                                    # 3 bytes: jne starts 126 (127) bytes after top
    a.jne(top)
    a.bind(done); a.ret()
    code = a.assemble()
    jne = [i for i in I.Decoder(64, code) if i.mnemonic == I.Mnemonic.JNE][0]
    assert jne.len == (2 if short else 6)
    assert jne.near_branch_target == a.address_of(top)
    assert jne.near_branch_target - (jne.ip + 2) == -128 - pad     # the displacement a short jne would have
    fn = jit.compile(code, I64, (I64,))
    assert fn(10) == 310 and fn(0) == 0


def test_counted_loop_with_ecx():
    """Nested loops with two labels each; edi/ecx counters."""
    a = Assembler()
    outer, inner, done = a.label(), a.label(), a.label()
    a.xor(eax, eax)
    a.test(edi, edi); a.jle(done)
    a.bind(outer)
    a.mov(ecx, edi)
    a.bind(inner)
    a.add(eax, ecx)
    a.dec(ecx)
    a.jne(inner)
    a.dec(edi)
    a.jne(outer)
    a.bind(done)
    a.ret()
    fn = a.jit(ctypes.c_int32, (ctypes.c_int32,))
    assert fn(10) == sum(k * (k + 1) // 2 for k in range(1, 11))
    assert ymm0 is x86gen.ymm0 and rcx is x86gen.rcx


@needs("AVX2", "FMA")
def test_saxpy_example_runs():
    """examples/saxpy.py (the same kernel, its instructions chosen by x86gen.isel) runs and checks itself."""
    import runpy
    from pathlib import Path
    example = runpy.run_path(str(Path(__file__).resolve().parents[1] / "examples" / "saxpy.py"))
    assert example["main"](["saxpy.py", "100"]) == 0
