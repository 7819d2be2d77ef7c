"""AVX-512 code built with x86gen's structured API (masks, zeroing, broadcast) and run through x86gen.jit.

The loops handle their tail with a mask instead of a scalar epilogue: k1 = (1 << (n - i)) - 1, masked loads (whose
masked-off elements do not fault, SDM Vol.1 15.6.1 "memory fault suppression"), merge-masked arithmetic and a masked
store. Results are compared bit for bit with a plain-Python reference that rounds to float32 where the CPU does.
The tests that run code skip, with the reason, on a CPU without AVX-512F (or an OS that does not enable its state:
`x86gen.jit.cpu_features` reads CPUID and XCR0); the programs' bytes are checked against iced-x86 everywhere.
"""
from __future__ import annotations

import array
import ctypes
import random
import struct

import iced_x86 as I
import pytest

from x86gen import Assembler, dword, jit, zmmword
from x86gen.registers import eax, k1, k2, r8, r9d, r10, rax, rcx, rdi, rdx, rsi, rsp, xmm0, zmm0, zmm1, zmm2

pytestmark = pytest.mark.skipif(not jit.available(), reason="x86gen.jit needs Linux on x86-64")

I64, F32 = ctypes.c_int64, ctypes.c_float
P_F32 = ctypes.POINTER(ctypes.c_float)
P_I32 = ctypes.POINTER(ctypes.c_int32)
NS = list(range(0, 40)) + [63, 64, 65, 100, 255, 256, 257, 1000, 1001, 1002, 1003]   # every tail length, and larger n


def needs_avx512():
    feats = jit.cpu_features() if jit.available() else frozenset()
    return pytest.mark.skipif("AVX512F" not in feats,
                              reason=f"CPU (or OS) lacks AVX512F, so AVX-512 code cannot run here (has: {' '.join(sorted(feats))})")


def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _tail_mask(a: Assembler) -> None:
    """k1 = (1 << rcx) - 1 for rcx = 1..15, the lanes of the tail (kmovw k1, r32: VEX.L0.0F.W0 92 /r)."""
    a.mov(r9d, 1)
    a.shl(r9d, rcx.sized(8))   # shl r9d, cl
    a.dec(r9d)
    a.kmovw(k1, r9d)


def build_saxpy512() -> Assembler:
    """void saxpy(int64 n /*rdi*/, float a /*xmm0*/, float *x /*rsi*/, float *y /*rdx*/): y[i] = a*x[i] + y[i].

    16 lanes at a time with vfmadd231ps and a broadcast of ``a`` from memory (``dword ptr [rsp-4]{1to16}``, the red
    zone), the last 0-15 lanes with a mask."""
    a = Assembler()
    vec, tail, done = a.label("vec"), a.label("tail"), a.label("done")
    alpha = dword(rsp, disp=-4)
    a.vmovss(alpha, xmm0)                   # a, to broadcast from memory
    a.xor(eax, eax)                         # i = 0
    a.mov(r8, rdi)
    a.and_(r8, -16)                         # n rounded down to a multiple of 16
    a.je(tail)
    a.bind(vec)
    a.vmovups(zmm1, zmmword(rsi, rax, 4))
    a.vmovups(zmm2, zmmword(rdx, rax, 4))
    a.vfmadd231ps(zmm2, zmm1, alpha.bcst)  # y + x*a
    a.vmovups(zmmword(rdx, rax, 4), zmm2)
    a.add(rax, 16)
    a.cmp(rax, r8)
    a.jl(vec)
    a.bind(tail)
    a.mov(rcx, rdi)
    a.sub(rcx, rax)                         # 0..15 lanes left
    a.je(done)
    _tail_mask(a)
    a.vmovups(zmm1.k(k1).z, zmmword(rsi, rax, 4))    # masked-off lanes: zero, and no fault past the end
    a.vmovups(zmm2.k(k1).z, zmmword(rdx, rax, 4))
    a.vfmadd231ps(zmm2.k(k1), zmm1, alpha.bcst)
    a.vmovups(zmmword(rdx, rax, 4).k(k1), zmm2)      # masked store: only the tail's lanes are written
    a.bind(done)
    a.vzeroupper()
    a.ret()
    return a


