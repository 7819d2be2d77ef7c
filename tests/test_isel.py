"""x86gen.isel against tinygrad's x86 instruction selection (tinygrad/renderer/isa/x86.py `isel_matcher`, and
test/backend/test_isel.py).

Every mapping of tinygrad's patterns is a fact below: the generic operation, dtype and width, the `X86Ops`
name tinygrad picks, and where it matters the operand order and immediate. `x86gen.isel.select` must pick a
form of that X86Ops name (x86gen.reference.TINYGRAD_X86OPS). Where tinygrad does not follow the hardware,
DIFFERENCES says what x86gen does instead and why; EXTENSIONS are selections tinygrad does not make.
"""
from __future__ import annotations

import re

import pytest

import x86gen
from x86gen import forms as F
from x86gen import groups, isel
from x86gen.isel import IselError, select
from x86gen.reference import ALL_X86OPS as TINYGRAD_X86OPS  # the earlier change's names too (vmaxps, vbroadcastss, ...)

SINTS, UINTS = ("int8", "int16", "int32", "int64"), ("uint8", "uint16", "uint32", "uint64")
INTS = SINTS + UINTS
BITS = {"bool": 8, **{d: int(d.lstrip("uint")) for d in INTS}, "float16": 16, "float32": 32, "float64": 64}
SIZE_SUFFIX = {8: "B", 16: "W", 32: "D", 64: "Q"}
N, _ = None, None


def _fact(op, dtype, width, ref, kw=None, **want):
    return pytest.param(op, dtype, width, kw or {}, ref, want, id=f"{op}-{dtype}x{width}{'-' + str(kw) if kw else ''}-{ref}")


