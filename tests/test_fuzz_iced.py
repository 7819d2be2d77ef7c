"""Hypothesis fuzz of every x86gen form against iced-x86.

For each form of `x86gen.all_forms()` (one test per form id) Hypothesis draws operands the form
takes — every register of the class (for r8 also spl..dil, r8b..r15b and ah..bh; xmm/ymm/zmm 0-31 for
EVEX forms, 0-15 for the others; for EVEX forms about half the examples also ask for masks k1-k7, zeroing,
broadcast of 16/32/64-bit elements and rounding/SAE, allowed by the form or not, `run_evex_case`), memory operands
with every base (rsp/rbp/r12/r13 included), every index but rsp (r12 included) and scale,
displacements at the disp8/disp32 edges, RIP-relative, [index*scale+disp32] and absolute [disp32],
immediates at and beyond the edges of their range, branch targets in and out of rel8/rel32 reach —
and checks:

- valid operands: the form's bytes decode (iced, 64-bit) to exactly one instruction using all
  bytes, whose Code is the form id and whose operands are the ones asked for; iced's Encoder
  re-encodes that instruction to the same bytes; iced's view converted back to x86gen operands
  encodes to the same bytes; `x86gen.encode(mnemonic, ...)` and `x86gen.assemble(<iced's Intel
  text>)` give an instruction iced decodes to the same semantics, in no more bytes;
- invalid operands: ah/ch/dh/bh where the instruction needs a REX prefix raise `OperandError`;
  immediates and branch targets out of range raise `ImmediateRangeError`. What is valid is decided
  here from iced's opcode tables (operand kinds, REX.W), not from x86gen.

Random draws rarely hit one particular corner in one particular form, so `test_form_corner_cases`
also runs every form through a fixed sweep (every register in every position, every memory corner,
every immediate/branch edge, ah..bh next to REX operands) with the same checks. A form that cannot
be fuzzed (an operand kind the strategies do not know, an id iced lacks) fails, it is never skipped.
"""
from __future__ import annotations

import functools

import iced_x86 as I
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.errors import StopTest
from iced_oracle import (
    _GPR_WIDTH_IMMATERIAL,
    _R32_OF,
    CODE_NAMES,
    FORM_BRANCH_KINDS,
    FORM_IMM_KINDS,
    FUZZ_FAILED,
    FUZZ_STATS,
    ICED_AMBIGUOUS,
    ICED_FORMS,
    IMM_KINDS,
    MNEMONIC_NAMES,
    OPKIND_NAMES,
    accepted_imm_ranges,
    code_of,
    decode_one,
    decoder_options,
    decorated,
    decorations,
    describe,
    evex_allows,
    form_imm_ranges,
    in_ranges,
    intel,
    memory_bits,
    memory_disp,
    needs_rex_w,
    operand_registers,
    reencode_canonical,
    reg_name,
    request_mnemonic,
    semantics,
    signed,
    to_x86gen,
)
from oracles import spec_forms

import x86gen
from x86gen.selection.candidates import VEX_ON_REQUEST

R = x86gen.REGISTERS
GPR64 = [r for r in R.values() if r.kind == "r64" and not r.hi16]   # (r16-r31: REX2 forms only, llvm-mc-22-checked)
# registers a legacy/VEX form takes (xmm/ymm 0-15), and an EVEX form (xmm/ymm/zmm 0-31, SDM Vol.2 2.7.1)
REG_CLASSES = {k: [r for r in R.values() if r.kind == k and not r.hi16]
               for k in ("r8", "r16", "r32", "r64", "xmm", "ymm", "mm", "k", "tmm", "st", "sreg", "cr", "dr", "bnd")}
assert len(REG_CLASSES["r8"]) == 20 and all(len(REG_CLASSES[k]) == 16 for k in ("r16", "r32", "r64", "xmm", "ymm"))
assert len(REG_CLASSES["mm"]) == len(REG_CLASSES["k"]) == len(REG_CLASSES["tmm"]) == 8   # no REX/VEX extension
assert len(REG_CLASSES["st"]) == 8 and len(REG_CLASSES["cr"]) == 5 and len(REG_CLASSES["dr"]) == 8 and len(REG_CLASSES["bnd"]) == 4
EVEX_REG_CLASSES = {**REG_CLASSES, **{k: [r for r in R.values() if r.kind == k] for k in ("xmm", "ymm", "zmm")}}
assert all(len(EVEX_REG_CLASSES[k]) == 32 for k in ("xmm", "ymm", "zmm"))


def regs_of(form, o) -> list:
    """The registers form operand ``o`` takes: 0-31 in EVEX forms, 0-15 elsewhere; a ``kp1`` operand (vp2intersectd/q's
    mask-register pair) even k registers only (`iced_oracle.operand_registers`; x86gen refuses an odd one,
    `test_kp1_odd_k_refused`)."""
    return operand_registers(o.kind, form.encoding_kind == "evex")
INDEXES = [r for r in GPR64 if r.name != "rsp"]
DISPS = [0, 1, -1, 8, 127, 128, -128, -129, 255, 256, 0x7FFF, -0x8000, 0x7FFFFFFF, -0x80000000, 0x7FFFFFFE, -0x7FFFFFFF]
IPS = [0x80001000, 0x100000000, 0x7FFF00000000, 0x0000_5555_5555_4000]
FORMS = ICED_FORMS


# --- strategies --------------------------------------------------------------------------------------


SPECIAL_BASES = [R["rsp"], R["rbp"], R["r12"], R["r13"]]   # need a SIB byte / an explicit disp8 0
# 32-bit addresses (the 0x67 prefix; SDM Vol.2 3.6): the same special cases with esp/ebp/r12d/r13d
GPR32 = [r for r in R.values() if r.kind == "r32" and not r.hi16]
SPECIAL_BASES32 = [R["esp"], R["ebp"], R["r12d"], R["r13d"]]
INDEXES32 = [r for r in GPR32 if r.name != "esp"]


def disp_strategy():
    return st.one_of(st.just(0), st.sampled_from(DISPS), st.integers(-128, 127), st.integers(-(1 << 31), (1 << 31) - 1))


def base_strategy():
    return st.one_of(st.sampled_from(GPR64), st.sampled_from(SPECIAL_BASES))


def address32(code: int) -> bool:
    """Is ``code`` a form with a 32-bit address size and an explicit memory operand (iced's ``a32`` with one:
    MOVDIR64B_R32_M512, ENQCMD_R32_M512, ENQCMDS_R32_M512)? Its memory operand is a 32-bit address (an `x86gen.A32Mem`),
    and a 64-bit one is refused (SDM Vol.2 MOVDIR64B, ENQCMD: the address size applies to ModRM.reg's address too)."""
    oc = I.OpCodeInfo(code)
    return oc.address_size == 32 and any(oc.op_kind(i) == I.OpCodeOperandKind.MEM for i in range(oc.op_count))


