"""GNU as's pseudo-prefixes that choose among encodings of one instruction (`x86gen.prefixes.CHOOSING`): what each asks
for, whether a form honours it, and the error that says why not. `x86gen.selection.prefixed` uses them where such a
word is written (``{disp32} mov eax, [rax]``, ``encode("{load} mov", eax, ecx)``); nothing else comes here.

- ``{disp8}`` / ``{disp32}``: the memory operand's displacement in a disp8 / disp32 field (SDM Vol.2 Table 2-2: mod 01 /
  mod 10), even where a shorter one would do (``{disp32} mov eax, [rax]``: 8B 80 00 00 00 00; ``{disp8} mov eax,
  [rax]``: 8B 40 00); on a branch, its rel8 / rel32 form (``{disp32} jmp L``: E9 rel32). In an EVEX form a disp8 is
  scaled by N (2.7.5): ``{disp8}`` needs a multiple of N, ``{disp32}`` keeps the displacement unscaled.
- ``{load}`` / ``{store}``: the form whose destination (operand 1) is in ModRM.reg / ModRM.rm, where an instruction
  has both (``{load} mov eax, ecx``: 8B C1, ``{store}``: 89 C8; movaps 0F 28 / 0F 29, pextrw 0F C5 / 0F 3A 15 …); test
  and xchg, whose operands may be swapped, put the first register there (``{load} test ecx, edx``: 85 CA).
- ``{vex2}``: a VEX form with the 2-byte prefix C5 (the VEX forms only, as ``{vex}``); the 2-byte prefix has no X̄, B̄,
  map or W field (SDM Vol.2 2.3.5.6), so an instruction that needs one of them cannot have it.

GNU as 2.40 takes all of them as preferences and drops, without a word, those it cannot honour (``{disp8}`` with a
displacement beyond a disp8, ``{disp32}`` without a memory operand, ``{store} imul eax, ecx``, ``{vex2}`` where C4 is
needed: its C4); x86gen raises a `PrefixError` saying which word cannot be honoured and why. Two words of one kind
(``{load} {store}``; GNU as takes the last) are an error too.
"""
from __future__ import annotations

from ..diagnostics import cannot_honour
from ..errors import PrefixError, fmt_operands
from ..memory import Bcst, Mem, with_disp_size
from ..registers import Masked, Reg

# the kind of each choosing word: two of one kind contradict each other
KIND = {"{disp8}": "disp", "{disp32}": "disp", "{disp16}": "disp", "{load}": "direction", "{store}": "direction",
        "{vex2}": "vex2"}
# An EVEX form's disp8 scale for `{disp32}`: larger than any disp32, so no nonzero displacement is a multiple of it and
# `x86gen.memory.Mem.disp8n` keeps the disp32 (0, with `with_disp_size`'s disp32, stays one too)
UNSCALED = 1 << 40
COMMUTING = ("test", "xchg")   # the operands of their register forms may be swapped (GNU as swaps them for {load}/{store})


def cannot(word: str, insn: str, why: str) -> PrefixError:
    """The error for pseudo-prefix ``word`` that instruction ``insn`` cannot honour, ``why``."""
    return cannot_honour(word, insn, why)


def split(words: list[str], insn: str) -> tuple[dict[str, str], list[str]]:
    """(kind -> choosing word, the other words) of prefix ``words``; two words of one kind or ``{disp16}`` raise."""
    picks: dict[str, str] = {}
    rest = []
    for w in words:
        k = KIND.get(w)
        if k is None: rest.append(w); continue
        if w == "{disp16}":
            raise cannot(w, insn, "64-bit mode has no 16-bit addressing, so no disp16 (GNU as: invalid `{disp16}' prefix)")
        if k in picks and picks[k] != w:
            raise PrefixError(f"{insn}: {picks[k]} and {w} ask for different encodings (x86gen honours both or refuses)")
        picks[k] = w
    if "vex2" in picks:
        other = next((w for w in rest if w in ("{vex3}", "{evex}")), None)
        if other is not None: raise PrefixError(f"{insn}: {{vex2}} and {other} ask for different encodings")
    return picks, rest


def insn_text(mnemonic: str, ops: tuple) -> str:
    return f"{mnemonic} {fmt_operands(ops)}" if ops else mnemonic


# ---- {load} / {store} -----------------------------------------------------------------------------------------------

def direction_of(row) -> str | None:
    """"load" if form ``row`` has its first operand in ModRM.reg and another in ModRM.rm, "store" if the first is in
    ModRM.rm and another in ModRM.reg; None otherwise (no such pair: ``add eax, 1``, ``nop``)."""
    locs = [o.loc for o in row.operands]
    if len(locs) < 2: return None
    if locs[0] == "reg" and "rm" in locs[1:]: return "load"
    if locs[0] == "rm" and "reg" in locs[1:]: return "store"
    return None


def commuting(mn: str, ops: tuple) -> bool:
    """test/xchg of two registers, whose operands may be swapped."""
    return mn in COMMUTING and len(ops) == 2 and all(isinstance(x, Reg) for x in ops)


def direction_error(word: str, insn: str, rows: tuple) -> PrefixError:
    """``word`` ({load}/{store}) on an instruction none of whose forms ``rows`` has that direction."""
    want = "load" if word == "{load}" else "store"
    other = {direction_of(r) for r in rows} - {None}
    if not other:
        why = ("it chooses between the forms with the destination in ModRM.reg (load) and in ModRM.rm (store), and no form"
               " that takes these operands has a register and a ModRM.rm operand")
    else:
        why = (f"no form that takes these operands has its destination in ModRM.{'reg' if want == 'load' else 'rm'}"
               f" ({', '.join(r.id for r in rows if direction_of(r))}: the {other.pop()} form only)")
    return cannot(word, insn, why)


