"""`Instruction`: a mnemonic with operands that prints as Intel syntax and encodes to bytes."""
from __future__ import annotations

from .encoder import encode, select
from .errors import OperandError, fmt_value, wrong_type
from .forms import Form, get_form
from .selection.request import EVEX_PREFIX, REX2_PREFIX, VEX_PREFIX, canonical
from .syntax import (
    _DECORATED,
    check_decoration_case,
    decorated_form,
    format_instruction,
    format_operand,
    parse_line,
    pseudo_op,
    split_decorations,
    strip_comment,
)
from .table import has_mnemonic


class Instruction:
    """One instruction, e.g. ``Instruction("add", eax, 1)``; ``str()`` is its Intel syntax.

    ``form`` is the chosen `Form` (the shortest that fits, as `x86gen.encode` chooses), unless a form
    is given explicitly (``form=``, a `Form` or its id, or ``Instruction.of_form``): then it must be a form of the
    mnemonic, and the instruction encodes in exactly that form.
    """

    __slots__ = ("mnemonic", "operands", "_form", "_chosen", "rc")

    def __init__(self, mnemonic: str, *operands, form: Form | str | None = None, rc: int | None = None):
        """``rc``: AVX-512 static rounding or SAE (`x86gen.RN_SAE` … `x86gen.SAE`, see `x86gen.evex`), or None."""
        if form is not None:
            if not isinstance(form, Form): form = get_form(form)
            name = mnemonic.rpartition(" ")[2] if mnemonic.__class__ is str else mnemonic   # (after prefix words)
            for pseudo in (EVEX_PREFIX, VEX_PREFIX, REX2_PREFIX):
                if name.__class__ is str and name.startswith(pseudo): name = name[len(pseudo):]
            if name.__class__ is not str or canonical(name) != form.mnemonic:
                raise OperandError(f"Instruction({fmt_value(mnemonic)}, …, form={form.id}): {form.id} ({form.syntax}) is a form of"
                                   f" {form.mnemonic}, not of {fmt_value(mnemonic)}")
        self.mnemonic, self.operands, self._form, self.rc = mnemonic, operands, form, rc
        self._chosen = form

    @classmethod
    def of_form(cls, form_id: str, *operands, rc: int | None = None) -> Instruction:
        """The instruction of exactly this form (a form id or `Form`)."""
        f = form_id if isinstance(form_id, Form) else get_form(form_id)
        return cls(f.mnemonic, *operands, form=f, rc=rc)

    @classmethod
    def parse(cls, text: str) -> Instruction:
        """One line of Intel syntax (`x86gen.syntax`: GNU as, objdump and iced-x86 spellings)."""
        try: text = strip_comment(text)
        except (TypeError, AttributeError):
            if isinstance(text, str): raise
            raise wrong_type("x86gen.Instruction.parse", "text", text, "a str") from None
        if "{" in text: check_decoration_case(text)
        mn, ops = parse_line(text.lower().strip())
        ops, deco = split_decorations(ops)
        words, _, base = mn.rpartition(" ")
        name = base[base.index("}") + 1:] if base[:1] == "{" else base
        if not has_mnemonic(canonical(name)):   # `vcmpltps`, `pclmulhqlqdq`: the compare pseudo-ops, as their instruction
            alt = pseudo_op(base, ops)
            if alt is not None: mn, ops = (f"{words} {alt[0]}" if words else alt[0]), alt[1]
        if deco is not None:   # AVX-512 {rn-sae} / {1toN}
            return cls(mn, *ops, form=decorated_form(mn, ops, deco), rc=deco.rc)
        return cls(mn, *ops)

    @property
    def form(self) -> Form:
        """The form the instruction encodes with (`x86gen.select`'s choice, unless one was given)."""
        if self._chosen is None: self._chosen = select(self.mnemonic, *self.operands, rc=self.rc)
        return self._chosen

    def encode(self, ip: int = 0) -> bytes:
        """The bytes, the instruction at address ``ip`` (which a branch's target is counted from)."""
        f = self._form
        if f is None: return encode(self.mnemonic, *self.operands, ip=ip, rc=self.rc)   # as x86gen.encode chooses
        if f.is_branch: return f(*self.operands, ip=ip, rc=self.rc)
        return f(*self.operands, rc=self.rc)

    def __bytes__(self) -> bytes: return self.encode()

    def __str__(self) -> str:
        """Intel syntax; AVX-512 decorations as GNU as and llvm-mc write them (``zmm1 {k1} {z}``, ``dword ptr
        [rax]{1to16}``, ``{rn-sae}`` an operand of its own; `x86gen.syntax.format_instruction`)."""
        if self.rc is not None or any(o.__class__ in _DECORATED for o in self.operands):
            return format_instruction(self.mnemonic, self.operands, self.rc, lambda: self.form)
        return self.mnemonic + (" " + ", ".join(format_operand(o) for o in self.operands) if self.operands else "")

    def __repr__(self) -> str: return f"Instruction({str(self)!r})"

    def __eq__(self, other):
        return isinstance(other, Instruction) and (self.mnemonic, self.operands, self.rc, self._form) == \
            (other.mnemonic, other.operands, other.rc, other._form)

    def __hash__(self): return hash((self.mnemonic, self.operands, self.rc))
