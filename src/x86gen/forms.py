"""Instruction forms: the generated table (``_gen/forms.py``) as objects, and form-level encoding.

``x86gen.forms.ADD_RM32_R32(eax, ecx)`` encodes exactly that form (ids are iced-x86's ``Code``
names); ``get_form(id)`` returns its `Form` with operands, roles, encoding, flags and CPUID feature.
Nothing is built until it is first used.
"""
from __future__ import annotations

from collections.abc import Callable

from . import _table
from ._gen.encoders import shape
from ._gen.schema import FORM_FIELDS
from ._runtime import describe_operand, operand_error
from ._table import Operand
from .errors import EncodeError, OperandError, UnknownMnemonicError, fmt_value

__all__ = ["Form", "Operand", "all_forms", "describe_operand", "forms_of", "get_form", "mnemonics", "operand_error"]

FLAG_FIELDS = ("read", "written", "undefined", "cleared", "set")


class Form:
    """One instruction form of the spec. Calling it encodes its operands to bytes.

    Its attributes are the fields of its row (`x86gen._table.FormRow`: ``opcode``, ``opcode_map``,
    ``mandatory_prefix``, ``opsize16``, ``w``, ``vex_l``, ``modrm``, ``imm_widths``, ``length``, …), with
    ``operands`` as `Operand` objects and ``flags`` as a dict, plus ``is_branch``. ``length`` is the length in bytes
    with no memory operand, a 2-byte VEX where legal and no optional REX: `x86gen.encode` tries the shortest first."""

    __slots__ = (*FORM_FIELDS, "row", "is_branch", "_enc", "_fits", "_src", "__weakref__")

    def __init__(self, row):
        for name, v in zip(FORM_FIELDS, row): setattr(self, name, v)   # (operands: `Operand`s, as `x86gen._table` decodes them)
        self.row = row   # the generated table's row (its `shape` and `shape_args` name its encoder)
        self.flags = dict(zip(FLAG_FIELDS, row.flags))
        self.is_branch = any(o.kind.startswith("rel") for o in self.operands)   # its encoder takes ip=
        self._enc = self._fits = self._src = None

    @property
    def evex_mask_required(self) -> bool:
        """Does the form need a mask k1-k7 (an AVX-512 gather or scatter: EVEX.aaa = 000 is #UD, SDM Vol.2 VPGATHERDD,
        VPSCATTERDD)? Then only a masked first operand encodes (``zmm1.k(k1)``, ``mem.k(k1)``) and the mask is read
        and written (the instruction clears each element's bit as it completes it); the AVX512PF prefetches (role N)
        only read it."""
        return self.encoding_kind == "evex" and any(o.kind[:2] == "vm" for o in self.operands)

    def _build(self) -> None:
        """Bind the form's encoder: its shape's generated function (``_gen/encoders``) with its constants; no code
        is compiled, except its shapes' module the first time one of them is used (without a bytecode cache)."""
        # `_enc` is what the others test (``if self._enc is None``), so it is stored last: a thread that sees it
        # sees `_fits` and `_src` too
        enc, fits = shape(self.row.shape)(self.row.id, *self.row.shape_args)
        self._fits, self._src = fits, None
        self._enc = enc

    @property
    def encode(self) -> Callable[..., bytes]:
        """The specialised encoder function (built on first use)."""
        if self._enc is None: self._build()
        return self._enc

    def __call__(self, *operands, **kw) -> bytes:
        """Encode ``operands`` in exactly this form. An EVEX form also takes a masked destination, a broadcast
        source and ``rc=`` where it allows them (`x86gen.evex`; `x86gen.EvexOperandError` where not)."""
        if self._enc is None: self._build()
        if kw and "rc" in kw:
            from ._evex import encode_form
            rc = kw.pop("rc")
            if rc is not None: return encode_form(self, operands, rc, **kw)
        try: return self._enc(*operands, **kw)
        except TypeError:
            if len(operands) != len(self.operands): raise operand_error(self.id, operands, 0) from None
            raise
        except OperandError as ex:   # masks, broadcast, 32-bit addresses, int-like immediates (x86gen._form_rare)
            from ._form_rare import retry
            return retry(self, operands, kw, ex)

    def accepts(self, *operands, ip: int = 0, rc: int | None = None) -> bool:
        """True when this form encodes ``operands``: as many as it has, each of a kind it takes (register
        class or fixed register, memory of its size or unsized, an int-like immediate) and immediates or
        branch targets (absolute, with the instruction at ``ip``) that fit. This is the test `x86gen.encode`
        and `x86gen.select_form` choose forms by."""
        from ._form_rare import accepts
        return accepts(self, operands, ip, rc)

    def encode_rel(self, rel: int = 0, *operands) -> tuple[bytes, int]:
        """A branch form's bytes with displacement ``rel`` (counted from the end of the instruction, as the
        CPU does; 0 is a placeholder) and the offset of the displacement field in them, for a backend that
        lays out code itself and patches the field later: ``b[off:off + 4] = (target - end).to_bytes(4, "little",
        signed=True)``. Raises `x86gen.ImmediateRangeError` if ``rel`` does not fit the field."""
        from ._form_rare import encode_rel
        return encode_rel(self, rel, operands)

    def fits(self, *operands, ip: int = 0) -> bool:
        """True when the immediates/branch targets of ``operands`` fit this form's fields."""
        if self._enc is None: self._build()
        if self._fits is None: return True
        return self._fits(*operands, ip=ip) if self.is_branch else self._fits(*operands)

    @property
    def source(self) -> str:
        """The Python source of this form's encoder: its shape's generated function, and the constants bound."""
        from ._form_rare import source
        return source(self)

    @property
    def syntax(self) -> str:
        """Intel-style signature, e.g. ``add r/m32, r32``, ``addr32 monitor`` (`x86gen._table.syntax`)."""
        from ._table_rare import syntax
        return syntax(self.row)

    def imm_ranges(self, i: int):
        """The values operand ``i`` (an immediate or branch target) accepts: one or two closed intervals (`x86gen._table.imm_ranges`)."""
        from ._table_rare import imm_ranges
        o = self.operands[i]
        return imm_ranges(o.imm, self.operand_size, o.sext, o.kind.startswith("rel"))

    @property
    def flags_read(self) -> tuple[str, ...]: return self.flags["read"]
    @property
    def flags_modified(self) -> tuple[str, ...]:
        """Flags written, cleared, set or left undefined."""
        return tuple(sorted({f for k in FLAG_FIELDS[1:] for f in self.flags[k]}))

    def __repr__(self) -> str: return f"<Form {self.id}: {self.syntax} | {self.encoding}>"