def _facts():
    out = []
    f = lambda *a, **k: out.append(_fact(*a, **k))
    # constants that can't be immediates go to registers: 64-bit ones with movabs
    for dt in ("int64", "uint64"): f("CONST", dt, 1, "MOVABS")
    for dt in ("int8", "int16", "int32", "uint8", "uint16", "uint32", "bool"): f("CONST", dt, 1, "MOVi")
    # max / min from (a < b).where(...) (test_vmax, test_vmin)
    for op, m in (("MAX", "VMAX"), ("MIN", "VMIN")):
        for dt, s, p, ws in (("float32", "SS", "PS", (4, 8)), ("float64", "SD", "PD", (2, 4))):
            f(op, dt, 1, m + s, srcs=(N, 0, 1))
            for w in ws: f(op, dt, w, m + p, srcs=(N, 0, 1))
    # where: masks (vpblendvb/vblendvps/vblendvpd take (b, a, mask)), flags (cmovcc takes (b, a))
    for dt in INTS + ("bool",):
        for w in (2, 4, 8, 16):
            if w * BITS[dt] <= 256: f("WHERE", dt, w, "VPBLENDVB", srcs=(N, 2, 1, 0))
    for w in (1, 4, 8): f("WHERE", "float32", w, "VBLENDVPS", srcs=(N, 2, 1, 0))
    for w in (1, 2, 4): f("WHERE", "float64", w, "VBLENDVPD", srcs=(N, 2, 1, 0))
    for dt in ("int16", "int32", "int64", "uint16", "uint32", "uint64"):
        f("WHERE", dt, 1, "CMOVL", {"cc": "l"}, srcs=(2, 1))
        f("WHERE", dt, 1, "CMOVB", {"cc": "b"}, srcs=(2, 1))
        f("WHERE", dt, 1, "CMOVE", {"cc": "e"}, srcs=(2, 1))
        f("WHERE", dt, 1, "CMOVNE", {"cc": "ne"}, srcs=(2, 1))
        f("WHERE", dt, 1, "CMOVNE", srcs=(2, 1), cc="ne")   # a non-compare condition: cmp m, 0 then cmovne
    # jumps (IF), consuming the compare's flags
    for cc, ref in (("b", "JB"), ("l", "JL"), ("e", "JE"), ("ne", "JNE"), ("ge", "JGE")): f("IF", None, 1, ref, {"cc": cc})
    # scalar compares: cmp (or cmp with an immediate), then setcc for a bool
    for dt in SINTS: f("CMPLT", dt, 1, "CMP", cc="l", then=("SETL_RM8",))
    for dt in UINTS: f("CMPLT", dt, 1, "CMP", cc="b", then=("SETB_RM8",))
    for dt in INTS:
        f("CMPEQ", dt, 1, "CMP", cc="e", then=("SETE_RM8",))
        f("CMPNE", dt, 1, "CMP", cc="ne", then=("SETNE_RM8",))
        f("CMPLT", dt, 1, "CMPi", {"const": True})
        f("CMPEQ", dt, 1, "CMPi", {"const": True})
    f("CMPEQ", "float32", 1, "VUCOMISS", {"flags": True})
    f("CMPEQ", "float64", 1, "VUCOMISD", {"flags": True})
    f("CMPNE", "float32", 1, "VUCOMISS", {"flags": True})
    # bool CMPNE is XOR
    f("CMPNE", "bool", 1, "XOR")
    # the setcc forms themselves are in the name table under SETL/SETB/SETE/SETNE (checked through `then` above)
    # float compares that produce lane masks: vcmp with predicate LT 1, NE 4, EQ 0
    for op, imm in (("CMPLT", 1), ("CMPNE", 4), ("CMPEQ", 0)):
        for dt, s, p, ws in (("float32", "SS", "PS", (4, 8)), ("float64", "SD", "PD", (2, 4))):
            f(op, dt, 1, "VCMP" + s, imm=imm, srcs=(N, 0, 1, N))
            for w in ws: f(op, dt, w, "VCMP" + p, imm=imm, srcs=(N, 0, 1, N))
    # packed integer compares: eq directly, lt as gt with the sources exchanged
    for dt in SINTS + UINTS:
        for w in (2, 4, 8):
            if w * BITS[dt] <= 256: f("CMPEQ", dt, w, "VPCMPEQ" + SIZE_SUFFIX[BITS[dt]])
    for dt in SINTS:
        for w in (2, 4, 8):
            if w * BITS[dt] <= 256: f("CMPLT", dt, w, "VPCMPGT" + SIZE_SUFFIX[BITS[dt]], srcs=(N, 1, 0))
    # float unary
    f("SQRT", "float32", 1, "VSQRTSS", srcs=(N, 0, 0)); f("SQRT", "float32", 8, "VSQRTPS")
    f("SQRT", "float64", 1, "VSQRTSD", srcs=(N, 0, 0)); f("SQRT", "float64", 4, "VSQRTPD")
    f("TRUNC", "float32", 1, "VROUNDSS", srcs=(N, 0, 0, N), imm=3); f("TRUNC", "float32", 8, "VROUNDPS", srcs=(N, 0, N), imm=3)
    f("TRUNC", "float64", 1, "VROUNDSD", srcs=(N, 0, 0, N), imm=3); f("TRUNC", "float64", 2, "VROUNDPD", srcs=(N, 0, N), imm=3)
    # broadcasts and shuffles (test_vbroadcastss, test_vpbroadcast, test_vshufps, test_vshufpd, test_vinsertps)
    for w in (4, 8): f("BROADCAST", "float32", w, "VBROADCASTSS")
    for dt in INTS + ("bool",):
        for w in (2, 4, 8):
            if w * BITS[dt] <= 256: f("BROADCAST", dt, w, "VPBROADCAST" + SIZE_SUFFIX[BITS[dt]])
    for w in (4, 8): f("SHUFFLE", "float32", w, "VSHUFPS", imm="lanes")
    for w in (2, 4): f("SHUFFLE", "float64", w, "VSHUFPD", imm="lanes")
    for w in (2, 4): f("VECTORIZE", "float32", w, "VINSERTPS")
    f("VECTORIZE", "float16", 8, "VPINSRW")
    for dt in INTS + ("bool",): f("VECTORIZE", dt, 2, "VPINSR" + SIZE_SUFFIX[BITS[dt]], srcs=(N, N, 0, N), imm="i")
    # gep
    for dt in INTS + ("bool",): f("GEP", dt, 2, "VPEXTR" + SIZE_SUFFIX[BITS[dt]], imm="lane")
    for dt, bytes_ in (("float16", 2), ("float32", 4), ("float64", 8)): f("GEP", dt, 2, "VPSRLDQ", imm=f"lane*{bytes_}")
    # fused multiply add (test_vfmadd)
    for dt, s, p, w in (("float32", "SS", "PS", 4), ("float64", "SD", "PD", 4)):
        f("MULACC", dt, 1, "VFMADD213" + s, srcs=(0, 1, 2)); f("MULACC", dt, w, "VFMADD213" + p, srcs=(0, 1, 2))
    # packed bitwise, shifts, add/sub/mul
    for op in ("AND", "OR", "XOR"):
        for dt, w in (("int32", 8), ("uint8", 16), ("bool", 4), ("float32", 4), ("float64", 2)): f(op, dt, w, "VP" + op)
    for dt in ("int32", "uint32"): f("SHL", dt, 8, "VPSLLVD")
    for dt in ("int64", "uint64"): f("SHL", dt, 4, "VPSLLVQ")
    f("SHR", "uint32", 8, "VPSRLVD"); f("SHR", "uint64", 4, "VPSRLVQ"); f("SHR", "int32", 8, "VPSRAVD")
    for dt in INTS:
        w = 128 // BITS[dt]
        f("ADD", dt, w, "VPADD" + SIZE_SUFFIX[BITS[dt]]); f("SUB", dt, w, "VPSUB" + SIZE_SUFFIX[BITS[dt]])
    for dt in ("int16", "uint16"): f("MUL", dt, 8, "VPMULLW")
    for dt in ("int32", "uint32"): f("MUL", dt, 4, "VPMULLD")
    # scalar integer division: idiv for signed, div for unsigned; the divisor is the explicit operand
    for dt in SINTS: f("IDIV", dt, 1, "IDIV", srcs=(1,))
    for dt in UINTS: f("IDIV", dt, 1, "DIV", srcs=(1,))
    # scalar int binary, with an immediate and with a register
    for dt in INTS:
        f("SHL", dt, 1, "SHLi", {"const": True}); f("SHL", dt, 1, "SHL")
        f("ADD", dt, 1, "ADDi", {"const": True}); f("ADD", dt, 1, "ADD", srcs=(0, 1))
        f("SUB", dt, 1, "SUBi", {"const": True}); f("SUB", dt, 1, "SUB", srcs=(0, 1))
        for op in ("AND", "OR", "XOR"): f(op, dt, 1, op + "i", {"const": True}); f(op, dt, 1, op)
        if BITS[dt] > 8: f("MUL", dt, 1, "IMULi", {"const": True}); f("MUL", dt, 1, "IMUL")
    for dt in UINTS: f("SHR", dt, 1, "SHRi", {"const": True}); f("SHR", dt, 1, "SHR")
    for dt in SINTS: f("SHR", dt, 1, "SARi", {"const": True}); f("SHR", dt, 1, "SAR")
    for op in ("AND", "OR", "XOR"): f(op, "bool", 1, op); f(op, "bool", 1, op + "i", {"const": True})
    # float binary
    for op, m in (("ADD", "VADD"), ("MUL", "VMUL"), ("SUB", "VSUB"), ("FDIV", "VDIV")):
        f(op, "float32", 1, m + "SS", srcs=(N, 0, 1)); f(op, "float32", 8, m + "PS"); f(op, "float32", 4, m + "PS")
        f(op, "float64", 1, m + "SD", srcs=(N, 0, 1)); f(op, "float64", 4, m + "PD"); f(op, "float64", 2, m + "PD")
    # casts
    c = lambda src, dst, w, ref, **k: f("CAST", src, w, ref, {"to": dst}, **k)
    for w in (4, 8): c("int32", "float32", w, "VCVTDQ2PS")
    for w in (2, 4): c("int32", "float64", w, "VCVTDQ2PD"); c("float64", "int32", w, "VCVTTPD2DQ"); c("float64", "uint32", w, "VCVTTPD2DQ")
    for w in (4, 8): c("float32", "int32", w, "VCVTTPS2DQ"); c("float32", "uint32", w, "VCVTTPS2DQ")
    for w in (2, 4): c("float32", "float64", w, "VCVTPS2PD"); c("float64", "float32", w, "VCVTPD2PS")
    for w in (1, 4, 8): c("float32", "float16", w, "VCVTPS2PH", imm=4); c("float16", "float32", w, "VCVTPH2PS")
    for dst in ("int32", "int64", "uint64"): c("float32", dst, 1, "VCVTTSS2SI"); c("float64", dst, 1, "VCVTTSD2SI")
    c("float32", "float64", 1, "VCVTSS2SD", srcs=(N, 0, 0)); c("float64", "float32", 1, "VCVTSD2SS", srcs=(N, 0, 0))
    for src in ("int32", "int64"):
        c(src, "float32", 1, "VCVTSI2SS", srcs=(N, N, 0)); c(src, "float64", 1, "VCVTSI2SD", srcs=(N, N, 0))
    for src in ("uint8", "uint16", "bool"):
        for dst in ("int16", "int32", "int64", "uint16", "uint32", "uint64"):
            if BITS[dst] > BITS[src]: c(src, dst, 1, "MOVZX")
    for dst in ("int64", "uint64"): c("int32", dst, 1, "MOVSXD")
    for src in ("int8", "int16"):
        for dst in ("int16", "int32", "int64", "uint16", "uint32", "uint64"):
            if BITS[dst] > BITS[src]: c(src, dst, 1, "MOVSX")
    wider = ("int16", "int32", "int64", "uint16", "uint32", "uint64")
    for src, dst in [(a, b) for a in ("uint8", "bool", "uint16", "uint32") for b in wider if BITS[b] > BITS[a]]:
        c(src, dst, 4, f"VPMOVZX{SIZE_SUFFIX[BITS[src]]}{SIZE_SUFFIX[BITS[dst]]}")
    for src, dst in [(a, b) for a in ("int8", "int16", "int32") for b in wider if BITS[b] > BITS[a]]:
        c(src, dst, 4, f"VPMOVSX{SIZE_SUFFIX[BITS[src]]}{SIZE_SUFFIX[BITS[dst]]}")
    # bitcasts between the register files (the rest are no-ops)
    b = lambda src, dst, ref, **k: f("BITCAST", src, 1, ref, {"to": dst}, **k)
    for dt in ("int16", "uint16"): b("float16", dt, "VPEXTRW", imm=0); b(dt, "float16", "VPINSRW", imm=0, srcs=(N, N, 0, N))
    for dt in ("int32", "uint32"): b(dt, "float32", "VMOVD"); b("float32", dt, "VMOVDm")
    for dt in ("int64", "uint64"): b(dt, "float64", "VMOVQ"); b("float64", dt, "VMOVQm")
    # address, copies, loads and stores (dt_128bit, dt_64bit, dt_32bit, dt_16bit of the reference)
    f("INDEX", None, 1, "LEA")
    for dt in INTS + ("bool",):
        f("COPY", dt, 1, "MOV"); f("LOAD", dt, 1, "MOV", srcs=(N, 0)); f("STORE", dt, 1, "MOVm", srcs=(0, 1))
        f("STORE", dt, 1, "MOVi", {"const": True}, srcs=(0, 1))
    for dt, w in (("float32", 4), ("float64", 2), ("int8", 16), ("int64", 2), ("float16", 8), ("bool", 16)):
        f("COPY", dt, w, "VMOVUPS"); f("LOAD", dt, w, "VMOVUPS"); f("STORE", dt, w, "VMOVUPSm", srcs=(0, 1))
    for dt, w in (("float64", 1), ("float32", 2), ("int32", 2), ("int16", 4), ("uint8", 8), ("float16", 4)):
        f("COPY", dt, w, "VMOVSD"); f("LOAD", dt, w, "VMOVSD"); f("STORE", dt, w, "VMOVSDm", srcs=(0, 1))
    for dt, w in (("float32", 1), ("float16", 2), ("int16", 2), ("uint8", 4), ("bool", 4)):
        f("COPY", dt, w, "VMOVSS"); f("LOAD", dt, w, "VMOVSS"); f("STORE", dt, w, "VMOVSSm", srcs=(0, 1))
    for dt, w in (("float16", 1), ("int8", 2), ("uint8", 2), ("bool", 2)):
        f("COPY", dt, w, "VMOVSS")
        f("LOAD", dt, w, "VPINSRW", imm=0, srcs=(N, N, 0, N)); f("STORE", dt, w, "VPEXTRW", imm=0, srcs=(0, 1, N))
    f("SINK", None, 1, "RET")
    return out


