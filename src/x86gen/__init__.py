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

from ._version import __version__  # noqa: F401
from .errors import (
    ArgumentTypeError,
    AsmSyntaxError,
    DistinctRegistersError,
    EgprOperandError,
    EncodeError,
    EvexOnlyRegisterError,
    EvexOperandError,
    ImmediateRangeError,
    LabelContextError,
    LabelError,
    LabelOperand,
    NoListingError,
    OperandError,
    PrefixError,
    SizeLimitError,
    UnknownMnemonicError,
    UnsupportedRegisterError,
)
from .memory import A32Mem, Bcst, EgprMem, Mem, SegMem, VsibMem, byte, dword, mem, qword, word, xmmword, ymmword, zmmword
from .registers import *  # noqa: F403
from .registers import REGISTERS, Reg, gpr, vec

TYPE_CHECKING = False   # typing.TYPE_CHECKING without importing typing (3 ms); type checkers take it as True
if TYPE_CHECKING:   # what __getattr__ imports on first use, for type checkers and IDEs (Assembler methods: _gen/asm_methods.pyi)
    from . import forms, groups, isel, jit, reference  # noqa: F401
    from ._gen.ops import Op  # noqa: F401
    from .assembler import Assembler, Label  # noqa: F401
    from .encoder import encode, select, select_form
    from .evex import RD_SAE, RN_SAE, RU_SAE, RZ_SAE, SAE, Masked, masked  # noqa: F401
    from .forms import Form, all_forms, forms_of, get_form
    from .instruction import Instruction
    from .isel import IselError  # noqa: F401
    from .objfile import assemble_object  # noqa: F401
    from .text import assemble  # noqa: F401
    from .text import parse_text_line as parse  # noqa: F401

def _load(name: str):
    """The public name ``name`` of a module loaded on first use (its import is written out, one per module)."""
    if name in ("encode", "select", "select_form"):
        from . import encoder as m
    elif name in ("assemble", "parse"):
        from . import text as m
        if name == "parse": return m.parse_text_line   # one line → (mnemonic, operands)
    elif name == "assemble_object":   # program text -> an ELF64 relocatable object
        from . import objfile as m
    elif name == "Instruction":
        from . import instruction as m
    elif name in ("Form", "get_form", "forms_of", "all_forms"):
        from . import forms as m
    elif name in ("Assembler", "Label"):
        from . import assembler as m
    elif name == "Op":
        from ._gen import ops as m
    elif name == "IselError":
        from . import isel as m
    elif name in ("Masked", "masked", "RN_SAE", "RD_SAE", "RU_SAE", "RZ_SAE", "SAE"):   # AVX-512 decorations
        from . import evex as m
    else: raise AttributeError(f"module 'x86gen' has no attribute {name!r}")
    return getattr(m, name)


def __getattr__(name: str):
    """The public names and modules that ``import x86gen`` does not load (see `_load`): loaded on first use."""
    if name in _SUBMODULES:   # (`import x86gen.forms`: `from . import forms` would ask this function for it again)
        if name == "forms":
            import x86gen.forms as m
        elif name == "groups":
            import x86gen.groups as m
        elif name == "isel":
            import x86gen.isel as m
        elif name == "jit":
            import x86gen.jit as m
        elif name == "reference":
            import x86gen.reference as m
        else:
            import x86gen.evex as m
        return m
    value = _load(name)
    globals()[name] = value
    return value


_SUBMODULES = ("forms", "groups", "isel", "jit", "reference", "evex")


__all__ = ["EncodeError", "ArgumentTypeError", "OperandError", "ImmediateRangeError", "UnknownMnemonicError", "AsmSyntaxError",
           "UnsupportedRegisterError", "EgprOperandError", "EvexOnlyRegisterError", "EvexOperandError", "LabelContextError", "LabelError",
           "LabelOperand", "NoListingError", "SizeLimitError",
           "DistinctRegistersError", "PrefixError", "Mem", "SegMem", "VsibMem", "A32Mem", "EgprMem", "Bcst", "Masked", "masked",
           "RN_SAE", "RD_SAE", "RU_SAE", "RZ_SAE", "SAE", "mem", "byte", "word", "dword", "qword", "xmmword",
           "ymmword", "zmmword", "Reg", "REGISTERS",
           "gpr", "vec", "encode", "select", "select_form", "assemble", "assemble_object",
           "Instruction", "Form", "get_form", "forms_of", "all_forms", *REGISTERS]
