"""Every form cross-checked with a second oracle: GNU as 2.40, or llvm-mc 14 where GNU as refuses.

`test_fuzz_iced` checks every form byte for byte against iced-x86. Here each form is also assembled
by an independent assembler on a few deterministic instances (`form_instances`: registers of both
halves of each file, r8-r15 / xmm8-15 included, ah..bh where valid; memory with SIB, special bases
r12/r13/rbp, disp8 and disp32 edges, RIP-relative, index-only and absolute addresses; immediates at
the edges of the range iced's operand kind allows; branch displacements at the rel8/rel32 edges).
The text of an instance is written here from the operands asked for (`instance_text`, GNU Intel
syntax), not from x86gen and not from a decoder, so a form that encodes another register, size or
value than the one asked is caught by an assembler that reads the request independently.

All instances of all forms go through GNU as in one process (`gnu_oracle.assemble_units`, one ELF
section per unit) and through llvm-mc in one more. GNU as's answer counts, llvm-mc's where GNU as
refuses; a mismatch from either fails. An instance passes when the assembler gives the form's bytes
("identical"), or bytes iced decodes to the same instruction (`iced_oracle.semantics`) for a reason in
`ALLOWED_REASONS` (the assembler picked a shorter encoding, e.g. rel8 for rel32 or ``83 /0 ib`` for
``81 /0 id``; another opcode or VEX form of the same length; a longer one). Where both assemblers refuse the
text written here, iced's own Intel text of the form's bytes is tried the same way (a spelling that
differs between the tools), and where they refuse that too the instance had iced alone. A form none of
whose instances an assembler accepted is listed as "iced alone" in the summary, not failed. An assembler
that accepts the text and produces another instruction is a failure, as is an instance x86gen cannot
encode although iced's operand kinds allow it.

Cost: one GNU as and one llvm-mc process per batch of `BATCH` units (plus the same for the
iced-text fallback, if any), and a few instances per form (``X86GEN_ORACLE_INSTANCES``, default 6), so
the module grows linearly and slowly with the table (692 forms: ~1.5 s; 4,152: ~3 s).
"""
from __future__ import annotations

import collections
import os
import re
import sys
from dataclasses import dataclass, field

import gnu_oracle
import iced_x86 as I
import pytest
from iced_oracle import (
    CODE_NAMES,
    FORM_BRANCH_KINDS,
    ICED_FORMS,
    REPORT,
    code_of,
    decoder_options,
    decorations,
    describe,
    evex_allows,
    form_imm_ranges,
    intel,
    operand_registers,
    semantics,
)
from test_fuzz_iced import IMPLICIT_BASE, branch_len, corner_cases, decorate, expected_error, ip16

import x86gen

pytestmark = [pytest.mark.skipif(not (gnu_oracle.HAVE_GNU_AS or gnu_oracle.HAVE_LLVM_MC),
                                 reason="neither GNU as nor llvm-mc is installed"), pytest.mark.xdist_group("second_oracle")]

R = x86gen.REGISTERS
M = x86gen.Mem
N_INSTANCES = int(os.environ.get("X86GEN_ORACLE_INSTANCES", "6"))
BATCH = 4000          # units per assembler process
IP = 0x80001000       # where the instances are encoded (branch targets are relative in the text)
SIZE_WORD = {8: "byte", 16: "word", 32: "dword", 48: "fword", 64: "qword", 80: "tbyte", 128: "xmmword",
             256: "ymmword", 512: "zmmword"}

# The x87 environment (14 bytes) and state (94 bytes) images of the 16-bit operand size: GNU as names their
# forms with a `w` suffix (fldenvw [rsi] = 66 d9 26), the unsuffixed name is the 28/108-byte image.
GNU_16BIT_IMAGE = {112, 752}
# x87 compares and fxch with st(0) and st(i): GNU as takes only st(i) (`fcom st(2)`), as the SDM writes them
GNU_ST_ONLY = {"fcom", "fcomp", "fucom", "fucomp", "fxch"}

# Far calls and jumps through memory other than m16:32, in the one spelling GNU as reads as such: llvm-mc 14's Intel
# parser reads `call dword ptr [rax]`, `call word ptr [rax]` and `call tbyte ptr [rax]` all as the m16:32 far call
# (ff 18), ignoring the size keyword, and refuses these spellings. (form id -> mnemonic, size keyword of the operand)
GNU_FAR_BRANCH = {"CALL_M1616": ("lcallw", None), "JMP_M1616": ("ljmpw", None),
                  "CALL_M1664": ("rex.w call", 48), "JMP_M1664": ("rex.w jmp", 48)}
# REX.W forms GNU as has no mnemonic for, in its spelling with the rex.w word (iced's getsecq: GNU as has only getsec)
GNU_REX_W = {"GETSECQ": "rex.w getsec"}

# Why an assembler's bytes may differ from the form's, given iced decodes both to the same instruction.
ALLOWED_REASONS = ("shorter encoding", "other opcode or prefixes, same length", "longer encoding")

# Memory operands, in the order instances use them (an r/m operand takes every other one as a
# register): SIB with the special base r12 and index r13 at the negative disp8 edge; RIP-relative
# disp32; r13 base (no disp0 encoding: disp8 0); rbp base with index at the disp32 edge past disp8;
# index-only with disp32; absolute [disp32]; rsp base (SIB).
MEMORY = [M(R["r12"], R["r13"], 8, -0x80, 0), M(R["rip"], None, 1, 0x12345678, 0), M(R["r13"], None, 1, 0, 0),
          M(R["rbp"], R["rax"], 2, 0x80, 0), M(None, R["r15"], 4, -0x80000000, 0), M(None, None, 1, 0x7FFFFFFF, 0),
          M(R["rsp"], None, 1, 0, 0)]
