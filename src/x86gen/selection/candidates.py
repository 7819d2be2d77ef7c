"""Choosing a form: the forms of a mnemonic that take some operands, best first (`candidates`), and the one that
encodes them (`choose`).

Forms are chosen as GNU as chooses them: among the forms whose operand kinds match, the shortest (the row's
``length``, then file order), taking the first whose immediates fit. The operands' signatures (`x86gen.registers.Reg.sig`,
`x86gen.memory.Mem.sig`, ``"i"`` for an int) are matched against the rows' operands (`x86gen.table.takes`); what a
form's encoder does not take itself (a segment override, a 32-bit address, AVX-512 decorations) is matched by the
operand it wraps, and the decorations by what the form allows (`x86gen.encoding.decorated.why_not`).

Which forms a request may take besides its operands' kinds:
- a register class says which encodings can carry it (`x86gen.registers.Reg.encodings`: xmm16-31 and ymm16-31 are
  EVEX only, SDM Vol.2 2.7.1; APX's r16-r31, and addresses with them, REX2 (and APX EVEX) only);
- the REX2 forms (the loader's twins of the legacy forms REX2 reaches, codegen/spec.py `rex2_forms`) only where an
  operand needs one (r16-r31) or ``{rex2}`` asks for it: they take r0-r15 too, but never where REX or none does;
- ``{evex}``/``{vex}`` before the mnemonic (`x86gen.selection.request.EVEX_PREFIX`) ask for that encoding, as GNU as and
  llvm-mc read them; movabs for mov's moffs and imm64 forms;
- the forms whose implicit address is 32-bit or that are 16-bit branches are chosen only with their prefix word
  (``sized``: "addr32", "data16") or their own spelling (`x86gen.table.sized_kind`);
- AVX-VNNI, AVX-IFMA and AVX-NE-CONVERT's VEX forms only with ``{vex}`` (`VEX_ON_REQUEST`).
"""
from __future__ import annotations

from ..errors import EvexOnlyRegisterError, OperandError, PrefixError, UnknownMnemonicError, fmt_operands
from ..forms import encoder_of
from ..memory import A32Mem, Bcst, Mem, SegMem
from ..registers import Masked, Reg
from ..table import address_size_fits, mnemonics, rows_of, sized_kind, syntax, takes
from .request import EVEX_PREFIX, REX2_PREFIX, VEX_PREFIX, canonical, xchg_choice

# The CPUID features of VEX forms that re-encode AVX-512 instructions: AVX-VNNI, AVX-IFMA and AVX-NE-CONVERT came
# after AVX512_VNNI, AVX512_IFMA and AVX512_BF16, and GNU as and llvm-mc write their mnemonics with EVEX unless told
# `{vex}` (`vpdpbusd xmm1, xmm2, xmm3` is 62 F2 6D 08 50 CB; `{vex} vpdpbusd …` C4 E2 69 50 CB). Such a VEX form is left
# out where an EVEX form takes the operands, so code assembled by x86gen runs where theirs does.
VEX_ON_REQUEST = frozenset(("AVX_VNNI", "AVX_IFMA", "AVX_NE_CONVERT"))

# Instructions that read a 16-bit selector or word whatever the operand size (SDM Vol.2 LLDT, LTR, LMSW: "The
# operand-size attribute has no effect on this instruction"; VERR/VERW, LKGS: a 16-bit selector). Their o16 forms
# (66 0F 00 /2) are what `data16` asks for, as in GNU as (`data16 lldt ax`, `data16 ltr word ptr [rax]`).
SELECTOR_READ = ("lldt", "ltr", "verr", "verw", "lmsw", "lkgs")
# Instructions that store 16 bits to memory whatever the operand size (SDM Vol.2 SLDT, STR, SMSW: "16 bits are stored";
# MOV to and from a segment register, 8C/8E: a 16-bit memory operand). Their o16 forms are what `data16` asks for too,
# as in GNU as: `data16 sldt word ptr [rax]` (66 0F 00 00), objdump's text of SLDT_RM16 with a memory operand.
WORD_STORE = ("sldt", "str", "smsw")


def plain_sig(x) -> str | None:
    """The signature a form's operand is matched against: a segment override's, a 32-bit address's and a masked
    operand's plain operand's (a broadcast is matched by `_kinds`); None for a value that is no operand."""
    if x.__class__ is int: return "i"
    while x.__class__ is SegMem or x.__class__ is A32Mem or x.__class__ is Masked: x = x.op if x.__class__ is Masked else x.plain
    s = getattr(x, "sig", None)
    return s if s.__class__ is str else None


