"""Turn one row of the generated form table into a specialised encoder function.

The form table (``_gen/forms.py``) is data: opcode, map, prefixes, W, L and where each operand
goes. The first time a form is used, `build` writes a short Python function for exactly that form
(every constant folded in, one branch per register/memory case) and compiles it. So the encoder is
small and readable here, and each form still costs only a few attribute loads and one
``struct.pack`` of its bytes. ``Form.source`` shows the code made for a form.

Byte layout (SDM Vol.2 2.1, 2.2.1, 2.3):
  legacy: [66 (o16)] [F2|F3|66 mandatory] [REX] [0F [38|3A]] opcode [ModRM [SIB] [disp]] [imm]
  VEX:    C5 R̄vvvvLpp                  opcode ModRM [SIB] [disp] [imm | is4]   (2-byte)
          C4 R̄X̄B̄mmmmm Wvvvv̄Lpp         opcode ModRM [SIB] [disp] [imm | is4]   (3-byte)
"""
from __future__ import annotations

import struct

from . import registers as R
from .errors import ImmediateRangeError, OperandError, fmt_int, fmt_operands
from .memory import Mem

REG_CLASS = {"r8": "Gpr8", "r16": "Gpr16", "r32": "Gpr32", "r64": "Gpr64", "xmm": "Xmm", "ymm": "Ymm", "zmm": "Zmm", "k": "KReg",
             "st": "StReg", "sreg": "SegReg", "cr": "CrReg", "dr": "DrReg"}
PP_BYTE = {0: (), 1: (0x66,), 2: (0xF3,), 3: (0xF2,)}
MAP_BYTES = {0: (), 1: (0x0F,), 2: (0x0F, 0x38), 3: (0x0F, 0x3A)}


def imm_ranges(width: int, osize: int, sext: bool, rel: bool) -> tuple[tuple[int, int], ...]:
    """Accepted values of an immediate: one or two closed intervals.

    A plain ``immN`` takes any value whose low N bits are what is meant, signed or unsigned:
    [-2^(N-1), 2^N). A sign-extended ``simmN`` of an operation of size S (``83 /0 ib``) must be
    what the CPU produces by sign-extending N bits to S bits, read as signed or as unsigned S-bit
    values (so ``add eax, 0xffffffff`` is ``83 c0 ff``, as GNU as encodes it).
    """
    if rel: return ((-(1 << (width - 1)), (1 << (width - 1)) - 1),)
    if not sext or osize <= width: return ((-(1 << (width - 1)), (1 << width) - 1),)
    half = 1 << (width - 1)
    return ((-half, half - 1), ((1 << osize) - half, (1 << osize) - 1))


def _is_const(e: str) -> bool:
    try: int(e, 0)
    except ValueError: return False
    return True


def _fold(e: str) -> str:
    """Fold the constant terms of an OR expression: ``0xC0 | 32 | a0.lo`` → ``0xe0 | a0.lo``."""
    terms = e.split(" | ")
    const, var = 0, []
    for t in terms:
        if _is_const(t): const |= int(t, 0)
        else: var.append(t)
    if not var: return f"{const:#04x}"
    return " | ".join(([f"{const:#04x}"] if const else []) + var)


def _cond(var: str, ranges) -> str:
    return " or ".join(f"{lo} <= {var} <= {hi}" for lo, hi in ranges)


def _imm_bytes(var: str, width: int) -> tuple[list[str], str]:
    """(expressions inside the bytes tuple when nothing follows the ModRM byte, expression appended
    after a memory operand's SIB/displacement bytes)."""
    if width == 8: return [f"{var} & 0xFF"], f" + _B[{var} & 0xFF]"
    if width == 16: return [f"{var} & 0xFF", f"({var} >> 8) & 0xFF"], f" + _p16({var} & 0xFFFF)"
    if width == 32: return [], f" + _p32({var} & 0xFFFFFFFF)"
    return [], f" + _p64({var} & 0xFFFFFFFFFFFFFFFF)"


