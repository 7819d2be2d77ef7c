"""Instructions with prefix words (``lock add``, ``rep movsb``, ``bnd jmp``, ``{vex3} vaddps``, ``addr32 monitor``,
``data16 jmp``, objdump's ``ss mov`` and ``rex.W pinsrw``): the form is chosen as without the words, among the forms
that take them (`x86gen.prefixes`: which forms take which, their bytes and order), and encoded with them
(`x86gen.encoding.decorated.encode_form`, which lays the prefixes out, and takes segment overrides and 32-bit
addresses off the operands as for any door)."""
from __future__ import annotations

import re

from .. import prefixes as P
from ..diagnostics import a32_error, cannot_honour, evex_needs, label_error, range_error
from ..encoding.decorated import encode_form, is_decorated, segment
from ..errors import EncodeError, ImmediateRangeError, PrefixError, fmt_operands
from ..forms import Form, form_of, forms_of, get_form
from ..memory import A32Mem, Mem, SegMem, a32_absolute
from ..registers import Reg, gpr
from ..table import A32_SPELLED, REG_ADDRESS
from . import pseudo
from .candidates import candidates, choose, fits, unwrapped
from .request import EVEX_PREFIX, STRING_MNEMONICS, VEX_PREFIX, canonical, signature, string_operands, xchg_choice


def encode_prefixed(mnemonic: str, ops: tuple, ip: int = 0, rc=None) -> tuple[bytes, Form]:
    """(bytes, form) of an instruction with prefix words (see the module's doc)."""
    words, mn = P.split_words(mnemonic)
    for w in words:
        if w in P.CHOOSING: return encode_chosen(mnemonic, words, mn, ops, ip, rc)   # {disp32}, {load}, {vex2} …
    if any(w in P.REX_WORDS for w in words): return encode_rex(mnemonic, words, mn, ops, ip)
    if rc is not None or is_decorated(ops):   # masking, broadcast, rounding: only {evex} goes with them
        if all(w == EVEX_PREFIX for w in words):
            name = mn[len(EVEX_PREFIX):] if mn.startswith(EVEX_PREFIX) else mn
            row = choose(name, signature(ops), ops, ip, rc)
            return encode_form(form_of(row), ops, rc, ip), form_of(row)
        if "{vex}" in words or "{vex3}" in words or mn.startswith(VEX_PREFIX):
            word = "{vex3}" if "{vex3}" in words else "{vex}"
            raise cannot_honour(word, f"{mnemonic} {fmt_operands(ops)}", f"{evex_needs(ops, rc)}, and {word} asks for a VEX"
                                " form: masking, broadcast and rounding are EVEX only")
        raise PrefixError(f"{mnemonic} {fmt_operands(ops)}: prefix words with masking, broadcast or rounding are not supported"
                          " (only {evex})")
    a32_given = any(x.__class__ is A32Mem or (x.__class__ is SegMem and x.plain.__class__ is A32Mem) for x in ops)
    try: return _encode(mnemonic, words, mn, ops, ip)
    except EncodeError as ex:
        if not a32_given or canonical(mn) in REG_ADDRESS: raise   # (they take the A32Mem as it is: errors name it as given)
        plain = tuple(x.plain if x.__class__ is A32Mem else x.plain.plain if x.__class__ is SegMem and x.plain.__class__ is A32Mem
                      else x for x in ops)
        raise a32_error(ex, plain, ops) from None   # the addresses as given: [eax], not [rax]


