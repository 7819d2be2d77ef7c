"""isel's AVX-512 selections (`x86gen.isel.select(..., features=...)`, isa/tinygrad.yaml ``isel_avx512``) run on this CPU.

For each elementwise operation of the AVX-512 table (ADD … SHR, MULACC, SQRT, TRUNC, the compares into an opmask and
WHERE on an opmask), a small function is built from the selection alone (its form, ``srcs``, ``imm``, ``mask``,
``k_result``), run through `x86gen.jit`, and its lanes are compared bit for bit with numpy's. So a wrong operand order
in the table (``srcs``), a wrong predicate (``imm``) or a wrong signed/unsigned choice fails here, not only a wrong
byte. MULACC's reference is fused like the instruction (a*b + c rounded once), with data where that differs from
rounding the product first, so an unfused selection fails too. Entries whose features this CPU lacks (AVX512_FP16
for float16) skip with the reason; the whole module skips on a CPU without AVX-512F/BW/DQ/VL.
"""
from __future__ import annotations

import ctypes
import math
import random
from fractions import Fraction

import numpy as np
import pytest

from x86gen import Assembler, isel, jit, zmmword
from x86gen.registers import REGISTERS, k1, rax, rcx, rdi, rdx, rsi

FEATURES = jit.cpu_features() if jit.available() else frozenset()
BASE = {"AVX512F", "AVX512BW", "AVX512DQ", "AVX512VL"}   # kmovq and the 512-bit int8/int16 forms need BW
pytestmark = pytest.mark.skipif(not BASE <= FEATURES, reason="CPU (or OS) lacks AVX512F/BW/DQ/VL, so AVX-512 code cannot run "
                                f"here (has: {' '.join(sorted(FEATURES))})")

NP = {"bool": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8, "uint16": np.uint16,
      "uint32": np.uint32, "uint64": np.uint64, "float16": np.float16, "float32": np.float32, "float64": np.float64}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _bits(x: np.ndarray) -> np.ndarray:
    return x.view(UINT[x.dtype.itemsize])


def _bitwise(f):
    return lambda a, b: f(_bits(a), _bits(b)).view(a.dtype)


