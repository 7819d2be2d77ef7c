"""Load isa/tinygrad.yaml (format in its header) and compute what the groups/reference/isel templates render.

`context(path, forms)` validates the companion file against the loaded form table and returns the
template context: operand-role groups per form and per reference op, implicit registers, CPUID
features, the reference-op name table and the expanded isel table. Every problem raises
`spec.SpecError` naming the file, the line and the field.

Role groups are computed from the operand roles of isa/x86_64.yaml, never listed by hand. Sources are
counted as tinygrad's x86 backend counts the sources of its instructions (`X86GroupOp` in
tinygrad/renderer/isa/x86.py): see `sources`.
"""
from __future__ import annotations

import re

import yaml

from .spec import IMPLICIT_MEM_LOCS, Form, Operand, SpecError, compose

READ_ROLES = ("r", "rw", "cw", "rcw", "cr")
WRITE_ROLES = ("w", "rw", "cw", "rcw")
STACK_REGS = ("rsp",)   # push/pop/call/ret update rsp as a side effect; it is no destination

# --------------------------------------------------------------------------------------------------
# operand roles → groups
# --------------------------------------------------------------------------------------------------
GROUP_DOCS = {
    "TwoAddress": "The destination is also the first source: an explicit RW/CW first operand (add r32, r/m32; "
                  "cmovcc; vfmadd213ps) or, with no explicit destination, an implicit RW register (div/idiv: rax).",
    "ReadMem1st": "Source 1 may be a memory operand that is only read (a load can be folded there). Sources are "
                  "counted as tinygrad's uops list them: the tied destination of a TwoAddress form first, then the "
                  "explicit operands that are read (R, RW, CW, and N for lea's address) in Intel order, then "
                  "implicit registers that are read.",
    "ReadMem2nd": "Source 2 may be a memory operand that is only read (add r32, r/m32: source 1 is the tied "
                  "destination; vaddps xmm, xmm, xmm/m128; cmp r32, r/m32).",
    "ReadMem3rd": "Source 3 may be a memory operand that is only read (vfmadd213ps: sources are the tied destination, "
                  "vvvv, r/m).",
    "WriteMem": "An explicit operand that may be memory is written (W, RW or CW): a store, or a read-modify-write "
                "of memory (add r/m32, imm32; shl r/m32, cl).",
    "ReadFlags": "Reads rflags (jcc, setcc, cmovcc, adc, sbb).",
    "WriteFlags": "Writes, clears, sets or leaves undefined at least one flag.",
    "Rm1st": "After the tied destination of a TwoAddress form is dropped (the encoder's view), the first source is "
             "encoded in ModRM.rm (mov r32, r/m32; add r32, r/m32; lea; vpsrldq's source).",
    "Rm2nd": "After the tied destination of a TwoAddress form is dropped, the second source is encoded in ModRM.rm "
             "(vaddps xmm, xmm, xmm/m128; cmp r32, r/m32; vfmadd213ps).",
    "Commutative": "The operation is symmetric in its first two sources and both are register/memory operands, so a "
                   "backend may exchange them (e.g. to fold a load into the r/m source). Semantics come from the "
                   "`commutative` mnemonic list of isa/tinygrad.yaml; the rest from operand roles.",
}
GROUP_NAMES = tuple(GROUP_DOCS)


def _opref(i: int) -> str: return str(i)


def destination(f: Form) -> str | None:
    """The form's destination: the first written explicit operand ("0", "1", ...), else the first written
    implicit register other than rsp (e.g. "eax" for div r/m32), else None (cmp, test, jcc, stores to rsp)."""
    for i, o in enumerate(f.operands):
        if o.role in WRITE_ROLES: return _opref(i)
    for role, reg in f.implicit:
        if role in WRITE_ROLES and reg not in STACK_REGS: return reg
    return None


def _role(f: Form, ref: str) -> str:
    if ref.isdigit(): return f.operands[int(ref)].role
    return next(role for role, reg in f.implicit if reg == ref)