def static_length(row) -> int:
    """Length in bytes with no memory operand, a 2-byte VEX where legal, and no optional REX."""
    (_id, _mn, ops, enc, _opc, mp, pp, o16, w, _l, modrm, _opreg, imms, is4, _osize, *_rest) = row
    n = 1 + (modrm is not None) + sum(imms) // 8 + bool(is4) + 8 * sum(o[1] == "moffs" for o in ops)
    if enc == "legacy": return n + o16 + bool(pp) + (w == 1) + len(MAP_BYTES[mp])
    return n + (2 if mp == 1 and w != 1 else 3)


def build(row) -> tuple[str, str | None]:
    """Python source of ``enc(a0, …)`` for this form, and of ``fits(a0, …)`` if it has immediates."""
    body, fits, rel = parts(row)
    args = ", ".join(f"a{i}" for i in range(len(row[2]))) + (", ip=0" if rel else "")
    src = f"def enc({args}):\n" + "".join(f"    {ln}\n" for ln in body)
    return src, (f"def fits({args}):\n    return {fits}\n" if fits else None)


def parts(row, sig: tuple | None = None, range_checked: bool = False) -> tuple[list[str], str | None, bool]:
    """The encoder of a form as parts: its body lines (unindented, ending in a return or raise), the
    condition under which its immediates fit (None if it has none) and whether it takes ``ip=``.

    With ``sig`` (an operand signature as `x86gen.encode` computes it: ``("ymm", "ymm", "m256")``,
    ``("eax", "i")``) the body is for operands of that signature only: the class, size and fixed
    register checks that it answers are left out, and so is every branch for other operand kinds.
    With ``range_checked`` the caller has tested the fit condition, so the immediates' range checks
    are left out too. `x86gen.encoder` pastes such bodies into one function per signature.
    """
    (fid, _mn, ops, enc, opcode, mp, pp, o16, w, l, modrm, opreg, imms, is4, osize, *_rest) = row
    args = [f"a{i}" for i in range(len(ops))]
    rel = any(o[0].startswith("rel") for o in ops)
    fits: list[str] = []
    body: list[str] = []
    allargs = "(" + "".join(a + ", " for a in args) + ")"
    def bad(i): return f"raise _bad({fid!r}, {allargs}, {i})"
    def known(i): return sig is not None and sig[i] != "l"   # the signature says what operand i is

    reg_expr = rm = vvvv = opc = is4_arg = moffs = None
    r8: list[str] = []
    imm_parts: list[str] = []   # immediate bytes packed with the opcode and ModRM bytes
    imm_tail = ""                # the same immediates as bytes appended after it
    imm_after_mem = ""           # immediates appended after a memory operand's tail
    for i, (kind, loc, _role, reg, mem, imm, sext) in enumerate(ops):
        a = args[i]
        # int checks, class checks and fixed registers: left out where the signature answers them
        is_int = "" if known(i) else f"{a}.__class__ is int and "
        if loc == "fixed":
            if not (known(i) and sig[i] == reg):   # al/cl/eax/… have signatures of their own
                body.append(f"if {a} is not R_{reg}: {bad(i)}")
            continue
        if kind == "1":
            body.append(f"if {'' if known(i) else f'{a}.__class__ is not int or '}{a} != 1: {bad(i)}")
            fits.append(f"{is_int}{a} == 1")
            continue
        if imm is not None:
            rng = imm_ranges(imm, osize, sext, kind.startswith("rel"))
            if not known(i): body.append(f"if {a}.__class__ is not int: {bad(i)}")
            if kind.startswith("rel"):
                body.append(f"d = {a} - ip - LEN")
                if not range_checked: body.append(f"if not ({_cond('d', rng)}): raise _range({fid!r}, {allargs}, {i}, d)")
                fits.append(f"{is_int}({_cond(f'({a} - ip - LEN)', rng)})")
                p, t = _imm_bytes("d", imm)
            else:
                if not range_checked: body.append(f"if not ({_cond(a, rng)}): raise _range({fid!r}, {allargs}, {i}, {a})")
                fits.append(f"{is_int}({_cond(a, rng)})")
                p, t = _imm_bytes(a, imm)
            imm_after_mem += t
            if p: imm_parts += p
            else:
                # a wide immediate that follows inline bytes: keep order by moving all later imms out
                imm_tail += t
            continue
        if loc == "moffs":
            # the operand's 64-bit absolute address follows the opcode (SDM Vol.2 MOV, moffs); a far address (signature
            # moffsN) is absolute by construction, any other memory operand (movabs with a near one) is checked
            if sig is None: body.append(f"if {a}.__class__ is not Mem or {a}.size not in (0, {mem}): {bad(i)}")
            elif sig[i][0] != "m": body.append(bad(i))
            if sig is None: body.append(f"if {a}.label is not None: raise _label({fid!r}, {allargs})")
            if sig is None or not sig[i].startswith("moffs"):
                body.append(f"if {a}.base is not None or {a}.index is not None: raise _notabs({fid!r}, {allargs}, {i})")
            moffs = a
            continue
        if reg == "r8": r8.append(a)
        if loc == "rm": rm = (a, reg, mem)
        elif loc == "is4":
            if not known(i): body.append(f"if {a}.__class__ is not {REG_CLASS[reg]}: {bad(i)}")
            is4_arg = a
        else:
            if mem is not None:   # memory-only operand outside rm cannot happen (checked by the loader)
                raise ValueError(fid)
            if not known(i): body.append(f"if {a}.__class__ is not {REG_CLASS[reg]}: {bad(i)}")
            if reg == "sreg" and "w" in _role: body.append(f"if {a} is R_cs: raise _load_cs({fid!r})")   # mov cs, r/m16: #UD
            if loc == "reg": reg_expr = a
            elif loc == "vvvv": vvvv = a
            elif loc == "opc": opc = a
    if is4_arg:
        imm_parts.insert(0, f"{is4_arg}.is4")
        imm_after_mem = f" + _B[{is4_arg}.is4]" + imm_after_mem
    if imm_tail and imm_parts:   # mixed inline/appended immediates (e.g. enter iw, ib): append them all
        imm_parts, imm_tail = [], imm_after_mem

    pre = list(PP_BYTE[pp])
    maps = list(MAP_BYTES[mp])
    reg3 = f"{reg_expr}.reg3" if reg_expr else (f"{int(modrm) << 3}" if modrm is not None and len(modrm) == 1 and modrm != "r" else "0")
    # a fixed ModRM byte ("E8": lfence is 0F AE E8, SDM Vol.2 2.1.5 "opcodes with a fixed ModRM") follows the opcode
    fixed_modrm = [f"{int(modrm, 16):#04x}"] if modrm is not None and len(modrm) == 2 else []
    out = list(body)

    def ret(ind: str, elems: list[str], tail: str, cond: str | None = None) -> str:
        """A return of these byte expressions (constants folded; all-constant → a bytes literal)."""
        folded = [_fold(e) for e in elems]
        if all(_is_const(e) for e in folded): expr = repr(bytes(int(e, 0) for e in folded))
        else: expr = f"_pk{len(folded)}(" + ", ".join(folded) + ")"   # struct.pack of n bytes: half the cost of bytes((…))
        return f"{ind}{'if ' + cond + ': ' if cond else ''}return {expr}{tail}"

    def legacy_return(ind: str, rex_bits: list[str], middle: list[str], tail: str, r8: list[str]) -> list[str]:
        """Emit the REX/no-REX returns. ``middle`` are the byte expressions after the opcode,
        ``tail`` an expression appended after them (a memory operand's SIB/displacement), ``r8``
        the byte registers that may force (spl…dil) or forbid (ah…bh) a REX prefix (SDM Vol.2 2.2.1)."""
        imm = imm_parts if not tail else []
        tail_s = tail + (imm_tail if not tail else imm_after_mem)
        head = [f"{b:#04x}" for b in ([0x66] if o16 else []) + pre]
        body = [f"{b:#04x}" for b in maps] + middle + imm
        bits = rex_bits + [f"{x}.rex8" for x in r8]
        if not bits:   # no register can need REX: it is present exactly when the form has REX.W
            return [ret(ind, head + (["0x48"] if w == 1 else []) + body, tail_s)]
        if w == 1 and not r8: return [ret(ind, head + [" | ".join(["0x48"] + bits)] + body, tail_s)]
        res = [f"{ind}rex = {' | '.join((['0x48'] if w == 1 else []) + bits)}"]
        if r8:
            hi = " or ".join(f"{x}.high" for x in r8)
            res.append(f"{ind}if rex and ({hi}): raise _high8({fid!r}, {allargs})")
        if w == 1: res.append(ret(ind, head + ["rex"] + body, tail_s))
        else:
            res.append(ret(ind, head + ["0x40 | rex"] + body, tail_s, "rex"))
            res.append(ret(ind, head + body, tail_s))
        return res

    def vex_return(ind: str, rm_reg: bool, a: str | None, middle: list[str], tail: str) -> list[str]:
        """VEX prefix (SDM Vol.2 2.3.5): the 2-byte C5 form only with map 0F, W0 (or WIG) and
        X̄ = B̄ = 1; else the 3-byte C4 form. R̄, X̄, B̄ and vvvv are stored inverted."""
        r = f"{reg_expr}.vr" if reg_expr else "0x80"
        vv = f"{vvvv}.vv" if vvvv else "0x78"
        lpp = ((l or 0) << 2) | pp
        wbit = 0x80 if w == 1 else 0
        imm = imm_parts if not tail else []
        tail_s = tail + (imm_tail if not tail else imm_after_mem)
        body = [f"{opcode:#04x}"] + middle + imm
        res = []
        xb = (f"0x40 | {a}.vb" if rm_reg else f"{a}.vxb") if a else "0x60"
        if mp == 1 and w != 1:
            cond = (f"{a}.vb" if rm_reg else f"{a}.vxb == 0x60") if a else None
            res.append(ret(ind, ["0xC5", f"{r} | {vv} | {lpp:#x}"] + body, tail_s, cond))
            if cond is None: return res
        res.append(ret(ind, ["0xC4", f"{r} | {xb} | {mp}", f"{vv} | {wbit | lpp:#x}"] + body, tail_s))
        return res

    if enc == "evex":
        raise NotImplementedError(f"{fid}: EVEX encoding is not implemented yet")
    if rm is not None:
        a, reg, mem = rm
        i = args.index(a)
        modrm_reg = f"0xC0 | {reg3} | {a}.lo"
        modrm_mem = f"{a}.modrm | {reg3}"
        rbits = [f"{reg_expr}.rex_r"] if reg_expr else []
        is_mem = sig[i][0] == "m" if known(i) else None   # None: decided at run time
        ind = "" if known(i) else "    "
        if (reg is None and is_mem is False) or (mem is None and is_mem): out.append(bad(i))   # not this form's operand
        if reg is not None and not is_mem:
            if not known(i): out.append(f"if {a}.__class__ is {REG_CLASS[reg]}:")
            if enc == "legacy": out += legacy_return(ind, rbits + [f"{a}.rex_b"], [f"{opcode:#04x}", modrm_reg], "", r8)
            else: out += vex_return(ind, True, a, [modrm_reg], "")
        if mem is not None and is_mem is not False:
            if not known(i): out.append(f"if {a}.__class__ is Mem{'' if mem == 0 else f' and {a}.size in (0, {mem})'}:")
            if sig is None: out.append(f"{ind}if {a}.label is not None: raise _label({fid!r}, {allargs})")   # (plans check first)
            if enc == "legacy": out += legacy_return(ind, rbits + [f"{a}.rex"], [f"{opcode:#04x}", modrm_mem], f" + {a}.tail",
                                                   [x for x in r8 if x != a])
            else: out += vex_return(ind, False, a, [modrm_mem], f" + {a}.tail")
        if not known(i): out.append(bad(i))
    elif opc is not None:
        out += legacy_return("", [f"{opc}.rex_b"], [f"{opcode:#04x} | {opc}.lo"], "", r8)
    elif moffs is not None:
        out += legacy_return("", [], [f"{opcode:#04x}"], f" + _p64({moffs}.disp & 0xFFFFFFFFFFFFFFFF)", r8)
    else:
        if enc != "legacy": out += vex_return("", False, None, fixed_modrm, "")   # e.g. vzeroupper: no ModRM
        else: out += legacy_return("", [], [f"{opcode:#04x}"] + fixed_modrm, "", r8)
    cond = " and ".join(f"({c})" for c in fits) if fits else None
    if rel:   # a branch's displacement is counted from the end of the instruction, whose length is fixed
        n = str(static_length(row))
        out = [ln.replace("LEN", n) for ln in out]
        cond = cond.replace("LEN", n) if cond else None
    return out, cond, rel


