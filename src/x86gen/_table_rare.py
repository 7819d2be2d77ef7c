"""The parts of `x86gen._table` that a first encode does not need, loaded on first use (their names stay importable
from x86gen._table): rows by form id (`row_of`, `mnemonic_of`), the decoded rows as plain tuples for a start-up
cache (`plain_rows`, `preload`: x86gen.integrations.tinygrad) and the forms' descriptions (`syntax`,
`operand_display`, `ip16_branch`, `imm_ranges`), the whole table (`table`, `mnemonics`) and the role names
(`ROLE_NAMES`). The table's state stays in x86gen._table and x86gen._table_text."""
from __future__ import annotations

import re

from . import _table as T
from . import _table_text as TT
from ._table import A32_SPELLED, IMPLICIT_MEM, FormRow, OperandRow

ROLE_NAMES = {"r": "R", "w": "W", "rw": "RW", "cw": "CW", "rcw": "RCW", "cr": "CR", "n": "N"}


def _data() -> bytes:
    """The table file's bytes."""
    data, whole = TT._READ
    while not whole: data, whole = TT._read_more(data)
    return data


def table() -> dict[str, str]:
    """The generated table: mnemonic → the text of its rows (JSON arrays separated by tabs), in spec order."""
    if TT._ROWS_TEXT is None:
        rows = {}
        for line in _data().decode("utf-8").split("\n"):
            if line and line[0] != "#":
                mnemonic, _, rest = line.partition("\t")
                rows[mnemonic] = rest
        TT._ROWS_TEXT = rows
    return TT._ROWS_TEXT


def mnemonics() -> list[str]:
    """Every mnemonic of the table, in spec order."""
    return list(table())


def operand_repr(o: T.Operand) -> str:
    """``RW:r/m32@rm``: an `x86gen._table.Operand`'s role, kind and location."""
    return f"{ROLE_NAMES[o.role]}:{o.display}@{o.loc}"


def plain_rows(mnemonics) -> dict[str, tuple]:
    """The decoded rows of these mnemonics as plain tuples (for `marshal`: a start-up cache such as
    x86gen.integrations.tinygrad's), to give back to `preload` in another process."""
    return {mn: tuple((*r[:T._OPERANDS], tuple(map(tuple, r.operands)), *r[T._OPERANDS + 1:]) for r in T.rows_of(mn)) for mn in mnemonics}


def preload(plain: dict[str, tuple]) -> None:
    """Take the rows `plain_rows` returned (in a process reading the same table) as decoded, so that their mnemonics'
    first use neither reads nor decodes the table."""
    for mn, rows in plain.items():
        if mn in T._ROWS: continue
        rows = tuple(FormRow._make((*r[:T._OPERANDS], tuple(map(T._make_operand, r[T._OPERANDS])), *r[T._OPERANDS + 1:])) for r in rows)
        for r in rows: T._BY_ID[r.id] = r
        T._ROWS[mn] = rows


def row_ids(text: str) -> list[str]:
    """The form ids in the text of a mnemonic's rows (`table`'s value): the first field of each row."""
    return re.findall(r'(?:^|\t)\["([^"]+)"', text)


def _guess_mnemonic(form_id: str) -> str:
    """The mnemonic an iced-x86 Code name usually starts with: ``VEX_VADDPS_YMM_YMM_YMMM256`` → ``vaddps``."""
    head = form_id.partition("_")
    if head[0] in ("VEX", "EVEX", "XOP"): head = head[2].partition("_")
    return head[0].lower()


def mnemonic_of(form_id: str) -> str | None:
    """The mnemonic of a form id, or None. The id's own first word is tried first (it decodes that mnemonic's rows,
    which the caller wants next); a map of every id in the table is built only when that guess is wrong."""
    row = T._BY_ID.get(form_id)
    if row is not None: return row.mnemonic
    if T._MNEMONIC_OF is None:
        guess = _guess_mnemonic(form_id)
        for mn in (guess, guess[:-1], guess[:-2]):   # and the size suffixes: RETNQ → ret, PUSHFQ → pushf, NOPD → nop
            if T.rows_of(mn) is not None:
                if form_id in T._BY_ID: return mn
        T._MNEMONIC_OF = {fid: mn for mn, text in table().items() for fid in row_ids(text)}
    return T._MNEMONIC_OF.get(form_id)


def row_of(form_id: str) -> FormRow | None:
    """The row of a form id, or None."""
    hit = T._BY_ID.get(form_id)
    if hit is not None: return hit
    mnemonic = mnemonic_of(form_id)
    if mnemonic is None: return None
    T.rows_of(mnemonic)
    return T._BY_ID[form_id]


def operand_display(o: OperandRow) -> str:
    """An operand's kind as Intel's tables write it: ``r/m32`` for a register-or-memory operand."""
    if o.reg and o.mem is not None and o.reg == f"r{o.mem}": return f"r/m{o.mem}"
    if o.loc in IMPLICIT_MEM: return f"{o.kind}@{o.loc}"   # a string instruction's m8@rsi
    return o.kind


def ip16_branch(row: FormRow) -> bool:
    """A near branch with o16 (JMP_REL16, JE_REL8_16, LOOP_REL8_16_RCX): its new instruction pointer is 16 bits,
    IP = (next IP + rel) AND 0FFFFH (SDM Vol.2 JMP/Jcc/CALL/LOOP, operand size 16). In 64-bit mode Intel CPUs ignore the
    0x66 (SDM Vol.2 JMP: "In 64-bit mode the operand size is fixed at 64 bits"), AMD ones honour it (AMD APM Vol.3 JMP/Jcc),
    as iced-x86 decodes it with DecoderOptions.AMD. xbegin's rel16 is not truncated (SDM Vol.2 XBEGIN: a fallback offset)."""
    return row.opsize16 and row.mnemonic != "xbegin" and any(o.kind.startswith("rel") for o in row.operands)


def a32_memory(row) -> bool:
    """Is the form's explicit memory operand a 32-bit address (`a32` with a memory operand in the spec: MOVDIR64B_R32_M512,
    ENQCMD_R32_M512, ENQCMDS_R32_M512; `x86gen._table.REG_ADDRESS`)? Then it takes an `x86gen.A32Mem` there and nothing
    else (``[ecx]``, not ``[rcx]``), and its bytes hold the one 0x67. ``row``: a form's row or the `Form` (same fields)."""
    return row.addrsize32 and any(o.mem is not None for o in row.operands)


def syntax(row: FormRow) -> str:
    """Intel-style signature, e.g. ``add r/m32, r32``; with the prefix word that chooses a form with a 32-bit implicit
    address or a 16-bit branch (``addr32 monitor``, ``data16 xbegin rel16``; `x86gen.prefixes`), except where the
    mnemonic or operands say it (jecxz, umonitor r32, the 32-bit memory operand of enqcmd r32, m512: `a32_memory`)."""
    word = ("data16 " if ip16_branch(row) or row.id == "XBEGIN_REL16" else "") + (
        "addr32 " if row.addrsize32 and row.mnemonic not in A32_SPELLED and not a32_memory(row) else "")
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
