"""The prefix layer of `x86gen.encode`: prefix words (``lock add``, ``rep movsb``, ``{vex3} vaddps``), segment
overrides (`x86gen.SegMem`) and 32-bit addresses (`x86gen.A32Mem`, 0x67) around a form's bytes (`x86gen.prefixes`
checks and lays them out). Loaded on the first instruction that has one."""
from __future__ import annotations

import re

from . import prefixes as P
from ._choose import candidates, canonical, range_error
from ._runtime import label_error
from ._strings import string_operands
from ._table import A32_SPELLED, IMPLICIT_MEM, REG_ADDRESS
from .encoder import STRING_MNEMONICS, VEX_PREFIX, _key, select, xchg_choice
from .errors import EncodeError, OperandError, PrefixError, fmt_operands
from .forms import Form, forms_of
from .memory import A32Mem, Mem, SegMem, a32_error
from .registers import gpr


def _string_segments(mn: str, ops: tuple, words: list[str], written: str) -> tuple[tuple, str | None]:
    """(operands without segment overrides, the segment prefix or None) of string instruction ``mn``: an override (of
    an operand, or a prefix word such as ``fs movsb``) applies to its ds:[rsi] (ds:[rdi], ds:[rbx+al]) operand; its
    es:[rdi] is never overridden (SDM Vol.2 MOVS: "the ES segment cannot be overridden"), so ``es:`` there is no byte and
    another segment an error."""
    plain = tuple(x.plain if x.__class__ is SegMem else x for x in ops)
    a32 = A32Mem in map(type, plain)
    form = select(mn, *(x.plain if x.__class__ is A32Mem else x for x in plain)) if a32 else select(mn, *plain)
    if not any(o.loc in IMPLICIT_MEM for o in form.operands):   # movsd/cmpsd xmm, xmm/m64: the SSE2 forms of the name
        seg, plain = _segment(written, ops, words)
        return plain, seg
    if a32:   # (0x67 with a string instruction addresses [esi]/[edi]: iced's *_M8_M8 forms with 32-bit registers)
        raise OperandError(f"{written} {fmt_operands(ops)}: x86gen encodes string instructions with 64-bit addresses only"
                           f" ([rsi]/[rdi]; {form.id} ({form.syntax}) with [esi]/[edi] and 0x67 is not supported)")
    seg = None
    for i, x in enumerate(ops):
        s = x.seg if x.__class__ is SegMem else None
        if form.operands[i].loc == "esrdi":
            if s not in (None, "es"):
                raise PrefixError(f"{written} {fmt_operands(ops)}: operand {i + 1} is es:[rdi], which takes no segment override"
                                  " (SDM Vol.2 MOVS/STOS/SCAS/INS: the ES segment cannot be overridden)")
            continue
        if s is not None:
            if seg is not None and seg != s: raise PrefixError(f"{written} {fmt_operands(ops)}: two segment overrides")
            seg = s
    for w in words:
        if seg is not None and seg != w: raise PrefixError(f"{written} {fmt_operands(ops)}: two segment overrides")
        seg = w
    if seg is not None and not any(o.loc in ("rsi", "rdi", "rbxal") for o in form.operands):
        raise PrefixError(f"{written} {fmt_operands(ops)}: a segment override ({seg}) applies to no operand of {form.id}"
                          f" ({form.syntax}): es:[rdi] takes none (SDM Vol.2 MOVS/STOS/SCAS/INS)")
    return plain, (None if seg == "ds" else seg)   # ds: the segment the operand uses anyway, no byte (as GNU as)


# ---- the prefix layer: prefix words and segment overrides around a form's bytes (see x86gen.prefixes) -------------

