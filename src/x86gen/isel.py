"""Instruction selection: which x86gen form implements a generic operation for a dtype and vector width.

    >>> from x86gen import isel
    >>> isel.select("ADD", "float32", 8).form
    'VEX_VADDPS_YMM_YMM_YMMM256'
    >>> s = isel.select("CMPLT", "int32", 8)          # a < b is b > a: the sources are exchanged
    >>> s.form, s.srcs, s.swapped
    ('VEX_VPCMPGTD_YMM_YMM_YMMM256', (None, 1, 0), True)
    >>> isel.select("TRUNC", "float32", 4).imm        # vroundps mode 3: toward zero
    3

Operations are named as tinygrad's ``Ops`` (ADD, SUB, MUL, FDIV, IDIV, MOD, NEG, AND, OR, XOR, SHL, SHR,
MAX, SQRT, TRUNC, MULACC, CMPLT, CMPEQ, CMPNE, WHERE, CAST, BITCAST, LOAD, STORE, CONST, INDEX, GEP,
VECTORIZE, SINK) plus MIN, COPY (register to register), BROADCAST (one value to every lane), SHUFFLE (a
two-source lane shuffle: vshufps/vshufpd) and IF (a conditional jump). dtypes are tinygrad's names:
bool, int8 … int64, uint8 … uint64, float16, float32, float64, bfloat16, fp8e4m3 and fp8e5m2 (aliases such as
``float``, ``half``, ``int``, ``uchar``, the names tinygrad's ``DType`` objects carry (``__bf16``, ``float8_e4m3``) and
those objects themselves, whose ``count`` is the width, are accepted too). bfloat16 and the fp8 dtypes (OCP E4M3, which
Intel calls HF8, and E5M2, BF8) have selections only with AVX10.2 or AVX512_BF16 in ``features`` (below).
``width`` is the number of lanes: 1 is a scalar (a general register for ints and bool, the low lane of
an xmm register for floats); vectors use an xmm register up to 128 bits, a ymm register up to 256, and with
AVX-512 ``features`` a zmm register up to 512.

Variants (keyword arguments; at most one):

- ``const=True``: the second source is an immediate (``add r/m32, imm32``, ``shl r/m32, imm8``).
- ``flags=True``: a compare whose result is consumed as rflags (by WHERE or IF with ``cc=``); float
  compares then use vucomiss/vucomisd instead of a lane mask. Integer compares always set rflags, so
  they ignore ``flags``.
- ``cc="l"``: WHERE (cmovcc) and IF (jcc) consuming rflags with that condition code, usually
  ``select("CMPLT", dtype).cc``.
- ``to="float32"``: the destination dtype of CAST and BITCAST (``dtype`` is the source).

The result is a `Selection`: ``form`` (the form id, or None when no instruction is needed: same-size
casts, bitcasts within one register file), ``srcs`` (for each explicit operand of the form in Intel
order, the index of the generic source that goes there, None for the destination, merge registers and
fixed immediates), ``imm`` (the fixed immediate: an int, or an expression in ``lane``/``i``/``lanes``
for GEP, VECTORIZE and SHUFFLE), ``cc`` (the condition code: for a compare, the one to read its rflags
with; for cmovcc/jcc, the one tested),
``then`` (forms that complete the operation, e.g. ``SETL_RM8`` for a bool result), ``note`` and ``mask`` (AVX-512
WHERE: the generic source that is the destination's opmask; None elsewhere).

AVX-512 (``features=``): without it (the default) selections are the VEX/AVX2 ones above, and assume AVX2, FMA
and F16C. ``features`` is an iterable of CPUID feature names as iced-x86 and the forms' ``cpuid`` spell them
("AVX512F", "AVX512BW", "AVX512DQ", "AVX512VL", "AVX512_FP16"), e.g. `x86gen.jit.cpu_features()` (a frozenset).
With it, a selection of the AVX-512 table (isa/tinygrad.yaml ``isel_avx512``) is chosen when the form's AVX-512
features are all given (``Selection.features``):

    >>> avx512 = {"AVX512F", "AVX512BW", "AVX512DQ", "AVX512VL"}
    >>> isel.select("ADD", "float32", 16, features=avx512).form
    'EVEX_VADDPS_ZMM_K1Z_ZMM_ZMMM512B32_ER'
    >>> s = isel.select("CMPLT", "uint32", 16, features=avx512)   # vpcmpud k, zmm, zmm/m512, 1 (LT, unsigned)
    >>> s.form, s.imm, s.k_result
    ('EVEX_VPCMPUD_KR_K1_ZMM_ZMMM512B32_IMM8', 1, True)
    >>> w = isel.select("WHERE", "float32", 16, features=avx512)  # vblendmps zmm {k}, b, a
    >>> w.srcs, w.mask
    ((None, 2, 1), 0)

- 512-bit widths (16 x float32, 8 x float64, 64 x int8, 32 x int16, 16 x int32, 8 x int64, 32 x float16 with
  AVX512_FP16) select zmm EVEX forms; up to 256 bits the VEX form stays (shorter, what compilers emit), except where
  AVX2 has none and AVX512VL does (vpmullq, vpsravq, vpsllvw/vpsrlvw/vpsravw, vpmaxsq/vpminuq ... on xmm/ymm).
- Compares at 512 bits write an opmask register (``Selection.k_result``: a k register, one bit per lane, not a lane
  mask in a vector register): vcmpps/vcmppd/vcmpph with the VEX predicates (1 LT_OS, 0 EQ_OQ, 4 NEQ_UQ),
  vpcmpeq{b,w,d,q}, vpcmp{b,w,d,q} (signed) and vpcmpu{b,w,d,q} (unsigned, so packed unsigned ``<`` exists) with
  predicate 1 LT or 4 NEQ. There are no ``flags`` variants at 512 bits.
- WHERE at 512 bits takes such a k register: ``Selection.mask`` is the generic source (the condition, 0) that goes
  into the destination's ``{k}`` (EVEX.aaa; merge-masking, never ``{z}``), e.g. ``zmm0.k(k1)``; vblendmps,
  vblendmpd and vpblendm{b,w,d,q} take the second source where the mask bit is set, so ``srcs`` is (None, 2, 1).
- A form whose features are not all given raises `IselError` naming the missing ones (``ADD int8 x64`` needs
  AVX512BW); so does ``features=cpu_features()`` on a CPU without AVX-512 for a 512-bit width.
- AVX10.2 (``"AVX10_2"`` in features; `x86gen.jit.cpu_features()` reports it from CPUID leaf 24H): bfloat16 ADD, SUB,
  MUL, FDIV, MAX, MIN, SQRT, MULACC (vfmadd213bf16: a is the destination, c the third operand) and CMPLT/CMPEQ/CMPNE
  (vcmpbf16 into a k register, the vcmpph predicates) at 2 to 32 lanes, in xmm and ymm registers too (there is no VEX
  BF16 arithmetic); CAST float16 -> fp8e4m3 / fp8e5m2 (vcvtph2hf8s / vcvtph2bf8s: saturating, as tinygrad's
  float_to_fp8) and fp8e4m3 -> float16 (vcvthf82ph) at 8, 16, 32 lanes. CAST float32 -> bfloat16 is AVX512_BF16's
  vcvtneps2bf16. What has no instruction (fp8 arithmetic, fp8e5m2 -> float16 and bfloat16 -> float32, which are shifts)
  raises `IselError` saying what to do:

    >>> bf16 = avx512 | {"AVX10_2"}
    >>> s = isel.select("MULACC", "bfloat16", 32, features=bf16)
    >>> s.form, s.srcs
    ('EVEX_VFMADD213BF16_ZMM_K1Z_ZMM_ZMMM512B16', (0, 1, 2))
    >>> isel.select("CMPLT", "bfloat16", 8, features=bf16).imm      # vcmpbf16 k, xmm, xmm/m128, 1 (LT_OS)
    1

- ``mode="tinygrad"`` ignores ``features``: tinygrad 0.14.0 encodes legacy and VEX forms only.

What does not exist raises `IselError`, naming the reason when it is known (no AVX2 instruction,
done in float32 first, …) and listing what the operation does have. `IselError` is both an
`x86gen.EncodeError` (so ``except x86gen.EncodeError`` catches every x86gen failure) and a
`LookupError` (it is a failed table lookup).

``mode="tinygrad"`` gives tinygrad 0.14.0's own choices instead of x86gen's (isa/tinygrad.yaml ``isel_tinygrad``).
Which choices mirror 0.14.0 and which deliberately differ: everything in the table is 0.14.0's selection
(checked op by op in tests/test_isel.py) except

- float ``<`` consumed as flags: x86gen compares b with a and tests ``above`` (exactly a < b, false for NaN);
  0.14.0 compares a with b and tests CF (cmovb: true for NaN) or SF != OF (jl: never taken after ucomiss);
- float -> uint32: x86gen converts to int64 (exact); 0.14.0 uses the signed 32-bit conversion;
- packed unsigned ``<``: x86gen raises (AVX2 has no unsigned compare); 0.14.0 uses the signed vpcmpgt*;
- scalar/small register copies (vmovss/vmovsd): x86gen merges from the source; 0.14.0 from xmm0;
- vectors wider than 128 bits: x86gen uses ymm registers; 0.14.0 has xmm registers only;
- selections 0.14.0 does not make: the earlier change's (vmax*/vmin*, vfmadd213*, vbroadcastss, vpbroadcast*,
  vshufps/pd) and x86gen's extensions (vpminsd/vpmaxud, neg, mod, 256-bit moves) — an `IselError` in that mode.

The table is generated from the ``isel`` section of isa/tinygrad.yaml; the facts come from tinygrad's
x86 backend (tinygrad/renderer/isa/x86.py), corrected where it does not follow the hardware, and
extended where AVX2 has an obvious instruction (MIN/MAX of int32/uint32, NEG, MOD, 256-bit moves).
This module is imported on first use (``x86gen.isel``), not by ``import x86gen``.
"""
from __future__ import annotations

