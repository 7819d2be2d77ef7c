"""AVX10.2 kernels assembled by x86gen, run on an emulated CPU (the Bochs core in the PyPI package bochscpu-python),
compared bit for bit with Python models of the instructions' documented operation.

This machine's CPU has no AVX-512 or AVX10, and Debian's bochs (2.7) has no AVX10 CPU model; `bochscpu_harness`
says how the package's Bochs 3.0 core is given the AVX10.2 feature set. The models here are written from the
documents, not from the emulator's output:

* VDPBF16PS (SDM Vol.2 "VDPBF16PS"): per fp32 lane, acc += a.bf16[1]*b.bf16[1], then acc += a.bf16[0]*b.bf16[0],
  each an FP32 FMA with denormal inputs read as zero, tiny results flushed to zero, round to nearest even, MXCSR
  neither read nor written. A BF16 value is the upper 16 bits of an FP32 one, so the products are exact in FP32.
* VCVTTPS2DQS (Intel AVX10.2 spec, saturating conversions): truncate toward zero; NaN gives 0, values above
  2^31-1 give 0x7FFFFFFF and values below -2^31 give 0x80000000 (LLVM 22 lowers llvm.fptosi.sat, whose result is
  defined that way, to this one instruction).
* VMINMAXPS (Intel AVX10.2 spec): imm8[1:0] picks minimum, maximum, minimum magnitude, maximum magnitude (IEEE
  754-2019 operations, -0 < +0, equal magnitudes decided by the signed operation); imm8[4] = 0 propagates NaNs
  (SNaN of src1, SNaN of src2, QNaN of src1, QNaN of src2, quieted), 1 prefers the number; imm8[3:2] = 10 clears
  and 11 sets the sign of a non-NaN result (so the order of -0 and +0 is not observable
  here). The two other sign controls (00, 01) are read differently by Bochs and GCC's test model (00 = sign of
  src1) and by LLVM 22 (which emits imm8 0 for llvm.minimum), so the kernel uses 10 and 11 only, where the
  readings agree.
"""
from __future__ import annotations

import random
import struct
from fractions import Fraction

import bochscpu_harness as emu
import pytest

import x86gen
from x86gen.errors import UnknownMnemonicError

_REASON = emu.unavailable()
pytestmark = pytest.mark.skipif(_REASON is not None, reason=f"the emulator cannot run here: {_REASON}")

LANES = 16
ROUNDS = 6                      # cases per kernel, 16 lanes each


def assemble(text: str) -> bytes:
    """x86gen's bytes for `text`; skip while x86gen does not know an AVX10.2 mnemonic in it."""
    try:
        return bytes(x86gen.assemble(text))
    except UnknownMnemonicError as e:
        pytest.skip(f"x86gen does not assemble AVX10.2 yet: {e}")


# ---------------------------------------------------------------------------------------------------------------
# FP32 helpers (exact arithmetic with Fraction)

F32_MIN_NORMAL = Fraction(1, 2**126)


def f32_value(bits: int) -> Fraction:
    """The finite value of an FP32 bit pattern (no NaN or infinity)."""
    sign = -1 if bits >> 31 else 1
    exp, frac = (bits >> 23) & 0xFF, bits & 0x7FFFFF
    assert exp != 0xFF
    if exp == 0:
        return sign * Fraction(frac, 2**149)
    return sign * Fraction(0x800000 | frac, 2**23) * Fraction(2) ** (exp - 127)


