"""The first use of an operand signature by `x86gen.encode`, chosen from the table's text alone.

`encode` keeps a plan per (mnemonic, operand signature). The first time it meets a signature, `first_plan` reads the
mnemonic's rows as decoded JSON arrays (`x86gen._table_text`), keeps those whose operands take the signature
(`takes`), shortest first (the row's ``length``: GNU as's choice), and binds the generated encoders of the forms it
may choose (`x86gen._gen.encoders.shape`). It builds no `x86gen.forms.Form`, and a process's first encode compiles
none of the selection code of `x86gen._choose` (without a bytecode cache, compiling the code a first encode
imports was most of what it cost: issue 10's cold start).

Where the choice needs more, `first_plan` answers None and `x86gen._choose` chooses, as it does for every signature
on its second use: a mnemonic's other names (x86gen._aliases), xchg (GNU as's operand order), unsized memory,
registers 16-31, forms with a 32-bit implicit address (``addr32``, jecxz, umonitor r32, enqcmd r32), equally long
VEX forms (the one with the shorter bytes for the registers given), and operands no form takes (the error). tests/test_first_use.py
checks that both choose the same forms, in the same order, for every signature of every form.
"""
from __future__ import annotations

from ._gen.encoders import shape
from ._gen.schema import FORM_FIELDS
from ._runtime import LabelOperand
from ._table_text import row_arrays
from .registers import REGISTERS

# the fields `first_plan` reads, by their position in a row (x86gen/_gen/schema.py)
(_ID, _OPERANDS, _ENCODING_KIND, _OPSIZE16, _ADDRSIZE32, _IMM_WIDTHS, _LENGTH, _SHAPE, _SHAPE_ARGS, _CPUID) = map(
    FORM_FIELDS.index, ("id", "operands", "encoding_kind", "opsize16", "addrsize32", "imm_widths", "length", "shape",
                        "shape_args", "cpuid"))
# The CPUID features of VEX forms that re-encode AVX-512 instructions: AVX-VNNI, AVX-IFMA and AVX-NE-CONVERT came
# after AVX512_VNNI, AVX512_IFMA and AVX512_BF16, and GNU as and llvm-mc write their mnemonics with EVEX unless told
# `{vex}` (`vpdpbusd xmm1, xmm2, xmm3` is 62 F2 6D 08 50 CB; `{vex} vpdpbusd …` C4 E2 69 50 CB). x86gen._choose.candidates
# leaves such a VEX form out where an EVEX form takes the operands, so code assembled by x86gen runs where theirs does.
VEX_ON_REQUEST = frozenset(("AVX_VNNI", "AVX_IFMA", "AVX_NE_CONVERT"))
_VSIB = ("mx", "my", "mz")   # the signature heads of memory operands with an xmm/ymm/zmm index (`x86gen.VsibMem`)
_MEMORY_HEADS = ("m", "moffs", *_VSIB)   # a plain memory operand's signature: one of these and its size, if sized
_REG_KIND: dict[str, str] = {}   # a register signature → its register class ("eax" → "r32", "MM" → "mm"), on first use


def takes(o, s: str, movabs: bool = False) -> bool:
    """Does form operand ``o`` (an operand row: kind, loc, role, reg, mem, imm, sext) take an operand of signature
    ``s`` (immediate ranges aside)? Signatures (`Reg.sig`, `Mem.sig`): a register class (``r32``, ``xmm``; ``MM`` for
    mm0-7, ``xmm+`` for xmm16-31) or a register that forms name as a fixed operand (``eax``, ``cl``), a memory size
    (``m32``; ``m`` unsized; ``moffs64`` a 64-bit absolute address, which only the moffs forms encode, or with
    ``movabs`` any moffs form; ``mx32`` an xmm index, which only VSIB forms take), ``i`` an immediate, ``l`` a
    label (a branch target)."""
    kind, loc, _, reg, mem, imm, _ = o
    if imm is not None or kind == "1":   # an immediate (kind 1: the shifts' constant 1) or a branch target
        return s == "i" or (s == "l" and kind[:3] == "rel")
    if s[0] == "m":   # memory (no register signature starts with a lower-case m: mm0-7's is "MM")
        if mem is None: return False
        head = s.rstrip("0123456789")
        if head not in _MEMORY_HEADS: return False   # a masked destination ("m32{k}") is no plain operand
        if mem and head != s and int(s[len(head):]) != mem: return False   # (mem 0: `m`, any size; unsized: any form)
        if kind[:2] == "vm": return head == "m" + kind[-1]   # vm32x takes an xmm index, vm64y a ymm index (SDM Vol.2 2.3.12)
        if head in _VSIB: return False
        return (loc == "moffs") == (head == "moffs") or (movabs and loc == "moffs")
    if reg is None: return False
    if loc == "fixed": return s == reg
    if not _REG_KIND:
        for r in REGISTERS.values(): _REG_KIND.setdefault(r.sig, r.kind)
    return _REG_KIND.get(s) == reg