from typing import NamedTuple

from ._gen.isel import (
    CONDITION_CODES,
    DTYPE_BITS,
    TABLE,
    TABLE_AVX512,
    TINYGRAD_TABLE,
    TINYGRAD_UNAVAILABLE,
    UNAVAILABLE,
    UNAVAILABLE_AVX512,
)
from .errors import EncodeError, wrong_type

__all__ = ["IselError", "Selection", "select", "available", "DTYPES", "CONDITION_CODES", "MODES"]
MODES = ("x86gen", "tinygrad")

DTYPES: tuple[str, ...] = tuple(DTYPE_BITS)
ALIASES = {"float": "float32", "half": "float16", "double": "float64", "char": "int8", "uchar": "uint8", "short": "int16",
           "ushort": "uint16", "int": "int32", "uint": "uint32", "long": "int64", "ulong": "uint64",
           # the names tinygrad's DType objects carry (DType.name): its C type names
           "signed char": "int8", "unsigned char": "uint8", "unsigned short": "uint16", "unsigned int": "uint32",
           "unsigned long": "uint64", "__bf16": "bfloat16", "float8_e4m3": "fp8e4m3", "float8_e5m2": "fp8e5m2"}


class IselError(EncodeError, LookupError):
    """No form implements the requested operation/dtype/width/variant; the message says why when it is
    known and lists what exists for the operation."""


