"""Instruction forms: the rows of the form table (`x86gen.table`) as objects that encode.

``x86gen.forms.ADD_RM32_R32(eax, ecx)`` encodes exactly that form (ids are iced-x86's ``Code`` names);
``get_form(id)`` returns its `Form` with operands, roles, encoding, flags and CPUID feature. Nothing is built until it
is first used: a form's encoder is its shape's generated function (``x86gen/_gen/encoders``) bound to the form's
constants (`encoder_of`), which selection uses without making `Form` objects.
"""
from __future__ import annotations

import operator
from collections.abc import Callable

from . import table as _table
from ._gen.encoders import shape
from ._gen.schema import FORM_FIELDS
from .errors import EncodeError, OperandError, UnknownMnemonicError, fmt_value, wrong_type
from .memory import A32Mem, SegMem
from .registers import Masked
from .table import Operand, address_size_fits, imm_ranges, is_branch, syntax, takes

__all__ = ["Form", "Operand", "all_forms", "encoder_of", "forms_of", "get_form", "mnemonics"]

FLAG_FIELDS = ("read", "written", "undefined", "cleared", "set")

_ENCODERS: dict[str, tuple] = {}   # form id → (enc, fits), bound on first use


def encoder_of(row) -> tuple[Callable[..., bytes], Callable[..., bool] | None]:
    """``(enc, fits)`` of a form (its row, or the `Form`): its shape's generated function bound to its constants.
    ``enc(*operands)`` checks the operands and returns the bytes (a branch form takes ``ip=``); ``fits(*operands)``
    (None for a form without immediates) says whether its immediates fit. No code is compiled."""
    hit = _ENCODERS.get(row.id)
    if hit is None:
        hit = _ENCODERS.setdefault(row.id, shape(row.shape)(row.id, *row.shape_args))
    return hit


