"""What encoder code calls at run time: the generated encoders (``x86gen/_gen/encoders``) and the plans that selection
compiles per operand signature (`x86gen.selection.plans`). Byte packers, and the errors (`x86gen.diagnostics`) by the
names that code uses."""
from __future__ import annotations

import struct

from ..diagnostics import distinct_error as _distinct_error  # noqa: F401  (the names generated code imports)
from ..diagnostics import form_label_error as _label_error  # noqa: F401
from ..diagnostics import high8_error as _high8_error  # noqa: F401
from ..diagnostics import immediate_range_error as _range_error  # noqa: F401
from ..diagnostics import implicit_error as _implicit_error  # noqa: F401
from ..diagnostics import ip16_error as _ip16_error  # noqa: F401
from ..diagnostics import kp1_error as _kp1_error  # noqa: F401
from ..diagnostics import load_cs_error as _load_cs_error  # noqa: F401
from ..diagnostics import mask_required_error as _mask_required_error  # noqa: F401
from ..diagnostics import moffs_error as _moffs_error  # noqa: F401
from ..diagnostics import nop_alias_error as _nop_alias_error  # noqa: F401
from ..diagnostics import operand_error as _operand_error  # noqa: F401
from ..diagnostics import taken_error as _taken_error  # noqa: F401

_BYTE = tuple(bytes((i,)) for i in range(256))   # _BYTE[i] == bytes((i,))
# _bytes3(a, b, c) == bytes((a, b, c)): struct.pack of n bytes, half the cost of bytes((…))
BYTES_PACKERS = {f"_bytes{n}": struct.Struct(f"{n}B").pack for n in range(1, 16)}
_le16 = struct.Struct("<H").pack   # little-endian unsigned 16/32/64-bit fields (immediates, moffs addresses)
_le32 = struct.Struct("<I").pack
_le64 = struct.Struct("<Q").pack
globals().update(BYTES_PACKERS)

# the errors generated code raises, by the names it uses
ERROR_NAMES = ("_operand_error", "_range_error", "_ip16_error", "_label_error", "_moffs_error", "_high8_error", "_load_cs_error",
               "_implicit_error", "_taken_error", "_nop_alias_error", "_distinct_error", "_mask_required_error", "_kp1_error")
# every name of this module that encoder code may use (x86gen.encoding.writer.GLOBALS, codegen/shapes.py's imports)
HELPERS = {**BYTES_PACKERS, "_BYTE": _BYTE, "_le16": _le16, "_le32": _le32, "_le64": _le64,
           **{n: globals()[n] for n in ERROR_NAMES}}


class LabelOperand(Exception):
    """Raised by a plan (`x86gen.selection.plans`) when its memory operand names a label: the `Assembler` then takes its
    general path, which records the RIP-relative fixup; `x86gen.encode` raises a `x86gen.LabelContextError`."""
