"""The code of a form's encoder, written from its row of the form table, by the emitter of its encoding kind.

The form table (``_gen/table.py``) is data: opcode, map, prefixes, W, L and where each operand goes. `build` writes a
short Python function for exactly one form (every constant folded in, one branch per register/memory case). The
generator runs it for every form and renders the results, grouped by shape, into ``_gen/encoders`` (codegen/shapes.py):
forms use those, and nothing is compiled per form at run time. Selection compiles the plans of often-used operand
signatures from `parts` (the same code without the checks a signature answers; `x86gen.selection.plans`).
``Form.source`` shows a form's encoder.

`parts` writes the code in two steps: the pass shared by every encoding kind (`x86gen.encoding.operands.OperandPass`:
operand checks, encoding slots, immediates), then the emitter of the form's encoding kind (`EMITTERS`), as iced-x86 has
one handler per encoding kind.

Byte layout (SDM Vol.2 2.1, 2.2.1, 2.3, 2.7; AMD APM Vol.3 1.8):
  legacy: [66 (o16)] [F2|F3|66 mandatory] [REX] [0F [38|3A]] opcode [ModRM [SIB] [disp]] [imm]
  REX2:   [66 (o16)] [F2|F3|66 mandatory] D5 M0R4X4B4WR3X3B3 opcode [ModRM [SIB] [disp]] [imm]   (APX spec 3.1.2.1)
  3DNow!: [REX] 0F 0F ModRM [SIB] [disp] suffix                                (AMD APM Vol.3 1.2.7)
  VEX:    C5 R̄vvvvLpp                  opcode ModRM [SIB] [disp] [imm | is4]   (2-byte)
          C4 R̄X̄B̄mmmmm Wvvvv̄Lpp         opcode ModRM [SIB] [disp] [imm | is4]   (3-byte)
  EVEX:   62 R̄X̄B̄R̄'00mm W v̄v̄v̄v̄1pp zL'LbV̄'aaa   opcode ModRM [SIB] [disp8*N | disp32] [imm]   (SDM Vol.2 2.7.1)
  XOP:    8F R̄X̄B̄mmmmm Wv̄v̄v̄v̄Lpp         opcode ModRM [SIB] [disp] [imm | is4]   (AMD APM Vol.3 1.8; mmmmm 8, 9, 0Ah)
"""
from __future__ import annotations

from .. import registers as R
from ..memory import A32Mem, EgprMem, Mem, VsibMem
from ..table import mask_required
from . import evex, legacy, rex2, vex, xop
from .operands import CLASS_NAMES, OperandPass
from .runtime import HELPERS

# encoding kind → its emitter (3DNow! is legacy bytes with a suffix byte, `legacy.emit` writes it)
EMITTERS = {"legacy": legacy.emit, "d3now": legacy.emit, "vex": vex.emit, "evex": evex.emit, "xop": xop.emit, "rex2": rex2.emit}


def build(row) -> tuple[str, str | None]:
    """Python source of ``enc(a0, …)`` for this form, and of ``fits(a0, …)`` if it has immediates. An EVEX form's
    takes its decorations as keywords (``p2=``, ``n=``: `x86gen.encoding.evex`), a gather's or scatter's its mask
    (``aaa=``)."""
    decorations = row.encoding_kind == "evex" and not mask_required(row)
    body, fits, rel = parts(row, decorations=decorations)
    args = ", ".join(f"a{i}" for i in range(len(row.operands))) + (", ip=0" if rel else "") + (", aaa=0" if mask_required(row) else "")
    if decorations: args += ", *, " + evex.decoration_params(row)
    src = f"def enc({args}):\n" + "".join(f"    {ln}\n" for ln in body)
    return src, (f"def fits({args}):\n    return {fits}\n" if fits else None)



def parts(row, sig: tuple | None = None, range_checked: bool = False, decorations: bool = False
          ) -> tuple[list[str], str | None, bool]:
    """The encoder of a form as parts: its body lines (unindented, ending in a return or raise), the
    condition under which its immediates fit (None if it has none) and whether it takes ``ip=``.

    With ``sig`` (an operand signature as `x86gen.encode` computes it: ``("ymm", "ymm", "m256")``,
    ``("eax", "i")``) the body is for operands of that signature only: the class, size and fixed
    register checks that it answers are left out, and so is every branch for other operand kinds.
    With ``range_checked`` the caller has tested the fit condition, so the immediates' range checks
    are left out too. `x86gen.selection.plans` pastes such bodies into one function per signature. With
    ``decorations`` an EVEX body reads its decorations from ``p2`` and ``n`` (`x86gen.encoding.evex`).

    The shared pass (`OperandPass`: operand checks, immediates) runs first; then the emitter of the
    form's encoding kind (`EMITTERS`) writes the returns: prefixes, opcode, ModRM/SIB/displacement
    (`_modrm_cases`), immediates.
    """
    c = OperandPass(row, sig, range_checked, decorations)
    out = c.checks + EMITTERS[row.encoding_kind](c)
    cond = " and ".join(f"({x})" for x in c.fits) if c.fits else None
    if c.rel:   # a branch's displacement is counted from the end of the instruction, whose length is fixed
        n = str(row.length)
        out = [ln.replace("LEN", n) for ln in out]
        cond = cond.replace("LEN", n) if cond else None
    return out, cond, c.rel




# Names the encoder code sees: register classes (Gpr32, Ymm, …), fixed registers (R_eax, …), the memory classes, the
# helpers of `x86gen.encoding.runtime`. The generated shapes (``_gen/encoders``) import the same names.
GLOBALS = {**{c: getattr(R, c) for c in CLASS_NAMES}, **{f"R_{n}": r for n, r in R.REGISTERS.items()},
           "Mem": Mem, "VsibMem": VsibMem, "A32Mem": A32Mem, "EgprMem": EgprMem, **HELPERS}
