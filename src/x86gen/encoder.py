"""`encode(mnemonic, *operands)`: choose the form from the operands and encode it.

Forms are chosen as GNU as chooses them: among the forms whose operand kinds match, the shortest
(`Form.length`, then file order), taking the first whose immediates fit — so ``add eax, 1`` is
``83 /0 ib``, ``add eax, 1000`` is ``05 id`` and ``jmp`` takes rel8 when the target is in reach.
The candidate list for each operand signature is computed once and cached, and so is its plan: one
function that encodes that signature (see `plan_for`).
"""
from __future__ import annotations

import functools

from ._table import A32_SPELLED, ip16_branch
from .errors import EncodeError, LabelContextError, OperandError, UnknownMnemonicError, fmt_operands, fmt_value
from .forms import Form, describe_operand, forms_of, get_form, int_operands
from .memory import A32Mem, Bcst, Mem, SegMem, VsibMem
from .registers import Reg

_CANDIDATES: dict[tuple, tuple[tuple[Form, ...], bool]] = {}
EVEX_PREFIX = "{evex}"   # a mnemonic "{evex}vaddps" encodes with an EVEX form only (the text pseudo-prefix `{evex} vaddps`)
VEX_PREFIX = "{vex}"     # and "{vex}vaddps" with a VEX form only (`{vex} vpdpbusd`, as objdump prints AVX-VNNI)
MNEMONIC_ALIASES = {
    "jz": "je", "jnz": "jne", "jc": "jb", "jnae": "jb", "jnc": "jae", "jnb": "jae", "jna": "jbe", "jnbe": "ja",
    "jnge": "jl", "jnl": "jge", "jng": "jle", "jnle": "jg", "jpe": "jp", "jpo": "jnp",
    "sal": "shl", "retq": "ret", "movabs": "mov", "movsxd": "movsxd",
    # GNU as's AT&T names of the sign extensions, which its Intel mode accepts too. An alias whose target
    # the table lacks (cdqe, cwde, cbw today) is an unknown mnemonic under its own name (`canonical`).
    "cltq": "cdqe", "cqto": "cqo", "cwtl": "cwde", "cltd": "cdq", "cwtd": "cwd", "cbtw": "cbw",
    # the REX.W / VEX.W1 string compares as GNU as and objdump spell them (iced: pcmpestri64, …)
    # GNU as's other names of the 64-bit-mode defaults (SDM PUSHF/POPF, LEAVE, ENTER: 64-bit operand size)
    "fwait": "wait", "pushfq": "pushf", "popfq": "popf", "leaveq": "leave", "enterq": "enter",
    # VIA PadLock: GNU as's and llvm-mc's other name of xstore (0F A7 C0), and objdump's spellings
    "xstorerng": "xstore", "xstore-rng": "xstore", "xcrypt-ecb": "xcryptecb", "xcrypt-cbc": "xcryptcbc",
    "xcrypt-ctr": "xcryptctr", "xcrypt-cfb": "xcryptcfb", "xcrypt-ofb": "xcryptofb",
    "xlatb": "xlat",   # (SDM Vol.2 XLAT/XLATB: the operand-less name)
    # far returns, iret and sysret as GNU as (and objdump, llvm-mc) also name them: retf/lret is the 32-bit operand size
    # (CB, GNU as's default, with a warning; objdump prints `retf`), lretw/lretq the 16/64-bit ones; `iret` is iretd for
    # GNU as and objdump (CF; llvm-mc and iced-x86 read it as the 16-bit form, which x86gen spells iretw only);
    # `sysret` is sysretd (0F 07) for llvm-mc and iced-x86 (GNU as: "ambiguous operand size")
    "retf": "retfd", "lret": "retfd", "lretw": "retfw", "lretq": "retfq", "iret": "iretd", "sysret": "sysretd",
    "pcmpestriq": "pcmpestri64", "pcmpestrmq": "pcmpestrm64", "vpcmpestriq": "vpcmpestri64", "vpcmpestrmq": "vpcmpestrm64",
    # iced-x86's Intel names of AMD's 0F 0D /0 and of the reserved hints 0F 0D /4-/7, which it decodes as the same
    # PREFETCH (AMD APM Vol.3 PREFETCH/PREFETCHW: the reserved ModRM.reg values are aliases of PREFETCH); GNU as and
    # objdump write `prefetch`, which is 0F 0D /0
    "prefetch_exclusive": "prefetch", "prefetch_reserved": "prefetch",
}
for _p in ("set", "cmov"):
    for _a, _b in {"z": "e", "nz": "ne", "c": "b", "nae": "b", "nc": "ae", "nb": "ae", "na": "be", "nbe": "a",
                   "nge": "l", "nl": "ge", "ng": "le", "nle": "g", "pe": "p", "po": "np"}.items():
        MNEMONIC_ALIASES[_p + _a] = _p + _b
# CMPccXADD: the spec's mnemonics are iced's Code names (cmpnbxadd, cmpzxadd, …); iced's formatter and the
# SDM's table also spell them with the other condition names (cmpaexadd, cmpexadd, …).
for _a, _b in {"ae": "nb", "a": "nbe", "ge": "nl", "g": "nle", "ne": "nz", "e": "z"}.items():
    MNEMONIC_ALIASES[f"cmp{_a}xadd"] = f"cmp{_b}xadd"


def canonical(mnemonic: str) -> str:
    """The table's mnemonic for ``mnemonic``: itself, or what its alias names if the table has that;
    otherwise itself, so that errors name what was written (`cltq`, not `cdqe`)."""
    ms = _mnemonic_set()
    if mnemonic in ms: return mnemonic
    target = MNEMONIC_ALIASES.get(mnemonic)
    return target if target in ms else mnemonic


