"""Group the forms' encoders by shape, for the generated module ``_gen/encoders.py``.

Each form's encoder is written by x86gen's own code writer (`x86gen._specialize.build`, which the
run-time plans of `x86gen.encoder` use too, so both write the same code). Two forms have the same
*shape* when their encoders differ only in literals (opcode, prefix and map bytes, W/L/pp bits,
/digit, the form id in error calls, immediate ranges, a branch's length). One function per shape is
generated: ``shape_<ID>(fid, k0, k1, …)`` binds the literals that differ between its forms and
returns the form's ``(enc, fits)``; literals its forms share stay in the code. Each form's row names
its shape and the values of its ``k`` parameters (`Form.shape`, `Form.shape_args`); binding one is a
closure, not a compile.
"""
from __future__ import annotations

import ast
import io
import os
import re
import sys
import tokenize
from collections import namedtuple
from dataclasses import dataclass, field

from .schema import FORM_FIELD_NAMES, OPERAND_FIELD_NAMES

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


def _code_writer():
    """`x86gen._specialize` of this tree (not another installed x86gen)."""
    if sys.path[0] != SRC: sys.path.insert(0, SRC)
    import x86gen._specialize as writer
    if not os.path.abspath(writer.__file__).startswith(SRC + os.sep):
        raise RuntimeError(f"codegen needs the x86gen of {SRC}, but imported {writer.__file__} (set PYTHONPATH={SRC})")
    return writer


_Row = namedtuple("_Row", FORM_FIELD_NAMES)
_Operand = namedtuple("_Operand", OPERAND_FIELD_NAMES)


@dataclass
class Shape:
    name: str                       # shape_<id of its first form>
    params: list[str]               # the factory's parameters after fid: k0, k1, …
    code: str                       # the factory's body: enc and fits, indented by 4
    bytes_params: list[str]         # parameters given as lists of ints, made bytes once when bound
    forms: list[str] = field(default_factory=list)   # the ids of its forms, in spec order
    solo: bool = False                                 # a module of its own (`chunks`)

    @property
    def has_fits(self) -> bool: return "\n    def fits(" in "\n" + self.code


# the literals in the code the writer produces: (byte) strings, hex and decimal ints (digits inside a name such as
# a0 or _bytes3 are no literal)
_LITERAL = re.compile(r"""b?'(?:[^'\\\n]|\\.)*'|b?"(?:[^"\\\n]|\\.)*"|\b0[xX][0-9a-fA-F]+\b|\b\d+\b""")


def _abstract(src: str) -> tuple[str, list[str], list[tuple[int, int]]]:
    """(``src`` with every literal replaced by NUL, the literals, their spans)."""
    lits, spans = [], []
    for m in _LITERAL.finditer(src):
        lits.append(m.group()); spans.append(m.span())
    return _LITERAL.sub("\0", src), lits, spans


def _render(src: str, spans: list[tuple[int, int]], names: list[str]) -> str:
    """``src`` with the literal at ``spans[i]`` replaced by ``names[i]``."""
    out, at = [], 0
    for (c0, c1), name in zip(spans, names):
        out += [src[at:c0], name]
        at = c1
    return "".join(out) + src[at:]