def sources(f: Form) -> tuple[tuple[str, ...], bool]:
    """(sources, tied): the values the instruction reads, in tinygrad's uop order, and whether the
    first of them is the destination (TwoAddress).

    Order: the destination when it is also read (RW/CW), then the explicit operands that are read or
    give an address (R, RW, CW, N) in Intel order, then the implicit registers that are read. Entries
    are operand indices ("0", "1", ...) or implicit register names ("eax")."""
    dest = destination(f)
    tied = dest is not None and _role(f, dest) in ("rw", "cw", "rcw")
    out = [dest] if tied else []
    for i, o in enumerate(f.operands):
        ref = _opref(i)
        if ref != dest and o.role in ("r", "rw", "cw", "rcw", "cr", "n"): out.append(ref)
    for role, reg in f.implicit:
        if reg != dest and reg not in STACK_REGS and role in ("r", "rw", "rcw", "cr") and reg not in out: out.append(reg)
    return tuple(out), tied


def _op(f: Form, ref: str) -> Operand | None:
    return f.operands[int(ref)] if ref.isdigit() else None


def _regmem(f: Form, ref: str) -> bool:
    o = _op(f, ref)
    return o is None or (o.imm is None and o.kind != "1" and (o.reg is not None or o.mem is not None))


def form_groups(f: Form, commutative: set[str]) -> list[str]:
    """The names of the groups (GROUP_DOCS) that form ``f`` belongs to."""
    srcs, tied = sources(f)
    enc = srcs[1:] if tied else srcs
    def read_mem(k: int) -> bool:
        o = _op(f, srcs[k]) if len(srcs) > k else None
        # (not an implicit memory operand, movsb's [rsi]: its address is fixed, no load can be folded there)
        return o is not None and o.mem is not None and o.role == "r" and o.loc not in IMPLICIT_MEM_LOCS
    def in_rm(k: int) -> bool:
        o = _op(f, enc[k]) if len(enc) > k else None
        return o is not None and o.loc == "rm"
    member = {
        "TwoAddress": tied,
        "ReadMem1st": read_mem(0), "ReadMem2nd": read_mem(1), "ReadMem3rd": read_mem(2),
        "WriteMem": any(o.mem is not None and o.role in WRITE_ROLES for o in f.operands),
        "ReadFlags": bool(f.flags.get("read")),
        "WriteFlags": any(f.flags.get(k) for k in ("written", "undefined", "cleared", "set")),
        "Rm1st": in_rm(0), "Rm2nd": in_rm(1),
        "Commutative": f.mnemonic in commutative and len(srcs) >= 2 and _regmem(f, srcs[0]) and _regmem(f, srcs[1]),
    }
    return [g for g in GROUP_NAMES if member[g]]


# --------------------------------------------------------------------------------------------------
# the YAML file
# --------------------------------------------------------------------------------------------------
TOP_KEYS = {"not_instructions", "earlier_change_only", "x86ops", "tinygrad_groups", "group_differences", "layouts", "source_notes",
            "isel_tinygrad", "commutative", "isel", "isel_avx512"}
TINYGRAD_GROUP_NAMES = ("TwoAddress", "ReadMem1st", "ReadMem2nd", "WriteMem", "ReadFlags", "WriteFlags", "Rm1st", "Rm2nd")
SIZES = (8, 16, 32, 64)


def _nodes(node) -> dict:
    return {k.value: (k, v) for k, v in node.value}


def _line(node) -> int: return node.start_mark.line + 1


def _scalars(path, node, field) -> list[tuple[str, int]]:
    if not isinstance(node, yaml.SequenceNode) or not all(isinstance(x, yaml.ScalarNode) for x in node.value):
        raise SpecError(path, _line(node), field, "expected a list of strings")
    return [(x.value, _line(x)) for x in node.value]


