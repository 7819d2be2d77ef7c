"""The generated form table (``_gen/forms.tsv``) read by name, one mnemonic's rows at a time.

A leaf of the encoder core: `x86gen.forms` builds its `Form` objects from these rows, and the errors
the encoders raise (`x86gen._runtime`) describe a form from its row here, so neither needs the other.
Rows are `x86gen._gen.schema.FormRow` named tuples with `OperandRow` operands.
"""
from __future__ import annotations

import os

from ._gen.schema import FormRow, OperandRow


class Operand(OperandRow):
    """One explicit operand of a form: ``kind`` (e.g. ``r32/m32``), ``loc`` (ModRM.reg, rm, vvvv, …),
    ``role`` (r, w, rw, cw = conditionally written, n = not accessed), register class, memory size,
    immediate width: an `x86gen._gen.schema.OperandRow` with a few derived properties (`x86gen.forms.Operand`;
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
_ROWS_TEXT: dict[str, str] | None = None     # mnemonic → its rows' text (JSON arrays, tab-separated), read on first use
_MNEMONIC_OF: dict[str, str] | None = None   # form id → mnemonic, from the text on first use
TABLE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_gen", "forms.tsv")


_FOUND: dict[str, str] = {}   # mnemonic → its rows' text, found in the file's bytes (`rows_text`)
_MISSES = 0      # names looked for in the file's bytes and not found (a miss reads all 1.3 MB: 1.5 ms)
MISS_MAX = 4     # after as many, the whole table is decoded (about as long as 4 misses)
# The table file's first bytes read so far, and whether that is the whole file: read on first use, the first
# READ_FIRST bytes and then twice as many each time a line is not in them (the legacy forms come first: a first
# `add` reads 128 KB of the 1.3 MB). One tuple, replaced whole: a thread sees bytes and flag that agree.
_READ: tuple[bytes, bool] = (b"", False)
READ_FIRST = 1 << 17


def _read_more(data: bytes) -> tuple[bytes, bool]:
    """``(data and the next len(data) bytes (at least READ_FIRST), whether that is the whole file)``: ``data`` are
    the file's first bytes."""
    global _READ
    with open(TABLE_PATH, "rb") as fh:
        fh.seek(len(data))
        want = max(len(data), READ_FIRST)
        more = fh.read(want)
    got = (data + more, len(more) < want)
    if len(got[0]) > len(_READ[0]) or got[1]: _READ = got
    return got


def _line_text(mnemonic: str) -> str | None:
    """The text after ``mnemonic`` and its tab on its line of the file, reading no more of the file than it needs."""
    key = b"\n" + mnemonic.encode() + b"\t"
    data, whole = _READ
    at = data.find(key)
    while at < 0 and not whole:
        n = len(data)
        data, whole = _read_more(data)
        at = data.find(key, max(0, n - len(key)))
    if at < 0: return None
    start = at + len(key)
    end = data.find(b"\n", start)
    while end < 0 and not whole:
        n = len(data)
        data, whole = _read_more(data)
        end = data.find(b"\n", n)
    return data[start:end if end >= 0 else len(data)].decode("utf-8")


def rows_text(mnemonic: str) -> str | None:
    """The text of one mnemonic's rows (`table`'s value), or None if the table has no such mnemonic. Until the whole
    table is decoded, its line is found in the file's bytes (a first encode decodes only its mnemonic's line)."""
    global _MISSES
    if _ROWS_TEXT is not None: return _ROWS_TEXT.get(mnemonic)
    hit = _FOUND.get(mnemonic)
    if hit is not None: return hit
    if _MISSES >= MISS_MAX:   # names not in the table met again and again: the whole table (x86gen._table_rare)
        from ._table_rare import table
        return table().get(mnemonic)
    if mnemonic.__class__ is not str or not mnemonic or "\t" in mnemonic or "\n" in mnemonic or not mnemonic.isascii():
        return None   # (the table's mnemonics are ASCII)
    text = _line_text(mnemonic)
    if text is None: _MISSES += 1
    else: _FOUND[mnemonic] = text
    return text


def has_mnemonic(mnemonic: str) -> bool:
    """Does the table have rows of ``mnemonic``?"""
    return mnemonic in _ROWS or rows_text(mnemonic) is not None


def _tuples(x):
    """A decoded JSON value with every list made a tuple (rows are immutable and hashable)."""
    return tuple(_tuples(v) for v in x) if x.__class__ is list else x


def _json_array_reader():
    """``loads(text)`` for the table's JSON arrays: the C scanner of `json.loads`, without importing the json package
    (2 ms in a fresh interpreter: it compiles its regular expressions), or json.loads where there is no such scanner."""
    try:
        from _json import make_scanner
    except ImportError:   # (not CPython)
        from json import loads
        return loads

    class Context:   # what json.decoder.JSONDecoder gives the scanner (its defaults: float and int for numbers)
        strict, object_hook, object_pairs_hook, parse_float, parse_int, parse_constant, memo = True, None, None, float, int, None, {}
    scan = make_scanner(Context())

    def loads(text: str):
        try: value, end = scan(text, 0)
        except StopIteration as ex: raise ValueError(f"forms.tsv: bad JSON at {ex.value}") from None   # (as json.decoder does)
        if end != len(text): raise ValueError(f"forms.tsv: extra data at {end}")   # (a generated file: never)
        return value
    return loads


_loads = None   # `_json_array_reader()`, on first use
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
    text = rows_text(mnemonic)
    if text is None: return None
    global _loads
    if _loads is None: _loads = _json_array_reader()
    rows = tuple(_decode(r) for r in _loads("[" + text.replace("\t", ",") + "]"))
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


def static_length(row: FormRow) -> int:
    """Length in bytes with no memory operand, a 2-byte VEX where legal, and no optional REX."""
    n = (1 + (row.modrm is not None) + sum(row.imm_widths) // 8 + bool(row.is4)
         + 8 * sum(o.loc == "moffs" for o in row.operands))
    if row.encoding_kind == "legacy":
        return n + row.fwait + row.opsize16 + row.addrsize32 + bool(row.mandatory_prefix) + (row.w == 1) + len(MAP_BYTES[row.opcode_map])
    if row.encoding_kind == "evex": return n + 4   # 62 P0 P1 P2 (SDM Vol.2 2.7.1)
    return n + (2 if row.opcode_map == 1 and row.w != 1 else 3)


# names defined in x86gen._table_rare (loaded on first use), importable from here
_ELSEWHERE = """plain_rows preload row_ids _guess_mnemonic mnemonic_of row_of operand_display ip16_branch syntax imm_ranges
                table _data mnemonics ROLE_NAMES operand_repr a32_memory"""


def __getattr__(name: str):
    if name not in _ELSEWHERE.split(): raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import _table_rare
    return getattr(_table_rare, name)
