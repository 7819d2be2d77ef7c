"""The candidates of `x86gen._choose.candidates` for the rarer requests: the ``{evex}``/``{vex}`` pseudo-prefixes,
registers 16-31 (EVEX only), the forms that the prefix words addr32/data16 ask for, movabs, the address sizes of
movdir64b/enqcmd/enqcmds (`address_size_fits`), and the errors when none is left (loaded on first use: a plain
instruction needs none of it, and its source is compiled by every process without a bytecode cache that meets one)."""
from __future__ import annotations

from ._choose import _accumulator_nop, _matches, _sized_kind, canonical
from ._table import REG_ADDRESS, a32_memory
from .encoder import EVEX_PREFIX, VEX_PREFIX
from .errors import EvexOnlyRegisterError, OperandError, PrefixError, UnknownMnemonicError, fmt_operands
from .forms import Form, forms_of
from .memory import A32Mem

# Instructions that read a 16-bit selector or word whatever the operand size (SDM Vol.2 LLDT, LTR, LMSW: "The
# operand-size attribute has no effect on this instruction"; VERR/VERW, LKGS: a 16-bit selector). Their o16 forms
# (66 0F 00 /2) are what `data16` asks for, as in GNU as (`data16 lldt ax`, `data16 ltr word ptr [rax]`).
SELECTOR_READ = ("lldt", "ltr", "verr", "verw", "lmsw", "lkgs")
# Instructions that store 16 bits to memory whatever the operand size (SDM Vol.2 SLDT, STR, SMSW: "16 bits are stored";
# MOV to and from a segment register, 8C/8E: a 16-bit memory operand). Their o16 forms are what `data16` asks for too,
# as in GNU as: `data16 sldt word ptr [rax]` (66 0F 00 00), objdump's text of SLDT_RM16 with a memory operand.
WORD_STORE = ("sldt", "str", "smsw")


def _data16_word(name: str, ops: tuple) -> bool:
    """Does `data16` ask for the o16 form of ``name`` (`SELECTOR_READ`, `WORD_STORE`, mov with a segment register)?"""
    return name in SELECTOR_READ or name in WORD_STORE or (name == "mov" and any(getattr(x, "kind", None) == "sreg" for x in ops))


def _movabs_form(f: Form) -> bool:
    """The forms GNU as writes ``movabs``: mov with a moffs operand or a 64-bit immediate."""
    return any(o.loc == "moffs" or o.imm == 64 for o in f.operands)


def address_size_fits(f: Form, ops: tuple) -> bool:
    """Do the address sizes of ``ops`` suit form ``f``? A form whose memory operand is a 32-bit address (`a32_memory`:
    ENQCMD_R32_M512) takes an `A32Mem` there and no other memory operand; any other form takes one as its 64-bit operand
    with 0x67 before its bytes (x86gen._prefixed), except those whose ModRM.reg register is an address too (`REG_ADDRESS`:
    ENQCMD_R64_M512), which 0x67 would make another form (SDM Vol.2 MOVDIR64B, ENQCMD: the address size sizes both)."""
    if a32_memory(f): return A32Mem in map(type, ops)
    return f.mnemonic not in REG_ADDRESS or A32Mem not in map(type, ops)


def special_candidates(mnemonic: str, ops: tuple, sized: str) -> tuple[list[Form], list[Form]]:
    """(the forms of the mnemonic, those that take ``ops``) for `x86gen._choose.candidates` where ``mnemonic`` has a
    pseudo-prefix (``{evex}``/``{vex}``: only EVEX/VEX forms, as GNU as and llvm-mc read it) or is movabs (mov restricted
    to moffs and imm64, GNU as, llvm-mc), ``sized`` is a prefix word, or an operand is a register 16-31 (`narrowed`)."""
    evex_only = mnemonic.startswith(EVEX_PREFIX)
    vex_only = not evex_only and mnemonic.startswith(VEX_PREFIX)
    name = mnemonic[len(EVEX_PREFIX):] if evex_only else mnemonic[len(VEX_PREFIX):] if vex_only else mnemonic
    if (evex_only or vex_only) and not name:
        raise UnknownMnemonicError(f"{mnemonic} without a mnemonic (write `{mnemonic} vaddps …`)")
    forms = forms_of(canonical(name))
    movabs = mnemonic == "movabs"
    if movabs: forms = [f for f in forms if _movabs_form(f)]
    ok = [f for f in forms if len(f.operands) == len(ops) and all(_matches(o, x, movabs) for o, x in zip(f.operands, ops))]
    ok = [f for f in ok if not _accumulator_nop(f, ops) and address_size_fits(f, ops)]   # xchg eax, eax: 87 C0, not 90 (NOP)
    return forms, narrowed(mnemonic, name, ops, ok, evex_only, vex_only, sized)


