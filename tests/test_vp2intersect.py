"""vp2intersectd/q (SDM Vol.2 VP2INTERSECTD/VP2INTERSECTQ): the destination is a pair of mask registers, k(2n) and
k(2n+1), named by its even register. Bytes from iced-x86 1.21 (GNU as 2.40 gives the same); an odd k is refused, since
the CPU ignores ModRM.reg's low bit and the oracles disagree about it (iced and GNU as encode it as written, llvm-mc 14
turns k3 into k2). The JIT test runs it on a CPU with AVX512_VP2INTERSECT and skips elsewhere, saying why."""
from __future__ import annotations

import ctypes
import random

import pytest

import x86gen
from x86gen import Assembler, OperandError, dword, jit, qword, zmmword
from x86gen.registers import REGISTERS, eax, k2, k3, k4, k6, rdi, rdx, rsi, xmm1, ymm1, zmm0, zmm1, zmm2

FEATURES = jit.cpu_features() if jit.available() else frozenset()


@pytest.mark.parametrize("ops,text,want", [
    (("vp2intersectd", k2, zmm1, zmm2), "vp2intersectd k2, zmm1, zmm2", "62f2774868d2"),
    (("vp2intersectq", k4, xmm1, qword(REGISTERS["rax"]).bcst), "vp2intersectq k4, xmm1, qword ptr [rax]{1to2}", "62f2f7186820"),
    (("vp2intersectd", k6, ymm1, dword(REGISTERS["rax"]).bcst), "vp2intersectd k6, ymm1, dword ptr [rax]{1to8}", "62f277386830"),
])
def test_kp1_bytes(ops, text, want):
    """The structured API and the text (GNU as's spelling) give iced's bytes."""
    assert x86gen.encode(*ops).hex() == want
    assert x86gen.assemble(text).hex() == want


@pytest.mark.parametrize("k", ["k1", "k3", "k5", "k7"])
def test_kp1_odd_k_refused(k):
    with pytest.raises(OperandError, match="k0, k2, k4 or k6"):
        x86gen.encode("vp2intersectd", REGISTERS[k], zmm1, zmm2)
    with pytest.raises(OperandError, match="k0, k2, k4 or k6"):
        x86gen.encode("vp2intersectq", REGISTERS[k], xmm1, qword(REGISTERS["rax"]).bcst)
    with pytest.raises(x86gen.EncodeError):
        x86gen.assemble(f"vp2intersectd {k}, zmm1, zmm2")


def _reference(a, b):
    ka = sum(1 << i for i, x in enumerate(a) if x in b)
    kb = sum(1 << j for j, y in enumerate(b) if y in a)
    return ka, kb


@pytest.mark.skipif("AVX512_VP2INTERSECT" not in FEATURES,
                    reason=f"CPU (or OS) lacks AVX512_VP2INTERSECT (has: {' '.join(sorted(FEATURES))})")
def test_vp2intersectd_runs():
    """uint64 f(int32 *a, int32 *b): k2 | k3 << 16 after vp2intersectd k2, zmm0, zmm1 (k2: lanes of a found in b; k3:
    lanes of b found in a), compared with a Python reference."""
    a = Assembler()
    a.vmovdqu32(zmm0, zmmword(rdi))
    a.vmovdqu32(zmm1, zmmword(rsi))
    a.vp2intersectd(k2, zmm0, zmm1)
    a.kmovw(eax, k2)
    a.kmovw(REGISTERS["edx"], k3)
    a.shl(rdx, 16)
    a.or_(REGISTERS["rax"], rdx)
    a.vzeroupper()
    a.ret()
    fn = a.jit(ctypes.c_uint64, (ctypes.c_void_p, ctypes.c_void_p), name="vp2intersectd")
    rnd = random.Random(5)
    for _ in range(50):
        xa = [rnd.randrange(40) for _ in range(16)]
        xb = [rnd.randrange(40) for _ in range(16)]
        ba, bb = (ctypes.c_int32 * 16)(*xa), (ctypes.c_int32 * 16)(*xb)
        got = fn(ctypes.addressof(ba), ctypes.addressof(bb))
        ka, kb = _reference(xa, xb)
        assert (got & 0xFFFF, got >> 16) == (ka, kb), (xa, xb)
