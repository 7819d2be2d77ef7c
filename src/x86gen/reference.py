"""tinygrad's x86 backend in x86gen's terms: every member of its ``X86Ops`` enum (tinygrad/renderer/isa/x86.py), the
x86gen forms it is encoded with, and where its operands are in an instruction uop.

    >>> from x86gen.reference import TINYGRAD_X86OPS, TINYGRAD_LAYOUT
    >>> TINYGRAD_X86OPS["ADDi"]
    ('ADD_RM8_IMM8', 'ADD_RM16_IMM16', 'ADD_RM32_IMM32', 'ADD_RM64_IMM32', 'ADD_RM16_IMM8', 'ADD_RM32_IMM8', 'ADD_RM64_IMM8')
    >>> TINYGRAD_LAYOUT["ADDi"], TINYGRAD_LAYOUT["VADDPS"]
    ('store-digit', 'rm-second')

The names are exactly tinygrad 0.14.0's (PyPI): ``TINYGRAD_X86OPS`` its instructions, ``NOT_INSTRUCTIONS`` its
placeholders (DEFINE, FRAME_INDEX, LABEL, LOOP_CMP). The earlier change to tinygrad (shared/reference) had 19 names
0.14.0 lacks (vfmadd213*, vmax*/vmin*, vbroadcastss, vpbroadcast*, vshufps/pd) and called DEFINE ``DEFINE_REG``: they
are in ``EARLIER_CHANGE_X86OPS`` / ``EARLIER_NOT_INSTRUCTIONS`` (``EARLIER_CHANGE_ONLY`` names them all);
``ALL_X86OPS`` has both, and x86gen's semantic groups (`x86gen.groups.X86GroupOp`) cover all of them.

The names keep tinygrad's conventions: the plain name has a register destination and an r/m source
(``ADD`` → ``ADD_R{8,16,32,64}_RM*``), an ``i`` suffix takes an immediate (every immediate width of that
layout, e.g. ``81 /0 id`` and ``83 /0 ib``), an ``m`` suffix has an r/m destination, i.e. stores when it
is memory (``VMOVDm`` = ``vmovd r/m32, xmm``). ``MOVABS`` is ``mov r64, imm64``; jumps have rel8 and
rel32 forms; ``SHL``/``SHR``/``SAR`` shift by cl. Every operand size tinygrad can emit is listed.

Source layout: ``TINYGRAD_LAYOUT[op]`` names one of ``LAYOUTS`` (store, store-digit, rm-first, rm-first-digit,
rm-second, opcode-register, jump, ret), which says which uop src goes to ModRM.reg, ModRM.rm (or the four-src
address), VEX.vvvv and the immediate; ``SOURCE_NOTES[op]`` adds what else an op's srcs hold (the compare of
SETcc/CMOVcc/Jcc, RET's callee-saved registers, the loop counter's RANGE srcs, vmovss's xmm0 merge register).
Mapping a tinygrad instruction onto a form is then a lookup: fill each form operand's slot (`x86gen.Form`
``operands[i].loc``) from the uop as the layout says (`x86gen.integrations.tinygrad` does exactly that).
``TINYGRAD_GROUPS`` are 0.14.0's ``X86GroupOp`` sets (also as `x86gen.groups.TinygradGroupOp`),
``GROUP_DIFFERENCES`` why x86gen's semantic groups differ from them.

Generated from isa/tinygrad.yaml. ``X86GroupOp`` lives in `x86gen.groups`.
"""
from __future__ import annotations

from ._gen.reference import (
    ALL_X86OPS,
    EARLIER_CHANGE_ONLY,
    EARLIER_CHANGE_X86OPS,
    EARLIER_NOT_INSTRUCTIONS,
    GROUP_DIFFERENCES,
    LAYOUTS,
    NOT_INSTRUCTIONS,
    SOURCE_NOTES,
    TINYGRAD_GROUPS,
    TINYGRAD_LAYOUT,
    TINYGRAD_X86OPS,
)

__all__ = ["TINYGRAD_X86OPS", "NOT_INSTRUCTIONS", "EARLIER_CHANGE_X86OPS", "EARLIER_NOT_INSTRUCTIONS", "EARLIER_CHANGE_ONLY",
           "ALL_X86OPS", "TINYGRAD_GROUPS", "GROUP_DIFFERENCES", "TINYGRAD_LAYOUT", "LAYOUTS", "SOURCE_NOTES", "forms_for",
           "ops_for"]

TINYGRAD_X86OPS: dict[str, tuple[str, ...]]
EARLIER_CHANGE_X86OPS: dict[str, tuple[str, ...]]
ALL_X86OPS: dict[str, tuple[str, ...]]
NOT_INSTRUCTIONS: tuple[str, ...]
TINYGRAD_GROUPS: dict[str, tuple[str, ...]]
TINYGRAD_LAYOUT: dict[str, str]


def forms_for(op: str) -> tuple[str, ...]:
    """The form ids of a tinygrad X86Ops name (0.14.0's, or the earlier change's); KeyError (naming close names) if it is none."""
    try: return ALL_X86OPS[op]
    except (KeyError, TypeError):
        if op.__class__ is not str and not isinstance(op, str):
            from .errors import wrong_type
            raise wrong_type("x86gen.reference.forms_for", "op", op, "a str (a tinygrad X86Ops name)") from None
        import difflib
        why = " (a placeholder, not an instruction)" if op in NOT_INSTRUCTIONS + EARLIER_NOT_INSTRUCTIONS else ""
        close = difflib.get_close_matches(op, ALL_X86OPS, 3)
        raise KeyError(f"{op!r} is no instruction of tinygrad's X86Ops{why}" + (f"; did you mean {', '.join(close)}?" if close else "")) \
            from None


def ops_for(form_id: str) -> tuple[str, ...]:
    """The tinygrad X86Ops names that a form implements (empty for forms tinygrad does not use)."""
    return tuple(op for op, ids in ALL_X86OPS.items() if form_id in ids)

