"""Operands a form's generated encoder does not take itself, taken off before it runs and put back into its bytes after.

A form's encoder (``x86gen/_gen/encoders``) takes plain operands: registers, a plain `Mem` (or `VsibMem`), ints. Every
door that encodes a given form (`x86gen.forms.Form`, selection's plans, the prefix words of `x86gen.selection.prefixed`)
comes here for the rest, so they accept the same operands and write the same bytes:

- a segment override (`x86gen.memory.SegMem`, or objdump's word before the mnemonic, ``ss mov``): the segment prefix
  byte (SDM Vol.2 2.1.1 group 2), left out where it names the segment the address uses anyway (`x86gen.prefixes.
  default_segment`, as GNU as leaves it out); a string instruction's es:[rdi] takes none (SDM Vol.2 MOVS);
- a 32-bit address (`x86gen.memory.A32Mem`): the bytes of the same address with 64-bit registers after the
  address-size prefix 0x67 (SDM Vol.2 3.6), except in the forms whose memory operand is a 32-bit address themselves
  (`x86gen.table.a32_memory`: enqcmd r32, m512);
- the AVX-512 decorations (SDM Vol.2 2.7): a masked destination (`x86gen.registers.Masked`: EVEX.aaa, and EVEX.z for
  zeroing), a broadcast source (`x86gen.memory.Bcst`: EVEX.b, and the compressed displacement scaled by the element
  size), and static rounding or SAE (``rc=``: EVEX.b and L'L) — the bits of P2 = z L'L b V̄' aaa and the disp8 scale
  that the form's encoder takes as keywords (`evex_bits`, `x86gen.encoding.evex`);
- immediates given as bool or numpy integers (``operator.index``): ints.
"""
from __future__ import annotations

import operator

from ..diagnostics import a32_error, address_size_error
from ..errors import EncodeError, EvexOperandError, OperandError, PrefixError, fmt_operands, fmt_value
from ..evex import ROUNDING_NAMES, SAE
from ..memory import A32Mem, Bcst, Mem, SegMem
from ..prefixes import default_segment, layout
from ..registers import Masked
from ..table import IMPLICIT_MEM, REG_ADDRESS, a32_memory, syntax

DECORATED = (Masked, Bcst)   # the AVX-512 operand classes (EVEX decorations)
WRAPPED = (Masked, Bcst, SegMem, A32Mem)   # every operand class this module takes off


def is_decorated(ops: tuple) -> bool:
    """Does ``ops`` hold a masked destination or a broadcast source?"""
    for x in ops:
        if x.__class__ is Masked or x.__class__ is Bcst: return True
    return False


def is_wrapped(ops: tuple) -> bool:
    """Does ``ops`` hold an operand this module takes off (a decoration, a segment override, a 32-bit address)?"""
    for x in ops:
        if x.__class__ in WRAPPED: return True
    return False


def int_operands(ops: tuple) -> tuple | None:
    """``ops`` with every int-like immediate (bool, numpy integer: anything with ``__index__`` that is no
    register or memory operand) made an int; None when there is none to convert."""
    if all(x.__class__ is int or hasattr(x, "sig") for x in ops): return None
    out = []
    for x in ops:
        if x.__class__ is not int and not hasattr(x, "sig"):
            try: x = operator.index(x)
            except TypeError: return None
        out.append(x)
    return tuple(out)


# ---- segment overrides and 32-bit addresses ----------------------------------------------------------------------

def segment(row, ops: tuple, words: tuple = (), written: str | None = None) -> tuple[tuple, str | None]:
    """(``ops`` without segment overrides, the segment prefix to write or None) for form ``row``; ``words`` are segment
    words written before the mnemonic (objdump's ``ss mov …``, ``fs lodsb``), ``written`` the instruction for messages.

    A string instruction's override applies to its ds:[rsi] (ds:[rdi], ds:[rbx+al]) operand; its es:[rdi] is never
    overridden (SDM Vol.2 MOVS: "the ES segment cannot be overridden"), so ``es:`` there is no byte and another segment
    an error. Any other form takes an override on its one memory operand. The segment the address uses anyway (DS; SS
    with an rbp/rsp base: SDM Vol.1 3.7.4) gets no byte, as GNU as writes it."""
    if not words and not any(x.__class__ is SegMem for x in ops): return ops, None
    where = lambda: f"{written or row.mnemonic} {fmt_operands(ops)}"   # noqa: E731
    string = any(o.loc in IMPLICIT_MEM for o in row.operands)
    seg, plain = None, list(ops)
    for i, x in enumerate(ops):
        if x.__class__ is not SegMem: continue
        plain[i] = x.plain
        if string and row.operands[i].loc == "esrdi":
            if x.seg != "es":
                raise PrefixError(f"{where()}: operand {i + 1} is es:[rdi], which takes no segment override"
                                  " (SDM Vol.2 MOVS/STOS/SCAS/INS: the ES segment cannot be overridden)")
            continue
        if seg is not None and seg != x.seg: raise PrefixError(f"{where()}: two segment overrides")
        seg = x.seg
    for w in words:
        if seg is not None and seg != w: raise PrefixError(f"{where()}: two segment overrides")
        seg = w
    if seg is None: return tuple(plain), None
    if string:
        if not any(o.loc in ("rsi", "rdi", "rbxal") for o in row.operands):
            raise PrefixError(f"{where()}: a segment override ({seg}) applies to no operand of {row.id}"
                              f" ({syntax(row)}): es:[rdi] takes none (SDM Vol.2 MOVS/STOS/SCAS/INS)")
        return tuple(plain), (None if seg == "ds" else seg)   # ds: the segment the operand uses anyway, no byte (as GNU as)
    mems = [x for x in plain if isinstance(x, Mem)]
    if len(mems) != 1: raise PrefixError(f"{where()}: a segment override ({seg}) needs one memory operand")
    return tuple(plain), (None if seg == default_segment(mems[0]) else seg)


