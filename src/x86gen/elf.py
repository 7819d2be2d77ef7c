"""ELF64 relocatable objects (``ET_REL``, x86-64, little-endian) written with `struct`: `write_object`.

The writer lays out what it is given and chooses nothing: sections (`ObjSection`) with their bytes (or a size, for
``SHT_NOBITS``) and relocations (`Rela`), and symbols (`ObjSymbol`). It adds the section header string table, the
symbol table (the null symbol, then the locals, then the rest: ``sh_info`` is the index of the first non-local
symbol, System V ABI, "Symbol Table"), its string table, and one ``.rela<name>`` section after each section that
has relocations (``SHF_INFO_LINK``, ``sh_link`` the symbol table, ``sh_info`` the section), in the order GNU as
writes them. References: System V ABI (gABI) chapter 4, "Object Files"; the x86-64 psABI, "Relocation Types".
"""
from __future__ import annotations

import struct

__all__ = ["ObjSection", "ObjSymbol", "Rela", "write_object", "SHF", "SHT", "STB", "STT", "STV", "R_X86_64"]

# section types and flags (gABI 4, "Sections")
SHT = {"null": 0, "progbits": 1, "symtab": 2, "strtab": 3, "rela": 4, "note": 7, "nobits": 8,
       "init_array": 14, "fini_array": 15, "preinit_array": 16}
SHF = {"w": 0x1, "a": 0x2, "x": 0x4, "M": 0x10, "S": 0x20, "I": 0x40, "T": 0x400, "R": 0x200000, "e": 0x80000000}
STB = {"local": 0, "global": 1, "weak": 2}
STT = {"notype": 0, "object": 1, "func": 2, "section": 3, "file": 4, "common": 5, "tls": 6}
STV = {"default": 0, "internal": 1, "hidden": 2, "protected": 3}
SHN_UNDEF, SHN_ABS, SHN_COMMON = 0, 0xFFF1, 0xFFF2
# relocation types (x86-64 psABI, Table "Relocation Types")
R_X86_64 = {"64": 1, "PC32": 2, "PLT32": 4, "32": 10, "32S": 11, "16": 12, "PC16": 13, "8": 14, "PC8": 15,
            "PC64": 24, "GOTPCREL": 9, "GOTPCRELX": 41, "REX_GOTPCRELX": 42}

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SYM = struct.Struct("<IBBHQQ")
_RELA = struct.Struct("<QQq")


class Rela:
    """One relocation: at ``offset`` in its section, of ``rtype`` (a `R_X86_64` value) against symbol ``symbol``
    (an `ObjSymbol`), with ``addend``."""
    __slots__ = ("offset", "rtype", "symbol", "addend")

    def __init__(self, offset: int, rtype: int, symbol: ObjSymbol, addend: int):
        self.offset, self.rtype, self.symbol, self.addend = offset, rtype, symbol, addend


class ObjSection:
    """A section of the object: ``name``, ``sh_type`` and ``flags`` (`SHT`, `SHF` values), ``data`` (its bytes; for
    ``SHT_NOBITS`` only ``size`` counts), ``align`` (``sh_addralign``), ``entsize`` and ``relocs`` (`Rela`)."""
    __slots__ = ("name", "sh_type", "flags", "data", "size", "align", "entsize", "relocs", "index")

    def __init__(self, name: str, sh_type: int, flags: int, data: bytes = b"", size: int | None = None,
                 align: int = 1, entsize: int = 0):
        self.name, self.sh_type, self.flags, self.data = name, sh_type, flags, data
        self.size = len(data) if size is None else size
        self.align, self.entsize = align, entsize
        self.relocs: list[Rela] = []
        self.index = 0   # its section header index (set by `write_object`)


class ObjSymbol:
    """A symbol: ``name`` ('' for a section symbol), ``value``, ``size``, ``bind`` and ``stype`` (`STB`, `STT`
    values), ``vis`` (`STV`), and ``section``: an `ObjSection`, or ``SHN_UNDEF`` / ``SHN_ABS`` / ``SHN_COMMON``."""
    __slots__ = ("name", "value", "size", "bind", "stype", "vis", "section", "index")

    def __init__(self, name: str, section, value: int = 0, size: int = 0, bind: int = 0, stype: int = 0, vis: int = 0):
        self.name, self.section, self.value, self.size = name, section, value, size
        self.bind, self.stype, self.vis = bind, stype, vis
        self.index = 0   # its index in .symtab (set by `write_object`)