def encode_chosen(mnemonic: str, words: list[str], mn: str, ops: tuple, ip: int = 0, rc=None) -> tuple[bytes, Form]:
    """(bytes, form) of an instruction with pseudo-prefixes that choose among its encodings (``{disp8}``, ``{disp32}``,
    ``{load}``, ``{store}``, ``{vex2}``: `x86gen.selection.pseudo`), and any other prefix words; a word the instruction
    cannot honour is a `PrefixError` saying why."""
    insn = pseudo.insn_text(mnemonic, ops)
    picks, rest = pseudo.split(words, insn)
    if any(w in P.REX_WORDS for w in rest): raise PrefixError(f"{insn}: a rex word with {', '.join(picks.values())} is not supported")
    disp, direction, vex2 = picks.get("disp"), picks.get("direction"), picks.get("vex2")
    name = mn[len(EVEX_PREFIX):] if mn.startswith(EVEX_PREFIX) else mn[len(VEX_PREFIX):] if mn.startswith(VEX_PREFIX) else mn
    decorated = rc is not None or is_decorated(ops)
    if vex2:
        if mn.startswith(EVEX_PREFIX): raise PrefixError(f"{insn}: {{vex2}} and {{evex}} ask for different encodings")
        if not any(f.encoding_kind == "vex" for f in forms_of(canonical(name))):
            raise pseudo.cannot(vex2, insn, f"{name} has no VEX form")
        if decorated:
            raise pseudo.cannot(vex2, insn, "masking, broadcast and rounding need EVEX (SDM Vol.2 2.7), and {vex2} asks for VEX")
        if "{vex}" not in rest and not mn.startswith(VEX_PREFIX): rest.append("{vex}")   # the VEX forms only, as {vex}
    plain_ops = ops
    if direction is not None and canonical(name) in pseudo.COMMUTING and any(isinstance(x, Mem) for x in ops):
        direction = None   # test/xchg with memory: one encoding, the memory in ModRM.rm whichever the order (as GNU as)
    elif direction is not None and pseudo.commuting(canonical(name), ops):
        # test/xchg of two registers: their forms are r/m, reg (store); {load} swaps the operands into it, as GNU as
        if direction == "{load}": ops = (ops[1], ops[0])
        direction = "{store}"

    def narrow(rows: tuple) -> list:
        out = list(rows)
        if direction is not None:
            want = "load" if direction == "{load}" else "store"
            out = [r for r in out if pseudo.direction_of(r) == want]
            if not out: raise pseudo.direction_error(direction, insn, rows)
        if disp is not None and any(pseudo.rel_width(r) for r in rows):   # a branch: its rel8 / rel32 form
            bits = 8 if disp == "{disp8}" else 32
            out = [r for r in out if pseudo.rel_width(r) == bits]
            if not out: raise pseudo.rel_error(disp, insn, rows)
        return out

    if decorated:   # masking, broadcast, rounding: {evex} only besides the choosing words
        if any(w != EVEX_PREFIX for w in rest):
            return encode_prefixed(" ".join([*rest, mn]), plain_ops, ip, rc)   # (raises the error of those words)
        ok = narrow(candidates(name, signature(ops), ops, rc=rc)[0])
        row = next((r for r in ok if fits(r, unwrapped(ops), ip)), None)
        if row is None: raise range_error(mnemonic, ops, ok)
        form, seg, n = form_of(row), (), None
        if disp is not None and pseudo.rel_width(row) is None: ops, seg, n = pseudo.force_disp(form, ops, disp, insn)
        return encode_form(form, ops, rc, ip, (), seg, mnemonic, n), form
    try: body, form = _encode(mnemonic, rest, mn, ops, ip, narrow if direction is not None or disp is not None else None, disp, insn)
    except ImmediateRangeError:
        if disp == "{disp8}" and len(ops) == 1 and ops[0].__class__ is int: raise pseudo.reach_error(disp, insn) from None
        raise
    if vex2: pseudo.check_vex2(body, form, insn)
    return body, form