def narrowed(mnemonic: str, name: str, ops: tuple, ok: list[Form], evex_only: bool, vex_only: bool, sized: str) -> list[Form]:
    """The forms of ``ok`` that `candidates` keeps for ``mnemonic`` (``name`` without its pseudo-prefix) with ``ops``:
    only EVEX forms for ``{evex}`` and registers 16-31, only VEX ones for ``{vex}``, only those of the prefix word
    ``sized`` (or, without one, those that need none, `spelled_sized`). Raises when that leaves none of a non-empty
    ``ok`` (and, with ``sized``, when none is left at all)."""
    if evex_only:
        evex = [f for f in ok if f.encoding_kind == "evex"]
        if ok and not evex:
            raise OperandError(f"{EVEX_PREFIX} {name} {fmt_operands(ops)}: x86gen has no EVEX form of {name} that takes these operands")
        ok = evex
    if vex_only:
        vex = [f for f in ok if f.encoding_kind == "vex"]
        if ok and not vex:
            raise OperandError(f"{VEX_PREFIX} {name} {fmt_operands(ops)}: x86gen has no VEX form of {name} that takes these operands")
        ok = vex
    if any(getattr(x, "hi16", False) for x in ops):
        # xmm16-31/ymm16-31: only EVEX forms encode bit 4 of a register number (SDM Vol.2 2.7.1)
        evex = [f for f in ok if f.encoding_kind == "evex"]
        if ok and not evex:
            high = ", ".join(str(x) for x in ops if getattr(x, "hi16", False))
            raise EvexOnlyRegisterError(f"{mnemonic} {fmt_operands(ops)}: {high} only EVEX encodes (registers 16-31, SDM Vol.2"
                                        f" 2.7.1), and x86gen has no EVEX form of {mnemonic} that takes these operands")
        ok = evex
    word16 = sized == "data16" and _data16_word(name, ops)
    if word16: ok = [f for f in ok if f.opsize16]   # data16 lldt: 66 0F 00 /2
    elif sized: ok = [f for f in ok if _sized_kind(f) == sized]
    elif ok:
        plain = [f for f in ok if not _sized_kind(f)]
        ok = plain or spelled_sized(mnemonic, ops, ok)
    if not ok and sized:
        what = ("with a 32-bit implicit address takes these operands (a memory operand gets its 0x67 from 32-bit registers:"
                " [eax])") if sized == "addr32" else "with a 16-bit operand (the o16 form, 66 0F 00 /r) takes these operands" \
            if word16 else ("is a 16-bit branch taking these operands (data16: o16 jmp/jcc/call/loop/jrcxz/"
                                                    "xbegin)" + (" with a 32-bit implicit address" if "addr32" in sized else ""))
        raise PrefixError(f"{sized} {mnemonic} {fmt_operands(ops)}: no form of {mnemonic} {what}")
    return ok


def spelled_sized(mnemonic: str, ops: tuple, ok: list[Form]) -> list[Form]:
    """The forms of ``ok`` (all of them forms that a prefix word asks for, `_sized_kind`) that the mnemonic or operands
    say themselves (jecxz, ``umonitor r32``: their syntax has no prefix word); a `PrefixError` naming the word if none."""
    plain = [f for f in ok if not f.syntax.startswith(_sized_kind(f) + " ")]   # jecxz, umonitor r32
    if not plain:
        word = _sized_kind(ok[0])
        shown = f"{mnemonic} {fmt_operands(ops)}" if ops else mnemonic
        raise PrefixError(f"{shown}: x86gen has only {', '.join(f.id for f in ok)} ({ok[0].syntax},"
                          f" {'a 32-bit implicit address' if word == 'addr32' else 'a 16-bit branch'}), another"
                          f" operation than {mnemonic} without {word}: write `{word} {mnemonic}`")
    return plain