# xchg of two registers as GNU as 2.40 encodes it where that is not the form the operands name (SDM Vol.2 XCHG, NOP):
# the accumulator forms 90+r take the accumulator second, and 90 with the accumulator itself is NOP's opcode
_XCHG_ACCUMULATOR = {"ax": "XCHG_R16_AX", "eax": "XCHG_R32_EAX", "rax": "XCHG_R64_RAX"}
_XCHG_SELF_NOP = {"ax": "NOPW", "rax": "NOPD"}   # xchg ax, ax / rax, rax change nothing: 66 90 / 90 (not eax: 87 C0 clears rax[63:32])
_XCHG_RM = {"r8": "XCHG_RM8_R8", "r16": "XCHG_RM16_R16", "r32": "XCHG_RM32_R32", "r64": "XCHG_RM64_R64"}   # xchg ecx, [rax]


def xchg_choice(mnemonic: str, ops: tuple) -> tuple[Form, tuple] | None:
    """``(form, its operands)`` for ``xchg`` of two registers where GNU as does not encode the form the operands
    name: ``xchg eax, ecx`` is ``xchg ecx, eax`` (91, the operands exchanged: the same instruction), ``xchg ecx, [rax]``
    is ``xchg [rax], ecx`` (87 08), ``xchg ax, ax`` is NOPW (66 90) and ``xchg rax, rax`` NOPD (90). None for every
    other instruction."""
    if len(ops) != 2 or canonical(mnemonic) != "xchg": return None
    a, b = ops
    if not isinstance(a, Reg): return None
    if isinstance(b, Mem) and b.__class__ is not VsibMem and a.kind in _XCHG_RM and b.size in (0, a.size):
        return get_form(_XCHG_RM[a.kind]), (b.with_size(a.size), a)   # xchg ecx, [rax]: the r/m form, memory first
    if not isinstance(b, Reg): return None
    if a is b and a.name in _XCHG_SELF_NOP: return get_form(_XCHG_SELF_NOP[a.name]), ()
    if a.name in _XCHG_ACCUMULATOR and b.kind == a.kind and b is not a: return get_form(_XCHG_ACCUMULATOR[a.name]), (b, a)
    return None


def _accumulator_nop(f: Form, ops: tuple) -> bool:
    """Form ``f`` is xchg's 90+r and ``ops`` give it the accumulator itself, which it refuses (90 is NOP)."""
    return f.opcode == 0x90 and f.opcode_map == 0 and any(o.loc == "opc" and isinstance(x, Reg) and x.num == 0
                                                          for o, x in zip(f.operands, ops))


def _matches(o, x, movabs: bool = False) -> bool:
    """Does operand value ``x`` have a kind form operand ``o`` accepts (ignoring immediate ranges)?

    A moffs operand (``mov eax, moffs32``) takes the memory operands whose address only it can encode (64-bit
    absolute, signature ``moffsN``), or with ``movabs`` any memory operand (its plan checks it is absolute);
    the other memory operands take every other memory operand."""
    if o.imm is not None or o.kind == "1":
        return x.__class__ is int or (o.kind.startswith("rel") and getattr(x, "sig", None) == "l")
    if isinstance(x, Reg):
        if o.loc == "fixed": return x.name == o.reg
        return x.kind == o.reg
    if isinstance(x, Mem):
        if x.__class__ is A32Mem: x = x.plain   # a 32-bit address: as its 64-bit operand (a VSIB one too)
        if o.mem is None or (o.mem and x.size not in (0, o.mem)) or x.__class__ is Bcst: return False   # Bcst: x86gen._evex
        if o.kind[:2] == "vm" or x.__class__ is VsibMem:   # a VSIB operand (vm32x …) takes a VsibMem of its index class only
            return o.kind[:2] == "vm" and x.__class__ is VsibMem and x.index.kind[0] == o.kind[-1]
        return (o.loc == "moffs") == x.far or (movabs and o.loc == "moffs")
    return False


# ---- string instructions: operands the text may leave out, and the names without a size -------------------------
#
# The string instructions (SDM Vol.2 MOVS, CMPS, SCAS, LODS, STOS, INS, OUTS), xlat and maskmovdqu/maskmovq address
# memory through fixed registers (isa/README.md: m8@rsi, m8@esrdi, m8@rbxal, m128@rdi). Their forms take those
# operands explicitly, as iced-x86's Codes do (``encode("movsb", byte(rdi), byte(rsi))``); GNU as also takes them
# without operands (``movsb``, ``rep stosq``, ``xlatb``), with some left out (iced-x86's ``lodsb byte ptr [rsi]``,
# ``maskmovdqu xmm0, xmm1``), and by the name without a size suffix, sized by the operands (``movs byte ptr [rdi],
# byte ptr [rsi]``, ``lods eax, dword ptr [rsi]``). `string_operands` turns each of those into a form's operands.
STRING_GENERIC = frozenset({"movs", "cmps", "scas", "lods", "stos", "ins", "outs"})
_SIZE_SUFFIX = {8: "b", 16: "w", 32: "d", 64: "q"}
_ACCUMULATORS = frozenset({"al", "ax", "eax", "rax"})
# the mnemonics with implicit memory operands (tests/test_strings.py checks this against the table) and their aliases
STRING_MNEMONICS = frozenset({f"{m}{s}" for m in STRING_GENERIC for s in "bwdq" if f"{m}{s}" not in ("insq", "outsq")}
                             | STRING_GENERIC | {"xlat", "xlatb", "maskmovdqu", "maskmovq", "vmaskmovdqu"})


