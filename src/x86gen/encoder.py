"""The encode facade: `encode` (choose the form from the operands and encode), `select` (the form `encode` would use)
and `select_form` (the form among a backend's allowed ones that encodes some operands, by an immediate policy).

Forms are chosen as GNU as chooses them: among the forms whose operand kinds match, the shortest (`Form.length`, then
file order), taking the first whose immediates fit — so ``add eax, 1`` is ``83 /0 ib``, ``add eax, 1000`` is
``05 id`` and ``jmp`` takes rel8 when the target is in reach. The choice is `x86gen.selection`'s: a request passes
`x86gen.selection.request` (aliases, string instructions, xchg and lea rewrites), `x86gen.selection.prefixed` (prefix words),
`x86gen.selection.candidates` and `x86gen.selection.plans`, which every door that encodes by mnemonic shares (`encode`,
`select`, `x86gen.Instruction`, the `x86gen.Assembler`); a given form encodes through `x86gen.forms.Form`, which takes
the same operands (`x86gen.encoding.decorated`).

`encode` keeps each (mnemonic, operand signature)'s plan in a table indexed one operand at a time, so that a signature
met before costs a few dict look-ups and one call.
"""
from __future__ import annotations

from .errors import EvexOperandError, LabelOperand, OperandError, UnknownMnemonicError, fmt_value, wrong_type
from .forms import Form, form_of, get_form
from .memory import Mem
from .selection.candidates import VEX_ON_REQUEST, choose
from .selection.plans import Replan, plan_for
from .selection.request import STRING_MNEMONICS, canonical, lea_low_bits, signature, string_operands
from .table import mnemonics, rows_of, sized_kind

# (loaded where they are needed, not by a first plain encode: x86gen.diagnostics for the errors, x86gen.encoding.decorated
# for select/select_form's decorations, x86gen.selection.prefixed for prefix words)

# encode()'s plans: published complete (built in locals, stored last), so that another thread (free-threaded CPython
# included) that finds one finds it whole
_TABLES: dict[str, dict] = {}      # mnemonic → {number of operands: {signature: …: plan}} (1 to 3 operands)
_PLANS: dict[tuple, object] = {}   # (mnemonic, *signature) → plan (any number of operands)
_RPLANS: set = set()               # the plans of rel8/rel32 forms, which take ``ip=``
_RC_PLANS: dict[tuple, tuple] = {} # (mnemonic, rc, *signature) → (plan, takes ip=)
_RC_TABLES: dict[int, dict] = {}   # rc → mnemonic → its three-operand plans, one dict level per operand signature


def encode(mnemonic: str, *ops, ip: int = 0, rc: int | None = None) -> bytes:
    """Encode one instruction, e.g. ``encode("vaddps", ymm0, ymm1, mem(rdi, size=256))``.

    Operands are registers, `Mem` operands and ints (immediates; for branches the absolute target
    address, with the instruction at ``ip``). Raises `EncodeError` subclasses on bad input.
    AVX-512 (`x86gen.evex`): a masked destination (``zmm1.k(k1)``, ``zmm1.k(k1).z``), a broadcast source
    (``dword(rax).bcst``) and ``rc=`` (`x86gen.RN_SAE` … `x86gen.RZ_SAE`, `x86gen.SAE`) choose among the EVEX forms
    that allow them (`x86gen.EvexOperandError` when none does).
    """
    if rc is not None: return _encode_rc(mnemonic, ops, ip, rc)
    # fast path: the plan from the mnemonic's table, one dict level per operand signature (no tuple to build
    # or hash), then the plan's one frame; a plan of a branch form takes ip= (and defaults to ip=0)
    try:
        n = len(ops)
        if n == 2:
            a, b = ops
            plan = _TABLES[mnemonic][2]["i" if type(a) is int else a.sig]["i" if type(b) is int else b.sig]
        elif n == 3:
            a, b, c = ops
            plan = _TABLES[mnemonic][3]["i" if type(a) is int else a.sig]["i" if type(b) is int else b.sig][
                "i" if type(c) is int else c.sig]
        elif n == 1:
            a = ops[0]
            plan = _TABLES[mnemonic][1]["i" if type(a) is int else a.sig]
        else: plan = _PLANS[(mnemonic, *signature(ops))]
    except (KeyError, AttributeError, TypeError): return _encode(mnemonic, ops, ip)
    try:
        if ip and plan in _RPLANS: return plan(*ops, ip=ip)
        return plan(*ops)
    except LabelOperand: raise _label_error(mnemonic, ops) from None
    except Replan: return _encode(mnemonic, ops, ip)
    except TypeError: _check_ip(ip, "x86gen.encode"); raise


def _label_error(mnemonic, ops):
    from .diagnostics import label_error
    return label_error(mnemonic, ops)


def _check_ip(ip, func: str) -> None:
    """Raise the `x86gen.ArgumentTypeError` of an ``ip`` that is no int (numpy integers are); met after a TypeError,
    so that a right call pays nothing."""
    if ip.__class__ is int: return
    import operator
    try: operator.index(ip)
    except TypeError: raise wrong_type(func, "ip", ip, "an int (the instruction's address)") from None


