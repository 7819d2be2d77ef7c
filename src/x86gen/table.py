"""The form table: every instruction form of isa/x86_64.yaml, as the generator wrote it (``_gen/table.py``).

The generated module holds, per mnemonic, the text of its rows (one JSON array per form, the fields of
`x86gen._gen.schema.FORM_FIELDS` in order); a mnemonic's rows are decoded the first time it is used, into `FormRow`
named tuples whose operands are `Operand`s. Everything here reads rows and nothing else: what a form takes
(`takes`), how it is written (`syntax`), which immediates fit (`imm_ranges`). `x86gen.forms` makes `Form` objects of
the rows; selection (`x86gen.selection`) and the errors (`x86gen.diagnostics`) read the rows directly.
"""
from __future__ import annotations

import re

from ._gen.schema import FormRow, OperandRow
from .memory import A32Mem, SegMem
from .registers import REGISTERS

ROLE_NAMES = {"r": "R", "w": "W", "rw": "RW", "cw": "CW", "rcw": "RCW", "cr": "CR", "n": "N"}
# implicit memory operands by location (isa/README.md): the address register(s) as Intel syntax writes them
IMPLICIT_MEM = {"rsi": "[rsi]", "rdi": "[rdi]", "esrdi": "es:[rdi]", "rbxal": "[rbx]"}
# mnemonics that say their 32-bit implicit address themselves (jecxz: jrcxz with 0x67; umonitor r32), with no addr32 word
A32_SPELLED = frozenset(("jecxz", "umonitor"))
# the mnemonics whose ModRM.reg register holds an address (the 64-byte destination es:[reg], SDM Vol.2 MOVDIR64B, ENQCMD,
# ENQCMDS): the address size sizes it as it sizes the memory operand, so their 32-bit addresses (0x67) are forms of their
# own, r32 with a 32-bit memory operand (`a32_memory`: their `a32` forms), and a 64-bit register never takes a 32-bit address
REG_ADDRESS = frozenset(("movdir64b", "enqcmd", "enqcmds"))
MAP_BYTES = {0: (), 1: (0x0F,), 2: (0x0F, 0x38), 3: (0x0F, 0x3A)}   # legacy opcode map escapes (SDM Vol.2 2.1.2)


class Operand(OperandRow):
    """One explicit operand of a form: ``kind`` (e.g. ``r32/m32``), ``loc`` (ModRM.reg, rm, vvvv, …),
    ``role`` (r, w, rw, cw = conditionally written, n = not accessed), register class, memory size,
    immediate width: an `OperandRow` with a few derived properties."""

    __slots__ = ()

    @property
    def may_be_memory(self) -> bool: return self.mem is not None
    @property
    def display(self) -> str:
        """The kind as Intel's tables write it (``r/m32``)."""
        return operand_display(self)
    def __repr__(self) -> str: return f"{ROLE_NAMES[self.role]}:{self.display}@{self.loc}"


# ---- reading the table --------------------------------------------------------------------------------------------

_ROWS: dict[str, tuple[FormRow, ...]] = {}   # mnemonic → its rows, decoded on first use
_BY_ID: dict[str, FormRow] = {}
_MNEMONIC_OF: dict[str, str] | None = None   # form id → mnemonic, made when an id's own first word does not find it
_MNEMONIC_AT = FormRow._fields.index("mnemonic")
(_OPERANDS, _IMM_WIDTHS, _FLAGS, _IMPLICIT, _SHAPE_ARGS) = (
    FormRow._fields.index(f) for f in ("operands", "imm_widths", "flags", "implicit", "shape_args"))
_T = None           # the generated table's package (`x86gen._gen.table`), imported on first use
_OPERAND_ROWS = ()  # its distinct operands as `Operand`s, made on first use


def _json_array_reader():
    """``loads(text)`` for the table's JSON arrays: the C scanner of `json.loads`, without importing the json package
    (2.5 ms in a fresh interpreter, with bytecode: it imports and compiles its regular expressions), or json.loads where
    there is no such scanner."""
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
        except StopIteration as ex: raise ValueError(f"_gen/table: bad JSON at {ex.value}") from None   # (as json does)
        if end != len(text): raise ValueError(f"_gen/table: extra data at {end}")   # (a generated file: never)
        return value
    return loads


_loads = None   # `_json_array_reader()`, on first use


def _table():
    """The generated table's package (its small part: operands, flags, where each mnemonic's rows are)."""
    global _T, _OPERAND_ROWS
    if _T is None:
        from ._gen import table as t  # (the generator imports this module before the table exists)
        _OPERAND_ROWS = tuple(map(_make_operand, t.OPERANDS))
        _T = t
    return _T


