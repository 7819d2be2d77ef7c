"""The VEX encoding (SDM Vol.2 2.3): C5/C4 prefix, opcode, ModRM [SIB] [disp], [imm | is4].

`emit` writes a form's returns after the shared operand pass (`x86gen.encoding.operands`).
"""
from __future__ import annotations

from .operands import OperandPass, modrm_cases, return_line


def _vex_returns(c: OperandPass, ind: str, rm_reg: bool, a: str | None, middle: list[str], tail: str) -> list[str]:
    """VEX prefix (SDM Vol.2 2.3.5): the 2-byte C5 form only with map 0F, W0 (or WIG) and X̄ = B̄ = 1;
    else the 3-byte C4 form. R̄, X̄, B̄ and vvvv are stored inverted. ``a`` is the ModRM.rm operand
    (a register if ``rm_reg``), ``middle`` the ModRM byte expression (or the fixed ModRM), ``tail`` as
    in `_legacy_returns`."""
    row = c.row
    r = f"{c.reg}.vr" if c.reg else "0x80"
    vv = f"{c.vvvv}.vv" if c.vvvv else "0x78"
    lpp = ((row.vex_l or 0) << 2) | row.mandatory_prefix
    wbit = 0x80 if row.w == 1 else 0
    imm, tail_s = c.imm_bytes(tail)
    body = [f"{row.opcode:#04x}"] + middle + imm
    res = []
    xb = (f"0x40 | {a}.vb" if rm_reg else f"{a}.vxb") if a else "0x60"
    if row.opcode_map == 1 and row.w != 1:
        cond = (f"{a}.vb" if rm_reg else f"{a}.vxb == 0x60") if a else None
        res.append(return_line(ind, ["0xC5", f"{r} | {vv} | {lpp:#x}"] + body, tail_s, cond))
        if cond is None: return res
    res.append(return_line(ind, ["0xC4", f"{r} | {xb} | {row.opcode_map}", f"{vv} | {wbit | lpp:#x}"] + body, tail_s))
    return res


def emit(c: OperandPass) -> list[str]:
    """VEX encoding (SDM Vol.2 2.3): C5/C4 prefix, opcode, ModRM [SIB] [disp], [imm | is4]."""
    if c.opc is not None or c.moffs is not None: raise ValueError(f"{c.fid}: no +r or moffs operand in a VEX form")
    if c.rm is not None:
        return modrm_cases(c, lambda ind, a, is_reg, modrm, tail: _vex_returns(c, ind, is_reg, a, [modrm], tail))
    return _vex_returns(c, "", False, None, c.fixed_modrm, "")   # e.g. vzeroupper: no ModRM