@pytest.mark.parametrize("op, dtype, width, kw, ref, want", _facts())
def test_reference_isel(op, dtype, width, kw, ref, want):
    s = select(op, dtype, width, **kw)
    assert s.form in TINYGRAD_X86OPS[ref], f"{s}: not a form of tinygrad's {ref} {TINYGRAD_X86OPS[ref]}"
    for k, v in want.items():
        assert getattr(s, k) == v, f"{s}: {k} is {getattr(s, k)!r}, expected {v!r}"


# where tinygrad's selection does not do what the hardware needs, x86gen differs (reason in each entry)
DIFFERENCES = [
    # (select arguments, tinygrad's choice, x86gen's, reason)
    (("CMPLT", "float32", 1, {"flags": True}), "VUCOMISS a, b then JL (IF) / CMOVB (WHERE)", ("VEX_VUCOMISS_XMM_XMMM32", (1, 0), "a"),
     "ucomiss sets only ZF, PF, CF (OF = SF = 0), so jl is never taken; and `a < b` as CF = 1 is also true for NaN. "
     "Comparing b with a and testing `above` (CF = ZF = 0) is exactly a < b, false for NaN"),
    (("CMPLT", "float64", 1, {"flags": True}), "VUCOMISD a, b then JL / CMOVB", ("VEX_VUCOMISD_XMM_XMMM64", (1, 0), "a"),
     "as for float32"),
    (("CAST", "float32", 1, {"to": "uint32"}), "VCVTTSS2SI r32", ("VEX_VCVTTSS2SI_R64_XMMM32", (N, 0), None),
     "the 32-bit conversion is signed: values from 2**31 give 0x80000000; the 64-bit one is exact for all of uint32"),
    (("CAST", "float64", 1, {"to": "uint32"}), "VCVTTSD2SI r32", ("VEX_VCVTTSD2SI_R64_XMMM64", (N, 0), None), "as for float32"),
    (("COPY", "float32", 1, {}), "vmovss dst, xmm0, src", ("VEX_VMOVSS_XMM_XMM_XMM", (N, 0, 0), None),
     "the register form of vmovss takes the lanes above the copied one from vvvv; taking them from the source copies all of it"),
]
UNSIGNED_PACKED_LT = ("tinygrad maps CMPLT of packed uint8..uint64 to VPCMPGT*, a signed compare, wrong for lanes with the top bit "
                      "set; AVX2 has no unsigned packed compare, so x86gen raises with the fix (flip the sign bits first)")


@pytest.mark.parametrize("args, theirs, ours, why", DIFFERENCES, ids=lambda x: str(x)[:40] if isinstance(x, tuple) else None)
def test_differences_from_reference(args, theirs, ours, why):
    op, dt, w, kw = args
    s = select(op, dt, w, **kw)
    assert (s.form, s.srcs, s.cc) == ours, why
    if s.cc: assert select("IF", cc=s.cc).form == f"J{s.cc.upper()}_REL32_64"