def string_operands(mnemonic: str, ops: tuple) -> tuple[str, tuple]:
    """``(mnemonic, operands)`` of the form a string instruction (`STRING_MNEMONICS`) written ``mnemonic ops`` stands
    for: the suffixed name for a generic one (``movs`` with byte operands is ``movsb``), the implicit operands
    filled in where they were left out (``movsb`` → ``movsb byte ptr [rdi], byte ptr [rsi]``, ``lodsb byte ptr [rsi]``
    → ``lodsb al, byte ptr [rsi]``). Operands a form takes as they are stay; those no form fits are left for
    the ordinary operand error."""
    mn = mnemonic
    if mn in STRING_GENERIC:
        sizes = [x.size for x in ops if isinstance(x, Mem) and x.size]
        sizes += [x.size for x in ops if isinstance(x, Reg) and x.name in _ACCUMULATORS]
        suffix = _SIZE_SUFFIX.get(sizes[0]) if sizes else None
        if suffix is None or (mn in ("ins", "outs") and suffix == "q"):
            raise OperandError(f"{mnemonic} {fmt_operands(ops)}: the operand size is not given (write byte/word/dword"
                               f"{'' if mn in ('ins', 'outs') else '/qword'} ptr, or {mnemonic}b, {mnemonic}w, …)")
        mn += suffix
    forms = forms_of(canonical(mn))
    if any(len(f.operands) == len(ops) and all(_matches(o, x) for o, x in zip(f.operands, ops)) for f in forms):
        return mn, ops
    for f in forms:
        filled = _implied(f, ops)
        if filled is not None: return mn, filled
    return mn, ops


def _implied(f: Form, ops: tuple) -> tuple | None:
    """``ops`` with the fixed registers and implicit memory operands of form ``f`` that they leave out filled in, in
    order; None if they are not ``f``'s operands with some of those left out."""
    from ._table import IMPLICIT_MEM
    from .registers import REGISTERS
    if not any(o.loc in IMPLICIT_MEM for o in f.operands): return None
    out, k = [], 0
    given_fixed = filled_mem = False
    for o in f.operands:
        if k < len(ops) and _matches(o, ops[k]):
            out.append(ops[k]); k += 1
            given_fixed |= o.loc == "fixed"
        elif o.loc == "fixed": out.append(REGISTERS[o.reg])
        elif o.loc in IMPLICIT_MEM:
            out.append(Mem(REGISTERS["rbx" if o.loc == "rbxal" else o.loc[-3:]], size=o.mem))
            filled_mem = True
        else: return None
    # the memory operand left out but a fixed register written (`scasb al`): GNU as and llvm-mc refuse it too
    if given_fixed and filled_mem: return None
    return tuple(out) if k == len(ops) else None


def _string_segments(mn: str, ops: tuple, words: list[str], written: str) -> tuple[tuple, str | None]:
    """(operands without segment overrides, the segment prefix or None) of string instruction ``mn``: an override (of
    an operand, or a prefix word such as ``fs movsb``) applies to its ds:[rsi] (ds:[rdi], ds:[rbx+al]) operand; its
    es:[rdi] is never overridden (SDM Vol.2 MOVS: "the ES segment cannot be overridden"), so ``es:`` there is no byte and
    another segment an error."""
    from ._table import IMPLICIT_MEM
    from .errors import PrefixError
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


def _movabs_form(f: Form) -> bool:
    """The forms GNU as writes ``movabs``: mov with a moffs operand or a 64-bit immediate."""
    return any(o.loc == "moffs" or o.imm == 64 for o in f.operands)


def _far_address_error(mnemonic: str, ops: tuple) -> OperandError | None:
    far = next((x for x in ops if isinstance(x, Mem) and x.far), None)
    if far is None: return None
    return OperandError(
        f"{mnemonic} {fmt_operands(ops)}: address {far.disp & 0xFFFFFFFFFFFFFFFF:#x} is out of reach: an absolute [disp32] is"
        " sign-extended (SDM Vol.2 2.2.1.3), so it reaches only 0..0x7fffffff and 0xffffffff80000000..0xffffffffffffffff;"
        " a 64-bit address is encodable only in mov al/ax/eax/rax, [addr] and mov [addr], al/ax/eax/rax (moffs, movabs):"
        " load the address into a register")


# Instructions that read a 16-bit selector or word whatever the operand size (SDM Vol.2 LLDT, LTR, LMSW: "The
# operand-size attribute has no effect on this instruction"; VERR/VERW, LKGS: a 16-bit selector). Their o16 forms
# (66 0F 00 /2) are what `data16` asks for, as in GNU as (`data16 lldt ax`, `data16 ltr word ptr [rax]`).
SELECTOR_READ = ("lldt", "ltr", "verr", "verw", "lmsw", "lkgs")


def _sized_kind(f: Form) -> str:
    """"addr32" for a form with a 32-bit implicit address (MONITORD), "data16" for a 16-bit branch (o16: XBEGIN_REL16,
    JMP_REL16), "data16 addr32" for both (LOOP_REL8_16_ECX), else "": the forms that only their prefix words (or their
    own spelling) ask for. jecxz and umonitor r32 say their 32-bit address themselves (`A32_SPELLED`)."""
    a32 = f.addrsize32 and f.mnemonic not in A32_SPELLED
    o16 = f.opsize16 and f.is_branch
    return "data16 addr32" if o16 and a32 else "addr32" if a32 else "data16" if o16 else ""


