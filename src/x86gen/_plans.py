"""A signature's plan made and kept, on its second use by `x86gen.encode` (see the comment at `x86gen.encoder.plan_for`):
compiled (x86gen._plan_compiler) or, for registers only, memoized, then published in `x86gen.encoder`'s tables for the
fast path. Separate from x86gen.encoder because a signature's first use needs none of it (it calls the forms' own
encoders), so a process's first encode does not compile it when there is no bytecode cache."""
from __future__ import annotations

import functools

from .encoder import _COMPILED, _PLANS, _RPLANS, _TABLES, REG_MEMO_MAX, plan_for
from .forms import Form


def made_plan(key: tuple, sig: tuple, chosen: tuple[Form, ...], rel: bool):
    """The plan of ``key`` (``(mnemonic, mode, mem_at, sig, form ids)``, `plan_for`'s) for the forms ``chosen``, made and
    kept in `x86gen.encoder._COMPILED`."""
    mnemonic, mode, mem_at = key[:3]
    if sig and all(s != "i" and s[0] != "m" and s != "l" for s in sig):
        # registers only: the bytes depend on which registers alone, so they are remembered (a C-level cache
        # keyed by the register objects, the last REG_MEMO_MAX combinations); then how fast the function is
        # matters little, and one form needs no plan of its own
        plan = functools.lru_cache(maxsize=REG_MEMO_MAX)(chosen[0].encode if mode == "one" else
                                                         _compile_plan(mnemonic, sig, mode, mem_at, chosen, rel))
    else: plan = _compile_plan(mnemonic, sig, mode, mem_at, chosen, rel)
    _COMPILED[key] = plan
    return plan


def _compile_plan(mnemonic: str, sig: tuple, mode: str, mem_at: int | None, chosen: tuple[Form, ...], rel: bool):
    """The plan compiled (`x86gen._plan_compiler`, loaded on the first signature with memory or immediates met twice)."""
    from ._plan_compiler import compile_plan
    return compile_plan(mnemonic, sig, mode, mem_at, chosen, rel)


def published(key: tuple, ops: tuple):
    """The plan of `encode`'s ``key`` (``(mnemonic, *signature)``) for operands like ``ops``, kept in
    `x86gen.encoder._PLANS` and, for 1-3 operands, in the fast path's `x86gen.encoder._TABLES`."""
    mnemonic = key[0]
    plan, rel = plan_for(mnemonic, key[1:], ops)
    if rel: _RPLANS.add(plan)   # before the plan is published: whoever finds it must know it takes ip=
    _PLANS[key] = plan
    if 1 <= len(ops) <= 3:
        t = _TABLES.setdefault(mnemonic, {}).setdefault(len(ops), {})
        for s in key[1:-1]: t = t.setdefault(s, {})
        t[key[-1]] = plan
    return plan
