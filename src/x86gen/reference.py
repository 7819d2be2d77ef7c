"""tinygrad's x86 backend in x86gen's terms: every member of its ``X86Ops`` enum
(tinygrad/renderer/isa/x86.py) and the x86gen forms it is encoded with.

    >>> from x86gen.reference import TINYGRAD_X86OPS
    >>> TINYGRAD_X86OPS["ADDi"]
    ('ADD_RM8_IMM8', 'ADD_RM16_IMM16', 'ADD_RM32_IMM32', 'ADD_RM64_IMM32', 'ADD_RM16_IMM8', 'ADD_RM32_IMM8', 'ADD_RM64_IMM8')

The names keep tinygrad's conventions: the plain name has a register destination and an r/m source
(``ADD`` → ``ADD_R{8,16,32,64}_RM*``), an ``i`` suffix takes an immediate (every immediate width of that
layout, e.g. ``81 /0 id`` and ``83 /0 ib``), an ``m`` suffix has an r/m destination, i.e. stores when it
is memory (``VMOVDm`` = ``vmovd r/m32, xmm``). ``MOVABS`` is ``mov r64, imm64``; jumps have rel8 and
rel32 forms; ``SHL``/``SHR``/``SAR`` shift by cl. Every operand size tinygrad can emit is listed.
``NOT_INSTRUCTIONS`` (DEFINE_REG, FRAME_INDEX, LABEL) are tinygrad's placeholders, not instructions.

The table is generated from the ``x86ops`` section of isa/tinygrad.yaml. ``X86GroupOp`` (the
operand-role groups at this level) lives in `x86gen.groups` and is re-exported here.
"""
from __future__ import annotations

from ._gen.reference import NOT_INSTRUCTIONS, TINYGRAD_X86OPS

__all__ = ["TINYGRAD_X86OPS", "NOT_INSTRUCTIONS", "forms_for", "ops_for"]   # and X86GroupOp, loaded from x86gen.groups on use

TINYGRAD_X86OPS: dict[str, tuple[str, ...]]
NOT_INSTRUCTIONS: tuple[str, ...]


def forms_for(op: str) -> tuple[str, ...]:
    """The form ids of a tinygrad X86Ops name; KeyError (naming close names) if it is none."""
    try: return TINYGRAD_X86OPS[op]
    except KeyError:
        import difflib
        why = " (a placeholder, not an instruction)" if op in NOT_INSTRUCTIONS else ""
        close = difflib.get_close_matches(op, TINYGRAD_X86OPS, 3)
        raise KeyError(f"{op!r} is no instruction of tinygrad's X86Ops{why}" + (f"; did you mean {', '.join(close)}?" if close else "")) \
            from None


def ops_for(form_id: str) -> tuple[str, ...]:
    """The tinygrad X86Ops names that a form implements (empty for forms tinygrad does not use)."""
    return tuple(op for op, ids in TINYGRAD_X86OPS.items() if form_id in ids)


def __getattr__(name: str):
    if name == "X86GroupOp":
        from .groups import X86GroupOp
        return X86GroupOp
    raise AttributeError(f"module 'x86gen.reference' has no attribute {name!r}")