def _encode(mnemonic: str, words: list[str], mn: str, ops: tuple, ip: int, narrow=None, disp: str | None = None,
            insn: str = "") -> tuple[bytes, Form]:
    """(bytes, form) of ``mn ops`` with prefix ``words``; ``narrow`` (rows -> rows) and ``disp`` are `encode_chosen`'s."""
    if mn in STRING_MNEMONICS:   # `rep movsb`, `fs lodsb`, `movs byte ptr [rdi], byte ptr fs:[rsi]`, `addr32 movsb` ([edi], [esi])
        mn, ops = string_operands(mn, ops, P.ADDR32 in words)
    seg_words = tuple(w for w in words if w in P.SEGMENTS)
    if P.ADDR32 in words:
        ops, seg, moffs = _absolute32(mnemonic, ops)
        if seg is not None: seg_words += (seg,)
        if moffs: return _moffs32(mnemonic, words, seg_words, ops)
    xchg = xchg_choice(mn, ops)
    if xchg is not None and len(ops) == 2 and isinstance(ops[1], Mem): ops = xchg[1]   # `lock xchg eax, [rdx]`: [rdx], eax
    if P.DATA16 in words and canonical(mn) == "mov" and any(getattr(x, "kind", None) == "sreg" for x in ops):
        ops = _sreg_word(ops)
    a32 = any(x.__class__ is A32Mem for x in unwrapped_segments(ops))
    own67 = a32 and canonical(mn) in REG_ADDRESS   # movdir64b/enqcmd/enqcmds: their forms with a 32-bit address (0x67)
    # addr32 / data16: the forms with a 32-bit implicit address / the 16-bit branches (with a 32-bit memory operand,
    # addr32 is its 0x67, nothing more, as GNU as); both: `data16 addr32 loop`, LOOP_REL8_16_ECX; `addr32 jecxz` is
    # jecxz, which says its 32-bit address itself
    sized = " ".join(w for w, on in ((P.DATA16, P.DATA16 in words),
                                    (P.ADDR32, P.ADDR32 in words and not a32 and canonical(mn) not in A32_SPELLED)) if on)
    legacy = [w for w in words if w not in P.SEGMENTS and w not in (P.ADDR32, P.DATA16)]
    if "{vex}" in legacy and not any(f.encoding_kind == "vex" for f in forms_of(canonical(mn))):
        raise PrefixError(f"{{vex}} {mn}: no VEX-encoded form of {mn}: the {{vex}} pseudo-prefix cannot be honoured")
    if "{evex}" in legacy:
        if "{vex}" in legacy or "{vex3}" in legacy: raise PrefixError(f"{mnemonic}: {{evex}} and {{vex}} ask for other encodings")
        mn = EVEX_PREFIX + mn   # `{evex} vaddps`: the EVEX forms only (as the text's `{evex}`)
    elif "{vex}" in legacy or ("{vex3}" in legacy and any(f.encoding_kind == "vex" for f in forms_of(canonical(mn)))):
        mn = VEX_PREFIX + mn   # the VEX forms only; {vex3} asks for VEX as {vex} does (`{vex3} vpdpbusd`: AVX-VNNI)
    # the prefix bytes before a branch's own bytes move its end, which its displacement counts from
    n = bool(seg_words or any(x.__class__ is SegMem for x in ops) or "notrack" in legacy) + (a32 and not own67) \
        + sum(w in P.PREFIX_BYTES and w != "notrack" for w in legacy)
    want = {P.SPEC_NAME.get(w, w) for w in legacy if w in P.PREFIX_BYTES}
    sig = signature(ops)
    if "l" in sig: raise label_error(mnemonic, ops)
    plain = unwrapped(ops)
    if sized:   # the forms with a 32-bit implicit address or a 16-bit branch (their bytes have the 67 / 66)
        rows = candidates(mn, sig, ops, sized)[0]
        ok = [r for r in (rows if narrow is None else narrow(rows)) if want <= P.allowed(r.id)]
        if not ok: raise PrefixError(f"{mnemonic} {fmt_operands(ops)}: no form of {mn} with a 32-bit address takes {', '.join(want)}")
        row = next((r for r in ok if fits(r, plain, ip + n)), None)
        if row is None: raise range_error(mnemonic, ops, ok)
    elif not want and narrow is None: row = choose(mn, sig, ops, ip + n)
    else:
        rows, _check = candidates(mn, sig, ops)
        if narrow is not None: rows = narrow(rows)
        ok = [r for r in rows if want <= P.allowed(r.id)]
        row = next((r for r in ok if fits(r, plain, ip + n)), None)
        if row is None:
            if ok: raise range_error(mnemonic, ops, ok)
            P.check(legacy, form_of(rows[0]), mnemonic, ops)   # raises: the first form's reason
            raise PrefixError(f"{mnemonic} {fmt_operands(ops)}: no form takes {', '.join(sorted(want))}")
    form = form_of(row)
    if P.ADDR32 in words and not a32 and not form.addrsize32 and canonical(mn) in A32_SPELLED:
        # `addr32 umonitor rax`: umonitor's address is its register, sized by the address size (SDM Vol.2 UMONITOR), so
        # 0x67 makes it `umonitor eax` (what GNU as writes); the register given asks for the 64-bit form: an error, not
        # the word dropped
        raise PrefixError(f"{mnemonic} {fmt_operands(ops)}: {mn} takes its address size from its register, which addr32 "
                          f"would make 32-bit; write {mn} with a 32-bit register for the 0x67 form")
    P.check(words, form, mnemonic, ops)
    if narrow is None:
        xchg = xchg_choice(mn, ops)
        if xchg is not None and xchg[0] is form: ops = xchg[1]
    k = None
    if disp is not None and pseudo.rel_width(form) is None:   # {disp8}/{disp32} on a memory operand
        ops, seg, k = pseudo.force_disp(form, ops, disp, insn)
        seg_words += seg
    return encode_form(form, ops, None, ip, tuple(legacy), seg_words, mnemonic, k), form


