"""Encoding AVX-512 decorations (`x86gen.evex`): masks, zeroing, broadcast, static rounding and SAE.

The slow path of the encoder: the generated EVEX encoders (`x86gen._specialize.emit_evex`) write P2 with
aaa = 000, z = 0, b = 0 and L'L the vector length, the common case, at full speed. An operand list with a
`Masked`/`Bcst` operand or a ``rc=`` comes here instead (plans and form encoders never see one: their
signatures are not plain ones, and the forms' class checks refuse them): the form is chosen among the EVEX forms that
allow the decorations, encoded with the plain operands, and then P2 (and, for a broadcast, the displacement)
is set as SDM Vol.2 2.7 says:

- P2 = z L'L b V̄' aaa (Table 2-30): aaa = the mask register's number, z = zeroing (2.7.3/2.7.4);
- broadcast (2.7.5): b = 1, and the compressed disp8 is scaled by the element size instead of the vector length
  (Table 2-34: FV and HV with EVEX.b = 1, N = 4 for 32-bit and 8 for 64-bit elements);
- static rounding (2.7.8, Table 2-36): b = 1, L'L = the rounding mode (RN 00, RD 01, RU 10, RZ 11), register
  operands only;
- SAE only (2.7.9/2.7.10): b = 1, L'L = 00 (ignored by the CPU with EVEX.b = 1 and register operands; what
  iced-x86 and llvm-mc write).

The EVEX prefix is always the first 4 bytes of an EVEX form's bytes and the opcode byte and ModRM follow it
(62 P0 P1 P2 opcode ModRM), so the bits are set in place.
"""
from __future__ import annotations

from .errors import EvexOperandError, OperandError, fmt_operands, fmt_value
from .evex import ROUNDING_NAMES, SAE, Masked
from .memory import Bcst, Mem

DECORATED = (Masked, Bcst)   # operand classes that only this path encodes


def decorated(ops: tuple) -> bool:
    """Does ``ops`` hold a `Masked` or `Bcst` operand?"""
    return any(x.__class__ in DECORATED for x in ops)


def _rc_text(rc) -> str:
    return "" if rc is None else f" {{{ROUNDING_NAMES[rc]}}}" if rc in ROUNDING_NAMES else f" rc={fmt_value(rc)}"


def _check_rc(rc, where) -> None:
    """Raise unless ``rc`` is None or one of the rounding constants; ``where()`` gives the message's instruction."""
    if rc is not None and (rc.__class__ is not int or rc not in ROUNDING_NAMES):
        raise EvexOperandError(f"{where()}: rc= must be x86gen.RN_SAE, RD_SAE, RU_SAE, RZ_SAE (static rounding) or SAE, not"
                               f" {fmt_value(rc)}")


def why_not(form, ops: tuple, rc) -> str | None:
    """Why ``form`` does not take the decorations of ``ops``/``rc`` (None: it does), assuming its plain operands fit."""
    if form.encoding_kind != "evex":
        return f"{form.id} is a {form.encoding_kind} form (masking, broadcast and rounding are EVEX only, SDM Vol.2 2.7)"
    for i, x in enumerate(ops):
        if x.__class__ is Masked:
            if i != 0: return f"operand {i + 1} ({x}) is masked: only the destination (operand 1) takes a mask"
            if not form.evex_mask: return f"{form.id} takes no mask"
            if x.zero and form.evex_mask != "k1z":
                return f"{form.id} takes merge-masking {{k1}} only, no zeroing {{z}}"
        elif x.__class__ is Bcst:
            o = form.operands[i]
            if o.loc != "rm" or o.mem is None: return f"operand {i + 1} of {form.id} is no memory operand"
            if not form.evex_bcst: return f"{form.id} takes no broadcast"
            if form.evex_bcst != x.size:
                return f"{form.id} broadcasts {form.evex_bcst}-bit elements, not {x.size}-bit ones ({x})"
    if rc is not None:
        want = "sae" if rc == SAE else "er"
        if form.evex_rc != want:
            has = {"er": "static rounding {er} (rc=RN_SAE…RZ_SAE), not {sae} alone", "sae": "{sae} (rc=SAE) only, no static rounding",
                   "": "no rounding or {sae}"}[form.evex_rc]
            return f"{form.id} takes {has}"
        if any(isinstance(x, Mem) or (x.__class__ is Masked and isinstance(x.op, Mem)) for x in ops):
            return "rounding and {sae} are register-only (EVEX.b with a memory operand means broadcast, SDM Vol.2 2.7.8)"
    return None