def first_choice(mnemonic: str, sig: tuple) -> tuple[list, bool, bool] | None:
    """``(rows, fit, rel)``: the rows of the forms `x86gen._choose.plan_for` would try for signature ``sig`` of
    ``mnemonic``, in its order (all of them, the first whose immediates fit, when ``fit``; else only the first is
    used), and whether one is a branch (its encoder takes ``ip=``); or None where `plan_for` must choose."""
    if mnemonic == "xchg": return None   # xchg eax, ecx is 91 (GNU as's operand order: x86gen._operand_rewrites)
    for s in sig:
        if s[-1] == "+" or (s[0] == "m" and not s[-1].isdigit()): return None   # registers 16-31, unsized memory
    rows = row_arrays(mnemonic)
    if rows is None: return None   # another name of a mnemonic, or no mnemonic at all
    n = len(sig)
    ok = [r for r in rows if len(r[_OPERANDS]) == n and all(map(takes, r[_OPERANDS], sig))]
    if not ok: return None   # the error: x86gen._choose says which forms there are
    # forms that only a prefix word asks for (`_choose._sized_kind`): a 16-bit branch (o16) is left out where another
    # form takes the operands (jne rel8/rel32, not rel16); a 32-bit implicit address is left to x86gen._choose
    if any(r[_ADDRSIZE32] or r[_CPUID] in VEX_ON_REQUEST for r in ok): return None   # (and VEX_ON_REQUEST: x86gen._choose)
    ok = [r for r in ok if not (r[_OPSIZE16] and _is_branch(r))]
    if not ok: return None
    rel = any(map(_is_branch, ok))
    ok.sort(key=lambda r: r[_LENGTH])   # stable: file order among equals
    if any(r[_IMM_WIDTHS] or any(o[0] == "1" for o in r[_OPERANDS]) for r in ok): return ok, True, rel
    if len(ok) > 1 and ok[0][_ENCODING_KIND] == "vex" and ok[1][_LENGTH] == ok[0][_LENGTH]:
        return None   # equally long VEX forms: the one with the shorter bytes for the registers given (x86gen._vex_rm_swap)
    return ok[:1], False, rel


def _is_branch(row: list) -> bool:
    """Has the form a branch target (rel8/rel16/rel32), so that its encoder takes ``ip=``?"""
    return any(o[0][:3] == "rel" for o in row[_OPERANDS])


def first_plan(mnemonic: str, sig: tuple):
    """``(plan, takes ip=)`` for the first use of signature ``sig`` of ``mnemonic`` (see the module's comment), or
    None where `x86gen._choose.plan_for` must choose. The plan encodes what `plan_for`'s would: the forms of
    `first_choice`, bound from their shapes; it raises `LabelOperand` for a memory operand that names a label."""
    choice = first_choice(mnemonic, sig)
    if choice is None: return None
    rows, fit, rel = choice
    if fit:   # the first form whose immediates (or branch target) fit, as Form.fits tests them
        def inner(*ops, ip=0):
            for r in rows:   # (each form's encoder bound when it is reached: most often the first fits)
                enc, fits = shape(r[_SHAPE])(r[_ID], *r[_SHAPE_ARGS])
                branch = _is_branch(r)
                if fits is None: return enc(*ops, ip=ip) if branch else enc(*ops)
                if branch:
                    if fits(*ops, ip=ip): return enc(*ops, ip=ip)
                elif fits(*ops): return enc(*ops)
            from ._choose import range_error
            from .forms import get_form
            raise range_error(mnemonic, ops, [get_form(r[_ID]) for r in rows])
    else: inner = shape(rows[0][_SHAPE])(rows[0][_ID], *rows[0][_SHAPE_ARGS])[0]
    mem_at = next((i for i, s in enumerate(sig) if s[0] == "m"), None)
    if mem_at is None: return inner, rel

    def plan(*ops, **kw):
        if ops[mem_at].label is not None: raise LabelOperand
        return inner(*ops, **kw)
    return plan, rel