class Selection(NamedTuple):
    """One entry of the isel table; see the module docstring for the fields."""

    op: str
    dtype: str
    width: int
    variant: str
    form: str | None
    srcs: tuple[int | None, ...]
    imm: int | str | None
    cc: str | None
    then: tuple[str, ...]
    note: str
    mask: int | None = None

    @property
    def features(self) -> frozenset[str]:
        """The CPUID features the form needs beyond the AVX2 baseline: its AVX-512 and AVX10 ones (``{"AVX512F"}``,
        ``{"AVX512VL", "AVX512DQ"}``, ``{"AVX512F", "AVX512_BF16"}``, ``{"AVX10_2"}``); empty for VEX and legacy forms and
        no-ops of the VEX table."""
        if self.form is None: return frozenset({"AVX512F"} if self.width * DTYPE_BITS.get(self.dtype, 0) > 256 else ())
        return frozenset(x for x in self.get_form().cpuid.split("+") if x.startswith(("AVX512", "AVX10")))

    @property
    def k_result(self) -> bool:
        """True when the result is an opmask register k0-k7, one bit per lane (an AVX-512 compare): use it as WHERE's
        condition (`mask`) or move it with kmov; not a lane mask in a vector register."""
        f = self.get_form()
        return f is not None and bool(f.operands) and f.operands[0].reg == "k"

    @property
    def swapped(self) -> bool:
        """True when the generic sources reach the form out of their order (vpcmpgt for CMPLT, vblendv*)."""
        order = [s for s in self.srcs if s is not None]
        return order != sorted(order)

    @property
    def noop(self) -> bool:
        """True when no instruction is needed."""
        return self.form is None

    def get_form(self):
        """The `x86gen.forms.Form` (None for a no-op)."""
        if self.form is None: return None
        from .forms import get_form
        return get_form(self.form)

    def __str__(self) -> str:
        what = f"{self.op} {self.dtype or '-'} x{self.width}" + (f" {self.variant}" if self.variant else "")
        if self.form is None: return f"{what} -> no instruction ({self.note})"
        f = self.get_form()
        extra = [f"srcs={self.srcs}"] + ([f"imm={self.imm}"] if self.imm is not None else []) + \
                ([f"cc={self.cc}"] if self.cc else []) + ([f"then={','.join(self.then)}"] if self.then else []) + \
                ([f"mask={self.mask}"] if self.mask is not None else [])
        return f"{what} -> {self.form} ({f.syntax}) " + " ".join(extra)