@st.composite
def memory(draw, bits: int, a32: bool = False):
    """A memory operand of ``bits`` (0: any size, as lea's `m`); with ``a32`` (a form whose memory operand is a 32-bit
    address, `address32`) mostly a 32-bit address."""
    if bits:
        size = draw(st.sampled_from([bits, bits, bits, 0]))   # sized, or unsized (the form decides)
    else:
        size = draw(st.sampled_from([0, 0, 8, 16, 32, 64, 128, 256]))
    shape = draw(st.sampled_from(["base", "base", "base+index", "base+index", "rip", "index", "abs", "far", "a32", "a32"]
                                 + ["a32"] * 20 * a32))
    if shape == "a32":   # a 32-bit address (0x67): base, base+index, index only, eip-relative; or 32- and 64-bit mixed
        disp = draw(disp_strategy())
        kind = draw(st.sampled_from(["base", "base+index", "base+index", "index", "eip", "mixed"]))
        base = draw(st.one_of(st.sampled_from(GPR32), st.sampled_from(SPECIAL_BASES32)))
        sc = draw(st.sampled_from([1, 2, 4, 8]))
        if kind == "base": return x86gen.Mem(base, None, 1, disp, size)
        if kind == "base+index": return x86gen.Mem(base, draw(st.sampled_from(INDEXES32)), sc, disp, size)
        if kind == "index": return x86gen.Mem(None, draw(st.sampled_from(INDEXES32)), sc, disp, size)
        if kind == "eip": return x86gen.Mem(R["eip"], None, 1, disp, size)
        return ("mixed", base, draw(st.sampled_from(INDEXES)))   # the test checks Mem refuses it
    if shape == "far":   # an absolute address no sign-extended disp32 reaches: only moffs operands take it
        return x86gen.Mem(None, None, 1, draw(st.sampled_from([0x80000000, 0xFFFFFFFF, 1 << 32, 0x123456789, -0x80000001])), size)
    disp = draw(disp_strategy())
    if shape == "base": return x86gen.Mem(draw(base_strategy()), None, 1, disp, size)
    if shape == "base+index":
        return x86gen.Mem(draw(base_strategy()), draw(st.sampled_from(INDEXES)), draw(st.sampled_from([1, 2, 4, 8])), disp, size)
    if shape == "rip": return x86gen.Mem(R["rip"], None, 1, disp, size)
    if shape == "index": return x86gen.Mem(None, draw(st.sampled_from(INDEXES)), draw(st.sampled_from([1, 2, 4, 8])), disp, size)
    return x86gen.Mem(None, None, 1, disp, size)


VEC_INDEX = {"x": REG_CLASSES["xmm"], "y": REG_CLASSES["ymm"]}   # a VSIB operand's index register, by kind (vm32x: xmm)
# AVX-512 (EVEX) VSIB: index registers 0-31 (EVEX.V̄' is bit 4, SDM Vol.2 2.7.2) and zmm (vm32z/vm64z)
EVEX_VEC_INDEX = {k: EVEX_REG_CLASSES[f"{k}mm"] for k in "xyz"}
OTHER_INDEX = {"x": "y", "y": "z", "z": "x"}   # a VSIB operand's wrong index class (refused)


def is_vsib(o) -> bool:
    return o.kind.startswith("vm")


@st.composite
def vsib_memory(draw, kind: str, bits: int):
    """A VSIB memory operand for a ``kind`` (vm32x … vm64z) operand of ``bits``-bit elements: any base (or none),
    every index register of the class (0-31: VEX forms refuse 16-31), every scale, disp8/disp32 edges; sometimes
    unsized."""
    size = draw(st.sampled_from([bits, bits, 0]))
    base = draw(st.one_of(st.none(), base_strategy(), st.sampled_from(GPR32)))   # (a 32-bit base: a 32-bit address, 0x67)
    index = draw(st.sampled_from(EVEX_VEC_INDEX[kind[-1]]))
    return x86gen.Mem(base, index, draw(st.sampled_from([1, 2, 4, 8])), draw(disp_strategy()), size)


# 64-bit absolute addresses (moffs operands, A0-A3): inside and at the edges of what an absolute disp32 reaches
# (sign-extended: 0..0x7fffffff, 0xffffffff80000000..) and beyond it
ABS_ADDRESSES = [0, 0x10, 0x7FFFFFFF, 0x80000000, 0xFFFFFFF0, 0xFFFFFFFF, 1 << 32, 0x123456789, 0x7FFFFFFFFFFFFFFF,
                 -(1 << 63), -0x80000001, -0x80000000, -1, 0xFFFFFFFF7FFFFFFF, 0xFFFFFFFF80000000, 0xFFFFFFFFFFFFFFFF]


@st.composite
def moffs(draw, bits: int):
    """A memory operand for a moffs operand: mostly absolute addresses (as a signed or unsigned 64-bit value),
    sometimes a based one (which the form must refuse)."""
    size = draw(st.sampled_from([bits, bits, 0]))
    kind = draw(st.sampled_from(["abs", "abs", "abs", "based"]))
    if kind == "based": return draw(memory(bits))
    return x86gen.Mem(None, None, 1, draw(st.one_of(st.sampled_from(ABS_ADDRESSES), st.integers(-(1 << 63), (1 << 64) - 1))), size)


def imm_strategy(ranges_a, ranges_b):
    """Values at, inside and just outside both sets of closed intervals, and far outside."""
    edges = set()
    for lo, hi in list(ranges_a) + list(ranges_b):
        edges |= {lo, hi, lo - 1, hi + 1, lo + 1, hi - 1}
    inside = [st.integers(lo, hi) for lo, hi in list(ranges_a) + list(ranges_b)]
    return st.one_of(st.sampled_from(sorted(edges)), *inside, st.sampled_from([0, 1, -1, 2]),
                     st.integers(-(1 << 65), 1 << 65))


def ip16(form) -> bool:
    """A 16-bit near branch (o16 jmp/jcc/call/loop/jrcxz), whose target is a 16-bit IP: targets 0..0xffff only,
    reached as (next IP + rel) AND 0FFFFH (SDM Vol.2 JMP/Jcc, operand size 16); iced decodes it with DecoderOptions.AMD.
    (So it does o16 call/jmp r/m16 and ret, CALL_RM16 … RETNW, which have no rel operand: `iced_oracle.decoder_options`.)"""
    return decoder_options(form) == I.DecoderOptions.AMD


def branch_len(code: int) -> int:
    """Length of this branch form, measured with iced's encoder."""
    try: ins = I.Instruction.create_branch(code, 0x1010)
    except ValueError:   # xbegin's operand is no near branch to create_branch: iced's create_xbegin, with the Code asked
        ins = I.Instruction.create_xbegin(64, 0x1010)
        ins.code = code
    enc = I.Encoder(64)
    return enc.encode(ins, 0x1000)


class Unfuzzable(Exception):
    pass


def operand_strategy(form, i, code):
    """Strategy for operand ``i``: values whose validity the checks below decide independently."""
    o = form.operands[i]
    oc = I.OpCodeInfo(code)
    if o.loc == "fixed":
        return st.just(R[o.reg])
    if o.loc == "moffs":
        if k_moffs(oc, i) is None: raise Unfuzzable(f"{form.id}: {o.kind} but iced says {oc.op_kind(i)}")
        return moffs(o.mem)
    if o.loc in IMPLICIT_BASE:   # [rsi] / es:[rdi] / [rbx] (xlat), sized or not; now and then another address (an error)
        base = R[IMPLICIT_BASE[o.loc]]
        return st.one_of(st.sampled_from([x86gen.Mem(base, size=o.mem), x86gen.Mem(base)]), memory(o.mem))
    if o.kind == "1":
        return st.one_of(st.just(1), st.just(1), st.sampled_from([0, 2, -1]))
    if o.imm is not None:
        k = oc.op_kind(i)
        if o.kind.startswith("rel"):
            if k not in FORM_BRANCH_KINDS: raise Unfuzzable(f"{form.id}: {o.kind} but iced says {k}")
            b = FORM_BRANCH_KINDS[k]
            lim = 1 << (b - 1)
            if ip16(form):   # a 16-bit IP: near the instruction's IP (modulo 2^16), or anywhere (out of reach beyond 0xffff)
                return st.one_of(st.tuples(st.just("d"), st.sampled_from([-lim, lim - 1, -lim - 1, lim, 0, -2])
                                           | st.integers(-2 * lim, 2 * lim)),
                                 st.tuples(st.just("abs"), st.sampled_from([0, 1, 0xFFFF, 0x10000, -1, 0x12345678])
                                           | st.integers(-2, 0x10001) | st.integers(-(1 << 64), 1 << 64))
                                 ).map(lambda t: ("ip16", *t))
            # displacement from the end of the instruction; the target is computed in the test
            return st.one_of(st.sampled_from([-lim, lim - 1, -lim - 1, lim, 0, -2, 127, 128, -128, -129,
                                              (1 << 31) - 1, -(1 << 31), 1 << 31, -(1 << 31) - 1]),
                             st.integers(-lim, lim - 1), st.integers(-(1 << 33), 1 << 33)).map(lambda d: ("rel", d))
        if k not in FORM_IMM_KINDS: raise Unfuzzable(f"{form.id}: operand {i + 1} {o.kind}, iced says {k}")
        return imm_strategy(form.imm_ranges(i), form_imm_ranges(code, i))
    choices = []
    if o.reg is not None:
        classes = EVEX_REG_CLASSES if form.encoding_kind == "evex" else REG_CLASSES
        if o.reg not in classes: raise Unfuzzable(f"{form.id}: no registers of class {o.reg}")
        choices.append(st.sampled_from(regs_of(form, o)))
    if o.mem is not None and is_vsib(o):   # mostly VSIB operands; a general one (or the other index class) is refused
        choices += [vsib_memory(o.kind, o.mem) for _ in range(4)]   # (four strategies: four times as likely)
        choices += [memory(o.mem), vsib_memory("vm" + OTHER_INDEX[o.kind[-1]], o.mem)]
    elif o.mem is not None:
        choices.append(memory(o.mem, address32(code)))
    if not choices: raise Unfuzzable(f"{form.id}: cannot draw operand {o!r}")
    return st.one_of(*choices)