def candidates(mnemonic: str, sig: tuple, ops: tuple, sized: str = "") -> tuple[tuple[Form, ...], bool]:
    """Forms of ``mnemonic`` that accept operands like ``ops``, best first; and whether any needs a fit check.

    A form whose implicit address is 32-bit (`Form.addrsize32`: MONITORD, LOOP_REL8_64_ECX) is another operation than
    its 64-bit twin with the same operands, and a 16-bit branch (o16) truncates its target to 16 bits on AMD CPUs
    (SDM Vol.2 JMP; xbegin's is not truncated, but GNU as writes rel32 for it too): such a form is a candidate only where
    the mnemonic has no other and says it itself (jecxz, ``umonitor r32``: `Form.syntax` without the prefix word), or with
    ``sized`` = its prefix word, ``"addr32"`` or ``"data16"``: then only those forms are (`_sized_kind`). Without its
    prefix word, a form that needs one is refused, not taken (``montmul``: GNU as writes F3 0F A6 C0, x86gen has only
    MONTMUL_32, ``addr32 montmul``)."""
    key = (mnemonic, *sig) if not sized else (mnemonic, *sig, sized)
    hit = _CANDIDATES.get(key)
    if hit is not None: return hit
    # `{evex} vaddps …` (text: `EVEX_PREFIX` + mnemonic): only the EVEX forms, as GNU as and llvm-mc read that pseudo-prefix
    evex_only = mnemonic.startswith(EVEX_PREFIX)
    vex_only = not evex_only and mnemonic.startswith(VEX_PREFIX)
    name = mnemonic[len(EVEX_PREFIX):] if evex_only else mnemonic[len(VEX_PREFIX):] if vex_only else mnemonic
    if (evex_only or vex_only) and not name:
        raise UnknownMnemonicError(f"{mnemonic} without a mnemonic (write `{mnemonic} vaddps …`)")
    forms = forms_of(canonical(name))
    movabs = mnemonic == "movabs"
    if movabs: forms = [f for f in forms if _movabs_form(f)]   # mov restricted to moffs and imm64 (GNU as, llvm-mc)
    ok = [f for f in forms if len(f.operands) == len(ops) and all(_matches(o, x, movabs) for o, x in zip(f.operands, ops))]
    ok = [f for f in ok if not _accumulator_nop(f, ops)]   # xchg eax, eax: 87 C0, not 90 (NOP)
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
            from .errors import EvexOnlyRegisterError
            high = ", ".join(str(x) for x in ops if getattr(x, "hi16", False))
            raise EvexOnlyRegisterError(f"{mnemonic} {fmt_operands(ops)}: {high} only EVEX encodes (registers 16-31, SDM Vol.2"
                                        f" 2.7.1), and x86gen has no EVEX form of {mnemonic} that takes these operands")
        ok = evex
    if sized == "data16" and name in SELECTOR_READ: ok = [f for f in ok if f.opsize16]   # data16 lldt: 66 0F 00 /2
    elif sized: ok = [f for f in ok if _sized_kind(f) == sized]
    elif ok:
        plain = [f for f in ok if not _sized_kind(f)]
        if not plain:
            plain = [f for f in ok if not f.syntax.startswith(_sized_kind(f) + " ")]   # jecxz, umonitor r32
            if not plain:
                from .errors import PrefixError
                word = _sized_kind(ok[0])
                shown = f"{mnemonic} {fmt_operands(ops)}" if ops else mnemonic
                raise PrefixError(f"{shown}: x86gen has only {', '.join(f.id for f in ok)} ({ok[0].syntax},"
                                  f" {'a 32-bit implicit address' if word == 'addr32' else 'a 16-bit branch'}), another"
                                  f" operation than {mnemonic} without {word}: write `{word} {mnemonic}`")
        ok = plain
    if not ok and sized:
        from .errors import PrefixError
        what = ("with a 32-bit implicit address takes these operands (a memory operand gets its 0x67 from 32-bit registers:"
                " [eax])") if sized == "addr32" else "with a 16-bit operand (the o16 form, 66 0F 00 /r) takes these operands" \
            if name in SELECTOR_READ else ("is a 16-bit branch taking these operands (data16: o16 jmp/jcc/call/loop/jrcxz/"
                                                    "xbegin)" + (" with a 32-bit implicit address" if "addr32" in sized else ""))
        raise PrefixError(f"{sized} {mnemonic} {fmt_operands(ops)}: no form of {mnemonic} {what}")
    if not ok:
        raise _far_address_error(mnemonic, ops) or no_form_error(mnemonic, ops, forms)
    for i, x in enumerate(ops):
        if isinstance(x, Mem) and not x.size:
            # an unsized `call [rax]` / `jmp [rax]` is the near indirect branch (FF /2, FF /4: r/m64), as GNU as reads it;
            # a far pointer in memory (m16:16/m16:32/m16:64, FF /3, FF /5) is taken by its size (`call fword ptr [rax]`)
            # where another form takes the operand too (lfs/lgs/lss have far pointers only: their register gives the size)
            near = [f for f in ok if ":" not in f.operands[i].kind]
            if near and len(near) < len(ok): ok = near
            sizes = {f.operands[i].mem for f in ok if f.operands[i].mem}
            if len(sizes) > 1:
                names = "/".join(sorted({_size_word(s) for s in sizes}))
                raise OperandError(f"{mnemonic} {fmt_operands(ops)}: operand {i + 1} needs a size ({names} ptr)")
    ok.sort(key=lambda f: f.length)   # stable: file order among equals
    res = (tuple(ok), any(f.imm_widths or any(o.kind == "1" for o in f.operands) for f in ok))
    _CANDIDATES[key] = res
    return res


def _size_word(bits: int) -> str:
    from .memory import SIZE_NAMES
    return SIZE_NAMES.get(bits, str(bits))


_MNEMONICS: frozenset[str] | None = None


def _mnemonic_set() -> frozenset[str]:
    global _MNEMONICS
    if _MNEMONICS is None:
        from .forms import mnemonics
        _MNEMONICS = frozenset(mnemonics())
    return _MNEMONICS


