"""Instruction prefixes: which forms take which, their bytes and their order.

The legacy prefixes (SDM Vol.2 2.1.1) x86gen writes, as words of the mnemonic (``encode("lock add", …)``,
``lock add dword ptr [rax], 1`` in text):

- ``lock`` (F0): only on the forms iced-x86 and the SDM make lockable (ADD/ADC/AND/BTC/BTR/BTS/CMPXCHG/
  CMPXCHG8B/CMPXCHG16B/DEC/INC/NEG/NOT/OR/SBB/SUB/XOR/XADD with a memory destination; SDM Vol.2 LOCK:
  #UD otherwise);
- ``xacquire`` (F2) / ``xrelease`` (F3), the HLE hints (SDM Vol.1 16.3.3): on a ``lock``-prefixed lockable
  form, and ``xrelease`` on ``mov`` to memory (SDM Vol.2 XACQUIRE/XRELEASE);
- ``rep``/``repe``/``repz`` (F3), ``repne``/``repnz`` (F2): on the forms that list them; also ``rep ret``
  (F3 C3, the AMD branch-predictor idiom GNU as accepts and iced-x86 encodes);
- ``bnd`` (F2, MPX; SDM Vol.1 17.5.3): on near call/jmp/ret and jcc rel32/rel8 (jmp rel8 too, as GNU as relaxes it);
- ``notrack`` (3E, CET; SDM Vol.1 18.3.8): on the indirect ``call``/``jmp r/m64``;
- a segment override (26 es, 2E cs, 36 ss, 3E ds, 64 fs, 65 gs; SDM Vol.2 2.1.1 group 2) is a property of
  the memory operand: ``mem(rax, disp=0x28, size=64, seg="fs")`` or ``Mem.with_segment``; in text ``fs:[0x28]``,
  ``qword ptr fs:0x28``, or the prefix word objdump prints (``ss mov eax, dword ptr [rax]``). An override
  that names the operand's default segment (SS with an rbp/rsp base, DS otherwise; SDM Vol.1 3.7.4) is left
  out, as GNU as leaves it out;
- the address-size prefix 67 (SDM Vol.2 2.1.1 group 4, 3.6) is a property of the memory operand too: a 32-bit address,
  ``mem("ecx", "edx", 2)``, ``[ecx+edx*2]`` or ``[eip+0x10]`` in text (`x86gen.memory.A32Mem`);
- ``addr32`` chooses the form whose implicit address is 32-bit (``addr32 monitor``: 67 0F 01 C8, ``addr32 loop``:
  the count in ecx); such forms are never chosen without it (or their own spelling: ``jecxz``, ``umonitor eax``); it
  makes an absolute address 32-bit (``addr32 mov ecx, [0x12345678]``: 67 8B 0C 25 …; with the accumulator the moffs form
  with a 4-byte address, 67 A0 78 56 34 12, as GNU as) and a string instruction's implicit ones (``addr32 movsb``: 67 A4);
  ``data16`` likewise chooses a 16-bit branch (``data16 xbegin``: 66 C7 F8 cw; ``data16 jmp``/``je``/``call``/``loop``/
  ``jrcxz``: JMP_REL16, JE_REL8_16 …, whose target is a 16-bit IP, 0..0xffff; ``data16 addr32 loop`` both);
- ``{vex3}``: GNU as's pseudo-prefix for the 3-byte VEX form (C4) where the 2-byte one (C5) would do;
- GNU as's pseudo-prefixes that choose among encodings of the same instruction (`CHOOSING`;
  `x86gen.selection.pseudo`): ``{disp8}``/``{disp32}`` (the size of the memory operand's displacement, or of a
  branch's rel), ``{load}``/``{store}`` (the form with the destination in ModRM.reg / ModRM.rm: ``{load} mov eax,
  ecx`` is 8B C1, ``{store}`` 89 C8), ``{vex2}`` (the 2-byte VEX prefix C5). GNU as takes them as preferences and
  drops those it cannot honour without a word; x86gen raises a `PrefixError` saying why instead. ``{disp16}``
  (16-bit addressing) is invalid in 64-bit mode, as in GNU as;
- ``rex``, ``rex.W`` … ``rex.WRXB`` (`REX_WORDS`), objdump's words for a REX byte whose bits its text does not show
  (``rex.W pinsrw xmm0,eax,0``): the REX.W form whose REX byte holds the word's bits (`x86gen._prefixed.encode_rex`);
  x86gen adds no bit the operands and form do not ask for, so ``rex.B nop`` (GNU as: 41 90, ``xchg r8d, eax``) is a
  `PrefixError`.

Which forms take which prefix comes from the spec (isa/README.md, ``prefixes``), as the generated table
`x86gen._gen.prefixes`. Order of the bytes: as iced-x86's encoder writes them: segment, F0, 66 (operand size),
67 (address size), F2/F3, then the form's own mandatory prefix and REX/VEX. GNU as writes the same bytes, in another order
where two of F0, 66 and F2/F3 meet (66 F0 for ``lock`` on a 16-bit form, F2 F0 for ``xacquire lock``); the
CPU reads the legacy prefixes in any order (SDM Vol.2 2.1.1).
"""
from __future__ import annotations