class Form:
    """One instruction form of the spec. Calling it encodes its operands to bytes.

    Its attributes are the fields of its row (`x86gen.table.FormRow`: ``opcode``, ``opcode_map``,
    ``mandatory_prefix``, ``opsize16``, ``w``, ``vex_l``, ``modrm``, ``imm_widths``, ``length``, …), with
    ``operands`` as `Operand` objects and ``flags`` as a dict, plus ``is_branch``. ``length`` is the length in bytes
    with no memory operand, a 2-byte VEX where legal and no optional REX: `x86gen.encode` tries the shortest first."""

    __slots__ = (*FORM_FIELDS, "row", "is_branch", "_enc", "_fits", "__weakref__")

    def __init__(self, row):
        for name, v in zip(FORM_FIELDS, row): setattr(self, name, v)
        self.row = row   # the table's row (its `shape` and `shape_args` name its encoder)
        self.flags = dict(zip(FLAG_FIELDS, row.flags))
        self.is_branch = is_branch(row)   # its encoder takes ip=
        self._enc = self._fits = None

    @property
    def evex_mask_required(self) -> bool:
        """Does the form need a mask k1-k7 (an AVX-512 gather or scatter: EVEX.aaa = 000 is #UD, SDM Vol.2 VPGATHERDD,
        VPSCATTERDD)? Then only a masked first operand encodes (``zmm1.k(k1)``, ``mem.k(k1)``) and the mask is read
        and written (the instruction clears each element's bit as it completes it); the AVX512PF prefetches (role N)
        only read it."""
        return self.encoding_kind == "evex" and any(o.kind[:2] == "vm" for o in self.operands)

    def _build(self):
        enc, fits = encoder_of(self.row)
        self._fits = fits
        self._enc = enc   # (stored last: a thread that sees it sees `_fits` too)
        return enc

    @property
    def encoder(self) -> Callable[..., bytes]:
        """The form's generated encoder, for a backend's hot loop: ``form.encoder(*operands)`` takes plain operands only
        (registers, a `x86gen.Mem` of the form's kind, ints; ``ip=`` for a branch) and is the fastest way to bytes;
        anything else (a segment override, a 32-bit address, AVX-512 decorations) raises `x86gen.OperandError` there.
        Calling the form, or `encode`, takes everything."""
        return self._enc or self._build()

    def encode(self, *operands, **kw) -> bytes:
        """The same as calling the form: ``form.encode(*operands, ip=0, rc=None)``."""
        return self(*operands, **kw)

    def __call__(self, *operands, **kw) -> bytes:
        """Encode ``operands`` in exactly this form: registers, memory operands (with a segment override or a 32-bit
        address too) and immediates; an EVEX form also takes a masked destination, a broadcast source and ``rc=`` where
        it allows them (`x86gen.evex`; `x86gen.EvexOperandError` where not); a branch form takes ``ip=``."""
        enc = self._enc or self._build()
        if kw:
            rc = kw.pop("rc", None)
            if rc is not None:
                from .encoding.decorated import encode_form
                return encode_form(self, operands, rc, kw.get("ip", 0))
        try: return enc(*operands, **kw)
        except TypeError:
            if len(operands) != len(self.operands):
                from .diagnostics import operand_error
                raise operand_error(self.id, operands, 0) from None
            ip = kw.get("ip", 0)
            if ip.__class__ is not int and not hasattr(ip, "__index__"):
                raise wrong_type(f"Form {self.id}", "ip", ip, "an int (the instruction's address)") from None
            raise
        except OperandError:   # masks, broadcast, segment overrides, 32-bit addresses, int-like immediates
            from .encoding.decorated import encode_form, int_operands, is_wrapped
            if not is_wrapped(operands) and int_operands(operands) is None: raise
        return encode_form(self, operands, None, kw.get("ip", 0))

    def accepts(self, *operands, ip: int = 0, rc: int | None = None) -> bool:
        """True when this form takes ``operands``: as many as it has, each of a kind it takes (register class or fixed
        register, memory of its size or unsized, with a segment override or a 32-bit address, an int-like immediate),
        AVX-512 decorations it allows, and immediates or branch targets (absolute, with the instruction at ``ip``) that
        fit. This is the test `x86gen.encode` and `x86gen.select_form` choose forms by; calling the form with such
        operands encodes them (or raises the error a rule of the instruction gives, the same error `x86gen.encode`
        gives: ah with a REX prefix, a gather's registers that must differ)."""
        if len(operands) != len(self.operands): return False
        from .encoding.decorated import int_operands, is_decorated, plain_operands, why_not
        for x in operands:   # a register that only some encodings carry (xmm16-31: EVEX)
            r = x.op if x.__class__ is Masked else x
            if getattr(r, "encodings", None) is not None and self.encoding_kind not in r.encodings: return False
        if rc is not None or is_decorated(operands):
            if why_not(self, operands, rc) is not None: return False
            operands = plain_operands(operands)
        ints = int_operands(operands)
        if ints is not None: operands = ints
        plain = tuple(x.plain if x.__class__ is SegMem else x for x in operands)
        for o, x in zip(self.operands, plain):
            s = getattr(x, "sig", None) if x.__class__ is not int else "i"
            if x.__class__ is A32Mem: s = x.plain.sig   # (its address size: `address_size_fits`)
            if s.__class__ is not str or not takes(o, s): return False
        if not address_size_fits(self, plain): return False
        unwrapped = tuple(x.plain if x.__class__ is A32Mem and not _table.a32_memory(self) else x for x in plain)
        return self.fits(*unwrapped, ip=ip)

    def encode_rel(self, rel: int = 0, *operands) -> tuple[bytes, int]:
        """A branch form's bytes with displacement ``rel`` (counted from the end of the instruction, as the
        CPU does; 0 is a placeholder) and the offset of the displacement field in them, for a backend that
        lays out code itself and patches the field later: ``b[off:off + 4] = (target - end).to_bytes(4, "little",
        signed=True)``. Raises `x86gen.ImmediateRangeError` if ``rel`` does not fit the field."""
        i = next((k for k, o in enumerate(self.operands) if o.kind.startswith("rel")), None)
        if i is None: raise OperandError(f"{self.id} ({self.syntax}) is no branch form")
        ops = list(operands)
        try: rel = operator.index(rel)
        except TypeError: raise wrong_type(f"Form {self.id}.encode_rel", "rel", rel, "an int") from None
        ops.insert(i, rel + self.length)   # the absolute target, with the instruction at 0
        b = self(*ops, ip=0)
        return b, len(b) - self.operands[i].imm // 8

    def fits(self, *operands, ip: int = 0) -> bool:
        """True when the immediates/branch targets of ``operands`` fit this form's fields."""
        if self._enc is None: self._build()
        if self._fits is None: return True
        return self._fits(*operands, ip=ip) if self.is_branch else self._fits(*operands)

    @property
    def source(self) -> str:
        """The Python source of this form's encoder: its shape's generated function, and the constants bound."""
        import inspect
        fn = shape(self.row.shape)
        args = ", ".join(repr(a) for a in (self.id, *self.row.shape_args))
        return f"{inspect.getsource(fn)}# {self.id}: enc, fits = {fn.__name__}({args})\n"

    @property
    def syntax(self) -> str:
        """Intel-style signature, e.g. ``add r/m32, r32``, ``addr32 monitor`` (`x86gen.table.syntax`)."""
        return syntax(self.row)

    def imm_ranges(self, i: int):
        """The values operand ``i`` (an immediate or branch target) accepts: one or two closed intervals (`x86gen.table.imm_ranges`)."""
        o = self.operands[i]
        return imm_ranges(o.imm, self.operand_size, o.sext, o.kind.startswith("rel"))

    @property
    def flags_read(self) -> tuple[str, ...]: return self.flags["read"]
    @property
    def flags_modified(self) -> tuple[str, ...]:
        """Flags written, cleared, set or left undefined."""
        return tuple(sorted({f for k in FLAG_FIELDS[1:] for f in self.flags[k]}))

    def __repr__(self) -> str: return f"<Form {self.id}: {self.syntax} | {self.encoding}>"

    def __reduce__(self):
        """Pickled as its id (the encoder it binds is a closure, which pickle cannot take): unpickled, it is the one
        `Form` of that id, so an `x86gen.Assembler` holding branches (their forms) pickles too."""
        return (get_form, (self.id,))


