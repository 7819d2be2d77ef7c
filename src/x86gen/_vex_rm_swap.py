"""Equally long VEX forms that take the same operands and differ only in which register goes to ModRM.rm
(``vmovups xmm0, xmm8``: 10 /r or 11 /r): the one whose bytes are shorter (a 2-byte VEX prefix cannot extend
ModRM.rm), as GNU as and llvm-mc choose (`_vex_alternatives` finds them). Used by `x86gen._choose.plan_for`, `select`
and the plan compiler; loaded on first use (its names stay importable from x86gen.encoder)."""
from __future__ import annotations

from .forms import Form


def _rm_index(f: Form) -> int | None:
    return next((i for i, o in enumerate(f.operands) if o.loc == "rm"), None)


def _by_rm_register(alts: tuple[Form, ...], sig: tuple) -> bool:
    """Can the VEX alternatives be told apart by the register in ModRM.rm? True when all may take the
    2-byte prefix (map 0F, not W1) and each puts a different register operand in rm: the 2-byte prefix
    is then possible exactly when that register is below r8 (it has no B̄ bit)."""
    rms = [_rm_index(f) for f in alts]
    return (all(f.encoding_kind == "vex" and f.opcode_map == 1 and f.w != 1 for f in alts) and None not in rms
            and len(set(rms)) == len(rms) and all(sig[i][0] != "m" for i in rms))


def _shortest_of(forms: tuple[Form, ...]):
    """One function encoding with each of ``forms`` and returning the shortest bytes (the first of equals)."""
    encs = tuple(f.encode for f in forms)
    def enc(*ops):
        best = encs[0](*ops)
        if best[0] == 0xC5: return best   # already the 2-byte VEX prefix
        for e in encs[1:]:
            b = e(*ops)
            if len(b) < len(best): best = b
        return best
    return enc


def _vex_alternatives(forms: tuple[Form, ...]) -> tuple[Form, ...]:
    """Equally long VEX forms taking the same operands differ only in which register goes to ModRM.rm
    (``vmovups xmm0, xmm8``: 10 /r or 11 /r). A 2-byte VEX prefix cannot extend ModRM.rm, so the
    bytes are shorter for the form that leaves r8-r15 out of rm; GNU as and llvm-mc swap likewise."""
    if forms[0].encoding_kind != "vex": return ()
    return tuple(f for f in forms if f.length == forms[0].length)