def _fused_multiply_add(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a*b + c rounded once to the dtype (to nearest, ties to even), as vfmadd213ph/ps/pd compute it; numpy's
    ``a * b + c`` rounds the product first (in float16 that differs in the last place: -31.98 for the fused -32.0).

    Each lane is computed exactly (Fraction), then rounded once. float64: ``float(Fraction)`` is correctly rounded
    (CPython divides the two integers correctly rounded). float16/float32: rounding the exact value to float64 and
    then to the dtype could round twice (a value just off a float16 tie would land on the tie and go to even), so
    the float64 value is rounded to odd instead (inexact and even: one ulp towards the exact value), and that,
    with 53 >= p + 2 bits for p = 11 (float16) or 24 (float32), rounds to nearest exactly as the exact value does
    (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to odd",
    IEEE Trans. Computers 57(4), 2008); numpy's float64 -> float16/float32 casts round to nearest even."""
    t = a.dtype.type
    out = []
    for x, y, z in zip(a.tolist(), b.tolist(), c.tolist()):   # Python floats: the lanes' values exactly
        assert math.isfinite(x * y + z), (x, y, z)   # (the data below is finite and far from overflow)
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        r = float(exact)
        if t is not np.float64 and Fraction(r) != exact and not np.float64(r).view(np.uint64) & 1:
            r = float(np.nextafter(r, math.inf if exact > r else -math.inf))
        out.append(r)
    return np.array(out, np.float64).astype(t)


# the reference of each operation on numpy arrays of the selection's dtype (sources in generic order)
REFS = {
    "ADD": lambda a, b: a + b, "SUB": lambda a, b: a - b, "MUL": lambda a, b: a * b, "FDIV": lambda a, b: a / b,
    "AND": _bitwise(np.bitwise_and), "OR": _bitwise(np.bitwise_or), "XOR": _bitwise(np.bitwise_xor),
    "MAX": np.maximum, "MIN": np.minimum,
    "SHL": lambda a, b: np.left_shift(a, b.astype(a.dtype)), "SHR": lambda a, b: np.right_shift(a, b.astype(a.dtype)),
    "SQRT": np.sqrt, "TRUNC": np.trunc, "MULACC": _fused_multiply_add,
    "CMPLT": lambda a, b: a < b, "CMPEQ": lambda a, b: a == b, "CMPNE": lambda a, b: a != b,
    "WHERE": lambda c, a, b: np.where(c, a, b),
}
ARITY = {"SQRT": 1, "TRUNC": 1, "MULACC": 3, "WHERE": 3}


def _keys():
    # dtypes numpy has: bfloat16's selections are AVX10.2 (no CPU here runs them; tests/test_isel.py checks their bytes
    # with llvm-objdump-22), and float32 -> bfloat16 runs in test_cast_float32_to_bfloat16 below
    return [pytest.param(k, id=f"{k[0]}-{k[1]}x{k[2]}") for k in isel.available(avx512=True) if k[0] in REFS and not k[3]
            and k[1] in NP]


def _data(op: str, dtype: str, lanes: int, rnd: random.Random) -> list[np.ndarray]:
    """The operation's generic sources (WHERE's first one is the condition, a bool per lane)."""
    t = NP[dtype]
    if op == "WHERE":
        return [np.array([rnd.random() < 0.5 for _ in range(lanes)])] + _data("ADD", dtype, lanes, rnd)[:2]
    n = ARITY.get(op, 2)
    if t is np.bool_: return [np.array([rnd.random() < 0.5 for _ in range(lanes)]) for _ in range(n)]
    if np.issubdtype(t, np.floating):
        if op == "MULACC":   # products that round (no float16 overflow); every 4th c is minus the rounded product,
            # so there the fused result is the product's rounding error, where a multiply then an add gives 0
            a, b, c = [np.array([rnd.choice((-1, 1)) * rnd.uniform(0.01, 100) for _ in range(lanes)], t) for _ in range(3)]
            c[::4] = -(a[::4] * b[::4])
            return [a, b, c]
        vals = [np.array([rnd.choice((-1, 1)) * rnd.uniform(0.01, 1000) for _ in range(lanes)], t) for _ in range(n)]
        if op == "SQRT": vals[0] = np.abs(vals[0])
        if op.startswith("CMP"): vals[1][::3] = vals[0][::3]   # equal lanes too
        return vals
    info = np.iinfo(t)
    vals = [np.array([rnd.randint(int(info.min), int(info.max)) for _ in range(lanes)], t) for _ in range(n)]
    if op in ("SHL", "SHR"): vals[1] = np.array([rnd.randrange(8 * t().itemsize) for _ in range(lanes)], t)
    if op.startswith("CMP"): vals[1][::3] = vals[0][::3]
    return vals


def _build(sel: isel.Selection) -> tuple[Assembler, bool]:
    """fn(src0 /*rdi*/, src1 /*rsi*/, out /*rdx*/, src2 or condition bits /*rcx*/) for one selection: each generic
    source i in zmm(i+1) (64 bytes loaded), the selected instruction, then the result stored to ``out`` (or, for a
    compare into an opmask, returned from kmovq). Returns the Assembler and whether the result is the k register."""
    form = sel.get_form()
    a = Assembler()
    a.vmovdqu64(REGISTERS["zmm1"], zmmword(rdi))
    a.vmovdqu64(REGISTERS["zmm2"], zmmword(rsi))
    if sel.mask is not None: a.kmovq(k1, rcx)    # WHERE: the condition's lanes, one bit each
    elif len(sel.srcs) > 2 and 2 in sel.srcs: a.vmovdqu64(REGISTERS["zmm3"], zmmword(rcx))
    ops, result = [], None
    for j, (o, s) in enumerate(zip(form.operands, sel.srcs)):
        if o.imm: ops.append(sel.imm)
        elif s is None:   # the destination
            if o.reg == "k": reg = k1
            else: reg = REGISTERS[f"{o.reg}0"]
            result = reg
            ops.append(reg.k(k1) if sel.mask is not None else reg)
        else:
            reg = REGISTERS[f"{o.reg}{s + 1 if sel.mask is None else s}"]   # WHERE's sources 1, 2 are zmm1, zmm2
            if j == 0: result = reg   # MULACC: the first source is the destination
            ops.append(reg)
    a.emit_form(form.id, *ops)
    if sel.k_result: a.kmovq(rax, k1)
    else: a.vmovdqu64(zmmword(rdx), REGISTERS[f"zmm{result.num}"])
    a.vzeroupper()
    a.ret()
    return a, sel.k_result


@pytest.mark.parametrize("key", _keys())
def test_isel_avx512_selection_computes_like_numpy(key):
    op, dtype, width, _ = key
    try: sel = isel.select(op, dtype, width, features=FEATURES)
    except isel.IselError as ex: pytest.skip(f"this CPU lacks a feature the selection needs: {ex}")
    a, k_out = _build(sel)
    fn = a.jit(ctypes.c_uint64, (ctypes.c_void_p,) * 3 + (ctypes.c_uint64,), name=f"isel_{op}_{dtype}")
    rnd = random.Random(f"{op} {dtype} {width}")
    srcs = _data(op, dtype, width, rnd)
    want = REFS[op](*srcs)
    vec = srcs[1:] if op == "WHERE" else srcs
    bufs = [(ctypes.c_uint8 * 64).from_buffer_copy(v.tobytes().ljust(64, b"\0")) for v in vec] + [(ctypes.c_uint8 * 64)()]
    cond = sum(1 << i for i, c in enumerate(srcs[0]) if c) if op == "WHERE" else 0
    third = ctypes.addressof(bufs[2]) if len(vec) == 3 else cond
    got = fn(ctypes.addressof(bufs[0]), ctypes.addressof(bufs[1]), ctypes.addressof(bufs[-1]), third)
    if k_out:
        assert got == sum(1 << i for i, c in enumerate(want) if c), f"{sel}: mask {got:#x}"
    else:
        lanes = np.frombuffer(bytes(bufs[-1]), dtype=want.dtype, count=width)
        assert lanes.tobytes() == want.tobytes(), f"{sel}\n got {lanes}\nwant {want}"


def test_isel_avx512_covers_the_elementwise_operations():
    """The test above reaches every elementwise operation of the table, at 512 bits for every dtype it has."""
    keys = [p.values[0] for p in _keys()]
    assert {k[0] for k in keys} == set(REFS)
    assert {(k[1], k[2]) for k in keys if k[0] == "ADD"} >= {("float32", 16), ("float64", 8), ("int8", 64), ("int16", 32),
                                                             ("int32", 16), ("int64", 8)}


def _fp32_to_bf16(u: int) -> int:
    """SDM Vol.2 VCVTNEPS2BF16, convert_fp32_to_bfloat16, on the bits of a float32: zero or denormal -> signed zero;
    infinity -> its top half; NaN -> its top half with bit 6 set (quiet); else round to nearest even by an integer add
    of 0x7FFF + the result's lowest bit."""
    exp, man = (u >> 23) & 0xFF, u & 0x7FFFFF
    if exp == 0: return (u >> 16) & 0x8000
    if exp == 0xFF: return (u >> 16) | (0x40 if man else 0)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


@pytest.mark.parametrize("width", [4, 8, 16])
def test_cast_float32_to_bfloat16(width):
    """CAST float32 -> bfloat16 (AVX512_BF16's vcvtneps2bf16, the selection's form and srcs) on this CPU, lane for lane
    against the SDM's pseudo-code: ties to even both ways, denormals to signed zero, NaN quieted, overflow to inf."""
    try: sel = isel.select("CAST", "float32", width, to="bfloat16", features=FEATURES)
    except isel.IselError as ex: pytest.skip(f"this CPU lacks a feature the selection needs: {ex}")
    a, _ = _build(sel)
    fn = a.jit(ctypes.c_uint64, (ctypes.c_void_p,) * 3 + (ctypes.c_uint64,), name=f"isel_cast_bf16_{width}")
    rnd = random.Random(f"bf16 {width}")
    special = [0x3F808000, 0x3F818000, 0x00400000, 0x80000001, 0x7F800000, 0xFF800000, 0x7FA00000, 0xFFC00001,
               0x7F7FFFFF, 0x80000000, 0x3F80FFFF, 0x007FFFFF, 0x00800000]   # ties (even, odd), denormals, inf, NaNs, max
    for round_ in range(8):
        bits = (special if round_ == 0 else [])[:width] + [rnd.getrandbits(32) for _ in range(width)]
        bits = bits[:width]
        src = (ctypes.c_uint8 * 64).from_buffer_copy(np.array(bits, np.uint32).tobytes().ljust(64, b"\0"))
        out = (ctypes.c_uint8 * 64)()
        fn(ctypes.addressof(src), ctypes.addressof(src), ctypes.addressof(out), 0)
        got = np.frombuffer(bytes(out), np.uint16, count=width).tolist()
        assert got == [_fp32_to_bf16(u) for u in bits], f"{sel}: {[hex(u) for u in bits]}"
