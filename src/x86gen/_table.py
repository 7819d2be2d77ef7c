"""The generated form table (``_gen/forms.tsv``) read by name, one mnemonic's rows at a time.

A leaf of the encoder core: `x86gen.forms` builds its `Form` objects from these rows, and the errors
the encoders raise (`x86gen._runtime`) describe a form from its row here, so neither needs the other.
Rows are `FormRow` named tuples with `Operand` operands; the text they are read from is `x86gen._table_text`'s.
"""
from __future__ import annotations

from collections import namedtuple

from ._gen.schema import FORM_FIELDS, OPERAND_FIELDS
from ._table_text import has_mnemonic, row_arrays, rows_text  # noqa: F401  (importable from here)

FormRow = namedtuple("FormRow", FORM_FIELDS)            # a row of the form table (fields: x86gen/_gen/schema.py)
OperandRow = namedtuple("OperandRow", OPERAND_FIELDS)   # one of its explicit operands


class Operand(OperandRow):
    """One explicit operand of a form: ``kind`` (e.g. ``r32/m32``), ``loc`` (ModRM.reg, rm, vvvv, …),
    ``role`` (r, w, rw, cw = conditionally written, n = not accessed), register class, memory size,
    immediate width: an `OperandRow` with a few derived properties (`x86gen.forms.Operand`;
    defined here so that rows are decoded straight into it)."""

    __slots__ = ()

    @property
    def may_be_memory(self) -> bool: return self.mem is not None
    @property
    def display(self) -> str:
        """The kind as Intel's tables write it (``r/m32``)."""
        from ._table_rare import operand_display
        return operand_display(self)
    def __repr__(self) -> str:
        from ._table_rare import operand_repr
        return operand_repr(self)


_ROWS: dict[str, tuple[FormRow, ...]] = {}   # mnemonic → its rows, decoded on first use
_BY_ID: dict[str, FormRow] = {}
_MNEMONIC_OF: dict[str, str] | None = None   # form id → mnemonic, from the text on first use (x86gen._table_rare)


def _tuples(x):
    """A decoded JSON value with every list made a tuple (rows are immutable and hashable)."""
    return tuple(_tuples(v) for v in x) if x.__class__ is list else x


_make_operand = Operand._make
_OPERANDS, _IMM_WIDTHS, _FLAGS, _IMPLICIT = (FormRow._fields.index(f) for f in ("operands", "imm_widths", "flags", "implicit"))
_NESTED = tuple(i for i, f in enumerate(FormRow._fields) if f not in ("operands", "imm_widths", "flags", "implicit"))


def _decode(fields: list) -> FormRow:
    """A row's JSON fields as a `FormRow`, every list a tuple. The known shapes are converted directly (operands:
    lists of scalars; flags and implicit registers: lists of lists of strings), the rest by `_tuples`: a generic
    walk over every value of every row took most of the first use of a mnemonic (x86gen.integrations.tinygrad's
    start-up decodes 132 mnemonics)."""
    fields[_OPERANDS] = tuple(map(_make_operand, fields[_OPERANDS]))
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
    arrays = row_arrays(mnemonic)
    if arrays is None: return None
    rows = tuple(map(_decode, arrays))
    for r in rows: _BY_ID[r.id] = r
    _ROWS[mnemonic] = rows   # published last: whoever finds it finds _BY_ID filled
    return rows


# implicit memory operands by location (isa/README.md): the address register(s) as Intel syntax writes them
IMPLICIT_MEM = {"rsi": "[rsi]", "rdi": "[rdi]", "esrdi": "es:[rdi]", "rbxal": "[rbx]"}


# mnemonics that say their 32-bit implicit address themselves (jecxz: jrcxz with 0x67; umonitor r32), with no addr32 word
A32_SPELLED = frozenset(("jecxz", "umonitor"))

# the mnemonics whose ModRM.reg register holds an address (the 64-byte destination es:[reg], SDM Vol.2 MOVDIR64B, ENQCMD,
# ENQCMDS): the address size sizes it as it sizes the memory operand, so their 32-bit addresses (0x67) are forms of their
# own, r32 with a 32-bit memory operand (`a32_memory`: their `a32` forms), and a 64-bit register never takes a 32-bit address
REG_ADDRESS = frozenset(("movdir64b", "enqcmd", "enqcmds"))


MAP_BYTES = {0: (), 1: (0x0F,), 2: (0x0F, 0x38), 3: (0x0F, 0x3A)}   # legacy opcode map escapes (SDM Vol.2 2.1.2)


# names defined in x86gen._table_rare (loaded on first use), importable from here
_ELSEWHERE = """plain_rows preload row_ids _guess_mnemonic mnemonic_of row_of operand_display ip16_branch syntax imm_ranges
                table _data mnemonics ROLE_NAMES operand_repr a32_memory"""


def __getattr__(name: str):
    if name not in _ELSEWHERE.split(): raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import _table_rare
    return getattr(_table_rare, name)