def _encode(mnemonic: str, ops: tuple, ip: int) -> bytes:
    """`encode` of a signature met the first time (or whose plan is due to be compiled), and of everything that is
    not a plain instruction: prefix words, string instructions written short, int-like immediates, errors."""
    if mnemonic.__class__ is not str: raise UnknownMnemonicError(f"a mnemonic is a string, not {fmt_value(mnemonic)}")
    if " " in mnemonic:   # prefix words: `lock add`, `rep movsb`
        from .selection.prefixed import encode_prefixed
        try: return encode_prefixed(mnemonic, ops, ip)[0]
        except TypeError: _check_ip(ip, "x86gen.encode"); raise
    if mnemonic in STRING_MNEMONICS:   # `movsb`, `lods eax, dword ptr [rsi]`: the form's name and operands
        mn, filled = string_operands(mnemonic, ops)
        if mn is not mnemonic or filled is not ops: return _encode(mn, filled, ip)
    try: sig = signature(ops)
    except AttributeError:   # immediates given as bool / numpy integers (operator.index), or no operand at all
        from .diagnostics import no_form_error, unknown_mnemonic_error
        from .encoding.decorated import int_operands
        ints = int_operands(ops)
        if ints is not None: return _encode(mnemonic, ints, ip)
        rows = rows_of(canonical(mnemonic))
        if rows is None: raise unknown_mnemonic_error(mnemonic, mnemonics()) from None
        raise no_form_error(mnemonic, ops, rows) from None
    if "l" in sig: raise _label_error(mnemonic, ops)   # (never kept: the fast path comes back here)
    if mnemonic == "lea" and sig[-1][:5] == "moffs":   # lea r32, [0x80000000]: the low 32 bits (selection.request)
        near = lea_low_bits(mnemonic, ops)
        if near is not None: return _encode(mnemonic, near, ip)
    plan, rel = plan_for(mnemonic, sig, ops)
    if rel: _RPLANS.add(plan)   # (first: whoever finds the plan in a table knows it takes ip=)
    _PLANS[(mnemonic, *sig)] = plan
    if 1 <= len(ops) <= 3:
        t = _TABLES.setdefault(mnemonic, {}).setdefault(len(ops), {})
        for s in sig[:-1]: t = t.setdefault(s, {})
        t[sig[-1]] = plan
    try: return plan(*ops, ip=ip) if rel else plan(*ops)
    except LabelOperand: raise _label_error(mnemonic, ops) from None
    except Replan: return _encode(mnemonic, ops, ip)
    except TypeError: _check_ip(ip, "x86gen.encode"); raise


def _encode_rc(mnemonic: str, ops: tuple, ip: int, rc) -> bytes:
    """`encode` with ``rc=`` (AVX-512 static rounding or SAE): the plans are kept by rounding and signature, in a table
    per (mnemonic, rounding) one dict level per operand as `encode`'s (`_RC_TABLES`), and by key (`_RC_PLANS`)."""
    try:   # fast path: three register operands, the common case (`vaddps zmm1 {k1}, zmm2, zmm3, {rn-sae}`)
        a, b, c = ops
        plan = _RC_TABLES[rc][mnemonic][a.sig][b.sig][c.sig]
    except (KeyError, AttributeError, TypeError, ValueError): pass
    else:
        try: return plan(a, b, c)
        except LabelOperand: raise _label_error(mnemonic, ops) from None
    hit = _rc_plan(mnemonic, ops, rc)
    if hit.__class__ is not tuple: return hit(ip)   # (no plan: what encodes it)
    plan, rel = hit
    try: return plan(*ops, ip=ip) if rel else plan(*ops)
    except LabelOperand: raise _label_error(mnemonic, ops) from None


def _rc_plan(mnemonic: str, ops: tuple, rc):
    """(plan, takes ``ip=``) of `_encode_rc`, made and kept on first use; or a function of ``ip`` for what has none."""
    try:
        key = (mnemonic, rc, *["i" if x.__class__ is int else x.sig for x in ops])
        hit = _RC_PLANS.get(key)
    except (AttributeError, TypeError): key = hit = None   # (an operand without a signature, an unhashable rc)
    if hit is not None: return hit
    if mnemonic.__class__ is not str: raise UnknownMnemonicError(f"a mnemonic is a string, not {fmt_value(mnemonic)}")
    from .selection.prefixed import encode_prefixed
    if " " in mnemonic: return lambda ip: encode_prefixed(mnemonic, ops, ip, rc)[0]
    if key is None:
        from .encoding.decorated import int_operands
        ints = int_operands(ops)
        if ints is not None: return lambda ip: _encode_rc(mnemonic, ints, ip, rc)
        return lambda ip: encode_prefixed(mnemonic, ops, ip, rc)[0]   # (says what is wrong)
    hit = plan_for(mnemonic, key[2:], ops, rc)
    _RC_PLANS[key] = hit
    if len(ops) == 3 and "i" not in key[2:] and not hit[1]:   # (a plan that takes no ip=: every rounding one)
        _RC_TABLES.setdefault(rc, {}).setdefault(mnemonic, {}).setdefault(key[2], {}).setdefault(key[3], {})[key[4]] = hit[0]
    return hit