class _Strtab:
    """A string table: offset 0 is the empty string; each string once."""
    def __init__(self):
        self.data = bytearray(b"\0")
        self.at: dict[str, int] = {"": 0}

    def add(self, s: str) -> int:
        hit = self.at.get(s)
        if hit is None:
            hit = self.at[s] = len(self.data)
            self.data += s.encode() + b"\0"
        return hit


def write_object(sections: list[ObjSection], symbols: list[ObjSymbol]) -> bytes:
    """The bytes of an ELF64 x86-64 relocatable object with ``sections`` (in this order, each followed by its
    ``.rela`` section when it has relocations) and ``symbols`` (locals are put first, in their order, then the
    others in theirs)."""
    # section header order: null, each section (+ its .rela), .symtab, .strtab, .shstrtab
    order: list[tuple] = []   # (kind, section)
    for s in sections:
        order.append(("sec", s))
        if s.relocs: order.append(("rela", s))
    n = len(order) + 1
    symtab_ix, strtab_ix, shstrtab_ix = n, n + 1, n + 2
    for i, (kind, s) in enumerate(order, 1):
        if kind == "sec": s.index = i
    syms = [x for x in symbols if x.bind == 0] + [x for x in symbols if x.bind != 0]
    nlocal = 1 + sum(1 for x in symbols if x.bind == 0)
    strtab = _Strtab()
    symdata = bytearray(_SYM.size)   # the null symbol
    for i, x in enumerate(syms, 1):
        x.index = i
        sec = x.section
        shndx = sec.index if isinstance(sec, ObjSection) else sec
        symdata += _SYM.pack(strtab.add(x.name) if x.name else 0, (x.bind << 4) | x.stype, x.vis, shndx, x.value, x.size)
    shstr = _Strtab()
    headers: list[bytes] = [bytes(_SHDR.size)]
    off = _EHDR.size
    out = bytearray(_EHDR.size)

    def place(data: bytes, align: int) -> int:
        nonlocal off, out
        pad = -off % max(align, 1)
        out += bytes(pad) + data
        at = off + pad
        off = at + len(data)
        return at

    for kind, s in order:
        if kind == "sec":
            name = shstr.add(s.name)
            if s.sh_type == SHT["nobits"]:
                at = off + (-off % max(s.align, 1))   # (no bytes in the file; the offset where they would be)
            else: at = place(s.data, s.align)
            headers.append(_SHDR.pack(name, s.sh_type, s.flags, 0, at, s.size, 0, 0, s.align, s.entsize))
        else:
            data = b"".join(_RELA.pack(r.offset, (r.symbol.index << 32) | r.rtype, r.addend) for r in s.relocs)
            name = shstr.add(".rela" + s.name)
            at = place(data, 8)
            headers.append(_SHDR.pack(name, SHT["rela"], SHF["I"], 0, at, len(data), symtab_ix, s.index, 8, _RELA.size))
    at = place(bytes(symdata), 8)
    headers.append(_SHDR.pack(shstr.add(".symtab"), SHT["symtab"], 0, 0, at, len(symdata), strtab_ix, nlocal, 8, _SYM.size))
    at = place(bytes(strtab.data), 1)
    headers.append(_SHDR.pack(shstr.add(".strtab"), SHT["strtab"], 0, 0, at, len(strtab.data), 0, 0, 1, 0))
    name = shstr.add(".shstrtab")
    at = place(bytes(shstr.data), 1)
    headers.append(_SHDR.pack(name, SHT["strtab"], 0, 0, at, len(shstr.data), 0, 0, 1, 0))
    shoff = place(b"".join(headers), 8)
    ident = b"\x7fELF" + bytes((2, 1, 1, 0)) + bytes(8)   # ELFCLASS64, ELFDATA2LSB, EV_CURRENT, ELFOSABI_NONE
    _EHDR.pack_into(out, 0, ident, 1, 62, 1, 0, 0, shoff, 0, _EHDR.size, 0, 0, _SHDR.size, len(headers), shstrtab_ix)
    return bytes(out)