from .errors import PrefixError, fmt_operands
from .memory import SEGMENTS, Mem

# prefix word -> (its byte, its group: at most one prefix of a group per instruction; SDM Vol.2 2.1.1)
PREFIX_BYTES: dict[str, tuple[int, str]] = {
    "lock": (0xF0, "lock"),
    "rep": (0xF3, "rep"), "repe": (0xF3, "rep"), "repz": (0xF3, "rep"),
    "repne": (0xF2, "rep"), "repnz": (0xF2, "rep"),
    "xacquire": (0xF2, "rep"), "xrelease": (0xF3, "rep"), "bnd": (0xF2, "rep"),
    "notrack": (0x3E, "segment"),
}
# the words the spec writes (isa/README.md, `prefixes`): rep stands for rep/repe/repz, repne for repne/repnz
SPEC_NAME = {"repe": "rep", "repz": "rep", "repnz": "repne"}
# GNU as's pseudo-prefixes that choose among encodings: the displacement's size, the direction, the 2-byte VEX prefix
# (`x86gen.selection.pseudo`); `{disp16}` only to say that 64-bit mode has no 16-bit addressing
CHOOSING = frozenset(("{disp8}", "{disp32}", "{disp16}", "{load}", "{store}", "{vex2}"))
PSEUDO = {"{vex3}", "{vex}", "{evex}", *CHOOSING}
# `addr32` (GNU as, objdump, iced-x86): the form with a 32-bit implicit address (0x67; `a32` in the spec: `addr32 monitor`
# is MONITORD, `addr32 loop` counts in ecx); with a 32-bit memory operand (which has its 0x67) it changes nothing
ADDR32 = "addr32"
# `data16` (GNU as, iced-x86): the 16-bit branch (o16: `data16 xbegin` is XBEGIN_REL16, objdump's xbeginw); never
# chosen without it
DATA16 = "data16"
# objdump's `rex.W`, `rex.WXB` … (and GNU as's): a REX byte, W R X B its bits (SDM Vol.2 2.2.1), written as a word where
# the instruction's text does not show all of them (`rex.W pinsrw xmm0,eax,0`: a REX.W that changes nothing). Name (lower
# case, as the text parser has it) -> the bits; `x86gen._prefixed.encode_rex` reads them.
REX_WORDS: dict[str, int] = {"rex" + ("." + "".join(c for c, b in zip("wrxb", (8, 4, 2, 1)) if n & b) if n else ""): n
                             for n in range(16)}
# every word that may stand before a mnemonic (text), segment words included (objdump's `ss mov …`)
WORDS = frozenset(PREFIX_BYTES) | frozenset(SEGMENTS) | PSEUDO | {ADDR32, DATA16} | frozenset(REX_WORDS)

_ALLOWED: dict[str, frozenset[str]] | None = None


def allowed(form_id: str) -> frozenset[str]:
    """The prefix words (spec names: lock, xacquire, xrelease, rep, repne, bnd, notrack) form ``form_id`` takes."""
    global _ALLOWED
    if _ALLOWED is None:
        from ._gen.prefixes import ALLOWED
        table: dict[str, frozenset[str]] = {}
        for words, ids in ALLOWED.items():
            s = frozenset(words.split())
            for fid in ids.split(): table[fid] = s
        _ALLOWED = table
    return _ALLOWED.get(form_id, frozenset())


def split_words(mnemonic: str) -> tuple[list[str], str]:
    """``"lock add"`` -> (["lock"], "add"); every word but the last must be a prefix word."""
    words = mnemonic.split()
    if not words: raise PrefixError("empty mnemonic")
    words[:-1] = [w.lower() for w in words[:-1]]   # (objdump's `rex.W`, `LOCK`)
    for w in words[:-1]:
        if w not in WORDS: raise PrefixError(f"{mnemonic[:80]!r}: {w[:40]!r} is not an instruction prefix "
                                             f"(prefixes: {', '.join(sorted(WORDS))})")
    return words[:-1], words[-1]


def default_segment(m) -> str:
    """The segment an address uses without an override: SS with an rbp/rsp (ebp/esp) base, DS otherwise (SDM Vol.1 3.7.4;
    r12/r13 use DS)."""
    b = getattr(m, "base", None)
    return "ss" if b is not None and b.name in ("rbp", "rsp", "ebp", "esp") else "ds"


