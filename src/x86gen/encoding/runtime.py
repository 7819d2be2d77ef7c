"""What encoder code calls at run time: the generated encoders (``x86gen/_gen/encoders``) and the plans that selection
compiles per operand signature (`x86gen.selection.plans`). Byte packers, and the errors (`x86gen.diagnostics`) by the
names that code uses."""
from __future__ import annotations

import struct

from ..errors import LabelOperand

_BYTE = tuple(bytes((i,)) for i in range(256))   # _BYTE[i] == bytes((i,))
# _bytes3(a, b, c) == bytes((a, b, c)): struct.pack of n bytes, half the cost of bytes((…))
BYTES_PACKERS = {f"_bytes{n}": struct.Struct(f"{n}B").pack for n in range(1, 16)}
_le16 = struct.Struct("<H").pack   # little-endian unsigned 16/32/64-bit fields (immediates, moffs addresses)
_le32 = struct.Struct("<I").pack
_le64 = struct.Struct("<Q").pack
globals().update(BYTES_PACKERS)



def _hook(name: str):
    """The error function ``name`` of `x86gen.diagnostics`, called through a hook that loads that module when an encoder
    first raises one (a program that encodes without errors never loads it)."""
    def hook(*args):
        from .. import diagnostics
        return getattr(diagnostics, name)(*args)
    hook.__name__ = hook.__qualname__ = name
    return hook


# the errors generated code raises, by the names it uses: the diagnostics' functions
_ERRORS = {"_operand_error": "operand_error", "_range_error": "immediate_range_error", "_ip16_error": "ip16_error",
           "_moffs_error": "moffs_error", "_high8_error": "high8_error",
           "_load_cs_error": "load_cs_error", "_implicit_error": "implicit_error", "_taken_error": "taken_error",
           "_nop_alias_error": "nop_alias_error", "_distinct_error": "distinct_error",
           "_mask_required_error": "mask_required_error", "_kp1_error": "kp1_error",
           "_mpx_address_error": "mpx_address_error"}
globals().update({k: _hook(v) for k, v in _ERRORS.items()})
ERROR_NAMES = tuple(_ERRORS)


def _label_error(fid: str, args: tuple) -> LabelOperand:
    """A memory operand naming a label, met by a form's encoder: `x86gen.errors.LabelOperand` (no message made here:
    the Assembler takes it as its cue for a RIP-relative fixup)."""
    return LabelOperand(fid, args)


ERROR_NAMES = (*ERROR_NAMES, "_label_error")
# every name of this module that encoder code may use (x86gen.encoding.writer.GLOBALS, codegen/shapes.py's imports)
HELPERS = {**BYTES_PACKERS, "_BYTE": _BYTE, "_le16": _le16, "_le32": _le32, "_le64": _le64,
           **{n: globals()[n] for n in ERROR_NAMES}}