def _string_map(path, node, field) -> dict[str, tuple[str, int]]:
    if not isinstance(node, yaml.MappingNode) or not all(isinstance(k, yaml.ScalarNode) and isinstance(v, yaml.ScalarNode)
                                                          for k, v in node.value):
        raise SpecError(path, _line(node), field, "expected a mapping of strings to strings")
    out: dict[str, tuple[str, int]] = {}
    for k, v in node.value:
        if k.value in out: raise SpecError(path, _line(k), f"{field}.{k.value}", "listed twice")
        out[k.value] = (" ".join(v.value.split()), _line(k))
    return out


def tinygrad_tables(path: str, top: dict, ref_all: dict[str, tuple[str, ...]], by_id: dict[str, Form], op_groups: dict,
                    not_instr: tuple[str, ...]) -> dict:
    """The tinygrad 0.14.0 sections: which names are the earlier change's only, tinygrad's exact X86GroupOp sets (and where
    x86gen's semantic groups differ, with the reason), and each op's source layout."""
    earlier = [(v, ln) for v, ln in _scalars(path, top["earlier_change_only"][1], "earlier_change_only")]
    for v, ln in earlier:
        if v not in ref_all and v not in not_instr: raise SpecError(path, ln, "earlier_change_only", f"{v!r} is in neither x86ops "
                                                                                                     "nor not_instructions")
    early = {v for v, _ in earlier}
    ops = {op: ids for op, ids in ref_all.items() if op not in early}
    gnode = top["tinygrad_groups"][1]
    if not isinstance(gnode, yaml.MappingNode): raise SpecError(path, _line(gnode), "tinygrad_groups", "expected a mapping")
    tg: dict[str, set[str]] = {}
    for kn, vn in gnode.value:
        if kn.value not in TINYGRAD_GROUP_NAMES[:6]:
            raise SpecError(path, _line(kn), f"tinygrad_groups.{kn.value}", f"not one of {', '.join(TINYGRAD_GROUP_NAMES[:6])}")
        names = _scalars(path, vn, f"tinygrad_groups.{kn.value}")
        for v, ln in names:
            if v not in ops: raise SpecError(path, ln, f"tinygrad_groups.{kn.value}", f"{v!r} is no tinygrad 0.14.0 instruction")
        tg[kn.value] = {v for v, _ in names}
    missing = [g for g in TINYGRAD_GROUP_NAMES[:6] if g not in tg]
    if missing: raise SpecError(path, _line(gnode), "tinygrad_groups", f"missing {', '.join(missing)}")
    tg["Rm1st"] = tg["ReadMem1st"] | (tg["ReadMem2nd"] & tg["TwoAddress"]) | {"VPSRLDQ"}   # as tinygrad 0.14.0 derives them
    tg["Rm2nd"] = set(tg["ReadMem2nd"])
    found = {f"{g} {op}": ("x86gen" if op in op_groups[g] else "tinygrad") for g in TINYGRAD_GROUP_NAMES for op in ops
             if (op in op_groups[g]) != (op in tg[g])}
    diffs = _string_map(path, top["group_differences"][1], "group_differences")
    for k in sorted(set(found) - set(diffs)):
        raise SpecError(path, _line(top["group_differences"][1]), "group_differences", f"{k}: {found[k]} has it, and no reason is given")
    for k in sorted(set(diffs) - set(found)):
        raise SpecError(path, diffs[k][1], f"group_differences.{k}", "is no difference (x86gen's and tinygrad's groups agree)")
    layouts = _string_map(path, top["layouts"][1], "layouts")
    layout: dict[str, str] = {}
    for op, ids in ops.items():
        digit = not any(o.loc in ("reg", "opc") for i in ids for o in by_id[i].operands)
        if op in tg["WriteMem"]: name = "store" + "-digit" * digit
        elif op in tg["Rm1st"]: name = "rm-first" + "-digit" * digit
        elif op in tg["Rm2nd"]: name = "rm-second"
        elif op == "MOVABS": name = "opcode-register"
        elif all(any(o.kind.startswith("rel") for o in by_id[i].operands) for i in ids): name = "jump"
        elif op == "RET": name = "ret"
        else: raise SpecError(path, _line(top["layouts"][1]), "layouts", f"{op}: no layout applies")
        if name not in layouts: raise SpecError(path, _line(top["layouts"][1]), "layouts", f"{name!r} (of {op}) is not described")
        layout[op] = name
    notes = _string_map(path, top["source_notes"][1], "source_notes")
    for k, (_, ln) in notes.items():
        if k not in ops: raise SpecError(path, ln, f"source_notes.{k}", "is no tinygrad 0.14.0 instruction")
    return {"tinygrad_ops": ops, "earlier_ops": {op: ids for op, ids in ref_all.items() if op in early},
            "earlier_only": tuple(v for v, _ in earlier), "tinygrad_groups": {g: tuple(sorted(tg[g])) for g in TINYGRAD_GROUP_NAMES},
            "group_differences": {k: v for k, (v, _) in sorted(diffs.items())}, "layout": layout,
            "layouts": {k: v for k, (v, _) in layouts.items()}, "source_notes": {k: v for k, (v, _) in notes.items()}}