def plain_operands(ops: tuple) -> tuple:
    """``ops`` without decorations: a `Masked` operand's register or memory, a broadcast's address unsized (the
    form's memory operand is vector-sized; the form's plain encoder checks everything else)."""
    return tuple(x.op if x.__class__ is Masked else
                 Mem(x.base, x.index, x.scale, x.disp, 0, x.label) if x.__class__ is Bcst else x for x in ops)


def encode_form(form, ops: tuple, rc=None, ip: int = 0) -> bytes:
    """The bytes of EVEX form ``form`` with decorated operands ``ops`` and rounding ``rc``; `EvexOperandError` if the
    form does not take them."""
    _check_rc(rc, lambda: f"{form.id} {fmt_operands(ops)}")
    reason = why_not(form, ops, rc)
    if reason is not None:
        raise EvexOperandError(f"{form.id} ({form.syntax}) {fmt_operands(ops)}{_rc_text(rc)}: {reason}")
    plain = plain_operands(ops)
    m = ops[0] if ops else None
    if form.evex_mask_required:   # a gather/scatter: its encoder writes the mask (aaa=) and refuses none (k0 is #UD)
        b = form(*plain, aaa=m.mask.num if m.__class__ is Masked else 0)   # (the form's call: a 32-bit address's 0x67 too)
    else: b = form(*plain, ip=ip) if form.is_branch else form(*plain)
    # the EVEX prefix follows the only legacy prefixes an EVEX instruction takes: 0x67 (a 32-bit address) and a segment
    # override (66, F2, F3, F0 or REX before 62 make an EVEX instruction #UD, SDM Vol.2 2.7)
    o = 0
    while b[o] in _BEFORE_EVEX: o += 1
    if b[o] != 0x62: raise AssertionError(f"{form.id}: unexpected EVEX layout {b.hex()}")   # cannot happen
    head, b = b[:o], b[o:]
    p2 = b[3]
    if m.__class__ is Masked:
        p2 = (p2 & 0x78) | (0x80 if m.zero else 0) | m.mask.num     # z and aaa (SDM Vol.2 2.7.1, Table 2-30)
    if rc is not None:
        # b = 1; L'L = the rounding mode (2.7.8), or 00 for {sae} alone (2.7.9)
        p2 = (p2 & 0x8F) | 0x10 | ((rc << 5) if rc != SAE else 0)
    for i, x in enumerate(ops):
        if x.__class__ is Bcst:
            p2 |= 0x10   # b = 1 with memory: broadcast (2.7.5)
            a = plain[i]
            m0, t0 = a.disp8n(form.disp8_n)
            m1, t1 = a.disp8n(x.size // 8)   # Table 2-34, FV/HV with EVEX.b = 1: N = the element size
            if b[6:6 + len(t0)] != t0 or (b[5] & 0xC0) != (m0 & 0xC0):
                raise AssertionError(f"{form.id}: unexpected EVEX layout {b.hex()}")   # cannot happen: 62 P0 P1 P2 op ModRM
            b = b[:5] + bytes(((b[5] & 0x3F) | (m1 & 0xC0),)) + t1 + b[6 + len(t0):]
    return head + b[:3] + bytes((p2,)) + b[4:]


_BEFORE_EVEX = frozenset((0x67, 0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65))


def _matches(form, ops: tuple, rc) -> bool:
    """Do ``ops``' operands (a `Masked` one's register or memory; a `Bcst` at a memory operand) fit ``form``'s?"""
    from ._choose import _matches as plain_match
    if len(form.operands) != len(ops): return False
    for o, x in zip(form.operands, ops):
        if x.__class__ is Masked: x = x.op
        elif x.__class__ is Bcst:
            if o.loc != "rm" or o.mem is None: return False
            continue
        if not plain_match(o, x): return False
    return True


def choose(mnemonic: str, ops: tuple, rc=None, ip: int = 0):
    """The form `x86gen.encode` uses for decorated ``ops`` / ``rc``: the shortest EVEX form of ``mnemonic`` whose
    operands and decorations fit (a mask, broadcast or rounding forces EVEX, never VEX)."""
    from .encoder import EVEX_PREFIX
    words = mnemonic.split()
    if len(words) > 1 and all(w == EVEX_PREFIX for w in words[:-1]): words = words[-1:]
    if len(words) != 1:
        raise EvexOperandError(f"{fmt_value(mnemonic)} {fmt_operands(ops)}: prefix words with masking, broadcast or rounding are"
                               " not supported (only {evex})")
    name = words[0]
    if name.startswith(EVEX_PREFIX): name = name[len(EVEX_PREFIX):]
    _check_rc(rc, lambda: f"{name} {fmt_operands(ops)}")
    try: key = (name, None if rc is None else rc == SAE, *["i" if x.__class__ is int else x.sig for x in ops])
    except AttributeError: key = None   # an operand that is none (the error below names it)
    ok = _CHOICES.get(key) if key is not None else None
    if ok is None:
        ok = _candidates(name, ops, rc)
        if key is not None: _CHOICES[key] = ok
    plain = plain_operands(ops)
    if len(ok) == 1 and not ok[0].imm_widths: return ok[0]
    for f in ok:
        if f.fits(*plain, ip=ip): return f
    from ._choose import range_error
    raise range_error(name, ops, ok)


# choose(): the EVEX forms for (mnemonic, rounding kind, operand signatures), best first. Bounded like the encoder's
# plan caches: the signatures of decorated operands are those of the spec's EVEX operands with {k}/{kz}/bNN.
_CHOICES: dict[tuple, tuple] = {}


def _candidates(name: str, ops: tuple, rc) -> tuple:
    """The EVEX forms of ``name`` that take ``ops`` and ``rc``, shortest first; `EvexOperandError` naming why not."""
    from ._choose import canonical, no_form_error
    from .forms import forms_of
    where = f"{name} {fmt_operands(ops)}{_rc_text(rc)}"
    forms = forms_of(canonical(name))
    shaped = [f for f in forms if _matches(f, ops, rc)]
    ok = [f for f in shaped if why_not(f, ops, rc) is None]
    if not ok:
        if not shaped: raise no_form_error(name, ops, forms)
        evex = [f for f in shaped if f.encoding_kind == "evex"]
        reason = why_not((evex or shaped)[0], ops, rc)
        allowed = "; ".join(f"{f.id} ({_allows(f)})" for f in evex) or "none is EVEX"
        raise EvexOperandError(f"{where}: {reason}; the forms for these operands: {allowed}")
    for i, x in enumerate(ops):
        inner = x.op if x.__class__ is Masked else x
        if inner.__class__ is Mem and not inner.size and len({f.operands[i].mem for f in ok}) > 1:
            raise OperandError(f"{where}: operand {i + 1} needs a size (forms {', '.join(f.id for f in ok)} take it)")
    ok.sort(key=lambda f: f.length)
    return tuple(ok)


def _allows(f) -> str:
    parts = [{"k1": "{k1}", "k1z": "{k1}{z}", "": "no mask"}[f.evex_mask]]
    if f.evex_bcst: parts.append(f"m{f.evex_bcst}bcst")
    if f.evex_rc: parts.append("{er}" if f.evex_rc == "er" else "{sae}")
    return " ".join(parts)


def encode(mnemonic: str, ops: tuple, rc=None, ip: int = 0) -> bytes:
    """`x86gen.encode` for decorated operands or ``rc=``."""
    return encode_form(choose(mnemonic, ops, rc, ip), ops, rc, ip)
