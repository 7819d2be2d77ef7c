"""Operand-role groups: which forms (and which of tinygrad's `X86Ops`) are two-address, read or write memory
in which source, read or write rflags, encode a source in ModRM.rm, commute.

Each group is a `Group` (a frozenset of form ids with a docstring) computed from the operand roles of
isa/x86_64.yaml by ``python tools/gen.py`` — nothing here is listed by hand::

    >>> from x86gen import groups
    >>> "ADD_R32_RM32" in groups.TwoAddress and "ADD_R32_RM32" in groups.ReadMem2nd
    True
    >>> sorted(groups.X86GroupOp.ReadMem3rd)
    ['VFMADD213PD', 'VFMADD213PS', 'VFMADD213SD', 'VFMADD213SS']

**Sources** are counted as tinygrad's x86 backend counts the sources of an instruction (its uop's
``src``): the destination when the instruction also reads it (a TwoAddress form), then the explicit
operands that are read or give an address (roles R, RW, CW, N) in Intel order, then the implicit
registers that are read. ``SOURCES[form_id]`` lists them ("0", "1", … are operand indices, "eax" an
implicit register). The Rm groups count the sources the encoder sees: without the tied destination.

Groups (form level; ``X86GroupOp.<name>`` holds the same at reference-op level):

- ``TwoAddress``: the destination is also the first source (explicit RW/CW first operand, or an
  implicit RW register when there is no explicit destination: div/idiv's rax).
- ``ReadMem1st`` / ``ReadMem2nd`` / ``ReadMem3rd``: source 1/2/3 may be a memory operand that is only
  read (a load can be folded there). lea's address is no memory read.
- ``WriteMem``: an operand that may be memory is written (stores, read-modify-write of memory).
- ``ReadFlags`` / ``WriteFlags``: reads rflags / writes, clears, sets or undefines a flag.
- ``Rm1st`` / ``Rm2nd``: without the tied destination, source 1/2 is encoded in ModRM.rm.
- ``Commutative``: symmetric in its first two sources, both register/memory operands (semantics from
  the ``commutative`` list of isa/tinygrad.yaml).

Two op-level versions, for two purposes:

- ``X86GroupOp``: x86gen's **semantic** groups at the level of tinygrad's op names (0.14.0's and the earlier
  change's, `x86gen.reference.ALL_X86OPS`): an op is in a group when one of its forms is, so these are true of the
  hardware. It is *not* a mirror of tinygrad's class of that name.
- ``TinygradGroupOp``: tinygrad 0.14.0's ``X86GroupOp`` sets **exactly** (isa/tinygrad.yaml ``tinygrad_groups``,
  checked against the installed tinygrad by tests/test_tinygrad.py): what a drop-in replacement needs.

They differ in 15 places, each with its reason in ``GROUP_DIFFERENCES`` (``"Group OP": why``): LEA is in
tinygrad's ReadMem1st (lea reads no memory); tinygrad's Rm2nd (= ReadMem2nd) also holds two-address ops whose r/m
source comes first once the tied destination is dropped (never used: its encoder tests Rm1st first); x86gen's
Rm2nd holds VMOVSS/VMOVSD (the register copy form's copied register is the second source, after the vvvv merge
register tinygrad leaves at xmm0). Per form there are also ``DEST``, ``IMPLICIT`` (implicit registers with
roles), ``FIXED`` (explicit operands that must be one register, e.g. shl's cl) and ``CPUID`` (the
iced-x86 CpuidFeature name); per reference op ``OP_CPUID`` and ``OP_IMPLICIT``.

This module is imported on first use (``x86gen.groups``), not by ``import x86gen``. The generated table
(_gen/groups.py) holds one line per form: a bitmask of its groups and indices into tables of the distinct
sources, destinations, CPUID features and registers; the per-form dicts are built from it on first access.
"""
from __future__ import annotations

from ._gen import groups as _g
from ._gen.reference import ALL_X86OPS, GROUP_DIFFERENCES, TINYGRAD_GROUPS, TINYGRAD_X86OPS

__all__ = ["Group", "NAMES", "TwoAddress", "ReadMem1st", "ReadMem2nd", "ReadMem3rd", "WriteMem", "ReadFlags", "WriteFlags",
           "Rm1st", "Rm2nd", "Commutative", "All", "X86GroupOp", "TinygradGroupOp", "GROUP_DIFFERENCES",
           "SOURCES", "DEST", "IMPLICIT", "FIXED", "CPUID",
           "OP_CPUID", "OP_IMPLICIT", "groups_of", "op_groups_of", "sources", "destination", "implicit", "fixed", "cpuid"]


