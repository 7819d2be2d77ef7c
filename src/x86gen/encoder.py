"""`encode(mnemonic, *operands)`: choose the form from the operands and encode it.

Forms are chosen as GNU as chooses them: among the forms whose operand kinds match, the shortest
(`Form.length`, then file order), taking the first whose immediates fit — so ``add eax, 1`` is
``83 /0 ib``, ``add eax, 1000`` is ``05 id`` and ``jmp`` takes rel8 when the target is in reach.
The candidate list for each operand signature is computed once and cached.
"""
from __future__ import annotations

from .errors import OperandError
from .forms import Form, describe_operand, forms_of
from .memory import Mem
from .registers import Reg

_CANDIDATES: dict[tuple, tuple[tuple[Form, ...], bool]] = {}
MNEMONIC_ALIASES = {
    "jz": "je", "jnz": "jne", "jc": "jb", "jnae": "jb", "jnc": "jae", "jnb": "jae", "jna": "jbe", "jnbe": "ja",
    "jnge": "jl", "jnl": "jge", "jng": "jle", "jnle": "jg", "jpe": "jp", "jpo": "jnp",
    "sal": "shl", "retq": "ret", "movabs": "mov", "movsxd": "movsxd", "cltq": "cdqe",
}
for _p in ("set", "cmov"):
    for _a, _b in {"z": "e", "nz": "ne", "c": "b", "nae": "b", "nc": "ae", "nb": "ae", "na": "be", "nbe": "a",
                   "nge": "l", "nl": "ge", "ng": "le", "nle": "g", "pe": "p", "po": "np"}.items():
        MNEMONIC_ALIASES[_p + _a] = _p + _b


def _matches(o, x) -> bool:
    """Does operand value ``x`` have a kind form operand ``o`` accepts (ignoring immediate ranges)?"""
    if o.imm is not None or o.kind == "1":
        return x.__class__ is int or (o.kind.startswith("rel") and getattr(x, "sig", None) == "l")
    if isinstance(x, Reg):
        if o.loc == "fixed": return x.name == o.reg
        return x.kind == o.reg
    if isinstance(x, Mem):
        return o.mem is not None and (o.mem == 0 or x.size in (0, o.mem))
    return False


def candidates(mnemonic: str, sig: tuple, ops: tuple) -> tuple[tuple[Form, ...], bool]:
    """Forms of ``mnemonic`` that accept operands like ``ops``, best first; and whether any needs a fit check."""
    key = (mnemonic, *sig)
    hit = _CANDIDATES.get(key)
    if hit is not None: return hit
    forms = forms_of(MNEMONIC_ALIASES.get(mnemonic, mnemonic) if mnemonic not in _mnemonic_set() else mnemonic)
    ok = [f for f in forms if len(f.operands) == len(ops) and all(_matches(o, x) for o, x in zip(f.operands, ops))]
    if not ok:
        raise no_form_error(mnemonic, ops, forms)
    for i, x in enumerate(ops):
        if isinstance(x, Mem) and not x.size:
            sizes = {f.operands[i].mem for f in ok if f.operands[i].mem}
            if len(sizes) > 1:
                names = "/".join(sorted({_size_word(s) for s in sizes}))
                raise OperandError(f"{mnemonic} {', '.join(map(str, ops))}: operand {i + 1} needs a size ({names} ptr)")
    ok.sort(key=lambda f: f.length)   # stable: file order among equals
    res = (tuple(ok), any(f.imms or any(o.kind == "1" for o in f.operands) for f in ok))
    _CANDIDATES[key] = res
    return res


def _size_word(bits: int) -> str:
    from .memory import SIZE_NAMES
    return SIZE_NAMES.get(bits, str(bits))


_MNEMONICS: set[str] = set()


def _mnemonic_set() -> set[str]:
    if not _MNEMONICS:
        from .forms import mnemonics
        _MNEMONICS.update(mnemonics())
    return _MNEMONICS


def no_form_error(mnemonic: str, ops: tuple, forms: list[Form]) -> OperandError:
    got = ", ".join(describe_operand(x) for x in ops) or "no operands"
    fit = "\n  ".join(f"{f.syntax:40s} {f.id}" for f in forms)
    return OperandError(f"no form of {mnemonic!r} takes {got}; its forms are:\n  {fit}")


_PLANS: dict[tuple, object] = {}


def _key(mnemonic: str, ops: tuple) -> tuple:
    """The operand signature: register kind (or the register, for al/cl/eax/…), memory size, 'i', 'l'."""
    n = len(ops)
    if n == 2:
        a, b = ops
        return (mnemonic, "i" if a.__class__ is int else a.sig, "i" if b.__class__ is int else b.sig)
    if n == 3:
        a, b, c = ops
        return (mnemonic, "i" if a.__class__ is int else a.sig, "i" if b.__class__ is int else b.sig,
                "i" if c.__class__ is int else c.sig)
    return (mnemonic, *["i" if x.__class__ is int else x.sig for x in ops])


def _plan(key: tuple, ops: tuple):
    """What `encode` does for this signature: one encoder function, or (enc, fits, is_branch) to try in order."""
    forms, check = candidates(key[0], key[1:], ops)
    if not check: plan = forms[0].encode
    else:
        plan = tuple((f.encode, f._fits, any(o.kind.startswith("rel") for o in f.operands)) for f in forms)
        plan = tuple((enc, fits or _always, rel) for enc, fits, rel in plan)
    _PLANS[key] = plan
    return plan


def _always(*ops, ip=0) -> bool: return True


def select(mnemonic: str, *ops, ip: int = 0) -> Form:
    """The form `encode` would use for these operands."""
    key = _key(mnemonic, ops)
    forms, check = candidates(mnemonic, key[1:], ops)
    if not check: return forms[0]
    for f in forms:
        if f.fits(*ops, ip=ip): return f
    raise range_error(mnemonic, ops, forms)


def range_error(mnemonic, ops, forms) -> OperandError:
    from .errors import ImmediateRangeError
    got = ", ".join(map(str, ops))
    return ImmediateRangeError(f"{mnemonic} {got}: an immediate or branch target does not fit any form: "
                               + "; ".join(f"{f.syntax} ({f.id})" for f in forms))


def encode(mnemonic: str, *ops, ip: int = 0) -> bytes:
    """Encode one instruction, e.g. ``encode("vaddps", ymm0, ymm1, mem(rdi, size=256))``.

    Operands are registers, `Mem` operands and ints (immediates; for branches the absolute target
    address, with the instruction at ``ip``). Raises `EncodeError` subclasses on bad input.
    """
    key = _key(mnemonic, ops)
    plan = _PLANS.get(key)
    if plan is None: plan = _plan(key, ops)
    if plan.__class__ is not tuple: return plan(*ops)
    for enc, fits, rel in plan:
        if rel:
            if fits(*ops, ip=ip): return enc(*ops, ip=ip)
        elif fits(*ops): return enc(*ops)
    raise range_error(mnemonic, ops, candidates(key[0], key[1:], ops)[0])