def check(words: list[str], form, mnemonic: str, ops: tuple) -> None:
    """Raise `PrefixError` unless form ``form`` takes the prefix ``words`` with operands ``ops``."""
    insn = f"{mnemonic} {fmt_operands(ops)}" if ops else mnemonic
    seen: dict[str, str] = {}
    for w in words:
        if w in PSEUDO or w in (ADDR32, DATA16): continue
        grp = PREFIX_BYTES[w][1] if w in PREFIX_BYTES else "segment"
        if grp in seen:
            raise PrefixError(f"{insn}: prefixes {seen[grp]} and {w} are of the same group "
                              "(at most one of a group; SDM Vol.2 2.1.1)")
        seen[grp] = w
    ok = allowed(form.id)
    for w in words:
        if w in PSEUDO or w in SEGMENTS or w in (ADDR32, DATA16): continue
        name = SPEC_NAME.get(w, w)
        if name not in ok:
            raise PrefixError(f"{insn}: {form.id} ({form.syntax}) does not take the {w} prefix: "
                              + _why(w, form, ok))
        if name in ("lock", "xacquire", "xrelease"):
            if not ops or not isinstance(ops[0], Mem):
                raise PrefixError(f"{insn}: {w} needs a memory destination (SDM Vol.2 "
                                  + ("LOCK: #UD with a register destination)" if name == "lock" else
                                     "XACQUIRE/XRELEASE: the hints apply to a memory destination only)"))
            # (xchg with memory is locked anyway and takes the hints without lock: SDM Vol.2 XACQUIRE/XRELEASE)
            if name != "lock" and "lock" in ok and "lock" not in words and form.mnemonic != "xchg":
                raise PrefixError(f"{insn}: {w} needs lock on {form.mnemonic} (SDM Vol.2 "
                                  "XACQUIRE/XRELEASE: the hint applies to lock-prefixed instructions and to mov to memory)")
    if "notrack" in words and any(getattr(x, "seg", None) for x in ops):
        raise PrefixError(f"{insn}: notrack is the 3E segment prefix: no segment override with it")


def _why(w: str, form, ok: frozenset[str]) -> str:
    takes = f"it takes {', '.join(sorted(ok))}" if ok else "it takes no prefix"
    if w == "lock": return f"not a lockable instruction with a memory destination (SDM Vol.2 LOCK); {takes}"
    if w in ("xacquire", "xrelease"): return f"HLE hints go on lockable instructions and mov to memory; {takes}"
    if w in ("rep", "repe", "repz", "repne", "repnz"): return f"rep prefixes go on string instructions (and rep ret); {takes}"
    if w == "bnd": return f"bnd goes on near branches (call, ret, jmp rel32 and r/m, jcc); {takes}"
    return f"notrack goes on indirect call/jmp; {takes}"


def layout(words: list[str], form, body: bytes, segment: str | None, a32: bool = False) -> bytes:
    """The instruction's bytes: ``body`` (the form's bytes) with the prefixes in iced-x86's order: segment (or
    notrack's 3E), F0, the form's 66 (o16), 67 (``a32``: a 32-bit address, `x86gen.memory.A32Mem`, or the form's own
    0x67: `Form.addrsize32`, `addr32 rep xstore` is 67 F3 0F A7 C0 as iced-x86 and GNU as write it), F2/F3, then the
    rest of ``body`` (a mandatory prefix, REX, VEX/EVEX, opcode)."""
    # the WAIT forms (finit, fsave: 9B, then the no-wait instruction) take the prefixes after the 9B, on the instruction
    # they belong to (iced-x86 encodes fsave fs:[rax] as 9B 64 DD 30, fsave [esp] o16 as 9B 66 67 DD 34 24; before 9B
    # they would prefix WAIT)
    wait = b""
    if form.fwait and body[:1] == b"\x9b": wait, body = body[:1], body[1:]
    head = bytearray()
    if segment is not None: head.append(SEGMENTS[segment])
    elif "notrack" in words: head.append(0x3E)
    if "lock" in words: head.append(0xF0)
    rep = [PREFIX_BYTES[w][0] for w in words if w in PREFIX_BYTES and PREFIX_BYTES[w][1] == "rep"]
    if (rep or a32) and form.opsize16 and body[:1] == b"\x66": head.append(0x66); body = body[1:]
    if a32: head.append(0x67)
    elif rep and form.addrsize32 and body[:1] == b"\x67": head.append(0x67); body = body[1:]   # (the spec's `a32`)
    head += bytes(rep)
    if "{vex3}" in words: body = vex3(body, form)
    return wait + bytes(head) + body


def vex3(body: bytes, form) -> bytes:
    """``body`` with a 2-byte VEX prefix (C5 R̄vvvvLpp) rewritten as the 3-byte one (C4 R̄X̄B̄mmmmm W vvvv L pp) with the
    same fields: X̄ = B̄ = 1, map 0F, W0 (SDM Vol.2 2.3.5.6)."""
    if form.encoding_kind != "vex":
        raise PrefixError(f"{{vex3}} {form.mnemonic}: {form.id} is not VEX-encoded: the {{vex3}} pseudo-prefix cannot be"
                          f" honoured ({form.mnemonic} with these operands has no VEX form)")
    if body[0] == 0xC4: return body
    b1 = body[1]
    return bytes((0xC4, (b1 & 0x80) | 0x60 | 0x01, b1 & 0x7F)) + body[2:]