def _dtype(dtype, width: int) -> tuple[str, int]:
    if dtype is None: return "", width
    if not isinstance(dtype, str):   # a tinygrad DType: name of the scalar, count = lanes
        count = getattr(dtype, "count", 1)
        if count.__class__ is not int:   # (a list's count method, …)
            raise wrong_type("x86gen.isel.select", "dtype", dtype, "a dtype name such as 'int32' or a tinygrad DType")
        scalar = dtype.scalar() if hasattr(dtype, "scalar") else dtype
        dtype = getattr(scalar, "name", str(scalar))
        if count > 1 and width == 1: width = count
    name = ALIASES.get(dtype, dtype)
    if name not in DTYPE_BITS: raise IselError(f"unknown dtype {dtype!r} (use one of {', '.join(DTYPES)})")
    return name, width


def available(op: str | None = None, *, avx512: bool = False) -> list[tuple[str, str, int, str]]:
    """The keys (op, dtype, width, variant) of the table, all or one operation's, sorted; ``avx512=True``: those of
    the AVX-512 table (what ``features=`` can add)."""
    return sorted(k for k in (TABLE_AVX512 if avx512 else TABLE) if op is None or k[0] == op)


def _features(features) -> frozenset[str]:
    """``features`` as a set of upper-case CPUID feature names (a string is one name)."""
    if isinstance(features, str): features = (features,)
    try: names = frozenset(str(x).upper() for x in features)
    except TypeError: raise IselError(f"features must be an iterable of CPUID feature names such as 'AVX512F', not "
                                      f"{type(features).__name__}") from None
    return names