def f32_round(value: Fraction, negative_zero: bool, ftz: bool) -> int:
    """Round `value` to FP32, to nearest with ties to even; `negative_zero` gives the sign of an exact zero."""
    if value == 0:
        return 0x80000000 if negative_zero else 0
    sign = 0x80000000 if value < 0 else 0
    mag = abs(value)
    exp = mag.numerator.bit_length() - mag.denominator.bit_length()
    if Fraction(2) ** exp > mag: exp -= 1
    if Fraction(2) ** (exp + 1) <= mag: exp += 1
    exp = max(exp, -126)                                  # subnormals share the quantum of the smallest normal
    quantum = Fraction(2) ** (exp - 23)
    q, rem = divmod(mag, quantum)
    q = int(q)
    if rem * 2 > quantum or (rem * 2 == quantum and q & 1): q += 1
    mag_rounded = q * quantum
    if ftz and mag_rounded < F32_MIN_NORMAL:
        return sign
    if mag_rounded >= Fraction(2) ** 128:
        return sign | 0x7F800000
    if mag_rounded < F32_MIN_NORMAL:
        return sign | q                                   # subnormal: q < 2^23 is the fraction field
    e = (mag_rounded.numerator.bit_length() - mag_rounded.denominator.bit_length())
    if Fraction(2) ** e > mag_rounded: e -= 1
    frac = int(mag_rounded / Fraction(2) ** e * 2**23) - 0x800000
    return sign | ((e + 127) << 23) | frac


def daz(bits: int) -> int:
    """A denormal FP32 input read as a zero of the same sign."""
    return bits & 0x80000000 if (bits >> 23) & 0xFF == 0 else bits


def lanes32(qwords: list[int]) -> list[int]:
    return [(q >> s) & 0xFFFFFFFF for q in qwords for s in (0, 32)]


def qwords(lanes: list[int]) -> list[int]:
    return [lanes[i] | lanes[i + 1] << 32 for i in range(0, len(lanes), 2)]


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


# ---------------------------------------------------------------------------------------------------------------
# models

def model_vdpbf16ps(acc: int, a: int, b: int) -> int:
    """One fp32 lane: acc and the bf16 pairs a, b (low half = element 0)."""
    for j in (1, 0):
        x = daz(((a >> 16 * j) & 0xFFFF) << 16)
        y = daz(((b >> 16 * j) & 0xFFFF) << 16)
        c = daz(acc)
        product = f32_value(x) * f32_value(y)
        product_negative = (x ^ y) >> 31 == 1
        exact = product + f32_value(c)
        acc = f32_round(exact, negative_zero=product_negative and c >> 31 == 1, ftz=True)
    return acc


def model_vcvttps2dqs(bits: int) -> int:
    exp, frac = (bits >> 23) & 0xFF, bits & 0x7FFFFF
    if exp == 0xFF and frac:
        return 0
    if exp == 0xFF:
        return 0x80000000 if bits >> 31 else 0x7FFFFFFF
    v = f32_value(bits)
    t = int(v)                                            # int() of a Fraction truncates toward zero
    t = max(-2**31, min(2**31 - 1, t))
    return t & 0xFFFFFFFF


def _is_nan(bits: int) -> bool:
    return (bits >> 23) & 0xFF == 0xFF and bits & 0x7FFFFF != 0


def _is_snan(bits: int) -> bool:
    return _is_nan(bits) and not bits & 0x400000


def _key(bits: int) -> Fraction:
    """Order of non-NaN FP32 values; -0 sorts below +0."""
    if (bits >> 23) & 0xFF == 0xFF:
        return Fraction(-(2**200)) if bits >> 31 else Fraction(2**200)
    v = f32_value(bits)
    if v == 0:
        return Fraction(-1, 2**300) if bits >> 31 else Fraction(0)
    return v