# the same shapes as 32-bit addresses (0x67), for a form whose memory operand is one (movdir64b/enqcmd/enqcmds r32, m512:
# their address size is 32 bits, SDM Vol.2 MOVDIR64B); x86gen has no 32-bit absolute address
MEMORY32 = [M(R["r12d"], R["r13d"], 8, -0x80, 0), M(R["eip"], None, 1, 0x12345678, 0), M(R["r13d"], None, 1, 0, 0),
            M(R["ebp"], R["eax"], 2, 0x80, 0), M(None, R["r15d"], 4, -0x80000000, 0), M(R["esp"], None, 1, 0, 0)]
# GNU as 2.40 refuses a size keyword on the m512 of movdir64b/enqcmd/enqcmds ("operand size mismatch"; llvm-mc takes
# `zmmword ptr`): their text has none
GNU_UNSIZED = {"movdir64b", "enqcmd", "enqcmds"}


# VSIB operands (the gathers), as (base, scale, disp): the index is chosen per instance, distinct from the
# destination and mask registers (SDM Vol.2 VGATHERDPS: #UD otherwise).
VSIB_SHAPES = [(R["r12"], 8, -0x80), (R["r13"], 1, 0), (R["rbp"], 2, 0x80), (None, 4, -0x80000000), (R["rsp"], 1, 0),
               (R["rax"], 4, 0x7FFFFFFF)]


class Unbuildable(Exception):
    """An operand kind `form_instances` cannot draw (a new kind needs a case here)."""


_CLASSES: dict[str, tuple[list, list]] = {}


def reg_class(kind: str, evex: bool = False) -> tuple[list, list]:
    """``(registers of class kind without ah..bh, ah..bh)``, by number: 0-31 for an EVEX form, else 0-15."""
    if (kind, evex) not in _CLASSES:
        # (registers 16-31: an EVEX form's vectors; APX's r16-r31 only REX2 forms take, which iced does not know)
        regs = sorted((r for r in R.values() if r.kind == kind and ((evex and kind[0] != "r") or not r.hi16)),
                      key=lambda r: (r.high, r.num))
        _CLASSES[kind, evex] = ([r for r in regs if not r.high], [r for r in regs if r.high])
    return _CLASSES[kind, evex]