def _summary(op: str, avx512: bool = False) -> str:
    by: dict[tuple[str, str], list[int]] = {}
    keys = set(TABLE) | (set(TABLE_AVX512) if avx512 else set())
    for o, dt, w, var in sorted(keys, key=lambda k: (k[0], k[3], DTYPES.index(k[1]) if k[1] else -1, k[2])):
        if o == op: by.setdefault((dt, var), []).append(w)
    if not by: return f"no operation {op!r} (operations: {', '.join(sorted({k[0] for k in TABLE}))})"
    same: dict[tuple[str, tuple[int, ...]], list[str]] = {}
    for (dt, var), ws in by.items(): same.setdefault((var, tuple(ws)), []).append(dt or "-")
    ccs: dict[tuple[tuple[str, ...], tuple[int, ...]], list[str]] = {}
    for (var, ws), dts in list(same.items()):
        if var.startswith("cc="): ccs.setdefault((tuple(dts), ws), []).append(var[3:]); del same[(var, ws)]
    for (dts, ws), cs in ccs.items(): same[("cc=" + ("*" if len(cs) == len(CONDITION_CODES) else ",".join(cs)), ws)] = list(dts)
    parts = [f"{','.join(dts)}{' ' + var if var else ''} x{','.join(map(str, ws))}" for (var, ws), dts in same.items()]
    return f"{op} has: " + "; ".join(parts)


def select(op: str, dtype=None, width: int = 1, *, to=None, const: bool = False, flags: bool = False,
           cc: str | None = None, mode: str = "x86gen", features=None) -> Selection:
    """The form implementing ``op`` on ``width`` lanes of ``dtype`` (see the module docstring); ``mode="tinygrad"``:
    tinygrad 0.14.0's choice; ``features``: the CPU's CPUID features (`x86gen.jit.cpu_features()`), which can add
    AVX-512 selections (zmm, k masks)."""
    if mode not in MODES: raise IselError(f"mode must be one of {', '.join(MODES)}, not {str(mode)[:20]!r}")
    if mode == "tinygrad": return _tinygrad(op, dtype, width, to=to, const=const, flags=flags, cc=cc)   # features: no effect
    return _select(op, dtype, width, None if features is None else _features(features), to=to, const=const, flags=flags, cc=cc)