# the base register of an implicit memory operand, by its location (isa/README.md)
IMPLICIT_BASE = {"rsi": "rsi", "rdi": "rdi", "esrdi": "rdi", "rbxal": "rbx"}


def k_moffs(oc, i):
    """iced's operand kind for a moffs operand (MEM_OFFS), or None."""
    k = oc.op_kind(i)
    return k if k == I.OpCodeOperandKind.MEM_OFFS else None


_STRATEGIES: dict[str, object] = {}


def case_strategy(form):
    if form.id not in _STRATEGIES:
        code = code_of(form.id)
        if I.OpCodeInfo(code).op_count != len(form.operands):
            raise Unfuzzable(f"{form.id}: {len(form.operands)} operands, iced's {CODE_NAMES[code]} has {I.OpCodeInfo(code).op_count}")
        parts = [operand_strategy(form, i, code) for i in range(len(form.operands))]
        deco = evex_decorations(form.evex_mask_required) if form.encoding_kind == "evex" else st.none()
        _STRATEGIES[form.id] = st.tuples(st.sampled_from(IPS) | st.integers(1 << 32, 1 << 46), st.tuples(*parts), deco)
    return _STRATEGIES[form.id]


def evex_decorations(mask_required: bool = False):
    """AVX-512 decorations to ask of an EVEX form (whether it allows them or not: iced decides which are valid):
    (mask k1-k7 or 0, zeroing, broadcast element bits or 0 (applied when the rm operand is memory), rounding
    RN/RD/RU/RZ_SAE, SAE or None). About half the examples are plain; for a gather/scatter (``mask_required``) most
    ask for a mask k1-k7 alone, the rest for none (refused) or other decorations."""
    if mask_required:
        return st.one_of(st.tuples(st.integers(1, 7), st.just(False), st.just(0), st.just(None)),
                         st.tuples(st.integers(1, 7), st.just(False), st.just(0), st.just(None)), evex_decorations())
    return st.one_of(st.none(), st.tuples(st.sampled_from([0, 0, 1, 2, 3, 4, 5, 6, 7]), st.booleans(),
                                          st.sampled_from([0, 0, 32, 64, 16]), st.sampled_from([None, None, 0, 1, 2, 3, 4])))


# --- the expected outcome, decided from iced's tables --------------------------------------------


def needs_rex(form, code, ops) -> bool:
    """Legacy encoding needs a REX prefix: REX.W, a register r8-r15 (or its parts), spl/bpl/sil/dil,
    or a memory operand with an r8-r15 base or index (3DNow! forms too: legacy bytes, AMD APM Vol.3 1.2.7)."""
    if form.encoding_kind not in ("legacy", "d3now"): return False
    if needs_rex_w(code): return True
    for o, x in zip(form.operands, ops):
        if o.loc == "fixed": continue
        if isinstance(x, x86gen.Reg):
            if x.num >= 8 or (x.kind == "r8" and 4 <= x.num <= 7 and not x.high): return True
        elif isinstance(x, x86gen.Mem):
            if (x.base is not None and x.base.kind in ("r64", "r32") and x.base.num >= 8) or (x.index is not None and x.index.num >= 8):
                return True
    return False


@functools.cache
def hint_nop_taken(code: int, reg_field: int, memory: bool) -> bool:
    """Does iced decode the reserved-NOP form ``code`` (0F 0D / 0F 18-1F /r) with this ModRM.reg value and a register
    or memory r/m as another instruction? Asked of iced's decoder on a probe: the form's prefixes and opcode
    (iced's OpCodeInfo) with ModRM mod=11 rm=001, or mod=00 rm=000 ([rax])."""
    oc = I.OpCodeInfo(code)
    if memory and (oc.op_code & 0xFF, reg_field) in _BEYOND_ICED_HINTS: return True
    head = {16: b"\x66", 32: b"", 64: b"\x48"}[oc.operand_size]
    probe = head + bytes([0x0F, oc.op_code & 0xFF, (reg_field << 3) | (0x00 if memory else 0xC1)])
    return I.Decoder(64, probe).decode().code != code


# 0F xx /digit forms with a memory operand that iced 1.21 does not know but the spec has (`oracle: llvm-mc-22`: MOVRS's
# prefetchrst2 m8 = 0F 18 /4): iced decodes those bytes as the reserved NOP, x86gen refuses them there
_BEYOND_ICED_HINTS = {(f.opcode, int(f.modrm)) for f in spec_forms() if f.oracle != "iced" and f.encoding_kind == "legacy"
                      and f.opcode_map == 1 and f.modrm in tuple("01234567") and all(o.reg is None for o in f.operands)}


# the FP16 complex multiplies: #UD if the destination is either source (SDM Vol.2 VFCMULCPH/VFMULCPH, VFCMADDCPH/
# VFMADDCPH and the CSH scalars; iced-x86 decodes those bytes as INVALID, GNU as refuses them)
COMPLEX_FP16 = {"vfmulcph", "vfcmulcph", "vfmaddcph", "vfcmaddcph", "vfmulcsh", "vfcmulcsh", "vfmaddcsh", "vfcmaddcsh"}


