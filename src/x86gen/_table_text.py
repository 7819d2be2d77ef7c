"""The generated form table's text (``_gen/forms.tsv``), one mnemonic's line at a time.

The file has one line per mnemonic: the mnemonic, a tab, and its rows as JSON arrays separated by tabs, each
array the fields of `x86gen._gen.schema.FORM_FIELDS` in order. A first use reads only as much of the file as it
takes to find its mnemonic's line. A leaf: `x86gen._table` makes the arrays named tuples (`FormRow`), and the first
use of an operand signature (`x86gen._first_use`) reads them as they are.
"""
from __future__ import annotations

import os

TABLE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_gen", "forms.tsv")

_ROWS_TEXT: dict[str, str] | None = None     # mnemonic → its rows' text, once the whole file is read (`x86gen._table_rare.table`)
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
    """The text of one mnemonic's rows, or None if the table has no such mnemonic. Until the whole table is read,
    its line is found in the file's bytes (a first encode decodes only its mnemonic's line)."""
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
    return rows_text(mnemonic) is not None


def json_array_reader():
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


_loads = None   # `json_array_reader()`, on first use


def row_arrays(mnemonic: str) -> list[list] | None:
    """The rows of ``mnemonic`` as decoded JSON arrays (new lists on each call), in spec order; None if the table
    has no such mnemonic."""
    global _loads
    text = rows_text(mnemonic)
    if text is None: return None
    if _loads is None: _loads = json_array_reader()
    return _loads("[" + text.replace("\t", ",") + "]")
