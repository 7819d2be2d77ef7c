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
        return operand_display(self)
    def __repr__(self) -> str: return f"{ROLE_NAMES[self.role]}:{self.display}@{self.loc}"


ROLE_NAMES = {"r": "R", "w": "W", "rw": "RW", "cw": "CW", "rcw": "RCW", "cr": "CR", "n": "N"}

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


def _data() -> bytes:
    """The table file's bytes."""
    data, whole = _READ
    while not whole: data, whole = _read_more(data)
    return data


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


def table() -> dict[str, str]:
    """The generated table: mnemonic → the text of its rows (JSON arrays separated by tabs), in spec order."""
    global _ROWS_TEXT
    if _ROWS_TEXT is None:
        rows = {}
        for line in _data().decode("utf-8").split("\n"):
            if line and line[0] != "#":
                mnemonic, _, rest = line.partition("\t")
                rows[mnemonic] = rest
        _ROWS_TEXT = rows
    return _ROWS_TEXT


def rows_text(mnemonic: str) -> str | None:
    """The text of one mnemonic's rows (`table`'s value), or None if the table has no such mnemonic. Until the whole
    table is decoded, its line is found in the file's bytes (a first encode decodes only its mnemonic's line)."""
    global _MISSES
    if _ROWS_TEXT is not None: return _ROWS_TEXT.get(mnemonic)
    hit = _FOUND.get(mnemonic)
    if hit is not None: return hit
    if _MISSES >= MISS_MAX: return table().get(mnemonic)   # names not in the table met again and again: the whole table
    if mnemonic.__class__ is not str or not mnemonic or "\t" in mnemonic or "\n" in mnemonic or not mnemonic.isascii():
        return None   # (the table's mnemonics are ASCII)
    text = _line_text(mnemonic)
    if text is None: _MISSES += 1
    else: _FOUND[mnemonic] = text
    return text


def has_mnemonic(mnemonic: str) -> bool:
    """Does the table have rows of ``mnemonic``?"""
    return mnemonic in _ROWS or rows_text(mnemonic) is not None


def mnemonics() -> list[str]:
    """Every mnemonic of the table, in spec order."""
    return list(table())


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


def plain_rows(mnemonics) -> dict[str, tuple]:
    """The decoded rows of these mnemonics as plain tuples (for `marshal`: a start-up cache such as
    x86gen.integrations.tinygrad's), to give back to `preload` in another process."""
    return {mn: tuple((*r[:_OPERANDS], tuple(map(tuple, r.operands)), *r[_OPERANDS + 1:]) for r in rows_of(mn)) for mn in mnemonics}


def preload(plain: dict[str, tuple]) -> None:
    """Take the rows `plain_rows` returned (in a process reading the same table) as decoded, so that their mnemonics'
    first use neither reads nor decodes the table."""
    for mn, rows in plain.items():
        if mn in _ROWS: continue
        rows = tuple(FormRow._make((*r[:_OPERANDS], tuple(map(_make_operand, r[_OPERANDS])), *r[_OPERANDS + 1:])) for r in rows)
        for r in rows: _BY_ID[r.id] = r
        _ROWS[mn] = rows


def row_ids(text: str) -> list[str]:
    """The form ids in the text of a mnemonic's rows (`table`'s value): the first field of each row."""
    import re
    return re.findall(r'(?:^|\t)\["([^"]+)"', text)


def _guess_mnemonic(form_id: str) -> str:
    """The mnemonic an iced-x86 Code name usually starts with: ``VEX_VADDPS_YMM_YMM_YMMM256`` → ``vaddps``."""
    head = form_id.partition("_")
    if head[0] in ("VEX", "EVEX", "XOP"): head = head[2].partition("_")
    return head[0].lower()


def mnemonic_of(form_id: str) -> str | None:
    """The mnemonic of a form id, or None. The id's own first word is tried first (it decodes that mnemonic's rows,
    which the caller wants next); a map of every id in the table is built only when that guess is wrong."""
    global _MNEMONIC_OF
    row = _BY_ID.get(form_id)
    if row is not None: return row.mnemonic
    if _MNEMONIC_OF is None:
        guess = _guess_mnemonic(form_id)
        for mn in (guess, guess[:-1], guess[:-2]):   # and the size suffixes: RETNQ → ret, PUSHFQ → pushf, NOPD → nop
            if rows_of(mn) is not None:
                if form_id in _BY_ID: return mn
        _MNEMONIC_OF = {fid: mn for mn, text in table().items() for fid in row_ids(text)}
    return _MNEMONIC_OF.get(form_id)


def row_of(form_id: str) -> FormRow | None:
    """The row of a form id, or None."""
    hit = _BY_ID.get(form_id)
    if hit is not None: return hit
    mnemonic = mnemonic_of(form_id)
    if mnemonic is None: return None
    rows_of(mnemonic)
    return _BY_ID[form_id]


# implicit memory operands by location (isa/README.md): the address register(s) as Intel syntax writes them
IMPLICIT_MEM = {"rsi": "[rsi]", "rdi": "[rdi]", "esrdi": "es:[rdi]", "rbxal": "[rbx]"}


def operand_display(o: OperandRow) -> str:
    """An operand's kind as Intel's tables write it: ``r/m32`` for a register-or-memory operand."""
    if o.reg and o.mem is not None and o.reg == f"r{o.mem}": return f"r/m{o.mem}"
    if o.loc in IMPLICIT_MEM: return f"{o.kind}@{o.loc}"   # a string instruction's m8@rsi
    return o.kind


# mnemonics that say their 32-bit implicit address themselves (jecxz: jrcxz with 0x67; umonitor r32), with no addr32 word
A32_SPELLED = frozenset(("jecxz", "umonitor"))


def ip16_branch(row: FormRow) -> bool:
    """A near branch with o16 (JMP_REL16, JE_REL8_16, LOOP_REL8_16_RCX): its new instruction pointer is 16 bits,
    IP = (next IP + rel) AND 0FFFFH (SDM Vol.2 JMP/Jcc/CALL/LOOP, operand size 16). In 64-bit mode Intel CPUs ignore the
    0x66 (SDM Vol.2 JMP: "In 64-bit mode the operand size is fixed at 64 bits"), AMD ones honour it (AMD APM Vol.3 JMP/Jcc),
    as iced-x86 decodes it with DecoderOptions.AMD. xbegin's rel16 is not truncated (SDM Vol.2 XBEGIN: a fallback offset)."""
    return row.opsize16 and row.mnemonic != "xbegin" and any(o.kind.startswith("rel") for o in row.operands)


def syntax(row: FormRow) -> str:
    """Intel-style signature, e.g. ``add r/m32, r32``; with the prefix word that chooses a form with a 32-bit implicit
    address or a 16-bit branch (``addr32 monitor``, ``data16 xbegin rel16``; `x86gen.prefixes`), except where the
    mnemonic or operands say it (jecxz, umonitor r32)."""
    word = ("data16 " if ip16_branch(row) or row.id == "XBEGIN_REL16" else "") + (
        "addr32 " if row.addrsize32 and row.mnemonic not in A32_SPELLED else "")
    return (word + row.mnemonic + " " + ", ".join(operand_display(o) for o in row.operands)).strip()


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
        return n + row.fwait + row.opsize16 + row.addrsize32 + bool(row.mandatory_prefix) + (row.w == 1) + len(MAP_BYTES[row.opcode_map])
    if row.encoding_kind == "evex": return n + 4   # 62 P0 P1 P2 (SDM Vol.2 2.7.1)
    return n + (2 if row.opcode_map == 1 and row.w != 1 else 3)