class Group(frozenset):
    """A frozenset of form ids (or of reference op names) with a ``name`` and a docstring that says exactly
    which members it has."""

    def __new__(cls, name: str, members, doc: str):
        self = super().__new__(cls, members)
        self.name = name
        self.__doc__ = doc
        return self

    def __repr__(self) -> str: return f"<Group {self.name}: {len(self)} members>"

    def __reduce__(self): return (Group, (self.name, frozenset(self), self.__doc__))


NAMES: tuple[str, ...] = _g.NAMES


# The generated per-form rows (_gen/groups.py ROWS: one line per form, its group bitmask, then indices into the
# tables of distinct values), as flat tokens: column k of form n is _TOK[n * _WIDTH + k].
if _g.COLUMNS != ("id", "mask", "SOURCE_VALUES", "DEST_VALUES", "CPUID_VALUES", "IMPLICIT_VALUES", "FIXED_VALUES"):
    raise ImportError(f"x86gen._gen.groups has columns {_g.COLUMNS}: regenerate it (python tools/gen.py)")
_WIDTH = len(_g.COLUMNS)
_TOK = _g.ROWS.split()
_IDS = _TOK[0::_WIDTH]
_MASKS = dict(zip(_IDS, _TOK[1::_WIDTH]))   # form id -> its group bitmask (decimal text; bit i: NAMES[i])


def _members() -> dict[str, list[str]]:
    """Group name -> its form ids, in spec order within each distinct bitmask."""
    by_mask: dict[str, list[str]] = {}
    for fid, m in _MASKS.items(): by_mask.setdefault(m, []).append(fid)
    masks = [(int(m), fids) for m, fids in by_mask.items()]
    return {name: [fid for m, fids in masks if m >> i & 1 for fid in fids] for i, name in enumerate(NAMES)}


_MEMBERS = _members()

# The per-form dicts, built on first use (module __getattr__): name -> (column, table of values, every form has one).
_COLUMNS = {"SOURCES": (2, "SOURCE_VALUES", True), "DEST": (3, "DEST_VALUES", True), "CPUID": (4, "CPUID_VALUES", True),
            "IMPLICIT": (5, "IMPLICIT_VALUES", False), "FIXED": (6, "FIXED_VALUES", False)}


def _column(name: str) -> dict:
    d = globals().get(name)
    if d is None:
        k, table, dense = _COLUMNS[name]
        values = getattr(_g, table)
        lut = dict(zip(map(str, range(len(values))), values))
        col = _TOK[k::_WIDTH]
        d = dict(zip(_IDS, map(lut.__getitem__, col))) if dense else {fid: lut[t] for fid, t in zip(_IDS, col) if t != "0"}
        globals()[name] = d
    return d


