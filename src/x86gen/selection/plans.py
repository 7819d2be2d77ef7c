"""Plans: one function per (mnemonic, operand signature) that chooses the form and encodes, kept by the doors that
encode by mnemonic (`x86gen.encode`'s table, the `x86gen.Assembler`'s methods).

A signature's plan is made of the chosen forms' generated encoders (`x86gen.forms.encoder_of`): binding them compiles
nothing, so a program's first use of each signature costs tens of microseconds.

- One form with registers only: its encoder, its bytes remembered per register combination (a C-level memo) from the
  first use on.
- Otherwise the plan calls the chosen forms' encoders (one form; forms told apart by their immediates, "fit": ``add
  r64, imm8`` or ``imm32``; or by the register in ModRM.rm, "vex"), and once it has been used `COMPILE_AFTER` times it
  is compiled: one function from the bodies of the candidate forms' encoders written for that signature
  (`x86gen.encoding.writer.parts`, without the checks the signature answers), choosing among the forms inline, in one
  Python frame. It raises `Replan` when its count is up, and the door that called it asks `plan_for` again, which
  then compiles it. Compiling costs about 0.15 ms and saves 0.1-0.8 us per call (the most where immediates choose);
  in a 10,000-line program a dozen signatures reach the count.

A form's encoder raises `x86gen.errors.LabelOperand` for a memory operand that names a label, and so does a plan.

Operands that a form's encoder does not take itself (a segment override, a 32-bit address, AVX-512 decorations,
`x86gen.encoding.decorated`) have signatures of their own (``fs:m32``, ``a32:m32``, ``zmm{k}``, ``b32``): their plans
take the wrapping off and encode with the chosen form's encoder; those of a masked destination, a broadcast and ``rc=``
alone are written out here (`_decorated_plan`: the decorations go to the EVEX encoder as ``p2=`` and ``n=``), so that a
decorated EVEX instruction costs little more than a plain one.

Every cache here is keyed by operand signatures, whose number is bounded by the spec (only signatures some form takes
are kept), except the register-only memos, which keep at most `REG_MEMO_MAX` entries each. Each entry is published
complete (built in locals, stored last), so another thread (free-threaded CPython included) that finds it finds it
whole.
"""
from __future__ import annotations

import functools

from ..errors import LabelOperand
from ..evex import SAE
from ..forms import encoder_of, form_of
from ..memory import A32Mem, Bcst, Mem, SegMem
from ..registers import Masked, Reg
from ..table import is_branch, mask_required, row_of
from .candidates import by_rm_register, candidates, choose, rm_index, shortest_of, vex_alternatives
from .request import canonical, xchg_choice

COMPILE_AFTER = 128    # calls of a signature's plan before it is compiled (see the module's doc)
REG_MEMO_MAX = 512     # register-only signatures: the bytes of the last this many register combinations are kept


class Replan(Exception):
    """Raised by a plan whose use count is up (before it encodes anything): the door asks `plan_for` again, which
    compiles it."""


_HOT: set = set()                    # the keys whose plans have been used `COMPILE_AFTER` times
_COMPILED: dict[tuple, object] = {}  # compiled plans by (mnemonic, how, label check, signature, form ids)
_MEMOS: dict[tuple, object] = {}     # register-only plans of one form by (mnemonic, signature, form id): one memo each