def no_form_error(mnemonic: str, ops: tuple, forms: list[Form]) -> OperandError:
    got = ", ".join(describe_operand(x) for x in ops) or "no operands"
    fit = "\n  ".join(f"{f.syntax:40s} {f.id}" for f in forms)
    return OperandError(f"no form of {mnemonic!r} takes {got}; its forms are:\n  {fit}")


# ---- plans: how one operand signature of a mnemonic is encoded -------------------------------------
#
# A plan is one function that encodes operands of one signature exactly as `select` chooses. It is
# compiled from the bodies of the candidate forms' encoders, written for that signature by
# `_specialize.parts` (so without the checks the signature answers: operand classes, memory size,
# fixed registers): when the choice needs a run-time test (immediates that may not fit the short
# form, equally long VEX forms) each body goes under its test, so there is one Python frame and
# nothing is encoded twice. Signatures of registers only are memoized instead (see `plan_for`).
#
# Plans are the one place where x86gen still compiles code at run time (one function per operand signature
# met, never per form: a form's own encoder is generated, in _gen/encoders). They pay: `tools/bench.py --quick`
# with every plan replaced by calls of the forms' encoders (`_fallback`) ran x86gen.encode at 2.8-3.9x iced and
# the Assembler at 3.3-4.2x, against 1.8-2.1x and 1.7-2.6x with plans, in the same runs (2 rounds each).

# Every cache here is keyed by operand signatures (register kinds, memory sizes, 'i'), whose number is bounded by
# the spec (only signatures some form accepts are kept), except the register-only memos, which keep at most
# REG_MEMO_MAX entries each. Each entry is published complete (built in locals, stored last), so another thread
# (free-threaded CPython included) that finds it finds it whole.
REG_MEMO_MAX = 512
_PLANS: dict[tuple, object] = {}      # encode(): (mnemonic, *signature) → plan
_RPLANS: set = set()                  # the plans of rel8/rel32 forms, which take ``ip=``
_COMPILED: dict[tuple, object] = {}   # plans by (mnemonic, how, label check, signature, forms)
_PLAN_GLOBALS: dict | None = None     # the plans' globals, built once (then never changed)


class LabelOperand(Exception):
    """Raised by an `Assembler` plan (``labels=True``) when its memory operand names a label: the
    Assembler then takes its general path, which records the RIP-relative fixup."""


def _key(mnemonic: str, ops: tuple) -> tuple:
    """The operand signature: register kind (or the register, for al/cl/eax/…), memory size, 'i', 'l'."""
    return (mnemonic, *["i" if x.__class__ is int else x.sig for x in ops])


def plan_for(mnemonic: str, sig: tuple, ops: tuple, labels: bool = False):
    """(plan, takes ``ip=``) for operands like ``ops`` with signature ``sig``. A plan with a memory operand
    raises `LabelOperand` when that operand names a label (the `Assembler` then records a fixup; `encode`
    raises `LabelContextError`); ``labels`` is accepted for compatibility and changes nothing."""
    xchg = xchg_choice(mnemonic, ops)
    if xchg is not None:
        enc = xchg[0].encode
        if not xchg[1]: return (lambda a, b: enc()), False
        if not isinstance(ops[1], Mem): return (lambda a, b: enc(b, a)), False
        bits = xchg[0].operands[0].mem
        def swapped(a, b):
            if b.label is not None: raise LabelOperand
            return enc(b.with_size(bits), a)
        return swapped, False
    forms, check = candidates(mnemonic, sig, ops)
    rel = any(f.is_branch for f in forms)
    mem_at = next((i for i, s in enumerate(sig) if s[0] == "m"), None)
    if check: mode, chosen = "fit", forms
    else:
        alts = _vex_alternatives(forms)
        if len(alts) < 2: mode, chosen = "one", forms[:1]
        elif _by_rm_register(alts, sig): mode, chosen = "vex", alts
        else: return _fallback(mnemonic, "vex", alts, mem_at), rel
    key = (mnemonic, mode, mem_at, sig, tuple(f.id for f in chosen))
    plan = _COMPILED.get(key)
    if plan is None:
        if sig and all(s != "i" and s[0] != "m" and s != "l" for s in sig):
            # registers only: the bytes depend on which registers alone, so they are remembered (a C-level cache
            # keyed by the register objects, the last REG_MEMO_MAX combinations); then how fast the function is
            # matters little, and one form needs no plan of its own
            plan = functools.lru_cache(maxsize=REG_MEMO_MAX)(chosen[0].encode if mode == "one" else
                                                             _compile_plan(mnemonic, sig, mode, mem_at, chosen, rel))
        else: plan = _compile_plan(mnemonic, sig, mode, mem_at, chosen, rel)
        _COMPILED[key] = plan
    return plan, rel


def _rm_index(f: Form) -> int | None:
    return next((i for i, o in enumerate(f.operands) if o.loc == "rm"), None)


def _by_rm_register(alts: tuple[Form, ...], sig: tuple) -> bool:
    """Can the VEX alternatives be told apart by the register in ModRM.rm? True when all may take the
    2-byte prefix (map 0F, not W1) and each puts a different register operand in rm: the 2-byte prefix
    is then possible exactly when that register is below r8 (it has no B̄ bit)."""
    rms = [_rm_index(f) for f in alts]
    return (all(f.encoding_kind == "vex" and f.opcode_map == 1 and f.w != 1 for f in alts) and None not in rms
            and len(set(rms)) == len(rms) and all(sig[i][0] != "m" for i in rms))


def _parts(f: Form, sig: tuple, range_checked: bool = False):
    """(body lines, fit condition) of form ``f``'s encoder for operands of signature ``sig``."""
    from ._specialize import parts
    body, cond, _rel = parts(f.row, sig, range_checked)
    return ["    " + ln for ln in body], cond


