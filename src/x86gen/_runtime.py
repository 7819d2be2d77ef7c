"""What encoder code calls at run time: the generated shapes (``_gen/encoders.py``) and the plans that
`x86gen.encoder` specialises per operand signature. Byte packers, and the errors the encoders raise.

A leaf of the encoder core: an error describes its form from the table row (`x86gen._table`), so
nothing here imports `x86gen.forms`. The errors' text is built by `x86gen._runtime_errors`, loaded when the first
is raised (the functions here, which generated code imports by name, call it).
"""
from __future__ import annotations

import struct

from .errors import OperandError, fmt_int, fmt_value

_BYTE = tuple(bytes((i,)) for i in range(256))   # _BYTE[i] == bytes((i,))
# _bytes3(a, b, c) == bytes((a, b, c)): struct.pack of n bytes, half the cost of bytes((…))
_BYTES_PACKERS = {f"_bytes{n}": struct.Struct(f"{n}B").pack for n in range(1, 16)}
_le16 = struct.Struct("<H").pack   # little-endian unsigned 16/32/64-bit fields (immediates, moffs addresses)
_le32 = struct.Struct("<I").pack
_le64 = struct.Struct("<Q").pack
globals().update(_BYTES_PACKERS)


class LabelOperand(Exception):
    """Raised by a plan (`x86gen._choose.plan_for`) when its memory operand names a label: the `Assembler` then takes
    its general path, which records the RIP-relative fixup; `x86gen.encode` raises `label_error`."""


def label_error(mnemonic: str, ops: tuple):
    """The `x86gen.LabelContextError` for a label operand given to `encode` (or a form): only an Assembler can
    resolve it."""
    from ._encode_errors import label_error
    return label_error(mnemonic, ops)


def describe_operand(x) -> str:
    """An operand value for a message: ``immediate 0x5``, ``eax (r32)``, ``[rdi] (m32)``."""
    if x.__class__ is int: return f"immediate {fmt_int(x)}"
    k = getattr(x, "kind", None)
    if k is None: return f"{type(x).__name__} {fmt_value(x)}"
    return f"{x} ({k})"


def operand_error(fid: str, args: tuple, i: int) -> OperandError:
    """Operand ``i`` of ``args`` is not what form ``fid`` takes there (or ``args`` has the wrong number)."""
    from ._runtime_errors import operand_error
    return operand_error(fid, args, i)


def _deferred(name: str):
    """The error function ``name`` of `x86gen._runtime_errors`, called through a stub that imports that module when an
    error is first raised (generated code imports these by name; a plain encode raises none, so does not compile them)."""
    def error(*args):
        from . import _runtime_errors
        return getattr(_runtime_errors, name)(*args)
    error.__name__ = error.__qualname__ = name
    return error


_operand_error = operand_error
# the other errors generated code raises, by name (`_deferred`: each loads x86gen._runtime_errors when first called)
ERROR_NAMES = ("_range_error _ip16_error _label_error _moffs_error _high8_error _load_cs_error _implicit_error _taken_error"
               " _nop_alias_error _distinct_error _mask_required_error _kp1_error")
globals().update({name: _deferred(name) for name in ERROR_NAMES.split()})