def group(rows_by_id: dict[str, tuple]) -> tuple[list[Shape], dict[str, tuple[int, tuple]]]:
    """Shapes of the forms' encoders, and for each form id its (shape name, shape args); ``rows_by_id``
    maps a form id to its row (`codegen.render.row`). A form's shape is its index in the list; a form
    whose encoding has no encoder yet (EVEX) has shape -1."""
    writer = _code_writer()
    by_text: dict[tuple, list[tuple[str, list[str], str]]] = {}
    per_form: dict[str, tuple[int, tuple]] = {}
    for fid, r in rows_by_id.items():
        i = FORM_FIELD_NAMES.index("operands")
        row = _Row(*r[:i], tuple(_Operand(*o) for o in r[i]), *r[i + 1:])
        try: enc_src, fits_src = writer.build(row)
        except NotImplementedError:
            per_form[fid] = (-1, ())
            continue
        src = enc_src + (fits_src or "")
        toks, lits, spans = _abstract(src)
        by_text.setdefault(toks, []).append((fid, lits, spans, src))
    shapes = []
    for members in by_text.values():
        fids = [m[0] for m in members]
        names: list[str] = []
        params: dict[tuple, str] = {}   # the literals of one slot in each form → its parameter
        bytes_params: list[str] = []
        for i in range(len(members[0][1])):
            vec = tuple(m[1][i] for m in members)
            if all(v == repr(f) for v, f in zip(vec, fids)): names.append("fid")
            elif len(set(vec)) == 1: names.append(vec[0])   # shared by its forms: stays a literal
            else:
                if vec not in params:
                    params[vec] = f"k{len(params)}"
                    if isinstance(ast.literal_eval(vec[0]), bytes): bytes_params.append(params[vec])
                names.append(params[vec])
        first = members[0]
        text = _render(first[3], first[2], names)
        shape = Shape(f"shape_{fids[0]}", list(params.values()), "".join("    " + ln + "\n" for ln in text.splitlines() if ln.strip()),
                      bytes_params, fids)
        shapes.append(shape)
        for j, (fid, _lits, _spans, src) in enumerate(members):
            args = []
            for vec in params:
                v = ast.literal_eval(vec[j])
                args.append(list(v) if isinstance(v, bytes) else v)
            per_form[fid] = (len(shapes) - 1, tuple(args))
            # the shape with this form's literals put back is this form's own code, token for token
            bound = dict(zip(params.values(), (vec[j] for vec in params)), fid=repr(fid))
            back = _render(first[3], first[2], [bound.get(n, n) for n in names])
            if back != src: raise AssertionError(f"{fid}: shape {shape.name} does not give its code")
    # the shapes of the ALU family first (`SOLO_MNEMONICS`' forms), each to have a module of its own (`chunks`)
    mnemonic_at = FORM_FIELD_NAMES.index("mnemonic")
    solo = list(dict.fromkeys(per_form[fid][0] for fid, r in rows_by_id.items()
                              if r[mnemonic_at] in SOLO_MNEMONICS and per_form[fid][0] >= 0))
    order = solo + [i for i in range(len(shapes)) if i not in set(solo)]
    renumber = {old: new for new, old in enumerate(order)}
    for i in solo: shapes[i].solo = True
    shapes = [shapes[i] for i in order]
    per_form = {fid: (renumber[i] if i >= 0 else i, args) for fid, (i, args) in per_form.items()}
    return shapes, per_form


CHUNK = 4   # shapes per generated module: without a bytecode cache, a first use compiles one module (~0.25 ms per shape)
# The shapes of add's and sub's forms each have a module of their own, numbered first: those of the ALU family (add/
# sub/and/or/xor/cmp/adc/sbb, and mov's r/m,r and r,r/m) in 8/16/32/64 bits, with registers, memory and immediates,
# which most programs, and most first encodes, use. (add's /0 forms write no ModRM.reg bits, so their shapes are add's
# own; sub's /5 ones are those of or/adc/sbb/and/xor/cmp too.)
SOLO_MNEMONICS = ("add", "sub")


def solo_count(shapes: list[Shape]) -> int:
    """How many shapes, numbered first, have a module each (`SOLO_MNEMONICS`')."""
    return sum(s.solo for s in shapes)


def chunks(shapes: list[Shape]) -> list[list[Shape]]:
    """The shapes in modules: the first `solo_count` one each, then `CHUNK` each, in the order of their first forms
    (neighbouring forms in the spec are of one family, often used together); `x86gen._gen.encoders.shape` finds
    shape ``i`` in them."""
    n = solo_count(shapes)
    return [[s] for s in shapes[:n]] + [shapes[i:i + CHUNK] for i in range(n, len(shapes), CHUNK)]


def chunk_module(n: int) -> str:
    return f"e{n:03d}"


def imports(shapes: list[Shape]) -> dict[str, list[str]]:
    """The names the shapes' code uses: helpers of `x86gen._runtime`, register classes, fixed registers (R_eax)."""
    writer = _code_writer()
    from x86gen._specialize import HELPERS
    names = set()
    for s in shapes:
        for t in tokenize.generate_tokens(io.StringIO(s.code).readline):
            if t.type == tokenize.NAME: names.add(t.string)
    return {"runtime": sorted(n for n in HELPERS if n in names), "other": sorted(names & {"Mem", "VsibMem", "A32Mem"}),
            "classes": sorted(c for c in set(writer.CLASS_NAMES) if c in names),
            "fixed": sorted(n[2:] for n in names if n.startswith("R_"))}
