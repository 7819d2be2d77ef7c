"""Mem's cached construction: the precomputed (base, index, scale) shapes give the SDM special-case
encodings, do not depend on whether the cache is cold or warm, and never cache a rejected operand."""
from __future__ import annotations

import pytest

from x86gen import ImmediateRangeError, OperandError
from x86gen.memory import _SHAPES, Mem
from x86gen.registers import eax, eip, esp, k1, mm1, r9, r12, r13, rax, rbp, rbx, rcx, rip, rsp, xmm0, xmm4, ymm12

ATTRS = ("base", "index", "scale", "disp", "size", "label", "sig", "modrm", "tail", "rex", "vxb")

# (args, modrm mod/rm bits, tail, rex, vxb)
CASES = [
    ((rax,), 0x00, b"", 0, 0x60),
    ((rax, None, 1, -128), 0x40, b"\x80", 0, 0x60),
    ((rax, None, 1, 128), 0x80, b"\x80\x00\x00\x00", 0, 0x60),
    ((rax, rbx, 4, 16, 32), 0x44, b"\x98\x10", 0, 0x60),
    ((rax, rbx, 4, -(1 << 31)), 0x84, b"\x98\x00\x00\x00\x80", 0, 0x60),
    ((rbp,), 0x45, b"\x00", 0, 0x60),                      # rbp/r13 base: no mod=00 form, disp8 0
    ((r13, None, 1, 0, 64), 0x45, b"\x00", 1, 0x40),
    ((rsp,), 0x04, b"\x24", 0, 0x60),                      # rsp/r12 base: SIB with no index
    ((r12, r9, 8, 1), 0x44, b"\xcc\x01", 3, 0x00),
    ((rip, None, 1, 0, 64), 0x05, b"\x00\x00\x00\x00", 0, 0x60),
    ((rip, None, 1, -1), 0x05, b"\xff\xff\xff\xff", 0, 0x60),
    ((None, rbx, 2, 0), 0x04, b"\x5d\x00\x00\x00\x00", 0, 0x60),   # no base: SIB base=101, disp32
    ((None, None, 1, 0x1234), 0x04, b"\x25\x34\x12\x00\x00", 0, 0x60),
    # VSIB (SDM Vol.2 2.3.12): xmm4 is an index (SIB.index = 100 means "no index" only for a GPR); ymm12: VEX.X̄ = 0
    ((rax, xmm4, 4, 0x10, 32), 0x44, b"\xa0\x10", 0, 0x60),
    ((None, ymm12, 8, 0), 0x04, b"\xe5\x00\x00\x00\x00", 2, 0x20),
]


@pytest.mark.parametrize("args, modrm, tail, rex, vxb", CASES)
def test_special_case_encodings_cold_and_warm(args, modrm, tail, rex, vxb):
    _SHAPES.clear()
    cold = Mem(*args)
    warm = Mem(*args)
    for m in (cold, warm):
        assert (m.modrm, m.tail, m.rex, m.vxb) == (modrm, tail, rex, vxb)
    assert [getattr(cold, a) for a in ATTRS] == [getattr(warm, a) for a in ATTRS]
    assert cold == warm and hash(cold) == hash(warm)


@pytest.mark.parametrize("args, exc, message", [
    ((eax, rcx), OperandError, "memory operand mixes 32- and 64-bit address registers (eax and rcx)"),
    ((xmm0,), OperandError, "memory base must be a 64-bit register or rip, not xmm0"),
    ((rax, eax), OperandError, "memory operand mixes 32- and 64-bit address registers (rax and eax)"),
    ((rip, eax), OperandError, "mixes 32- and 64-bit address registers (rip and eax)"),
    ((eip, eax), OperandError, "rip-relative addressing takes no index register"),
    ((eax, esp), OperandError, "esp cannot be an index register"),
    ((rax, rsp), OperandError, "rsp cannot be an index register"),
    ((rip, rax), OperandError, "rip-relative addressing takes no index register"),
    ((rip, xmm0), OperandError, "rip-relative addressing takes no index register"),
    ((rax, mm1), OperandError, "memory index must be a 64-bit general register, not mm1"),
    ((rax, k1), OperandError, "memory index must be a 64-bit general register, not k1"),
    ((rax, rbx, 3), OperandError, "scale must be 1, 2, 4 or 8, not 3"),
    ((rax, None, 2), OperandError, "scale 2 without an index register"),
    ((rax, None, 1, 1 << 31), ImmediateRangeError, "displacement 0x80000000 does not fit"),
    ((rip, None, 1, -(1 << 31) - 1), ImmediateRangeError, "displacement -0x80000001 does not fit"),
    ((None, None, 1, 1 << 64), ImmediateRangeError, "absolute address 0x10000000000000000 does not fit in 64 bits"),
    ((None, rax, 1, 1 << 40), ImmediateRangeError, "does not fit in a signed 32-bit field"),
    ((rax, rbx, 1, 0, 24), OperandError, "unknown memory operand size 24 bits"),
    ((rax, None, 1, 0.0), OperandError, "memory operand displacement must be an integer, not 0.0"),
    ((rax, None, 1, 8, 32.0), OperandError, "memory operand size must be an integer, not 32.0"),
])
def test_rejections_are_never_cached(args, exc, message):
    for _ in range(2):   # the second time finds whatever the first left in the cache
        with pytest.raises(exc) as ei:
            Mem(*args)
        assert message in str(ei.value)


def test_integer_like_displacement_and_size():
    class Index:   # like a numpy integer: not an int, but has __index__
        def __init__(self, v): self.v = v
        def __index__(self): return self.v
    m = Mem(rax, None, 1, Index(0x1000), Index(32))
    assert (m.disp, m.size, m.sig, m.tail) == (0x1000, 32, "m32", b"\x00\x10\x00\x00")
    assert m.disp.__class__ is int and m.size.__class__ is int
