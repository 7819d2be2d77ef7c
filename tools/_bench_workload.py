"""Workloads for tools/bench.py: one instruction list, many ways to encode it.

A workload is a list of programs; a program is a list of `Ins` (form id, x86gen `Form`, abstract
operands). Abstract operands are plain tuples so that every encoder gets the same program:

    ("r", name)                                   register (x86gen name: r8b, not iced's R8L)
    ("m", base, index, scale, disp, size_bits)    memory; base/index names or None; for a rip base,
                                                  disp is relative to the end of the instruction
    ("i", value)                                  immediate, as an int x86gen's form accepts
    ("b", k)                                      branch to instruction k of the same program

An AVX-512 instruction may carry decorations, ``Ins.deco`` (None for a plain one): a `Deco` of the
opmask of its destination (``"k1"``… or None), zeroing (``{z}``), embedded broadcast (its memory
operand is then ``("m", …, element_bits)``: ``dword ptr [rax]{1to16}``) and static rounding (``rc``,
x86gen's `RN_SAE` … `RZ_SAE`, or `SAE`). Every encoder gets them: iced through ``op_mask``,
``zeroing_masking``, ``is_broadcast``, ``rounding_control`` / ``suppress_all_exceptions``; x86gen
through ``reg.k(k1).z``, ``mem.bcst`` and ``rc=``; the text in GNU as's syntax
(``vaddps zmm1 {k1}{z}, zmm2, dword ptr [rax]{1to16}``, ``vaddps zmm1, zmm2, zmm3, {rn-sae}``).

From a program this module builds (setup, never timed): iced ``(create_fn, args)`` lists with
labels (for `BlockEncoder`) or with absolute targets (for `Encoder`), x86gen ``(form.encoder, ops)``
lists with absolute rel32 targets, ``(mnemonic, ops)`` lists for `x86gen.encode` with targets laid
out for the forms `encode` picks, and Intel-syntax text (with labels for GNU as, or with absolute
targets). `Checker` says whether some bytes decode to the same instructions as iced's reference.
"""
from __future__ import annotations

import functools
import gzip
import json
import os
import random
from typing import NamedTuple

import iced_x86 as I

import x86gen
from x86gen import REGISTERS, Mem

Code, Register, OpKind = I.Code, I.Register, I.OpKind
CODE_NAME = {v: k for k, v in vars(Code).items() if k.isupper()}
ICED_REG: dict[str, int] = {}          # x86gen name -> iced Register
REG_NAME: dict[int, str] = {}          # iced Register -> x86gen name
for _k, _v in vars(Register).items():
    if not _k.isupper() or _k == "NONE": continue
    _n = _k.lower()
    if _n.startswith("r") and _n.endswith("l") and _n[1:-1].isdigit(): _n = _n[:-1] + "b"   # R8L -> r8b
    REG_NAME[_v] = _n
    ICED_REG[_n] = _v
SIZE_WORD = {8: "byte", 16: "word", 32: "dword", 64: "qword", 80: "tbyte", 128: "xmmword", 256: "ymmword", 512: "zmmword"}
IMM_KINDS = {OpKind.IMMEDIATE8, OpKind.IMMEDIATE8_2ND, OpKind.IMMEDIATE16, OpKind.IMMEDIATE32, OpKind.IMMEDIATE64,
             OpKind.IMMEDIATE8TO16, OpKind.IMMEDIATE8TO32, OpKind.IMMEDIATE8TO64, OpKind.IMMEDIATE32TO64}


ROUNDING_TEXT = {0: "rn-sae", 1: "rd-sae", 2: "ru-sae", 3: "rz-sae", 4: "sae"}   # x86gen.RN_SAE … RZ_SAE, SAE


class Deco(NamedTuple):
    """AVX-512 decorations of one instruction (see the module's docstring)."""
    mask: str | None = None       # opmask of the destination (operand 0): "k1" … "k7"
    zero: bool = False            # {z}
    bcst: bool = False            # the memory operand is an embedded broadcast of its size ({1toN})
    rc: int | None = None         # static rounding (x86gen's value: RN_SAE=0 … RZ_SAE=3) or SAE=4 ({sae})


class Ins:
    __slots__ = ("code", "form", "ops", "deco")

    def __init__(self, code: str, form, ops: tuple, deco: Deco | None = None):
        self.code, self.form, self.ops, self.deco = code, form, ops, deco

    @property
    def is_branch(self) -> bool: return bool(self.ops) and self.ops[0][0] == "b"