_TAKES: dict[tuple, tuple] = {}   # (id of an operand row, signature) -> (the row, takes()): a few hundred rows


def _kinds(rows: tuple, ops: tuple, movabs: bool = False) -> list:
    """The forms of ``rows`` that take operands of the kinds of ``ops`` (immediate ranges, decorations and address
    sizes aside)."""
    n = len(ops)
    sigs = []
    for x in ops:   # a broadcast source ("*") goes where the form has its memory operand
        s = "*" if x.__class__ is Bcst else plain_sig(x)
        if s is None: return []
        sigs.append(s)
    memo = _TAKES
    out = []
    for row in rows:
        if len(row.operands) != n: continue
        for o, s in zip(row.operands, sigs):
            if s == "*":
                if o.loc != "rm" or o.mem is None: break
                continue
            if movabs: ok = takes(o, s, True)
            else:
                k = (id(o), s)
                hit = memo.get(k)
                if hit is not None and hit[0] is o: ok = hit[1]
                else: ok = takes(o, s); memo[k] = (o, ok)   # (the row kept: its id names no other)
            if not ok: break
        else: out.append(row)
    return out


def accumulator_nop(row, ops: tuple) -> bool:
    """Form ``row`` is xchg's 90+r and ``ops`` give it the accumulator itself, which it refuses (90 is NOP)."""
    return row.opcode == 0x90 and row.opcode_map == 0 and any(o.loc == "opc" and isinstance(x, Reg) and x.num == 0
                                                              for o, x in zip(row.operands, ops))


def _movabs_form(row) -> bool:
    """The forms GNU as writes ``movabs``: mov with a moffs operand or a 64-bit immediate."""
    return any(o.loc == "moffs" or o.imm == 64 for o in row.operands)


def _data16_word(name: str, ops: tuple) -> bool:
    """Does `data16` ask for the o16 form of ``name`` (`SELECTOR_READ`, `WORD_STORE`, mov with a segment register)?"""
    return name in SELECTOR_READ or name in WORD_STORE or (name == "mov" and any(getattr(x, "kind", None) == "sreg" for x in ops))


def _spelled_sized(mnemonic: str, ops: tuple, ok: list) -> list:
    """The forms of ``ok`` (all of them forms that a prefix word asks for, `sized_kind`) that the mnemonic or operands
    say themselves (jecxz, ``umonitor r32``: their syntax has no prefix word); a `PrefixError` naming the word if none."""
    plain = [r for r in ok if not syntax(r).startswith(sized_kind(r) + " ")]   # jecxz, umonitor r32
    if not plain:
        word = sized_kind(ok[0])
        shown = f"{mnemonic} {fmt_operands(ops)}" if ops else mnemonic
        raise PrefixError(f"{shown}: x86gen has only {', '.join(r.id for r in ok)} ({syntax(ok[0])},"
                          f" {'a 32-bit implicit address' if word == 'addr32' else 'a 16-bit branch'}), another"
                          f" operation than {mnemonic} without {word}: write `{word} {mnemonic}`")
    return plain


def _limited(ops: tuple) -> list:
    """The registers of ``ops`` that only some encodings can carry (`x86gen.registers.Reg.encodings`)."""
    out = []
    for x in ops:
        if x.__class__ is Masked: x = x.op
        if x.__class__ is SegMem: x = x.plain   # (fs:[r16]: its address)
        if getattr(x, "encodings", None) is not None: out.append(x)
    return out


_CANDIDATES: dict[tuple, tuple[tuple, bool]] = {}   # (mnemonic, sized, rounding kind, *signature) -> candidates()


def candidates(mnemonic: str, sig: tuple, ops: tuple, sized: str = "", rc=None) -> tuple[tuple, bool]:
    """The rows of the forms of ``mnemonic`` that take operands like ``ops`` (of signature ``sig``; rounding ``rc``),
    best first; and whether any has an immediate (or branch target) whose fit must be checked. ``sized``: the prefix
    words that ask for a form with a 32-bit implicit address or a 16-bit branch ("addr32", "data16", "data16 addr32").
    Raises the error that says why none does. Results are kept per signature (the number of signatures is bounded by
    the spec: only those some form takes are kept)."""
    if rc is not None:
        from ..encoding.decorated import check_rc
        check_rc(rc, lambda: f"{mnemonic} {fmt_operands(ops)}")
    key = (mnemonic, sized, None if rc is None else rc == 4, *sig)   # (static rounding or SAE: what a form allows)
    hit = _CANDIDATES.get(key)
    if hit is not None: return hit
    res = _candidates(mnemonic, ops, sized, rc)
    _CANDIDATES[key] = res
    return res