def select(mnemonic: str, *ops, ip: int = 0, rc: int | None = None) -> Form:
    """The form `encode` would use for these operands (and rounding ``rc``, see `encode`)."""
    if mnemonic.__class__ is not str: raise UnknownMnemonicError(f"a mnemonic is a string, not {fmt_value(mnemonic)}")
    if ip.__class__ is not int: _check_ip(ip, "x86gen.select")
    from .encoding.decorated import encode_form, int_operands, is_wrapped
    if " " in mnemonic:   # (prefix words: checked by encoding)
        from .selection.prefixed import encode_prefixed
        return encode_prefixed(mnemonic, ops, ip, rc)[1]
    if mnemonic in STRING_MNEMONICS: mnemonic, ops = string_operands(mnemonic, ops)   # `movsb`: its implied operands
    try: sig = signature(ops)
    except AttributeError:
        ints = int_operands(ops)
        if ints is None: return form_of(choose(mnemonic, (), ops))   # (raises the operand error)
        ops, sig = ints, signature(ints)
    if "l" in sig: raise _label_error(mnemonic, ops)
    form = form_of(choose(mnemonic, sig, ops, ip, rc))
    if rc is not None or is_wrapped(ops): encode_form(form, ops, rc, ip)   # (a segment override or 0x67 it cannot take raises)
    return form


IMM_POLICIES = ("shortest", "widest")


def select_form(forms, *ops, imm: str = "shortest", imm_bits: int | None = None, ip: int = 0, rc: int | None = None) -> Form:
    """The form among ``forms`` (form ids or `Form` objects: the ones a backend allows for one of its
    instructions) that encodes ``ops``, by a policy:

    - ``imm="shortest"`` (default): the shortest form that accepts the operands (`Form.accepts`), as
      `encode` chooses: ``add eax, 1`` takes ``83 /0 ib``;
    - ``imm="widest"``: the form with the widest immediate field that accepts them: ``add eax, 1`` takes
      ``81 /0 id`` (a fixed slot a JIT can patch, or bytes that match a backend that always emits it);
    - ``imm_bits=N``: only forms whose immediates are N bits wide (forms without one also qualify).

    Ties go to the first in ``forms``. An unsized memory operand that forms of different memory sizes
    accept is an error (give it a size). Raises `x86gen.OperandError` when no form accepts the operands.
    AVX-512 masks, broadcasts and ``rc=`` count as operands here: only forms that allow them accept them.
    """
    if imm not in IMM_POLICIES: raise OperandError(f"imm= must be one of {', '.join(IMM_POLICIES)}, not {str(imm)[:20]!r}")
    from .diagnostics import describe_operand
    from .encoding.decorated import is_decorated, plain_operands, rc_text, why_not
    if isinstance(forms, (str, Form)) or not hasattr(forms, "__iter__"):   # (a str would be read as ids of one letter)
        raise wrong_type("x86gen.select_form", "forms", forms, "a list of form ids or Forms")
    fl = [f if isinstance(f, Form) else get_form(f) for f in forms]
    if ip.__class__ is not int: _check_ip(ip, "x86gen.select_form")
    ok = [f for f in fl if f.accepts(*ops, ip=ip, rc=rc)]
    if imm_bits is not None: ok = [f for f in ok if all(o.imm in (None, imm_bits) for o in f.operands if o.kind != "1")]
    if not ok:
        got = ", ".join(describe_operand(x) for x in ops) or "no operands"
        listed = "; ".join(f"{f.syntax} ({f.id})" for f in fl[:12]) + (" …" if len(fl) > 12 else "")
        msg = f"none of the forms {listed} takes {got}" + (f" with {imm_bits}-bit immediates" if imm_bits else "")
        if rc is not None or is_decorated(ops):   # the plain operands fit a form, the decorations do not: as encode says
            plain = [f for f in fl if f.accepts(*plain_operands(ops), ip=ip)]
            if plain: raise EvexOperandError(f"{msg}{rc_text(rc)}: {why_not(plain[0], ops, rc) or 'decorations'}")
        raise OperandError(msg)
    # as encode prefers: a form that needs no prefix word (addr32, data16), EVEX over AVX-VNNI's VEX re-encodings
    ok = [f for f in ok if not sized_kind(f)] or ok
    if any(f.cpuid in VEX_ON_REQUEST for f in ok) and any(f.encoding_kind == "evex" and f.cpuid not in VEX_ON_REQUEST for f in ok):
        ok = [f for f in ok if f.cpuid not in VEX_ON_REQUEST]
    for i, x in enumerate(ops):
        if isinstance(x, Mem) and not x.size and len({f.operands[i].mem for f in ok}) > 1:
            raise OperandError(f"operand {i + 1} ({x}) needs a size: forms {', '.join(f.id for f in ok)} take it")
    if imm == "widest": return max(ok, key=lambda f: sum(o.imm or 0 for o in f.operands if o.kind != "1"))   # first among equals
    return min(ok, key=lambda f: f.length)
