"""The REX2 encoding (Intel APX Architecture Specification, 3.1.2.1): [9B] [66] [mandatory prefix] D5 payload opcode
[ModRM [SIB] [disp]] [imm].

REX2 is the REX prefix of APX's 32 general registers: D5 and one payload byte

    M0 R4 X4 B4 W R3 X3 B3

R3/X3/B3 and W are REX's R/X/B/W; R4/X4/B4 are bit 4 of the register in ModRM.reg, of the SIB index and of the
register in ModRM.rm, SIB.base or the opcode (+r); M0 = 1 selects legacy map 1 in place of the 0F escape byte, which is
then left out. REX2 is the last prefix, right before the opcode, as REX is (the legacy prefixes go before it). Only
legacy maps 0 and 1 take it, and not all of them (the loader's rule: codegen/spec.py `rex2_eligible`). With REX2 an
8-bit register 4-7 is spl/bpl/sil/dil, never ah/ch/dh/bh (3.1.2.1, as with REX), so a form with an ah/ch/dh/bh operand
raises the same error as a REX one would.

`emit` writes a form's returns after the shared operand pass (`x86gen.encoding.operands`); the registers carry their
REX2 bits (``rex2_r``, ``rex2_x``, ``rex2_b``: `x86gen.registers`) and a memory operand its X4 B4 X3 B3 (``rex``: bit 4
only in an `x86gen.memory.EgprMem`).
"""
from __future__ import annotations

from .legacy import register_cases
from .operands import PP_BYTE, OperandPass, return_line


def _rex2_returns(c: OperandPass, ind: str, bits: list[str], middle: list[str], tail: str, r8: list[str]) -> list[str]:
    """The returns of a REX2 form: ``bits`` the payload's register fields, ``middle`` the byte expressions from the opcode
    on, ``tail`` a memory operand's SIB/displacement, ``r8`` the byte registers (ah/ch/dh/bh refused)."""
    row = c.row
    imm, tail_s = c.imm_bytes(tail)
    head = [f"{b:#04x}" for b in ([0x9B] if row.fwait else []) + ([0x66] if row.opsize16 else [])
            + list(PP_BYTE[row.mandatory_prefix])]
    payload = (0x80 if row.opcode_map == 1 else 0) | (0x08 if row.w == 1 else 0)   # M0, W
    res = []
    if r8:   # REX2 makes ModRM's 4-7 spl/bpl/sil/dil: ah/ch/dh/bh cannot be encoded (as with REX, SDM Vol.2 2.2.1.2)
        res.append(f"{ind}if {' or '.join(f'{x}.high' for x in r8)}: raise _high8_error({c.fid!r}, {c.allargs})")
    res.append(return_line(ind, head + ["0xD5", " | ".join([f"{payload:#04x}"] + bits)] + middle + imm, tail_s))
    return res


def emit(c: OperandPass) -> list[str]:
    """REX2 encoding (APX spec 3.1.2.1): [66] [mandatory prefix] D5 M0R4X4B4WR3X3B3 opcode [ModRM …] [imm]."""
    row = c.row
    if row.opcode_map not in (0, 1) or row.suffix or row.addrsize32:
        raise ValueError(f"{c.fid}: REX2 takes legacy maps 0 and 1 only, no 3DNow! or a32 form")
    body = register_cases(c, _rex2_returns, "rex2_r", "rex2_b")   # the legacy forms' cases, with REX2's bits
    if body is None: raise ValueError(f"{c.fid}: a REX2 form has a ModRM or +r operand that can be r16-r31")
    return body
