"""A request as selection takes it: a mnemonic's other names, string instructions written without their implicit
operands, and the operands GNU as rewrites before it chooses a form (xchg, lea of a far address). Each function
returns the table's mnemonic and the operands of a form; `x86gen.selection.candidates` then chooses among its forms."""
from __future__ import annotations

from ..errors import OperandError, fmt_operands
from ..forms import Form, get_form
from ..memory import A32Mem, Mem, SegMem, VsibMem
from ..registers import REGISTERS, Reg
from ..table import IMPLICIT_MEM, has_mnemonic, rows_of, takes

EVEX_PREFIX = "{evex}"   # a mnemonic "{evex}vaddps" encodes with an EVEX form only (the text pseudo-prefix `{evex} vaddps`)
VEX_PREFIX = "{vex}"     # and "{vex}vaddps" with a VEX form only (`{vex} vpdpbusd`, as objdump prints AVX-VNNI)
REX2_PREFIX = "{rex2}"   # and "{rex2}add" with a REX2 form only (APX; llvm-mc-22's `{rex2} add rax, rbx` is d5 08 01 d8)

# ---- other names of mnemonics: GNU as's AT&T names, condition-code synonyms, objdump's and iced-x86's spellings ----
MNEMONIC_ALIASES = {
    "jz": "je", "jnz": "jne", "jc": "jb", "jnae": "jb", "jnc": "jae", "jnb": "jae", "jna": "jbe", "jnbe": "ja",
    "jnge": "jl", "jnl": "jge", "jng": "jle", "jnle": "jg", "jpe": "jp", "jpo": "jnp",
    "loopz": "loope", "loopnz": "loopne",   # (GNU as's, SDM Vol.2 LOOP/LOOPcc: LOOPE/LOOPZ, LOOPNE/LOOPNZ)
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
    # iced-x86's Intel name of AMD's 0F 0D /0; GNU as and objdump write `prefetch`, which is 0F 0D /0. (iced's
    # `prefetch_reserved` names four encodings, 0F 0D /4-/7: `x86gen.diagnostics.unknown_mnemonic_error` says so.)
    "prefetch_exclusive": "prefetch",
}
for _p in ("set", "cmov"):
    for _a, _b in {"z": "e", "nz": "ne", "c": "b", "nae": "b", "nc": "ae", "nb": "ae", "na": "be", "nbe": "a",
                   "nge": "l", "nl": "ge", "ng": "le", "nle": "g", "pe": "p", "po": "np"}.items():
        MNEMONIC_ALIASES[_p + _a] = _p + _b
# CMPccXADD: the spec's mnemonics are iced's Code names (cmpnbxadd, cmpzxadd, …); iced's formatter and the
# SDM's table also spell them with the other condition names (cmpaexadd, cmpexadd, …).
for _a, _b in {"ae": "nb", "a": "nbe", "ge": "nl", "g": "nle", "ne": "nz", "e": "z"}.items():
    MNEMONIC_ALIASES[f"cmp{_a}xadd"] = f"cmp{_b}xadd"


def signature(ops: tuple) -> tuple:
    """The operand signature of ``ops`` (`x86gen.registers.Reg.sig`, `x86gen.memory.Mem.sig`, "i" for an int): what
    selection chooses by, and what plans are kept by."""
    return tuple(["i" if x.__class__ is int else x.sig for x in ops])


def canonical(mnemonic: str) -> str:
    """The table's mnemonic for ``mnemonic``: itself, or what its alias names if the table has that;
    otherwise itself, so that errors name what was written (`cltq`, not `cdqe`)."""
    if has_mnemonic(mnemonic): return mnemonic
    target = MNEMONIC_ALIASES.get(mnemonic)
    return target if target is not None and has_mnemonic(target) else mnemonic


# ---- string instructions: operands the text may leave out, and the names without a size -------------------------
#
# The string instructions (SDM Vol.2 MOVS, CMPS, SCAS, LODS, STOS, INS, OUTS), xlat and maskmovdqu/maskmovq address
# memory through fixed registers (isa/README.md: m8@rsi, m8@esrdi, m8@rbxal, m128@rdi). Their forms take those
# operands explicitly, as iced-x86's Codes do (``encode("movsb", byte(rdi), byte(rsi))``); GNU as also takes them
# without operands (``movsb``, ``rep stosq``, ``xlatb``), with some left out (iced-x86's ``lodsb byte ptr [rsi]``,
# ``maskmovdqu xmm0, xmm1``), and by the name without a size suffix, sized by the operands (``movs byte ptr [rdi],
# byte ptr [rsi]``, ``lods eax, dword ptr [rsi]``). `string_operands` turns each of those into a form's
# operands; `x86gen.encoding.decorated.segment` applies their segment overrides.
# (tests/test_strings.py checks the list: each generic name with each size suffix b/w/d/q, but no insq/outsq.)
STRING_GENERIC = frozenset("movs cmps scas lods stos ins outs".split())
STRING_MNEMONICS = frozenset("""movs movsb movsw movsd movsq cmps cmpsb cmpsw cmpsd cmpsq scas scasb scasw scasd scasq
    lods lodsb lodsw lodsd lodsq stos stosb stosw stosd stosq ins insb insw insd outs outsb outsw outsd
    xlat xlatb maskmovdqu maskmovq vmaskmovdqu""".split())


