"""Render the generated modules of src/x86gen/_gen from the loaded spec (see tools/gen.py)."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

import jinja2

from . import shapes
from .schema import FORM_FIELD_NAMES, FORM_FIELDS, OPERAND_FIELD_NAMES, OPERAND_FIELDS
from .spec import FLAG_GROUPS, IMPLICIT_MEM_LOCS, Form

HERE = os.path.dirname(os.path.abspath(__file__))
COMPANION = os.path.join(os.path.dirname(HERE), "isa", "tinygrad.yaml")   # tinygrad names, groups, isel (codegen/companion.py)
FLAG_ORDER = tuple(FLAG_GROUPS.values())   # read written undefined cleared set


def row(f: Form) -> tuple:
    """A form as the row x86gen reads (`x86gen.table.FormRow`): the attributes of ``f`` named in
    `codegen.schema.FORM_FIELDS`, in that order; operands as `OPERAND_FIELDS` tuples, flags in `FLAG_ORDER`."""
    out = []
    for name in FORM_FIELD_NAMES:
        v = getattr(f, name)
        if name == "operands": v = tuple(tuple(getattr(o, n) for n in OPERAND_FIELD_NAMES) for o in v)
        elif name == "flags": v = tuple(v.get(k, ()) for k in FLAG_ORDER)
        out.append(v)
    return tuple(out)


TABLE_CHUNKS = 16   # the table's modules (`compact_table`): a mnemonic's rows are in module sum(mnemonic's bytes) % 16


def compact_table(forms: list[Form]) -> dict:
    """The form table as `_gen/table/` holds it: each mnemonic's rows as the text of one JSON array, each row the fields
    of `codegen.schema.FORM_FIELD_NAMES` without the mnemonic (the key), its operands, flags and implicit registers as
    indices into the tables of the distinct ones (262 operands, 59 flag sets, 120 implicit sets for 4,284 forms: a
    third of the table's size, and a row decodes without building its operands); the mnemonics in `TABLE_CHUNKS`
    modules, a mnemonic's found without a map of them: module ``sum(mnemonic.encode()) % TABLE_CHUNKS`` (its bytes
    summed: 87 to 123 mnemonics, 39 to 62 KB each at 4,284 forms)."""
    operands: dict[tuple, int] = {}
    flags: dict[tuple, int] = {}
    implicit: dict[tuple, int] = {}
    by_mnemonic: dict[str, list[str]] = {}
    mnemonic_at = FORM_FIELD_NAMES.index("mnemonic")
    for f in forms:
        r = dict(zip(FORM_FIELD_NAMES, row(f)))
        r["operands"] = [operands.setdefault(o, len(operands)) for o in r["operands"]]
        r["flags"] = flags.setdefault(r["flags"], len(flags))
        r["implicit"] = implicit.setdefault(r["implicit"], len(implicit))
        fields = [r[n] for i, n in enumerate(FORM_FIELD_NAMES) if i != mnemonic_at]
        text = json.dumps(fields, separators=(",", ":"))
        if "\n" in text: raise ValueError(f"{f.id}: a row cannot hold a newline: {text}")
        by_mnemonic.setdefault(f.mnemonic, []).append(text)
    texts = {mn: "[" + ",".join(rows) + "]" for mn, rows in by_mnemonic.items()}
    chunks: list[list[str]] = [[] for _ in range(TABLE_CHUNKS)]
    for mn in texts: chunks[sum(mn.encode()) % TABLE_CHUNKS].append(mn)
    return {"table_operands": list(operands), "table_flags": list(flags), "table_implicit": list(implicit),
            "table_rows": texts, "table_chunks": chunks}


# The columns of a row of _gen/groups.py's ROWS (one line per form, spec order); every column but the
# first two is an index into the table of distinct values named after it (see `group_rows`).
GROUP_COLUMNS = ("id", "mask", "SOURCE_VALUES", "DEST_VALUES", "CPUID_VALUES", "IMPLICIT_VALUES", "FIXED_VALUES")


def _distinct(values, empty: tuple) -> list:
    """The distinct values in sorted order, after ``empty`` (``()`` or ``(value,)``: the value of most forms, index 0)."""
    return [*empty, *sorted({v for v in values if v not in empty}, key=repr)]


def group_rows(forms: list[Form], ctx: dict) -> dict:
    """The per-form part of _gen/groups.py, compact: each form is one text line of `GROUP_COLUMNS` (its id, a
    bitmask of its groups, bit i for ``group_names[i]``, then indices into the tables of the distinct
    sources, destinations, CPUID features, implicit and fixed registers), instead of a membership list
    per group and a dict entry per form and column. ``x86gen.groups`` decodes them when imported."""
    names = ctx["group_names"]
    if len(names) > 62: raise ValueError("group bitmask: at most 62 groups")
    member = {g: set(ctx["groups"][g]) for g in names}
    cols = {
        "SOURCE_VALUES": [ctx["form_sources"][f.id] for f in forms],
        "DEST_VALUES": [ctx["form_dest"][f.id] for f in forms],
        "CPUID_VALUES": [ctx["cpuid"][f.id] for f in forms],
        "IMPLICIT_VALUES": [ctx["implicit"].get(f.id, ()) for f in forms],
        "FIXED_VALUES": [ctx["fixed"].get(f.id, ()) for f in forms],
    }
    empty = {"SOURCE_VALUES": ((),), "DEST_VALUES": (None,), "CPUID_VALUES": (), "IMPLICIT_VALUES": ((),), "FIXED_VALUES": ((),)}
    tables = {k: _distinct(v, empty[k]) for k, v in cols.items()}
    index = {k: {v: i for i, v in enumerate(t)} for k, t in tables.items()}
    rows = []
    for n, f in enumerate(forms):
        if any(c.isspace() for c in f.id): raise ValueError(f"{f.id!r}: a form id cannot contain white space")
        mask = sum(1 << i for i, g in enumerate(names) if f.id in member[g])
        rows.append(" ".join([f.id, str(mask), *(str(index[k][cols[k][n]]) for k in GROUP_COLUMNS[2:])]))
    return {"group_columns": GROUP_COLUMNS, "group_rows": rows, "group_tables": tables}


# Python keywords: the Assembler method of such a mnemonic has a trailing underscore (``a.and_(eax, 1)``).
KEYWORDS = frozenset(("and", "or", "not", "in", "is", "if", "for", "while", "def", "del", "pass", "return", "class", "try", "with",
                      "as", "from", "import", "global", "raise", "yield", "lambda", "assert", "break", "continue", "elif", "else",
                      "except", "finally", "nonlocal", "await", "async", "True", "False", "None"))


@dataclass
class AsmMethod:
    """One generated `x86gen.Assembler` method (templates asm_methods.py.j2 and its stub asm_methods.pyi.j2)."""
    mnemonic: str
    name: str                  # the method name: the mnemonic, with "_" after a Python keyword
    forms: list[Form]
    kind: str                  # branch (every form rel8/rel32), jump (some: jmp, call), fixed (one arity <= 4), variadic, emit
    params: list[str]          # fixed: the parameter names a, b, c, d
    arities: list[int]         # the numbers of operands of its forms, sorted
    keys: dict[int, str]       # arity -> the plan-table subscripts of operands a, b, ... (an int where an immediate can be)
    types: list[str]           # fixed: each parameter's type in the stub

    @property
    def plain(self) -> bool: return self.kind not in ("branch", "jump")

    @property
    def maker(self) -> str:
        """The name of the function that makes this method (template asm_methods.py.j2): methods of one shape share
        it, e.g. ``_fixed_abi`` (two operands, the second may be an int), ``_variadic_a_ab_abci_rc`` (imul-like with
        ``rc=``), ``_branch``."""
        if self.kind in ("branch", "jump"): return "_" + self.kind
        rc = "_rc" if self.rounding else ""
        if self.kind == "emit": return "_emit_only" + rc
        def code(n: int) -> str:
            return "".join(p + ("i" if f"type({p}) is int" in self.keys[n] else "") for p in "abcd"[:n]) or "0"
        if self.kind == "fixed": return f"_fixed_{code(len(self.params))}{rc}"
        return "_variadic_" + "_".join(code(n) for n in self.arities) + rc

    @property
    def rounding(self) -> bool:
        """Does the method take ``rc=`` (AVX-512 static rounding or {sae}, `x86gen.evex`)? Every method but the branches'
        does, as `x86gen.encode` does: where no form takes it, the error says so (not a TypeError)."""
        return self.plain


def _operand_type(ops: list) -> str:
    """The stub type of a parameter that takes these operands (one per form): registers, memory (a `Label` where memory
    is meant is [rip+label]) and immediates, as the aliases of asm_methods.pyi.j2 (a method named ``int`` would shadow
    the builtin in the class body)."""
    kinds = []
    if any(o.reg is not None and o.kind != "1" for o in ops): kinds.append("_Reg")
    if any(o.mem is not None for o in ops): kinds.append("_Mem")
    if any(o.imm is not None or o.kind == "1" for o in ops): kinds.append("_Imm")
    return " | ".join(kinds) or "_Operand"


def asm_methods(forms: list[Form]) -> list[AsmMethod]:
    """The Assembler methods, one per mnemonic in sorted order (its forms in spec order)."""
    by_mn: dict[str, list[Form]] = {}
    for f in forms: by_mn.setdefault(f.mnemonic, []).append(f)
    out = []
    for mn, fl in sorted(by_mn.items()):
        nrel = sum(1 for f in fl if f.operands and f.operands[0].kind[:3] == "rel")
        arities = sorted({len(f.operands) for f in fl})
        keys = {}
        for n in arities:
            names = "abcd"[:n]
            imm = [any(len(f.operands) == n and (f.operands[i].imm is not None or f.operands[i].kind == "1") for f in fl)
                   for i in range(n)]
            keys[n] = "".join(f'["i" if type({p}) is int else {p}.sig]' if imm[i] else f"[{p}.sig]" for i, p in enumerate(names)) or "[()]"
        if nrel: kind = "branch" if nrel == len(fl) else "jump"
        # a string instruction's implicit operands may be left out (`a.movsb()`, `a.maskmovdqu(xmm0, xmm1)`): variadic
        elif len(arities) == 1 and arities[0] <= 4 and not any(o.loc in IMPLICIT_MEM_LOCS for f in fl for o in f.operands):
            kind = "fixed"
        elif max(arities) <= 4: kind = "variadic"
        else: kind = "emit"
        params = list("abcd"[:arities[0]]) if kind == "fixed" else []
        types = [_operand_type([f.operands[i] for f in fl]) for i in range(len(params))]
        out.append(AsmMethod(mn, mn + ("_" if mn in KEYWORDS else ""), fl, kind, params, arities, keys, types))
    return out


def environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.join(HERE, "templates")), keep_trailing_newline=True,
                              undefined=jinja2.StrictUndefined, autoescape=False)


def prefix_groups(forms: list[Form]) -> list[tuple[str, list[str]]]:
    """[(prefix words, the ids of the forms that take exactly those)], in spec order (template prefixes.py.j2)."""
    groups: dict[str, list[str]] = {}
    for f in forms:
        if f.prefixes: groups.setdefault(" ".join(f.prefixes), []).append(f.id)
    return list(groups.items())


# (no hash of the sources in the header: an edit of the spec would rewrite every generated file, and two branches that
# touch the spec would conflict in all of them; `tools/gen.py --check` compares the files' content)
HEADER = ("# GENERATED by tools/gen.py from isa/x86_64.yaml, isa/tinygrad.yaml and codegen/templates/.\n"
          "# Do not edit: change the spec or the templates in codegen/ and run `python tools/gen.py`.")
SCHEMA = "src/x86gen/_gen/schema.py"


def render_schema() -> str:
    """``_gen/schema.py``: the row fields and classes. It depends on codegen/schema.py alone, and the code writer that
    renders the encoders imports it (through x86gen.table), so tools/gen.py writes it first (`render_all` too)."""
    return environment().get_template("schema.py.j2").render(header=HEADER, form_fields=FORM_FIELDS, operand_fields=OPERAND_FIELDS,
                                                              form_field_names=FORM_FIELD_NAMES, operand_field_names=OPERAND_FIELD_NAMES,
                                                              pyrepr=repr)


def render_all(forms: list[Form], sources: dict[str, bytes], extra: dict | None = None) -> dict[str, str]:
    """Return {relative output path: text} for every generated module."""
    header = HEADER
    env = environment()
    extra = dict(extra or {})
    if "reference_ops" not in extra:   # the companion spec's context, unless the caller loaded it (tools/gen.py)
        from .companion import context
        extra.update(context(COMPANION, forms))
    shape_list, per_form = shapes.group({f.id: row(f) for f in forms})
    for f in forms: f.shape, f.shape_args = per_form[f.id]
    ctx = {"header": header, "forms": forms, "shapes": shape_list, "shape_chunk_size": shapes.CHUNK,
           "shape_modules": [shapes.chunk_module(n) for n in range(len(shapes.chunks(shape_list)))],
           "pyrepr": repr, "tuple": tuple, **compact_table(forms),
           "form_fields": FORM_FIELDS, "operand_fields": OPERAND_FIELDS, "form_field_names": FORM_FIELD_NAMES,
           "operand_field_names": OPERAND_FIELD_NAMES, **extra}
    ctx.update(group_rows(forms, ctx))
    ctx["asm_methods"] = asm_methods(forms)
    ctx["asm_makers"] = list({m.maker: m for m in ctx["asm_methods"]}.values())   # one method of each shape
    ctx["prefix_groups"] = prefix_groups(forms)
    out = {}
    for name in sorted(os.listdir(os.path.join(HERE, "templates"))):
        if name == "encoders.py.j2":   # one module per chunk of shapes, each compiled when one of its shapes is first used
            first = 0   # the number of the chunk's first shape
            for n, chunk in enumerate(shapes.chunks(shape_list)):
                out[f"src/x86gen/_gen/encoders/{shapes.chunk_module(n)}.py"] = env.get_template(name).render(
                    **ctx, chunk_first=first, chunk_shapes=chunk, shape_imports=shapes.imports(chunk))
                first += len(chunk)
            out["src/x86gen/_gen/encoders/__init__.py"] = env.get_template("encoders_init.py.j2").render(**ctx)
        elif name == "table.py.j2":   # the table's chunks, each loaded when one of its mnemonics is first used
            for n, chunk in enumerate(ctx["table_chunks"]):
                out[f"src/x86gen/_gen/table/t{n}.py"] = env.get_template(name).render(**ctx, chunk_number=n, chunk=chunk)
            out["src/x86gen/_gen/table/__init__.py"] = env.get_template("table_init.py.j2").render(**ctx)
        elif name.endswith(".j2") and name not in ("encoders_init.py.j2", "table_init.py.j2"):
            out["src/x86gen/_gen/" + name[:-3]] = env.get_template(name).render(**ctx)
    out["src/x86gen/_gen/__init__.py"] = header + '\n"""Generated modules; see tools/gen.py."""\n'
    return out