def rows_text(mnemonic: str) -> str | None:
    """The JSON text of ``mnemonic``'s rows (the generated table's: see ``x86gen/_gen/table/__init__.py``), or None."""
    if mnemonic.__class__ is not str: return None
    try: return (_T or _table()).rows_text(mnemonic)
    except UnicodeEncodeError: return None   # (a lone surrogate: no mnemonic)


def row_arrays(mnemonic: str) -> list[list] | None:
    """The rows of ``mnemonic`` as decoded JSON arrays (new lists on each call), in spec order, as the generated table
    holds them (operands, flags and implicit registers as indices); None if the table has no such mnemonic."""
    global _loads
    text = rows_text(mnemonic)
    if text is None: return None
    if _loads is None: _loads = _json_array_reader()
    return _loads(text)


def _tuples(x):
    """A decoded JSON value with every list made a tuple (rows are immutable and hashable)."""
    return tuple(_tuples(v) for v in x) if x.__class__ is list else x


_make_operand = Operand._make


def _decode(mnemonic: str, fields: list) -> FormRow:
    """A row as the table holds it (`row_arrays`) as a `FormRow`: the mnemonic put in, the operands, flags and implicit
    registers looked up, every list a tuple."""
    fields.insert(_MNEMONIC_AT, mnemonic)
    ops = _OPERAND_ROWS
    fields[_OPERANDS] = tuple([ops[i] for i in fields[_OPERANDS]])
    fields[_IMM_WIDTHS] = tuple(fields[_IMM_WIDTHS])
    fields[_FLAGS] = _T.FLAGS[fields[_FLAGS]]
    fields[_IMPLICIT] = _T.IMPLICIT[fields[_IMPLICIT]]
    a = fields[_SHAPE_ARGS]
    fields[_SHAPE_ARGS] = tuple([tuple(v) if v.__class__ is list else v for v in a])
    return FormRow._make(fields)


def rows_of(mnemonic: str) -> tuple[FormRow, ...] | None:
    """The rows of a mnemonic in spec order, or None if the table has no such mnemonic."""
    hit = _ROWS.get(mnemonic)
    if hit is not None: return hit
    arrays = row_arrays(mnemonic)
    if arrays is None: return None
    rows = tuple([_decode(mnemonic, a) for a in arrays])
    for r in rows: _BY_ID[r.id] = r
    _ROWS[mnemonic] = rows   # published last: whoever finds it finds _BY_ID filled
    return rows


def has_mnemonic(mnemonic: str) -> bool:
    """Does the table have rows of ``mnemonic``?"""
    return mnemonic.__class__ is str and (_T or _table()).rows_text(mnemonic) is not None


def mnemonics() -> list[str]:
    """Every mnemonic of the table, in spec order."""
    return (_T or _table()).MNEMONICS.split()


def table() -> dict[str, str]:
    """The generated table: mnemonic → the JSON text of its rows (as `row_arrays` reads them), in spec order."""
    return {mn: rows_text(mn) for mn in mnemonics()}


def row_ids(text: str) -> list[str]:
    """The form ids in the JSON text of a mnemonic's rows (`table`'s value): the first field of each row."""
    return re.findall(r'\["([^"]+)",\[', text)   # a row: [id, [operand indices], …]


def _guess_mnemonic(form_id: str) -> str:
    """The mnemonic an iced-x86 Code name usually starts with: ``VEX_VADDPS_YMM_YMM_YMMM256`` → ``vaddps``."""
    head = form_id.partition("_")
    if head[0] in ("VEX", "EVEX", "XOP", "REX2"): head = head[2].partition("_")
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
            if rows_of(mn) is not None and form_id in _BY_ID: return mn
        _MNEMONIC_OF = {fid: mn for mn, text in table().items() for fid in row_ids(text)}
    return _MNEMONIC_OF.get(form_id)


def row_of(form_id: str) -> FormRow | None:
    """The row of a form id, or None."""
    hit = _BY_ID.get(form_id) if form_id.__class__ is str else None
    if hit is not None: return hit
    if form_id.__class__ is not str: return None
    mnemonic = mnemonic_of(form_id)
    if mnemonic is None: return None
    rows_of(mnemonic)
    return _BY_ID[form_id]


def plain_rows(mnemonics) -> dict[str, tuple]:
    """The decoded rows of these mnemonics as plain tuples (for `marshal`: a start-up cache such as
    x86gen.integrations.tinygrad's), to give back to `preload` in another process."""
    return {mn: tuple((*r[:_OPERANDS], tuple(map(tuple, r.operands)), *r[_OPERANDS + 1:]) for r in rows_of(mn)) for mn in mnemonics}


