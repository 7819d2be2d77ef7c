"""The XOP encoding (AMD APM Vol.3 1.8, Vol.4 2.4): 8F prefix, opcode, ModRM [SIB] [disp], [imm | is4].

AMD's XOP prefix has the layout of the 3-byte VEX prefix with 8F for C4:

    8F  R̄ X̄ B̄ mmmmm  W v̄v̄v̄v̄ L pp

R̄, X̄, B̄ and vvvv are stored inverted as in VEX; mmmmm is one of AMD's XOP opcode maps 8, 9 and 0Ah (never the VEX maps
0F/0F38/0F3A); pp is 00 in every XOP instruction. There is no 2-byte form. 8F is also the opcode of POP r/m64 (8F /0):
read as a ModRM byte, R̄X̄B̄.mmmmm has B̄ m4 m3 in its reg field, and XOP's mmmmm of 8 or more makes that field non-zero,
which is how a processor tells the two apart (AMD APM Vol.3 1.8, "XOP Prefix"). x86gen only writes bytes, so nothing
here chooses between them; the spec's XOP maps (`codegen.spec.XOP_MAPS`) are 8, 9 and 10 only.

`emit` writes a form's returns after the shared operand pass (`x86gen.encoding.operands`); the register and memory
operands carry the inverted VEX bits it uses (``vr``, ``vb``, ``vxb``, ``vv``, ``is4``: `x86gen.registers`).
"""
from __future__ import annotations

from .operands import OperandPass, modrm_cases, return_line


def _xop_returns(c: OperandPass, ind: str, rm_reg: bool, a: str | None, middle: list[str], tail: str) -> list[str]:
    """The XOP prefix, opcode, ModRM and the memory tail: ``a`` is the ModRM.rm operand (a register if ``rm_reg``),
    ``middle`` the ModRM byte expression, ``tail`` the memory operand's SIB/displacement expression."""
    row = c.row
    r = f"{c.reg}.vr" if c.reg else "0x80"          # R̄: bit 3 of the ModRM.reg register, inverted
    vv = f"{c.vvvv}.vv" if c.vvvv else "0x78"       # v̄v̄v̄v̄: the vvvv register, inverted (1111 when unused)
    lpp = ((row.vex_l or 0) << 2) | row.mandatory_prefix
    wbit = 0x80 if row.w == 1 else 0
    imm, tail_s = c.imm_bytes(tail)
    xb = (f"0x40 | {a}.vb" if rm_reg else f"{a}.vxb") if a else "0x60"   # X̄ B̄: a register's bit 3, memory's index/base
    return [return_line(ind, ["0x8F", f"{r} | {xb} | {row.opcode_map}", f"{vv} | {wbit | lpp:#x}", f"{row.opcode:#04x}"]
                        + middle + imm, tail_s)]


def emit(c: OperandPass) -> list[str]:
    """XOP encoding (AMD APM Vol.3 1.8): 8F RXB.mmmmm W.vvvv.L.pp, opcode, ModRM [SIB] [disp], [imm | is4]."""
    if c.opc is not None or c.moffs is not None: raise ValueError(f"{c.fid}: no +r or moffs operand in an XOP form")
    if c.rm is None: raise ValueError(f"{c.fid}: every XOP form has a ModRM byte with an operand in ModRM.rm")
    return modrm_cases(c, lambda ind, a, is_reg, modrm, tail: _xop_returns(c, ind, is_reg, a, [modrm], tail))