def expand_tokens(tokens: list[tuple[str, int]], by_id: dict[str, Form], by_mn: dict[str, list[Form]], path: str,
                  field: str) -> tuple[str, ...]:
    """x86ops tokens → form ids (see the file header)."""
    out: list[str] = []
    for tok, line in tokens:
        if re.fullmatch(r"[a-z][a-z0-9]*", tok):
            if tok not in by_mn: raise SpecError(path, line, field, f"no mnemonic {tok!r} in isa/x86_64.yaml")
            # tinygrad 0.14's X86Ops encode legacy and VEX only: a mnemonic names those forms, not its EVEX ones
            found = [f.id for f in by_mn[tok] if f.encoding_kind != "evex"]
        else:
            found = []
            for b in SIZES:
                for c in SIZES:
                    fid = tok.replace("{b}", str(b)).replace("{c}", str(c)).replace("{i}", str(min(b, 32)))
                    if "{" in fid: raise SpecError(path, line, field, f"unknown placeholder in {tok!r} (use {{b}} {{c}} {{i}})")
                    if fid in by_id and fid not in found: found.append(fid)
            if not found: raise SpecError(path, line, field, f"{tok!r} names no form of isa/x86_64.yaml")
        out += [fid for fid in found if fid not in out]
    return tuple(out)


# ---- isel -------------------------------------------------------------------------------------------
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
# tinygrad's bfloat16, fp8e4m3 and fp8e5m2 (tinygrad/dtype.py; E4M3 and E5M2 are the OCP formats, Intel's HF8 and BF8) are
# dtypes of their own: no group names them except fp8s, so `floats` and `all` mean what they meant before them (an entry
# for them is one that AVX10.2 / AVX512_BF16 makes possible, or an ERROR saying what to do).
DTYPE_BITS = {"bool": 8, **{d: int(d.lstrip("uint")) for d in INTS}, "float16": 16, "float32": 32, "float64": 64,
              "bfloat16": 16, "fp8e4m3": 8, "fp8e5m2": 8}
DTYPE_GROUPS = {
    "ints": INTS, "sints": INTS[:4], "uints": INTS[4:], "floats": ("float16", "float32", "float64"),
    "int8s": ("int8", "uint8"), "int16s": ("int16", "uint16"), "int32s": ("int32", "uint32"), "int64s": ("int64", "uint64"),
    "all": (*INTS, "bool", "float16", "float32", "float64"), "fp8s": ("fp8e4m3", "fp8e5m2"),
}
VECTOR_WIDTHS = (2, 4, 8, 16, 32, 64)   # 64: 64 x int8 in a zmm register (isel_avx512 only; xv stops at 256 bits)
CONDITION_CODES = ("o", "no", "b", "ae", "e", "ne", "be", "a", "s", "ns", "p", "np", "l", "ge", "le", "g")


