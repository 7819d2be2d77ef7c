"""The EVEX encoding (SDM Vol.2 2.7): 62 P0 P1 P2, opcode, ModRM [SIB] [disp8*N | disp32] [imm].

`emit` writes a form's returns after the shared operand pass (`x86gen.encoding.operands`). A form's generated encoder
(`x86gen.encoding.writer.build`) takes its decorations as two keyword arguments:

- ``p2``: the bits of P2 that decorations set, z L'L b aaa (SDM Vol.2 2.7.1, Table 2-30; V̄' is the encoder's own);
  by default the plain instruction's: aaa = 000, z = 0, b = 0, L'L the vector length;
- ``n``: N, the scale of a compressed disp8 (SDM Vol.2 2.7.5); by default the form's (its tuple type without
  broadcast), the element size with one (Table 2-34).

`x86gen.encoding.decorated.evex_bits` computes both from the operands; the plans of `x86gen.selection.plans`, written
for plain operands, take the defaults as constants.
"""
from __future__ import annotations

from ..table import mask_required
from .operands import OperandPass, modrm_cases, return_line


def _evex_returns(c: OperandPass, ind: str, rm_reg: bool, a: str | None, modrm: str, tail: str) -> list[str]:
    """The EVEX prefix (SDM Vol.2 2.7.1), opcode, ModRM and the memory tail.

    P0 = R̄ X̄ B̄ R̄' 0 0 m m: R̄/R̄' are bits 3/4 of the ModRM.reg register (``evr``); for a register in ModRM.rm
    B̄/X̄ are its bits 3/4 (``evxb``, SDM Vol.2 2.7.2), for memory X̄/B̄ are bit 3 of index/base (``vxb``, as in
    VEX). P1 = W v̄v̄v̄v̄ 1 pp. P2 = z L'L b V̄' aaa, V̄' bit 4 of vvvv (``evv``). Inverted fields of an unused slot
    are 1s. The plain instruction is written here (aaa = 000 = k0, z = 0, b = 0, L'L the vector length): masks,
    zeroing, broadcast and rounding come in ``p2`` where the encoder takes it (``c.decorations``), one OR more than
    the plain instruction's constant."""
    row = c.row
    r = f"{c.reg}.evr" if c.reg else "0x90"
    xb = (f"{a}.evxb" if rm_reg else f"{a}.vxb") if a else "0x60"
    p1 = f"{c.vvvv}.vv | {(0x80 if row.w == 1 else 0) | 0x04 | row.mandatory_prefix:#x}" if c.vvvv else \
        f"{(0x80 if row.w == 1 else 0) | 0x78 | 0x04 | row.mandatory_prefix:#x}"
    bits = "p2" if c.decorations else f"{(row.vex_l or 0) << 5:#x}"   # z L'L b aaa
    p2 = f"{c.vvvv}.evv | {bits}" if c.vvvv else f"{bits} | 0x08" if c.decorations else f"{((row.vex_l or 0) << 5) | 0x08:#x}"
    if mask_required(row):   # a gather/scatter: V̄' is bit 4 of the VSIB index (SDM Vol.2 2.7.2), aaa the mask (2.7.1)
        if c.vvvv or rm_reg: raise ValueError(f"{c.fid}: an EVEX VSIB form has no vvvv operand and a memory r/m")
        p2 = f"{a}.index.evv | aaa | {(row.vex_l or 0) << 5:#x}"
    imm, tail_s = c.imm_bytes(tail)
    return [return_line(ind, ["0x62", f"{r} | {xb} | {row.opcode_map}", p1, p2, f"{row.opcode:#04x}", modrm] + imm, tail_s)]


def emit(c: OperandPass) -> list[str]:
    """EVEX encoding (SDM Vol.2 2.7): 62 P0 P1 P2, opcode, ModRM [SIB] [disp8*N | disp32] [imm].

    A memory operand's displacement is compressed (SDM Vol.2 2.7.5): a disp8 is scaled by N (the form's
    ``disp8_n``, from its tuple type), so the `Mem`'s own ModRM/tail (disp8 unscaled) is recomputed by
    `Mem.disp8n`: disp8 = disp / N when N divides disp and the quotient fits -128..127, else disp32."""
    if c.opc is not None or c.moffs is not None or c.is4 is not None or c.rm is None:
        raise ValueError(f"{c.fid}: an EVEX form has a ModRM.rm operand and no +r, moffs or is4 operand")
    n = c.row.disp8_n
    if c.decorations and mask_required(c.row): raise ValueError(f"{c.fid}: a gather/scatter takes aaa=, not p2=")

    def returns(ind, a, is_reg, modrm, tail):
        if is_reg: return _evex_returns(c, ind, True, a, modrm, "")
        return [f"{ind}m, t = {a}.disp8n({'n' if c.decorations else n})"] + _evex_returns(c, ind, False, a, f"m | {c.reg3}", " + t")
    return modrm_cases(c, returns)




def decoration_params(row) -> str:
    """The keyword parameters of form ``row``'s generated encoder that carry its decorations (see the module doc):
    ``p2`` with the plain instruction's z L'L b aaa, and ``n`` with its disp8 scale where ModRM.rm may be memory."""
    rm = next(o for o in row.operands if o.loc == "rm")
    return f"p2={(row.vex_l or 0) << 5:#x}" + (f", n={row.disp8_n}" if rm.mem is not None else "")