def build_sum512() -> Assembler:
    """float sum(int64 n /*rdi*/, float *x /*rsi*/): 16 lane sums (the tail added with merge-masking, so the
    masked-off lanes keep their sums), then the lanes added in order 0..15."""
    a = Assembler()
    vec, tail, reduce_ = a.label("vec"), a.label("tail"), a.label("reduce")
    a.vpxord(zmm0, zmm0, zmm0)
    a.xor(eax, eax)
    a.mov(r8, rdi)
    a.and_(r8, -16)
    a.je(tail)
    a.bind(vec)
    a.vaddps(zmm0, zmm0, zmmword(rsi, rax, 4))
    a.add(rax, 16)
    a.cmp(rax, r8)
    a.jl(vec)
    a.bind(tail)
    a.mov(rcx, rdi)
    a.sub(rcx, rax)
    a.je(reduce_)
    _tail_mask(a)
    a.vaddps(zmm0.k(k1), zmm0, zmmword(rsi, rax, 4))  # merge: lanes past n keep their sums (and do not fault)
    a.bind(reduce_)
    a.vmovups(zmmword(rsp, disp=-64), zmm0)           # the 16 lane sums in the red zone
    a.vmovss(xmm0, dword(rsp, disp=-64))
    for j in range(1, 16): a.vaddss(xmm0, xmm0, dword(rsp, disp=-64 + 4 * j))
    a.vzeroupper()
    a.ret()
    return a


def build_gather512() -> Assembler:
    """void gather(int64 n /*rdi*/, float *table /*rsi*/, int32 *idx /*rdx*/, float *out /*rcx*/): out[i] = table[idx[i]].

    16 lanes at a time with vgatherdps (a zmm of dword indices, SDM Vol.2 VGATHERDPS: the mask says which lanes to
    load, and the instruction clears it as it goes, so it is set again before each gather); the tail with k1 = the
    tail's lanes, a copy of it in k2 for the masked store."""
    a = Assembler()
    vec, tail, done = a.label("vec"), a.label("tail"), a.label("done")
    a.mov(r10, rcx)                         # out (rcx is the tail's shift count below)
    a.xor(eax, eax)
    a.mov(r8, rdi)
    a.and_(r8, -16)
    a.je(tail)
    a.bind(vec)
    a.vmovdqu32(zmm1, zmmword(rdx, rax, 4))            # 16 indices
    a.kxnorw(k1, k1, k1)                               # all 16 lanes
    a.vgatherdps(zmm0.k(k1), dword(rsi, zmm1, 4))     # zmm0[j] = table[zmm1[j]]
    a.vmovups(zmmword(r10, rax, 4), zmm0)
    a.add(rax, 16)
    a.cmp(rax, r8)
    a.jl(vec)
    a.bind(tail)
    a.mov(rcx, rdi)
    a.sub(rcx, rax)
    a.je(done)
    _tail_mask(a)
    a.kmovw(k2, k1)                                    # the gather clears k1
    a.vmovdqu32(zmm1.k(k1).z, zmmword(rdx, rax, 4))   # the tail's indices; no fault past the end
    a.vgatherdps(zmm0.k(k1), dword(rsi, zmm1, 4))     # masked-off lanes: nothing loaded
    a.vmovups(zmmword(r10, rax, 4).k(k2), zmm0)
    a.bind(done)
    a.vzeroupper()
    a.ret()
    return a


def saxpy_reference(alpha: float, x, y) -> list[float]:
    """float32 fused multiply-add: a*x + y rounded once (exact in a double for the data below)."""
    return [f32(alpha * xi + yi) for xi, yi in zip(x, y)]


def sum_reference(x) -> float:
    """The kernel's order: lane j sums x[j], x[j+16], … with float32 rounding at each add, then lanes 0..15."""
    lanes = [0.0] * 16
    for i, v in enumerate(x): lanes[i % 16] = f32(lanes[i % 16] + v)
    s = lanes[0]
    for v in lanes[1:]: s = f32(s + v)
    return s


def _buf(arr, n):
    return (ctypes.c_float * n).from_buffer(arr) if n else (ctypes.c_float * 1)()


