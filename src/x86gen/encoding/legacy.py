"""The legacy encoding (SDM Vol.2 2.1, 2.2): [66] [mandatory prefix] [REX] [0F [38|3A]] opcode [ModRM [SIB] [disp]] [imm],
and AMD's 3DNow! (AMD APM Vol.3 1.2.7): [REX] 0F 0F ModRM [SIB] [disp] suffix, the same bytes with the operation's
opcode byte (the row's ``suffix``) where an imm8 would be.

`emit` writes a form's returns after the shared operand pass (`x86gen.encoding.operands`).
"""
from __future__ import annotations

from ..table import MAP_BYTES
from .operands import PP_BYTE, OperandPass, modrm_cases, return_line


def _legacy_returns(c: OperandPass, ind: str, rex_bits: list[str], middle: list[str], tail: str, r8: list[str]) -> list[str]:
    """The REX/no-REX returns of a legacy form. ``middle`` are the byte expressions from the opcode on,
    ``tail`` an expression appended after them (a memory operand's SIB/displacement), ``r8`` the byte
    registers that may force (spl…dil) or forbid (ah…bh) a REX prefix (SDM Vol.2 2.2.1)."""
    row = c.row
    imm, tail_s = c.imm_bytes(tail)
    if row.suffix:   # 3DNow!: the operation's byte last, after ModRM/SIB/displacement (AMD APM Vol.3 1.2.7)
        if tail_s: tail_s += f" + _BYTE[{row.suffix:#04x}]"
        else: imm = imm + [f"{row.suffix:#04x}"]
    # 9B (fwait: WAIT, first; finit is 9B DB E3, fsave 9B [66] DD /6: SDM Vol.2 FINIT/FSAVE), 66 (o16), then 67 (a32,
    # SDM Vol.2 3.6), then the mandatory prefix: iced-x86's order (x86gen.prefixes.layout)
    head = [f"{b:#04x}" for b in ([0x9B] if row.fwait else []) + ([0x66] if row.opsize16 else []) + ([0x67] if row.addrsize32 else [])
            + list(PP_BYTE[row.mandatory_prefix])]
    body = [f"{b:#04x}" for b in MAP_BYTES[row.opcode_map]] + middle + imm
    bits = rex_bits + [f"{x}.rex8" for x in r8]
    w = row.w
    if not bits:   # no register can need REX: it is present exactly when the form has REX.W
        return [return_line(ind, head + (["0x48"] if w == 1 else []) + body, tail_s)]
    if w == 1 and not r8: return [return_line(ind, head + [" | ".join(["0x48"] + bits)] + body, tail_s)]
    res = [f"{ind}rex = {' | '.join((['0x48'] if w == 1 else []) + bits)}"]
    if r8:
        hi = " or ".join(f"{x}.high" for x in r8)
        res.append(f"{ind}if rex and ({hi}): raise _high8_error({c.fid!r}, {c.allargs})")
    if w == 1: res.append(return_line(ind, head + ["rex"] + body, tail_s))
    else:
        res.append(return_line(ind, head + ["0x40 | rex"] + body, tail_s, "rex"))
        res.append(return_line(ind, head + body, tail_s))
    return res


def register_cases(c: OperandPass, returns, r_bit: str, b_bit: str) -> list[str] | None:
    """The returns of a form with a ModRM or an opcode (+r) register, for the prefixes of the legacy maps that extend
    register numbers: REX (``rex_r``/``rex_b``, `emit`) and APX's REX2 (``rex2_r``/``rex2_b``, `x86gen.encoding.rex2`).
    ``returns(c, ind, bits, middle, tail, r8)`` writes them (`_legacy_returns`' signature); a memory operand gives its
    own index/base bits (``rex``). None if the form has neither kind of operand."""
    opcode = f"{c.row.opcode:#04x}"
    if c.rm is not None:
        rbits = [f"{c.reg}.{r_bit}"] if c.reg else []
        def per_case(ind, a, is_reg, modrm, tail):
            if is_reg: return returns(c, ind, rbits + [f"{a}.{b_bit}"], [opcode, modrm], "", c.r8)
            return returns(c, ind, rbits + [f"{a}.rex"], [opcode, modrm], tail, [x for x in c.r8 if x != a])
        return modrm_cases(c, per_case)
    if c.opc is not None:   # +rb/+rw/+rd/+ro: the register in the opcode's low 3 bits, the prefix's B bit(s) above
        body = returns(c, "", [f"{c.opc}.{b_bit}"], [f"{opcode} | {c.opc}.lo"], "", c.r8)
        if c.row.opcode == 0x90 and c.row.opcode_map == 0:
            # xchg r, ax/eax/rax (90+r) with the accumulator itself is 90, which is NOP, not an exchange: without REX.B
            # 90 is NOP whatever the operand size (SDM Vol.2 XCHG: "XCHG (E)AX, (E)AX (encoded instructions 90H) is an
            # alias for NOP"; in 64-bit mode it does not clear the upper half of rax as xchg eax, eax 87 C0 does)
            body = [f"if {c.opc}.num == 0: raise _nop_alias_error({c.fid!r}, {c.allargs})"] + body
        return body
    return None


def emit(c: OperandPass) -> list[str]:
    """Legacy encoding (SDM Vol.2 2.1): [66] [mandatory prefix] [REX] [0F [38|3A]] opcode [ModRM …] [imm]."""
    body = register_cases(c, _legacy_returns, "rex_r", "rex_b")
    if body is not None: return body
    opcode = f"{c.row.opcode:#04x}"
    if c.moffs is not None:
        return _legacy_returns(c, "", [], [opcode], f" + _le64({c.moffs}.disp & 0xFFFFFFFFFFFFFFFF)", c.r8)
    return _legacy_returns(c, "", [], [opcode] + c.fixed_modrm, "", c.r8)