def _segment(mnemonic: str, ops: tuple, words: list[str]) -> tuple[str | None, tuple]:
    """(the segment override of the one memory operand or None, the operands without it) for `encode_prefixed`."""
    seg = None
    plain = list(ops)
    for i, x in enumerate(ops):
        if x.__class__ is SegMem:
            if seg is not None and seg != x.seg: raise PrefixError(f"{mnemonic} {fmt_operands(ops)}: two segment overrides")
            seg, plain[i] = x.seg, x.plain
    for w in words:
        if w in P.SEGMENTS:   # objdump's `ss mov eax, dword ptr [rax]`: the override of the memory operand
            if seg is not None and seg != w: raise PrefixError(f"{mnemonic} {fmt_operands(ops)}: two segment overrides")
            seg = w
    if seg is not None:
        mems = [x for x in plain if isinstance(x, Mem)]
        if len(mems) != 1:
            raise PrefixError(f"{mnemonic} {fmt_operands(ops)}: a segment override ({seg}) needs one memory operand")
        if seg == P.default_segment(mems[0]): seg = None   # the segment it uses anyway: no byte (as GNU as)
    return seg, tuple(plain)


def encode_prefixed(mnemonic: str, ops: tuple, ip: int = 0) -> tuple[bytes, Form]:
    """(bytes, form) of an instruction with prefix words or a segment override or 32-bit address (see
    `_encode_prefixed`)."""
    if A32Mem in map(type, ops) or any(x.__class__ is SegMem and x.plain.__class__ is A32Mem for x in ops):
        return _encode_prefixed_a32(mnemonic, ops, ip)
    return _encode_prefixed(mnemonic, ops, ip)


def _encode_prefixed(mnemonic: str, ops: tuple, ip: int = 0) -> tuple[bytes, Form]:
    """(bytes, form) of an instruction with prefix words (``"lock add"``, ``"rep stosb"``, ``"bnd jmp"``,
    ``"{vex3} vaddps"``, objdump's ``"ss mov"``) and/or memory operands with a segment override (`SegMem`) or a 32-bit
    address (`A32Mem`: the 0x67 prefix).

    The form is chosen as without the prefixes, among the forms that take them (``bnd jmp`` takes rel32, not
    rel8); the prefixes are checked (`x86gen.prefixes.check`: `PrefixError` naming instruction, prefix and why)
    and laid out before the form's bytes in iced-x86's order (`x86gen.prefixes.layout`)."""
    words, mn = P.split_words(mnemonic)
    if any(w in P.REX_WORDS for w in words): return encode_rex(mnemonic, words, mn, ops, ip)
    if mn in STRING_MNEMONICS:   # `rep movsb`, `fs lodsb`, `movs byte ptr [rdi], byte ptr fs:[rsi]`
        mn, ops = string_operands(mn, ops)
        plain, seg = _string_segments(mn, ops, [w for w in words if w in P.SEGMENTS], mnemonic)
    else:
        seg, plain = _segment(mnemonic, ops, words)
    a32 = A32Mem in map(type, plain)
    # [ecx]: the 64-bit operand's bytes after 0x67 (`prefix67`); but movdir64b/enqcmd/enqcmds take it as it is, in their
    # forms with a 32-bit address (`a32_memory`: ENQCMD_R32_M512, whose bytes have the 0x67; SDM Vol.2 ENQCMD)
    own67 = a32 and canonical(mn) in REG_ADDRESS
    prefix67 = a32 and not own67
    if prefix67: plain = tuple(x.plain if x.__class__ is A32Mem else x for x in plain)
    # addr32 / data16: the forms with a 32-bit implicit address / the 16-bit branches (with a 32-bit memory operand,
    # addr32 is its 0x67, nothing more, as GNU as)
    # (both: `data16 addr32 loop`, LOOP_REL8_16_ECX; `addr32 jecxz` is jecxz, which says its 32-bit address itself)
    sized = " ".join(w for w, on in ((P.DATA16, P.DATA16 in words),
                                    (P.ADDR32, P.ADDR32 in words and not a32 and canonical(mn) not in A32_SPELLED)) if on)
    legacy = [w for w in words if w not in P.SEGMENTS and w not in (P.ADDR32, P.DATA16)]
    if "{vex}" in legacy and not any(f.encoding_kind == "vex" for f in forms_of(canonical(mn))):
        raise PrefixError(f"{{vex}} {mn}: no VEX-encoded form of {mn}")
    if "{vex3}" in legacy and any(f.encoding_kind == "vex" for f in forms_of(canonical(mn))):
        mn = VEX_PREFIX + mn   # {vex3} asks for VEX as {vex} does (`{vex3} vpdpbusd`: AVX-VNNI, not AVX512_VNNI)
    n = (seg is not None or "notrack" in legacy) + prefix67 + sum(w in P.PREFIX_BYTES and w != "notrack" for w in legacy)
    want = {P.SPEC_NAME.get(w, w) for w in legacy if w in P.PREFIX_BYTES}
    if sized:   # the forms with a 32-bit implicit address or a 16-bit branch (their bytes have the 67 / 66)
        key = _key(mn, plain)
        if "l" in key[1:]: raise label_error(mnemonic, ops)
        ok = [f for f in candidates(mn, key[1:], plain, sized)[0] if want <= P.allowed(f.id)]
        if not ok: raise PrefixError(f"{mnemonic} {fmt_operands(ops)}: no form of {mn} with a 32-bit address takes {', '.join(want)}")
        form = next((f for f in ok if f.fits(*plain, ip=ip + n)), None)
        if form is None: raise range_error(mnemonic, ops, ok)
    elif not want and not own67:   # (select() would send an A32Mem back here: enqcmd's take the candidates below)
        form = select(mn, *plain, ip=ip + n)
    else:
        key = _key(mn, plain)
        if "l" in key[1:]: raise label_error(mnemonic, ops)
        forms, _check = candidates(mn, key[1:], plain)
        ok = [f for f in forms if want <= P.allowed(f.id)]
        form = next((f for f in ok if f.fits(*plain, ip=ip + n)), None)
        if form is None:
            if ok: raise range_error(mnemonic, ops, ok)
            P.check(legacy, forms[0], mnemonic, ops)   # raises: the first form's reason
            raise PrefixError(f"{mnemonic} {fmt_operands(ops)}: no form takes {', '.join(sorted(want))}")
    if P.ADDR32 in words and not a32 and not form.addrsize32 and canonical(mn) in A32_SPELLED:
        # `addr32 umonitor rax`: umonitor's address is its register, sized by the address size (SDM Vol.2 UMONITOR), so
        # 0x67 makes it `umonitor eax` (what GNU as writes); the register given asks for the 64-bit form: an error, not
        # the word dropped
        raise PrefixError(f"{mnemonic} {fmt_operands(ops)}: {mn} takes its address size from its register, which addr32 "
                          f"would make 32-bit; write {mn} with a 32-bit register for the 0x67 form")
    P.check(words, form, mnemonic, ops)
    xchg = xchg_choice(mn, plain)
    if xchg is not None and xchg[0] is form: plain = xchg[1]
    body = form(*plain, ip=ip + n) if form.is_branch else form(*plain)
    return P.layout(legacy, form, body, seg, prefix67), form