def plan_for(mnemonic: str, sig: tuple, ops: tuple, rc=None):
    """(plan, takes ``ip=``) for operands like ``ops`` with signature ``sig`` (and rounding ``rc``, which the plan
    then applies to every call). A plan raises `LabelOperand` when a memory operand names a label (the `Assembler`
    then records a fixup; `x86gen.encode` raises `x86gen.LabelContextError`), and `Replan` when it is time to compile it."""
    if len(ops) == 2 and rc is None and canonical(mnemonic) == "xchg":   # GNU as's xchg operands (selection.request)
        plan = _xchg_plan(mnemonic, ops)
        if plan is not None: return plan, False
    if rc is not None: return _wrapped_plan(mnemonic, sig, ops, rc)
    for x in ops:
        if x.__class__ is Masked or x.__class__ is Bcst or x.__class__ is SegMem or x.__class__ is A32Mem:
            return _wrapped_plan(mnemonic, sig, ops, rc)
    how = plan_choice(mnemonic, sig, ops)
    if how[0] == "vex-any": return shortest_of(how[1]), how[2]
    mode, chosen, rel, mem_at = how
    if mode == "one" and sig and not rel and all(s != "i" and s[0] != "m" and s != "l" for s in sig):
        # one form, registers only: its generated encoder, the bytes of the last REG_MEMO_MAX register combinations
        # remembered (a C-level cache keyed by the register objects), from the first use on
        key = (mnemonic, sig, chosen[0].id)
        plan = _MEMOS.get(key)
        if plan is None: plan = _MEMOS[key] = functools.lru_cache(maxsize=REG_MEMO_MAX)(encoder_of(chosen[0])[0])
        return plan, rel
    key = (mnemonic, mode, mem_at, sig, tuple(r.id for r in chosen))
    plan = _COMPILED.get(key)
    if plan is not None: return plan, rel
    if key not in _HOT: return _counted(fallback(mnemonic, mode, chosen, rel), key, rel), rel
    if sig and all(s != "i" and s[0] != "m" and s != "l" for s in sig):
        # registers only: the bytes depend on which registers alone, so they are remembered (a C-level cache
        # keyed by the register objects, the last REG_MEMO_MAX combinations)
        plan = functools.lru_cache(maxsize=REG_MEMO_MAX)(compile_plan(mnemonic, sig, mode, mem_at, chosen, rel))
    else: plan = compile_plan(mnemonic, sig, mode, mem_at, chosen, rel)
    _COMPILED[key] = plan
    return plan, rel


def plan_choice(mnemonic: str, sig: tuple, ops: tuple) -> tuple:
    """How the plan of plain operands ``ops`` (signature ``sig``) encodes: (mode, the rows of the forms it tries, whether
    it takes ``ip=``, the index of its memory operand or None). ``mode``: "one" (the shortest form), "fit" (the first
    whose immediates fit), "vex" (equally long VEX forms, told apart by the register in ModRM.rm), or "vex-any" (equally
    long VEX forms that only their bytes tell apart: the shortest bytes, never compiled)."""
    rows, check = candidates(mnemonic, sig, ops)
    rel = any(map(is_branch, rows))
    mem_at = next((i for i, s in enumerate(sig) if s[0] == "m"), None)
    if check: return "fit", rows, rel, mem_at
    if len(rows) > 1 and rows[0].encoding_kind == "vex" and rows[1].length == rows[0].length:
        # equally long VEX forms: the one with the shorter bytes for the registers given
        alts = vex_alternatives(rows)
        return ("vex" if by_rm_register(alts, sig) else "vex-any"), alts, rel, mem_at
    return "one", rows[:1], rel, mem_at


def _counted(inner, key: tuple, rel: bool):
    """``inner`` that raises `Replan` on its `COMPILE_AFTER`-th call (marking ``key`` hot)."""
    left = COMPILE_AFTER
    if rel:
        def plan(*ops, ip=0):
            nonlocal left
            left -= 1
            if left < 0:
                _HOT.add(key)
                raise Replan
            return inner(*ops, ip=ip)
        return plan

    def plan(*ops):
        nonlocal left
        left -= 1
        if left < 0:
            _HOT.add(key)
            raise Replan
        return inner(*ops)
    return plan


def fallback(mnemonic: str, mode: str, rows: tuple, rel: bool):
    """The plan as calls of the forms' generated encoders: ``mode`` "one" (one form), "vex" (the shortest bytes of
    equally long VEX forms) or "fit" (the first form whose immediates fit). A form's encoder raises `LabelOperand` for
    a memory operand that names a label."""
    if mode == "one": return encoder_of(rows[0])[0]
    if mode == "vex" or mode == "vex-any": return shortest_of(rows)
    pairs = tuple(encoder_of(r) for r in rows)   # each form's (enc, fits)

    def nofit(ops):
        from ..diagnostics import range_error
        return range_error(mnemonic, ops, rows)
    if not rel:
        if len(pairs) == 2 and pairs[0][1] is not None:   # `add r64, imm8` or else `add r64, imm32`
            (enc0, fits0), (enc1, fits1) = pairs
            if fits1 is None:
                def inner(*ops): return enc0(*ops) if fits0(*ops) else enc1(*ops)
            else:
                def inner(*ops):
                    if fits0(*ops): return enc0(*ops)
                    if fits1(*ops): return enc1(*ops)
                    raise nofit(ops)
            return inner

        def inner(*ops):
            for enc, fits in pairs:
                if fits is None or fits(*ops): return enc(*ops)
            raise nofit(ops)
        return inner
    branch = tuple(is_branch(r) for r in rows)

    def inner(*ops, ip=0):
        for (enc, fits), br in zip(pairs, branch):
            if br:
                if fits is None or fits(*ops, ip=ip): return enc(*ops, ip=ip)
            elif fits is None or fits(*ops): return enc(*ops)
        raise nofit(ops)
    return inner