def expected_error(form, code, ops, rel_disp, masked: bool = False):
    """(None, None) if the operands are valid for the form (``masked``: with a mask k1-k7 on the first), else (the
    exception class x86gen must raise, why: "one" / "range" / "high8")."""
    if any(isinstance(x, x86gen.Reg) and x.high for x in ops) and needs_rex(form, code, ops):
        return x86gen.OperandError, "high8"   # (whatever else is wrong: OperandError is the base class)
    oc = I.OpCodeInfo(code)
    reg_address = any(oc.op_kind(i) in (I.OpCodeOperandKind.R32_REG_MEM, I.OpCodeOperandKind.R64_REG_MEM) for i in range(oc.op_count))
    if reg_address and any(isinstance(x, x86gen.A32Mem) for x in ops) != (oc.address_size == 32):
        # movdir64b/enqcmd/enqcmds: the address size applies to the ModRM.reg address too, r32 with a 32-bit address and
        # r64 with a 64-bit one (SDM Vol.2 MOVDIR64B; iced: "Register operand size must equal memory addressing mode")
        return x86gen.OperandError, "a32"
    tiles = [x.num for o, x in zip(form.operands, ops) if o.reg == "tmm" and isinstance(x, x86gen.Reg) and x.kind == "tmm"]
    if len(set(tiles)) != len(tiles): return x86gen.DistinctRegistersError, "distinct"   # AMX: #UD (SDM Vol.2 TDPBSSD)
    if form.mnemonic in COMPLEX_FP16 and any(isinstance(x, x86gen.Reg) and x.num == getattr(ops[0], "num", None) for x in ops[1:3]):
        return x86gen.DistinctRegistersError, "distinct"   # SDM Vol.2 VFMULCPH: #UD if the destination is a source
    for o, x in zip(form.operands, ops):
        if not is_vsib(o): continue
        if isinstance(x, x86gen.A32Mem): x = x.plain   # a 32-bit address: VSIB or not as its 64-bit one
        if not (isinstance(x, x86gen.VsibMem) and x.index.kind[0] == o.kind[-1]): return x86gen.OperandError, "vsib"
        if form.encoding_kind != "evex" and x.index.num >= 16: return x86gen.OperandError, "vsib"   # VEX: xmm0-15/ymm0-15
        if form.evex_mask_required and not masked:   # k0 is #UD (SDM Vol.2 VPGATHERDD/VPSCATTERDD)
            return x86gen.EvexOperandError, "mask"
        if o is form.operands[0]: continue   # a scatter may store its own index
        # SDM Vol.2 VGATHERDPS/VPGATHERDD: #UD if any two of destination, index and mask are the same register
        nums = [y.num for p, y in zip(form.operands, ops) if p.loc in ("reg", "vvvv")] + [x.index.num]
        if len(set(nums)) != len(nums): return x86gen.DistinctRegistersError, "distinct"
    if form.id.startswith("RESERVEDNOP_") and hint_nop_taken(code, ops[1].num & 7, isinstance(ops[0], x86gen.Mem)):
        return x86gen.OperandError, "taken"   # these bytes are another instruction to iced (a prefetch, nop r/m, cldemote)
    if form.id in ("XCHG_R16_AX", "XCHG_R32_EAX", "XCHG_R64_RAX") and ops[0].num == 0:
        # 90+r with the accumulator itself is 90, NOP (SDM Vol.2 XCHG); iced encodes it and decodes NOPD/NOPW/NOPQ
        return x86gen.OperandError, "nop"
    for i, (o, x) in enumerate(zip(form.operands, ops)):
        if o.kind == "1" and x != 1: return x86gen.OperandError, "one"
        if o.reg == "sreg" and "w" in o.role and x is R["cs"]:
            return x86gen.OperandError, "cs"   # SDM Vol.2 MOV: "If an attempt is made to load the CS register, #UD" (iced: INVALID)
        if o.loc == "moffs" and (x.base is not None or x.index is not None): return x86gen.OperandError, "moffs"
        if o.loc in IMPLICIT_BASE:
            p = x.plain if x.__class__ is x86gen.A32Mem else x   # [esi]: 0x67, when every implicit address is 32-bit
            if p.base is not R[IMPLICIT_BASE[o.loc]] or p.index is not None or p.disp or \
                    len({y.__class__ is x86gen.A32Mem for f, y in zip(form.operands, ops) if f.loc in IMPLICIT_BASE}) > 1:
                return x86gen.OperandError, "implicit"   # the address is the instruction's (SDM Vol.2 MOVS, XLAT)
        if o.kind == "sibmem" and x.base is not None and x.base.kind == "rip":   # no SIB form (eip too; SDM Vol.2 TILELOADD)
            return x86gen.OperandError, "sibmem"
        if form.cpuid == "MPX" and isinstance(x, x86gen.A32Mem):   # 0x67 has no effect on MPX in 64-bit mode (SDM Vol.1
            return x86gen.OperandError, "mpx a32"                   # 17.5.1; iced decodes 67 0F 1A as a 64-bit address)
        if (o.kind == "mib" or form.mnemonic == "bndmk") and isinstance(x, x86gen.Mem) and x.base is R["rip"]:
            return x86gen.OperandError, "mpx rip"   # #UD in 64-bit mode (SDM Vol.2 BNDMK, BNDLDX, BNDSTX; iced: INVALID)
        if o.kind == "mib" and isinstance(x, x86gen.Mem) and x.index is not None and x.scale != 1:
            return x86gen.OperandError, "mib scale"   # the scale is ignored (SDM Vol.2 BNDLDX): iced decodes another address
        if o.loc != "moffs" and isinstance(x, x86gen.Mem) and x.base is None and x.index is None \
                and (1 << 31) <= x.disp & 0xFFFFFFFFFFFFFFFF < (1 << 64) - (1 << 31):
            return x86gen.OperandError, "far"   # absolute [disp32] is sign-extended (SDM Vol.2 2.2.1.3)
        if o.kind.startswith("rel") and ip16(form) and not 0 <= x <= 0xFFFF:
            return x86gen.ImmediateRangeError, "reach"   # a 16-bit IP reaches 0..0xffff only
        if o.imm is not None:
            v = rel_disp if o.kind.startswith("rel") else x
            if not in_ranges(v, form_imm_ranges(code, i)): return x86gen.ImmediateRangeError, "range"
    return None, None


# --- checks -----------------------------------------------------------------------------------------


def check_operands(form, ins, ops, ip, decorated: bool = False):
    """The decoded instruction's operands are the ones asked for. Plain EVEX operands must decode with no masking,
    zeroing, broadcast or rounding (the decorated ones are checked by `run_evex_case`; ``decorated``: not here)."""
    assert ins.op_count == len(ops), f"{ins.op_count} operands decoded, {len(ops)} asked"
    if form.encoding_kind == "evex" and not decorated:
        assert (ins.op_mask, ins.zeroing_masking, ins.is_broadcast, ins.rounding_control, ins.suppress_all_exceptions) == \
            (I.Register.NONE, False, False, I.RoundingControl.NONE, False), f"{intel(ins)!r}: masking/broadcast/rounding asked for none"
    for i, (o, x) in enumerate(zip(form.operands, ops)):
        k = ins.op_kind(i)
        where = f"operand {i + 1} ({o.kind}) of {intel(ins)!r}"
        if isinstance(x, x86gen.Reg):
            assert k == I.OpKind.REGISTER, f"{where}: asked register {x}, decoded kind {k}"
            assert reg_name(ins.op_register(i)) == x.name, f"{where}: asked {x}"
        elif isinstance(x, x86gen.Mem) and o.loc in IMPLICIT_BASE:
            a32 = x.__class__ is x86gen.A32Mem   # [esi], es:[edi], [ebx+al]: 0x67
            want = {"rsi": I.OpKind.MEMORY_SEG_ESI if a32 else I.OpKind.MEMORY_SEG_RSI,
                    "rdi": I.OpKind.MEMORY_SEG_EDI if a32 else I.OpKind.MEMORY_SEG_RDI,
                    "esrdi": I.OpKind.MEMORY_ESEDI if a32 else I.OpKind.MEMORY_ESRDI, "rbxal": I.OpKind.MEMORY}[o.loc]
            assert k == want, f"{where}: asked {x}, decoded kind {k}"
            if o.loc == "rbxal":
                assert (ins.memory_base, ins.memory_index) == (I.Register.EBX if a32 else I.Register.RBX, I.Register.AL), where
            assert memory_bits(ins) == o.mem, f"{where}: memory size {memory_bits(ins)} bits, asked {x}"
        elif isinstance(x, x86gen.Mem):
            assert k == I.OpKind.MEMORY, f"{where}: asked memory {x}, decoded kind {k}"
            base = "none" if x.base is None else x.base.name
            index = "none" if x.index is None else x.index.name
            assert (reg_name(ins.memory_base), reg_name(ins.memory_index)) == (base, index), f"{where}: asked {x}"
            if x.index is not None: assert ins.memory_index_scale == x.scale, f"{where}: asked {x}"
            assert memory_disp(ins) == x.disp, f"{where}: asked {x}, displacement {memory_disp(ins):#x}"
            if o.mem: assert memory_bits(ins) == (x.size or o.mem), f"{where}: memory size {memory_bits(ins)} bits, asked {x}"
        elif o.kind.startswith("rel") and ip16(form):
            assert k == I.OpKind.NEAR_BRANCH16 and ins.near_branch16 == x, f"{where}: asked target {x:#x}"
        elif o.kind.startswith("rel"):
            assert k == I.OpKind.NEAR_BRANCH64 and ins.near_branch64 == x, f"{where}: asked target {x:#x}"
        else:
            assert k in IMM_KINDS, f"{where}: asked immediate {x}, decoded kind {k}"
            size = 4 if o.imm == 4 else IMM_KINDS[k][1]   # (vpermil2ps's imm4: iced decodes imm8[3:0] as an 8-bit immediate)
            mask = (1 << size) - 1
            assert ins.immediate(i) & mask == x & mask, f"{where}: asked {x:#x}, decoded {ins.immediate(i):#x}"


