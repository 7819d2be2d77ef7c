"""The parts of `x86gen.forms.Form` that a plain encode does not need, loaded on first use: operands a form's encoder
refuses but the form takes another way (AVX-512 decorations, 32-bit addresses, int-like immediates), `Form.accepts`,
`Form.encode_rel`, `Form.source`, the unknown-mnemonic error and `int_operands` (importable from x86gen.forms).
Every process without a bytecode cache compiles x86gen.forms on its first encode; this module only when one of these
is first used."""
from __future__ import annotations

import operator

from ._gen.encoders import shape
from ._memory_rare import a32_error
from ._table import IMPLICIT_MEM, REG_ADDRESS, a32_memory
from .errors import EncodeError, OperandError, UnknownMnemonicError, fmt_operands, fmt_value
from .forms import Form
from .memory import A32Mem


def retry(form: Form, operands: tuple, kw: dict, err: OperandError) -> bytes:
    """`Form.__call__` after the form's encoder raised ``err`` for ``operands``: masks and broadcast (the EVEX slow
    path), 32-bit addresses (`a32`) and int-like immediates (bool, numpy integers) encode; anything else raises ``err``."""
    from ._evex import decorated, encode_form
    if decorated(operands): return encode_form(form, operands, None, **kw)   # masks, broadcast (the slow path)
    if A32Mem in map(type, operands) and not a32_memory(form): return a32(form, operands, kw)   # (enqcmd r32 takes it itself)
    ints = int_operands(operands)   # immediates given as bool / numpy integers: retry with ints
    if ints is None: raise err
    return form.encode(*ints, **kw)


def a32(form: Form, operands: tuple, kw: dict) -> bytes:
    """The form's bytes for operands with a 32-bit address (`A32Mem`, which its encoder refuses): those of the
    64-bit address with the address-size prefix 0x67 (SDM Vol.2 3.6), placed as `x86gen.prefixes.layout` does."""
    from .prefixes import layout
    if any(o.loc in IMPLICIT_MEM for o in form.operands):   # 0x67 makes all of a string instruction's addresses 32-bit
        raise OperandError(f"{form.id} ({form.syntax}) {fmt_operands(operands)}: x86gen encodes string instructions with"
                           " 64-bit addresses only ([rsi]/[rdi]; with 0x67 every one of its addresses would be 32-bit)")
    if form.mnemonic in REG_ADDRESS:   # enqcmd r64 with [ecx]: 0x67 would make its register's address 32-bit too
        from ._encode_errors import address_size_error
        raise address_size_error(form.id, operands, [form])
    plain = tuple(x.plain if x.__class__ is A32Mem else x for x in operands)
    try: body = form(*plain, **kw)
    except EncodeError as ex: raise a32_error(ex, plain, operands) from None   # (the operands as given: [eax])
    return layout([], form, body, None, True)


def accepts(form: Form, operands: tuple, ip: int, rc: int | None) -> bool:
    """`Form.accepts`."""
    if len(operands) != len(form.operands): return False
    from . import _evex
    if rc is not None or _evex.decorated(operands):   # AVX-512 decorations: allowed by the form, plain operands fit
        if not _evex._matches(form, operands, rc) or _evex.why_not(form, operands, rc) is not None: return False
        operands = _evex.plain_operands(operands)
    from ._choose import _matches
    from ._narrow import address_size_fits
    ints = int_operands(operands)
    if ints is not None: operands = ints
    return (all(_matches(o, x) for o, x in zip(form.operands, operands)) and address_size_fits(form, operands)
            and form.fits(*operands, ip=ip))


def encode_rel(form: Form, rel: int, operands: tuple) -> tuple[bytes, int]:
    """`Form.encode_rel`."""
    i = next((k for k, o in enumerate(form.operands) if o.kind.startswith("rel")), None)
    if i is None: raise OperandError(f"{form.id} ({form.syntax}) is no branch form")
    rel = operator.index(rel)
    ops = list(operands)
    ops.insert(i, rel + form.length)   # the absolute target, with the instruction at 0
    b = form(*ops, ip=0)
    return b, len(b) - form.operands[i].imm // 8


def source(form: Form) -> str:
    """`Form.source`."""
    if form._enc is None: form._build()
    import inspect
    fn = shape(form.row.shape)
    args = ", ".join(repr(a) for a in (form.id, *form.row.shape_args))
    return f"{inspect.getsource(fn)}# {form.id}: enc, fits = {fn.__name__}({args})\n"


def unknown_mnemonic_error(mnemonic: str, known: list[str]) -> UnknownMnemonicError:
    """The error for a mnemonic the table does not have, with up to three close ones of ``known``."""
    import difflib
    close = difflib.get_close_matches(mnemonic, known, 3) if len(mnemonic) <= 32 else []
    return UnknownMnemonicError(f"unknown mnemonic {fmt_value(mnemonic)}" + (f" (did you mean {', '.join(close)}?)" if close else ""))


def int_operands(ops: tuple) -> tuple | None:
    """``ops`` with every int-like immediate (bool, numpy integer: anything with ``__index__`` that is no
    register or memory operand) made an int; None when there is none to convert."""
    if all(x.__class__ is int or hasattr(x, "sig") for x in ops): return None
    out = []
    for x in ops:
        if x.__class__ is not int and not hasattr(x, "sig"):
            try: x = operator.index(x)
            except TypeError: return None
        out.append(x)
    return tuple(out)