_BY_ID: dict[str, Form] = {}
_BY_MNEMONIC: dict[str, list[Form]] = {}
def forms_of(mnemonic: str) -> list[Form]:
    """The forms of a mnemonic (lower case), in file order; raises `UnknownMnemonicError` if none.

    A mnemonic's rows are decoded from the generated table the first time it is asked for."""
    if mnemonic.__class__ is not str: raise UnknownMnemonicError(f"a mnemonic is a string, not {fmt_value(mnemonic)}")
    hit = _BY_MNEMONIC.get(mnemonic)
    if hit is not None: return hit
    rows = _table.rows_of(mnemonic)
    if rows is None:
        from ._form_rare import unknown_mnemonic_error
        raise unknown_mnemonic_error(mnemonic, _table.mnemonics())
    forms = []
    for r in rows:
        f = _BY_ID.get(r.id)
        if f is None: f = _BY_ID.setdefault(r.id, Form(r))   # (setdefault: one Form per id, also across threads)
        forms.append(f)
    _BY_MNEMONIC[mnemonic] = forms
    return forms


def get_form(form_id: str) -> Form:
    """The form with this id (iced-x86 ``Code`` name, e.g. ``"VEX_VADDPS_YMM_YMM_YMMM256"``)."""
    try: hit = _BY_ID.get(form_id)
    except TypeError: hit = None   # unhashable
    if hit is not None: return hit
    row = _table.row_of(form_id) if form_id.__class__ is str else None
    if row is None: raise UnknownMnemonicError(f"no form with id {fmt_value(form_id)}")
    hit = _BY_ID.get(form_id)   # (another thread may have made it)
    if hit is None: hit = _BY_ID.setdefault(form_id, Form(row))   # only this form: its mnemonic's others when asked for
    return hit


def all_forms() -> list[Form]:
    """Every form of the spec, in file order."""
    return sorted((f for mn in _table.mnemonics() for f in forms_of(mn)), key=lambda f: f.line)


def mnemonics() -> list[str]:
    """Every mnemonic of the table, sorted."""
    return sorted(_table.mnemonics())


def __getattr__(name: str):
    if name == "int_operands":   # (x86gen._form_rare)
        from ._form_rare import int_operands
        return int_operands
    if name.isupper():
        try: return get_form(name)
        except EncodeError: pass
    raise AttributeError(name)