def preload(plain: dict[str, tuple]) -> None:
    """Take the rows `plain_rows` returned (in a process reading the same table) as decoded."""
    for mn, rows in plain.items():
        if mn in _ROWS: continue
        rows = tuple(FormRow._make((*r[:_OPERANDS], tuple(map(_make_operand, r[_OPERANDS])), *r[_OPERANDS + 1:])) for r in rows)
        for r in rows: _BY_ID[r.id] = r
        _ROWS[mn] = rows


# ---- what a row says ----------------------------------------------------------------------------------------------

def operand_display(o: OperandRow) -> str:
    """An operand's kind as Intel's tables write it: ``r/m32`` for a register-or-memory operand."""
    if o.reg and o.mem is not None and o.reg == f"r{o.mem}": return f"r/m{o.mem}"
    if o.loc in IMPLICIT_MEM: return f"{o.kind}@{o.loc}"   # a string instruction's m8@rsi
    return o.kind


def is_branch(row) -> bool:
    """Has the form a branch target (rel8/rel16/rel32), so that its encoder takes ``ip=``? (``row``: a row, or a
    `Form`: the same fields.)"""
    return any(o.kind[:3] == "rel" for o in row.operands)


def ip16_branch(row: FormRow) -> bool:
    """A near branch with o16 (JMP_REL16, JE_REL8_16, LOOP_REL8_16_RCX): its new instruction pointer is 16 bits,
    IP = (next IP + rel) AND 0FFFFH (SDM Vol.2 JMP/Jcc/CALL/LOOP, operand size 16). In 64-bit mode Intel CPUs ignore the
    0x66 (SDM Vol.2 JMP: "In 64-bit mode the operand size is fixed at 64 bits"), AMD ones honour it (AMD APM Vol.3 JMP/Jcc),
    as iced-x86 decodes it with DecoderOptions.AMD. xbegin's rel16 is not truncated (SDM Vol.2 XBEGIN: a fallback offset)."""
    return row.opsize16 and row.mnemonic != "xbegin" and is_branch(row)


def ip16_transfer(row) -> bool:
    """A near indirect call/jmp or near return with o16 (CALL_RM16, JMP_RM16, RETNW, RETNW_IMM16): its new IP is 16 bits
    (the r/m16 target, the word popped) on AMD CPUs; Intel ones ignore the 0x66 (SDM Vol.2 CALL/JMP/RET: "In 64-bit mode
    the operand size is fixed at 64 bits"), as iced-x86 decodes it without DecoderOptions.AMD. No branch target of its
    own (`ip16_branch`): it is chosen by a 16-bit operand (``call ax``, ``jmp word ptr [rax]``) or by ``data16``
    (``data16 ret``, ``data16 call [rax]``), never in place of the 64-bit form (`sized_kind`)."""
    return row.opsize16 and row.mnemonic in _NEAR_TRANSFERS and not any(":" in o.kind for o in row.operands)


_NEAR_TRANSFERS = frozenset(("call", "jmp", "ret"))   # (their far forms, m16:16 …, and retfw are other operations)


def a32_memory(row) -> bool:
    """Is the form's explicit memory operand a 32-bit address (`a32` with a memory operand in the spec: MOVDIR64B_R32_M512,
    ENQCMD_R32_M512, ENQCMDS_R32_M512; `REG_ADDRESS`)? Then it takes an `x86gen.A32Mem` there and nothing else
    (``[ecx]``, not ``[rcx]``), and its bytes hold the one 0x67. ``row``: a form's row or the `Form` (same fields)."""
    return row.addrsize32 and any(o.mem is not None for o in row.operands)


def address_size_fits(row, ops: tuple) -> bool:
    """Do the address sizes of ``ops`` suit form ``row``? A form whose memory operand is a 32-bit address (`a32_memory`:
    ENQCMD_R32_M512) takes an `A32Mem` there and no other memory operand; any other form takes one as its 64-bit operand
    with 0x67 before its bytes (`x86gen.encoding.decorated.address32`), except those whose ModRM.reg register is an
    address too (`REG_ADDRESS`: ENQCMD_R64_M512), which 0x67 would make another form (SDM Vol.2 MOVDIR64B, ENQCMD: the
    address size sizes both)."""
    a32 = any(x.__class__ is A32Mem or (x.__class__ is SegMem and x.plain.__class__ is A32Mem) for x in ops)
    return a32 if a32_memory(row) else row.mnemonic not in REG_ADDRESS or not a32


