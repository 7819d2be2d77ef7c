"""Choosing the form for a request, one pipeline behind every door that encodes by mnemonic (`x86gen.encode`,
`x86gen.select`, `x86gen.Instruction`, the `x86gen.Assembler`):

- `x86gen.selection.request`: a mnemonic's other names, string instructions written short, GNU as's xchg and lea rewrites;
- `x86gen.selection.candidates`: the forms that take the operands, best first (`candidates`), the one that encodes them
  (`choose`);
- `x86gen.selection.plans`: one function per (mnemonic, operand signature) that chooses and encodes, kept by the doors;
- `x86gen.selection.prefixed`: instructions with prefix words (``lock``, ``rep``, ``{vex3}``, ``addr32``, ``data16``,
  objdump's ``rex.W``).

A door that encodes a given form goes through `x86gen.forms.Form`, which takes the same operands (segment
overrides, 32-bit addresses, AVX-512 decorations: `x86gen.encoding.decorated`).
"""