def _sreg_word(ops: tuple) -> tuple:
    """``data16 mov eax, ds`` is ``mov ax, ds`` (66 8C D8), ``data16 mov es, eax`` (and ``mov es, ax``, which the text
    reads as eax: `x86gen.syntax`) ``66 8E C0``, as GNU as writes them: the 0x66 makes the operation 16 bits, and a
    segment register moves 16 bits whatever the operand size (SDM Vol.2 MOV), so the general register is its 16-bit
    part, MOV_RM16_SREG / MOV_SREG_RM16."""
    return tuple(gpr(x.num, 16) if getattr(x, "kind", None) in ("r32", "r64") else x for x in ops)


# ---- addr32 with an absolute address ---------------------------------------------------------------------------------

# mov between the accumulator and an absolute address with addr32, by (register, the memory operand's place): the moffs form
_MOFFS32 = {("al", 1): "MOV_AL_MOFFS8", ("ax", 1): "MOV_AX_MOFFS16", ("eax", 1): "MOV_EAX_MOFFS32", ("rax", 1): "MOV_RAX_MOFFS64",
            ("al", 0): "MOV_MOFFS8_AL", ("ax", 0): "MOV_MOFFS16_AX", ("eax", 0): "MOV_MOFFS32_EAX", ("rax", 0): "MOV_MOFFS64_RAX"}


def _absolute32(mnemonic: str, ops: tuple) -> tuple[tuple, str | None, bool]:
    """(``ops`` with an absolute address as a 32-bit one, its segment override taken off or None, whether the instruction
    is mov between the accumulator and that address) for ``addr32``: ``addr32 mov ecx, [0x12345678]`` is 67 8B 0C 25 78
    56 34 12 (`x86gen.memory.a32_absolute`: the disp32 zero-extended), as GNU as reads it; GNU as writes the accumulator
    ones with the moffs opcode and a 4-byte address (`_moffs32`)."""
    for i, x in enumerate(ops):
        m = x.plain if x.__class__ is SegMem else x
        if m.__class__ is not Mem or m.base is not None or m.index is not None or m.label is not None: continue
        if not -(1 << 31) <= m.disp < (1 << 32):
            raise PrefixError(f"{mnemonic} {fmt_operands(ops)}: {m.address()} is beyond a 32-bit address (addr32; GNU as"
                              " keeps its low 32 bits with a warning)")
        out = (*ops[:i], a32_absolute(m), *ops[i + 1:])
        seg = x.seg if x.__class__ is SegMem else None
        words, mn = P.split_words(mnemonic)
        r = ops[1 - i] if len(ops) == 2 else None
        moffs = canonical(mn) == "mov" and all(w == P.ADDR32 or w in P.SEGMENTS for w in words) \
            and isinstance(r, Reg) and (r.name, i) in _MOFFS32 and m.size in (0, r.size)
        return out, seg, moffs
    return ops, None, False


def _moffs32(mnemonic: str, words: list[str], seg_words: tuple, ops: tuple) -> tuple[bytes, Form]:
    """``addr32 mov al, [0x12345678]`` (`_absolute32`): the moffs form, whose address is 4 bytes with 0x67 (SDM Vol.2 MOV:
    moffs is sized by the address size), 67 A0 78 56 34 12 as GNU as and iced-x86 write it."""
    i = 0 if isinstance(ops[1], Reg) else 1
    r = ops[1 - i]
    form = get_form(_MOFFS32[r.name, i])
    plain, seg = segment(form, ops, seg_words, mnemonic)
    m = Mem(None, None, 1, plain[i].disp & 0xFFFFFFFF, 0)
    body = form.encoder(*((r, m) if i else (m, r)))[:-4]   # (the 8-byte address's low 4 bytes: the 32-bit one)
    P.check(words, form, mnemonic, ops)
    return P.layout([], form, body, seg, True), form


def unwrapped_segments(ops: tuple) -> tuple:
    """``ops`` without their segment overrides."""
    return tuple(x.plain if x.__class__ is SegMem else x for x in ops)


# ---- objdump's rex words --------------------------------------------------------------------------------------------

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