def __getattr__(name: str):
    if name in _COLUMNS: return _column(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _group(name: str) -> Group: return Group(name, _MEMBERS[name], f"{name} (forms): {_g.DOCS[name]}")


def _op_group(name: str) -> Group:
    return Group(name, _g.OPS[name], f"{name} (tinygrad X86Ops; a member when one of its forms is): {_g.DOCS[name]}")


TwoAddress = _group("TwoAddress")
ReadMem1st = _group("ReadMem1st")
ReadMem2nd = _group("ReadMem2nd")
ReadMem3rd = _group("ReadMem3rd")
WriteMem = _group("WriteMem")
ReadFlags = _group("ReadFlags")
WriteFlags = _group("WriteFlags")
Rm1st = _group("Rm1st")
Rm2nd = _group("Rm2nd")
Commutative = _group("Commutative")
All = Group("All", _IDS, "All (forms): every form of isa/x86_64.yaml.")



class X86GroupOp:
    """x86gen's semantic groups at the level of tinygrad's `X86Ops` names, computed from the forms each name stands
    for (`x86gen.reference.ALL_X86OPS`); not tinygrad's sets (those are `TinygradGroupOp`; see ``GROUP_DIFFERENCES``)."""

    TwoAddress = _op_group("TwoAddress")
    ReadMem1st = _op_group("ReadMem1st")
    ReadMem2nd = _op_group("ReadMem2nd")
    ReadMem3rd = _op_group("ReadMem3rd")
    WriteMem = _op_group("WriteMem")
    ReadFlags = _op_group("ReadFlags")
    WriteFlags = _op_group("WriteFlags")
    Rm1st = _op_group("Rm1st")
    Rm2nd = _op_group("Rm2nd")
    Commutative = _op_group("Commutative")
    All = Group("All", ALL_X86OPS, "All (tinygrad X86Ops): every name that is an instruction, 0.14.0's and the earlier change's.")


def _tinygrad(name: str) -> Group:
    return Group(name, TINYGRAD_GROUPS[name], f"{name}: tinygrad 0.14.0's X86GroupOp.{name}, exactly (isa/tinygrad.yaml).")


class TinygradGroupOp:
    """tinygrad 0.14.0's ``X86GroupOp`` sets exactly, as op names (a drop-in for tinygrad/renderer/isa/x86.py's class)."""

    TwoAddress = _tinygrad("TwoAddress")
    ReadMem1st = _tinygrad("ReadMem1st")
    ReadMem2nd = _tinygrad("ReadMem2nd")
    WriteMem = _tinygrad("WriteMem")
    ReadFlags = _tinygrad("ReadFlags")
    WriteFlags = _tinygrad("WriteFlags")
    Rm1st = _tinygrad("Rm1st")
    Rm2nd = _tinygrad("Rm2nd")
    All = Group("All", TINYGRAD_X86OPS, "All: every tinygrad 0.14.0 X86Ops name that is an instruction.")


GROUP_DIFFERENCES: dict[str, str]   # "Group OP" -> why X86GroupOp and TinygradGroupOp disagree there


# built on first use (see _column)
SOURCES: dict[str, tuple[str, ...]]                 # form id -> its sources (see the module docstring)
DEST: dict[str, str | None]                         # form id -> its destination (see `destination`)
IMPLICIT: dict[str, tuple[tuple[str, str], ...]]    # form id -> implicit registers, forms that have any
FIXED: dict[str, tuple[tuple[int, str, str], ...]]  # form id -> fixed-register explicit operands, forms that have any
CPUID: dict[str, str]                               # form id -> CPUID feature
OP_CPUID: dict[str, tuple[str, ...]] = _g.OP_CPUID
OP_IMPLICIT: dict[str, tuple[tuple[str, str], ...]] = _g.OP_IMPLICIT


def _check(form_id: str) -> str:
    if form_id not in _MASKS:
        from .errors import UnknownMnemonicError
        raise UnknownMnemonicError(f"no form with id {form_id!r}")
    return form_id


def groups_of(form_id: str) -> tuple[str, ...]:
    """The names of the groups a form is in, in `NAMES` order."""
    mask = int(_MASKS[_check(form_id)])
    return tuple(n for i, n in enumerate(NAMES) if mask >> i & 1)


def op_groups_of(op: str) -> tuple[str, ...]:
    """The names of the groups a tinygrad X86Ops name is in; KeyError for a name that is no instruction."""
    if op not in ALL_X86OPS: raise KeyError(f"{op!r} is no instruction of tinygrad's X86Ops")
    return tuple(n for n in NAMES if op in getattr(X86GroupOp, n))


def sources(form_id: str) -> tuple[str, ...]:
    """The form's sources in tinygrad's order: operand indices ("0", …) and implicit registers ("eax")."""
    return _column("SOURCES")[_check(form_id)]


def destination(form_id: str) -> str | None:
    """The destination: the first written operand's index, else the first written implicit register
    other than rsp, else None."""
    return _column("DEST")[_check(form_id)]


def implicit(form_id: str) -> tuple[tuple[str, str], ...]:
    """Implicit registers with their roles (r, w, rw), e.g. ``(("rw", "eax"), ("rw", "edx"))`` for div r/m32."""
    return _column("IMPLICIT").get(_check(form_id), ())


def fixed(form_id: str) -> tuple[tuple[int, str, str], ...]:
    """Explicit operands that must be one register: ``(operand index, role, register)``, e.g. shl's cl."""
    return _column("FIXED").get(_check(form_id), ())


def cpuid(form_id: str) -> str:
    """The CPUID feature the form needs, as iced-x86 names it (INTEL386, X64, CMOV, AVX2, FMA, …)."""
    return _column("CPUID")[_check(form_id)]