_B = tuple(bytes((i,)) for i in range(256))
_PACK_BYTES = {f"_pk{n}": struct.Struct(f"{n}B").pack for n in range(1, 16)}   # _pk3(a, b, c) == bytes((a, b, c))
_p16 = struct.Struct("<H").pack
_p32 = struct.Struct("<I").pack
_p64 = struct.Struct("<Q").pack


def _bad(fid, args, i):
    from .forms import operand_error
    return operand_error(fid, args, i)


def _range(fid, args, i, value):
    from .forms import get_form
    f = get_form(fid)
    return ImmediateRangeError(f"{f.id} ({f.syntax}): operand {i + 1} value {fmt_int(value)} does not fit {f.operands[i].kind}"
                               f" (accepted: {', '.join(f'{lo:#x}..{hi:#x}' for lo, hi in f.imm_ranges(i))})")


def _label(fid, args):
    from .errors import LabelContextError
    from .forms import get_form
    f = get_form(fid)
    return LabelContextError(f"{f.id} ({f.syntax}) {fmt_operands(args)}: a label's memory operand needs an Assembler or a program"
                             " (Assembler.emit, x86gen.assemble with the label defined), which knows where the label is")


def _notabs(fid, args, i):
    from .forms import get_form
    f = get_form(fid)
    return OperandError(f"{f.id} ({f.syntax}): operand {i + 1} is {args[i]}; a moffs operand is an absolute address"
                        " (no base or index register)")


