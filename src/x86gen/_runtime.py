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


def _operand_error(fid, args, i): return operand_error(fid, args, i)


def _range_error(fid, args, i, value):
    from ._runtime_errors import _range_error
    return _range_error(fid, args, i, value)


def _ip16_error(fid, args, i):
    from ._runtime_errors import _ip16_error
    return _ip16_error(fid, args, i)


def _label_error(fid, args):
    from ._runtime_errors import _label_error
    return _label_error(fid, args)


def _moffs_error(fid, args, i):
    from ._runtime_errors import _moffs_error
    return _moffs_error(fid, args, i)


def _high8_error(fid, args):
    from ._runtime_errors import _high8_error
    return _high8_error(fid, args)


def _load_cs_error(fid):
    from ._runtime_errors import _load_cs_error
    return _load_cs_error(fid)


def _implicit_error(fid, args, i):
    from ._runtime_errors import _implicit_error
    return _implicit_error(fid, args, i)


def _taken_error(fid, args):
    from ._runtime_errors import _taken_error
    return _taken_error(fid, args)


def _nop_alias_error(fid, args):
    from ._runtime_errors import _nop_alias_error
    return _nop_alias_error(fid, args)


def _distinct_error(fid, args, why):
    from ._runtime_errors import _distinct_error
    return _distinct_error(fid, args, why)


def _mask_required_error(fid, args):
    from ._runtime_errors import _mask_required_error
    return _mask_required_error(fid, args)


# the helpers by the names encoder code uses
HELPERS = {**_BYTES_PACKERS, "_BYTE": _BYTE, "_le16": _le16, "_le32": _le32, "_le64": _le64, "_operand_error": _operand_error,
           "_range_error": _range_error, "_ip16_error": _ip16_error, "_label_error": _label_error, "_moffs_error": _moffs_error,
           "_high8_error": _high8_error,
           "_distinct_error": _distinct_error, "_mask_required_error": _mask_required_error, "_load_cs_error": _load_cs_error,
           "_implicit_error": _implicit_error,
           "_nop_alias_error": _nop_alias_error, "_taken_error": _taken_error}