def _xchg_plan(mnemonic: str, ops: tuple):
    """The plan for ``xchg`` operands that `x86gen.selection.request.xchg_choice` rewrites (None for the others)."""
    xchg = xchg_choice(mnemonic, ops)
    if xchg is None: return None
    enc = xchg[0].encoder
    if not xchg[1]: return lambda a, b: enc()
    if not isinstance(ops[1], Mem): return lambda a, b: enc(b, a)
    bits = xchg[0].operands[0].mem

    def swapped(a, b):
        if b.label is not None: raise LabelOperand
        return enc(b.with_size(bits), a)
    return swapped


# ---- plans of wrapped operands: segment overrides, 32-bit addresses, AVX-512 decorations -----------------------------

def _has_label(ops: tuple) -> bool:
    for x in ops:
        if x.__class__ is Masked: x = x.op
        while x.__class__ is SegMem or x.__class__ is A32Mem: x = x.plain
        if isinstance(x, Mem) and x.label is not None: return True
    return False


def _prefixed(x) -> bool:
    """Does operand ``x`` need a prefix byte of its own (a segment override, 0x67), decorated or not?"""
    if x.__class__ is Masked: x = x.op
    elif x.__class__ is Bcst: x = x.unsized
    return x.__class__ is SegMem or x.__class__ is A32Mem


def _wrapped_plan(mnemonic: str, sig: tuple, ops: tuple, rc):
    """(plan, takes ``ip=``) for operands with a segment override, a 32-bit address or decorations (or ``rc``)."""
    rows, check = candidates(mnemonic, sig, ops, "", rc)
    rel = any(map(is_branch, rows))
    if not check and len(vex_alternatives(rows)) < 2 and not any(map(_prefixed, ops)) and not mask_required(rows[0]):
        plan = _decorated_plan(rows[0], ops, rc)
        if ops and all(isinstance(x.op if x.__class__ is Masked else x, Reg) for x in ops):
            # registers only: the bytes of the last REG_MEMO_MAX combinations remembered, as for plain registers
            plan = functools.lru_cache(maxsize=REG_MEMO_MAX)(plan)
        return plan, rel

    from ..encoding.decorated import encode_form

    def plan(*ops, ip=0):
        if _has_label(ops): raise LabelOperand
        row = choose(mnemonic, sig, ops, ip, rc)
        return encode_form(form_of(row), ops, rc, ip)
    return plan, rel


def _decorated_plan(row, ops: tuple, rc):
    """The plan of one EVEX form for a masked destination, a broadcast source or ``rc`` (no prefix before the EVEX
    prefix): the form's encoder on the plain operands, its decorations as the keywords ``p2`` and ``n``
    (`x86gen.encoding.evex`; what `x86gen.encoding.decorated.evex_bits` computes, the bits that do not depend on the
    operands computed here once)."""
    enc = encoder_of(row)[0]
    masked = bool(ops) and ops[0].__class__ is Masked
    at = next((i for i, x in enumerate(ops) if x.__class__ is Bcst), None)   # the broadcast source
    p2 = 0x10 | ((rc << 5) if rc != SAE else 0) if rc is not None else (row.vex_l or 0) << 5   # L'L b
    mem_at = [i for i, x in enumerate(ops) if isinstance(x.op if x.__class__ is Masked else x, Mem)]
    if at is None and len(mem_at) < 2:
        # a masked destination and/or rc: aaa and z from the mask (P2 = z L'L b V̄' aaa, SDM Vol.2 2.7.1)
        if not masked:
            def plan(*ops):
                for i in mem_at:
                    if ops[i].label is not None: raise LabelOperand
                return enc(*ops, p2=p2)
        elif not mem_at:
            def plan(a, *rest): return enc(a.op, *rest, p2=p2 | a.p2)
        elif mem_at[0] == 0:   # a masked store
            def plan(a, *rest):
                if a.op.label is not None: raise LabelOperand
                return enc(a.op, *rest, p2=p2 | a.p2)
        else:
            k = mem_at[0] - 1

            def plan(a, *rest):
                if rest[k].label is not None: raise LabelOperand
                return enc(a.op, *rest, p2=p2 | a.p2)
        return plan
    n = ops[at].size // 8   # a broadcast: b, and disp8 scaled by the element size (SDM Vol.2 2.7.5, Table 2-34)
    p2 |= 0x10
    if len(ops) == 3 and at == 2:   # the common `vaddps zmm1 {k1}, zmm2, dword ptr [rax]{1to16}`
        if masked:
            def plan(a, b, c):
                if c.label is not None: raise LabelOperand
                return enc(a.op, b, c.unsized, p2=p2 | a.p2, n=n)
        else:
            def plan(a, b, c):
                if c.label is not None: raise LabelOperand
                return enc(a, b, c.unsized, p2=p2, n=n)
        return plan

    from ..encoding.decorated import plain_operands

    def plan(*ops):
        if _has_label(ops): raise LabelOperand
        m = ops[0]
        return enc(*plain_operands(ops), p2=p2 | m.p2 if m.__class__ is Masked else p2, n=n)
    return plan