def _dtypes(text: str, path, line) -> tuple[str, ...]:
    if text == "-": return ("",)
    out: list[str] = []
    for t in text.split(","):
        got = DTYPE_GROUPS.get(t, (t,) if t in DTYPE_BITS else None)
        if got is None: raise SpecError(path, line, "isel", f"unknown dtype or group {t!r}")
        out += [d for d in got if d not in out]
    return tuple(out)


def _vclass(bits: int) -> tuple[str, int] | None:
    return ("XMM", 128) if bits <= 128 else ("YMM", 256) if bits <= 256 else ("ZMM", 512) if bits <= 512 else None


def _widths(text: str, b: int, t: int, path, line, limit: int = 256) -> list[int]:
    """The widths of a KEY's WIDTHS field; ``limit`` is the widest vector a list (x8,16) may name: 256, or 512 in
    isel_avx512. xv, x* and x128 stay within 256 bits in both sections; x512 is exactly 512 bits."""
    fits = lambda w, lim=256: max(w * b, w * t) <= lim
    if text == "x1": return [1]
    if text == "x512":
        if limit < 512: raise SpecError(path, line, "isel", "x512 (512-bit vectors) only in isel_avx512")
        return [w for w in VECTOR_WIDTHS if max(w * b, w * t) == 512]
    if text == "xv": return [w for w in VECTOR_WIDTHS if fits(w)]
    if text == "x*": return [1] + [w for w in VECTOR_WIDTHS if fits(w)]
    if text == "x128": return [w for w in VECTOR_WIDTHS if fits(w, 128)]
    m = re.fullmatch(r"=(\d+)(v?)", text)
    if m:
        n, vec = int(m.group(1)), m.group(2)
        w = n // b if b and n % b == 0 else 0
        ok = w in ((*VECTOR_WIDTHS,) if vec else (1, *VECTOR_WIDTHS))
        return [w] if ok else []
    m = re.fullmatch(r"x(\d+(?:,\d+)*)", text)
    if m:
        ws = [int(x) for x in m.group(1).split(",")]
        for w in ws:
            if w not in (1, *VECTOR_WIDTHS) or not fits(w, limit):
                raise SpecError(path, line, "isel", f"width {w} does not fit {limit} bits")
        return ws
    raise SpecError(path, line, "isel", f"unknown widths {text!r} (x1, xv, x*, x128, x512, x2,4, =N, =Nv)")


_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _fill(template: str, values: dict, path, line, field, strict=True) -> str:
    def sub(m):
        k = m.group(1)
        if k in values and values[k] is not None: return str(values[k])
        if strict: raise SpecError(path, line, field, f"placeholder {{{k}}} has no value here (in {template!r})")
        return m.group(0)
    return _PLACEHOLDER.sub(sub, template)


def default_srcs(f: Form, fixed_imm: bool) -> tuple[int | None, ...]:
    """Generic source i feeds the i-th entry of `sources(f)`; implicit sources take an index too (div's
    dividend is source 0), immediates are skipped when the entry fixes them (imm=)."""
    out: list[int | None] = [None] * len(f.operands)
    n = 0
    for ref in sources(f)[0]:
        o = _op(f, ref)
        if o is not None and fixed_imm and o.imm is not None: continue
        if o is not None: out[int(ref)] = n
        n += 1
    return tuple(out)


def _parse_attrs(text: str, path, line) -> dict[str, str]:
    out = {}
    for a in text.split():
        k, eq, v = a.partition("=")
        if not eq or k not in ("srcs", "imm", "cc", "then", "mask"):
            raise SpecError(path, line, "isel", f"unknown attribute {a!r} (srcs= imm= cc= then= mask=)")
        out[k] = v
    return out


