"""Group the forms' encoders by shape, for the generated module ``_gen/encoders.py``.

Each form's encoder is written by x86gen's own code writer (`x86gen.encoding.writer.build`, which the
run-time plans of `x86gen.selection.plans` use too, so both write the same code). Two forms have the same
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
    """`x86gen.encoding.writer` of this tree (not another installed x86gen)."""
    if sys.path[0] != SRC: sys.path.insert(0, SRC)
    import x86gen.encoding.writer as writer
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
    return shapes, per_form


CHUNK = 32   # shapes per generated module, in the order of their first forms (neighbouring forms in the spec are of
# one family, often used together): with bytecode, a module of 32 shapes loads in about 0.1 ms, and a program touches a
# few of the 17 modules, not all (one module of all 518 shapes takes about 2.5 ms to load)


def chunks(shapes: list[Shape]) -> list[list[Shape]]:
    """The shapes in modules, `CHUNK` each; `x86gen._gen.encoders.shape` finds shape ``i`` in module ``i // CHUNK``."""
    return [shapes[i:i + CHUNK] for i in range(0, len(shapes), CHUNK)]


def chunk_module(n: int) -> str:
    return f"e{n:03d}"


def imports(shapes: list[Shape]) -> dict[str, list[str]]:
    """The names the shapes' code uses: helpers of `x86gen.encoding.runtime`, register classes, fixed registers (R_eax)."""
    writer = _code_writer()
    from x86gen.encoding.runtime import HELPERS
    names = set()
    for s in shapes:
        for t in tokenize.generate_tokens(io.StringIO(s.code).readline):
            if t.type == tokenize.NAME: names.add(t.string)
    return {"runtime": sorted(n for n in HELPERS if n in names), "other": sorted(names & {"Mem", "VsibMem", "A32Mem", "EgprMem"}),
            "classes": sorted(c for c in set(writer.CLASS_NAMES) if c in names),
            "fixed": sorted(n[2:] for n in names if n.startswith("R_"))}