# ---- compiled plans -------------------------------------------------------------------------------------------------

_PLAN_GLOBALS: dict | None = None     # the compiled plans' globals, built once (then never changed)


def _parts(row, sig: tuple, range_checked: bool = False):
    """(body lines, fit condition) of form ``row``'s encoder for operands of signature ``sig``."""
    from ..encoding.writer import parts  # (the code writer: loaded when a first plan is compiled)
    body, cond, _rel = parts(row, sig, range_checked)
    return ["    " + ln for ln in body], cond


def compile_plan(mnemonic: str, sig: tuple, mode: str, mem_at: int | None, chosen: tuple, rel: bool):
    """The plan of ``chosen`` (rows) for signature ``sig``, compiled: ``mode`` "one" (one form), "vex" (2-byte VEX where
    the rm register allows) or "fit" (the first form whose immediates fit)."""
    n = len(chosen[0].operands)
    args = "".join(f"a{i}, " for i in range(n))
    # (a gather/scatter's encoder takes its mask as aaa=, `mask_required`: a plan's operands are plain, so aaa = 0,
    # which it refuses)
    lines = [f"def plan({args}{'ip=0' if rel else ''}{'aaa=0' if any(mask_required(r) for r in chosen) else ''}):"]
    if mem_at is not None: lines.append(f"    if a{mem_at}.label is not None: raise LabelOperand")
    if mode == "one": lines += _parts(chosen[0], sig)[0]
    elif mode == "vex":
        for r in chosen:
            lines.append(f"    if a{rm_index(r)}.vb:   # {r.id}: 2-byte VEX (rm register below r8)")
            lines += ["    " + ln for ln in _parts(r, sig)[0]]
        lines.append(f"    # every rm register is r8-r15: {chosen[0].id}, 3-byte VEX")
        lines += _parts(chosen[0], sig)[0]
    else:
        seen = set()
        for r in chosen:
            body, cond = _parts(r, sig)
            if cond is None:   # no immediate to fit: this form takes the operands
                lines.append(f"    # {r.id}")
                lines += body
                break
            if cond in seen: continue   # an earlier form takes whatever this one would
            seen.add(cond)
            lines.append(f"    if {cond}:   # {r.id}")
            lines += ["    " + ln for ln in _parts(r, sig, range_checked=True)[0]]
        else:
            lines.append(f"    raise _nofit({mnemonic!r}, ({args}), {tuple(r.id for r in chosen)!r})")
    src = "\n".join(lines) + "\n"
    global _PLAN_GLOBALS
    g = _PLAN_GLOBALS
    if g is None:
        from ..encoding.writer import GLOBALS
        g = _PLAN_GLOBALS = {**GLOBALS, "LabelOperand": LabelOperand, "_nofit": _nofit}
    ns: dict = {}
    exec(compile(src, f"<x86gen plan {mnemonic} {' / '.join(r.id for r in chosen)}>", "exec"), g, ns)
    plan = ns["plan"]
    plan.source = src
    return plan


def _nofit(mnemonic: str, ops: tuple, ids: tuple):
    from ..diagnostics import range_error
    return range_error(mnemonic, ops, [row_of(i) for i in ids])