def _compile_plan(mnemonic: str, sig: tuple, mode: str, mem_at: int | None, chosen: tuple[Form, ...], rel: bool):
    n = len(chosen[0].operands)
    args = "".join(f"a{i}, " for i in range(n))
    # (a gather/scatter's encoder takes its mask as aaa=, `_specialize.mask_required`: a plan's operands are plain, so
    # aaa = 0, which it refuses)
    lines = [f"def plan({args}{'ip=0' if rel else ''}{'aaa=0' if any(f.evex_mask_required for f in chosen) else ''}):"]
    if mem_at is not None: lines.append(f"    if a{mem_at}.label is not None: raise LabelOperand")
    if mode == "one": lines += _parts(chosen[0], sig)[0]
    elif mode == "vex":
        for f in chosen:
            lines.append(f"    if a{_rm_index(f)}.vb:   # {f.id}: 2-byte VEX (rm register below r8)")
            lines += ["    " + ln for ln in _parts(f, sig)[0]]
        lines.append(f"    # every rm register is r8-r15: {chosen[0].id}, 3-byte VEX")
        lines += _parts(chosen[0], sig)[0]
    else:
        seen = set()
        for f in chosen:
            body, cond = _parts(f, sig)
            if cond is None:   # no immediate to fit: this form takes the operands
                lines.append(f"    # {f.id}")
                lines += body
                break
            if cond in seen: continue   # an earlier form takes whatever this one would
            seen.add(cond)
            lines.append(f"    if {cond}:   # {f.id}")
            lines += ["    " + ln for ln in _parts(f, sig, range_checked=True)[0]]
        else:
            lines.append(f"    raise _nofit({mnemonic!r}, ({args}), {tuple(f.id for f in chosen)!r})")
    src = "\n".join(lines) + "\n"
    global _PLAN_GLOBALS
    g = _PLAN_GLOBALS
    if g is None:
        from ._specialize import GLOBALS
        g = _PLAN_GLOBALS = {**GLOBALS, "LabelOperand": LabelOperand, "_nofit": _nofit}
    ns: dict = {}
    exec(compile(src, f"<x86gen plan {mnemonic} {' / '.join(f.id for f in chosen)}>", "exec"), g, ns)
    plan = ns["plan"]
    plan.source = src
    return plan


def _nofit(mnemonic: str, ops: tuple, ids: tuple):
    from .forms import get_form
    return range_error(mnemonic, ops, [get_form(i) for i in ids])


def _fallback(mnemonic: str, mode: str, forms: tuple[Form, ...], mem_at: int | None):
    """The plan as calls of the forms' own functions (VEX alternatives that the rm register cannot tell apart)."""
    if mode == "vex": inner = _shortest_of(forms)
    elif mode == "one": inner = forms[0].encode
    else:
        def inner(*ops, ip=0):
            for f in forms:
                if f.fits(*ops, ip=ip): return f(*ops, ip=ip) if f.is_branch else f(*ops)
            raise range_error(mnemonic, ops, forms)
    if mem_at is None: return inner
    def plan(*ops, **kw):
        if ops[mem_at].label is not None: raise LabelOperand
        return inner(*ops, **kw)
    return plan


def _vex_alternatives(forms: tuple[Form, ...]) -> tuple[Form, ...]:
    """Equally long VEX forms taking the same operands differ only in which register goes to ModRM.rm
    (``vmovups xmm0, xmm8``: 10 /r or 11 /r). A 2-byte VEX prefix cannot extend ModRM.rm, so the
    bytes are shorter for the form that leaves r8-r15 out of rm; GNU as and llvm-mc swap likewise."""
    if forms[0].encoding_kind != "vex": return ()
    return tuple(f for f in forms if f.length == forms[0].length)


def _shortest_of(forms: tuple[Form, ...]):
    encs = tuple(f.encode for f in forms)
    def enc(*ops):
        best = encs[0](*ops)
        if best[0] == 0xC5: return best   # already the 2-byte VEX prefix
        for e in encs[1:]:
            b = e(*ops)
            if len(b) < len(best): best = b
        return best
    return enc


def select(mnemonic: str, *ops, ip: int = 0, rc: int | None = None) -> Form:
    """The form `encode` would use for these operands (and rounding ``rc``, see `encode`)."""
    if rc is not None: return _evex_choose(mnemonic, ops, rc, ip)
    # prefix words (`lock add`), a segment override or a 32-bit address: the prefix layer (SegMem is a Mem, so the forms would take it
    # and drop the override); `SegMem in map(type, ops)` is the cheap test, select() runs it on every call
    if " " in mnemonic or SegMem in map(type, ops) or A32Mem in map(type, ops): return encode_prefixed(mnemonic, ops, ip)[1]
    if mnemonic in STRING_MNEMONICS: mnemonic, ops = string_operands(mnemonic, ops)   # `movsb`: its implied operands
    key = _key(mnemonic, ops)
    if "l" in key[1:]: raise label_error(mnemonic, ops)
    xchg = xchg_choice(mnemonic, ops)
    if xchg is not None: return xchg[0]   # (with the operands xchg_choice gives)
    try: forms, check = candidates(mnemonic, key[1:], ops)
    except OperandError:   # no plain form takes them: masked or broadcast operands take the EVEX path (x86gen._evex)
        from ._evex import decorated
        if decorated(ops): return _evex_choose(mnemonic, ops, None, ip)
        raise
    if not check:
        alts = _vex_alternatives(forms)
        return forms[0] if len(alts) < 2 else min(alts, key=lambda f: len(f.encode(*ops)))   # first among equals
    for f in forms:
        if f.fits(*ops, ip=ip): return f
    raise range_error(mnemonic, ops, forms)