def _candidates(mnemonic: str, ops: tuple, sized: str, rc) -> tuple[tuple, bool]:
    if mnemonic.__class__ is not str: raise UnknownMnemonicError("a mnemonic is a string")
    evex_only = mnemonic.startswith(EVEX_PREFIX)
    vex_only = not evex_only and mnemonic.startswith(VEX_PREFIX)
    rex2_only = mnemonic.startswith(REX2_PREFIX)
    name = mnemonic[len(EVEX_PREFIX):] if evex_only else mnemonic[len(VEX_PREFIX):] if vex_only else \
        mnemonic[len(REX2_PREFIX):] if rex2_only else mnemonic
    if (evex_only or vex_only or rex2_only) and not name:
        raise UnknownMnemonicError(f"{mnemonic} without a mnemonic (write `{mnemonic} vaddps …`)")
    rows = rows_of(canonical(name))
    if rows is None:
        from ..diagnostics import unknown_mnemonic_error
        raise unknown_mnemonic_error(name, mnemonics())
    decorated = rc is not None or any(x.__class__ is Masked or x.__class__ is Bcst for x in ops)
    movabs = mnemonic == "movabs"
    if movabs: rows = tuple(r for r in rows if _movabs_form(r))
    shaped = _kinds(rows, ops, movabs)
    def where() -> str: return f"{name} {fmt_operands(ops)}"   # (for errors only)
    if decorated:   # AVX-512 decorations: the EVEX forms that allow them (SDM Vol.2 2.7)
        from ..diagnostics import decoration_error, no_form_error
        from ..encoding.decorated import check_rc, rc_text, why_not
        check_rc(rc, where)
        if vex_only:
            from ..diagnostics import cannot_honour, evex_needs
            raise cannot_honour(VEX_PREFIX, f"{VEX_PREFIX} {where()}{rc_text(rc)}", f"{evex_needs(ops, rc)}, and {VEX_PREFIX} asks"
                                " for a VEX form: masking, broadcast and rounding are EVEX only")
        if not shaped: raise no_form_error(name, ops, rows)
        ok = [r for r in shaped if why_not(r, ops, rc) is None]
        if not ok:
            evex = [r for r in shaped if r.encoding_kind == "evex"]
            raise decoration_error(f"{where()}{rc_text(rc)}", why_not((evex or shaped)[0], ops, rc), shaped)
    else:
        ok = [r for r in shaped if not accumulator_nop(r, ops)]   # xchg eax, eax: 87 C0, not 90 (NOP)
        fitting = [r for r in ok if address_size_fits(r, ops)]
        address_size = bool(ok) and not fitting
        ok = fitting
        if evex_only:
            evex = [r for r in ok if r.encoding_kind == "evex"]
            if ok and not evex:
                from ..diagnostics import cannot_honour
                has = any(r.encoding_kind == "evex" for r in rows)
                raise cannot_honour(EVEX_PREFIX, f"{EVEX_PREFIX} {where()}", f"x86gen has no EVEX form of {name} that takes"
                                    " these operands" if has else f"{name} has no EVEX form (it is {ok[0].encoding_kind}-encoded)",
                                    OperandError)   # (of the operands: the class select_form's error has)
            ok = evex
        if vex_only:
            vex = [r for r in ok if r.encoding_kind == "vex"]
            if ok and not vex:
                from ..diagnostics import cannot_honour
                has = any(r.encoding_kind == "vex" for r in rows)
                limited = [x for x in _limited(ops) if "vex" not in x.encodings]
                raise cannot_honour(VEX_PREFIX, f"{VEX_PREFIX} {where()}", f"only EVEX encodes {', '.join(map(str, limited))}"
                                    " (zmm, xmm16-31, ymm16-31: SDM Vol.2 2.7.1)" if limited and has else "x86gen has no VEX form of"
                                    f" {name} that takes these operands" if has else f"{name} has no VEX form", OperandError)
            ok = vex
        limited = _limited(ops)
        egprs = [x for x in limited if "rex2" in x.encodings]
        if rex2_only:
            rex2 = [r for r in ok if r.encoding_kind == "rex2"]
            if ok and not rex2:
                from ..diagnostics import cannot_honour
                raise cannot_honour(REX2_PREFIX, f"{REX2_PREFIX} {where()}", f"x86gen has no REX2 form of {name} that takes these"
                                    " operands (REX2 reaches legacy maps 0 and 1 only, not rows 4, 7, A, E of map 0 nor 3 and 8"
                                    " of map 1: Intel APX Architecture Specification, 3.1.2.1)", OperandError)
            ok = rex2
        elif not egprs: ok = [r for r in ok if r.encoding_kind != "rex2"]   # REX2 only where r16-r31 need it
        if limited:   # xmm16-31/ymm16-31: only EVEX forms encode bit 4 of a register number (SDM Vol.2 2.7.1); r16-r31: REX2
            carried = [r for r in ok if all(r.encoding_kind in x.encodings for x in limited)]
            if ok and not carried and egprs:
                from ..diagnostics import egpr_error
                raise egpr_error(where(), egprs, ok)
            if ok and not carried:
                regs = ", ".join(str(x) for x in limited)
                if vex_only:
                    from ..diagnostics import cannot_honour
                    raise cannot_honour(VEX_PREFIX, f"{VEX_PREFIX} {where()}", f"only EVEX encodes {regs} (zmm, xmm16-31,"
                                        " ymm16-31: SDM Vol.2 2.7.1)", EvexOnlyRegisterError)
                raise EvexOnlyRegisterError(f"{mnemonic} {fmt_operands(ops)}: {regs} only EVEX encodes (registers 16-31, SDM"
                                            f" Vol.2 2.7.1), and x86gen has no EVEX form of {mnemonic} that takes these operands")
            ok = carried
        word16 = sized == "data16" and _data16_word(name, ops)
        if word16: ok = [r for r in ok if r.opsize16]   # data16 lldt: 66 0F 00 /2
        elif sized: ok = [r for r in ok if sized_kind(r) == sized]
        elif ok:
            plain = [r for r in ok if not sized_kind(r)]
            ok = plain or _spelled_sized(mnemonic, ops, ok)
        if not ok and sized:
            if sized == "addr32":
                what = ("with a 32-bit implicit address takes these operands (a memory operand gets its 0x67 from 32-bit"
                        " registers: [eax])")
            elif word16:   # its o16 forms (of mov: those with a segment register), with their encodings
                o16 = [r for r in rows if r.opsize16 and (name != "mov" or any(o.kind == "sreg" for o in r.operands))]
                what = ("with a 16-bit operand (o16, 66) takes these operands; its o16 forms: "
                        + "; ".join(f"{r.id} ({r.encoding}: {syntax(r)})" for r in o16))
            else:
                what = ("is a 16-bit branch taking these operands (data16: o16 jmp/jcc/call/ret/loop/jrcxz/xbegin)"
                        + (" with a 32-bit implicit address" if "addr32" in sized else ""))
            raise PrefixError(f"{sized} {mnemonic} {fmt_operands(ops)}: no form of {mnemonic} {what}")
        if not vex_only and any(r.cpuid in VEX_ON_REQUEST for r in ok):   # vpdpbusd: EVEX unless `{vex}`, as GNU as and llvm-mc
            evex = [r for r in ok if r.cpuid not in VEX_ON_REQUEST]
            if any(r.encoding_kind == "evex" for r in evex): ok = evex
        if not ok:
            from ..diagnostics import far_address_error, no_form_error
            raise far_address_error(mnemonic, ops) or no_form_error(mnemonic, ops, rows, address_size)
    for i, x in enumerate(ops):
        inner = x.op if x.__class__ is Masked else x
        while inner.__class__ is SegMem or inner.__class__ is A32Mem: inner = inner.plain
        if isinstance(inner, Mem) and inner.__class__ is not Bcst and not inner.size:
            # an unsized `call [rax]` / `jmp [rax]` is the near indirect branch (FF /2, FF /4: r/m64), as GNU as reads it;
            # a far pointer in memory (m16:16/m16:32/m16:64, FF /3, FF /5) is taken by its size (`call fword ptr [rax]`)
            # where another form takes the operand too (lfs/lgs/lss have far pointers only: their register gives the size)
            near = [r for r in ok if ":" not in r.operands[i].kind]
            if near and len(near) < len(ok): ok = near
            sizes = {r.operands[i].mem for r in ok if r.operands[i].mem}
            if len(sizes) > 1:
                from ..diagnostics import unsized_error
                raise unsized_error(name if decorated else mnemonic, ops, i, sizes)
    ok.sort(key=lambda r: r.length)   # stable: file order among equals
    return tuple(ok), any(r.imm_widths or any(o.kind == "1" for o in r.operands) for r in ok)