def mask_required(row) -> bool:
    """Does the form need a mask k1-k7: an EVEX gather or scatter (a VSIB operand; EVEX.aaa = 000 is #UD, SDM Vol.2
    VPGATHERDD/VPSCATTERDD)? Its encoder takes the mask's number as ``aaa=`` (`x86gen.encoding.decorated.encode_form` passes it;
    0, the plain call, is the error)."""
    return row.encoding_kind == "evex" and any(o.kind[:2] == "vm" for o in row.operands)


def sized_kind(row) -> str:
    """"addr32" for a form with a 32-bit implicit address (MONITORD), "data16" for a 16-bit branch (o16: XBEGIN_REL16,
    JMP_REL16, and the `ip16_transfer` forms: CALL_RM16, RETNW), "data16 addr32" for both (LOOP_REL8_16_ECX), else "":
    the forms that only their prefix words (or their own spelling) ask for. jecxz and umonitor r32 say their 32-bit
    address themselves (`A32_SPELLED`), enqcmd r32, m512 by its memory operand (an `A32Mem`: the `a32` forms of
    `REG_ADDRESS`), ``call r/m16`` its 16-bit operand (`syntax`: ``call ax``, ``jmp word ptr [rax]``)."""
    a32 = row.addrsize32 and row.mnemonic not in A32_SPELLED and row.mnemonic not in REG_ADDRESS
    o16 = row.opsize16 and (is_branch(row) or ip16_transfer(row))
    return "data16 addr32" if o16 and a32 else "addr32" if a32 else "data16" if o16 else ""


def syntax(row: FormRow) -> str:
    """Intel-style signature, e.g. ``add r/m32, r32``; with the prefix word that chooses a form with a 32-bit implicit
    address or a 16-bit branch (``addr32 monitor``, ``data16 xbegin rel16``; `x86gen.prefixes`), except where the
    mnemonic or operands say it (jecxz, umonitor r32, the 32-bit memory operand of enqcmd r32, m512: `a32_memory`; the
    r/m16 of ``call r/m16``, but not the imm16 of ``data16 ret imm16``, which ``ret imm16`` has too)."""
    o16 = ip16_branch(row) or row.id == "XBEGIN_REL16" or (ip16_transfer(row) and not any(o.reg for o in row.operands))
    word = ("data16 " if o16 else "") + (
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


# ---- what an operand row takes ------------------------------------------------------------------------------------

_VSIB = ("mx", "my", "mz")   # the signature heads of memory operands with an xmm/ymm/zmm index (`x86gen.VsibMem`)
# a plain memory operand's signature: one of these (me: with r16-r31, `x86gen.memory.EgprMem`) and its size, if sized
_MEMORY_HEADS = ("m", "moffs", "me", *_VSIB)
# a register signature → its register class ("eax" → "r32", "MM" → "mm")
REG_KIND: dict[str, str] = {}
for _r in REGISTERS.values(): REG_KIND.setdefault(_r.sig, _r.kind)


def takes(o, s: str, movabs: bool = False) -> bool:
    """Does form operand ``o`` (an operand row: kind, loc, role, reg, mem, imm, sext; a row or a decoded JSON array)
    take an operand of signature ``s`` (immediate ranges aside)? Signatures (`Reg.sig`, `Mem.sig`): a register class
    (``r32``, ``xmm``; ``MM`` for mm0-7, ``xmm+`` for xmm16-31) or a register that forms name as a fixed operand
    (``eax``, ``cl``), a memory size (``m32``; ``m`` unsized; ``moffs64`` a 64-bit absolute address, which only the
    moffs forms encode, or with ``movabs`` any moffs form; ``mx32`` an xmm index, which only VSIB forms take), ``i``
    an immediate, ``l`` a label (a branch target)."""
    kind, loc, _, reg, mem, imm, _ = o
    if imm is not None or kind == "1":   # an immediate (kind 1: the shifts' constant 1) or a branch target
        return s == "i" or (s == "l" and kind[:3] == "rel")
    if s[0] == "m":   # memory (no register signature starts with a lower-case m: mm0-7's is "MM")
        if mem is None: return False
        head = s.rstrip("0123456789")
        if head not in _MEMORY_HEADS: return False   # a masked destination ("m32{k}") is no plain operand
        if mem and head != s and int(s[len(head):]) != mem: return False   # (mem 0: `m`, any size; unsized: any form)
        if kind[:2] == "vm": return head == "m" + kind[-1]   # vm32x takes an xmm index, vm64y a ymm index (SDM Vol.2 2.3.12)
        if head in _VSIB: return False
        return (loc == "moffs") == (head == "moffs") or (movabs and loc == "moffs")
    if reg is None: return False
    if loc == "fixed": return s == reg
    return REG_KIND.get(s) == reg
