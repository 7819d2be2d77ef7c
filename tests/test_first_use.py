"""A signature's plan before and after it is compiled (`x86gen.selection.plans`) encodes the same bytes.

`x86gen.encode` and the `Assembler` keep one plan per (mnemonic, operand signature). Its first `COMPILE_AFTER` uses
call the chosen forms' generated encoders (`plans.fallback`); then it is compiled from the same forms' code written for
the signature (`plans.compile_plan`). Both encode the forms `plans.plan_choice` names, in the same order; these tests
check, for every signature that some form of the table takes, that the two give the same bytes (or the same error), and
that the bytes of a first, second and compiled encode are the oracle's (the fuzz tests compare every form with iced-x86).
"""
from __future__ import annotations

import itertools

import pytest

import x86gen
from x86gen import forms as F
from x86gen.errors import LabelOperand
from x86gen.memory import MEMORY_SIZES, Mem
from x86gen.registers import REGISTERS
from x86gen.selection import plans
from x86gen.table import takes

# a register for each register signature: the class ("r32": ebx, not eax, whose signature is "eax"), or the register
_REG_OF_SIG: dict[str, object] = {}
for _r in REGISTERS.values(): _REG_OF_SIG.setdefault(_r.sig, _r)


def _operand_sigs(o) -> list[str]:
    """The signatures that an operand of this kind could have: every register signature of its class, every memory
    signature (sized, unsized, moffs, VSIB), "i" for an immediate. Those it does not take are left for `takes`."""
    kind, loc, _, reg, mem, imm, _ = o
    if imm is not None or kind == "1": return ["i"]
    out = []
    if reg is not None:
        out += [s for s, r in _REG_OF_SIG.items() if r.kind == reg or s == reg]
    if mem is not None:
        sizes = [mem] if mem else [m for m in MEMORY_SIZES if m <= 512][:4]   # (`m`, any size: a few of them)
        out += ["m"] + [f"{head}{m}" for head in ("m", "moffs", "mx", "my", "mz") for m in sizes]
    return out


def _value(s: str):
    """An operand of signature ``s``."""
    if s == "i": return 1
    if s[0] != "m": return _REG_OF_SIG[s]
    head = s.rstrip("0123456789")
    size = int(s[len(head):]) if head != s else 0
    if head == "moffs": return Mem(None, None, 1, 1 << 40, size)   # a 64-bit absolute address
    if head in ("mx", "my", "mz"): return Mem(REGISTERS["rbx"], REGISTERS[{"mx": "xmm3", "my": "ymm3", "mz": "zmm3"}[head]], 4, 8, size)
    return Mem(REGISTERS["rbx"], None, 1, 8, size)


def _signatures():
    """(mnemonic, signature) for every signature some form takes (its operands' signatures, combined), each once."""
    seen = set()
    for f in F.all_forms():
        per_operand = [[s for s in _operand_sigs(o) if takes(o, s)] for o in f.operands]
        for sig in itertools.product(*per_operand):
            if (f.mnemonic, sig) not in seen:
                seen.add((f.mnemonic, sig))
                yield f.mnemonic, sig


def _outcome(plan, ops, rel):
    try: return (plan(*ops, ip=0x100) if rel else plan(*ops)).hex()
    except x86gen.EncodeError as ex: return type(ex).__name__
    except LabelOperand: return "LabelOperand"


def test_compiled_plan_encodes_what_the_first_uses_encode():
    """For every signature of every form (a register of each class, memory of each size, immediate 1): the plan of its
    first uses and the compiled plan give the same bytes or the same error class. Both take the forms of
    `plans.plan_choice`; this checks that the compiled code (each form's code written for the signature, the forms'
    fit tests inline) is the generated encoders' code."""
    compared = same_plan = 0
    done: dict[tuple, str] = {}
    for mn, sig in _signatures():
        ops = tuple(_value(s) for s in sig)
        assert tuple("i" if x.__class__ is int else x.sig for x in ops) == sig
        try: mode, chosen, rel, mem_at = plans.plan_choice(mn, sig, ops)
        except x86gen.EncodeError: continue   # (no form takes the combination: a moffs with another operand, …)
        if mode == "vex-any": continue        # (never compiled)
        key = (mn, mode, mem_at, sig, tuple(r.id for r in chosen))
        if key in done: same_plan += 1; continue
        first = plans.fallback(mn, mode, chosen, rel)
        compiled = plans.compile_plan(mn, sig, mode, mem_at, chosen, rel)
        a, b = _outcome(first, ops, rel), _outcome(compiled, ops, rel)
        assert a == b, (mn, sig, mode, [r.id for r in chosen], a, b)
        done[key] = a
        compared += 1
    assert compared > 10_000, (compared, same_plan)