# ---- equally long VEX forms --------------------------------------------------------------------------------------

def rm_index(row) -> int | None:
    """The index of the form's ModRM.rm operand, or None."""
    return next((i for i, o in enumerate(row.operands) if o.loc == "rm"), None)


def vex_alternatives(rows: tuple) -> tuple:
    """Equally long VEX forms taking the same operands differ only in which register goes to ModRM.rm
    (``vmovups xmm0, xmm8``: 10 /r or 11 /r). A 2-byte VEX prefix cannot extend ModRM.rm, so the
    bytes are shorter for the form that leaves r8-r15 out of rm; GNU as and llvm-mc swap likewise."""
    if not rows or rows[0].encoding_kind != "vex": return ()
    return tuple(r for r in rows if r.length == rows[0].length)


def by_rm_register(alts: tuple, sig: tuple) -> bool:
    """Can the VEX alternatives be told apart by the register in ModRM.rm? True when all may take the
    2-byte prefix (map 0F, not W1) and each puts a different register operand in rm: the 2-byte prefix
    is then possible exactly when that register is below r8 (it has no B̄ bit)."""
    rms = [rm_index(r) for r in alts]
    return (all(r.encoding_kind == "vex" and r.opcode_map == 1 and r.w != 1 for r in alts) and None not in rms
            and len(set(rms)) == len(rms) and all(sig[i][0] != "m" for i in rms))


