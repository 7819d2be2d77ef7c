"""The generated form table (``_gen/forms.tsv``) read by name, one mnemonic's rows at a time.

A leaf of the encoder core: `x86gen.forms` builds its `Form` objects from these rows, and the errors
the encoders raise (`x86gen._runtime`) describe a form from its row here, so neither needs the other.
Rows are `x86gen._gen.schema.FormRow` named tuples with `OperandRow` operands.
"""
from __future__ import annotations

import json
import os
import re

from ._gen.schema import FormRow, OperandRow

_ROWS: dict[str, tuple[FormRow, ...]] = {}   # mnemonic → its rows, decoded on first use
_BY_ID: dict[str, FormRow] = {}
_ROWS_TEXT: dict[str, str] | None = None     # mnemonic → its rows' text (JSON arrays, tab-separated), read on first use
_MNEMONIC_OF: dict[str, str] | None = None   # form id → mnemonic, from the text on first use
TABLE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_gen", "forms.tsv")


def table() -> dict[str, str]:
    """The generated table: mnemonic → the text of its rows (JSON arrays separated by tabs), in spec order."""
    global _ROWS_TEXT
    if _ROWS_TEXT is None:
        with open(TABLE_PATH, encoding="utf-8") as fh: text = fh.read()
        rows = {}
        for line in text.split("\n"):
            if line and line[0] != "#":
                mnemonic, _, rest = line.partition("\t")
                rows[mnemonic] = rest
        _ROWS_TEXT = rows
    return _ROWS_TEXT


def mnemonics() -> list[str]:
    """Every mnemonic of the table, in spec order."""
    return list(table())


def _tuples(x):
    """A decoded JSON value with every list made a tuple (rows are immutable and hashable)."""
    return tuple(_tuples(v) for v in x) if x.__class__ is list else x


_OPERANDS, _IMM_WIDTHS, _FLAGS, _IMPLICIT = (FormRow._fields.index(f) for f in ("operands", "imm_widths", "flags", "implicit"))
_NESTED = tuple(i for i, f in enumerate(FormRow._fields) if f not in ("operands", "imm_widths", "flags", "implicit"))


def _decode(fields: list) -> FormRow:
    """A row's JSON fields as a `FormRow`, every list a tuple. The known shapes are converted directly (operands:
    lists of scalars; flags and implicit registers: lists of lists of strings), the rest by `_tuples`: a generic
    walk over every value of every row took most of the first use of a mnemonic (x86gen.integrations.tinygrad's
    start-up decodes 132 mnemonics)."""
    fields[_OPERANDS] = tuple(OperandRow._make(o) for o in fields[_OPERANDS])
    fields[_IMM_WIDTHS] = tuple(fields[_IMM_WIDTHS])
    fields[_FLAGS] = tuple(map(tuple, fields[_FLAGS]))
    fields[_IMPLICIT] = tuple(map(tuple, fields[_IMPLICIT]))
    for i in _NESTED:
        v = fields[i]
        if v.__class__ is list: fields[i] = _tuples(v)
    return FormRow._make(fields)


def rows_of(mnemonic: str) -> tuple[FormRow, ...] | None:
    """The rows of a mnemonic in spec order, or None if the table has no such mnemonic."""
    hit = _ROWS.get(mnemonic)
    if hit is not None: return hit
    text = table().get(mnemonic)
    if text is None: return None
    rows = tuple(_decode(r) for r in json.loads("[" + text.replace("\t", ",") + "]"))
    for r in rows: _BY_ID[r.id] = r
    _ROWS[mnemonic] = rows   # published last: whoever finds it finds _BY_ID filled
    return rows


_ROW_ID = re.compile(r'(?:^|\t)\["([^"]+)"')   # the id, first field of each row


def mnemonic_of(form_id: str) -> str | None:
    """The mnemonic of a form id, or None."""
    global _MNEMONIC_OF
    if _MNEMONIC_OF is None:
        _MNEMONIC_OF = {fid: mn for mn, text in table().items() for fid in _ROW_ID.findall(text)}
    return _MNEMONIC_OF.get(form_id)


def row_of(form_id: str) -> FormRow | None:
    """The row of a form id, or None."""
    hit = _BY_ID.get(form_id)
    if hit is not None: return hit
    mnemonic = mnemonic_of(form_id)
    if mnemonic is None: return None
    rows_of(mnemonic)
    return _BY_ID[form_id]


def operand_display(o: OperandRow) -> str:
    """An operand's kind as Intel's tables write it: ``r/m32`` for a register-or-memory operand."""
    if o.reg and o.mem is not None and o.reg == f"r{o.mem}": return f"r/m{o.mem}"
    return o.kind


def syntax(row: FormRow) -> str:
    """Intel-style signature, e.g. ``add r/m32, r32``."""
    return (row.mnemonic + " " + ", ".join(operand_display(o) for o in row.operands)).strip()


def imm_ranges(width: int, operand_size: int, sext: bool, rel: bool) -> tuple[tuple[int, int], ...]:
    """Accepted values of an immediate: one or two closed intervals.

    A plain ``immN`` takes any value whose low N bits are what is meant, signed or unsigned:
    [-2^(N-1), 2^N). A sign-extended ``simmN`` of an operation of size S (``83 /0 ib``) must be
    what the CPU produces by sign-extending N bits to S bits, read as signed or as unsigned S-bit
    values (so ``add eax, 0xffffffff`` is ``83 c0 ff``, as GNU as encodes it).
    """
    if rel: return ((-(1 << (width - 1)), (1 << (width - 1)) - 1),)
    if width == 4: return ((0, 15),)   # vpermil2ps's imm4 (imm8[3:0] of /is5): unsigned, as GNU as takes it
    if not sext or operand_size <= width: return ((-(1 << (width - 1)), (1 << width) - 1),)
    half = 1 << (width - 1)
    return ((-half, half - 1), ((1 << operand_size) - half, (1 << operand_size) - 1))


MAP_BYTES = {0: (), 1: (0x0F,), 2: (0x0F, 0x38), 3: (0x0F, 0x3A)}   # legacy opcode map escapes (SDM Vol.2 2.1.2)


def static_length(row: FormRow) -> int:
    """Length in bytes with no memory operand, a 2-byte VEX where legal, and no optional REX."""
    n = (1 + (row.modrm is not None) + sum(row.imm_widths) // 8 + bool(row.is4)
         + 8 * sum(o.loc == "moffs" for o in row.operands))
    if row.encoding_kind == "legacy":
        return n + row.fwait + row.opsize16 + bool(row.mandatory_prefix) + (row.w == 1) + len(MAP_BYTES[row.opcode_map])
    if row.encoding_kind == "evex": return n + 4   # 62 P0 P1 P2 (SDM Vol.2 2.7.1)
    return n + (2 if row.opcode_map == 1 and row.w != 1 else 3)
