"""Compiling the plans of `x86gen._choose.plan_for` (one function per operand signature, from the bodies
`x86gen._specialize.parts` writes for the chosen forms). Loaded when a signature is met the second time: a first
use of a signature calls the forms' own encoders (so a process's first encode compiles neither this nor
x86gen._specialize)."""
from __future__ import annotations

from ._choose import range_error
from ._runtime import LabelOperand
from ._specialize import GLOBALS, parts
from .encoder import _rm_index
from .forms import Form, get_form

_PLAN_GLOBALS: dict | None = None     # the plans' globals, built once (then never changed)


def _parts(f: Form, sig: tuple, range_checked: bool = False):
    """(body lines, fit condition) of form ``f``'s encoder for operands of signature ``sig``."""
    body, cond, _rel = parts(f.row, sig, range_checked)
    return ["    " + ln for ln in body], cond


def compile_plan(mnemonic: str, sig: tuple, mode: str, mem_at: int | None, chosen: tuple[Form, ...], rel: bool):
    """The plan (see the comment at `x86gen._choose.plan_for`) of ``chosen`` for signature ``sig``, compiled: ``mode``
    "one" (one form), "vex" (2-byte VEX where the rm register allows) or "fit" (the first form whose immediates fit)."""
    n = len(chosen[0].operands)
    args = "".join(f"a{i}, " for i in range(n))
    # (a gather/scatter's encoder takes its mask as aaa=, `_specialize.mask_required`: a plan's operands are plain, so
    # aaa = 0, which it refuses)
    lines = [f"def plan({args}{'ip=0' if rel else ''}{'aaa=0' if any(f.evex_mask_required for f in chosen) else ''}):"]
    if mem_at is not None: lines.append(f"    if a{mem_at}.label is not None: raise LabelOperand")
    if mode == "one": lines += _parts(chosen[0], sig)[0]
    elif mode == "vex":
        for f in chosen:
            lines.append(f"    if a{_rm_index(f)}.vb:   # {f.id}: 2-byte VEX (rm register below r8)")
            lines += ["    " + ln for ln in _parts(f, sig)[0]]
        lines.append(f"    # every rm register is r8-r15: {chosen[0].id}, 3-byte VEX")
        lines += _parts(chosen[0], sig)[0]
    else:
        seen = set()
        for f in chosen:
            body, cond = _parts(f, sig)
            if cond is None:   # no immediate to fit: this form takes the operands
                lines.append(f"    # {f.id}")
                lines += body
                break
            if cond in seen: continue   # an earlier form takes whatever this one would
            seen.add(cond)
            lines.append(f"    if {cond}:   # {f.id}")
            lines += ["    " + ln for ln in _parts(f, sig, range_checked=True)[0]]
        else:
            lines.append(f"    raise _nofit({mnemonic!r}, ({args}), {tuple(f.id for f in chosen)!r})")
    src = "\n".join(lines) + "\n"
    global _PLAN_GLOBALS
    g = _PLAN_GLOBALS
    if g is None: g = _PLAN_GLOBALS = {**GLOBALS, "LabelOperand": LabelOperand, "_nofit": _nofit}
    ns: dict = {}
    exec(compile(src, f"<x86gen plan {mnemonic} {' / '.join(f.id for f in chosen)}>", "exec"), g, ns)
    plan = ns["plan"]
    plan.source = src
    return plan


def _nofit(mnemonic: str, ops: tuple, ids: tuple):
    return range_error(mnemonic, ops, [get_form(i) for i in ids])
