"""x86gen: an x86-64 instruction encoder generated from isa/x86_64.yaml and checked against iced-x86.

    >>> import x86gen
    >>> from x86gen import eax, ecx, rdi, rsi, mem
    >>> x86gen.encode("add", eax, ecx).hex()
    '01c8'
    >>> x86gen.encode("mov", eax, mem(rdi, rsi, 4, 10, size=32)).hex()
    '8b44b70a'
    >>> x86gen.assemble("vfmadd213ps ymm0, ymm0, ymmword ptr [rdi+rbx*4+0x10]").hex()
    'c4e27da8449f10'

Registers are module constants, memory operands come from `mem` (or `dword(...)` etc.), ints are
immediates. `encode` picks the shortest form that fits; `x86gen.forms.<ID>(...)` encodes one exact
form; `assemble` takes Intel-syntax text. Only the registers and memory operands are imported
eagerly (the AVX-512 decorations of `x86gen.evex` on first use); a mnemonic's forms are decoded from the generated table on its first use.
"""
from __future__ import annotations

from .errors import (
    AsmSyntaxError,
    DistinctRegistersError,
    EncodeError,
    EvexOnlyRegisterError,
    EvexOperandError,
    ImmediateRangeError,
    LabelContextError,
    LabelError,
    NoListingError,
    OperandError,
    PrefixError,
    SizeLimitError,
    UnknownMnemonicError,
    UnsupportedRegisterError,
)
from .memory import A32Mem, Bcst, Mem, SegMem, VsibMem, byte, dword, mem, qword, word, xmmword, ymmword, zmmword
from .registers import *  # noqa: F403
from .registers import REGISTERS, Reg, gpr, vec

__version__ = "0.1.0"

TYPE_CHECKING = False   # typing.TYPE_CHECKING without importing typing (3 ms); type checkers take it as True
if TYPE_CHECKING:   # what __getattr__ imports on first use, for type checkers and IDEs (Assembler methods: _gen/asm_methods.pyi)
    from . import forms, groups, isel, jit, reference  # noqa: F401
    from ._gen.ops import Op  # noqa: F401
    from ._select_form import select_form
    from .assembler import Assembler, Label  # noqa: F401
    from .encoder import encode, select
    from .evex import RD_SAE, RN_SAE, RU_SAE, RZ_SAE, SAE, Masked, masked  # noqa: F401
    from .forms import Form, all_forms, forms_of, get_form
    from .instruction import Instruction
    from .isel import IselError  # noqa: F401
    from .text import assemble  # noqa: F401
    from .text import parse_text_line as parse  # noqa: F401

_LAZY = {
    "encode": ("encoder", "encode"), "select": ("_select", "select"), "select_form": ("_select", "select_form"),
    "assemble": ("text", "assemble"), "parse": ("text", "parse_text_line"),   # one line → (mnemonic, operands)
    "Instruction": ("instruction", "Instruction"),
    "Form": ("forms", "Form"), "get_form": ("forms", "get_form"), "forms_of": ("forms", "forms_of"),
    "all_forms": ("forms", "all_forms"),
    "Assembler": ("assembler", "Assembler"), "Label": ("assembler", "Label"),
    "Op": ("_gen.ops", "Op"),
    "IselError": ("isel", "IselError"),
    # AVX-512 decorations (x86gen.evex: a plain encode does not need it; `reg.k(k1)` and `mem.bcst` import it too)
    "Masked": ("evex", "Masked"), "masked": ("evex", "masked"),
    "RN_SAE": ("evex", "RN_SAE"), "RD_SAE": ("evex", "RD_SAE"), "RU_SAE": ("evex", "RU_SAE"), "RZ_SAE": ("evex", "RZ_SAE"),
    "SAE": ("evex", "SAE"),
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib
        mod, attr = _LAZY[name]
        value = getattr(importlib.import_module(f".{mod}", __name__), attr)
        globals()[name] = value
        return value
    if name in ("forms", "groups", "isel", "jit", "reference", "evex"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'x86gen' has no attribute {name!r}")


__all__ = ["EncodeError", "OperandError", "ImmediateRangeError", "UnknownMnemonicError", "AsmSyntaxError",
           "UnsupportedRegisterError", "EvexOnlyRegisterError", "EvexOperandError", "LabelContextError", "LabelError",
           "NoListingError", "SizeLimitError",
           "DistinctRegistersError", "PrefixError", "Mem", "SegMem", "VsibMem", "A32Mem", "Bcst", "Masked", "masked",
           "RN_SAE", "RD_SAE", "RU_SAE", "RZ_SAE", "SAE", "mem", "byte", "word", "dword", "qword", "xmmword",
           "ymmword", "zmmword", "Reg", "REGISTERS",
           "gpr", "vec", "encode", "select", "select_form", "assemble",
           "Instruction", "Form", "get_form", "forms_of", "all_forms", *REGISTERS]