def _select(op: str, dtype, width: int, feats: frozenset[str] | None, *, to=None, const: bool = False, flags: bool = False,
            cc: str | None = None, tinygrad: bool = False) -> Selection:
    """`select` in x86gen's mode with the features as a set (None: the VEX table only); ``tinygrad``: the error for
    an AVX-512-only key says that mode has none instead of asking for features."""
    try: op = op.upper()
    except AttributeError: raise wrong_type("x86gen.isel.select", "op", op, "a str (an operation such as 'ADD')") from None
    dt, width = _dtype(dtype, width)
    given = [v for v in (to is not None, const, flags, cc is not None) if v]
    if len(given) > 1: raise IselError("give at most one of to=, const=, flags=, cc=")
    if to is not None: variant = "to=" + _dtype(to, 1)[0]
    elif const: variant = "const"
    elif flags: variant = "flags"
    elif cc is not None:
        if cc not in CONDITION_CODES: raise IselError(f"unknown condition code {cc!r} (use one of {', '.join(CONDITION_CODES)})")
        variant = f"cc={cc}"
    else: variant = ""
    keys = [(op, dt, width, variant)]
    if dt: keys.append((op, "", width, variant))              # ops without a dtype (IF, INDEX, SINK) ignore it
    if variant == "flags": keys.append((op, dt, width, ""))    # integer compares set rflags anyway
    missing = None
    if feats is not None:   # an AVX-512 selection whose features the CPU has comes first (there are none where isel has one)
        s = _lookup(TABLE_AVX512, keys, op, dt, width, variant)
        if s is not None:
            if s.features <= feats: return s
            missing = s
    s = _lookup(TABLE, keys, op, dt, width, variant)
    if s is not None: return s
    if width.__class__ is not int: raise wrong_type("x86gen.isel.select", "width", width, "an int (the number of lanes)")
    what = f"{op} {dt or '-'} x{width}" + (f" {variant}" if variant else "")
    if missing is not None:
        need = ", ".join(sorted(missing.features - feats))
        raise IselError(f"{what} needs {need}, which features does not have: {missing.form} ({missing.get_form().syntax}, "
                        f"cpuid {missing.get_form().cpuid})" + (f"; {missing.note}" if missing.note else ""))
    why = UNAVAILABLE_AVX512.get(keys[0]) or UNAVAILABLE.get(keys[0])
    hint = ""
    if feats is None and keys[0] in TABLE_AVX512:
        need = ", ".join(sorted(Selection(*keys[0], *TABLE_AVX512[keys[0]]).features))
        hint = (" (tinygrad 0.14.0 has no AVX-512 selections: its x86 backend encodes legacy and VEX forms; features= has no "
                "effect in mode='tinygrad')" if tinygrad else
                f" (AVX-512 has one, with {need}: give the CPU's features, select(..., features=x86gen.jit.cpu_features()))")
    raise IselError(f"no instruction selection for {what}" + (f": {why}" if why else "") + hint +
                    f". {_summary(op, feats is not None and any(x.startswith('AVX512') for x in feats))}")


def _lookup(table: dict, keys: list[tuple], op: str, dt: str, width: int, variant: str) -> Selection | None:
    """The first of ``keys`` in ``table`` as a Selection; None when there is none, or when a flags variant would
    fall back to an entry that sets no rflags."""
    for k in keys:
        if k in table:
            v = table[k]
            if variant == "flags" and k[3] == "" and v[3] is None: return None   # the default entry sets no flags
            return Selection(op, dt, width, variant, *v)
    return None


def _tinygrad(op: str, dtype, width: int, **kw) -> Selection:
    """`select` in mode="tinygrad" (see the module docstring)."""
    from .reference import EARLIER_CHANGE_X86OPS, TINYGRAD_X86OPS
    try: s = _select(op, dtype, width, None, tinygrad=True, **kw)
    except IselError as e:   # x86gen has none: is there a 0.14.0 choice (packed unsigned `<`)?
        s, err = None, e
    key = (op.upper(), *_dtype(dtype, width), "") if s is None else (s.op, s.dtype, s.width, s.variant)
    hit = TINYGRAD_TABLE.get(key) if s is not None or not any(kw.values()) else None
    if hit is not None: s = Selection(*key, *hit)
    elif key in TINYGRAD_UNAVAILABLE or (key := (key[0], "", *key[2:])) in TINYGRAD_UNAVAILABLE:
        raise IselError(f"no tinygrad 0.14.0 selection for {key}: {TINYGRAD_UNAVAILABLE[key]}")
    elif s is None: raise err
    if s.form is None: return s
    f = s.get_form()
    if not any(s.form in ids for ids in TINYGRAD_X86OPS.values()):
        earlier = [n for n, ids in EARLIER_CHANGE_X86OPS.items() if s.form in ids]
        why = (f"the earlier change's {earlier[0]}, which 0.14.0 does not have" if earlier else
               "an x86gen extension: 0.14.0 has no X86Ops name with this form")
        raise IselError(f"{s}: tinygrad 0.14.0 does not select {s.form} ({why})")
    if any(o.reg in ("ymm", "zmm") or (o.mem or 0) > 128 for o in f.operands):
        raise IselError(f"{s}: tinygrad 0.14.0 keeps vectors in xmm registers (128 bits; its x86.py XMM registers are 16 bytes)")
    return s