# (mnemonic, operands, bytes): llvm-mc 14 (`llvm-mc -triple=x86_64 -x86-asm-syntax=intel -show-encoding`); jne: iced-x86,
# JNE_REL8_64 to 0x40 at 0x10
FIRST_USES = [
    ("add", ("eax", "ecx"), "01c8"), ("add", ("eax", 1), "83c001"), ("add", ("eax", 1000), "05e8030000"),
    ("shl", ("ecx", 1), "d1e1"), ("shl", ("ecx", 3), "c1e103"), ("vaddps", ("ymm0", "ymm1", "ymm2"), "c5f458c2"),
    ("mov", ("rax", "qword ptr [rbx+8]"), "488b4308"), ("vpblendvb", ("xmm1", "xmm2", "xmm3", "xmm4"), "c4e3694ccb40"),
    ("jne", (0x40,), "752e"), ("imul", ("eax", "ecx", 300), "69c12c010000"),
]


@pytest.mark.parametrize("mn, names, expected", FIRST_USES)
def test_first_encode_is_the_compiled_one(mn, names, expected, monkeypatch):
    """A signature's first encodes (the generated encoders) and those after its plan is compiled give the same bytes,
    the oracle's; and the plan `encode` keeps is compiled after `COMPILE_AFTER` uses (here 3)."""
    from x86gen import encoder
    monkeypatch.setattr(plans, "COMPILE_AFTER", 3)
    ops = [x if isinstance(x, int) else x86gen.qword(x86gen.rbx, disp=8) if x.startswith("qword") else REGISTERS[x]
           for x in names]
    kw = {"ip": 0x10} if mn == "jne" else {}
    key = (mn, *["i" if x.__class__ is int else x.sig for x in ops])
    monkeypatch.setattr(encoder, "_PLANS", {})
    monkeypatch.setattr(encoder, "_TABLES", {})
    monkeypatch.setattr(plans, "_HOT", set())
    monkeypatch.setattr(plans, "_COMPILED", {})
    got = [x86gen.encode(mn, *ops, **kw).hex() for _ in range(6)]
    assert got == [expected] * 6
    plan = encoder._PLANS[key]
    assert hasattr(plan, "source") or hasattr(plan, "cache_info"), plan   # compiled (or a register-only memo)


def test_program_lines_past_the_compile_count(monkeypatch):
    """The program reader's fast path (`program_text._plain_record`) meets a plan whose use count is up (`plans.Replan`)
    like any door: the line goes the general way, which compiles the plan, and the bytes stay the oracle's (iced-x86).
    (`add r9, imm`: two forms told apart by the immediate, a counted plan.)"""
    import iced_x86 as I

    from x86gen import assembler, program_text, text
    monkeypatch.setattr(plans, "COMPILE_AFTER", 3)
    kept: dict = {}   # the one table both keep (program_text imports assembler's)
    for mod in (assembler, program_text): monkeypatch.setattr(mod, "PLANS_BY_SIGNATURE", kept)
    monkeypatch.setattr(plans, "_HOT", set())
    monkeypatch.setattr(plans, "_COMPILED", {})
    text.clear_caches()
    imms = [*range(1, 40, 3), 1000, -5, 0x12345]
    source = "\n".join(f"add r9, {d}" for d in imms) + "\n"
    e = I.Encoder(64)
    for d in imms:
        code = I.Code.ADD_RM64_IMM8 if -128 <= d <= 127 else I.Code.ADD_RM64_IMM32
        e.encode(I.Instruction.create_reg_i32(code, I.Register.R9, d), 0)
    expected = bytes(e.take_buffer())
    try:
        assert x86gen.assemble(source) == expected
        text.clear_caches()
        assert x86gen.assemble(source) == expected   # the compiled plan, from the first line on
    finally: text.clear_caches()
    assert hasattr(kept.get(("add", "r64", "i")), "source"), kept   # compiled: the fast path met Replan