# ---- {disp8} / {disp32} ---------------------------------------------------------------------------------------------

def rel_width(row) -> int | None:
    """The width of form ``row``'s branch displacement (rel8 / rel16 / rel32), or None if it is no relative branch."""
    for o in row.operands:
        if o.kind[:3] == "rel": return int(o.kind[3:])
    return None


def reach_error(word: str, insn: str) -> PrefixError:
    """``{disp8}`` on a branch whose target is beyond a rel8."""
    return cannot(word, insn, "the target is out of a rel8's reach (-128..127 bytes from the end of the instruction;"
                              " GNU as writes a rel32)")


def rel_error(word: str, insn: str, rows) -> PrefixError:
    have = sorted({w for w in map(rel_width, rows) if w})
    return cannot(word, insn, f"the branch has no rel{word[5:-1]} form (its forms: {', '.join(f'rel{w}' for w in have)})")


def force_disp(form, ops: tuple, word: str, insn: str) -> tuple[tuple, tuple, int | None]:
    """(``ops`` with the memory operand's displacement in the field ``word`` asks for, its segment override as a word
    (the forced operand is passed without it), the EVEX disp8 scale to pass as ``n=`` or None) for form ``form``."""
    bits = 8 if word == "{disp8}" else 32
    out, seg = list(ops), ()
    at = [i for i, x in enumerate(ops) if isinstance(x.op if x.__class__ is Masked else x, Mem)]
    if not at:
        raise cannot(word, insn, f"it sets the size of a memory operand's displacement, and {form.mnemonic} {fmt_operands(ops)}"
                                 " has no memory operand (GNU as drops the word)")
    evex = form.encoding_kind == "evex"
    for i in at:
        x = ops[i]
        m = x.op if x.__class__ is Masked else x
        if form.operands[i].loc == "moffs":
            raise cannot(word, insn, f"{form.id} takes the address {m.address()} as a 64-bit moffs field, not as a ModRM"
                                     " displacement (write mov without movabs for [disp32])")
        if form.operands[i].loc != "rm":
            raise cannot(word, insn, f"operand {i + 1} ({m}) is implicit in {form.id}: it has no displacement")
        if m.far:
            raise cannot(word, insn, f"{m.address()} is a 64-bit address (the moffs form {form.id}), which has no ModRM"
                                     " displacement")
        n = (form.disp8_n_bcst if m.__class__ is Bcst else form.disp8_n) if evex else 0
        seg_name = getattr(m, "seg", None)
        if seg_name is not None: m, seg = m.plain, (seg_name,)
        forced = with_disp_size(m, bits, n)
        if forced is None:
            if m.base is None or m.base.name in ("rip", "eip"):
                why = (f"{m.address()} has no base register, so only a disp32 (SDM Vol.2 Table 2-2: RIP-relative and"
                       " no-base addresses have no disp8 form)")
            elif n:
                why = (f"displacement {m.disp:#x} is no disp8 in {form.id}, whose disp8 is scaled by N = {n} (SDM Vol.2"
                       f" 2.7.5): a multiple of {n} in {-128 * n:#x}..{127 * n:#x}")
            else: why = f"displacement {m.disp:#x} does not fit in a disp8 (-0x80..0x7f)"
            raise cannot(word, insn, why + " (GNU as writes a disp32)")
        if evex and bits == 32 and form.evex_mask_required and m.disp and not m.disp % n and -128 <= m.disp // n <= 127:
            # a gather/scatter's encoder scales its disp8 by its own N and takes no n= (x86gen.encoding.evex)
            raise cannot(word, insn, f"x86gen writes {form.id}'s displacement {m.disp:#x} as its disp8*N (N = {n}) and"
                                     " cannot keep it a disp32")
        out[i] = Masked(forced, x.mask, x.zero) if x.__class__ is Masked else forced
    return tuple(out), seg, (UNSCALED if evex and bits == 32 and not form.evex_mask_required else None)


# ---- {vex2} ---------------------------------------------------------------------------------------------------------

_BEFORE_VEX = frozenset((0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65, 0x67))   # a segment override, 0x67


def check_vex2(body: bytes, form, insn: str) -> None:
    """Raise unless ``body`` (form ``form``'s bytes) has the 2-byte VEX prefix C5; the message names the field of the
    3-byte one (C4 RXB mmmmm, W vvvv L pp) that C5 lacks (SDM Vol.2 2.3.5.6)."""
    if form.encoding_kind != "vex":
        raise cannot("{vex2}", insn, f"{form.id} is {form.encoding_kind}-encoded, not VEX")
    i = 0
    while i < len(body) and body[i] in _BEFORE_VEX: i += 1
    if body[i] == 0xC5: return
    b1, b2 = body[i + 1], body[i + 2]
    need = []
    if not b1 & 0x40: need.append("VEX.X (an index register r8-r15)")
    if not b1 & 0x20: need.append("VEX.B (r8-r15 or xmm8-15 in ModRM.rm or as the base)")
    if b1 & 0x1F != 1: need.append(f"the opcode map {({2: '0F38', 3: '0F3A'}).get(b1 & 0x1F, b1 & 0x1F)}")
    if b2 & 0x80: need.append("VEX.W1")
    raise cannot("{vex2}", insn, f"{form.id} needs the 3-byte VEX prefix C4 here for {' and '.join(need)}, which the"
                                 " 2-byte prefix C5 does not have (SDM Vol.2 2.3.5.6; GNU as writes C4)")