def range_error(mnemonic, ops, forms) -> OperandError:
    from .errors import ImmediateRangeError
    got = fmt_operands(ops)
    why = ""
    if forms and all(ip16_branch(f.row) for f in forms) and any(x.__class__ is int and not 0 <= x <= 0xFFFF for x in ops):
        why = " (a 16-bit branch's target is a 16-bit IP, 0x0..0xffff: IP = (next IP + rel) AND 0xffff, SDM Vol.2 JMP/Jcc)"
    return ImmediateRangeError(f"{mnemonic} {got}: an immediate or branch target does not fit any form: "
                               + "; ".join(f"{f.syntax} ({f.id})" for f in forms) + why)


def encode(mnemonic: str, *ops, ip: int = 0, rc: int | None = None) -> bytes:
    """Encode one instruction, e.g. ``encode("vaddps", ymm0, ymm1, mem(rdi, size=256))``.

    Operands are registers, `Mem` operands and ints (immediates; for branches the absolute target
    address, with the instruction at ``ip``). Raises `EncodeError` subclasses on bad input.
    AVX-512 (`x86gen.evex`): a masked destination (``zmm1.k(k1)``, ``zmm1.k(k1).z``), a broadcast source
    (``dword(rax).bcst``) and ``rc=`` (`x86gen.RN_SAE` … `x86gen.RZ_SAE`, `x86gen.SAE`) choose among the EVEX forms
    that allow them (`x86gen.EvexOperandError` when none does).
    """
    if rc is not None: return _evex_encode(mnemonic, ops, rc, ip)
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
        else: return _encode(mnemonic, ops, ip)
    except (KeyError, AttributeError, TypeError): return _encode(mnemonic, ops, ip)
    try:
        if ip and plan in _RPLANS: return plan(*ops, ip=ip)
        return plan(*ops)
    except LabelOperand: raise label_error(mnemonic, ops) from None


def lea_low_bits(mnemonic: str, ops: tuple) -> tuple | None:
    """``lea r16/r32, [addr]`` with an absolute address a disp32 cannot reach (a far `Mem`): the same operands with
    the disp32 that has the address's low 32 bits, or None. lea with a 16/32-bit destination keeps only the low
    bits of the effective address (SDM Vol.2 LEA: the address is truncated to the operand size), so these are the
    same instruction. Addresses whose upper 32 bits are neither all 0 nor all 1 stay refused: GNU as truncates
    them with a warning ("shortened")."""
    if mnemonic != "lea" or len(ops) != 2: return None
    r, m = ops
    if m.__class__ is not Mem or not m.far or not isinstance(r, Reg) or r.size >= 64: return None
    a = m.disp & 0xFFFFFFFFFFFFFFFF
    if a >> 32 not in (0, 0xFFFFFFFF): return None
    low = a & 0xFFFFFFFF
    return (r, Mem(None, None, 1, low - (1 << 32) if low >> 31 else low, m.size))


def label_error(mnemonic: str, ops: tuple) -> LabelContextError:
    """The error for a label operand given to `encode` (or a form): only an Assembler can resolve it."""
    return LabelContextError(f"{fmt_value(mnemonic)} {fmt_operands(ops)}: a label operand needs an Assembler or a program "
                             "(Assembler.emit / x86gen.assemble with the label defined), which knows where the label is; "
                             "encode() takes registers, memory operands and ints (branch targets as absolute addresses)")


_TABLES: dict[str, dict] = {}   # encode(): mnemonic → {number of operands: {signature: …: plan}}


def _encode(mnemonic: str, ops: tuple, ip: int) -> bytes:
    """`encode` for a signature met the first time (and for 0 or 4 operands, and errors): choose and keep its plan."""
    if mnemonic.__class__ is not str: raise UnknownMnemonicError(f"a mnemonic is a string, not {fmt_value(mnemonic)}")
    if " " in mnemonic or SegMem in map(type, ops) or A32Mem in map(type, ops): return encode_prefixed(mnemonic, ops, ip)[0]
    if mnemonic in STRING_MNEMONICS:   # `movsb`, `lods eax, dword ptr [rsi]`: the form's name and operands
        mn, filled = string_operands(mnemonic, ops)
        if mn is not mnemonic or filled is not ops: return _encode(mn, filled, ip)
    try: key = _key(mnemonic, ops)
    except AttributeError:
        ints = int_operands(ops)   # immediates given as bool / numpy integers (operator.index)
        if ints is not None: return _encode(mnemonic, ints, ip)
        raise no_form_error(mnemonic, ops, forms_of(canonical(mnemonic))) from None
    if "l" in key[1:]: raise label_error(mnemonic, ops)   # (never cached: the fast path comes back here)
    if key[0] == "lea" and key[-1][:5] == "moffs":
        near = lea_low_bits(mnemonic, ops)
        if near is not None: return _encode(mnemonic, near, ip)
    plan = _PLANS.get(key)
    if plan is None:
        from ._evex import decorated
        if decorated(ops): return _evex_encode(mnemonic, ops, None, ip)   # masks, broadcast: the EVEX slow path (no plan)
        plan, rel = plan_for(mnemonic, key[1:], ops)
        if rel: _RPLANS.add(plan)   # before the plan is published: whoever finds it must know it takes ip=
        _PLANS[key] = plan
        if 1 <= len(ops) <= 3:
            t = _TABLES.setdefault(mnemonic, {}).setdefault(len(ops), {})
            for s in key[1:-1]: t = t.setdefault(s, {})
            t[key[-1]] = plan
    try: return plan(*ops, ip=ip) if plan in _RPLANS else plan(*ops)
    except LabelOperand: raise label_error(mnemonic, ops) from None