def expand_isel(op: str, entry: str, line: int, by_id: dict[str, Form], path: str,
                avx512: bool = False) -> list[tuple[tuple, tuple | str]]:
    """One isel entry → [(key, value)], key = (op, dtype, width, variant); value = (form, srcs, imm, cc,
    then, note) or, for ERROR entries, the message. ``avx512`` (the isel_avx512 section): widths up to 512
    bits (x512), EVEX forms only, and the value gains a seventh field: mask= (None when not given)."""
    fields = [s.strip() for s in entry.split("|", 3)]
    if not 2 <= len(fields) <= 4: raise SpecError(path, line, f"isel.{op}", "expected KEY | FORM [| ATTRS [| NOTE]]")
    fields += [""] * (4 - len(fields))
    key, form_t, attr_t, note_t = fields
    kt = key.split()
    if not 2 <= len(kt) <= 3: raise SpecError(path, line, f"isel.{op}", f"expected DTYPES WIDTHS [VARIANT], got {key!r}")
    dts, widths_t, variant_t = kt[0], kt[1], (kt[2] if len(kt) == 3 else "")
    src_t, arrow, dst_t = dts.partition("->")
    srcs_dt = _dtypes(src_t, path, line)
    dsts_dt = _dtypes(dst_t, path, line) if arrow else (None,)
    if variant_t.startswith("cc="):
        ccs = CONDITION_CODES if variant_t == "cc=*" else (variant_t[3:],)
        if any(c not in CONDITION_CODES for c in ccs): raise SpecError(path, line, f"isel.{op}", f"unknown condition code in {variant_t!r}")
    elif variant_t in ("", "const", "flags"): ccs = (None,)
    else: raise SpecError(path, line, f"isel.{op}", f"unknown variant {variant_t!r} (const, flags, cc=XX, cc=*)")
    attrs = _parse_attrs(attr_t, path, line)
    out = []
    for sd in srcs_dt:
        for dd in dsts_dt:
            if arrow and (dd == sd or (op == "BITCAST" and DTYPE_BITS[dd] != DTYPE_BITS[sd])): continue
            b = DTYPE_BITS.get(sd, 64)
            t = DTYPE_BITS[dd] if dd else b
            for w in _widths(widths_t, b, t, path, line, 512 if avx512 else 256):
                for cc in ccs:
                    dv, sv = _vclass(w * t), _vclass(w * b)
                    vals = {"b": b, "t": t, "i": min(b, 32), "B": b // 8, "CC": cc.upper() if cc else None,
                            "V": dv and dv[0], "VB": dv and dv[1], "S": sv and sv[0], "SB": sv and sv[1],
                            "sb": dv and dv[1] * b // t, "db": sv and sv[1] * t // b}
                    variant = f"to={dd}" if arrow else (f"cc={cc}" if cc else variant_t)
                    k = (op, sd, w, variant)
                    note = _fill(note_t, vals, path, line, "note", strict=False)
                    if form_t == "ERROR":
                        out.append((k, note or "not available")); continue
                    if form_t == "NOOP":
                        out.append((k, (None, (), None, attrs.get("cc"), (), note) + ((None,) if avx512 else ()))); continue
                    fid = _fill(form_t, vals, path, line, "form")
                    f = by_id.get(fid)
                    if f is None: raise SpecError(path, line, f"isel.{op}", f"{fid} (from {form_t}) is no form of isa/x86_64.yaml")
                    if avx512 and f.encoding_kind != "evex": raise SpecError(path, line, f"isel.{op}", f"{fid} is no EVEX form")
                    if not avx512 and f.encoding_kind == "evex":
                        raise SpecError(path, line, f"isel.{op}", f"{fid} is an EVEX form: it belongs in isel_avx512")
                    imm: int | str | None = None
                    if "imm" in attrs:
                        raw = _fill(attrs["imm"], vals, path, line, "imm")
                        imm = int(raw, 0) if re.fullmatch(r"-?(0x)?[0-9a-fA-F]+", raw) else raw
                        if not any(o.imm is not None and not o.kind.startswith("rel") for o in f.operands):
                            raise SpecError(path, line, f"isel.{op}", f"imm= but {fid} has no immediate operand")
                    if "srcs" in attrs:
                        srcs = tuple(None if s == "-" else int(s) for s in attrs["srcs"].split(","))
                        if len(srcs) != len(f.operands):
                            raise SpecError(path, line, f"isel.{op}", f"srcs= names {len(srcs)} operands, {fid} has {len(f.operands)}")
                    else: srcs = default_srcs(f, imm is not None)
                    then = tuple(_fill(x, vals, path, line, "then") for x in attrs["then"].split(",")) if "then" in attrs else ()
                    for x in then:
                        if x not in by_id: raise SpecError(path, line, f"isel.{op}", f"then={x} is no form of isa/x86_64.yaml")
                    cc_out = attrs.get("cc", cc)   # a consumer (cc= variant) tests its own condition
                    if cc_out is not None and cc_out not in CONDITION_CODES:
                        raise SpecError(path, line, f"isel.{op}", f"unknown condition code cc={cc_out}")
                    val = (fid, srcs, imm, cc_out, then, note)
                    if "mask" in attrs:
                        if not avx512 or not re.fullmatch(r"\d", attrs["mask"]) or not f.evex_mask:
                            raise SpecError(path, line, f"isel.{op}", "mask= needs an isel_avx512 entry whose form takes a {k} mask "
                                                                      "and a source index")
                        if int(attrs["mask"]) in srcs:
                            raise SpecError(path, line, f"isel.{op}", "mask= names a source that srcs= places too")
                    if avx512: val += (int(attrs["mask"]) if "mask" in attrs else None,)
                    out.append((k, val))
    if not out: raise SpecError(path, line, f"isel.{op}", f"{entry!r} expands to nothing")
    return out


# --------------------------------------------------------------------------------------------------
# the template context
# --------------------------------------------------------------------------------------------------
def context(path: str, forms: list[Form]) -> dict:
    root = compose(path, "sections")
    top = _nodes(root)
    for k, (kn, _) in top.items():
        if k not in TOP_KEYS: raise SpecError(path, _line(kn), k, f"unknown key (allowed: {', '.join(sorted(TOP_KEYS))})")
    for k in TOP_KEYS:
        if k not in top: raise SpecError(path, 1, k, "missing")
    by_id = {f.id: f for f in forms}
    by_mn: dict[str, list[Form]] = {}
    for f in forms: by_mn.setdefault(f.mnemonic, []).append(f)

    not_instr = tuple(v for v, _ in _scalars(path, top["not_instructions"][1], "not_instructions"))
    commutative = {v for v, _ in _scalars(path, top["commutative"][1], "commutative")}
    for mn in sorted(commutative):
        if mn not in by_mn: raise SpecError(path, _line(top["commutative"][1]), "commutative", f"no mnemonic {mn!r}")

    xnode = top["x86ops"][1]
    if not isinstance(xnode, yaml.MappingNode): raise SpecError(path, _line(xnode), "x86ops", "expected a mapping")
    ref_ops: dict[str, tuple[str, ...]] = {}
    for kn, vn in xnode.value:
        if kn.value in ref_ops or kn.value in not_instr: raise SpecError(path, _line(kn), f"x86ops.{kn.value}", "listed twice")
        ref_ops[kn.value] = expand_tokens(_scalars(path, vn, f"x86ops.{kn.value}"), by_id, by_mn, path, f"x86ops.{kn.value}")

    # groups, per form and per reference op (a reference op is in a group when one of its forms is)
    fgroups = {f.id: form_groups(f, commutative) for f in forms}
    groups = {g: [f.id for f in forms if g in fgroups[f.id]] for g in GROUP_NAMES}
    op_groups = {g: sorted(op for op, ids in ref_ops.items() if any(g in fgroups[i] for i in ids)) for g in GROUP_NAMES}
    srcs = {f.id: sources(f)[0] for f in forms}
    dest = {f.id: destination(f) for f in forms}
    implicit = {f.id: f.implicit for f in forms if f.implicit}
    fixed = {f.id: tuple((i, o.role, o.reg) for i, o in enumerate(f.operands) if o.loc == "fixed") for f in forms}
    fixed = {k: v for k, v in fixed.items() if v}
    cpuid = {f.id: f.cpuid for f in forms}
    op_cpuid = {op: tuple(sorted({by_id[i].cpuid for i in ids})) for op, ids in ref_ops.items()}
    op_implicit = {}
    for op, ids in ref_ops.items():
        imp = []
        for i in ids:
            imp += [x for x in by_id[i].implicit if x not in imp]
        if imp: op_implicit[op] = tuple(imp)

    # isel, and its tinygrad 0.14.0 mode
    def isel_section(name: str, avx512: bool = False) -> tuple[dict, dict, dict]:
        inode = top[name][1]
        if not isinstance(inode, yaml.MappingNode): raise SpecError(path, _line(inode), name, "expected a mapping of OP: [entries]")
        table: dict[tuple, tuple] = {}
        errors: dict[tuple, str] = {}
        seen: dict[tuple, int] = {}
        for kn, vn in inode.value:
            op = kn.value
            if not re.fullmatch(r"[A-Z][A-Z0-9_]*", op): raise SpecError(path, _line(kn), f"{name}.{op}", "op names are upper case")
            for entry, line in _scalars(path, vn, f"{name}.{op}"):
                for key, val in expand_isel(op, entry, line, by_id, path, avx512):
                    if key in seen: raise SpecError(path, line, f"{name}.{op}", f"{key} already given on line {seen[key]}")
                    seen[key] = line
                    if isinstance(val, str): errors[key] = val
                    else: table[key] = val
        return table, errors, seen
    table, errors, isel_lines = isel_section("isel")
    tg_table, tg_errors, _ = isel_section("isel_tinygrad")
    avx_table, avx_errors, avx_lines = isel_section("isel_avx512", avx512=True)
    for key in sorted(avx_table.keys() | avx_errors.keys()):   # up to 256 bits a VEX selection wins: shorter, as compilers choose
        if key in table: raise SpecError(path, avx_lines[key], f"isel_avx512.{key[0]}",
                                         f"{key} has a VEX selection in isel (line {isel_lines[key]})")
    tables = tinygrad_tables(path, top, ref_ops, by_id, op_groups, not_instr)
    # each note once: many keys share one (an entry's note is every expanded key's), so the tables name it by index
    notes = tuple(sorted({v if isinstance(v, str) else v[5] for t in (table, errors, tg_table, tg_errors, avx_table, avx_errors)
                          for v in t.values()} - {""}))
    note_index = {n: i for i, n in enumerate(notes)}

    def isel_row(v) -> str:
        """The Python text of one table value, its note (an error's reason) as ``_N[i]``."""
        if isinstance(v, str): return f"_N[{note_index[v]}]"
        return "(" + ", ".join(f"_N[{note_index[x]}]" if i == 5 and x else repr(x) for i, x in enumerate(v)) + ")"
    return {
        **tables, "not_instructions": tuple(v for v in not_instr if v not in tables["earlier_only"]),
        "earlier_not_instructions": tuple(v for v in not_instr if v in tables["earlier_only"]),
        "group_names": GROUP_NAMES, "group_docs": GROUP_DOCS,
        "groups": groups, "op_groups": op_groups, "form_sources": srcs, "form_dest": dest,
        "implicit": implicit, "fixed": fixed, "cpuid": cpuid, "op_cpuid": op_cpuid, "op_implicit": op_implicit,
        "reference_ops": ref_ops, "commutative": sorted(commutative),
        "isel_table": sorted(table.items()), "isel_errors": sorted(errors.items()),
        "isel_tinygrad_table": sorted(tg_table.items()), "isel_tinygrad_errors": sorted(tg_errors.items()),
        "isel_avx512_table": sorted(avx_table.items()), "isel_avx512_errors": sorted(avx_errors.items()),
        "condition_codes": CONDITION_CODES, "dtype_bits": DTYPE_BITS, "isel_notes": notes, "isel_row": isel_row,
    }