def _signed(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def canonical_imm(form, i: int, u: int) -> int:
    """An immediate decoded by iced (any width, two's complement) as an int the form accepts."""
    o = form.operands[i]
    w = o.imm
    v = _signed(u, w) if o.sext else u & ((1 << w) - 1)
    for cand in (v, _signed(u, w), u & ((1 << w) - 1)):
        if any(lo <= cand <= hi for lo, hi in form.imm_ranges(i)): return cand
    raise ValueError(f"{form.id}: immediate {u:#x} does not fit")


# ---------------------------------------------------------------------------------------------
# the corpus: tinygrad kernels, decoded once with iced

CORPUS_NAME = "tinygrad-ops-kernels.jsonl.gz"


def corpus_paths(root: str) -> list[str]:
    """Where the corpus is looked for: in the repository (tests/data/), then ../shared/corpus/ beside it."""
    return [os.path.join(root, "tests", "data", CORPUS_NAME), os.path.join(os.path.dirname(root), "shared", "corpus", CORPUS_NAME)]


def corpus_path(root: str) -> str:
    """The first of `corpus_paths` that exists (the last one if none does, for the message)."""
    paths = corpus_paths(root)
    return next((p for p in paths if os.path.exists(p)), paths[-1])


def load_corpus(path: str, every: int = 1, limit: int | None = None) -> tuple[list[list[Ins]], int]:
    """Kernels (every ``every``-th, at most ``limit`` instructions in all) as programs; and how many
    kernels were left out because x86gen has no form for one of their instructions."""
    progs: list[list[Ins]] = []
    skipped = total = 0
    with gzip.open(path, "rt") as f:
        for n, line in enumerate(f):
            if n % every: continue
            data = bytes.fromhex(json.loads(line)["hex"])
            decoded = list(I.Decoder(64, data, ip=0))
            try: prog = [from_iced(ins, decoded) for ins in decoded]
            except (x86gen.EncodeError, ValueError, KeyError):
                skipped += 1
                continue
            progs.append(prog)
            total += len(prog)
            if limit and total >= limit: break
    return progs, skipped


def from_iced(ins, decoded) -> Ins:
    code = CODE_NAME[ins.code]
    form = x86gen.get_form(code)
    ops = []
    if ins.op_count != len(form.operands): raise ValueError(f"{code}: operand count differs")
    deco = None
    if ins.has_op_mask or ins.zeroing_masking or ins.is_broadcast or ins.rounding_control or ins.suppress_all_exceptions:
        rc = ins.rounding_control - 1 if ins.rounding_control else (4 if ins.suppress_all_exceptions else None)
        deco = Deco(REG_NAME[ins.op_mask] if ins.has_op_mask else None, bool(ins.zeroing_masking), bool(ins.is_broadcast), rc)
    for i in range(ins.op_count):
        k = ins.op_kind(i)
        fo = form.operands[i]
        if k == OpKind.REGISTER: ops.append(("r", REG_NAME[ins.op_register(i)]))
        elif k == OpKind.MEMORY:
            base = REG_NAME.get(ins.memory_base) if ins.memory_base != Register.NONE else None
            index = REG_NAME.get(ins.memory_index) if ins.memory_index != Register.NONE else None
            disp = ins.memory_displacement
            disp = _signed(disp - ins.next_ip, 64) if base == "rip" else _signed(disp, 64)
            size = form.evex_bcst if deco and deco.bcst else fo.mem or 0
            ops.append(("m", base, index, ins.memory_index_scale if index else 1, disp, size))
        elif k in IMM_KINDS: ops.append(("i", canonical_imm(form, i, ins.immediate(i))))
        elif k == OpKind.NEAR_BRANCH64:
            target = ins.near_branch_target
            idx = next((j for j, d in enumerate(decoded) if d.ip == target), None)
            if idx is None: raise ValueError("branch into the middle of an instruction")
            ops.append(("b", idx))
        else: raise ValueError(f"{code}: operand kind {k}")
    return Ins(code, form, tuple(ops), deco)


# ---------------------------------------------------------------------------------------------
# the synthetic stream

GP64 = ["rax", "rcx", "rdx", "rbx", "rsi", "rdi"] + [f"r{i}" for i in range(8, 16)]
GP_BY_SIZE = {
    "r64": GP64,
    "r32": ["eax", "ecx", "edx", "ebx", "esi", "edi"] + [f"r{i}d" for i in range(8, 16)],
    "r16": ["ax", "cx", "dx", "bx", "si", "di"] + [f"r{i}w" for i in range(8, 16)],
    "r8": ["al", "cl", "dl", "bl", "sil", "dil"] + [f"r{i}b" for i in range(8, 16)],
}
BASES = ["rsp", "rbp", "r12", "r13"] * 3 + ["rdi", "rsi", "rax", "rbx", "rdx", "r8", "r9", "r10", "r11", "r14", "r15"]
INDEXES = ["rax", "rcx", "rdx", "rbx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rbp"]

# (form id, weight, probability that an r/m operand is memory)
GP_FORMS = [
    ("MOV_R64_RM64", 8, .45), ("MOV_RM64_R64", 5, .7), ("MOV_R32_RM32", 5, .4), ("MOV_RM32_R32", 3, .6),
    ("MOV_RM32_IMM32", 2, .5), ("MOV_RM64_IMM32", 2, .4), ("MOV_R32_IMM32", 2, 0), ("MOV_R64_IMM64", .3, 0),
    ("MOV_R8_RM8", .6, .6), ("MOV_RM8_R8", .6, .7),
    ("LEA_R64_M", 6, 1), ("LEA_R32_M", 1, 1),
    ("ADD_R64_RM64", 4, .3), ("ADD_RM64_R64", 1, .3), ("ADD_RM64_IMM8", 4, .2), ("ADD_RM64_IMM32", 1, .2),
    ("ADD_R32_RM32", 2, .3), ("ADD_RM32_IMM8", 2, .2), ("ADD_EAX_IMM32", .3, 0),
    ("SUB_R64_RM64", 2, .3), ("SUB_RM64_IMM8", 2, .2), ("SUB_RM64_IMM32", .5, .1),
    ("AND_R64_RM64", 1, .3), ("AND_RM32_IMM32", 1, .2), ("OR_R64_RM64", 1, .3), ("XOR_R32_RM32", 2, .1),
    ("XOR_RM64_R64", 1, .2), ("CMP_R64_RM64", 2, .3), ("CMP_RM64_IMM8", 2, .3), ("CMP_RM32_IMM32", 1, .3),
    ("TEST_RM64_R64", 1, .1), ("TEST_RM32_R32", 1, .1),
    ("IMUL_R64_RM64", 3, .3), ("IMUL_R32_RM32", 1, .3), ("IMUL_R64_RM64_IMM8", 1, .2), ("IMUL_R64_RM64_IMM32", 1, .2),
    ("IMUL_R32_RM32_IMM32", 1, .2),
    ("SHL_RM64_IMM8", 2, 0), ("SHR_RM64_IMM8", 1, 0), ("SAR_RM32_IMM8", 1, 0), ("SHL_RM32_IMM8", 1, 0),
    ("MOVZX_R32_RM8", 1, .5), ("MOVZX_R32_RM16", .5, .5), ("MOVSX_R64_RM8", .5, .5), ("MOVSXD_R64_RM32", 1, .5),
    ("CMOVL_R64_RM64", .5, .2), ("CMOVE_R32_RM32", .5, .2), ("SETE_RM8", .5, .1), ("SETL_RM8", .5, .1),
    ("INC_RM64", .5, .2), ("DEC_RM32", .5, .2), ("NEG_RM64", .3, 0), ("PUSH_R64", .2, 0), ("POP_R64", .2, 0),
]
AVX_FORMS = [
    ("VEX_VMOVUPS_YMM_YMMM256", 6, .8), ("VEX_VMOVUPS_YMMM256_YMM", 4, .9), ("VEX_VMOVAPS_YMM_YMMM256", 2, .5),
    ("VEX_VMOVDQU_YMM_YMMM256", 1, .8), ("VEX_VADDPS_YMM_YMM_YMMM256", 4, .4), ("VEX_VMULPS_YMM_YMM_YMMM256", 4, .4),
    ("VEX_VSUBPS_YMM_YMM_YMMM256", 1, .4), ("VEX_VDIVPS_YMM_YMM_YMMM256", .5, .3),
    ("VEX_VFMADD231PS_YMM_YMM_YMMM256", 8, .5), ("VEX_VFMADD213PS_YMM_YMM_YMMM256", 2, .5),
    ("VEX_VFMADD231PD_YMM_YMM_YMMM256", 1, .5), ("VEX_VXORPS_YMM_YMM_YMMM256", 2, 0),
    ("VEX_VANDPS_YMM_YMM_YMMM256", .5, .3), ("VEX_VMAXPS_YMM_YMM_YMMM256", 1, .3), ("VEX_VSQRTPS_YMM_YMMM256", .3, .3),
    ("VEX_VBROADCASTSS_YMM_M32", 3, 1), ("VEX_VBROADCASTSS_YMM_XMM", 1, 0), ("VEX_VPBROADCASTD_YMM_XMMM32", .5, .5),
    ("VEX_VPADDD_YMM_YMM_YMMM256", 1, .3), ("VEX_VPMULLD_YMM_YMM_YMMM256", .5, .3), ("VEX_VPXOR_YMM_YMM_YMMM256", .5, .2),
    ("VEX_VCMPPS_YMM_YMM_YMMM256_IMM8", 1, .3), ("VEX_VBLENDVPS_YMM_YMM_YMMM256_YMM", 1, .3),
    ("VEX_VSHUFPS_YMM_YMM_YMMM256_IMM8", .5, .2), ("VEX_VCVTDQ2PS_YMM_YMMM256", .5, .3),
    ("VEX_VCVTTPS2DQ_YMM_YMMM256", .3, .3), ("VEX_VPMOVZXBD_YMM_XMMM64", .3, .5),
    ("VEX_VMOVSS_XMM_M32", 1, 1), ("VEX_VMOVSS_M32_XMM", .5, 1), ("VEX_VADDSS_XMM_XMM_XMMM32", 1, .4),
    ("VEX_VFMADD231SS_XMM_XMM_XMMM32", 1, .4), ("VEX_VMOVD_XMM_RM32", .3, .3), ("VEX_VMOVUPS_XMM_XMMM128", .5, .7),
    ("VEX_VZEROUPPER", .05, 0),
]
# AVX-512 forms (unmasked), used where x86gen encodes them like iced (checked first); ids are iced-x86 Code names.
AVX512_FORMS = [
    ("EVEX_VMOVUPS_ZMM_K1Z_ZMMM512", 3, .8), ("EVEX_VMOVUPS_ZMMM512_K1Z_ZMM", 2, .9),
    ("EVEX_VADDPS_ZMM_K1Z_ZMM_ZMMM512B32_ER", 2, .4), ("EVEX_VMULPS_ZMM_K1Z_ZMM_ZMMM512B32_ER", 2, .4),
    ("EVEX_VFMADD231PS_ZMM_K1Z_ZMM_ZMMM512B32_ER", 4, .5), ("EVEX_VXORPS_ZMM_K1Z_ZMM_ZMMM512B32", 1, 0),
    ("EVEX_VBROADCASTSS_ZMM_K1Z_XMMM32", 1, .7),
]
# AVX-512 forms of the decorated lines (a merge or zeroing mask on the destination, an embedded broadcast source,
# static rounding), used where x86gen encodes them like iced (checked first): (iced Code, weight, probability that the
# r/m operand is memory when the decoration leaves the choice). `synthetic` puts them in about DECORATED_SHARE of the stream.
DECORATED_FORMS = [
    ("EVEX_VADDPS_ZMM_K1Z_ZMM_ZMMM512B32_ER", 3, .4), ("EVEX_VMULPS_ZMM_K1Z_ZMM_ZMMM512B32_ER", 2, .4),
    ("EVEX_VFMADD231PS_ZMM_K1Z_ZMM_ZMMM512B32_ER", 4, .5), ("EVEX_VADDPD_ZMM_K1Z_ZMM_ZMMM512B64_ER", 1, .4),
    ("EVEX_VPADDD_ZMM_K1Z_ZMM_ZMMM512B32", 1, .4), ("EVEX_VCVTDQ2PS_ZMM_K1Z_ZMMM512B32_ER", .5, .3),
    ("EVEX_VMOVUPS_ZMM_K1Z_ZMMM512", 2, .7), ("EVEX_VMOVUPS_ZMMM512_K1Z_ZMM", 1, .9),
    ("EVEX_VBROADCASTSS_ZMM_K1Z_XMMM32", .5, .7),
]
DECORATED_SHARE = .05
JCC = ["JNE_REL32_64", "JL_REL32_64", "JB_REL32_64", "JGE_REL32_64", "JE_REL32_64", "JAE_REL32_64"]


def _imm(rng: random.Random, form, i: int) -> int:
    o = form.operands[i]
    w = o.imm
    if form.mnemonic in ("shl", "shr", "sar", "rol", "ror"): return rng.randrange(1, min(form.operand_size, 64))
    if w == 8: return rng.randrange(-128, 128) if o.sext else rng.randrange(0, 32)
    if w == 16: return rng.randrange(0, 1 << 16)
    if w == 32:
        v = rng.choice([rng.randrange(128, 1 << 16), rng.randrange(1 << 16, 1 << 31)])
        return -v if rng.random() < .3 else v
    return rng.randrange(1 << 33, 1 << 62)


def _mem(rng: random.Random, size: int) -> tuple:
    base = rng.choice(BASES)
    index = rng.choice(INDEXES) if rng.random() < .6 else None
    r = rng.random()
    disp = 0 if r < .3 else rng.randrange(-128, 128) if r < .7 else rng.randrange(-(1 << 16), 1 << 20) & ~3
    return ("m", base, index, rng.choice((1, 2, 4, 8)) if index else 1, disp, size)


def _reg(rng: random.Random, cls: str) -> str:
    if cls in GP_BY_SIZE:
        names = GP_BY_SIZE[cls]
        return rng.choice(names[6:]) if rng.random() < .5 else rng.choice(names)   # r8-r15 more often
    if cls in ("xmm", "ymm"): return f"{cls}{rng.randrange(16)}"
    if cls == "zmm": return f"zmm{rng.randrange(32 if 'zmm31' in REGISTERS else 16)}"
    if cls == "k": return f"k{rng.randrange(1, 8)}"
    raise ValueError(cls)


def random_ins(rng: random.Random, fid: str, p_mem: float) -> Ins:
    form = x86gen.get_form(fid)
    ops = []
    for i, o in enumerate(form.operands):
        if o.loc == "fixed": ops.append(("r", o.reg))
        elif o.kind == "1": ops.append(("i", 1))
        elif o.imm is not None: ops.append(("i", _imm(rng, form, i)))
        elif o.mem is not None and (o.reg is None or rng.random() < p_mem): ops.append(_mem(rng, o.mem))
        else: ops.append(("r", _reg(rng, o.reg)))
    return Ins(fid, form, tuple(ops))


def random_decorated(rng: random.Random, fid: str, p_mem: float) -> Ins:
    """An instance of EVEX form ``fid`` with one main decoration, drawn among those the form allows: a merge mask,
    a zeroing mask, an embedded broadcast (the r/m operand is memory) or static rounding (registers only); a
    broadcast or rounding is also masked a third of the time."""
    form = x86gen.get_form(fid)
    rm = next((i for i, o in enumerate(form.operands) if o.mem is not None), None)
    kinds = ["mask", "zero"]
    if form.evex_bcst and rm: kinds.append("bcst")
    if form.evex_rc == "er": kinds.append("rc")
    kind = rng.choice(kinds)
    use_mem = kind == "bcst" or (kind != "rc" and rng.random() < p_mem)
    ops = []
    for i, o in enumerate(form.operands):
        if o.mem is not None and (o.reg is None or use_mem):
            ops.append(_mem(rng, form.evex_bcst if kind == "bcst" and i == rm else o.mem))
        else: ops.append(("r", _reg(rng, o.reg)))
    masked = kind in ("mask", "zero") or rng.random() < 1 / 3
    zero = masked and (kind == "zero" or (kind not in ("mask", "zero") and rng.random() < .5)) and ops[0][0] == "r"
    deco = Deco(_reg(rng, "k") if masked else None, zero, kind == "bcst", rng.randrange(4) if kind == "rc" else None)
    return Ins(fid, form, tuple(ops), deco)


# the decorated-vs-plain cost report (tools/bench.py): each decoration on an instruction whose plain twin has the same
# registers and memory (a broadcast's twin reads the full vector at the same address)
_Z123 = (("r", "zmm1"), ("r", "zmm2"), ("r", "zmm3"))
DECORATED_CASES = [
    ("EVEX_VADDPS_ZMM_K1Z_ZMM_ZMMM512B32_ER", _Z123, Deco("k1")),
    ("EVEX_VADDPS_ZMM_K1Z_ZMM_ZMMM512B32_ER", _Z123, Deco("k1", True)),
    ("EVEX_VADDPS_ZMM_K1Z_ZMM_ZMMM512B32_ER", _Z123[:2] + (("m", "rax", "rcx", 4, 0x40, 32),), Deco(bcst=True)),
    ("EVEX_VADDPS_ZMM_K1Z_ZMM_ZMMM512B32_ER", _Z123, Deco(rc=0)),
    ("EVEX_VMOVUPS_ZMMM512_K1Z_ZMM", (("m", "rdi", None, 1, 0x40, 512), ("r", "zmm5")), Deco("k2")),
    ("EVEX_VFMADD231PS_ZMM_K1Z_ZMM_ZMMM512B32_ER", _Z123[:2] + (("m", "rax", None, 1, 0, 32),), Deco("k1", True, True)),
    ("EVEX_VADDPD_ZMM_K1Z_ZMM_ZMMM512B64_ER", _Z123, Deco("k3", rc=3)),
]


def decorated_cases() -> list[tuple[Ins, Ins]]:
    """(decorated, plain) instruction pairs of DECORATED_CASES."""
    out = []
    for fid, ops, deco in DECORATED_CASES:
        form = x86gen.get_form(fid)
        plain = tuple(o[:5] + (form.operands[i].mem,) if o[0] == "m" else o for i, o in enumerate(ops))
        out.append((Ins(fid, form, ops, deco), Ins(fid, form, plain)))
    return out


def ins_text(ins: Ins) -> str:
    """One instruction in GNU as's Intel syntax (not a branch)."""
    return f"{ins.form.mnemonic} " + ", ".join(ins_operands_text(ins)) if ins.ops else ins.form.mnemonic


def decorated_forms(check) -> tuple[list, str]:
    """The forms of DECORATED_FORMS whose decorated instances x86gen encodes like iced (``check(ins) -> bool`` on
    40 random ones each), and a note."""
    if "zmm0" not in REGISTERS: return [], "decorated AVX-512: not in x86gen yet"
    ok, bad = [], []
    rng = random.Random(11)
    for fid, w, p in DECORATED_FORMS:
        if not hasattr(I.Code, fid): raise ValueError(f"DECORATED_FORMS: {fid} is not an iced-x86 Code")
        try:
            x86gen.get_form(fid)
            good = all(check(random_decorated(rng, fid, p)) for _ in range(40))
        except Exception:   # noqa: BLE001 - anything: the form is not usable yet
            good = False
        (ok if good else bad).append((fid, w, p))
    note = f"decorated AVX-512: {len(ok)} of {len(DECORATED_FORMS)} forms"
    if bad: note += f" (not yet: {', '.join(f for f, _, _ in bad)})"
    return ok, note


def avx512_forms(check) -> tuple[list, str]:
    """The AVX-512 forms x86gen encodes like iced (``check(ins) -> bool``), and a note."""
    if "zmm0" not in REGISTERS: return [], "AVX-512: not in x86gen yet (no zmm registers)"
    ok, bad = [], []
    rng = random.Random(7)
    for fid, w, p in AVX512_FORMS:
        if not hasattr(I.Code, fid): raise ValueError(f"AVX512_FORMS: {fid} is not an iced-x86 Code")   # a typo, not a gap
        try:
            x86gen.get_form(fid)
            good = all(check(random_ins(rng, fid, p)) for _ in range(20))
        except Exception:   # noqa: BLE001 - anything: the form is not usable yet
            good = False
        (ok if good else bad).append((fid, w, p))
    note = f"AVX-512: {len(ok)} of {len(AVX512_FORMS)} forms" + (f" (not yet: {', '.join(f for f, _, _ in bad)})" if bad else "")
    return ok, note


def synthetic(n: int, seed: int, extra_forms=(), decorated=()) -> list[Ins]:
    """About ``n`` instructions: loops of GP and AVX2/FMA code, each closed by cmp + jcc back to its
    head, some forward jmps over the next loops, a ret at the end. With ``decorated`` (forms of
    `DECORATED_FORMS`), decorated AVX-512 lines are then inserted (`with_decorated`): the stream without
    them is the same instruction for instruction."""
    rng = random.Random(seed)
    pool = GP_FORMS + AVX_FORMS + list(extra_forms)
    ids = [f for f, _, _ in pool]
    weights = [w for _, w, _ in pool]
    pmem = {f: p for f, _, p in pool}
    prog: list[Ins] = []
    heads: list[int] = []
    pending: list[tuple[int, int]] = []      # (instruction index of a forward jmp, loops to skip)
    while len(prog) < n - 1:
        heads.append(len(prog))
        body = rng.choice((rng.randrange(4, 24), rng.randrange(24, 90)))
        for fid in rng.choices(ids, weights, k=body):
            prog.append(random_ins(rng, fid, pmem[fid]))
        prog.append(random_ins(rng, rng.choice(("CMP_RM64_IMM8", "CMP_R64_RM64", "SUB_RM64_IMM8")), 0))
        prog.append(Ins(jcc := rng.choice(JCC), x86gen.get_form(jcc), (("b", heads[-1]),)))
        if rng.random() < .25:
            prog.append(Ins("JMP_REL32_64", x86gen.get_form("JMP_REL32_64"), (("b", -1),)))
            pending.append((len(prog) - 1, rng.randrange(1, 4)))
    heads.append(len(prog))
    prog.append(Ins("RETNQ", x86gen.get_form("RETNQ"), ()))
    for j, skip in pending:   # jump to the head of a later loop (or to the ret)
        later = [h for h in heads if h > j]
        prog[j].ops = (("b", later[min(skip, len(later) - 1)]),)
    return with_decorated(prog, seed, decorated) if decorated else prog


def with_decorated(prog: list[Ins], seed: int, forms, share: float = DECORATED_SHARE) -> list[Ins]:
    """``prog`` with decorated AVX-512 instructions (`random_decorated` of ``forms``) inserted before randomly
    chosen non-branch instructions, ``share`` of the result, from a generator of its own (seeded by ``seed``), so
    that the rest of the stream is unchanged; branch targets follow the instructions they reached."""
    rng = random.Random(seed * 7919 + 23)
    ids, weights, pmem = [f for f, _, _ in forms], [w for _, w, _ in forms], {f: p for f, _, p in forms}
    slots = [k for k, ins in enumerate(prog) if not ins.is_branch]
    before = set(rng.sample(slots, min(len(slots), round(len(prog) * share / (1 - share)))))
    out: list[Ins] = []
    where: list[int] = []      # old index -> new index
    for k, ins in enumerate(prog):
        if k in before:
            fid = rng.choices(ids, weights)[0]
            out.append(random_decorated(rng, fid, pmem[fid]))
        where.append(len(out))
        out.append(ins)
    for ins in prog:
        if ins.is_branch: ins.ops = (("b", where[ins.ops[0][1]]),)
    return out


# ---------------------------------------------------------------------------------------------
# building each encoder's input

class Operands:
    """x86gen operand objects and iced operands for abstract operands (shared, built once)."""

    def __init__(self):
        self._x: dict = {}
        self._i: dict = {}

    def x(self, op):
        v = self._x.get(op)
        if v is None:
            t = op[0]
            if t == "r": v = REGISTERS[op[1]]
            elif t == "m":
                _, b, ix, s, d, size = op
                v = Mem(REGISTERS[b] if b else None, REGISTERS[ix] if ix else None, s, d, size)
            elif t == "i": return op[1]
            else: raise ValueError(op)
            self._x[op] = v
        return v

    def xs(self, ins: Ins) -> tuple:
        """x86gen operands of an instruction, with its decorations: ``zmm1.k(k1).z``, ``dword(rax).bcst``."""
        xs = [self.x(o) for o in ins.ops]
        d = ins.deco
        if d is not None:
            if d.bcst:
                i = next(i for i, o in enumerate(ins.ops) if o[0] == "m")
                xs[i] = xs[i].bcst
            if d.mask:
                xs[0] = xs[0].k(REGISTERS[d.mask])
                if d.zero: xs[0] = xs[0].z
        return tuple(xs)

    def iced_mem(self, op, next_ip: int = 0):
        _, b, ix, s, d, _size = op
        if b == "rip":   # iced takes the absolute target
            return I.MemoryOperand(Register.RIP, displ=(next_ip + d) & ((1 << 64) - 1), displ_size=8)
        key = op[:5]
        v = self._i.get(key)
        if v is None:
            v = I.MemoryOperand(ICED_REG[b] if b else Register.NONE, ICED_REG[ix] if ix else Register.NONE, s, d,
                                1 if d or not b else 0)
            self._i[key] = v
        return v


def _imm_kind(v: int) -> str:
    if -(1 << 31) <= v < (1 << 31): return "i32"
    if 0 <= v < (1 << 32): return "u32"
    return "i64" if v < 0 else "u64"


_ICED_DECORATED: dict = {}


def iced_decorated(create, deco: Deco):
    """``create`` followed by setting the decorations on the `Instruction` (iced's create_* take none)."""
    key = (create, deco)
    f = _ICED_DECORATED.get(key)
    if f is None:
        mask = ICED_REG[deco.mask] if deco.mask else None
        zero, bcst = deco.zero, deco.bcst
        rc = deco.rc + 1 if deco.rc is not None and deco.rc < 4 else None     # RoundingControl.ROUND_TO_NEAREST = 1 …
        sae = deco.rc == 4

        def f(*args):
            ins = create(*args)
            if mask is not None: ins.op_mask = mask
            if zero: ins.zeroing_masking = True
            if bcst: ins.is_broadcast = True
            if rc is not None: ins.rounding_control = rc
            if sae: ins.suppress_all_exceptions = True
            return ins
        _ICED_DECORATED[key] = f
    return f


def iced_call(ins: Ins, ops: Operands, target: int | None = None, next_ip: int = 0):
    """``(Instruction.create_*, args)`` for one instruction; ``target`` is a branch's label or address.
    A decorated instruction's function is `iced_decorated`'s (create_*, then the decorations)."""
    code = getattr(Code, ins.code)
    if ins.is_branch: return I.Instruction.create_branch, (code, target)
    if not ins.ops: return I.Instruction.create, (code,)
    kinds, args = [], [code]
    for op in ins.ops:
        if op[0] == "r": kinds.append("reg"); args.append(ICED_REG[op[1]])
        elif op[0] == "m": kinds.append("mem"); args.append(ops.iced_mem(op, next_ip))
        else: kinds.append(_imm_kind(op[1])); args.append(op[1])
    create = getattr(I.Instruction, "create_" + "_".join(kinds))
    return (create if ins.deco is None else iced_decorated(create, ins.deco)), tuple(args)


def reference(prog: list[Ins], ops: Operands) -> tuple[bytes, list[int], list]:
    """iced `Encoder` bytes of the program with exactly its forms; the address of each instruction
    (and of the end); the ``(create_fn, args)`` list with absolute branch targets that made them."""
    enc = I.Encoder(64)
    addrs, ip = [], 0
    for ins in prog:      # lengths do not depend on branch targets or rip displacements
        addrs.append(ip)
        fn, args = iced_call(ins, ops, ip, ip)
        ip += enc.encode(fn(*args), ip)
    enc.take_buffer()
    addrs.append(ip)
    calls = []
    for k, ins in enumerate(prog):
        target = addrs[ins.ops[0][1]] if ins.is_branch else None
        calls.append(iced_call(ins, ops, target, addrs[k + 1]))
    out = bytearray()
    for (fn, args), a in zip(calls, addrs):
        enc.encode(fn(*args), a)
        out += enc.take_buffer()
    if len(out) != addrs[-1]: raise AssertionError("iced reference: lengths changed")
    return bytes(out), addrs, calls


def iced_block_calls(prog: list[Ins], ops: Operands, next_ips: list[int]) -> list[tuple]:
    """``(create_fn, args, label)`` for BlockEncoder: a branch target is the label (k + 1) of
    instruction k, which the timed loop sets as that instruction's ip."""
    targets = {ins.ops[0][1] for ins in prog if ins.is_branch}
    res = []
    for k, ins in enumerate(prog):
        fn, args = iced_call(ins, ops, ins.ops[0][1] + 1 if ins.is_branch else None, next_ips[k])
        res.append((fn, args, k + 1 if k in targets else 0))
    return res


def x86gen_calls(prog: list[Ins], ops: Operands, addrs: list[int]) -> list[tuple]:
    """``(form.encoder, operands, is_branch)``; a branch's operand is its absolute rel32 target. A decorated
    instruction's function is the form itself (``form(*ops)``, ``form(*ops, rc=…)``: the generated
    ``form.encoder`` takes no decorations)."""
    res = []
    for ins in prog:
        if ins.is_branch: res.append((ins.form.encoder, (addrs[ins.ops[0][1]],), True))
        elif ins.deco is not None:
            rc = ins.deco.rc
            res.append((ins.form if rc is None else functools.partial(ins.form, rc=rc), ops.xs(ins), False))
        else: res.append((ins.form.encoder, tuple(ops.x(o) for o in ins.ops), False))
    return res


def rc_kw(ins: Ins) -> dict:
    """The keywords of a call for ``ins``: ``{"rc": …}`` with static rounding or SAE, else none."""
    return {"rc": ins.deco.rc} if ins.deco is not None and ins.deco.rc is not None else {}


def encode_layout(prog: list[Ins], ops: Operands) -> list[int]:
    """Addresses when every instruction goes through `x86gen.encode`, which picks the shortest branch
    form that reaches: start with every branch short and grow those that do not reach until nothing
    changes (as an assembler relaxes; distances only grow, so this ends)."""
    xops = [ops.xs(ins) if not ins.is_branch else None for ins in prog]
    lengths = [len(x86gen.encode(ins.form.mnemonic, *xo, **rc_kw(ins))) if xo is not None else 0 for ins, xo in zip(prog, xops)]
    for k, ins in enumerate(prog):
        if ins.is_branch: lengths[k] = len(x86gen.encode(ins.form.mnemonic, 0, ip=0))
    while True:
        addrs = [0]
        for n in lengths: addrs.append(addrs[-1] + n)
        changed = False
        for k, ins in enumerate(prog):
            if ins.is_branch:
                n = len(x86gen.encode(ins.form.mnemonic, addrs[ins.ops[0][1]], ip=addrs[k]))
                if n > lengths[k]: lengths[k], changed = n, True
        if not changed: return addrs


def assembler_calls(prog: list[Ins], ops: Operands, asm_cls) -> tuple[int, list[tuple]]:
    """For `x86gen.Assembler`: the number of labels, and per instruction ``(label to bind first or
    -1, unbound method, operands, label index of a branch target or -1)``; with rounding the method is
    ``functools.partial(method, rc=…)``."""
    targets = sorted({ins.ops[0][1] for ins in prog if ins.is_branch})
    lab = {k: n for n, k in enumerate(targets)}
    res = []
    for k, ins in enumerate(prog):
        mn = ins.form.mnemonic
        m = getattr(asm_cls, {"and": "and_", "or": "or_", "not": "not_"}.get(mn, mn), None)
        if m is None: raise ValueError(f"Assembler has no method for {mn!r}")
        if ins.is_branch: res.append((lab.get(k, -1), m, (), lab[ins.ops[0][1]]))
        else:
            kw = rc_kw(ins)
            res.append((lab.get(k, -1), functools.partial(m, **kw) if kw else m, ops.xs(ins), -1))
    return len(targets), res


def encode_calls(prog: list[Ins], ops: Operands, addrs: list[int]) -> list[tuple]:
    """``(mnemonic, operands, how)`` for `x86gen.encode`, branch targets for ``addrs``: ``how`` is True for a
    branch (``ip=``), False for a plain call, else the keywords (``{"rc": …}``)."""
    res = []
    for ins in prog:
        if ins.is_branch: res.append((ins.form.mnemonic, (addrs[ins.ops[0][1]],), True))
        else: res.append((ins.form.mnemonic, ops.xs(ins), rc_kw(ins) or False))
    return res


def _hex(v: int) -> str: return f"-{-v:#x}" if v < 0 else f"{v:#x}"


def op_text(op) -> str:
    t = op[0]
    if t == "r": return op[1]
    if t == "i": return _hex(op[1])
    _, b, ix, s, d, size = op
    parts = [p for p in (b, (f"{ix}*{s}" if s != 1 else ix) if ix else None) if p]
    a = "+".join(parts)
    if d or not a: a += _hex(d) if not a or d < 0 else "+" + _hex(d)
    return (f"{SIZE_WORD[size]} ptr " if size else "") + f"[{a}]"


def ins_operands_text(ins: Ins) -> list[str]:
    """The operands of ``ins`` in GNU as's Intel syntax, decorations included: ``zmm1 {k1}{z}``,
    ``dword ptr [rax]{1to16}``, a last operand ``{rn-sae}``."""
    texts = [op_text(o) for o in ins.ops]
    d = ins.deco
    if d is not None:
        if d.bcst:
            i = next(i for i, o in enumerate(ins.ops) if o[0] == "m")
            texts[i] += f"{{1to{ins.form.operands[i].mem // ins.ops[i][5]}}}"
        if d.mask: texts[0] += f" {{{d.mask}}}" + ("{z}" if d.zero else "")
        if d.rc is not None: texts.append("{" + ROUNDING_TEXT[d.rc] + "}")
    return texts


def text_lines(prog: list[Ins], label_prefix: str | None, addrs: list[int] | None = None) -> list[str]:
    """Intel-syntax lines. With ``label_prefix`` branch targets are labels ``<prefix><k>:``;
    otherwise absolute addresses from ``addrs``."""
    targets = {ins.ops[0][1] for ins in prog if ins.is_branch}
    lines = []
    for k, ins in enumerate(prog):
        if label_prefix is not None and k in targets: lines.append(f"{label_prefix}{k}:")
        if ins.is_branch:
            t = ins.ops[0][1]
            lines.append(f"{ins.form.mnemonic} {label_prefix}{t}" if label_prefix is not None else f"{ins.form.mnemonic} {_hex(addrs[t])}")
        elif ins.ops: lines.append(f"{ins.form.mnemonic} " + ", ".join(ins_operands_text(ins)))
        else: lines.append(ins.form.mnemonic)
    return lines


# ---------------------------------------------------------------------------------------------
# checking

class Checker:
    """Do some bytes decode to the same instructions (mnemonic, operands; a branch by the index of
    the instruction it reaches; rip-relative by the relative displacement) as the reference?"""

    def __init__(self):
        f = I.Formatter(I.FormatterSyntax.INTEL)
        f.memory_size_options = I.MemorySizeOptions.ALWAYS
        self.fmt = f

    def keys(self, data: bytes) -> list:
        decoded = list(I.Decoder(64, data, ip=0))
        index = {d.ip: k for k, d in enumerate(decoded)}
        index[len(data)] = len(decoded)
        out = []
        for d in decoded:
            if d.code == Code.INVALID: out.append(("invalid", d.ip)); continue
            ops = []
            for i in range(self.fmt.operand_count(d)):
                j = self.fmt.get_instruction_operand(d, i)
                k = d.op_kind(j) if j is not None else None
                if k == OpKind.NEAR_BRANCH64: ops.append(("->", index.get(d.near_branch_target, ("addr", d.near_branch_target))))
                elif k == OpKind.MEMORY and d.memory_base == Register.RIP:
                    ops.append(("rip", _signed(d.memory_displacement - d.next_ip, 64), d.memory_size))
                else: ops.append(self.fmt.format_operand(d, i))
            out.append((d.mnemonic, tuple(ops)))
        return out

    def same(self, data: bytes, ref_keys: list) -> str | None:
        """None when equivalent, else a description of the first difference."""
        got = self.keys(data)
        for k, (a, b) in enumerate(zip(got, ref_keys)):
            if a != b: return f"instruction {k}: got {a}, expected {b}"
        if len(got) != len(ref_keys): return f"{len(got)} instructions, expected {len(ref_keys)}"
        return None


def concat_keys(key_lists: list[list]) -> list:
    """The keys of several programs laid end to end (branch indices shifted to the whole list)."""
    out, off = [], 0
    for keys in key_lists:
        for mn, ops in keys:
            out.append((mn, tuple(("->", o[1] + off) if o[0] == "->" and o[1].__class__ is int else o for o in ops)))
        off += len(keys)
    return out