def address32(row, ops: tuple, written: str | None = None) -> tuple[tuple, bool]:
    """(``ops`` with a 32-bit address as the operand of the same bytes without 0x67, whether 0x67 goes before them) for
    form ``row``; a form whose memory operand is a 32-bit address itself (`a32_memory`) takes it as it is."""
    if not any(x.__class__ is A32Mem for x in ops) or a32_memory(row): return ops, False
    where = f"{written or row.id} {fmt_operands(ops)}"
    if any(o.loc in IMPLICIT_MEM for o in row.operands):
        # 0x67 makes all of a string instruction's addresses 32-bit ([esi], es:[edi], [ebx+al]: SDM Vol.2 MOVS, XLAT): each
        # must be written so (GNU as: `movsb byte ptr [rdi], byte ptr [esi]` is "not a valid base/index expression")
        for o, x in zip(row.operands, ops):
            if o.loc in IMPLICIT_MEM and x.__class__ is not A32Mem:
                raise OperandError(f"{where}: a 32-bit and a 64-bit address: 0x67 makes every address of {syntax(row)}"
                                   " 32-bit ([esi] and [edi] together, as GNU as)")
    if row.cpuid == "MPX":   # 64-bit mode: MPX addresses are 64-bit with or without 0x67 (SDM Vol.1 17.5.1, Table 17-3)
        raise OperandError(f"{where}: MPX instructions take no 32-bit address in 64-bit mode (0x67 does not make their"
                           " address 32-bit: SDM Vol.1 17.5.1, Table 17-3; GNU as refuses it too)")
    if row.mnemonic in REG_ADDRESS:   # enqcmd r64 with [ecx]: 0x67 would make its register's address 32-bit too
        raise address_size_error(written or row.id, ops, [row])
    return tuple(x.plain if x.__class__ is A32Mem else x for x in ops), True


# ---- AVX-512 decorations ------------------------------------------------------------------------------------------

def rc_text(rc) -> str:
    return "" if rc is None else f" {{{ROUNDING_NAMES[rc]}}}" if rc in ROUNDING_NAMES else f" rc={fmt_value(rc)}"


def check_rc(rc, where) -> None:
    """Raise unless ``rc`` is None or one of the rounding constants; ``where()`` gives the message's instruction."""
    if rc is not None and (rc.__class__ is not int or rc not in ROUNDING_NAMES):
        raise EvexOperandError(f"{where()}: rc= must be x86gen.RN_SAE, RD_SAE, RU_SAE, RZ_SAE (static rounding) or SAE, not"
                               f" {fmt_value(rc)}")


def why_not(row, ops: tuple, rc) -> str | None:
    """Why form ``row`` does not take the decorations of ``ops``/``rc`` (None: it does), its plain operands aside."""
    if row.encoding_kind != "evex":
        return f"{row.id} is a {row.encoding_kind} form (masking, broadcast and rounding are EVEX only, SDM Vol.2 2.7)"
    for i, x in enumerate(ops):
        if x.__class__ is Masked:
            if i != 0: return f"operand {i + 1} ({x}) is masked: only the destination (operand 1) takes a mask"
            if not row.evex_mask: return f"{row.id} takes no mask"
            if x.zero and row.evex_mask != "k1z":
                return f"{row.id} takes merge-masking {{k1}} only, no zeroing {{z}}"
        elif x.__class__ is Bcst:
            o = row.operands[i]
            if o.loc != "rm" or o.mem is None: return f"operand {i + 1} of {row.id} is no memory operand"
            if not row.evex_bcst: return f"{row.id} takes no broadcast"
            if row.evex_bcst != x.size:
                return f"{row.id} broadcasts {row.evex_bcst}-bit elements, not {x.size}-bit ones ({x})"
    if rc is not None:
        want = "sae" if rc == SAE else "er"
        if row.evex_rc != want:
            has = {"er": "static rounding {er} (rc=RN_SAE…RZ_SAE), not {sae} alone", "sae": "{sae} (rc=SAE) only, no static rounding",
                   "": "no rounding or {sae}"}[row.evex_rc]
            if not row.evex_rc and row.id.endswith("_ER"):   # iced's name; the SDM gives the conversion no {er}
                has += " (the conversion is exact: SDM Vol.2 gives it no {er}, as GNU as and llvm-mc; iced's name says _ER)"
            return f"{row.id} takes {has}"
        if any(isinstance(x, Mem) or (x.__class__ is Masked and isinstance(x.op, Mem)) for x in ops):
            return "rounding and {sae} are register-only (EVEX.b with a memory operand means broadcast, SDM Vol.2 2.7.8)"
    return None