@needs_avx512()
@pytest.mark.parametrize("n", NS)
def test_saxpy_zmm_masked_tail(n):
    check_saxpy(build_saxpy512().jit(None, (I64, F32, P_F32, P_F32), name="saxpy512"), n)


def check_saxpy(fn, n: int) -> None:
    rnd = random.Random(n)
    x = array.array("f", [rnd.randint(-4096, 4096) / 64 for _ in range(n)] + [1e30] * 16)   # guard lanes after n
    y = array.array("f", [rnd.randint(-4096, 4096) / 64 for _ in range(n)] + [7.0] * 16)
    alpha = 1.75
    expect = saxpy_reference(alpha, x[:n], y[:n]) + [7.0] * 16
    fn(n, alpha, _buf(x, n + 16), _buf(y, n + 16))
    assert list(y) == expect   # bit-identical, and the masked store left the guard lanes alone


@needs_avx512()
@pytest.mark.parametrize("n", NS)
def test_sum_zmm_masked_tail(n):
    check_sum(build_sum512().jit(F32, (I64, P_F32), name="sum512"), n)


def check_sum(fn, n: int) -> None:
    rnd = random.Random(1000 + n)
    x = array.array("f", [f32(rnd.uniform(-100, 100)) for _ in range(n)] + [float("nan")] * 16)   # NaN guards: must not be read
    got = fn(n, _buf(x, n + 16))
    assert struct.pack("<f", got) == struct.pack("<f", sum_reference(x[:n]))


@needs_avx512()
@pytest.mark.parametrize("n", NS)
def test_gather_zmm_masked_tail(n):
    check_gather(build_gather512().jit(None, (I64, P_F32, P_I32, P_F32), name="gather512"), n)


def check_gather(fn, n: int) -> None:
    rnd = random.Random(2000 + n)
    table = array.array("f", [f32(rnd.uniform(-1e6, 1e6)) for _ in range(997)])
    idx = array.array("i", [rnd.randrange(len(table)) for _ in range(n)] + [1 << 30] * 16)   # guards: would fault if read
    out = array.array("f", [0.0] * n + [-3.0] * 16)
    fn(n, _buf(table, len(table)), (ctypes.c_int32 * (n + 16)).from_buffer(idx), _buf(out, n + 16))
    assert list(out) == [table[i] for i in idx[:n]] + [-3.0] * 16


@needs_avx512()
@pytest.mark.parametrize("program", ["saxpy", "sum", "gather"])
def test_every_n_from_0_to_1003(program):
    """Each program, built and mapped once, run for every n = 0 … 1003 (the parametrized tests above take a sample, which
    the Bochs test shares): every tail length at every alignment of the 16-lane loop."""
    build, types, check = {"saxpy": (build_saxpy512, (None, (I64, F32, P_F32, P_F32)), check_saxpy),
                           "sum": (build_sum512, (F32, (I64, P_F32)), check_sum),
                           "gather": (build_gather512, (None, (I64, P_F32, P_I32, P_F32)), check_gather)}[program]
    fn = build().jit(*types, name=f"{program}512")
    for n in range(1004): check(fn, n)


def test_avx512_programs_decode_as_built():
    """Whatever the CPU: iced-x86 decodes the kernels' bytes to the instructions asked for, masks and broadcasts
    included (so a skip above hides no encoding problem)."""
    for build, n_masked, n_bcst in ((build_saxpy512, 4, 2), (build_sum512, 1, 0), (build_gather512, 3, 0)):
        code = build().assemble()
        insns = list(I.Decoder(64, code))
        assert sum(i.len for i in insns) == len(code) and all(i.code != I.Code.INVALID for i in insns)
        masked = [i for i in insns if i.op_mask == I.Register.K1]
        assert len(masked) == n_masked and sum(i.is_broadcast for i in insns) == n_bcst
        assert sum(i.zeroing_masking for i in masked) == {build_saxpy512: 2, build_sum512: 0, build_gather512: 1}[build]
    gathers = [i for i in I.Decoder(64, build_gather512().assemble()) if i.mnemonic == I.Mnemonic.VGATHERDPS]
    assert len(gathers) == 2 and all(i.op_mask == I.Register.K1 and i.memory_index == I.Register.ZMM1 for i in gathers)
