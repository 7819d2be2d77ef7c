"""x86gen.isel.select(..., mode="tinygrad"): tinygrad 0.14.0's own instruction selection.

The expected choices are facts of tinygrad 0.14.0's tinygrad/renderer/isa/x86.py (isel_matcher, `cmp`, `_xmm_sz`,
`encode`'s vvvv = 0), copied below with where they are; tests/test_isel.py checks x86gen's default mode.
"""
from __future__ import annotations

import pytest
from test_isel import DIFFERENCES, EXTENSIONS, _facts

from x86gen import isel
from x86gen.isel import IselError, select
from x86gen.reference import EARLIER_CHANGE_X86OPS, TINYGRAD_X86OPS

N = None
TINYGRAD_CHOICES = [
    # cmp(): VUCOMISS src[0], src[1]; WHERE of a non-signed-int CMPLT is CMOVB (its IF is JL)
    (("CMPLT", "float32", 1, {"flags": True}), ("VEX_VUCOMISS_XMM_XMMM32", (0, 1), "b")),
    (("CMPLT", "float64", 1, {"flags": True}), ("VEX_VUCOMISD_XMM_XMMM64", (0, 1), "b")),
    # float32 cast to int32s (int32, uint32) is VCVTTSS2SI with the destination's size: r32
    (("CAST", "float32", 1, {"to": "uint32"}), ("VEX_VCVTTSS2SI_R32_XMMM32", (N, 0), None)),
    (("CAST", "float64", 1, {"to": "uint32"}), ("VEX_VCVTTSD2SI_R32_XMMM64", (N, 0), None)),
    # CMPLT of int8s/int16s/... (signed and unsigned) is VPCMPGT* with the sources exchanged
    (("CMPLT", "uint8", 16, {}), ("VEX_VPCMPGTB_XMM_XMM_XMMM128", (N, 1, 0), None)),
    (("CMPLT", "uint32", 4, {}), ("VEX_VPCMPGTD_XMM_XMM_XMMM128", (N, 1, 0), None)),
    (("CMPLT", "uint64", 2, {}), ("VEX_VPCMPGTQ_XMM_XMM_XMMM128", (N, 1, 0), None)),
    # COPY of a float is _xmm_sz: VMOVSS / VMOVSD with one src; encode() leaves vvvv = 0: xmm0
    (("COPY", "float32", 1, {}), ("VEX_VMOVSS_XMM_XMM_XMM", (N, N, 0), None)),
    (("COPY", "float64", 1, {}), ("VEX_VMOVSD_XMM_XMM_XMM", (N, N, 0), None)),
    (("COPY", "int16", 2, {}), ("VEX_VMOVSS_XMM_XMM_XMM", (N, N, 0), None)),
]


@pytest.mark.parametrize("args, want", TINYGRAD_CHOICES, ids=lambda x: str(x)[:40])
def test_tinygrad_choices(args, want):
    op, dt, w, kw = args
    s = select(op, dt, w, mode="tinygrad", **kw)
    assert (s.form, s.srcs, s.cc) == want
    assert s.note.startswith("0.14.0")
    try: d = select(op, dt, w, **kw)
    except IselError: return   # x86gen has none (packed unsigned `<`)
    assert (d.form, d.srcs, d.cc) != want   # a deliberate difference


def test_every_difference_has_a_tinygrad_choice():
    for (op, dt, w, kw), _theirs, ours, _why in DIFFERENCES:
        s = select(op, dt, w, mode="tinygrad", **kw)
        assert (s.form, s.srcs, s.cc) != ours, (op, dt, w)


@pytest.mark.parametrize("op, dtype, width, kw, ref, want", _facts())
def test_mirrored_choices_are_the_same(op, dtype, width, kw, ref, want):
    """Where x86gen mirrors 0.14.0 (an op 0.14.0 has, at most 128 bits), both modes agree; else tinygrad mode refuses."""
    s = select(op, dtype, width, **kw)
    if ref in EARLIER_CHANGE_X86OPS:
        with pytest.raises(IselError, match="earlier change"): select(op, dtype, width, mode="tinygrad", **kw)
    elif any(o.reg == "ymm" or (o.mem or 0) > 128 for o in s.get_form().operands):
        with pytest.raises(IselError, match="xmm"): select(op, dtype, width, mode="tinygrad", **kw)
    elif s.note.startswith("0.14.0") or (op, dtype, width) in {(a[0], a[1], a[2]) for a, *_ in DIFFERENCES}:
        pass
    else:
        t = select(op, dtype, width, mode="tinygrad", **kw)
        assert t == s or t.note.startswith("0.14.0"), (s, t)
        assert t.form in TINYGRAD_X86OPS[ref]


@pytest.mark.parametrize("args, form", EXTENSIONS)
def test_extensions_are_not_tinygrads(args, form):
    with pytest.raises(IselError, match="x86gen extension|xmm registers|rewrites|earlier change"):
        select(*args, mode="tinygrad")


def test_bad_mode():
    with pytest.raises(IselError, match="mode"): select("ADD", "int32", mode="llvm")
    assert isel.MODES == ("x86gen", "tinygrad")
