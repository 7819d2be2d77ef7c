"""The first use of a signature (`x86gen._first_use`, from the table's text) chooses what `x86gen._choose` chooses.

`x86gen.encode` asks `_first_use.first_choice` the first time it meets a (mnemonic, operand signature) and
`_choose.plan_for` from the second on, so two pieces of code choose forms. These tests check, for every signature
that some form of the table takes, that where the first answers it names the same forms in the same order as
`_choose.candidates` and the same mode (the shortest form, or the first whose immediates fit) as `plan_for`; and
that the bytes of a first encode are those of a second (the fuzz tests compare both with iced-x86).
"""
from __future__ import annotations

import itertools

import pytest

import x86gen
from x86gen import _choose
from x86gen import forms as F
from x86gen._first_use import first_choice, takes
from x86gen.memory import MEMORY_SIZES, Mem
from x86gen.registers import REGISTERS

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


def test_first_choice_is_plan_fors_choice():
    """For every signature of every form: where `first_choice` answers, `_choose.candidates` has the same forms in the
    same order, and `plan_for` the same mode. (Both test operand kinds with `takes`, which the fuzz tests check
    against iced-x86 through every encode; this test checks the rest of the choice: order, prefix-word forms, modes.)
    Where `first_choice` does not answer, `_choose` decides. It answers for almost every
    signature without registers 16-31 or unsized memory, or the first encode would not be cheap."""
    answered = declined = by_design = 0
    for mn, sig in _signatures():
        choice = first_choice(mn, sig)
        if choice is None:   # registers 16-31 and unsized memory are always x86gen._choose's; the others counted
            if any(s[-1] == "+" or (s[0] == "m" and not s[-1].isdigit()) for s in sig): by_design += 1
            else: declined += 1
            continue
        answered += 1
        rows, fit, rel = choice
        ops = tuple(_value(s) for s in sig)
        assert tuple("i" if x.__class__ is int else x.sig for x in ops) == sig
        forms, check = _choose.candidates(mn, sig, ops)
        ids = [r[0] for r in rows]
        assert fit == check, (mn, sig)
        want = [f.id for f in forms] if fit else [forms[0].id]
        assert ids == want, (mn, sig, ids, want)
        assert rel == any(f.is_branch for f in forms), (mn, sig)
        if not fit and len(forms) > 1 and forms[0].encoding_kind == "vex":
            assert forms[1].length != forms[0].length, (mn, sig)   # (plan_for would choose by register)
    # today 12,066 answered, 155 declined (xchg; equally long VEX forms such as FMA4's and vmovq xmm, xmm; forms with
    # a 32-bit implicit address: monitor, jecxz, enqcmd r32, xstore), 19,789 by design
    assert answered > 50 * declined and answered > 10_000, (answered, declined, by_design)


# (mnemonic, operands, bytes): llvm-mc 14 (`llvm-mc -triple=x86_64 -x86-asm-syntax=intel -show-encoding`); jne: iced-x86,
# JNE_REL8_64 to 0x40 at 0x10
FIRST_USES = [
    ("add", ("eax", "ecx"), "01c8"), ("add", ("eax", 1), "83c001"), ("add", ("eax", 1000), "05e8030000"),
    ("shl", ("ecx", 1), "d1e1"), ("shl", ("ecx", 3), "c1e103"), ("vaddps", ("ymm0", "ymm1", "ymm2"), "c5f458c2"),
    ("mov", ("rax", "qword [rbx+8]"), "488b4308"), ("vpblendvb", ("xmm1", "xmm2", "xmm3", "xmm4"), "c4e3694ccb40"),
    ("jne", (0x40,), "752e"), ("imul", ("eax", "ecx", 300), "69c12c010000"),
]


@pytest.mark.parametrize("mn, names, expected", FIRST_USES)
def test_first_encode_is_the_second(mn, names, expected):
    """A signature's first encode (`first_plan`), its second (which compiles the plan) and its third (the plan) give
    the same bytes, the oracle's."""
    from x86gen import encoder
    ops = [x if isinstance(x, int) else x86gen.qword(x86gen.rbx, disp=8) if x.startswith("qword") else REGISTERS[x]
           for x in names]
    kw = {"ip": 0x10} if mn == "jne" else {}
    key = (mn, *["i" if x.__class__ is int else x.sig for x in ops])
    assert first_choice(mn, key[1:]) is not None   # (the first use is first_plan's)
    encoder._MET.discard(key)
    encoder._PLANS.pop(key, None)
    encoder._TABLES.pop(mn, None)
    got = [x86gen.encode(mn, *ops, **kw).hex() for _ in range(3)]
    assert got == [expected] * 3