def matches_request(ins, mnemonic_iced, ops) -> str | None:
    """For `x86gen.encode` with operands one form rejected but another may take: does the decoded
    instruction do what was asked? Returns a reason if not."""
    if mnemonic_iced == "xchg" and len(ops) == 2:   # as `iced_oracle.semantics` has it: xchg ax, ax is a nop, and the
        if ops[0] is ops[1] and ops[0].kind != "r32": return _matches_request(ins, "nop", ())   # order says nothing
        why = _matches_request(ins, "xchg", ops)
        return why if why is None or _matches_request(ins, "xchg", ops[::-1]) is not None else None
    return _matches_request(ins, mnemonic_iced, ops)


def _matches_request(ins, mnemonic_iced, ops) -> str | None:
    sem = semantics(ins)
    if sem[0] != mnemonic_iced: return f"mnemonic {sem[0]}, asked {mnemonic_iced}"
    sem_ops = sem[1]
    a32 = bool(sem_ops) and sem_ops[-1] == ("address size", 32) and any(
        x.__class__ is x86gen.A32Mem or (isinstance(x, x86gen.Mem) and x.base is None and x.index is None) for x in ops)
    if a32:   # movdir64b/enqcmd r32 with a 32-bit address, or an absolute one made 32-bit by addr32 (GNU as): as asked
        sem_ops = sem_ops[:-1]
    if len(sem_ops) != len(ops): return "operand count"
    for i, (s, x) in enumerate(zip(sem_ops, ops)):
        if isinstance(x, x86gen.Reg):
            want = x.name
            if ins.mnemonic in _GPR_WIDTH_IMMATERIAL and x.kind == "r64": want = _R32_OF[x.num]
            if s != ("reg", want): return f"operand {i + 1}: {s}, asked {x}"
        elif isinstance(x, x86gen.Mem):
            disp = x.disp & 0xFFFFFFFF if a32 and x.base is None and x.index is None else x.disp   # (a 32-bit address)
            want = ("mem", "none" if x.base is None else x.base.name, "none" if x.index is None else x.index.name,
                    x.scale, disp)
            if s[:5] != want or (x.size and s[5] != x.size): return f"operand {i + 1}: {s}, asked {x}"
        elif s[0] in ("target", "target16"):   # (target16: a 16-bit branch's IP, `ip16`)
            if s[1] != x: return f"operand {i + 1}: target {s[1]:#x}, asked {x:#x}"
        elif s[0] == "imm":
            k = ins.op_kind(i)
            field, size, sext = IMM_KINDS[k]
            if not in_ranges(x, accepted_imm_ranges(field, size, sext)):
                return f"operand {i + 1}: {x:#x} does not fit the {OPKIND_NAMES[k]} iced decoded"
            if s[2] != x & ((1 << size) - 1): return f"operand {i + 1}: {s}, asked {x:#x}"
        else:
            return f"operand {i + 1}: {s}"
    return None


def sized(form, ops):
    """Memory operands with the form's size (x86gen.encode needs sizes where forms differ)."""
    return tuple(x.with_size(o.mem) if isinstance(x, x86gen.Mem) and not x.size and o.mem else x
                 for o, x in zip(form.operands, ops))


def lea_low_bits_request(mnemonic, ops):
    """lea with a 16/32-bit destination keeps only the low bits of the address (SDM Vol.2 LEA), so `encode` may
    reach a far absolute address through the disp32 with the same low 32 bits: the request in those terms."""
    if (mnemonic == "lea" and len(ops) == 2 and isinstance(ops[1], x86gen.Mem) and ops[1].base is None
            and ops[1].index is None and ops[0].size < 64):
        low = ops[1].disp & 0xFFFFFFFF
        return ops[0], x86gen.Mem(None, None, 1, low - (1 << 32) if low >> 31 else low)   # lea: no size
    return ops


def a32_vsib(x) -> bool:
    """A VSIB operand with a 32-bit address (a scatter's destination takes a mask then too)?"""
    return x.__class__ is x86gen.A32Mem and x.plain.__class__ is x86gen.VsibMem


def decorate(form, ops, deco):
    """``ops`` with the decorations of ``deco`` (see `evex_decorations`): a `x86gen.Masked` first operand (``.z`` for
    zeroing) and the ModRM.rm memory operand as a broadcast of the drawn element size; and the ``rc`` to pass.
    Returns (operands, rc, (mask, zero, bcst bits, rc) as applied)."""
    mask, zero, bcst, rc = deco
    ops = list(ops)
    rm = next((i for i, o in enumerate(form.operands) if o.loc == "rm"), None)
    if bcst and rm is not None and ops[rm].__class__ is x86gen.Mem:
        m = ops[rm]
        ops[rm] = x86gen.Mem(m.base, m.index, m.scale, m.disp, bcst).bcst
    else: bcst = 0
    zero = zero and bool(mask)
    if mask and (isinstance(ops[0], (x86gen.Xmm, x86gen.Ymm, x86gen.Zmm, x86gen.KReg)) or ops[0].__class__ in (x86gen.Mem, x86gen.VsibMem)
                 or a32_vsib(ops[0])):   # (a scatter's 32-bit address)
        if zero and isinstance(ops[0], x86gen.Mem):
            with pytest.raises(x86gen.EvexOperandError):   # {z} with a memory destination: #UD (SDM Vol.2 2.8)
                _ = ops[0].k(x86gen.REGISTERS[f"k{mask}"]).z
            zero = False
        ops[0] = x86gen.masked(ops[0], x86gen.REGISTERS[f"k{mask}"], zero)
    else: mask, zero = 0, False
    return tuple(ops), rc, (mask, zero, bcst, rc)