# the legacy prefix bytes that may come before a form's REX byte (its own 66, 67, F2, F3: SDM Vol.2 2.2.1, REX last)
_BEFORE_REX = frozenset({0x66, 0x67, *(b for b, _ in P.PREFIX_BYTES.values()), *P.SEGMENTS.values()})
# operand kinds of a REX.W form that read less than the 64-bit register they name (objdump names the register by what is
# read: `rex.W pinsrw xmm0,eax,0`, `rex.WB lldt r15w`)
_NARROW_READ = re.compile(r"r64/m(8|16|32)")


def encode_rex(mnemonic: str, words: list[str], mn: str, ops: tuple, ip: int = 0) -> tuple[bytes, Form]:
    """(bytes, form) of an instruction after a ``rex…`` word (`x86gen.prefixes.REX_WORDS`, objdump's spelling of a REX byte
    whose bits its text does not show).

    With W the form is one whose encoding has REX.W: ``rex.W nop`` is NOPQ (48 90), ``rex.W getsec`` GETSECQ, ``rex.WB
    lldt r15w`` LLDT_R64M16 (49 0F 00 D7). Where such a form's operand reads less than its 64-bit register (``r64/m16``;
    the other W1 forms of the mnemonic in that place too), a 16- or 32-bit register stands for the 64-bit one, as objdump
    names it (``rex.W pextrw ecx,xmm6,0x5a``), and a far pointer written fword (m16:32) is the m16:64 that REX.W makes
    it (``rex.W jmp fword ptr [rax]``, 48 FF 28, as GNU as reads it). The shortest such encoding is taken. Every bit of
    the word must be in that encoding's REX byte (R, X and B follow from the operands, W from the form): x86gen adds no
    REX bit its operands and form do not ask for, so ``rex.W add eax, ecx`` (GNU as: 48 01 C8, `add rax, rcx`) and a
    ``rex.X`` without an index register are `PrefixError`\\ s, not other instructions."""
    insn = f"{mnemonic} {fmt_operands(ops)}" if ops else mnemonic
    if len(words) > 1:
        raise PrefixError(f"{insn}: a rex word with other prefix words is not supported")
    if any(x.__class__ is SegMem or x.__class__ is A32Mem for x in ops):
        raise PrefixError(f"{insn}: a rex word with a segment override or a 32-bit address is not supported")
    bits = P.REX_WORDS[words[0]]
    w = bits & 8
    forms = [f for f in forms_of(canonical(mn)) if f.encoding_kind == "legacy" and len(f.operands) == len(ops) and (f.w or not w)]
    if w and not forms and not ops and forms_of(mn + "q"):   # `rex.W getsec` is getsecq (iced's name of 48 0F 37; sysretq …)
        forms = [f for f in forms_of(mn + "q") if f.w and not f.operands]
    narrow = {i for f in forms if f.w for i, o in enumerate(f.operands) if _NARROW_READ.fullmatch(o.kind)}
    found = []
    for f in forms:
        given = ops
        if w:
            given = tuple(gpr(x.num, 64) if i in narrow and o.kind.startswith("r64") and getattr(x, "kind", None) in ("r16", "r32")
                          else x.with_size(80) if o.kind == "m16:64" and x.__class__ is Mem and x.size == 48 else x
                          for i, (o, x) in enumerate(zip(f.operands, ops)))
        if not f.accepts(*given) or not f.fits(*given, ip=ip): continue
        body = f(*given, ip=ip) if f.is_branch else f(*given)
        i = 0
        while i < len(body) and body[i] in _BEFORE_REX: i += 1
        found.append((len(body), body, f, body[i] & 0xF if i < len(body) and 0x40 <= body[i] <= 0x4F else None))
    if not found:
        raise PrefixError(f"{insn}: no {'REX.W ' if w else ''}form of {mn} takes these operands"
                          + (" (a REX.W that changes the operation size is written with the 64-bit registers)" if w else ""))
    found.sort(key=lambda c: c[0])   # (stable: the table's order among equally long ones)
    hit = next((c for c in found if c[3] is not None and not bits & ~c[3]), None)
    if hit is None:
        _, _, form, have = found[0]
        shown = "no REX byte" if have is None else f"REX {0x40 | have:#04x} ({[k for k, v in P.REX_WORDS.items() if v == have][0]})"
        raise PrefixError(f"{insn}: {form.id} ({form.syntax}) is encoded with {shown}; x86gen writes no REX bit that the "
                          f"operands and form do not ask for (SDM Vol.2 2.2.1)")
    return hit[1], hit[2]


def _encode_prefixed_a32(mnemonic: str, ops: tuple, ip: int) -> tuple[bytes, Form]:
    """`encode_prefixed`, whose errors name a 32-bit address as given (``[eax]``), not as the operand of the bytes after
    its 0x67 (``[rax]``; `x86gen.memory.a32_error`)."""
    if canonical(P.split_words(mnemonic)[1]) in REG_ADDRESS:   # (they take the A32Mem as it is: errors name it as given)
        return _encode_prefixed(mnemonic, ops, ip)
    try: return _encode_prefixed(mnemonic, ops, ip)
    except EncodeError as ex:
        plain = tuple(x.plain if x.__class__ is A32Mem else x.plain.plain if x.__class__ is SegMem and x.plain.__class__ is A32Mem
                      else x for x in ops)
        raise a32_error(ex, plain, ops) from None