_SIZE_SUFFIX = {8: "b", 16: "w", 32: "d", 64: "q"}
_ACCUMULATORS = frozenset({"al", "ax", "eax", "rax"})


def string_operands(mnemonic: str, ops: tuple, a32: bool = False) -> tuple[str, tuple]:
    """``(mnemonic, operands)`` of the form a string instruction (`STRING_MNEMONICS`) written ``mnemonic ops`` stands
    for: the suffixed name for a generic one (``movs`` with byte operands is ``movsb``), the implicit operands
    filled in where they were left out (``movsb`` → ``movsb byte ptr [rdi], byte ptr [rsi]``, ``lodsb byte ptr [rsi]``
    → ``lodsb al, byte ptr [rsi]``). Operands a form takes as they are stay; those no form fits are left for
    the ordinary operand error. A memory operand filled in has a 32-bit address (``[esi]``: 0x67) with ``a32`` (the
    ``addr32`` word: ``addr32 movsb`` is 67 A4, as GNU as) or where one written has (``stosb byte ptr [edi]``)."""
    mn = mnemonic
    if mn in STRING_GENERIC:
        sizes = [x.size for x in ops if isinstance(x, Mem) and x.size]
        sizes += [x.size for x in ops if isinstance(x, Reg) and x.name in _ACCUMULATORS]
        suffix = _SIZE_SUFFIX.get(sizes[0]) if sizes else None
        if suffix is None or (mn in ("ins", "outs") and suffix == "q"):
            raise OperandError(f"{mnemonic} {fmt_operands(ops)}: the operand size is not given (write byte/word/dword"
                               f"{'' if mn in ('ins', 'outs') else '/qword'} ptr, or {mnemonic}b, {mnemonic}w, …)")
        mn += suffix
    forms = rows_of(canonical(mn)) or ()
    if any(len(f.operands) == len(ops) and all(_takes(o, x) for o, x in zip(f.operands, ops)) for f in forms):
        return mn, ops
    a32 = a32 or any((x.plain if x.__class__ is SegMem else x).__class__ is A32Mem for x in ops)
    for f in forms:
        filled = _implied(f, ops, a32)
        if filled is not None: return mn, filled
    return mn, ops


def _implied(f, ops: tuple, a32: bool) -> tuple | None:
    """``ops`` with the fixed registers and implicit memory operands of form ``f`` that they leave out filled in, in
    order (a memory operand with a 32-bit address: ``a32``); None if they are not ``f``'s operands with some of those
    left out."""
    if not any(o.loc in IMPLICIT_MEM for o in f.operands): return None
    out, k = [], 0
    given_fixed = given_mem = filled_mem = False
    for o in f.operands:
        if k < len(ops) and _takes(o, ops[k]):
            out.append(ops[k]); k += 1
            given_fixed |= o.loc == "fixed"
            given_mem |= o.loc in IMPLICIT_MEM
        elif o.loc == "fixed": out.append(REGISTERS[o.reg])
        elif o.loc in IMPLICIT_MEM:
            base = "rbx" if o.loc == "rbxal" else o.loc[-3:]
            out.append(Mem(REGISTERS["e" + base[1:] if a32 else base], size=o.mem))   # (esi: an A32Mem)
            filled_mem = True
        else: return None
    # the memory operand left out but a fixed register written (`scasb al`): GNU as and llvm-mc refuse it too
    if given_fixed and filled_mem: return None
    # one of two memory operands written (`movsb byte ptr [rdi]`): GNU as refuses it ("number of operands mismatch")
    if given_mem and filled_mem: return None
    return tuple(out) if k == len(ops) else None


def _takes(o, x) -> bool:
    """Does form operand ``o`` take operand ``x`` (its kind, a segment override's or 32-bit address's plain operand;
    immediate ranges aside)?"""
    while x.__class__ is SegMem or x.__class__ is A32Mem: x = x.plain
    s = "i" if x.__class__ is int else getattr(x, "sig", None)
    return s.__class__ is str and takes(o, s)


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
    # with r16-r31 (APX) the same choice, as the form's REX2 form (codegen/spec.py `rex2_forms`: id REX2_ and the form's)
    rex2 = "REX2_" if a.encodings is not None or getattr(b, "encodings", None) is not None else ""
    if rex2 and not all(x.encodings is None or "rex2" in x.encodings for x in (a, b) if hasattr(x, "encodings")): return None
    if isinstance(b, Mem) and b.__class__ is not VsibMem and a.kind in _XCHG_RM and b.size in (0, a.size):
        return get_form(rex2 + _XCHG_RM[a.kind]), (b.with_size(a.size), a)   # xchg ecx, [rax]: the r/m form, memory first
    if not isinstance(b, Reg): return None
    if a is b and a.name in _XCHG_SELF_NOP: return get_form(_XCHG_SELF_NOP[a.name]), ()
    if a.name in _XCHG_ACCUMULATOR and b.kind == a.kind and b is not a:
        return get_form(rex2 + _XCHG_ACCUMULATOR[a.name]), (b, a)
    return None


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