def run_evex_case(form, code, ip, ops, deco, stats):
    """An EVEX form with AVX-512 decorations: the valid ones (iced's OpCodeInfo, `iced_oracle.evex_allows`) must give
    iced's bytes for the plain instruction decorated (`iced_oracle.decorated`, re-encoded by iced), from the form,
    from `x86gen.encode` and `x86gen.select`; the others raise `x86gen.EvexOperandError` from the form, and
    `x86gen.encode` raises or encodes exactly what was asked."""
    dops, rc, applied = decorate(form, ops, deco)
    mask, zero, bcst, _ = applied
    if not mask and not bcst and rc is None: return False
    stats["decorated"] = stats.get("decorated", 0) + 1
    has_mem = any(isinstance(x, x86gen.Mem) for x in ops)
    text_ops = ", ".join(str(x) for x in dops) + (f" rc={rc}" if rc is not None else "")
    if not evex_allows(code, mask, zero, bcst, rc, ops[0].__class__ is x86gen.Mem, has_mem):
        with pytest.raises(x86gen.EvexOperandError):
            data = form(*dops, rc=rc)
            pytest.fail(f"{form.id}({text_ops}) gave {describe(data, ip)}, expected EvexOperandError")
        try: data2 = x86gen.encode(form.mnemonic, *sized(form, dops), rc=rc)
        except x86gen.EncodeError: return True
        ins2 = decode_one(data2, ip)   # another form took them: it must be what was asked
        assert decorations(ins2) == (mask, zero, bool(bcst), rc), f"encode({form.mnemonic}, {text_ops}) = {describe(data2, ip)}"
        return True
    if form.evex_mask_required: return run_masked_vsib_case(form, ip, ops, dops, applied, stats)
    plain = decode_one(form(*ops), ip)
    want = reencode_canonical(decorated(plain, mask, zero, bool(bcst), rc), ip)
    data = form(*dops, rc=rc)
    assert data == want, f"{form.id}({text_ops}) = {data.hex(' ')}, iced: {describe(want, ip)}"
    ins = decode_one(data, ip)
    assert CODE_NAMES[ins.code] == form.id and decorations(ins) == (mask, zero, bool(bcst), rc), describe(data, ip)
    data2 = x86gen.encode(form.mnemonic, *sized(form, dops), rc=rc)
    ins2 = decode_one(data2, ip)
    assert semantics(ins2) == semantics(ins) and decorations(ins2) == decorations(ins), \
        f"encode({form.mnemonic}, {text_ops}) = {describe(data2, ip)}; the form gives {describe(data, ip)}"
    assert len(data2) <= len(data)
    assert x86gen.select(form.mnemonic, *sized(form, dops), rc=rc).encoding_kind == "evex"
    stats["encoded"] += 1
    return True


def run_masked_vsib_case(form, ip, ops, dops, applied, stats) -> bool:
    """A gather/scatter with its mask k1-k7 (it has no plain instruction: k0 is #UD): iced must decode the form's bytes
    as the form with the operands and the mask asked for and re-encode them byte for byte; `x86gen.encode` and the text
    (iced's) give the same instruction."""
    mask = applied[0]
    data = form(*dops)
    ins = decode_one(data, ip)
    assert CODE_NAMES[ins.code] == form.id and decorations(ins) == (mask, False, False, None), describe(data, ip)
    check_operands(form, ins, ops, ip, decorated=True)
    again = reencode_canonical(ins, ip)
    text_ops = ", ".join(str(x) for x in dops)
    assert again == data, f"{form.id}({text_ops}) = {data.hex(' ')}, iced re-encodes {intel(ins)!r} as {again.hex(' ')}"
    data2 = x86gen.encode(form.mnemonic, *sized(form, dops))
    ins2 = decode_one(data2, ip)
    assert semantics(ins2) == semantics(ins) and decorations(ins2) == decorations(ins), \
        f"encode({form.mnemonic}, {text_ops}) = {describe(data2, ip)}; the form gives {describe(data, ip)}"
    text = intel(ins)
    ins3 = decode_one(x86gen.assemble(text, ip=ip), ip)
    assert semantics(ins3) == semantics(ins) and decorations(ins3) == decorations(ins), f"assemble({text!r})"
    stats["encoded"] += 1
    return True


def run_case(form, code, ip, raw_ops, stats, deco=None):
    rel_disp = None
    opt = decoder_options(form)   # AMD for the 16-bit branches (iced_oracle.decoder_options)
    ops = []
    blen = None
    for x in raw_ops:
        if isinstance(x, tuple) and x[0] == "mixed":   # 32- and 64-bit registers in one address: refused, either order
            for b, i in ((x[1], x[2]), (x[2].sized(32), x[1].sized(64))):
                with pytest.raises(x86gen.OperandError, match="mixes 32- and 64-bit"): x86gen.Mem(b, i, 2)
            ops.append(x86gen.Mem(x[1], None, 1, 0, 0))   # and the case goes on with a 32-bit address
        elif isinstance(x, tuple) and x[0] == "rel":
            blen = blen or branch_len(code)
            rel_disp = x[1]
            ops.append(ip + blen + x[1])
        elif isinstance(x, tuple) and x[0] == "ip16":   # a 16-bit branch's target (`ip16`): near IP modulo 2^16, or as drawn
            blen = blen or branch_len(code)
            target = (ip + blen + x[2]) & 0xFFFF if x[1] == "d" else x[2]
            rel_disp = signed(target - ip - blen, 16)   # what the rel field holds (SDM Vol.2 JMP, operand size 16)
            ops.append(target)
        else:
            ops.append(x)
    ops = tuple(ops)
    is_branch = rel_disp is not None
    kw = {"ip": ip} if is_branch else {}
    stats["examples"] += 1
    # (a mask is applied to a register or a 64-bit memory destination: `decorate`)
    masked = bool(deco and deco[0]) and (not isinstance(ops[0], x86gen.Mem) or ops[0].__class__ in (x86gen.Mem, x86gen.VsibMem)
                                         or a32_vsib(ops[0]))
    err, why_err = expected_error(form, code, ops, rel_disp, masked)
    if deco is not None and err is None and run_evex_case(form, code, ip, ops, deco, stats): return
    text_ops = ", ".join(hex(x) if isinstance(x, int) else str(x) for x in ops)
    if err is not None:
        # a gather/scatter refuses operands as such with its mask only (without one: for want of it)
        eops = decorate(form, ops, (deco[0], False, 0, None))[0] if form.evex_mask_required and masked else ops
        with pytest.raises(err):
            data = form(*eops, **kw)
            pytest.fail(f"{form.id}({text_ops}) gave {describe(data, ip, opt)}, expected {err.__name__}")
        stats["errors"] += 1
        # x86gen.encode may choose another form that takes these operands; it must not misencode them.
        try:
            data2 = x86gen.encode(request_mnemonic(form), *sized(form, eops), ip=ip)
        except x86gen.EncodeError:
            return
        assert why_err != "high8", f"encode({form.mnemonic}, {text_ops}) = {describe(data2, ip, opt)}: ah..bh need no REX"
        ins2 = decode_one(data2, ip, opt)
        why = matches_request(ins2, semantics_mnemonic(code), lea_low_bits_request(form.mnemonic, ops))
        assert why is None, f"encode({form.mnemonic}, {text_ops}) = {describe(data2, ip, opt)}: {why}"
        return

    data = form(*ops, **kw)
    assert isinstance(data, bytes), f"{form.id} returned {type(data)}"
    ins = decode_one(data, ip, opt)
    assert CODE_NAMES[ins.code] == form.id, f"{form.id}({text_ops}) = {describe(data, ip, opt)}"
    check_operands(form, ins, ops, ip)
    again = reencode_canonical(ins, ip)
    assert again == data, f"{form.id}({text_ops}) = {data.hex(' ')}, iced re-encodes {intel(ins)!r} as {again.hex(' ')}"
    mn, ops_iced = to_x86gen(ins)
    assert mn == form.mnemonic
    assert form(*ops_iced, **kw) == data, f"{form.id}{ops_iced} (iced's operands) != {data.hex(' ')}"

    sem = semantics(ins)
    data2 = x86gen.encode(request_mnemonic(form), *sized(form, ops), ip=ip)
    ins2 = decode_one(data2, ip, opt)
    assert semantics(ins2) == sem, \
        f"encode({form.mnemonic}, {text_ops}) = {describe(data2, ip, opt)}; the form gives {describe(data, ip, opt)}"
    # an EVEX form's operands that VEX can encode get VEX from encode (GNU as and llvm-mc do the same), even where
    # EVEX's disp8*N would be shorter (a disp8*N is no reason for EVEX: issue 11, "VEX or EVEX")
    vex_instead = form.encoding_kind == "evex" and is_vex(data2)
    # ... except AVX-VNNI/AVX-IFMA/AVX-NE-CONVERT, which GNU as and llvm-mc write with EVEX unless `{vex}` (VEX_ON_REQUEST)
    evex_instead = form.encoding_kind == "vex" and form.cpuid in VEX_ON_REQUEST and ins2.encoding == I.EncodingKind.EVEX
    assert len(data2) <= len(data) or vex_instead or evex_instead, \
        f"encode({form.mnemonic}, {text_ops}) = {describe(data2, ip, opt)} is longer than {describe(data, ip, opt)}"

    text = intel(ins)
    if form.id in ICED_AMBIGUOUS:   # iced's one name of several forms: refused (the form is reached by its id)
        with pytest.raises(x86gen.UnknownMnemonicError, match="cannot say which"): x86gen.assemble(text, ip=ip)
        stats["encoded"] += 1
        return
    data3 = x86gen.assemble(text, ip=ip)
    ins3 = decode_one(data3, ip, opt)
    assert semantics(ins3) == sem, f"assemble({text!r}) = {describe(data3, ip, opt)}; the form gives {describe(data, ip, opt)}"
    # iced writes XBEGIN_REL16 as `xbegin 0x…`, which is the rel32 form to x86gen as to GNU as (a 16-bit branch is
    # only chosen by data16): longer, the same operation
    text16 = form.opsize16 and form.is_branch and not text.startswith("data16")
    evex3 = evex_instead and ins3.encoding == I.EncodingKind.EVEX
    assert len(data3) <= len(data) or (vex_instead and is_vex(data3)) or evex3 or text16, \
        f"assemble({text!r}) = {describe(data3, ip, opt)} is longer than {describe(data, ip, opt)}"
    stats["encoded"] += 1