_BY_ID: dict[str, Form] = {}
_BY_MNEMONIC: dict[str, list[Form]] = {}


def form_of(row) -> Form:
    """The `Form` of a table row (one per id)."""
    f = _BY_ID.get(row.id)
    if f is None: f = _BY_ID.setdefault(row.id, Form(row))   # (setdefault: one Form per id, also across threads)
    return f


def forms_of(mnemonic: str) -> list[Form]:
    """The forms of a mnemonic (lower case), in file order; raises `UnknownMnemonicError` if none.

    A mnemonic's rows are decoded from the generated table the first time it is asked for."""
    if mnemonic.__class__ is not str: raise UnknownMnemonicError(f"a mnemonic is a string, not {fmt_value(mnemonic)}")
    hit = _BY_MNEMONIC.get(mnemonic)
    if hit is not None: return hit
    rows = _table.rows_of(mnemonic)
    if rows is None:
        from .diagnostics import unknown_mnemonic_error
        raise unknown_mnemonic_error(mnemonic, _table.mnemonics())
    forms = [form_of(r) for r in rows]
    _BY_MNEMONIC[mnemonic] = forms
    return forms


def get_form(form_id: str) -> Form:
    """The form with this id (iced-x86 ``Code`` name, e.g. ``"VEX_VADDPS_YMM_YMM_YMMM256"``)."""
    try: hit = _BY_ID.get(form_id)
    except TypeError: hit = None   # unhashable
    if hit is not None: return hit
    row = _table.row_of(form_id) if form_id.__class__ is str else None
    if row is None: raise UnknownMnemonicError(f"no form with id {fmt_value(form_id)}")
    return form_of(row)


def all_forms() -> list[Form]:
    """Every form of the spec, in file order."""
    return sorted((f for mn in _table.mnemonics() for f in forms_of(mn)), key=lambda f: f.line)


def mnemonics() -> list[str]:
    """Every mnemonic of the table, sorted."""
    return sorted(_table.mnemonics())


def __getattr__(name: str):
    """``x86gen.forms.ADD_RM32_R32``: a form by its id."""
    if name.isupper():
        try: return get_form(name)
        except EncodeError: pass
    raise AttributeError(name)