def _load_cs(fid):
    from .forms import get_form
    f = get_form(fid)
    return OperandError(f"{f.id} ({f.syntax}): cs cannot be loaded with mov (#UD; SDM Vol.2 MOV), only by a far jmp, call or ret")


def _high8(fid, args):
    from .forms import get_form
    f = get_form(fid)
    return OperandError(f"{f.mnemonic} {fmt_operands(args)}: ah/bh/ch/dh cannot be encoded in an instruction that needs"
                        " a REX prefix (needed here for spl/bpl/sil/dil, r8-r15 or REX.W; SDM Vol.2 2.2.1.2)")


# Names the generated form code sees: register classes (Gpr32, Ymm, …), fixed registers (R_eax, …), helpers.
GLOBALS = {**{c: getattr(R, c) for c in REG_CLASS.values()}, **{f"R_{n}": r for n, r in R.REGISTERS.items()},
           **_PACK_BYTES, "Mem": Mem, "_B": _B, "_p16": _p16, "_p32": _p32, "_p64": _p64, "_bad": _bad, "_range": _range, "_high8": _high8,
           "_load_cs": _load_cs, "_label": _label, "_notabs": _notabs}


def compile_form(row):
    """Compile and return (enc, fits, source) for a form-table row."""
    src, fits_src = build(row)
    ns: dict = {}
    exec(compile(src + (fits_src or ""), f"<x86gen form {row[0]}>", "exec"), GLOBALS, ns)
    return ns["enc"], ns.get("fits"), src + (fits_src or "")