def model_vminmaxps(a: int, b: int, imm8: int) -> int:
    quiet = 0x400000
    if _is_nan(a) or _is_nan(b):
        if not imm8 & 0x10:                               # propagate NaNs
            if _is_snan(a) or (_is_nan(a) and not _is_snan(b)):
                return a | quiet
            return b | quiet
        if _is_nan(a) and _is_nan(b):                     # prefer a number; both NaN
            return a | quiet if (_is_snan(a) or not _is_snan(b)) else b | quiet
        z = b if _is_nan(a) else a
    else:
        op = imm8 & 3
        lo, hi = (a, b) if _key(a) <= _key(b) else (b, a)
        if op == 0: z = lo
        elif op == 1: z = hi
        else:
            ma, mb = _key(a & 0x7FFFFFFF), _key(b & 0x7FFFFFFF)
            if ma != mb:
                z = (a if ma < mb else b) if op == 2 else (a if ma > mb else b)
            else:
                z = lo if op == 2 else hi
    sign = (imm8 >> 2) & 3
    if not _is_nan(z):
        if sign == 2: z &= 0x7FFFFFFF
        elif sign == 3: z |= 0x80000000
        else: raise ValueError("sign controls 00/01 are not modelled (see the module docstring)")
    return z


# ---------------------------------------------------------------------------------------------------------------
# input generators

def _bf16_operand(rng: random.Random) -> int:
    kind = rng.random()
    sign = rng.getrandbits(1) << 15
    if kind < 0.06: return sign                                           # +-0
    if kind < 0.12: return sign | rng.randrange(1, 0x80)                  # denormal: read as zero
    return sign | rng.randrange(127 - 20, 127 + 20) << 7 | rng.getrandbits(7)


def _acc_operand(rng: random.Random) -> int:
    kind = rng.random()
    sign = rng.getrandbits(1) << 31
    if kind < 0.06: return sign
    if kind < 0.12: return sign | rng.randrange(1, 0x800000)              # denormal: read as zero
    return sign | rng.randrange(127 - 30, 127 + 30) << 23 | rng.getrandbits(23)


def _cvt_operand(rng: random.Random) -> int:
    kind = rng.random()
    sign = rng.getrandbits(1) << 31
    if kind < 0.05: return sign | 0x7F800000                              # +-inf
    if kind < 0.10: return sign | 0x7F800000 | rng.randrange(1, 0x800000)  # NaN, quiet or signalling
    if kind < 0.15: return sign | rng.randrange(0, 0x800000)              # zero or denormal
    if kind < 0.35: return sign | (127 + 31) << 23 | rng.choice((0, 1, rng.getrandbits(23)))  # around 2^31
    if kind < 0.45: return sign | (127 + 30) << 23 | rng.choice((0x7FFFFF, rng.getrandbits(23)))
    return sign | rng.randrange(127 - 5, 127 + 40) << 23 | rng.getrandbits(23)


_SPECIAL = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC12345, 0x7F800001, 0xFFA00000,
            0x00000001, 0x807FFFFF, 0x3F800000, 0xBF800000, 0x3FC00000, 0xC0490FDB]


def _minmax_pair(rng: random.Random) -> tuple[int, int]:
    kind = rng.random()
    if kind < 0.25:
        return rng.choice(_SPECIAL), rng.choice(_SPECIAL)
    if kind < 0.4:                                       # NaN precedence: quiet/signalling against NaN or number
        def nan() -> int:
            return rng.getrandbits(1) << 31 | 0x7F800000 | rng.getrandbits(1) << 22 | rng.randrange(1, 1 << 22)
        a, b = nan(), rng.choice((nan(), rng.choice(_SPECIAL)))
        return (a, b) if rng.getrandbits(1) else (b, a)
    if kind < 0.45:
        x = rng.getrandbits(31)
        return x | rng.getrandbits(1) << 31, x | rng.getrandbits(1) << 31   # equal magnitudes
    if kind < 0.6:
        return rng.getrandbits(32), rng.getrandbits(32)                      # any pattern, NaNs included
    def num() -> int:
        return rng.getrandbits(1) << 31 | rng.randrange(127 - 10, 127 + 10) << 23 | rng.getrandbits(23)
    return num(), num()


# ---------------------------------------------------------------------------------------------------------------
# kernels: text for x86gen, the ZMM inputs, the model of the outputs