def plain_operands(ops: tuple) -> tuple:
    """``ops`` without decorations: a `Masked` operand's register or memory, a broadcast's address unsized (the form's
    memory operand is vector-sized; the form's encoder checks everything else)."""
    return tuple(x.op if x.__class__ is Masked else x.unsized if x.__class__ is Bcst else x for x in ops)


def evex_bits(row, ops: tuple, rc) -> dict:
    """The keywords of EVEX form ``row``'s encoder (``p2``, ``n``: `x86gen.encoding.evex`) for the decorations of
    ``ops`` and ``rc`` (SDM Vol.2 2.7.1, Table 2-30: P2 = z L'L b V̄' aaa):

    - a mask: aaa = the mask register's number, z = zeroing (2.7.3/2.7.4);
    - broadcast (2.7.5): b = 1, and the compressed disp8 scaled by the element size instead of the vector length
      (Table 2-34: FV and HV with EVEX.b = 1);
    - static rounding (2.7.8, Table 2-36): b = 1, L'L = the rounding mode (RN 00, RD 01, RU 10, RZ 11), register
      operands only; SAE only (2.7.9/2.7.10): b = 1, L'L = 00 (the CPU ignores L'L then; what iced-x86 and llvm-mc write).
    """
    p2 = (row.vex_l or 0) << 5
    if rc is not None: p2 = 0x10 | ((rc << 5) if rc != SAE else 0)
    m = ops[0] if ops else None
    if m.__class__ is Masked: p2 |= m.p2
    kw = {"p2": p2}
    for x in ops:
        if x.__class__ is Bcst:
            kw["p2"] = p2 | 0x10
            kw["n"] = x.size // 8
    return kw


# ---- a given form with any of these operands ----------------------------------------------------------------------

def encode_form(form, ops: tuple, rc=None, ip: int = 0, words: tuple = (), seg_words: tuple = (),
                written: str | None = None, n: int | None = None) -> bytes:
    """The bytes of ``form`` (a `x86gen.forms.Form`) with operands ``ops`` as any door gives them (decorated, with a
    segment override or a 32-bit address, int-like immediates), rounding ``rc``, the instruction at ``ip``; ``words``:
    the legacy prefix words before it (``lock``, ``rep``: checked by the caller, laid out here), ``seg_words``: segment
    words before the mnemonic; ``n``: an EVEX form's disp8 scale instead of its own (``{disp32}``,
    `x86gen.selection.pseudo`). Raises the `x86gen.EncodeError` that says why the form does not take them."""
    ints = int_operands(ops)
    if ints is not None: ops = ints
    m = ops[0] if ops else None
    if rc is not None or is_decorated(ops):
        check_rc(rc, lambda: f"{form.id} {fmt_operands(ops)}")
        if len(ops) != len(form.operands):
            raise OperandError(f"{form.id} ({form.syntax}) takes {len(form.operands)} operands, got {len(ops)}")
        reason = why_not(form, ops, rc)
        if reason is not None:
            raise EvexOperandError(f"{form.id} ({form.syntax}) {fmt_operands(ops)}{rc_text(rc)}: {reason}")
        plain = plain_operands(ops)
    else: plain = ops
    plain, seg = segment(form, plain, seg_words, written)
    plain, a32 = address32(form, plain, written)
    kw = {}
    if form.is_branch: kw["ip"] = ip + (seg is not None or "notrack" in words) + a32 + sum(w in ("lock", "rep", "repe", "repz",
                                        "repne", "repnz", "xacquire", "xrelease", "bnd") for w in words)
    if form.evex_mask_required: kw["aaa"] = m.mask.num if m.__class__ is Masked else 0   # a gather/scatter's encoder writes it
    elif rc is not None or is_decorated(ops): kw.update(evex_bits(form, ops, rc))
    if n is not None: kw["n"] = n
    enc = form.encoder
    try: body = enc(*plain, **kw)
    except EncodeError as ex:
        if a32: raise a32_error(ex, plain, ops) from None   # the operands as given: [eax], not [rax]
        raise
    if seg is not None or a32 or words: body = layout(list(words), form, body, seg, a32)
    return body