def _evex_encode(mnemonic, ops: tuple, rc, ip: int) -> bytes:
    from . import _evex
    if mnemonic.__class__ is not str: raise UnknownMnemonicError(f"a mnemonic is a string, not {fmt_value(mnemonic)}")
    return _evex.encode(mnemonic, ops, rc, ip)


def _evex_choose(mnemonic, ops: tuple, rc, ip: int) -> Form:
    from . import _evex
    if mnemonic.__class__ is not str: raise UnknownMnemonicError(f"a mnemonic is a string, not {fmt_value(mnemonic)}")
    return _evex.choose(mnemonic, ops, rc, ip)


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
    fl = [f if isinstance(f, Form) else get_form(f) for f in forms]
    ok = [f for f in fl if f.accepts(*ops, ip=ip, rc=rc)]
    if imm_bits is not None: ok = [f for f in ok if all(o.imm in (None, imm_bits) for o in f.operands if o.kind != "1")]
    if not ok:
        got = ", ".join(describe_operand(x) for x in ops) or "no operands"
        listed = "; ".join(f"{f.syntax} ({f.id})" for f in fl[:12]) + (" …" if len(fl) > 12 else "")
        raise OperandError(f"none of the forms {listed} takes {got}" + (f" with {imm_bits}-bit immediates" if imm_bits else ""))
    for i, x in enumerate(ops):
        if isinstance(x, Mem) and not x.size and len({f.operands[i].mem for f in ok}) > 1:
            raise OperandError(f"operand {i + 1} ({x}) needs a size: forms {', '.join(f.id for f in ok)} take it")
    if imm == "widest": return max(ok, key=lambda f: sum(o.imm or 0 for o in f.operands if o.kind != "1"))   # first among equals
    return min(ok, key=lambda f: f.length)


# ---- the prefix layer: prefix words and segment overrides around a form's bytes (see x86gen.prefixes) -------------

def _segment(mnemonic: str, ops: tuple, words: list[str]) -> tuple[str | None, tuple]:
    """(the segment override of the one memory operand or None, the operands without it) for `encode_prefixed`."""
    from . import prefixes as P
    from .errors import PrefixError
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
    from . import prefixes as P
    from .errors import PrefixError
    words, mn = P.split_words(mnemonic)
    if mn in STRING_MNEMONICS:   # `rep movsb`, `fs lodsb`, `movs byte ptr [rdi], byte ptr fs:[rsi]`
        mn, ops = string_operands(mn, ops)
        plain, seg = _string_segments(mn, ops, [w for w in words if w in P.SEGMENTS], mnemonic)
    else:
        seg, plain = _segment(mnemonic, ops, words)
    a32 = A32Mem in map(type, plain)
    if a32: plain = tuple(x.plain if x.__class__ is A32Mem else x for x in plain)   # [ecx]: the 64-bit operand's bytes after 0x67
    # addr32 / data16: the forms with a 32-bit implicit address / the 16-bit branches (with a 32-bit memory operand,
    # addr32 is its 0x67, nothing more, as GNU as)
    # (both: `data16 addr32 loop`, LOOP_REL8_16_ECX; `addr32 jecxz` is jecxz, which says its 32-bit address itself)
    sized = " ".join(w for w, on in ((P.DATA16, P.DATA16 in words),
                                    (P.ADDR32, P.ADDR32 in words and not a32 and canonical(mn) not in A32_SPELLED)) if on)
    legacy = [w for w in words if w not in P.SEGMENTS and w not in (P.ADDR32, P.DATA16)]
    if "{vex}" in legacy and not any(f.encoding_kind == "vex" for f in forms_of(canonical(mn))):
        raise PrefixError(f"{{vex}} {mn}: no VEX-encoded form of {mn}")
    n = (seg is not None or "notrack" in legacy) + a32 + sum(w in P.PREFIX_BYTES and w != "notrack" for w in legacy)
    want = {P.SPEC_NAME.get(w, w) for w in legacy if w in P.PREFIX_BYTES}
    if sized:   # the forms with a 32-bit implicit address or a 16-bit branch (their bytes have the 67 / 66)
        key = _key(mn, plain)
        if "l" in key[1:]: raise label_error(mnemonic, ops)
        ok = [f for f in candidates(mn, key[1:], plain, sized)[0] if want <= P.allowed(f.id)]
        if not ok: raise PrefixError(f"{mnemonic} {fmt_operands(ops)}: no form of {mn} with a 32-bit address takes {', '.join(want)}")
        form = next((f for f in ok if f.fits(*plain, ip=ip + n)), None)
        if form is None: raise range_error(mnemonic, ops, ok)
    elif not want:
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
    P.check(words, form, mnemonic, ops)
    xchg = xchg_choice(mn, plain)
    if xchg is not None and xchg[0] is form: plain = xchg[1]
    body = form(*plain, ip=ip + n) if form.is_branch else form(*plain)
    return P.layout(legacy, form, body, seg, a32), form


def _encode_prefixed_a32(mnemonic: str, ops: tuple, ip: int) -> tuple[bytes, Form]:
    """`encode_prefixed`, whose errors name a 32-bit address as given (``[eax]``), not as the operand of the bytes after
    its 0x67 (``[rax]``; `x86gen.memory.a32_error`)."""
    from .memory import a32_error
    try: return _encode_prefixed(mnemonic, ops, ip)
    except EncodeError as ex:
        plain = tuple(x.plain if x.__class__ is A32Mem else x.plain.plain if x.__class__ is SegMem and x.plain.__class__ is A32Mem
                      else x for x in ops)
        raise a32_error(ex, plain, ops) from None