@pytest.mark.parametrize("dt", UINTS)
def test_unsigned_packed_compare_is_not_signed(dt):
    with pytest.raises(IselError, match="signed"):
        select("CMPLT", dt, 128 // BITS[dt])


# selections tinygrad does not make, where AVX2 (or the base ISA) has an obvious instruction
EXTENSIONS = [
    (("MIN", "int32", 8), "VEX_VPMINSD_YMM_YMM_YMMM256"), (("MAX", "int32", 4), "VEX_VPMAXSD_XMM_XMM_XMMM128"),
    (("MIN", "uint32", 8), "VEX_VPMINUD_YMM_YMM_YMMM256"), (("MAX", "uint32", 8), "VEX_VPMAXUD_YMM_YMM_YMMM256"),
    (("NEG", "int64", 1), "NEG_RM64"), (("MOD", "int32", 1), "IDIV_RM32"), (("MOD", "uint16", 1), "DIV_RM16"),
    (("LOAD", "float32", 8), "VEX_VMOVUPS_YMM_YMMM256"), (("STORE", "int8", 32), "VEX_VMOVUPS_YMMM256_YMM"),
    (("BROADCAST", "float64", 4), "VEX_VPBROADCASTQ_YMM_XMMM64"), (("WHERE", "float32", 8), "VEX_VBLENDVPS_YMM_YMM_YMMM256_YMM"),
]


@pytest.mark.parametrize("args, form", EXTENSIONS)
def test_extensions(args, form):
    assert select(*args).form == form


@pytest.mark.parametrize("args, kw, match", [
    (("MUL", "int64", 4), {}, "AVX-512"),                  # VPMULLQ is AVX512DQ
    (("MUL", "int8", 1), {}, "widen to int16"),
    (("SHR", "int64", 4), {}, "AVX-512"),                  # VPSRAVQ
    (("SHL", "int16", 8), {}, "AVX512BW"),
    (("ADD", "float16", 8), {}, "float32"),
    (("WHERE", "int8", 1), {}, "8-bit cmov"),
    (("CMPNE", "int32", 8), {}, "VPCMPEQ"),
    (("CAST", "uint64", 1), {"to": "float32"}, "int64"),
    (("IDIV", "int32", 8), {}, "no packed integer division"),
    (("ADD", "int8", 64), {}, "ADD has: "),                # no such width: the message lists what exists
    (("FROB", "int8", 1), {}, "operations: "),
    (("ADD", "int33", 1), {}, "unknown dtype"),
    (("ADD", "int32", 1), {"const": True, "flags": True}, "at most one"),
    (("WHERE", "int32", 1), {"cc": "zz"}, "condition code"),
])
def test_errors(args, kw, match):
    with pytest.raises(IselError, match=match):
        select(*args, **kw)


def test_error_types():
    assert x86gen.IselError is IselError
    assert issubclass(IselError, x86gen.EncodeError) and issubclass(IselError, LookupError)


def test_api():
    s = select("ADD", "float32", 8)
    assert s.form == "VEX_VADDPS_YMM_YMM_YMMM256" and "vaddps ymm, ymm, ymm/m256" in str(s)
    assert s.get_form().mnemonic == "vaddps" and not s.swapped and not s.noop
    assert select("CMPLT", "int32", 8).swapped and select("WHERE", "float32", 4).swapped
    assert select("add", "float", 4) == select("ADD", "float32", 4)                      # case and tinygrad aliases
    assert select("SQRT", "double").dtype == "float64"

    class FakeDType:   # duck-typed tinygrad DType: float32.vec(8)
        name, count = "float", 8
        def scalar(self): return type("S", (), {"name": "float", "count": 1})()
    assert select("ADD", FakeDType()).form == "VEX_VADDPS_YMM_YMM_YMMM256"
    n = select("CAST", "uint32", 1, to="int64")
    assert n.noop and n.get_form() is None and "no instruction" in str(n)
    assert select("BITCAST", "float32", 4, to="int32").noop
    assert select("CMPLT", "int32", flags=True) == select("CMPLT", "int32")._replace(variant="flags")   # ints always set flags
    assert select("IF", "int32", cc="l").form == "JL_REL32_64"                                         # IF ignores the dtype
    assert select("GEP", "float32", 4).imm == "lane*4" and select("VECTORIZE", "float32", 4).imm == "64*lane+16*i"
    assert ("ADD", "float32", 8, "") in isel.available("ADD") and len(isel.available()) > 1000


def test_whole_table_is_consistent():
    """Every entry: an existing form, srcs for each operand, vector registers as wide as the data, rflags where cc says."""
    from x86gen._gen.isel import TABLE
    for (op, dt, w, var), (fid, srcs, imm, cc, then, _note) in TABLE.items():
        key = (op, dt, w, var)
        for t in then: F.get_form(t)
        if fid is None: continue
        f = F.get_form(fid)
        assert len(srcs) == len(f.operands), key
        if imm is not None: assert any(o.imm is not None for o in f.operands), key
        to = var[3:] if var.startswith("to=") else dt
        vec = {o.reg for o in f.operands} & {"xmm", "ymm"}
        if vec and dt:
            total = w * max(BITS[dt], BITS[to])
            assert ("ymm" in vec) == (total > 128), (key, fid)
        if var.startswith("cc="): assert fid in groups.ReadFlags and cc == var[3:], key
        if cc is not None:   # produced rflags (cmp, vucomiss) or the tested condition (cmovcc, jcc)
            if fid in groups.ReadFlags: assert re.fullmatch(f"(cmov|j|set){cc}", f.mnemonic), key
            else: assert fid in groups.WriteFlags, key


# ---- AVX-512 (features=): isa/tinygrad.yaml isel_avx512 -----------------------------------------------------------
AVX512 = frozenset({"AVX512F", "AVX512BW", "AVX512DQ", "AVX512VL", "AVX512_FP16"})
AVX2_CPU = frozenset({"SSE2", "AVX", "AVX2", "FMA", "F16C", "BMI2"})   # what jit.cpu_features() says on an AVX2-only CPU


def _avx512_table():
    from x86gen._gen.isel import TABLE_AVX512
    return TABLE_AVX512


NEW_DTYPES = ("bfloat16", "fp8e4m3", "fp8e5m2")   # tinygrad's names (tinygrad/dtype.py); their keys need AVX10.2 or
# AVX512_BF16, and have tests of their own below (the AVX-512 ones here give features=AVX512)


def _new_dtype_key(k) -> bool:
    return k[1] in NEW_DTYPES or (k[3].startswith("to=") and k[3][3:] in NEW_DTYPES)


def _avx512_keys(forms_only: bool = False, new_dtypes: bool = False):
    return [pytest.param(k, id=f"{k[0]}-{k[1]}x{k[2]}{'-' + k[3] if k[3] else ''}") for k, v in sorted(_avx512_table().items())
            if (v[0] is not None or not forms_only) and _new_dtype_key(k) == new_dtypes]


def _kw(variant: str) -> dict:
    return {"to": variant[3:]} if variant.startswith("to=") else {}


def test_avx512_default_is_unchanged():
    """features=None and features without AVX-512 select exactly the VEX table; so does the full AVX-512 set up to 256 bits
    where AVX2 has a selection (isel_avx512 never replaces one: the VEX form is shorter)."""
    from x86gen._gen.isel import TABLE
    for op, dt, w, var in TABLE:
        kw = _kw(var) if var.startswith("to=") else {"const": True} if var == "const" else {"flags": True} if var == "flags" else \
            {"cc": var[3:]} if var.startswith("cc=") else {}
        dt = dt or None
        base = select(op, dt, w, **kw)
        assert select(op, dt, w, features=AVX512, **kw) == base == select(op, dt, w, features=AVX2_CPU, **kw), (op, dt, w, var)
        assert base.mask is None and not base.features


@pytest.mark.parametrize("key", _avx512_keys())
def test_avx512_selection(key):
    """Each AVX-512 selection: an EVEX form whose AVX-512 features are within the given ones, zmm operands for 512-bit
    data (xmm/ymm for AVX512VL entries), a k destination exactly for compares, srcs for each operand, mask= for WHERE."""
    op, dt, w, var = key
    s = select(op, dt, w, features=AVX512, **_kw(var))
    assert (s.op, s.dtype, s.width, s.variant) == key
    if s.form is None:
        assert op == "BITCAST" and s.features == {"AVX512F"}; return
    f = s.get_form()
    assert f.encoding_kind == "evex" and s.features and s.features <= AVX512, s
    assert set(f.cpuid.split("+")) <= AVX512, s
    assert len(s.srcs) == len(f.operands)
    to = var[3:] if var.startswith("to=") else dt
    total = w * max(BITS[dt], BITS[to])
    vec = {o.reg for o in f.operands} & {"xmm", "ymm", "zmm"}
    assert ("zmm" in vec) == (total == 512), s
    if total < 512: assert "AVX512VL" in s.features and total <= 256, s
    cmp = op in ("CMPLT", "CMPEQ", "CMPNE")
    assert s.k_result == cmp and (f.operands[0].reg == "k") == cmp, s
    assert (s.mask is not None) == (op == "WHERE"), s
    if s.mask is not None: assert f.evex_mask and s.mask not in s.srcs
    if s.imm is not None and isinstance(s.imm, int): assert any(o.imm is not None for o in f.operands)
    # without the features: an IselError that says what to do (give features), never a VEX form for 512 bits
    with pytest.raises(IselError, match="features"):
        select(op, dt, w, features=AVX2_CPU, **_kw(var))
    if total == 512:
        with pytest.raises(IselError, match=r"features=x86gen\.jit\.cpu_features"):
            select(op, dt, w, **_kw(var))


def _iced_register(kind: str, n: int):
    import iced_x86 as I
    return getattr(I.Register, f"{kind.upper()}{n}")


# operand i of a form gets register number _REGNUMS[i]: high registers (17, 25) exercise EVEX.R', V' and X
_REGNUMS = (17, 2, 25, 9)


def _instance(s):
    """x86gen operands for selection ``s`` (registers only; the fixed imm, else 5; the mask source in k1) and the same
    instruction built with iced-x86's Instruction.create_* from the iced Code of the form id."""
    import iced_x86 as I
    from iced_oracle import code_of
    f = s.get_form()
    ours, theirs = [], []
    for i, o in enumerate(f.operands):
        if o.imm is not None:
            v = s.imm if isinstance(s.imm, int) else 5
            ours.append(v); theirs.append(v); continue
        n = 2 if o.reg == "k" else _REGNUMS[i]   # k2: a compare's destination (k1 is WHERE's mask)
        ours.append(getattr(x86gen, f"{o.reg}{n}")); theirs.append(_iced_register(o.reg, n))
    if s.mask is not None: ours[0] = ours[0].k(x86gen.k1)
    imms = [t for t, o in zip(theirs, f.operands) if o.imm is not None]
    regs = [t for t, o in zip(theirs, f.operands) if o.imm is None]
    create = getattr(I.Instruction, "create_" + "_".join(["reg"] * len(regs) + ["u32"] * len(imms)))
    ins = create(code_of(f.id), *regs, *imms)
    if s.mask is not None: ins.op_mask = I.Register.K1
    return ours, ins


def _encode(s, ops) -> bytes:
    from x86gen.encoding.decorated import encode_form
    return encode_form(s.get_form(), tuple(ops))


@pytest.mark.parametrize("key", _avx512_keys(forms_only=True))
def test_avx512_encodes_as_iced(key):
    """One register instance of each AVX-512 selection: x86gen's bytes are iced-x86's encoding of the same instruction,
    and iced decodes them as the form's Code (with the WHERE mask as merge-masking {k1})."""
    import iced_x86 as I
    from iced_oracle import code_of
    s = select(*key[:3], features=AVX512, **_kw(key[3]))
    ops, ins = _instance(s)
    enc = I.Encoder(64)
    enc.encode(ins, 0)
    want = enc.take_buffer()
    got = _encode(s, ops)
    assert got == want, f"{s}: x86gen {got.hex()}, iced {want.hex()}"
    d = I.Decoder(64, got).decode()
    assert d.code == code_of(s.form) and d.len == len(got)
    if s.mask is not None: assert d.op_mask == I.Register.K1 and not d.zeroing_masking
    if s.k_result: assert d.op0_kind == I.OpKind.REGISTER and d.op0_register == I.Register.K2


def _pseudo(s) -> str:
    """iced-x86's Intel text of an instance of ``s``, with its compare pseudo-ops (vcmpltps, vpcmpltud, vpcmpneqq)."""
    import iced_x86 as I
    ops, _ = _instance(s)
    return I.Formatter(I.FormatterSyntax.INTEL).format(I.Decoder(64, _encode(s, ops)).decode())


CMP_PSEUDO = {"CMPLT": "lt", "CMPEQ": "eq", "CMPNE": "neq"}   # iced's pseudo-op for each predicate (SDM Vol.2 CMPPS Table 3-1,
# VPCMPD/VPCMPUD: 0 EQ, 1 LT, 4 NEQ); unsigned compares are vpcmp<pred>u<size>


@pytest.mark.parametrize("op", sorted(CMP_PSEUDO))
@pytest.mark.parametrize("dt", ["float16", "float32", "float64", *INTS])
def test_avx512_compare_predicates(op, dt):
    """The compare's predicate is the operation's, read back by iced-x86 (its pseudo-op mnemonics), signed or unsigned as the
    dtype, and the result is a k register."""
    s = select(op, dt, 512 // BITS[dt], features=AVX512)
    text = _pseudo(s)
    mn = text.split()[0]
    pred = CMP_PSEUDO[op]
    if dt.startswith("float"): want = f"vcmp{pred}p{ {'float16': 'h', 'float32': 's', 'float64': 'd'}[dt] }"
    elif op == "CMPEQ": want = "vpcmpeq" + SIZE_SUFFIX[BITS[dt]].lower()   # vpcmpeq*: signedness does not matter
    elif op == "CMPNE":   # != is the same signed or unsigned: vpcmp (or vpcmpu) with NEQ
        want = "vpcmpneq" + ("u" if s.get_form().mnemonic.startswith("vpcmpu") else "") + SIZE_SUFFIX[BITS[dt]].lower()
    else: want = "vpcmplt" + ("u" if dt in UINTS else "") + SIZE_SUFFIX[BITS[dt]].lower()
    assert mn == want, f"{s}: iced reads {text!r}"
    assert text.split()[1].startswith("k2") and s.k_result


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bool", *INTS])
def test_avx512_where_takes_a_from_set_mask_bits(dt):
    """WHERE(cond, a, b) at 512 bits: vblendmp*/vpblendm* zmm {k}, src1, src2 takes src2 where the mask bit is set
    (SDM Vol.2 VBLENDMPS/VPBLENDMB: IF k1[j] THEN DEST[j] := SRC2[j] ELSE DEST[j] := SRC1[j], merge-masking). So the
    condition is the destination's {k}, a is the second source, b the first; iced reads the registers back."""
    import iced_x86 as I
    s = select("WHERE", dt, 512 // BITS[dt], features=AVX512)
    assert s.mask == 0 and s.srcs == (None, 2, 1)
    ops, _ = _instance(s)
    d = I.Decoder(64, _encode(s, ops)).decode()
    assert d.op_mask == I.Register.K1 and not d.zeroing_masking            # mask = the condition, merging
    assert d.op1_register == _iced_register("zmm", _REGNUMS[1])              # srcs[1] = 2: b is src1
    assert d.op2_register == _iced_register("zmm", _REGNUMS[2])              # srcs[2] = 1: a is src2 (taken where set)


# What AVX-512 has for an operation: the instruction (iced-x86's mnemonic) each selection must be, from the SDM
AVX512_FACTS = [
    (("ADD", "float32", 16), {}, "VADDPS"), (("ADD", "int8", 64), {}, "VPADDB"), (("SUB", "float64", 8), {}, "VSUBPD"),
    (("MUL", "int64", 8), {}, "VPMULLQ"), (("MUL", "int16", 32), {}, "VPMULLW"), (("MUL", "int64", 4), {}, "VPMULLQ"),
    (("FDIV", "float32", 16), {}, "VDIVPS"), (("SQRT", "float64", 8), {}, "VSQRTPD"), (("MULACC", "float32", 16), {}, "VFMADD213PS"),
    (("MAX", "uint64", 8), {}, "VPMAXUQ"), (("MIN", "int8", 64), {}, "VPMINSB"), (("MAX", "float32", 16), {}, "VMAXPS"),
    (("SHL", "int16", 32), {}, "VPSLLVW"), (("SHR", "int64", 8), {}, "VPSRAVQ"), (("SHR", "uint32", 16), {}, "VPSRLVD"),
    (("SHR", "int64", 4), {}, "VPSRAVQ"), (("AND", "int64", 8), {}, "VPANDQ"), (("XOR", "float32", 16), {}, "VPXORD"),
    (("TRUNC", "float32", 16), {}, "VRNDSCALEPS"), (("BROADCAST", "int64", 8), {}, "VPBROADCASTQ"),
    (("BROADCAST", "float32", 16), {}, "VBROADCASTSS"), (("LOAD", "float32", 16), {}, "VMOVUPS"),
    (("STORE", "int64", 8), {}, "VMOVDQU64"), (("CAST", "float32", 16), {"to": "uint32"}, "VCVTTPS2UDQ"),
    (("CAST", "uint64", 8), {"to": "float64"}, "VCVTUQQ2PD"), (("CAST", "int32", 16), {"to": "int8"}, "VPMOVDB"),
    (("CAST", "uint8", 32), {"to": "int16"}, "VPMOVZXBW"), (("CMPLT", "uint32", 16), {}, "VPCMPUD"),
    (("WHERE", "int16", 32), {}, "VPBLENDMW"),
]


@pytest.mark.parametrize("args, kw, mnemonic", AVX512_FACTS, ids=lambda x: str(x)[:30])
def test_avx512_facts(args, kw, mnemonic):
    import iced_x86 as I
    s = select(*args, features=AVX512, **kw)
    ops, _ = _instance(s)
    d = I.Decoder(64, _encode(s, ops)).decode()
    assert d.mnemonic == getattr(I.Mnemonic, mnemonic), s
    total = args[2] * max(BITS[args[1]], BITS[kw.get("to", args[1])])
    reg = {512: I.Register.ZMM0, 256: I.Register.YMM0, 128: I.Register.XMM0}[total]
    assert any(I.Register.ZMM0 <= getattr(d, f"op{i}_register") <= I.Register.ZMM31 for i in range(d.op_count)) == (reg == I.Register.ZMM0)


@pytest.mark.parametrize("args, kw, match", [
    (("ADD", "int8", 64), {"features": {"AVX512F"}}, "needs AVX512BW"),
    (("MUL", "int64", 8), {"features": {"AVX512F", "AVX512BW"}}, "needs AVX512DQ"),
    (("MUL", "int64", 4), {"features": {"AVX512F", "AVX512DQ"}}, "needs AVX512VL"),
    (("ADD", "float32", 16), {"features": AVX2_CPU}, "needs AVX512F"),
    (("CMPLT", "uint32", 16), {"features": AVX2_CPU}, "needs AVX512F"),
    (("ADD", "float16", 32), {"features": AVX512 - {"AVX512_FP16"}}, "needs AVX512_FP16.*float32"),
    (("ADD", "float32", 16), {}, r"features=x86gen\.jit\.cpu_features\(\)"),
    (("MUL", "int8", 64), {"features": AVX512}, "widen to int16"),
    (("IDIV", "int32", 16), {"features": AVX512}, "no packed integer division"),
    (("GEP", "float32", 16), {"features": AVX512}, "VEXTRACTF32X4"),
    (("CMPLT", "float32", 16), {"features": AVX512, "flags": True}, "CMPLT has: .*float32 x1,2,4,8,16"),
    (("ADD", "int8", 128), {"features": AVX512}, "ADD has: .*x1,2,4,8,16,32,64"),
    (("ADD", "float32", 16), {"features": 5}, "iterable of CPUID feature names"),
])
def test_avx512_errors(args, kw, match):
    with pytest.raises(IselError, match=match):
        select(*args, **kw)


def test_avx512_features_spelling():
    """features is any iterable of names (a frozenset as jit.cpu_features() returns, a list, one string), any case."""
    want = select("ADD", "float32", 16, features=frozenset({"AVX512F"}))
    assert select("ADD", "float32", 16, features=["avx512f"]) == want == select("ADD", "float32", 16, features="AVX512F")
    assert want.form == "EVEX_VADDPS_ZMM_K1Z_ZMM_ZMMM512B32_ER" and "mask" not in str(want)
    assert "mask=0" in str(select("WHERE", "float32", 16, features=AVX512))
    assert ("ADD", "float32", 16, "") in isel.available("ADD", avx512=True)
    assert not set(isel.available(avx512=True)) & set(isel.available())


def test_avx512_tinygrad_mode_ignores_features():
    """tinygrad 0.14.0 encodes legacy and VEX forms only: mode="tinygrad" gives the same with or without features."""
    assert select("ADD", "float32", 4, mode="tinygrad", features=AVX512) == select("ADD", "float32", 4, mode="tinygrad")
    for kw in ({}, {"features": AVX512}):
        with pytest.raises(IselError, match="tinygrad 0.14.0 has no AVX-512 selections"):
            select("ADD", "float32", 16, mode="tinygrad", **kw)
    with pytest.raises(IselError, match="VPMULLQ is AVX-512"):   # the VEX table's reason stays where it has one
        select("MUL", "int64", 4, mode="tinygrad", features=AVX512)


def test_isel_docstring_examples():
    import doctest
    assert doctest.testmod(isel).failed == 0


def _spec_forms(tmp_path):
    """A two-family isa file (vaddps VEX and EVEX) loaded by codegen, for the isel_avx512 checks."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from codegen.spec import load
    p = tmp_path / "x.yaml"
    p.write_text("vaddps:\n  cpuid: AVX\n  forms:\n  - W:ymm, ymm, ymm/m256 | VEX.256.0F.WIG 58 /r\n"
                 "vblendmps:\n  cpuid: AVX512F\n  forms:\n"
                 "  - W:zmm, zmm, zmm/m512 | EVEX.512.66.0F38.W0 65 /r | tuple=FV bcst=32 mask=k1z\n")
    return {f.id: f for f in load(str(p))}


@pytest.mark.parametrize("section, entry, match", [
    ("avx512", "float32 x512 | VEX_VADDPS_YMM_YMM_YMMM256", "no EVEX form"),
    ("isel", "float32 x8 | EVEX_VBLENDMPS_ZMM_K1Z_ZMM_ZMMM512B32", "belongs in isel_avx512"),
    ("isel", "float32 x512 | VEX_VADDPS_YMM_YMM_YMMM256", "only in isel_avx512"),
    ("isel", "float32 x8 | VEX_VADDPS_YMM_YMM_YMMM256 | mask=0", "mask= needs"),
    ("avx512", "float32 x512 | EVEX_VBLENDMPS_ZMM_K1Z_ZMM_ZMMM512B32 | srcs=-,0,1 mask=0", "srcs= places too"),
    ("avx512", "float32 x32 | EVEX_VBLENDMPS_ZMM_K1Z_ZMM_ZMMM512B32", "does not fit 512 bits"),
])
def test_avx512_spec_checks(tmp_path, section, entry, match):
    """codegen/companion.py refuses what the isel_avx512 section cannot mean, naming the file and line."""
    from codegen.companion import expand_isel
    from codegen.spec import SpecError
    with pytest.raises(SpecError, match=match) as e:
        expand_isel("WHERE", entry, 7, _spec_forms(tmp_path), "isa/tinygrad.yaml", section == "avx512")
    assert "tinygrad.yaml" in str(e.value) and "7" in str(e.value)


def test_avx512_section_never_replaces_a_vex_selection(tmp_path):
    """An isel_avx512 key that isel already selects (up to 256 bits the VEX form wins) is a SpecError at its line."""
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root))
    from codegen.companion import context
    from codegen.spec import SpecError, load
    text = (root / "isa/tinygrad.yaml").read_text(encoding="utf-8")
    entry = '  - "int64 xv            | EVEX_VPSRAVQ_{V}_K1Z_{V}_{V}M{VB}B64 | | arithmetic shift (AVX512F + AVX512VL)"\n'
    assert entry in text
    bad = text.replace(entry, entry + '  - "int32 xv            | EVEX_VPSRAVD_{V}_K1Z_{V}_{V}M{VB}B32"\n')
    line = bad[:bad.index("EVEX_VPSRAVD_{V}")].count("\n") + 1
    p = tmp_path / "tinygrad.yaml"
    p.write_text(bad, encoding="utf-8")
    with pytest.raises(SpecError, match=rf"tinygrad\.yaml:{line}: isel_avx512\.SHR: \('SHR', 'int32', 2, ''\) has a VEX selection"):
        context(str(p), load(str(root / "isa/x86_64.yaml")))


# ---- bfloat16, fp8e4m3, fp8e5m2: AVX10.2 (cpuid AVX10_2) and AVX512_BF16 ---------------------------------------------
AVX10_2 = AVX512 | {"AVX512_BF16", "AVX10_2"}   # a CPU with AVX10.2 (none runs here: this machine's CPU has no AVX10.2)
NEW_BITS = {**BITS, "bfloat16": 16, "fp8e4m3": 8, "fp8e5m2": 8}
_VEC = {128: "XMM", 256: "YMM", 512: "ZMM"}


def _avx10_facts():
    """The selections the Intel AVX10.2 Architecture Specification's instruction list makes possible (ids in iced's
    naming: EVEX.{128,256,512}.66.MAP5.W0 58 /r VADDBF16 xmm1{k1}{z}, xmm2, xmm3/m128/m16bcst ...), and AVX512_BF16's
    VCVTNEPS2BF16 (SDM Vol.2). For compares: the predicate (the spec's VCMPBF16 takes the VCMPPH/CMPPS predicates, SDM
    Vol.2 Table 3-1: 0 EQ_OQ, 1 LT_OS, 4 NEQ_UQ)."""
    out = []
    for lanes, bits in ((8, 128), (16, 256), (32, 512)):
        r = _VEC[bits]
        for op, mn in (("ADD", "VADDBF16"), ("SUB", "VSUBBF16"), ("MUL", "VMULBF16"), ("FDIV", "VDIVBF16"),
                       ("MAX", "VMAXBF16"), ("MIN", "VMINBF16"), ("MULACC", "VFMADD213BF16")):
            out.append((op, "bfloat16", lanes, {}, f"EVEX_{mn}_{r}_K1Z_{r}_{r}M{bits}B16", None))
        out.append(("SQRT", "bfloat16", lanes, {}, f"EVEX_VSQRTBF16_{r}_K1Z_{r}M{bits}B16", None))
        for op, imm in (("CMPLT", 1), ("CMPEQ", 0), ("CMPNE", 4)):
            out.append((op, "bfloat16", lanes, {}, f"EVEX_VCMPBF16_KR_K1_{r}_{r}M{bits}B16_IMM8", imm))
    out += [
        # VCVTPH2HF8S / VCVTPH2BF8S xmm1{k1}{z}, xmm2/m128/m16bcst (8 lanes), xmm1, ymm2/m256 (16), ymm1, zmm2/m512 (32)
        ("CAST", "float16", 8, {"to": "fp8e4m3"}, "EVEX_VCVTPH2HF8S_XMM_K1Z_XMMM128B16", None),
        ("CAST", "float16", 16, {"to": "fp8e4m3"}, "EVEX_VCVTPH2HF8S_XMM_K1Z_YMMM256B16", None),
        ("CAST", "float16", 32, {"to": "fp8e4m3"}, "EVEX_VCVTPH2HF8S_YMM_K1Z_ZMMM512B16", None),
        ("CAST", "float16", 8, {"to": "fp8e5m2"}, "EVEX_VCVTPH2BF8S_XMM_K1Z_XMMM128B16", None),
        ("CAST", "float16", 16, {"to": "fp8e5m2"}, "EVEX_VCVTPH2BF8S_XMM_K1Z_YMMM256B16", None),
        ("CAST", "float16", 32, {"to": "fp8e5m2"}, "EVEX_VCVTPH2BF8S_YMM_K1Z_ZMMM512B16", None),
        # VCVTHF82PH xmm1{k1}{z}, xmm2/m64 (8 lanes), ymm1, xmm2/m128 (16), zmm1, ymm2/m256 (32)
        ("CAST", "fp8e4m3", 8, {"to": "float16"}, "EVEX_VCVTHF82PH_XMM_K1Z_XMMM64", None),
        ("CAST", "fp8e4m3", 16, {"to": "float16"}, "EVEX_VCVTHF82PH_YMM_K1Z_XMMM128", None),
        ("CAST", "fp8e4m3", 32, {"to": "float16"}, "EVEX_VCVTHF82PH_ZMM_K1Z_YMMM256", None),
        # VCVTNEPS2BF16 xmm1{k1}{z}, xmm2/m128/m32bcst (4 lanes), xmm1, ymm2/m256 (8), ymm1, zmm2/m512 (16)
        ("CAST", "float32", 4, {"to": "bfloat16"}, "EVEX_VCVTNEPS2BF16_XMM_K1Z_XMMM128B32", None),
        ("CAST", "float32", 8, {"to": "bfloat16"}, "EVEX_VCVTNEPS2BF16_XMM_K1Z_YMMM256B32", None),
        ("CAST", "float32", 16, {"to": "bfloat16"}, "EVEX_VCVTNEPS2BF16_YMM_K1Z_ZMMM512B32", None),
    ]
    return [pytest.param(*f, id=f"{f[0]}-{f[1]}x{f[2]}{'-' + f[3]['to'] if f[3] else ''}") for f in out]


@pytest.mark.parametrize("op, dt, w, kw, form, imm", _avx10_facts())
def test_avx10_2_facts(op, dt, w, kw, form, imm):
    s = select(op, dt, w, features=AVX10_2, **kw)
    assert s.form == form and s.imm == imm, s
    assert s.k_result == op.startswith("CMP") and s.mask is None
    want = {"AVX512F", "AVX512_BF16"} if w * 32 == 512 else {"AVX512VL", "AVX512_BF16"}
    assert s.features == (want if kw.get("to") == "bfloat16" else {"AVX10_2"}), s


def test_avx10_2_mulacc_accumulates_the_third_source():
    """VFMADD213BF16 (AVX10.2 spec): DEST := DEST * SRC2 + SRC3, so MULACC(a, b, c) = a * b + c puts a in the destination
    (also the first factor), b second and the accumulator c third, as the float32/float16 vfmadd213 entries do."""
    for w in (8, 16, 32):
        assert select("MULACC", "bfloat16", w, features=AVX10_2).srcs == (0, 1, 2)
    assert select("MULACC", "float16", 32, features=AVX10_2).srcs == (0, 1, 2)


@pytest.mark.parametrize("key", _avx512_keys(new_dtypes=True))
def test_avx10_2_selection(key):
    """Each selection for the new dtypes: an EVEX form whose features are within AVX10_2 (or AVX512_BF16's), a register of
    the width's size (xmm/ymm below 512 bits: with AVX10.2 there are no VL variants to ask for), a k destination exactly
    for compares; without the feature an IselError naming it."""
    op, dt, w, var = key
    s = select(op, dt, w, features=AVX10_2, **_kw(var))
    f = s.get_form()
    assert f.encoding_kind == "evex" and s.features and s.features <= AVX10_2 and len(s.srcs) == len(f.operands), s
    to = var[3:] if var.startswith("to=") else dt
    total = w * max(NEW_BITS[dt], NEW_BITS[to])
    assert max({"xmm": 128, "ymm": 256, "zmm": 512}.get(o.reg, 0) for o in f.operands) == max(128, total), s
    assert s.k_result == op.startswith("CMP"), s
    need = sorted(s.features - AVX512)
    assert need in (["AVX10_2"], ["AVX512_BF16"]), s
    for feats in (AVX10_2 - set(need), AVX2_CPU):
        with pytest.raises(IselError, match=f"needs .*{need[0]}"):
            select(op, dt, w, features=feats, **_kw(var))
    with pytest.raises(IselError, match=rf"with [A-Z0-9_, ]*{need[0]}.*features=x86gen\.jit\.cpu_features\(\)"):
        select(op, dt, w, **_kw(var))


def _llvm():
    import llvm_oracle
    if not llvm_oracle.HAVE_LLVM22: pytest.skip(llvm_oracle.MISSING)
    return llvm_oracle


def test_avx10_2_selections_encode_as_llvm_reads_them():
    """Every new selection encoded with the operands isel gives (generic source i in register (2, 25, 9)[i], the
    destination in register 17 or k2): llvm-objdump-22 reads the bytes as the instruction with the sources where the
    operation needs them (binary ops ``mn dst, a, b``; MULACC ``vfmadd213bf16 a, b, c``; compares LLVM's pseudo-op of
    the predicate: vcmpltbf16, vcmpeqbf16, vcmpneqbf16), in registers of the width's size."""
    llvm = _llvm()
    src_reg = (2, 25, 9)
    cases, chunks = [], []
    for p in _avx512_keys(new_dtypes=True):
        op, dt, w, var = p.values[0]
        s = select(op, dt, w, features=AVX10_2, **_kw(var))
        f = s.get_form()
        ops = []
        for o, src in zip(f.operands, s.srcs):
            if o.imm is not None: ops.append(s.imm); continue
            ops.append(getattr(x86gen, f"{o.reg}{2 if o.reg == 'k' else 17 if src is None else src_reg[src]}"))
        chunks.append(_encode(s, ops))
        to = var[3:] if var.startswith("to=") else dt
        dst_bits, src_bits = max(128, w * NEW_BITS[to]), max(128, w * NEW_BITS[dt])
        vr = lambda bits: _VEC[bits].lower()
        if op == "MULACC": want = f"{f.mnemonic} {vr(dst_bits)}2, {vr(dst_bits)}25, {vr(dst_bits)}9"
        elif op in CMP_PSEUDO: want = f"vcmp{CMP_PSEUDO[op]}bf16 k2, {vr(src_bits)}2, {vr(src_bits)}25"
        elif op in ("SQRT", "CAST"): want = f"{f.mnemonic} {vr(dst_bits)}17, {vr(src_bits)}2"
        else: want = f"{f.mnemonic} {vr(dst_bits)}17, {vr(src_bits)}2, {vr(src_bits)}25"
        cases.append((s, want))
    assert len(cases) >= 33 + 9 + 3
    for (s, want), got in zip(cases, llvm.disassemble(chunks)):
        assert got == [want], f"{s}: llvm-objdump-22 reads {got}, want {want!r}"


@pytest.mark.parametrize("args, kw, match", [
    (("ADD", "fp8e4m3", 32), {"features": AVX10_2}, "no FP8 arithmetic"),
    (("MULACC", "fp8e5m2", 64), {"features": AVX10_2}, "no FP8 arithmetic"),
    (("CMPLT", "fp8e4m3", 16), {"features": AVX10_2}, "no FP8 compare"),
    (("CAST", "fp8e5m2", 16), {"features": AVX10_2, "to": "float16"}, "high byte of a float16.*VPSLLW 8"),
    (("CAST", "bfloat16", 16), {"features": AVX10_2, "to": "float32"}, "high half of a float32.*VPSLLD 16"),
    (("CAST", "float32", 8), {"features": AVX10_2, "to": "fp8e4m3"}, "through float16"),
    (("ADD", "bfloat16", 1), {"features": AVX10_2}, "no scalar BF16"),
    (("ADD", "bfloat16", 64), {"features": AVX10_2}, "ADD has: .*bfloat16 x2,4,8,16,32"),
    (("ADD", "bfloat16", 32), {"features": AVX512}, "needs AVX10_2.*vaddbf16"),
    (("CMPLT", "bfloat16", 8), {"features": AVX512 | {"AVX512_BF16"}}, "needs AVX10_2"),
    (("CAST", "float16", 32), {"features": AVX512, "to": "fp8e4m3"}, "needs AVX10_2"),
    (("CAST", "float32", 16), {"features": AVX512, "to": "bfloat16"}, "needs AVX512_BF16"),
    (("ADD", "bfloat16", 16), {}, r"with AVX10_2: give the CPU's features"),
    (("ADD", "float8_e4m3fnuz", 16), {"features": AVX10_2}, "unknown dtype"),
])
def test_avx10_2_errors(args, kw, match):
    with pytest.raises(IselError, match=match):
        select(*args, **kw)


def test_new_dtypes_in_the_grammar():
    """bfloat16, fp8e4m3 and fp8e5m2 are dtypes of isel and of the spec's grammar; the groups that existed before them
    (floats, all) expand as they did, and tinygrad's DType names (and objects, when tinygrad is installed) are accepted."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from codegen.companion import DTYPE_BITS, DTYPE_GROUPS
    assert isel.DTYPES[-3:] == NEW_DTYPES and {d: DTYPE_BITS[d] for d in NEW_DTYPES} == {"bfloat16": 16, "fp8e4m3": 8, "fp8e5m2": 8}
    assert DTYPE_GROUPS["floats"] == ("float16", "float32", "float64")
    assert DTYPE_GROUPS["all"] == (*INTS, "bool", "float16", "float32", "float64")
    assert DTYPE_GROUPS["fp8s"] == ("fp8e4m3", "fp8e5m2")
    for name, dt in (("__bf16", "bfloat16"), ("float8_e4m3", "fp8e4m3"), ("float8_e5m2", "fp8e5m2")):
        assert isel.ALIASES[name] == dt
    assert select("ADD", "__bf16", 16, features=AVX10_2).dtype == "bfloat16"
    assert select("CAST", "half", 8, to="float8_e4m3", features=AVX10_2).form == "EVEX_VCVTPH2HF8S_XMM_K1Z_XMMM128B16"
    assert select("CAST", "half", 8, to="float8_e5m2", features=AVX10_2).form == "EVEX_VCVTPH2BF8S_XMM_K1Z_XMMM128B16"
    try:
        from tinygrad import dtypes
    except ImportError:
        return
    for dt in NEW_DTYPES: assert getattr(dtypes, dt).itemsize * 8 == NEW_BITS[dt]   # tinygrad's own names and sizes
    assert select("SQRT", dtypes.bfloat16, 32, features=AVX10_2).form == "EVEX_VSQRTBF16_ZMM_K1Z_ZMMM512B16"
    assert select("CAST", dtypes.fp8e4m3, 16, to=dtypes.half, features=AVX10_2).form == "EVEX_VCVTHF82PH_YMM_K1Z_XMMM128"
    assert select("ADD", dtypes.uint8, 1).form == "ADD_R8_RM8"   # (tinygrad's C names: 'unsigned char')


@pytest.mark.parametrize("key", _avx512_keys(new_dtypes=True) + [
    pytest.param(("ADD", "fp8e4m3", 32, ""), id="ADD-fp8e4m3x32"), pytest.param(("CAST", "fp8e5m2", 8, "to=float16"), id="fp8e5m2-f16"),
    pytest.param(("ADD", "bfloat16", 1, ""), id="ADD-bfloat16x1")])
def test_avx10_2_tinygrad_mode_has_none(key):
    """tinygrad 0.14.0 selects nothing for bfloat16 / fp8 on x86 (its X86Ops have no BF16, FP8 or EVEX forms): mode="tinygrad"
    raises, with or without features."""
    op, dt, w, var = key
    for kw in ({}, {"features": AVX10_2}):
        with pytest.raises(IselError):
            select(op, dt, w, mode="tinygrad", **kw, **_kw(var))