def is_vex(data: bytes) -> bool:
    """VEX-encoded bytes (C4/C5 first, after a 32-bit address's 0x67 if any)?"""
    return data[data[:1] == b"\x67":][:1] in (b"\xc4", b"\xc5")


def semantics_mnemonic(code: int) -> str:
    """The mnemonic `iced_oracle.semantics` gives an instruction of ``code`` (sal as shl)."""
    mnemonic = MNEMONIC_NAMES[I.OpCodeInfo(code).mnemonic].lower()
    return "shl" if mnemonic == "sal" else mnemonic


@pytest.mark.parametrize("form_id", [f.id for f in FORMS])
@given(data=st.data())
def test_form_against_iced(form_id, data):
    form = x86gen.get_form(form_id)
    stats = FUZZ_STATS.setdefault(form_id, {"examples": 0, "encoded": 0, "errors": 0})
    try:
        code = code_of(form_id)
        ip, raw_ops, deco = data.draw(case_strategy(form), label="ip, operands, EVEX decorations")
        run_case(form, code, ip, raw_ops, stats, deco)
    except StopTest:   # hypothesis ran out of bytes for this example (a draw too large): no example, no mismatch
        raise
    except BaseException:
        FUZZ_FAILED.add(form_id)
        raise


# --- deterministic corner cases ----------------------------------------------------------------------
# Random draws hit a given corner (say [r13] with no displacement in one particular form) rarely, so
# each form also runs a fixed sweep: every register in every register position, every memory corner
# in the memory position, every immediate edge, branch displacements at the rel8/rel32 edges, and
# ah..bh next to operands that need REX. Each case goes through the same checks as the fuzz.

M = x86gen.Mem
MEM_CORNERS = (
    [M(b, None, 1, 0, 0) for b in GPR64]                                                  # every base, no disp
    + [M(R["rax"], None, 1, d, 0) for d in (127, 128, -128, -129, 0x7FFFFFFF, -0x80000000)]
    + [M(b, None, 1, d, 0) for b in SPECIAL_BASES for d in (1, -1, 0x80)]
    + [M(R["rax"], i, 1, 0, 0) for i in INDEXES]                                          # every index
    + [M(b, i, sc, d, 0) for b, i, sc, d in [(R["rsp"], R["rbp"], 2, 0), (R["rbp"], R["r12"], 8, 0), (R["r13"], R["r13"], 1, 0),
                                              (R["r12"], R["rax"], 4, 1), (R["rax"], R["r15"], 8, -1), (R["rbp"], R["rcx"], 2, 0x1000)]]
    + [M(R["rip"], None, 1, d, 0) for d in (0, 0x10, -8, 0x7FFFFFFF, -0x80000000)]        # RIP-relative
    + [M(None, i, sc, d, 0) for i, sc, d in [(R["rax"], 1, 0), (R["r12"], 8, 0x10), (R["rbp"], 2, -1), (R["r13"], 4, 0x7FFFFFFF)]]
    + [M(None, None, 1, d, 0) for d in (0, 0x10, -1, 0x7FFFFFFF, -0x80000000)]            # absolute [disp32]
    + [M(None, None, 1, d, 0) for d in (0x80000000, 0xFFFFFFFF, 0x123456789, -0x80000001)]  # out of disp32 reach
    # 32-bit addresses (0x67): the special bases (SIB for esp/r12d, disp8 0 for ebp/r13d), an r8d-r15d index, no base,
    # eip-relative
    + [M(b, None, 1, 0, 0) for b in SPECIAL_BASES32]
    + [M(R["r13d"], R["r12d"], 8, -1, 0), M(R["eax"], R["ecx"], 2, 0x80, 0), M(None, R["ecx"], 4, 0x10, 0),
       M(R["eip"], None, 1, -0x10, 0)]
)
# and for a form whose memory operand is a 32-bit address (`address32`), the 32-bit sweep of the 64-bit one above
MEM_CORNERS32 = (
    [M(b, None, 1, 0, 0) for b in GPR32] + [M(R["eax"], None, 1, d, 0) for d in (127, 128, -128, -129, 0x7FFFFFFF, -0x80000000)]
    + [M(b, None, 1, d, 0) for b in SPECIAL_BASES32 for d in (1, -1, 0x80)] + [M(R["eax"], i, 1, 0, 0) for i in INDEXES32]
    + [M(R["esp"], R["ebp"], 2, 0), M(R["ebp"], R["r12d"], 8, 0), M(R["r13d"], R["r13d"], 1, 0), M(R["r12d"], R["eax"], 4, 1)]
    + [M(R["eip"], None, 1, d, 0) for d in (0, 0x10, -8, 0x7FFFFFFF, -0x80000000)]
    + [M(None, i, sc, d, 0) for i, sc, d in [(R["eax"], 1, 0), (R["r12d"], 8, 0x10), (R["ebp"], 2, -1), (R["r13d"], 4, 0x7FFFFFFF)]]
)