KERNELS = {
    "bf16_dot": "vdpbf16ps zmm2, zmm0, zmm1",
    "cvtt_saturating": "vcvttps2dqs zmm2, zmm0",
    "minmax": "vminmaxps zmm2, zmm0, zmm1, 0x08\nvminmaxps zmm3, zmm0, zmm1, 0x1f",
}


def make_case(kernel: str, rng: random.Random) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    """(ZMM inputs, expected ZMM outputs) for one run of `kernel`, both as qword lists."""
    if kernel == "bf16_dot":
        a = [_bf16_operand(rng) | _bf16_operand(rng) << 16 for _ in range(LANES)]
        b = [_bf16_operand(rng) | _bf16_operand(rng) << 16 for _ in range(LANES)]
        acc = [_acc_operand(rng) for _ in range(LANES)]
        out = [model_vdpbf16ps(c, x, y) for c, x, y in zip(acc, a, b)]
        return {0: qwords(a), 1: qwords(b), 2: qwords(acc)}, {2: qwords(out)}
    if kernel == "cvtt_saturating":
        x = [_cvt_operand(rng) for _ in range(LANES)]
        return {0: qwords(x), 2: qwords([0xDEADBEEF] * LANES)}, {2: qwords([model_vcvttps2dqs(v) for v in x])}
    if kernel == "minmax":
        pairs = [_minmax_pair(rng) for _ in range(LANES)]
        a, b = [p[0] for p in pairs], [p[1] for p in pairs]
        return ({0: qwords(a), 1: qwords(b)},
                {2: qwords([model_vminmaxps(x, y, 0x08) for x, y in pairs]),
                 3: qwords([model_vminmaxps(x, y, 0x1F) for x, y in pairs])})
    raise KeyError(kernel)


def check_kernel(kernel: str, code: bytes, seed: int) -> int:
    """Run ROUNDS random cases of `kernel` (as `code`) and assert bit equality; returns the lanes compared."""
    rng = random.Random(seed)
    cases, expected = [], []
    for _ in range(ROUNDS):
        inputs, outputs = make_case(kernel, rng)
        cases.append(emu.Case(code, inputs))
        expected.append(outputs)
    outcomes = emu.run(cases)
    compared = 0
    for n, (out, want) in enumerate(zip(outcomes, expected)):
        assert (out.stop, out.vector) == ("hlt", None), f"{kernel} case {n}: stopped by {out.stop} {out.vector}"
        for reg, qs in want.items():
            got, exp = lanes32(out.zmm[reg]), lanes32(qs)
            bad = [(i, f"{g:#010x}", f"{e:#010x}") for i, (g, e) in enumerate(zip(got, exp)) if g != e]
            assert not bad, f"{kernel} case {n} zmm{reg}: lanes differ (lane, emulator, model): {bad}"
            compared += len(exp)
    return compared


# ---------------------------------------------------------------------------------------------------------------
# tests

def test_each_case_runs_its_own_program():
    """Two programs in one run each execute (the harness gives each case its own code page)."""
    first, second = emu.run([emu.Case(assemble("mov eax, 5"), {}), emu.Case(assemble("mov eax, 7"), {})])
    assert (first.stop, first.rax, second.stop, second.rax) == ("hlt", 5, "hlt", 7)


def test_avx10_2_is_undefined_without_the_feature():
    """The same core without the added features (its tigerlake model) raises #UD on an AVX10.2 encoding, so the
    kernels below are not running on something that ignores the bytes."""
    code = bytes.fromhex("62f37d4852d108")               # vminmaxps zmm2, zmm0, zmm1, 8 (llvm-mc-22)
    [out] = emu.run([emu.Case(code, {})], features="")
    assert (out.stop, out.vector) == ("exception", 6)


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_kernel_matches_model(kernel):
    code = assemble(KERNELS[kernel])
    assert check_kernel(kernel, code, seed=sum(map(ord, kernel))) == ROUNDS * LANES * (2 if kernel == "minmax" else 1)