def shortest_of(rows: tuple):
    """One function encoding with each of ``rows``' forms and returning the shortest bytes (the first of equals)."""
    encs = tuple(encoder_of(r)[0] for r in rows)

    def enc(*ops):
        best = encs[0](*ops)
        if best[0] == 0xC5: return best   # already the 2-byte VEX prefix
        for e in encs[1:]:
            b = e(*ops)
            if len(b) < len(best): best = b
        return best
    return enc


# ---- the form that encodes some operands --------------------------------------------------------------------------

def unwrapped(ops: tuple) -> tuple:
    """``ops`` as the forms' `fits` takes them: a segment override's or 32-bit address's plain operand, a masked
    operand's operand, a broadcast's unsized address."""
    out = []
    for x in ops:
        if x.__class__ is Masked: x = x.op
        elif x.__class__ is Bcst: x = x.unsized
        while x.__class__ is SegMem or x.__class__ is A32Mem: x = x.plain
        out.append(x)
    return tuple(out)


def fits(row, ops: tuple, ip: int = 0) -> bool:
    """Do the immediates (or branch target, with the instruction at ``ip``) of plain operands ``ops`` fit form ``row``?"""
    f = encoder_of(row)[1]
    if f is None: return True
    return f(*ops, ip=ip) if any(o.kind[:3] == "rel" for o in row.operands) else f(*ops)


def choose(mnemonic: str, sig: tuple, ops: tuple, ip: int = 0, rc=None, sized: str = ""):
    """The row of the form that encodes ``ops`` (signature ``sig``): the first of `candidates` whose immediates fit
    (`x86gen.ImmediateRangeError` if none), among equally long VEX forms the one with the shorter bytes; for xchg, the
    form GNU as writes (`x86gen.selection.request.xchg_choice`, whose operands the caller takes)."""
    if len(ops) == 2 and not sized and rc is None and canonical(mnemonic) == "xchg":
        xchg = xchg_choice(mnemonic, ops)
        if xchg is not None: return xchg[0].row
    rows, check = candidates(mnemonic, sig, ops, sized, rc)
    plain = unwrapped(ops)
    if not check:
        alts = vex_alternatives(rows)
        if len(alts) < 2: return rows[0]
        return min(alts, key=lambda r: len(encoder_of(r)[0](*plain)))   # (first among equals)
    for r in rows:
        if fits(r, plain, ip): return r
    from ..diagnostics import range_error
    raise range_error(mnemonic, ops, rows)
