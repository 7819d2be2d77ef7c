"""How a form's bytes are built: one emitter per encoding kind over a shared operand pass.

- `x86gen.encoding.operands`: the pass every kind shares (operand checks, encoding slots, immediates, ModRM/SIB cases);
- `x86gen.encoding.legacy`, `x86gen.encoding.vex`, `x86gen.encoding.evex`, `x86gen.encoding.xop`: the emitter of each
  encoding kind (SDM Vol.2 2.1-2.2, 2.3, 2.7; AMD APM Vol.3 1.8 for XOP): prefixes, opcode and ModRM bytes;
- `x86gen.encoding.writer`: the dispatch (`EMITTERS`), and the code of one form (`build`) or one form for one operand
  signature (`parts`). The generator (codegen/shapes.py) writes every form's encoder with it into
  ``x86gen/_gen/encoders``; selection compiles a signature's plan from the same code (`x86gen.selection.plans`);
- `x86gen.encoding.runtime`: what that code calls at run time (byte packers, the errors of `x86gen.diagnostics`);
- `x86gen.encoding.decorated`: what a form's encoder does not take itself: segment overrides, 32-bit addresses and
  the AVX-512 decorations (masks, zeroing, broadcast, rounding), taken off the operands before it runs and put into
  its bytes after.

A new encoding kind is a module here with its ``emit``, one entry in `x86gen.encoding.writer.EMITTERS`, and its
spec syntax (codegen/spec.py); nothing in selection changes.
"""