def vsib_corners(kind: str, bits: int, evex: bool = False) -> list:
    """The fixed sweep of a VSIB operand: every base, every index register (the forms' default registers are
    numbers 0 and 1, so index 0 and 1 are refused as not distinct; EVEX: 0-31, VEX: 16-31 refused), special bases with
    disp edges (EVEX: disp8*N, N the element size), no base; and operands without a vector index (refused)."""
    idx = EVEX_VEC_INDEX[kind[-1]] if evex else VEC_INDEX[kind[-1]]
    high = [] if kind[-1] == "z" else EVEX_VEC_INDEX[kind[-1]][16:]
    return ([M(R["rax"], i, 4, 0, bits) for i in (high[::5] if not evex else [])]
            + ([M(R["rbx"], idx[17], 8, d, bits) for d in (bits // 8 * 127, bits // 8 * 128, -bits // 8 * 128, bits // 8 * -129, 3)]
               if evex else []) + [M(b, idx[2], 1, 0, bits) for b in GPR64] + [M(R["rax"], i, 4, 0, bits) for i in idx]
            + [M(b, idx[13], 8, d, bits) for b in SPECIAL_BASES for d in (0, 1, -1, 0x80, 0x7FFFFFFF, -0x80000000)]
            + [M(None, i, sc, d, bits) for i, sc, d in [(idx[2], 1, 0), (idx[12], 8, 0x10), (idx[5], 2, -1), (idx[15], 4, 0x7FFFFFFF)]]
            + [M(R["rax"], None, 1, 0, bits), M(R["rax"], R["rcx"], 4, 0, bits), M(R["rip"], None, 1, 0x10, bits)])


HIGH8 = [R[n] for n in ("ah", "ch", "dh", "bh")]
REX8 = [R[n] for n in ("spl", "dil", "r8b", "r15b")]


def corner_cases(form):
    """The fixed sweep for ``form``: a list of raw operand tuples (as the strategy draws them)."""
    code = code_of(form.id)
    default = []
    vsib = any(is_vsib(o) for o in form.operands) or sum(o.reg == "tmm" for o in form.operands) > 1   # distinct registers
    for o in form.operands:
        if o.loc == "fixed": default.append(R[o.reg])
        elif o.kind == "1": default.append(1)
        elif o.kind.startswith("rel"): default.append(("ip16", "d", 0) if ip16(form) else ("rel", 0))
        elif o.imm is not None: default.append(1)
        elif o.reg is not None:   # a gather's registers must differ (destination 0, mask 1, index 2)
            default.append(regs_of(form, o)[sum(isinstance(x, x86gen.Reg) for x in default) if vsib else 0])
        elif is_vsib(o): default.append(M(R["rax"], EVEX_VEC_INDEX[o.kind[-1]][2], 1, 0, o.mem))
        elif o.loc == "moffs": default.append(M(None, None, 1, 0x10, o.mem))
        elif o.mem is not None: default.append(M(R["eax" if address32(code) else "rax"], None, 1, 0, o.mem))
        else: raise Unfuzzable(f"{form.id}: cannot default operand {o!r}")
    cases = [tuple(default)]

    def put(i, v):
        c = list(default)
        c[i] = v
        cases.append(tuple(c))

    for i, o in enumerate(form.operands):
        if o.loc == "fixed": continue
        if o.loc == "moffs":
            for a in ABS_ADDRESSES: put(i, M(None, None, 1, a, o.mem))
            put(i, M(None, None, 1, 0x123456789, 0))
            for m in (M(R["rax"], None, 1, 0, o.mem), M(R["rip"], None, 1, 0x10, o.mem), M(None, R["rcx"], 2, 0x10, o.mem)):
                put(i, m)   # based, RIP-relative, indexed: refused
        elif o.kind == "1":
            put(i, 2)
        elif o.kind.startswith("rel"):
            lim = 1 << (FORM_BRANCH_KINDS[I.OpCodeInfo(code).op_kind(i)] - 1)
            for d in (-lim, lim - 1, -lim - 1, lim, 127, 128, -128, -129):
                put(i, ("ip16", "d", d) if ip16(form) else ("rel", d))
            if ip16(form):   # the 16-bit IP's ends and beyond (out of reach)
                for t in (0, 0xFFFF, 0x10000, -1, 0x80001000): put(i, ("ip16", "abs", t))
        elif o.imm is not None:
            for lo, hi in list(form.imm_ranges(i)) + form_imm_ranges(code, i):
                for v in (lo - 1, lo, hi, hi + 1):
                    put(i, v)
        else:
            if o.reg is not None:
                for r in regs_of(form, o): put(i, r)
            if o.mem is not None and is_vsib(o):
                for m in vsib_corners(o.kind, o.mem, form.encoding_kind == "evex"): put(i, m)
            elif o.mem is not None:
                for m in MEM_CORNERS + (MEM_CORNERS32 if address32(code) else []): put(i, m.with_size(o.mem) if o.mem else m)
    r8_pos = [i for i, o in enumerate(form.operands) if o.reg == "r8" and o.loc != "fixed"]
    for i in r8_pos:                         # ah..bh with an operand that needs REX, both orders
        for j in r8_pos:
            if i == j: continue
            for h in HIGH8:
                for x in REX8:
                    c = list(default)
                    c[i], c[j] = h, x
                    cases.append(tuple(c))
        if form.operands[i].mem is None:
            for j, o in enumerate(form.operands):
                if o.mem is not None and j != i:
                    for h in HIGH8:
                        c = list(default)
                        c[i], c[j] = h, M(R["r8"], None, 1, 0, o.mem)
                        cases.append(tuple(c))
    return list(dict.fromkeys(cases))


# disp8*N edges (SDM Vol.2 2.7.5) for every N a broadcast or a vector may scale by: N·(-128), N·127 (disp8), N·128,
# N·(-129) (disp32), N·1, and multiples of a smaller N only (disp32 with the larger one)
EVEX_DISPS = sorted({n * k for n in (2, 4, 8, 16, 32, 64) for k in (-128, 127, 128, -129, 1)} | {2, 6, 12, 4 * 127 + 2, 8 * 127 + 4})


def evex_corner_cases(form) -> list:
    """The fixed sweep of AVX-512 decorations of an EVEX form: (raw operands, decorations) for masks k1/k7 with and
    without zeroing, every rounding/SAE, and broadcasts of 16/32/64-bit elements at the disp8*N edges (with a mask
    too), on the register and the memory variant of its operands; allowed or not (iced decides)."""
    reg = corner_cases(form)[0]
    rm = next((i for i, o in enumerate(form.operands) if o.loc == "rm"), None)
    mem_ok = rm is not None and form.operands[rm].mem is not None and not is_vsib(form.operands[rm])
    def with_mem(d, size):
        c = list(reg)
        c[rm] = M(R["rax"], None, 1, d, size)
        return tuple(c)
    variants = [reg] + ([with_mem(0, form.operands[rm].mem)] if mem_ok else [])
    out = []
    for ops in variants:
        for mask in (1, 7):
            for zero in (False, True): out.append((ops, (mask, zero, 0, None)))
        for rc in (0, 1, 2, 3, 4):
            out += [(ops, (0, False, 0, rc)), (ops, (3, True, 0, rc))]
    if mem_ok:
        for bits in (16, 32, 64):
            for d in EVEX_DISPS: out.append((with_mem(d, 0), (0, False, bits, None)))
            out += [(with_mem(bits * 4, 0), (5, True, bits, None)), (with_mem(-bits, 0), (2, False, bits, 1))]
    return out


@pytest.mark.parametrize("form_id", [f.id for f in FORMS])
def test_form_corner_cases(form_id):
    form = x86gen.get_form(form_id)
    stats = FUZZ_STATS.setdefault(form_id, {"examples": 0, "encoded": 0, "errors": 0})
    try:
        code = code_of(form_id)
        for n, raw_ops in enumerate(corner_cases(form)):   # (a gather/scatter with a mask k1-k7: k0 is #UD)
            stats["corners"] = stats.get("corners", 0) + 1
            deco = (1 + n % 7, False, 0, None) if form.evex_mask_required else None
            run_case(form, code, 0x80001000, raw_ops, {"examples": 0, "encoded": 0, "errors": 0}, deco)
        if form.encoding_kind == "evex":
            for raw_ops, deco in evex_corner_cases(form):
                stats["corners"] = stats.get("corners", 0) + 1
                run_case(form, code, 0x80001000, raw_ops, {"examples": 0, "encoded": 0, "errors": 0}, deco)
    except BaseException:
        FUZZ_FAILED.add(form_id)
        raise


def test_every_form_has_an_iced_code():
    missing = [f.id for f in FORMS if not hasattr(I.Code, f.id)]
    assert not missing, f"form ids that are not iced Code names: {missing}"
    assert len({f.id for f in FORMS}) == len(FORMS)


def test_imm_ranges_match_iced_operand_kinds():
    """`Form.imm_ranges` (what x86gen accepts) equals what iced's operand kind implies (GNU as rules)."""
    bad = []
    for f in FORMS:
        code = code_of(f.id)
        for i, o in enumerate(f.operands):
            if o.imm is None: continue
            want = form_imm_ranges(code, i)
            got = [tuple(r) for r in f.imm_ranges(i)]
            if got != want:
                bad.append(f"{f.id} operand {i + 1} ({o.kind}): x86gen {got}, iced-derived {want}")
    assert not bad, "\n".join(bad)