def pick_register(kind: str, j: int, i: int, allow_high: bool, evex: bool = False):
    """Register of class ``kind`` for instance ``j``, operand ``i``: the top of the file, the upper
    half, ah..bh (instance 2, r8 only; else a low-half mix), the top of the lower half (spl..dil for
    r8), spreading over the operands so that they differ."""
    regs, high = reg_class(kind, evex)
    if not regs: raise Unbuildable(f"no registers of class {kind!r}")
    n = len(regs)
    if j == 2 and high and allow_high: return high[i % len(high)]
    step = [n - 1 - i, n // 2 + 3 * i, 1 + 5 * i, 3 + 7 * i, n // 2 - 1 - i, 2 + 11 * i][j % 6]
    return regs[step % n]


def pick_imm(form, code: int, i: int, j: int) -> int:
    """An immediate iced's operand kind and x86gen's range both allow: the top edge, the bottom edge,
    a middle value, in turn."""
    ranges = form_imm_ranges(code, i)
    if ranges is None: raise Unbuildable(f"operand {i + 1} is an immediate for x86gen, not for iced")
    lo, hi = ranges[0]
    mine = [tuple(r) for r in form.imm_ranges(i)]
    cands = [hi, lo, (lo + hi) // 2 + 0x5A if hi - lo > 0x200 else max(lo, min(hi, 0x5A)), 1]
    for v in cands[j % len(cands):] + cands[:j % len(cands)]:
        if any(a <= v <= b for a, b in mine): return v
    raise Unbuildable(f"operand {i + 1}: x86gen's ranges {mine} and iced's {ranges} share none of {cands}")


@dataclass
class Instance:
    """One encoded instance of a form: its operands, bytes (at `IP`), and the text written for it."""
    form: object
    ops: tuple
    data: bytes
    rel: int | None = None            # branch: the displacement (from the end of the instruction)
    text: str = ""
    outcomes: list = field(default_factory=list)


def form_instances(form, n: int = N_INSTANCES) -> list[tuple[tuple, int | None]]:
    """Up to ``n`` distinct valid operand tuples for ``form``, each with its branch displacement (None
    if the form is no branch). Validity is decided from iced's tables (`test_fuzz_iced.expected_error`),
    not from x86gen. Operand kinds the instances here cannot draw are taken from the fixed sweep of
    `test_fuzz_iced.corner_cases` (which must know every kind of the table); `Unbuildable` if neither can."""
    code = code_of(form.id)
    oc = I.OpCodeInfo(code)
    if oc.op_count != len(form.operands):
        raise Unbuildable(f"{len(form.operands)} operands, iced's {CODE_NAMES[code]} has {oc.op_count}")
    try:
        return _drawn_instances(form, code, oc, n)
    except Unbuildable as ex:
        try:
            sweep = corner_cases(form)
        except Exception as ex2:   # noqa: BLE001 - Unfuzzable, or a kind the sweep does not know either
            raise Unbuildable(f"{ex}; test_fuzz_iced.corner_cases: {type(ex2).__name__}: {ex2}") from None
    out = []
    for raw in sweep[::max(1, len(sweep) // n)]:
        rel = next((x[1] for x in raw if isinstance(x, tuple)), None)
        ops = tuple(IP + branch_len(code) + x[1] if isinstance(x, tuple) else x for x in raw)
        if expected_error(form, code, ops, rel) == (None, None): out.append((ops, rel))
    return out[:n]


def _drawn_instances(form, code: int, oc, n: int) -> list[tuple[tuple, int | None]]:
    out, seen = [], set()
    for j in range(max(n, 1) + 2):     # two spare draws for instances iced's rules reject (ah..bh with REX)
        if len(out) >= n: break
        ops, rel, ri = [], None, 0
        for i, o in enumerate(form.operands):
            if o.loc == "fixed":
                if o.reg not in R: raise Unbuildable(f"fixed operand {o.kind!r} is no register")
                ops.append(R[o.reg])
            elif o.kind == "1":
                ops.append(1)
            elif o.kind.startswith("rel"):
                k = oc.op_kind(i)
                if k not in FORM_BRANCH_KINDS: raise Unbuildable(f"{o.kind} but iced says {k}")
                lim = 1 << (FORM_BRANCH_KINDS[k] - 1)
                rel = [lim - 1, -lim, 0x10, -2][j % 4]
                target = IP + branch_len(code) + rel
                ops.append(target & 0xFFFF if ip16(form) else target)   # a 16-bit IP: the same rel modulo 2^16
            elif o.imm is not None:
                ops.append(pick_imm(form, code, i, j))
            elif o.kind.startswith("vm"):
                ops.append(None)   # the VSIB operand: built below, once the registers are known
            elif o.loc in IMPLICIT_BASE:   # a string instruction's [rsi] / es:[rdi], xlat's [rbx]: its one address
                ops.append(M(R[IMPLICIT_BASE[o.loc]], size=o.mem))
            elif o.kind == "kp1":   # vp2intersectd/q's pair of mask registers: an even k (`operand_registers`)
                kp1 = operand_registers(o.kind, form.encoding_kind == "evex")
                ops.append(kp1[(j + ri) % len(kp1)])
            elif o.reg is not None and (o.mem is None or j % 2 == 0):
                ops.append(pick_register(o.reg, j, ri, True, form.encoding_kind == "evex"))
                ri += 1
            elif o.mem is not None:
                pool = MEMORY32 if form.addrsize32 else MEMORY
                m = pool[(j // 2 if o.reg is not None else j) % len(pool)]
                ops.append(m.with_size(o.mem) if o.mem else m)
            else:
                raise Unbuildable(f"cannot draw operand {i + 1} {o.kind!r}")
        for i, o in enumerate(form.operands):
            if o.kind.startswith("vm"):
                used = {x.num for x in ops if isinstance(x, x86gen.Reg)}
                index = [r for r in reg_class({"x": "xmm", "y": "ymm", "z": "zmm"}[o.kind[-1]])[0] if r.num not in used]
                base, scale, disp = VSIB_SHAPES[j % len(VSIB_SHAPES)]
                ops[i] = M(base, index[(5 * j + 3) % len(index)], scale, disp, o.mem)
        ops = tuple(ops)
        masked = form.evex_mask_required   # a gather/scatter: a mask k1-k7 on its first operand (k0 is #UD)
        if ops in seen or expected_error(form, code, ops, rel, masked) != (None, None): continue
        seen.add(ops)
        out.append(((ops[0].k(R[f"k{1 + j % 7}"]), *ops[1:]) if masked else ops, rel))
    return out


# AVX-512 decorations to draw (mask k1-k7 or 0, zeroing, broadcast: 0 or True for the form's element size, rounding
# x86gen.RN_SAE=0 … RZ_SAE=3, SAE=4 or None), as test_fuzz_iced.decorate takes them
EVEX_DECORATIONS = [(1, False, 0, None), (7, True, 0, None), (3, False, 0, 0), (0, False, 0, 1), (5, True, 0, 2),
                    (0, False, 0, 3), (2, False, 0, 4), (0, False, 0, 4), (4, False, True, None), (6, True, True, None),
                    (0, False, True, None)]


def decorated_instances(form) -> list[tuple[tuple, int | None]]:
    """``(operands, rc)`` of an EVEX form with AVX-512 decorations: each of `EVEX_DECORATIONS` that iced-x86's
    OpCodeInfo allows the form (`iced_oracle.evex_allows`), applied (`test_fuzz_iced.decorate`) to the first plain
    instance (`form_instances`, turn by turn) it fits (a broadcast needs a memory operand, a rounding registers
    only): a masked destination, a broadcast source, ``rc``. Validity is iced's, not x86gen's."""
    if form.encoding_kind != "evex": return []
    code = code_of(form.id)
    plain = [ops for ops, rel in form_instances(form) if rel is None]
    out = []
    for k, (mask, zero, bcst, rc) in enumerate(EVEX_DECORATIONS):
        bits = form.evex_bcst if bcst else 0
        if bcst and not bits: continue
        want = (mask, zero, bits, rc)
        for j in range(len(plain)):
            ops = plain[(k + j) % len(plain)]
            dops, rc2, applied = decorate(form, ops, want)
            has_mem = any(isinstance(x, x86gen.Mem) for x in ops)
            if applied == want and evex_allows(code, mask, zero, bits, rc, ops[0].__class__ is x86gen.Mem, has_mem):
                if rc is not None and "sae}" not in intel(I.Decoder(64, form(*dops, rc=rc2), ip=IP).decode()):
                    UNSPELLED_ROUNDING.add(form.id)   # no text has it: left out
                    break
                out.append((dops, rc2))
                break
    return out


# EVEX forms whose rounding iced-x86 allows but no text spells (iced's formatter prints none, objdump `{rd-bad}`):
# `decorated_instances` leaves their rounding out. (The conversions from a 32-bit integer, exact in the wider type, take
# none: `iced_oracle.SDM_NO_ROUNDING`.)
UNSPELLED_ROUNDING: set[str] = set()


def fmt_int(v: int) -> str:
    return str(v) if -10 < v < 10 else ("-" if v < 0 else "") + hex(abs(v))


def memory_text(m) -> str:
    """``dword ptr [r12+r13*8-0x80]`` (GNU Intel syntax)."""
    parts = []
    if m.base is not None: parts.append(m.base.name)
    if m.index is not None: parts.append(f"{m.index.name}*{m.scale}")
    inner = "+".join(parts)
    if m.disp or not parts:
        inner += (fmt_int(m.disp) if m.disp < 0 or not parts else "+" + fmt_int(m.disp))
    size = SIZE_WORD.get(m.size)
    return f"{size} ptr [{inner}]" if size else f"[{inner}]"


def instance_text(form, ops: tuple, rel: int | None, label: str, length: int = 0) -> str:
    """GNU Intel text for ``form`` applied to ``ops``, written from the operands (not from x86gen's
    formatter); a branch target is ``label`` (the instruction's own address) plus ``length`` (the
    instruction's) and the displacement."""
    words = []
    mnemonic = form.mnemonic
    if form.id in GNU_REX_W: return GNU_REX_W[form.id]
    if form.id in GNU_FAR_BRANCH:   # (lcallw [rax], rex.w call fword ptr [rax])
        mnemonic, size = GNU_FAR_BRANCH[form.id]
        return f"{mnemonic} {memory_text(ops[0].with_size(size or 0))}"
    for o, x in zip(form.operands, ops):
        if isinstance(x, x86gen.Masked):   # a gather's destination or a scatter's memory operand: `zmm1 {k1}`
            words.append(f"{memory_text(x.op) if isinstance(x.op, x86gen.Mem) else x.op.name} {{{x.mask.name}}}")
        elif isinstance(x, x86gen.Reg): words.append(f"st({x.num})" if x.kind == "st" else x.name)   # GNU: st(1)
        elif isinstance(x, x86gen.Mem) and x.size in GNU_16BIT_IMAGE:
            words.append(memory_text(x))
            mnemonic += "w"   # GNU as: fldenvw / fnstenvw for the 14-byte image (o16), no size keyword
        elif isinstance(x, x86gen.Mem): words.append(memory_text(x.with_size(0) if mnemonic in GNU_UNSIZED else x))
        elif o.kind.startswith("rel"): words.append(f"{label}{length + rel:+#x}")
        else: words.append(fmt_int(x))
    if form.mnemonic in GNU_ST_ONLY and len(words) == 2 and form.operands[0].reg == "st0": words = words[1:]
    text = mnemonic + (" " + ", ".join(words) if words else "")
    # a form with a 32-bit implicit address (0x67): GNU as's `addr32 monitor`; jecxz and `umonitor eax` say it themselves
    # (GNU as refuses a second addr32 on them: "same type of prefix used twice"), as `enqcmd eax, [ecx]` does by its
    # registers (llvm-mc would write a second 0x67 for an addr32 there)
    if form.addrsize32 and form.mnemonic not in ("jecxz", "umonitor") and not any(o.mem is not None for o in form.operands):
        text = "addr32 " + text
    # GNU as: data16 xbegin is the rel16 form, data16 jmp/je/call the 16-bit branches (`GNU_SKIPS_DATA16`: not loop/jrcxz),
    # data16 ret the 16-bit return (RETNW: no operand says its size; `call ax` says it, and GNU as refuses a data16 there)
    if form.opsize16 and (form.is_branch or form.mnemonic == "ret"): text = "data16 " + text
    return f"{label}: {text}" if rel is not None else text


# --- judging what an assembler made of an instance -----------------------------------------------------


def judge(data: bytes, outcome: gnu_oracle.Outcome, is_branch: bool, options: int = 0) -> tuple[str, str]:
    """``("refused", why)``, ``("identical", "")``, ``("equivalent", reason)`` or ``("mismatch", why)`` (``options``:
    iced's DecoderOptions for the form, `iced_oracle.decoder_options`: AMD for a 16-bit branch)."""
    if not outcome.ok: return "refused", "; ".join(outcome.errors)[:200] or "no bytes"
    if outcome.relocated: return "refused", "bytes carry a relocation"
    got = outcome.data
    if got == data: return "identical", ""
    ins = I.Decoder(64, got, ip=IP, options=options).decode()
    if ins.code == I.Code.INVALID or ins.len != len(got):
        return "mismatch", f"assembler gave {got.hex(' ')}, not one instruction iced decodes"
    mine = I.Decoder(64, data, ip=IP, options=options).decode()
    if semantics(ins) != semantics(mine):
        return "mismatch", f"assembler gave {describe(got, IP, options)}, x86gen {describe(data, IP, options)}"
    if len(got) < len(data): return "equivalent", ALLOWED_REASONS[0]
    if len(got) == len(data): return "equivalent", ALLOWED_REASONS[1]
    return "equivalent", ALLOWED_REASONS[2]


def assemble_batched(units: list[str], tool: str) -> list[gnu_oracle.Outcome]:
    out = []
    for k in range(0, len(units), BATCH):
        out.extend(gnu_oracle.assemble_units(units[k:k + BATCH], tool))
    return out


# Texts llvm-mc 14 misencodes, whose llvm-mc answer counts as a refusal (GNU as's still counts): `data16 xbegin` is
# 66 C7 F8 with a rel32 to it (7 bytes; the operand-size prefix ignored), GNU as writes 66 C7 F8 cw (SDM Vol.2 XBEGIN rel16)
# The 16-bit near branches too: llvm-mc 14 writes `data16 jmp L` as a 66 byte before the 64-bit jmp (EB/E9 rel32, a
# 32-bit displacement after 0x66, which an AMD CPU reads as rel16 and two bytes of another instruction)
LLVM_MISENCODES = ("data16 xbegin", "data16 j", "data16 call", "data16 loop", "data16 addr32 loop")
# Texts llvm-mc 14 reads as another instruction than GNU as and iced-x86 do, by form (their llvm-mc answer counts as a
# refusal; GNU as's still counts): (the form ids, the texts, why)
LLVM_MISREADS = (
    (("MOV_RM16_SREG",), re.compile(r"mov (?:[abcd]x|[sd]i|[sb]p|r\d+w), [cdefgs]s"),
     "llvm-mc 14 encodes `mov cx, es` as 8C C1, `mov ecx, es` (the 32-bit form, which writes all of ecx); GNU as and"
     " iced-x86 write 66 8C C1 (o16 8C /r, which writes cx only)"),
    (("CALL_RM16", "JMP_RM16"), re.compile(r"(?:call|jmp) word ptr \[.*\]"),
     "llvm-mc 14 reads `call word ptr [m]` / `jmp word ptr [m]` as the far m16:32 call/jmp (FF /3, FF /5: the size"
     " keyword ignored, as for `GNU_FAR_BRANCH`); GNU as and iced-x86 (AMD) write the near o16 FF /2, FF /4"),
)


def llvm_refusal(text: str) -> str | None:
    """Why llvm-mc's answer to ``text`` counts as a refusal (`LLVM_MISENCODES`, `LLVM_MISREADS`), or None."""
    if any(t in text for t in LLVM_MISENCODES): return "llvm-mc 14 misencodes it (LLVM_MISENCODES)"
    return next((f"{why} (LLVM_MISREADS)" for _, pattern, why in LLVM_MISREADS if pattern.fullmatch(text)), None)


# Texts GNU as 2.40 assembles without their data16 ("Warning: skipping prefixes on `loop'"): the 16-bit loop/loope/loopne/
# jrcxz/jecxz (LOOP_REL8_16_RCX, JRCXZ_REL8_16 …), whose GNU answer counts as a refusal, so these forms have iced alone
GNU_SKIPS_DATA16 = ("data16 loop", "data16 addr32 loop", "data16 jrcxz", "data16 jecxz")


def judge_decorated(data: bytes, outcome: gnu_oracle.Outcome, is_branch: bool) -> tuple[str, str]:
    """`judge`, and an assembler's equivalent bytes must have the same AVX-512 decorations (mask, zeroing, broadcast,
    rounding: `iced_oracle.decorations`), which `iced_oracle.semantics` does not compare."""
    verdict, detail = judge(data, outcome, is_branch)   # (EVEX forms: no 16-bit branches, default decoding)
    if verdict == "equivalent":
        got, mine = I.Decoder(64, outcome.data, ip=IP).decode(), I.Decoder(64, data, ip=IP).decode()
        if decorations(got) != decorations(mine):
            return "mismatch", (f"assembler gave {describe(outcome.data, IP)} {decorations(got)},"
                                f" x86gen {describe(data, IP)} {decorations(mine)}")
    return verdict, detail


def cross_check(units: list[tuple[bytes, str, bool]], judge=judge) -> list[tuple[str, str, str]]:
    """For each ``(bytes, text, is_branch)``: ``(tool, verdict, detail)``. Both assemblers see every
    unit (one process each per batch); a mismatch from either is the verdict, else GNU as's
    confirmation (``tool`` "gnu+llvm" when llvm-mc confirms too), else llvm-mc's where GNU as refused;
    ``tool`` is "" when both refused."""
    verdicts: dict[str, list[tuple[str, str]]] = {}
    for tool, have in (("gnu", gnu_oracle.HAVE_GNU_AS), ("llvm", gnu_oracle.HAVE_LLVM_MC)):
        if have and units:
            outs = assemble_batched([u[1] for u in units], tool)
            verdicts[tool] = [("refused", llvm_refusal(u[1]))
                              if tool == "llvm" and llvm_refusal(u[1]) is not None else
                              ("refused", "GNU as skips its data16 (GNU_SKIPS_DATA16)")
                              if tool == "gnu" and any(t in u[1] for t in GNU_SKIPS_DATA16) else judge(u[0], oc, *u[2:])
                              for u, oc in zip(units, outs)]
    res = []
    for k in range(len(units)):
        got = {tool: v[k] for tool, v in verdicts.items()}
        bad = [(tool, v) for tool, v in got.items() if v[0] == "mismatch"]
        ok = [tool for tool, v in got.items() if v[0] != "refused"]
        if bad: res.append((bad[0][0], *bad[0][1]))
        elif ok: res.append(("+".join(ok), *got[ok[0]]))
        else: res.append(("", "refused", "; ".join(f"{tool}: {v[1]}" for tool, v in got.items()) or "no assembler"))
    return res


@dataclass
class FormResult:
    """What the second oracles made of a form's instances."""
    form_id: str
    instances: int = 0
    by: collections.Counter = field(default_factory=collections.Counter)   # "gnu"/"llvm"/"both" -> confirmed instances
    via_iced_text: int = 0
    refused: int = 0
    reasons: collections.Counter = field(default_factory=collections.Counter)
    failures: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        if self.failures: return "failed"
        if self.by["gnu"]: return "gnu"
        if self.by["llvm"]: return "llvm"
        return "iced alone"


def run_second_oracle(forms, encode=None) -> dict[str, FormResult]:
    """Build, encode and cross-check the instances of ``forms``. ``encode(form, ops, ip)`` (default:
    the form itself) is a seam for the meta-test."""
    if encode is None:
        def encode(form, ops, ip): return form(*ops, ip=ip) if form.is_branch else form(*ops)
    results: dict[str, FormResult] = {}
    insts: list[tuple[FormResult, Instance]] = []
    for form in forms:
        fr = results[form.id] = FormResult(form.id)
        try:
            cases = form_instances(form)
        except (Unbuildable, AttributeError) as ex:
            fr.failures.append(f"no instances: {ex}")
            continue
        if not cases: fr.failures.append("no valid instance drawn (iced's rules rejected every draw)")
        for ops, rel in cases:
            shown = ", ".join(str(x) if not isinstance(x, int) else hex(x) for x in ops)
            try:
                data = encode(form, ops, IP)
            except x86gen.EncodeError as ex:
                fr.failures.append(f"x86gen refused {form.id}({shown}), operands iced allows: {ex}")
                continue
            except Exception as ex:   # noqa: BLE001 - a bug in the form; reported, the other forms go on
                fr.failures.append(f"{form.id}({shown}) raised {type(ex).__name__}: {ex}")
                continue
            fr.instances += 1
            insts.append((fr, Instance(form, ops, data, rel)))
    units = []
    for k, (_fr, inst) in enumerate(insts):
        inst.text = instance_text(inst.form, inst.ops, inst.rel, f".Lu{k}", len(inst.data))
        units.append((inst.data, inst.text, inst.rel is not None, decoder_options(inst.form)))
    verdicts = cross_check(units)
    retry = []
    for k, ((fr, inst), (tool, verdict, detail)) in enumerate(zip(insts, verdicts)):
        if verdict == "refused" and inst.rel is None:
            retry.append(k)
        else:
            record(fr, inst, inst.text, tool, verdict, detail)
    # Both refused the text written here: try iced's spelling of the form's bytes.
    iced_units = [(d, intel(I.Decoder(64, d, ip=IP, options=o).decode()), False, o)
                  for k in retry for d, o in [(insts[k][1].data, decoder_options(insts[k][1].form))]]
    for k, unit, (tool, verdict, detail) in zip(retry, iced_units, cross_check(iced_units)):
        fr, inst = insts[k]
        if verdict != "refused": fr.via_iced_text += 1
        record(fr, inst, f"{inst.text!r}, then iced's {unit[1]!r}", tool, verdict, detail)
    return results


def record(fr: FormResult, inst: Instance, text: str, tool: str, verdict: str, detail: str) -> None:
    if verdict == "refused":
        fr.refused += 1
    elif verdict == "mismatch":
        fr.failures.append(f"{text}: {tool} {detail}")
    else:
        for t in tool.split("+"): fr.by[t] += 1
        if tool == "gnu+llvm": fr.by["both"] += 1
        if verdict == "equivalent": fr.reasons[detail] += 1


def summary(results: dict[str, FormResult]) -> str:
    st = collections.Counter(r.status for r in results.values())
    alone = sorted(fid for fid, r in results.items() if r.status == "iced alone")
    via = sum(1 for r in results.values() if r.via_iced_text and r.status in ("gnu", "llvm"))
    partial = sum(r.refused for r in results.values() if r.status in ("gnu", "llvm"))
    reasons = collections.Counter()
    for r in results.values(): reasons.update(r.reasons)
    n_inst = sum(r.instances for r in results.values())
    line = (f"second oracle: {len(results)} forms ({n_inst} instances), {st['gnu']} confirmed by GNU as, "
            f"{st['llvm']} by llvm-mc only, {st['iced alone']} iced alone"
            + (f" ({', '.join(alone)})" if alone else "") + f", {st['failed']} failed")
    both = sum(1 for r in results.values() if r.status == "gnu" and r.by["both"])
    extra = [f"{both} of the GNU-confirmed forms confirmed by llvm-mc too"]
    if via: extra.append(f"{via} forms confirmed only through iced's spelling")
    if partial: extra.append(f"{partial} instances refused by both in confirmed forms")
    if reasons: extra.append("equivalent: " + ", ".join(f"{n} {why}" for why, n in reasons.most_common()))
    return line + ("\n      (" + "; ".join(extra) + ")" if extra else "")


# --- AVX-512 decorations: x86gen's printed text through GNU as and llvm-mc -----------------------------------


def run_evex_text(forms) -> dict[str, FormResult]:
    """The `decorated_instances` of the EVEX ``forms``, encoded by the form (with ``rc=``) and printed by x86gen
    (``str(Instruction)``: the GNU as / llvm-mc dialect), cross-checked by both assemblers as `run_second_oracle`
    does: the text must assemble to the form's bytes (or an equivalent, `judge`)."""
    results: dict[str, FormResult] = {}
    insts, units = [], []
    for form in forms:
        fr = results[form.id] = FormResult(form.id)
        try: cases = decorated_instances(form)
        except (Unbuildable, AttributeError) as ex:
            fr.failures.append(f"no instances: {ex}")
            continue
        for ops, rc in cases:
            try:
                data = form(*ops, rc=rc)
                text = str(x86gen.Instruction(form.mnemonic, *ops, form=form, rc=rc))
            except Exception as ex:   # noqa: BLE001 - EncodeError or a bug: reported, the other forms go on
                fr.failures.append(f"{form.id}({', '.join(map(str, ops))}, rc={rc}) raised {type(ex).__name__}: {ex}")
                continue
            fr.instances += 1
            inst = Instance(form, ops, data, None, text)
            insts.append((fr, inst))
            units.append((data, text, False))
    for (fr, inst), (tool, verdict, detail) in zip(insts, cross_check(units, judge_decorated)):
        record(fr, inst, repr(inst.text), tool, verdict, detail)
    return results


EVEX_FORM_IDS = [f.id for f in ICED_FORMS if f.encoding_kind == "evex"]


@pytest.fixture(scope="module")
def evex_text():
    results = run_evex_text([x86gen.get_form(i) for i in EVEX_FORM_IDS])
    decorated = {fid: r for fid, r in results.items() if r.instances or r.failures}
    REPORT["second oracle, AVX-512 text"] = ("AVX-512 decorations, x86gen's text: " + summary(decorated).removeprefix("second oracle: ")
                                             + f"\n      {len(results) - len(decorated)} EVEX forms take no decoration"
                                             + (f"\n      rounding no text spells (left out): {len(UNSPELLED_ROUNDING)} forms"
                                                if UNSPELLED_ROUNDING else ""))
    return results


@pytest.mark.parametrize("form_id", EVEX_FORM_IDS)
def test_evex_decorated_text_through_gnu_as_and_llvm_mc(evex_text, form_id):
    """Masked, zeroing, broadcast and rounding instances of every EVEX form that allows them, as x86gen prints
    them, give the form's bytes through GNU as / llvm-mc (or are refused by both: the form is listed as iced alone in
    the summary, as `test_every_form_agrees_with_a_second_oracle` does; a form without decorations has no instance)."""
    r = evex_text[form_id]
    assert not r.failures, "\n".join(r.failures)
    assert r.instances == len(decorated_instances(x86gen.get_form(form_id)))


def test_evex_text_check_detects_a_wrong_printer(monkeypatch):
    """The check can fail: a printer that drops the mask (GNU as then encodes aaa = 000) is caught."""
    from x86gen import syntax
    monkeypatch.setattr(syntax, "format_decorated",
                        lambda x, n=0: x86gen.syntax.format_operand(x.op) if x.__class__ is x86gen.Masked else str(x.plain) + f"{{1to{n}}}")
    res = run_evex_text([x86gen.get_form("EVEX_VADDPS_ZMM_K1Z_ZMM_ZMMM512B32_ER")])
    assert res["EVEX_VADDPS_ZMM_K1Z_ZMM_ZMMM512B32_ER"].failures


# --- tests ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def second_oracle():
    results = run_second_oracle(ICED_FORMS)
    REPORT["second oracle"] = summary(results)
    return results


def test_every_form_agrees_with_a_second_oracle(second_oracle):
    bad = [f"{fid}: {msg}" for fid, r in second_oracle.items() for msg in r.failures]
    assert not bad, f"{len(bad)} disagreements with GNU as / llvm-mc:\n" + "\n".join(bad[:60])


def test_every_form_has_instances(second_oracle):
    """Each form got at least one instance to the assemblers (a form with none is a failure above too;
    this says it plainly)."""
    empty = sorted(fid for fid, r in second_oracle.items() if not r.instances)
    assert not empty, f"forms with no instance: {empty}"


def test_second_oracle_detects_wrong_bytes():
    """The check can fail: forms that encode another register, immediate or opcode are caught."""
    forms = [x86gen.get_form(i) for i in ("ADD_RM32_R32", "VEX_VADDPS_YMM_YMM_YMMM256", "MOV_R64_IMM64", "JMP_REL32_64")]

    def tampered(form, ops, ip):
        data = bytearray(form(*ops, ip=ip) if form.is_branch else form(*ops))
        data[-1] ^= 0x01   # last byte: ModRM r/m, imm or displacement
        return bytes(data)

    results = run_second_oracle(forms, encode=tampered)
    for f in forms:
        r = results[f.id]
        if r.status == "iced alone": continue   # pragma: no cover - the tools refuse nothing here
        assert r.failures, f"{f.id}: tampered bytes were not caught"


META_FORMS = ("ADD_RM32_R32", "VEX_VADDPS_YMM_YMM_YMMM256", "MOV_R64_IMM64", "JMP_REL32_64")


@pytest.mark.skipif(not gnu_oracle.HAVE_LLVM_MC, reason="llvm-mc not installed")
def test_llvm_misreads_are_real_and_gnu_confirms(second_oracle):
    """Each of `LLVM_MISREADS` is what llvm-mc 14 does today (another instruction than the form's, by iced's reading),
    and GNU as gives the form's bytes for the same text: the forms stay confirmed by GNU as."""
    units, forms = [], []
    for ids, pattern, _why in LLVM_MISREADS:
        for fid in ids:
            form = x86gen.get_form(fid)
            ops = next(ops for ops, _ in form_instances(form)
                       if pattern.fullmatch(instance_text(form, ops, None, "")))
            units.append((form(*ops), instance_text(form, ops, None, ""), False, decoder_options(form)))
            forms.append(fid)
            assert second_oracle[fid].status == "gnu", summary({fid: second_oracle[fid]})
    for (data, text, _, opt), out, fid in zip(units, assemble_batched([u[1] for u in units], "llvm"), forms):
        assert judge(data, out, False, opt)[0] == "mismatch", (fid, text, out)
    if gnu_oracle.HAVE_GNU_AS:
        for (data, text, *_), out in zip(units, assemble_batched([u[1] for u in units], "gnu")):
            assert out.data == data, (text, out)


@pytest.mark.skipif(not gnu_oracle.HAVE_LLVM_MC, reason="llvm-mc not installed")
def test_llvm_mc_answers_where_gnu_as_refuses(monkeypatch):
    monkeypatch.setattr(gnu_oracle, "HAVE_GNU_AS", False)
    results = run_second_oracle([x86gen.get_form(i) for i in META_FORMS])
    assert {r.status for r in results.values()} == {"llvm"}, summary(results)


def test_refused_by_both_is_iced_alone_and_listed(monkeypatch):
    """Text neither tool knows: first iced's spelling is tried, and when that is refused too the form is
    listed as iced alone, not failed."""
    forms = [x86gen.get_form(i) for i in META_FORMS]
    monkeypatch.setattr(sys.modules[__name__], "instance_text", lambda *a: "nosuchmnemonic eax")
    results = run_second_oracle(forms)
    assert {fid: r.status for fid, r in results.items() if fid != "JMP_REL32_64"} == dict.fromkeys(META_FORMS[:3], "gnu")
    assert all(r.via_iced_text for fid, r in results.items() if fid != "JMP_REL32_64")
    monkeypatch.setattr(sys.modules[__name__], "intel", lambda ins: "nosuchmnemonic eax")
    results = run_second_oracle(forms)
    assert {r.status for r in results.values()} == {"iced alone"}
    assert f"4 iced alone ({', '.join(sorted(META_FORMS))})" in summary(results)


def test_instances_fall_back_to_the_fuzz_sweep(monkeypatch):
    """An operand kind the draws here do not know takes its instances from test_fuzz_iced's sweep."""
    def unknown(*a): raise Unbuildable("pretend: a new operand kind")
    monkeypatch.setattr(sys.modules[__name__], "_drawn_instances", unknown)
    for fid in META_FORMS:
        cases = form_instances(x86gen.get_form(fid))
        assert 1 <= len(cases) <= N_INSTANCES and len(set(cases)) == len(cases), (fid, cases)
    results = run_second_oracle([x86gen.get_form(i) for i in META_FORMS])
    assert {r.status for r in results.values()} == {"gnu"}, summary(results)


def test_forms_beyond_iced_against_gnu_as():
    """The forms iced-x86 does not know (`oracle: llvm-mc-22`, tests/test_fuzz_llvm.py) go through GNU as 2.40 and
    llvm-mc 14 too, with the instances test_fuzz_llvm writes: where one of them accepts an instance, its bytes must be
    x86gen's; the forms neither knows (AVX10.2 and the rest are younger than both) are listed by name in the summary,
    with that reason."""
    from oracles import forms_checked_by
    from test_fuzz_llvm import Unbuildable, instances
    units, owners = [], []
    for f in forms_checked_by("llvm-mc-22"):
        try: texts = instances(f, 3)
        except Unbuildable: continue
        for t in texts:
            units.append(t)
            owners.append(f.id)
    known, bad = collections.defaultdict(int), []
    for tool in ("gnu", "llvm"):
        if not (gnu_oracle.HAVE_GNU_AS if tool == "gnu" else gnu_oracle.HAVE_LLVM_MC): continue
        for fid, text, out in zip(owners, units, gnu_oracle.assemble_units(units, tool)):
            if not out.ok: continue
            known[fid] += 1
            ours = x86gen.assemble(text)
            if out.data != ours: bad.append(f"{fid}: {text!r}: {tool} {out.data.hex(' ')}, x86gen {ours.hex(' ')}")
    unknown = sorted(set(owners) - set(known))
    REPORT["second oracle, beyond iced"] = (
        f"second oracle, forms beyond iced: {len(set(owners))} forms, {len(known)} known to GNU as 2.40 or llvm-mc 14 "
        f"(bytes equal); {len(unknown)} known to neither (younger than both: llvm-mc-22 alone checks them)"
        + (f", e.g. {', '.join(unknown[:4])}" if unknown else ""))
    assert not bad, "\n".join(bad[:40])
