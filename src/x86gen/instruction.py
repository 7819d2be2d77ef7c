"""`Instruction`: a mnemonic with operands that prints as Intel syntax and encodes to bytes."""
from __future__ import annotations

from .errors import OperandError
from .text import _DECORATED, Decorations, format_operand


class Instruction:
    """One instruction, e.g. ``Instruction("add", eax, 1)``; ``str()`` is its Intel syntax.

    ``form`` is the chosen `Form` (the shortest that fits, as `x86gen.encode` chooses), unless a form
    is given explicitly with ``Instruction.of_form``.
    """

    __slots__ = ("mnemonic", "operands", "_form", "rc")

    def __init__(self, mnemonic: str, *operands, form=None, rc: int | None = None):
        """``rc``: AVX-512 static rounding or SAE (`x86gen.RN_SAE` … `x86gen.SAE`, see `x86gen.evex`), or None."""
        self.mnemonic, self.operands, self._form, self.rc = mnemonic, operands, form, rc

    @classmethod
    def of_form(cls, form_id: str, *operands, rc: int | None = None) -> Instruction:
        from .forms import get_form
        f = get_form(form_id)
        return cls(f.mnemonic, *operands, form=f, rc=rc)

    @classmethod
    def parse(cls, text: str) -> Instruction:
        from .text import _strip_comment, parse_line
        mn, ops = parse_line(_strip_comment(text).lower().strip())
        if ops and ops[-1].__class__ is Decorations:   # AVX-512 {rn-sae} / {1toN} (x86gen._evex_text)
            from ._evex_text import decorated_form, split_decorations
            ops, deco = split_decorations(ops)
            return cls(mn, *ops, form=decorated_form(mn, ops, deco), rc=deco.rc)
        return cls(mn, *ops)

    @property
    def form(self):
        if self._form is None:
            from .encoder import select
            self._form = select(self.mnemonic, *self.operands, rc=self.rc)
        return self._form

    def encode(self, ip: int = 0) -> bytes:
        f = self.form
        if self.rc is not None: return f(*self.operands, rc=self.rc)   # (Form.__call__: the EVEX decorations path)
        if f.mnemonic in ("xchg", "nop"):   # xchg eax, ecx is 91 (xchg ecx, eax), xchg ax, ax 66 90 (encoder.xchg_choice)
            from .encoder import xchg_choice
            xchg = xchg_choice(self.mnemonic, self.operands)
            if xchg is not None: return f.encode(*xchg[1])
        if f.is_branch: return f.encode(*self.operands, ip=ip)
        try: return f.encode(*self.operands)
        except OperandError:
            from ._evex import decorated
            if decorated(self.operands): return f(*self.operands)   # a masked or broadcast operand
            raise

    def __bytes__(self) -> bytes: return self.encode()

    def __str__(self) -> str:
        """Intel syntax; AVX-512 decorations as GNU as and llvm-mc write them (``zmm1 {k1} {z}``, ``dword ptr
        [rax]{1to16}``, ``{rn-sae}`` an operand of its own; `x86gen._evex_text.format_instruction`)."""
        if self.rc is not None or any(o.__class__ in _DECORATED for o in self.operands):
            from ._evex_text import format_instruction
            return format_instruction(self.mnemonic, self.operands, self.rc, lambda: self.form)
        return self.mnemonic + (" " + ", ".join(format_operand(o) for o in self.operands) if self.operands else "")

    def __repr__(self) -> str: return f"Instruction({str(self)!r})"

    def __eq__(self, other):
        return isinstance(other, Instruction) and (self.mnemonic, self.operands, self.rc) == (other.mnemonic, other.operands, other.rc)

    def __hash__(self): return hash((self.mnemonic, self.operands, self.rc))
