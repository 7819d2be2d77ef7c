"""Intel syntax, read and written one line at a time: ``"vaddps ymm0, ymm1, ymmword ptr [rdi+8]"`` ↔ (mnemonic, operands).

The syntax is what GNU ``objdump -d -M intel`` and iced-x86's Intel formatter print and what GNU as
(``.intel_syntax noprefix``) and llvm-mc accept: ``mnemonic op, op, ...`` with registers, immediates (``10``,
``-0x10``, ``0b101``, ``017`` octal as in GNU as, ``10h``, ``'a'``), and memory operands ``[size ptr] [seg:]
[base+index*scale+disp]`` (``rip`` as base for RIP-relative; segment overrides ``fs:[rax]``, ``qword ptr fs:0x28``),
and prefix words before the mnemonic (``lock``, ``rep``, ``xacquire``, ``bnd``, ``notrack``, ``{vex3}``, objdump's
``ss``; see `x86gen.prefixes`). Case-insensitive except in character constants and strings. GNU as's shorthands
(``imul eax, 10``, ``shr si``, ``push [rax]``, the x87 spellings …) are rewritten into a form's operands
(`SHORTHANDS`), and the compare pseudo-ops (``cmpltps``) into their instruction (`pseudo_op`).

AVX-512 decorations are read in both dialects (GNU as / llvm-mc: ``vaddps zmm1 {k1} {z}, zmm2, dword ptr
[rax]{1to16}``, ``vaddps zmm1, zmm2, zmm3, {rn-sae}``; iced-x86 / objdump: ``zmm1{k1}{z}``, ``DWORD BCST [rax]``,
``zmm1{rne-sae}``, ``zmm3{rn-sae}``) and written in the GNU as one (`format_instruction`): ``{k1}``-``{k7}`` and
``{z}`` after the destination make a `x86gen.registers.Masked`, ``{1toN}`` after a memory operand a broadcast
(`x86gen.memory.Bcst`), a rounding a `Decorations` after the operands (an ``rc=``).

Parsed operands and lines are cached by their text, so a program that repeats them parses each once. Programs
(labels, directives, data) are `x86gen.program_text`'s; `x86gen.assemble` is `x86gen.text`'s.
"""
from __future__ import annotations

import re
import struct

from .encoder import encode, select
from .encoding.decorated import encode_form
from .errors import (
    AsmSyntaxError,
    EncodeError,
    EvexOperandError,
    ImmediateRangeError,
    OperandError,
    PrefixError,
    UnknownMnemonicError,
    UnsupportedRegisterError,
    clip,
    fmt_int,
    fmt_operands,
    wrong_type,
)
from .evex import RD_SAE, RN_SAE, ROUNDING_NAMES, RU_SAE, RZ_SAE, SAE, Rounding, is_rounding
from .forms import forms_of
from .memory import SIZE_BITS, A32Mem, Bcst, Mem, VsibMem
from .prefixes import WORDS as PREFIX_WORDS
from .prefixes import default_segment
from .registers import ALIASES, REGISTERS, X86_REGISTER_NAMES, KReg, Masked, Reg, SegReg, gpr
from .selection.candidates import SELECTOR_READ
from .selection.request import EVEX_PREFIX, REX2_PREFIX, VEX_PREFIX, canonical


class Regex:
    """A regular expression compiled when it is first used: this module and x86gen.program_text have some forty, most
    programs use a few, and compiling them all costs milliseconds at import. After the first use its methods are the
    compiled pattern's own (no call in between)."""

    def __init__(self, pattern: str, flags: int = 0): self._args = (pattern, flags)

    def _compiled(self):
        rx = re.compile(*self._args)   # its methods go into the instance's dict, in front of these (no __getattr__:
        self.__dict__.update(match=rx.match, fullmatch=rx.fullmatch, search=rx.search, sub=rx.sub,   # it would
                             finditer=rx.finditer, findall=rx.findall, split=rx.split)   # slow every look-up)
        return rx

    def match(self, *a): return self._compiled().match(*a)
    def fullmatch(self, *a): return self._compiled().fullmatch(*a)
    def search(self, *a): return self._compiled().search(*a)
    def sub(self, *a): return self._compiled().sub(*a)
    def finditer(self, *a): return self._compiled().finditer(*a)
    def findall(self, *a): return self._compiled().findall(*a)
    def split(self, *a): return self._compiled().split(*a)


# x87 st(i) as GNU as, llvm-mc, iced-x86 and objdump write it: `st` is st(0), the stack top (SDM Vol.1 8.1.2)
_ST_NAMES = {"st": REGISTERS["st0"], **{f"st({i})": REGISTERS[f"st{i}"] for i in range(8)}}
_REGS = {**REGISTERS, **ALIASES, **_ST_NAMES}
# x86-64 register names x86gen has no forms for: an error that names the register, never a label.
# Derived from REGISTERS, so a register file added there leaves this set by itself.
UNSUPPORTED_REGISTERS = X86_REGISTER_NAMES - _REGS.keys()
_SEGMENT_OVERRIDE = Regex(r"(es|cs|ss|ds|fs|gs)\s*:")
_OPERANDS: dict[str, object] = {}
_DECORATED = (Masked, Bcst)   # AVX-512 operands: `format_operand` prints them in the GNU as / llvm-mc dialect


class Decorations:
    """What an EVEX line says besides its operands: its rounding (``rc``, an `x86gen.RN_SAE` … value or None) and the
    element counts its broadcasts wrote (``bcst``: ``((operand index, N), …)`` for ``{1toN}``). `parse_line` puts it
    after the operands when there is either; `split_decorations` takes it off again."""

    __slots__ = ("rc", "bcst")

    def __init__(self, rc: int | None = None, bcst: tuple = ()):
        self.rc, self.bcst = rc, bcst

    def __eq__(self, other): return isinstance(other, Decorations) and (self.rc, self.bcst) == (other.rc, other.bcst)
    def __hash__(self): return hash((self.rc, self.bcst))
    def __repr__(self) -> str: return f"Decorations(rc={self.rc!r}, bcst={self.bcst!r})"
    def __str__(self) -> str:
        if self.rc is None: return ""
        return rounding_text(self.rc)


# The AVX-512 gathers, scatters and their prefetches (SDM Vol.2 VGATHERDPS/VPSCATTERDD/VGATHERPF0DPS…), whose mask
# iced-x86's Intel formatter prints as an operand of its own: `vgatherdps zmm1, k1, dword ptr [rax+zmm2*4]`.
GATHER_MNEMONICS = tuple(
    [f"v{p}gather{i}{t}" for p, ts in (("", ("ps", "pd")), ("p", ("d", "q"))) for i in ("d", "q") for t in ts]
    + [f"v{p}scatter{i}{t}" for p, ts in (("", ("ps", "pd")), ("p", ("d", "q"))) for i in ("d", "q") for t in ts]
    + [f"v{w}pf{h}{i}p{t}" for w in ("gather", "scatter") for h in "01" for i in "dq" for t in "sd"])


def _vsib(x) -> bool:
    """A VSIB memory operand, with a 64- or a 32-bit address (`A32Mem`)?"""
    return x.__class__ is VsibMem or (x.__class__ is A32Mem and x.plain.__class__ is VsibMem)


def gather_mask(mn: str, ops: tuple) -> tuple[str, tuple]:
    """iced's ``vgatherdps zmm1, k1, dword ptr [rax+zmm2*4]`` is ``vgatherdps zmm1 {k1}, dword ptr [rax+zmm2*4]``;
    ``vscatterdps dword ptr [rax+zmm2*4], k1, zmm1`` and ``vgatherpf0dps dword ptr [rax+zmm2*4], k1`` put the mask on
    the VSIB operand (`GATHER_MNEMONICS`). The VEX gathers' xmm/ymm mask operand is left as it is."""
    try:
        if len(ops) == 3 and ops[1].__class__ is KReg and ops[1].num:
            a, k, b = ops
            if isinstance(a, Reg) and _vsib(b): return mn, (Masked(a, k), b)
            if _vsib(a) and isinstance(b, Reg): return mn, (Masked(a, k), b)
        if len(ops) == 2 and _vsib(ops[0]) and ops[1].__class__ is KReg and ops[1].num:
            return mn, (Masked(ops[0], ops[1]),)
    except EncodeError: pass   # a mask x86gen.Masked refuses: the operands as written (no form takes them)
    return mn, ops


_CACHE_MAX = 1 << 16   # entries of each text cache (operands, lines)
# size keywords: objdump's and GNU as's, and iced-x86's for the x87 environment/state images (fpuenv14 ...); `mmword`
# (iced-x86's, MASM's and llvm-mc's keyword of an MMX operand) is GNU as's other name of qword (64 bits, wherever qword is
# taken: `movq xmm0, mmword ptr [rax]`, `fld mmword ptr [rax]`), and `oword` of xmmword
_SIZE_WORDS = ("byte|word|dword|fword|qword|mmword|tbyte|xmmword|ymmword|zmmword|oword|fpuenv14|fpuenv28|fpustate94"
               "|fpustate108|mem384")
_SIZE_PREFIX = Regex(rf"^({_SIZE_WORDS})\s+(?:ptr\s*)?(.*)$")
_BRACKETED_SIZE = Regex(rf"^\[\s*((?:{_SIZE_WORDS})\s+ptr\b.*)\]$", re.I | re.S)


def unwrap_sized(t: str) -> str:
    """gcc's doubled brackets, ``[QWORD PTR [rbx+48]]`` and ``[QWORD PTR .L5[0+rax*8]]`` (what it writes for an
    indirect call or jump through memory), as the operand inside them, ``QWORD PTR [rbx+48]``, as GNU as reads them;
    any other text as it is."""
    m = _BRACKETED_SIZE.match(t)
    if m is None: return t
    inner = m.group(1)
    depth = 0
    for c in inner:   # the outer pair must enclose the whole operand: `[dword ptr x] + [y]` is not unwrapped
        depth += (c == "[") - (c == "]")
        if depth < 0: return t
    return inner.strip() if depth == 0 else t


def check_ptr(m, text: str) -> None:
    """Refuse a size keyword without ``ptr`` (``dword [rax]``; ``m`` is `_SIZE_PREFIX`'s match in ``text`` or in its
    lower-case copy): GNU as reads ``dword`` there as the number 4 (``[rax+4]``), llvm-mc refuses it."""
    if m.string[m.end(1):m.start(2)].strip()[:3] != "ptr":
        w = m.group(1)
        raise AsmSyntaxError(f"{w} without ptr: write {w} ptr {clip(text[m.start(2):].strip())[1:-1]} (GNU as reads"
                             f" `{w} [...]` as a number, its size in bytes, plus the address; llvm-mc refuses it)")
_TERM = Regex(r"\s*([+-]?)\s*([^+\-\s]+)\s*")


# Integer literals as GNU as reads them in Intel syntax (ASCII digits only: Python's int() would also
# take `١٢`, `１` and `1_000`): `0x1f`, `0b101`, a leading 0 for octal (`017` is 15, `08` an error,
# as in GNU as and llvm-mc), decimal; and the `h` suffix of iced-x86's and MASM's output (`0ffh`,
# starting with a digit). Character constants (`'a'`) are read before the text is lower-cased
# (`_Parser.operand`), since case matters in them.
_INT = Regex(r"([+-]?)\s*(?:0[xX]([0-9a-fA-F]+)|0[bB]([01]+)|(0[0-7]*)|([1-9][0-9]*)|([0-9][0-9a-fA-F]*)[hH])", re.ASCII)


def parse_int(s: str) -> int:
    """An integer literal: ``0x1f``, ``0b101``, ``017`` (octal, as GNU as), ``15``, ``0fh``; an optional sign.

    Anything else raises `AsmSyntaxError` (a `ValueError`)."""
    m = _INT.fullmatch(s.strip())
    if m is None:
        t = s.strip().lstrip("+-").strip()
        why = (" (a leading 0 means octal, as in GNU as)" if t[:1] == "0" and t.isascii() and t.isdigit()
               else " (no digit separators)" if "_" in t and t[:1].isdigit() else "")
        raise AsmSyntaxError(f"not a number: {clip(s.strip())}{why}")
    sign, x, b, o, d, h = m.groups()
    try: v = int(x, 16) if x else int(b, 2) if b else int(o, 8) if o else int(d) if d else int(h, 16)
    except ValueError: raise AsmSyntaxError(f"number too long: {clip(s.strip())}") from None   # > 4300 decimal digits
    return -v if sign == "-" else v


# ---- expressions ------------------------------------------------------------------------------------------------
# GNU as's expressions (as/expr.c, and the word operators of Intel syntax, tc-i386-intel.c), read where a plain number
# is not: `[rsp+8*3]`, `mov eax, 1<<20`, `and eax, ~15`, `.byte 1+2, 3*4`. Precedence, highest first (GNU as 2.40
# agrees on every pair: `2+3<<1` is 8, `1|2-1` 2, `3|4&1` 1, `16>>1*2` 16, `1&&0||1` 1):
#   unary - + ~ ! not;   * / % << >> mod shl shr;   | & ^ ! (or-not) or and xor;   + -;
#   < > <= >= == != <> eq ne lt le gt ge (true is -1);   &&;   ||   (all left to right)
# Values are GNU as's 64-bit ones, computed exactly: a result outside [-2**63, 2**64) is an `ImmediateRangeError` (GNU
# as wraps it silently: `.quad 0x8000000000000000*2` is 0), and so are a shift count outside 0-63 and a division by
# zero (GNU as warns and goes on). / and % truncate toward zero, and they, the comparisons and >> (a logical shift)
# read their operands as GNU as's signed 64-bit values (0xffffffffffffffff/2 is 0). In an instruction's operand GNU as
# refuses `=` (invalid character), so == != <= >= are refused there (eq ne le ge are taken); directives take them.
_EXPR_TOKEN = Regex(r"\s*(?:([0-9][\w.$@]*)|([A-Za-z_.$][\w.$@]*)|(<<|>>|<>|<=|>=|==|!=|&&|\|\||[-+*/%&|^~!<>()]))",
                    re.ASCII)
_WORD_OPS = {"and": "&", "or": "|", "xor": "^", "not": "~", "mod": "%", "shl": "<<", "shr": ">>", "eq": "==",
             "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_RANK = {"*": 8, "/": 8, "%": 8, "<<": 8, ">>": 8, "|": 7, "&": 7, "^": 7, "!": 7, "+": 5, "-": 5,
         "<": 4, ">": 4, "<=": 4, ">=": 4, "<>": 4, "==": 4, "!=": 4, "&&": 3, "||": 2}
LOCAL_REF = Regex(r"([0-9]+)([bf])$")   # GNU's local label references `1b` / `1f` (label number, direction)
# what makes operand text an expression rather than a number or a name (`_parse_address`, `parse_operand`)
EXPRESSION = Regex(r"[-+()<>~|&^%/!*=]|\b(?:and|or|xor|not|mod|shl|shr|eq|ne|lt|le|gt|ge)\b", re.I | re.ASCII)
_M64 = (1 << 64) - 1


class Relocatable:
    """An expression's value that names labels: ``plus`` - ``minus`` + ``addend``, the labels as the ``symbol`` callback
    of `evaluate` gave them (resolved after layout, by the caller). Only + and - apply to it."""

    __slots__ = ("plus", "minus", "addend")

    def __init__(self, plus: tuple = (), minus: tuple = (), addend: int = 0):
        self.plus, self.minus, self.addend = plus, minus, addend


def _tokens(s: str, text: str) -> list:
    """``s`` as (kind, value) tokens: ("n", int), ("id", name), ("op", operator; word operators as their sign)."""
    out, pos, n = [], 0, len(s)
    while pos < n:
        m = _EXPR_TOKEN.match(s, pos)
        if m is None:
            rest = s[pos:].strip()
            if rest == "": break
            if not rest.isascii(): raise unknown_word(rest.split()[0], text)   # a homoglyph: named
            raise AsmSyntaxError(f"cannot parse {clip(rest)} in {clip(text)}")
        pos = m.end()
        num, name, op = m.groups()
        if num is not None:
            out.append(("id", num) if LOCAL_REF.match(num) else ("n", parse_int(num)))
        elif name is not None:
            w = _WORD_OPS.get(name.lower())
            out.append(("op", w) if w is not None else ("id", name))
        else:
            out.append(("op", op))
    if not out: raise AsmSyntaxError(f"empty expression in {clip(text)}")
    return out


def _s64(v: int) -> int: return ((v & _M64) ^ (1 << 63)) - (1 << 63)


def _fit(v: int, text: str) -> int:
    if not -(1 << 63) <= v <= _M64:
        raise ImmediateRangeError(f"{clip(text)}: {fmt_int(v)} does not fit in 64 bits (GNU as would wrap it)")
    return v


def _binary(op: str, a, b, text: str):
    """``a op b``: ints, or for + and - `Relocatable` values too."""
    if a.__class__ is Relocatable or b.__class__ is Relocatable:
        ra = a if a.__class__ is Relocatable else Relocatable((), (), a)
        rb = b if b.__class__ is Relocatable else Relocatable((), (), b)
        if op == "+": return Relocatable(ra.plus + rb.plus, ra.minus + rb.minus, _fit(ra.addend + rb.addend, text))
        if op == "-": return Relocatable(ra.plus + rb.minus, ra.minus + rb.plus, _fit(ra.addend - rb.addend, text))
        raise AsmSyntaxError(f"{clip(text)}: `{op}` of a label (only label+number, label-number and label-label are taken)")
    if op == "+": return _fit(a + b, text)
    if op == "-": return _fit(a - b, text)
    if op == "*": return _fit(a * b, text)
    if op in ("/", "%"):
        x, y = _s64(a), _s64(b)
        if y == 0: raise ImmediateRangeError(f"{clip(text)}: division by zero")
        q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)   # C's: toward zero
        return _fit(q, text) if op == "/" else x - q * y
    if op in ("<<", ">>"):
        n = _s64(b)
        if not 0 <= n <= 63: raise ImmediateRangeError(f"{clip(text)}: shift count {n} is not between 0 and 63")
        return _fit(a << n, text) if op == "<<" else (a & _M64) >> n
    if op in ("&", "|", "^", "!"):
        if op == "!": a, b, op = _s64(a), ~_s64(b), "|"   # GNU as's binary ! is or-not
        elif a < 0 or b < 0: a, b = _s64(a), _s64(b)
        return a & b if op == "&" else a | b if op == "|" else a ^ b
    if op == "&&": return int(bool(a) and bool(b))
    if op == "||": return int(bool(a) or bool(b))
    x, y = _s64(a), _s64(b)
    r = (x < y if op == "<" else x > y if op == ">" else x <= y if op == "<=" else x >= y if op == ">=" else x == y if op == "=="
         else x != y)
    return -1 if r else 0


def evaluate(text: str, symbol=None, toks: list | None = None, directive: bool = False):
    """The value of expression ``text`` (see above): an int, or a `Relocatable` where ``symbol`` gives one. ``symbol(name)``
    gives the value of a name (an int or a `Relocatable`) or raises; without it a name is an error (`unknown_word`).
    ``toks``: the tokens to read, of an expression in ``text`` (`_tokens`). ``directive``: the expression of a directive,
    where GNU as takes == != <= >=; in an instruction's operand it refuses their `=` (`eq`, `ne`, `le`, `ge` there)."""
    if not directive and "=" in text:
        raise AsmSyntaxError(f"{clip(text)}: `=` in an instruction's operand (GNU as refuses it: write eq, ne, le or ge"
                             " for == != <= >=)")
    if toks is None: toks = _tokens(text, text)
    pos = 0

    def primary():
        nonlocal pos
        if pos >= len(toks): raise AsmSyntaxError(f"{clip(text)}: an operand is missing at the end")
        k, v = toks[pos]
        pos += 1
        if k == "n": return v
        if k == "id":
            if v.lower() in _REGS: raise AsmSyntaxError(f"register {v} in expression {clip(text)}")
            if symbol is None: raise unknown_word(v, text)
            return symbol(v)
        if v == "(":
            x = binary(0)
            if pos >= len(toks) or toks[pos] != ("op", ")"): raise AsmSyntaxError(f"missing ')' in {clip(text)}")
            pos += 1
            return x
        if v in ("-", "+", "~", "!"):
            x = primary()
            if v == "+": return x
            if x.__class__ is Relocatable:
                if v == "-": return Relocatable(x.minus, x.plus, _fit(-x.addend, text))
                raise AsmSyntaxError(f"{clip(text)}: `{v}` of a label")
            return _fit(-x, text) if v == "-" else ~_s64(x) if v == "~" else int(x == 0)
        raise AsmSyntaxError(f"{clip(text)}: an operand is missing before {v!r}")

    def binary(min_rank: int):
        nonlocal pos
        x = primary()
        while pos < len(toks):
            k, op = toks[pos]
            rank = _RANK.get(op, 0) if k == "op" else 0
            if rank <= min_rank: break
            pos += 1
            x = _binary(op, x, binary(rank), text)
        return x

    v = binary(0)
    if pos < len(toks):
        k, t = toks[pos]
        if k == "op": raise AsmSyntaxError(f"{clip(text)}: unexpected {t}")
        raise AsmSyntaxError(f"missing + or - (or another operator) before {clip(str(t))} in {clip(text)}")
    return v


_STAR = Regex(r"\s*\*\s*")


def _parse_address(inner: str, size: int, text: str) -> Mem:
    try: base, index, scale, disp, zero_index = _address_terms(inner, text)
    except AsmSyntaxError:
        if EXPRESSION.search(inner) is None: raise
        base, index, scale, disp, zero_index = _expression_terms(inner, text)   # `[rsp+8*3]`, `[rax+(1<<4)]`
    if zero_index and index is not None: raise AsmSyntaxError(f"riz and an index register in {clip(text)}")
    if base is not None and base.kind in ("xmm", "ymm", "zmm"):
        # a VSIB address written with the vector register first or alone (`[xmm2+0x10]`, `[xmm2+rax]`): GNU as and
        # llvm-mc read the vector register as the index, whatever its place
        if index is None: base, index = None, base
        elif scale == 1 and index.kind == "r64": base, index = index, base
    if base is not None and base.kind == "rip" and index is not None:
        raise AsmSyntaxError(f"{base.name} with an index register in {clip(text)} (a RIP-relative address has none, SDM Vol.2"
                             " 2.2.1.6)")
    if base is None and index is None: disp = _abs_disp(disp)
    elif 1 << 63 <= disp < 1 << 64: disp -= 1 << 64   # objdump: `[rip+0xffffffffffffffff]` is disp32 -1
    return Mem(base, index, scale, disp, size)


def _address_terms(inner: str, text: str) -> tuple:
    """(base, index, scale, disp, riz seen) of an address's text ``inner`` made of registers, ``index*scale`` and numbers
    joined by + and -."""
    base = index = None
    scale, disp = 1, 0
    pos = 0
    zero_index = False
    inner = _STAR.sub("*", inner.strip())   # `rbx * 2` as `rbx*2`
    if not inner: raise AsmSyntaxError(f"empty memory operand {clip(text)}")
    while pos < len(inner):
        m = _TERM.match(inner, pos)
        if not m or m.end() == pos: raise AsmSyntaxError(f"cannot parse memory operand {clip(text)}")
        sign, term = m.group(1), m.group(2)
        if not sign and pos: raise AsmSyntaxError(f"missing + or - before {clip(term)} in {clip(text)}")
        pos = m.end()
        if "*" in term:
            a, _, b = term.partition("*")
            if "riz" in (a, b) and sign != "-" and base is not None:
                # GNU's zero index `[r13+riz*1]` (objdump's spelling of a SIB byte without an index): no index; the
                # bytes x86gen gives have no SIB byte where none is needed (the same address), a sibmem operand
                # gets its SIB byte anyway
                n = b if a == "riz" else a
                if n not in ("1", "2", "4", "8"): raise AsmSyntaxError(f"bad scale {clip(n)} in {clip(text)}")
                zero_index = True
                continue
            r, n = (a, b) if a in _REGS else (b, a)
            if r not in _REGS or sign == "-":
                for w in (a, b):
                    if w in UNSUPPORTED_REGISTERS or not w.isascii(): raise unknown_word(w, text)
                raise AsmSyntaxError(f"bad index term {clip(term)} in {clip(text)}")
            if index is not None: raise AsmSyntaxError(f"two index registers in {clip(text)}")
            try: index, scale = _REGS[r], parse_int(n)
            except ValueError: raise AsmSyntaxError(f"bad scale {clip(n)} in {clip(text)}") from None
        elif term in _REGS:
            if sign == "-": raise AsmSyntaxError(f"a register cannot be subtracted in {clip(text)}")
            if base is None: base = _REGS[term]
            elif index is None:
                index = _REGS[term]
                if term in ("rsp", "esp"): base, index = index, base   # `[rax+rsp]`: rsp can only be the base (GNU as)
            else: raise AsmSyntaxError(f"too many registers in {clip(text)}")
        else:
            try: v = parse_int(term)
            except AsmSyntaxError:
                if "0" <= term[:1] <= "9": raise            # a malformed number: say so
                raise unknown_word(term, text) from None
            disp += -v if sign == "-" else v
    return base, index, scale, disp, zero_index


def _expression_terms(inner: str, text: str) -> tuple:
    """`_address_terms` of an address with expressions: split at the + and - outside parentheses (the operators of
    lowest precedence but the comparisons, which an address does not take), each term a register, ``index*scale`` /
    ``scale*index`` with a constant scale, or a constant (`evaluate`)."""
    toks = _tokens(inner, text)
    terms, cur, sign, depth, after_operand = [], [], "+", 0, False
    for tok in toks:
        k, v = tok
        if k == "op":
            if v == "(": depth += 1
            elif v == ")": depth -= 1
            if depth == 0 and v in ("+", "-") and after_operand:
                terms.append((sign, cur))
                cur, sign, after_operand = [], v, False
                continue
            if depth == 0 and _RANK.get(v, 9) < 5:
                raise AsmSyntaxError(f"{v} in memory operand {clip(text)} (an address adds registers and numbers)")
            after_operand = v == ")"
        else: after_operand = True
        cur.append(tok)
    terms.append((sign, cur))
    base = index = None
    scale, disp, zero_index = 1, 0, False
    for sign, ts in terms:
        regs = [i for i, (k, v) in enumerate(ts) if k == "id" and (v in _REGS or v == "riz")]
        if not regs:
            v = _constant(ts, inner, text)
            disp = _fit(disp - v if sign == "-" else disp + v, text)
            continue
        if sign == "-": raise AsmSyntaxError(f"a register cannot be subtracted in {clip(text)}")
        if len(regs) > 1: raise AsmSyntaxError(f"cannot parse memory operand {clip(text)}")
        i = regs[0]
        r = ts[i][1]
        if r == "riz":   # GNU as 2.40 reads `[rax+riz*1+2*4]` as [rax+0] (disp32), and refuses `riz*(2)`
            raise AsmSyntaxError(f"riz in a memory operand with an expression, {clip(text)}: write the displacement as a number")
        if len(ts) == 1:
            if base is None: base = _REGS[r]
            elif index is None:
                index = _REGS[r]
                if r in ("rsp", "esp"): base, index = index, base   # `[rax+rsp]`: rsp can only be the base (GNU as)
            else: raise AsmSyntaxError(f"too many registers in {clip(text)}")
            continue
        if i == 0 and ts[1] == ("op", "*"): st = ts[2:]
        elif i == len(ts) - 1 and ts[-2] == ("op", "*"): st = ts[:-2]
        else: raise AsmSyntaxError(f"bad index term with {r} in {clip(text)}")
        try: n = _constant(st, inner, text)
        except AsmSyntaxError as ex: raise AsmSyntaxError(f"bad scale in {clip(text)}: {ex}") from None
        if n not in (1, 2, 4, 8): raise AsmSyntaxError(f"bad scale {n} in {clip(text)}")
        if index is not None: raise AsmSyntaxError(f"two index registers in {clip(text)}")
        else: index, scale = _REGS[r], n
    return base, index, scale, disp, zero_index


def _constant(ts: list, inner: str, text: str) -> int:
    """The value of tokens ``ts`` of an address's text (`evaluate`)."""
    if not ts: raise AsmSyntaxError(f"cannot parse memory operand {clip(text)}")
    return evaluate(text, None, ts)


# `[size ptr] [base + index*scale ± disp]` with registers and a hex/decimal displacement, in one match;
# anything else (a leading index, `10h`, `ds:`, errors) takes `_parse_address`, which reads the same. A decimal
# displacement has 20 digits at most here (2^64 has 20): a longer one takes `_parse_address` too, whose `parse_int` says
# what is wrong with it (int() refuses more than 4300 digits with a bare ValueError).
_SIMPLE = Regex(rf"(?:({_SIZE_WORDS})\s+ptr\s*)?"
                     r"\[\s*([a-z]\w*)\s*(?:\+\s*([a-z]\w*)(?:\*([1248]))?\s*)?(?:([+-])\s*(0x[0-9a-f]+|[1-9][0-9]{0,19}|0)\s*)?\]",
                     re.ASCII)


# The same in the spelling x86gen, objdump and compilers print (no spaces, a size keyword with ``ptr``): a shorter
# match (`_SIMPLE` is tried when it fails; the size keyword is checked after the match, `_SIZE_OF`).
_PRINTED = Regex(r"(?:([a-z]+) ptr )?\[([a-z][a-z0-9]*)(?:\+([a-z][a-z0-9]*)(?:\*([1248]))?)?"
                      r"(?:([+-])(0x[0-9a-f]+|[1-9][0-9]{0,19}|0))?\]")
_SIZE_OF = {**{w: SIZE_BITS.get(w, 128) for w in _SIZE_WORDS.split("|")}, "mmword": 64}   # size keyword -> bits (oword: 128)
# the registers `_simple_address` takes as a base (a vector register first is VSIB: `_parse_address` reads it as the index)
_ADDRESS_BASES = {name: r for name, r in _REGS.items() if r.kind not in ("xmm", "ymm", "zmm")}


_BRACKETS = Regex(r"\[([^\[\]]*)\]")


def _join_brackets(t: str, text: str) -> str:
    """GNU as's addresses in several parts, ``8[rax]``, ``-8[rbp]``, ``[rax]+4``, ``[rax+4][rcx]``, ``[rax]+[rcx]``, as one
    bracketed address whose terms are those of every part (what GNU as encodes)."""
    parts, pos = [], 0
    for m in _BRACKETS.finditer(t):
        parts += (t[pos:m.start()], m.group(1))
        pos = m.end()
    parts.append(t[pos:])
    terms: list[str] = []
    for k, p in enumerate(parts):
        p = p.strip()
        if k % 2 == 0:   # text outside the brackets: a displacement, or a + or - between parts
            if "[" in p or "]" in p: raise AsmSyntaxError(f"unbalanced brackets in {clip(text)}")
            if p[-1:] == "+": p = p[:-1].strip()
            elif p[-1:] == "-": raise AsmSyntaxError(f"an address cannot be subtracted in {clip(text)}")
        if p: terms.append(p if p[0] in "+-" or not terms else "+" + p)
    return "[" + "".join(terms) + "]"


def _simple_address(t: str) -> Mem | None:
    m = _PRINTED.fullmatch(t) or _SIMPLE.fullmatch(t)
    if m is None: return None
    size, b, i, scale, sign, d = m.groups()
    base = _ADDRESS_BASES.get(b)
    if base is None: return None
    index = None
    if i:
        index = _REGS.get(i)
        if index is None or base.kind == "rip": return None
        if not scale and (i == "rsp" or i == "esp"): base, index = index, base   # `[rax+rsp]` (`_parse_address`)
    bits = _SIZE_OF.get(size) if size else 0
    if bits is None: return None   # (`_PRINTED` takes any word before ptr)
    disp = 0
    if d:
        disp = int(d, 16) if d[1:2] == "x" else int(d)
        if sign == "-": disp = -disp
        elif 1 << 63 <= disp < 1 << 64: disp -= 1 << 64   # objdump: `[rip+0xffffffffffffffff]` is disp32 -1
    return Mem(base, index, int(scale) if scale else 1, disp, bits)


def unknown_word(term: str, text: str) -> EncodeError:
    """The error for ``term`` (in operand ``text``) that is no register, number or label: a register of
    another register file (`UnsupportedRegisterError`), a non-ASCII word (a homoglyph: Cyrillic ``а``
    in ``eax``), or an unknown symbol (`AsmSyntaxError`)."""
    key = term.strip().lower()
    if "(" in key: key = "".join(key.split())                 # st( 1 )
    where = "" if text.strip().lower() == term.strip().lower() else f" in {clip(text.strip())}"
    if key in UNSUPPORTED_REGISTERS:
        return UnsupportedRegisterError(f"register {key} is not supported by x86gen (yet){where}")
    if not term.isascii():
        ch = next(c for c in term if not c.isascii())
        return AsmSyntaxError(f"non-ASCII character {ch!r} (U+{ord(ch):04X}) in {clip(term.strip())}{where}: registers, "
                              "numbers and labels are ASCII")
    return AsmSyntaxError(f"unknown symbol {clip(term)}{where}")


def _abs_disp(disp: int) -> int:
    """An absolute address as `Mem` takes it: objdump and iced print `[0xfffffffffffffff0]` for disp32 -0x10
    (the CPU sign-extends it). `[0xfffffff0]` is that address, out of disp32 reach (a moffs or an error, as GNU as
    reads it; llvm-mc 14 wraps it to disp32 -0x10, another address)."""
    if (1 << 64) - (1 << 31) <= disp < 1 << 64: return disp - (1 << 64)
    return disp


def parse_operand(text: str):
    """One operand (lower-case text) → register, `Mem` or int. Cached."""
    hit = _OPERANDS.get(text)
    if hit is not None: return hit
    t = text.strip()
    if t in _REGS: v = _REGS[t]
    elif t[:3] == "st(" and "".join(t.split()) in _REGS: v = _REGS["".join(t.split())]   # st( 1 )
    elif t[-1:] == "]" and (v := _simple_address(t)) is not None: pass   # the common `[size ptr] [base+index*s+disp]`
    else:
        if t[:1] == "[": t = unwrap_sized(t)   # gcc's `[QWORD PTR [rbx+48]]`
        size = 0
        m = _SIZE_PREFIX.match(t)
        if m:
            check_ptr(m, t)
            size = _SIZE_OF[m.group(1)]
            t = m.group(2).strip()
        seg = None
        sm = _SEGMENT_OVERRIDE.match(t)
        if sm:   # `fs:[0x28]`, `fs:0x28`, objdump's `ds:0x10`: a segment override (x86gen.prefixes)
            seg, t = sm.group(1), t[sm.end():].strip()
            if _SEGMENT_OVERRIDE.match(t):   # GNU as warns "redundant segment overrides" and keeps the first
                raise PrefixError(f"two segment overrides in {clip(text)}")
        if "[" in t and (t[0] != "[" or t[-1] != "]" or t.count("[") > 1): t = _join_brackets(t, text)   # 8[rax]
        if t.startswith("["):
            if not t.endswith("]"): raise AsmSyntaxError(f"missing ']' in {clip(text)}")
            v = _parse_address(t[1:-1], size, text)
        elif size or seg:   # objdump's `dword ptr ds:0x10`, and unsized `lea ax, ds:0x0`
            try: a = parse_int(t)
            except ValueError:
                if EXPRESSION.search(t) is None: raise AsmSyntaxError(f"cannot parse memory operand {clip(text)}") from None
                a = evaluate(t)   # `dword ptr ds:8*3`
            v = Mem(None, None, 1, _abs_disp(a), size)
        else:
            try: v = parse_int(t)
            except AsmSyntaxError:
                if EXPRESSION.search(t) is None:
                    if "0" <= t[:1] <= "9": raise               # a malformed number: say so
                    w = unknown_word(t, text)
                    if w.__class__ is not AsmSyntaxError: raise w from None
                    raise AsmSyntaxError(f"unknown operand {clip(text.strip())}") from None
                v = evaluate(t)   # `1<<20`, `~15`, `-(3)`: GNU as's expressions
        # the segment the address uses anyway (ds, or ss with an rbp/rsp base) needs no byte, as GNU as leaves it out; but
        # `ds:[rdi]` stays a `SegMem` (no byte either, `x86gen._prefixed`): where it is a string instruction's es:[rdi], a
        # segment other than es is an error (SDM Vol.2 MOVS: ES cannot be overridden; GNU as: "must use `es' segment")
        if seg is not None and (seg != default_segment(v) or (v.index is None and getattr(v.base, "num", None) == 7)):
            v = v.with_segment(seg)
    if len(_OPERANDS) >= _CACHE_MAX: _OPERANDS.clear()   # bounded: start again rather than keep the oldest
    _OPERANDS[text] = v
    return v


def split_line(line: str) -> tuple[str, list[str]]:
    """``"add eax, [rdi+4]"`` → ``("add", ["eax", "[rdi+4]"])``; the text must be lower case."""
    line = line.strip()
    if "\t" in line: line = line.replace("\t", " ")   # `xor\teax, eax` (compiler output)
    if line[-5:] == "only)" and _X87_ONLY.fullmatch(line): line = line[:line.index("(")]   # objdump: `fneni(8087 only)`
    sp = line.find(" ")
    if sp < 0:
        return line, []
    mn, rest = line[:sp], line[sp + 1:]
    if mn == EVEX_PREFIX or mn == REX2_PREFIX:
        # `{evex} vaddps xmm1, xmm2, xmm3`: GNU as's / llvm-mc's pseudo-prefix, EVEX even where VEX would do; `{rex2} add rax,
        # rbx`: llvm-mc-22's, APX's REX2 prefix even where REX or none would do (d5 08 01 d8)
        mn2, ops = split_line(rest)
        if mn2.startswith("{") or mn2 in _PREFIXES:
            raise AsmSyntaxError(f"{clip(line)}: {mn} must precede a mnemonic")
        return mn + mn2, ops
    if mn in _SIZED_WORDS:   # iced-x86's `data16 push 5`, `ret far`: sized mnemonics (pushw, retfd)
        sized = iced_sized(mn, rest)
        if sized is not None: return sized[0], sized[1].split(",") if sized[1].strip() else []
    if mn in PREFIX_WORDS:
        mn, rest = prefix_words(mn, rest)
        if " " not in mn and not rest: return mn, []
    elif mn in _PREFIXES:
        raise AsmSyntaxError(f"instruction prefix {clip(mn)} is not supported")
    far = far_memory(mn, rest)
    if far is not None: return far[0], [far[1]]
    if mn in _FAR_MNEMONICS: raise AsmSyntaxError(f"{mn}: far branches are not supported by x86gen")
    return mn, rest.split(",") if rest.strip() else []


def prefix_words(mn: str, rest: str) -> tuple[str, str]:
    """``lock``, ``rep``, ``{vex3}``, objdump's ``ss`` … before a mnemonic (`x86gen.prefixes.WORDS`): the mnemonic with
    its prefix words (``"lock add"``, which `x86gen.encode` takes) and the operand text. ``{vex}`` asks for a VEX form:
    it is checked (`vex_pseudo_prefix`) and becomes the mnemonic's `VEX_PREFIX` (``{vex}vpdpbusd``), which
    `x86gen.selection.candidates` restricts to the VEX forms."""
    words = []
    while mn in PREFIX_WORDS:
        words.append(mn)
        rest = rest.strip()
        sp = rest.find(" ")
        mn, rest = (rest, "") if sp < 0 else (rest[:sp], rest[sp + 1:])
        if not mn: raise AsmSyntaxError(f"prefix {clip(words[-1])} without an instruction")
    if mn in _FAR_MNEMONICS: raise AsmSyntaxError(f"{mn}: far branches are not supported by x86gen")
    # iced-x86's `rep xsha1`, objdump's `repz xsha1`: the F3 of the opcode
    if words[-1] in ("rep", "repe", "repz") and _rep_in_opcode(mn): words.pop()
    if "{vex}" in words:
        mn, rest = vex_pseudo_prefix(mn + " " + rest)
        mn = VEX_PREFIX + mn
        words.remove("{vex}")
    return " ".join([*words, mn]), rest


def _rep_in_opcode(mn: str) -> bool:
    """Is ``mn`` a VIA PadLock instruction whose opcode begins with F3 (``xcryptecb``: F3 0F A7 C8)? iced-x86
    prints that F3 as the word ``rep`` (``rep xcryptecb``), objdump as ``repz``, GNU as writes the same bytes for both spellings (VIA
    PadLock Programming Guide: the instructions are written with the REP prefix)."""
    try: fs = forms_of(canonical(mn))
    except EncodeError: return False
    return bool(fs) and all(f.cpuid.startswith("PADLOCK") and f.encoding_kind == "legacy" and f.mandatory_prefix == 2
                            for f in fs)


def vex_pseudo_prefix(rest: str) -> tuple[str, str]:
    """``{vex} vpdpbusd xmm1, xmm2, xmm3`` (what objdump prints for AVX-VNNI, whose EVEX twin has the same
    mnemonic): the instruction after GNU as's ``{vex}`` pseudo-prefix, as (mnemonic, operand text); a mnemonic
    without a VEX form is an error here. The caller encodes ``VEX_PREFIX + mnemonic``, which
    `x86gen.selection.candidates` restricts to the VEX forms."""
    rest = rest.strip()
    sp = rest.find(" ")
    mn, ops = (rest, "") if sp < 0 else (rest[:sp], rest[sp + 1:])
    try: vex = any(f.encoding_kind == "vex" for f in forms_of(canonical(mn)))
    except EncodeError: vex = False
    if not vex: raise AsmSyntaxError(f"{{vex}} {clip(mn)}: no VEX-encoded form of {clip(mn)}: the {{vex}} pseudo-prefix cannot"
                                     " be honoured")
    return mn, ops


# objdump's spelling of the 8087/80287-only control instructions (fneni, fndisi, fnsetpm), which later FPUs ignore
_X87_ONLY = Regex(r"(fneni|fndisi|fnsetpm|feni|fdisi|fsetpm)\((?:8087|287) only\)")
# iced-x86 writes the forms of another operand size than the default with a prefix word: `data16 push fs` (pushw fs,
# 66 0F A0), `data16 push 5` (pushw 5, 66 6A 05), `data16 enter 0x10, 5`, `data16 leave`, `data16 ret far` (retfw,
# 66 CB), `data64 ret far 0x10` (retfq, REX.W CA iw): (prefix word, mnemonic) -> the mnemonic GNU as names the form by
_ICED_SIZED = {("data16", "push"): "pushw", ("data16", "pop"): "popw", ("data16", "enter"): "enterw", ("data16", "leave"): "leavew",
               ("data16", "ret far"): "retfw", ("data64", "ret far"): "retfq"}
_FAR_MNEMONICS = {"ljmp", "lcall", "ljmpw", "lcallw", "jmpf", "callf"}   # GNU as: far jmp/call
# Far jumps and calls (SDM Vol.2 JMP/CALL "far"). Through memory (FF /3, FF /5 with an m16:16 / m16:32 / m16:64 far
# pointer) they are forms of call/jmp, chosen by the operand's size: GNU as's `jmp dword ptr [rax]` (66 ff 28),
# `jmp fword ptr [rax]` (ff 28), `jmp far ptr [rax]` and `ljmp [rax]` (ff 28), `ljmpw [rax]` (66 ff 28); iced-x86's
# `jmp far dword/fword/tbyte ptr [rax]` (tbyte: m16:64, REX.W ff 28). To an immediate segment:offset (EA/9A ptr16:32,
# `jmp far 0x10`, `ljmp 0x10, 0x20`, `jmp 0x10:0x20`) they are invalid in 64-bit mode (#UD, SDM Vol.2 JMP): refused.
_FAR_DEFAULT = {"jmp": ("jmp", "fword"), "call": ("call", "fword"), "ljmp": ("jmp", "fword"), "lcall": ("call", "fword"),
                "ljmpw": ("jmp", "dword"), "lcallw": ("call", "dword")}
_FAR_SIZED = Regex(r"(dword|fword|tbyte)\s+ptr\b")


def far_memory(mn: str, rest: str) -> tuple[str, str] | None:
    """``jmp far ptr [rax]`` / ``ljmp [rax]`` / ``jmp far tbyte ptr [rax]`` → ``("jmp", "fword ptr [rax]")`` …: the
    near mnemonic and a sized far-pointer operand (`_FAR_DEFAULT`); None if ``mn rest`` is no far branch. A far
    branch that is not through memory is an `AsmSyntaxError`."""
    rest = rest.strip()
    if mn in ("jmp", "call"):
        if rest[:3] != "far" or rest[3:4] not in (" ", "\t", "["): return None
        op = rest[3:].strip()
    elif mn in _FAR_DEFAULT: op = rest
    else: return None
    if "[" not in op or "," in op:
        raise AsmSyntaxError(f"{mn}: a far branch to an immediate segment:offset (ptr16:16/ptr16:32) is invalid in 64-bit"
                             " mode (SDM Vol.2 JMP/CALL); far branches go through memory: jmp fword ptr [rax]")
    if op[:3] == "ptr" and op[3:4] in (" ", "["): op = op[3:].strip()   # GNU as: `jmp far ptr [rax]`
    near, size = _FAR_DEFAULT[mn]
    if _FAR_SIZED.match(op): return near, op
    if _SIZE_PREFIX.match(op):
        raise OperandError(f"{mn} {clip(op)}: a far pointer is dword ptr (m16:16), fword ptr (m16:32) or tbyte ptr (m16:64)")
    return near, f"{size} ptr {op}"


# prefix words x86gen does not write (yet): an error naming them
_PREFIXES = {"data32", "data64", "rex64"}


_SIZED_WORDS = frozenset(("data16", "data64", "ret"))


def iced_sized(word: str, rest: str) -> tuple[str, str] | None:
    """iced-x86's sized spellings as (mnemonic, operand text): ``data16 push 5`` → ``("pushw", "5")`` (`_ICED_SIZED`),
    ``ret far 0x10`` → ``("retfd", "0x10")`` (CA iw); None if ``word`` and ``rest`` are none of them."""
    rest = rest.strip()
    if word == "ret":
        if rest[:3] != "far" or rest[3:4] not in ("", " "): return None
        return "retfd", rest[3:].strip()
    mn, _, ops = rest.partition(" ")
    if mn == "ret" and ops[:3] == "far" and ops[3:4] in ("", " "): mn, ops = "ret far", ops[3:]
    sized = _ICED_SIZED.get((word, mn))
    return None if sized is None else (sized, ops.strip())


def imul_shorthand(mn: str, ops: tuple) -> tuple:
    """The operands as written, except ``imul eax, 10`` (iced, GNU as, llvm-mc), which is ``imul eax, eax, 10``."""
    if mn == "imul" and len(ops) == 2 and ops[1].__class__ is int: return (ops[0], *ops)
    return ops


# GNU as's shorthands (Intel syntax), as the instruction it encodes for them: rewritten on the parsed
# operands, before a form is chosen. Each is written where no form of x86gen takes the operands as
# they stand (so nothing x86gen encoded before changes), but vpextrw/vpinsrw of a 64-bit register and
# mov sreg, r16/r64 (shorter forms of the same instruction).
_GPR = {"r8", "r16", "r32", "r64"}


def _implied_one(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``shr si`` is ``shr si, 1`` (D1 /5; SDM Vol.2 SAL/SAR/SHL/SHR, RCL/RCR/ROL/ROR: the count-1 forms)."""
    if len(ops) == 1 and (isinstance(ops[0], Mem) or getattr(ops[0], "kind", None) in _GPR): return mn, (ops[0], 1)
    return mn, ops


def _stack_qword(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``push [rax]`` is ``push qword ptr [rax]``: 64 bits is push/pop's default operand size in 64-bit
    mode (SDM Vol.2 PUSH/POP), the only other one is 16 (``word ptr``)."""
    if len(ops) == 1 and isinstance(ops[0], Mem) and not ops[0].size: return mn, (ops[0].with_size(64),)
    return mn, ops


def _test_swapped(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``test eax, [rax]`` is ``test [rax], eax`` (85 /r: TEST only ANDs, so the order does not matter)."""
    if len(ops) == 2 and isinstance(ops[1], Mem) and getattr(ops[0], "kind", None) in _GPR: return mn, (ops[1], ops[0])
    return mn, ops


def _movd_r64(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``vmovd xmm1, rax`` / ``vmovd rax, xmm1`` are vmovq (VEX.W1 6E / 7E: with a 64-bit register, the
    SDM's MOVD/MOVQ is one instruction); so are ``movd xmm1, rax`` and ``movd rcx, mm5`` movq (REX.W 0F 6E / 7E),
    as GNU as reads them."""
    if len(ops) == 2 and (getattr(ops[0], "kind", None), getattr(ops[1], "kind", None)) in _MOVD_R64:
        return mn[:-1] + "q", ops
    return mn, ops


_MOVD_R64 = (("xmm", "r64"), ("r64", "xmm"), ("mm", "r64"), ("r64", "mm"))


def _movsx_dword(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``movsx r64, r/m32`` is movsxd (REX.W 63 /r; SDM Vol.2 MOVSX/MOVSXD), and so is ``movsx r32, r/m32`` (63 /r
    without REX.W, a plain move: GNU as 2.40 writes ``movsx eax, ecx`` as 63 c1)."""
    if (len(ops) == 2 and getattr(ops[0], "kind", None) in ("r64", "r32")
            and (getattr(ops[1], "kind", None) == "r32" or (isinstance(ops[1], Mem) and ops[1].size == 32))):
        return "movsxd", ops
    return mn, ops


# The instructions whose 64-bit general register operand GNU as encodes as its 32-bit one, without REX.W /
# with VEX.W0 (mnemonic -> position of that operand): their result is zero-extended to the whole register, or
# only its low bits are read, so W changes nothing (SDM Vol.2 MOVMSKPS, PMOVMSKB, PEXTRB/PEXTRW, EXTRACTPS:
# "the upper bits of the destination are zero-filled"; PINSRB/PINSRW read the low byte/word; PEXTRW: "In
# 64-bit mode, VEX.W1 is ignored"; SLDT/STR r32 clear the upper 16 bits, and 64-bit mode zero-extends r32 writes).
_GPR64_AS_32 = {**dict.fromkeys(("movmskps", "movmskpd", "pmovmskb", "pextrw", "pextrb", "extractps", "vmovmskps",
                                 "vmovmskpd", "vpmovmskb", "vpextrw", "vpextrb", "vextractps", "sldt", "str"), 0),
                "pinsrw": 1, "pinsrb": 1, "vpinsrw": 2, "vpinsrb": 2}


def _gpr64_as_32(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``movmskps rbx, xmm0`` is ``movmskps ebx, xmm0`` (0f 50 d8, as GNU as encodes it, not the REX.W form;
    `_GPR64_AS_32`); vpextrw/vpinsrw take the VEX.W0 form, with the 2-byte VEX prefix where the registers
    allow it (``vpextrw r8, xmm7, 1``: c5 79 c5 c7 01, not the W1 form's c4 c3 f9 15 f8 01)."""
    k = _GPR64_AS_32[mn]
    if len(ops) > k and getattr(ops[k], "kind", None) == "r64":
        return mn, (*ops[:k], gpr(ops[k].num, 32), *ops[k + 1:])
    return mn, ops


# Instructions that read a 16-bit selector or word whatever the operand size (`encoder.SELECTOR_READ`): GNU as and
# llvm-mc take only a 16-bit register (`lldt ax`) and encode it without 0x66 (0F 00 /2, the r32/m16 form); iced-x86
# prints `ax` for all three forms; `data16 lldt ax` (objdump's text of the o16 form) is 66 0F 00 /2.
_SELECTOR_READ = SELECTOR_READ


def _selector_r16(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``lldt ax`` is the r32/m16 form (0f 00 d0, as GNU as and llvm-mc encode it: `_SELECTOR_READ`), not o16's 66 0f 00 d0."""
    if len(ops) == 1 and getattr(ops[0], "kind", None) == "r16": return mn, (gpr(ops[0].num, 32),)
    return mn, ops


def _lar_selector_r16(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``lar eax, cx`` is ``lar eax, ecx`` (0f 02 c1; ``lsl`` likewise, with r64 the REX.W form): the source is a 16-bit
    selector whatever the register's size (SDM Vol.2 LAR/LSL), llvm-objdump-22 prints it as r16, and GNU as and llvm-mc
    read it so."""
    if len(ops) == 2 and getattr(ops[0], "kind", None) in ("r32", "r64") and getattr(ops[1], "kind", None) == "r16":
        return mn, (ops[0], gpr(ops[1].num, 32 if ops[0].kind == "r32" else 64))
    return mn, ops


# lgdt/lidt/sgdt/sidt: the 10-byte m16&64 descriptor-table pointer of 64-bit mode (SDM Vol.2 LGDT/SGDT); GNU as takes it
# unsized or as tbyte ptr, iced-x86 prints fword ptr (its name of a pseudo-descriptor)
_DESCRIPTOR_TABLE = ("lgdt", "lidt", "sgdt", "sidt")


def _descriptor_pointer(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``lgdt fword ptr [rax]`` (iced-x86) and ``lgdt tbyte ptr [rax]`` (GNU as) are ``lgdt [rax]``."""
    if len(ops) == 1 and isinstance(ops[0], Mem) and ops[0].size in (48, 80): return mn, (ops[0].with_size(80),)
    return mn, ops


def _movq_gpr(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``movq rax, [rdi]`` with no vector register is ``mov`` of 64 bits: GNU as reads the ``q`` as AT&T's size
    suffix there (48 8b 07); ``movq xmm0, rax`` and the others with an xmm operand stay movq."""
    kinds = [None if isinstance(x, Mem) or x.__class__ is int else getattr(x, "kind", "") for x in ops]
    if (len(ops) == 2 and "r64" in kinds and all(k in ("r64", None) for k in kinds)
            and all(x.__class__ is not Mem or x.size in (0, 64) for x in ops)):
        return "mov", ops
    return mn, ops


# Instructions whose memory operand only names an address (a cache line to flush or prefetch): GNU as takes
# it with any size keyword (`prefetchw dword ptr [rax]` is 0f 0d 08) and so does x86gen's text.
_ADDRESS_ONLY = ("cldemote", "clflush", "clflushopt", "clwb", "prefetchit0", "prefetchit1", "prefetchnta", "prefetcht0",
                 "prefetcht1", "prefetcht2", "prefetchw", "prefetchwt1", "prefetch")


def _any_size_address(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``clflush dword ptr [rax]`` is ``clflush [rax]``: the size keyword of `_ADDRESS_ONLY`'s operand is ignored."""
    if len(ops) == 1 and isinstance(ops[0], Mem) and ops[0].size: return mn, (ops[0].with_size(0),)
    return mn, ops


def _shift_double_cl(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``shld eax, ebx`` is ``shld eax, ebx, cl``: GNU as's two-operand SHLD/SHRD counts in CL (0F A5 / 0F AD)."""
    if len(ops) == 2: return mn, (*ops, REGISTERS["cl"])
    return mn, ops


def _imul(mn: str, ops: tuple) -> tuple[str, tuple]: return mn, imul_shorthand(mn, ops)


# Zero-operand instructions that GNU as (and iced's formatter) also write with their implicit registers as operands
# (AMD APM Vol.3: VMRUN rAX, INVLPGA rAX, ECX, CLZERO rAX, PVALIDATE rAX, RMPUPDATE rAX, rCX, INVLPGB rAX, ECX, EDX,
# SKINIT EAX):
# written exactly so (64-bit mode's registers), they are the zero-operand form; other registers are refused as usual.
# iced writes invlpgb with rax alone. With the address register's 32-bit name (`clzero eax`, iced-x86's and GNU as's
# spelling of 67 0F 01 FC) they are the form with a 32-bit address, `addr32 clzero` (`IMPLICIT_OPERANDS32`).
IMPLICIT_OPERANDS: dict[str, tuple[tuple[str, ...], ...]] = {
    "vmrun": (("rax",),), "vmload": (("rax",),), "vmsave": (("rax",),), "clzero": (("rax",),),
    "invlpga": (("rax", "ecx"),), "pvalidate": (("rax",),), "rmpupdate": (("rax", "rcx"),),
    "invlpgb": (("rax", "ecx", "edx"), ("rax",)), "skinit": (("eax",),),
    "monitor": (("rax", "ecx", "edx"),), "monitorx": (("rax", "ecx", "edx"),),
}
IMPLICIT_OPERANDS32: dict[str, tuple[tuple[str, ...], ...]] = {
    "vmrun": (("eax",),), "vmload": (("eax",),), "vmsave": (("eax",),), "clzero": (("eax",),),
    "invlpga": (("eax", "ecx"),), "pvalidate": (("eax",),), "invlpgb": (("eax", "ecx", "edx"), ("eax",)),
    "monitor": (("eax", "ecx", "edx"),), "monitorx": (("eax", "ecx", "edx"),),
}


def _implicit_operands(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``vmrun rax`` is ``vmrun``, ``vmrun eax`` is ``addr32 vmrun`` (`IMPLICIT_OPERANDS`, `IMPLICIT_OPERANDS32`)."""
    if ops:
        names = tuple(getattr(x, "name", None) for x in ops)
        if names in IMPLICIT_OPERANDS[mn]: return mn, ()
        if names in IMPLICIT_OPERANDS32.get(mn, ()): return "addr32 " + mn, ()
    return mn, ops


# The SSE4.1 variable blends and sha256rnds2 read xmm0 implicitly (SDM Vol.2 BLENDVPS: "BLENDVPS xmm1, xmm2/m128, <XMM0>");
# GNU as and objdump also write it as a third operand.
XMM0_THIRD = ("blendvps", "blendvpd", "pblendvb", "sha256rnds2")


def _xmm0_third(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``blendvps xmm1, xmm2, xmm0`` is ``blendvps xmm1, xmm2`` (`XMM0_THIRD`); another third operand is refused."""
    if len(ops) == 3 and getattr(ops[2], "name", None) == "xmm0": return mn, ops[:2]
    return mn, ops


def _stack_word(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``pushw r9w`` / ``popw [rax]`` (GNU as) are push/pop of that 16-bit register or word (66 50+rw, 66 FF /6, ...);
    pushw/popw themselves are the fs/gs forms (66 0F A0 ...) and, for pushw, the immediates (66 6A ib, 66 68 iw)."""
    if len(ops) == 1:
        x = ops[0]
        if getattr(x, "kind", None) == "r16": return mn[:-1], ops
        if isinstance(x, Mem) and x.size in (0, 16): return mn[:-1], (x.with_size(16),)
    return mn, ops


def _fwait(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``fwait`` (iced-x86, objdump, GNU as) is ``wait`` (9B; SDM Vol.2 WAIT/FWAIT: the same opcode)."""
    return "wait", ops


def _sysexitd(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``sysexitd`` (objdump) is ``sysexit`` (0F 35, to 32-bit user code; ``sysexitq`` is REX.W 0F 35)."""
    return "sysexit", ops


def _sreg_load(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``mov es, ax`` / ``mov fs, r9`` (iced-x86 prints the first for 8E C0) is ``mov es, eax`` / ``mov fs, r9d``,
    and ``mov rax, es`` is ``mov eax, es``, as GNU as encodes them: loading a segment register reads 16 bits
    whatever the operand size, and storing one in a 32-bit register zero-extends it to 64 bits, so the forms
    without 0x66 or REX.W are the same instructions, shorter (8E /r, 8C /r; SDM Vol.2 MOV)."""
    if len(ops) == 2:
        a, b = ops
        if a.__class__ is SegReg and getattr(b, "kind", None) in ("r16", "r64"): return mn, (a, gpr(b.num, 32))
        if b.__class__ is SegReg and getattr(a, "kind", None) == "r64": return mn, (gpr(a.num, 32), b)
    return mn, ops


def _far_pointer_load(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``lss r15, fword ptr [rax]`` (objdump 2.40's text of REX.W 0F B2 /r, whose far pointer is m16:64: 10 bytes, SDM
    Vol.2 LDS/LES/LFS/LGS/LSS) is ``lss r15, tbyte ptr [rax]`` (iced-x86's; GNU as 2.40 has no spelling of that form)."""
    if len(ops) == 2 and getattr(ops[0], "kind", None) == "r64" and isinstance(ops[1], Mem) and ops[1].size == 48:
        return mn, (ops[0], ops[1].with_size(80))
    return mn, ops


_ST0 = REGISTERS["st0"]
_ST1 = REGISTERS["st1"]
_X87_SHAPES: dict[str, frozenset] = {}


def _x87_shapes(mn: str) -> frozenset:
    """The operand shapes of ``mn``'s forms: "" (none), "m" (memory), "s" (st(i)), "0s" (st(0), st(i)),
    "s0" (st(i), st(0)), "o" (anything else). Cached."""
    hit = _X87_SHAPES.get(mn)
    if hit is not None: return hit
    try: forms = forms_of(canonical(mn))
    except UnknownMnemonicError: forms = []
    shapes = set()
    for f in forms:
        k = "".join("0" if o.reg == "st0" else "s" if o.reg == "st" else "m" if o.mem is not None else "o" for o in f.operands)
        shapes.add(k)
    _X87_SHAPES[mn] = res = frozenset(shapes)
    return res


def _x87(mn: str, ops: tuple) -> tuple[str, tuple]:
    """The x87 spellings of iced-x86, objdump and GNU as, as the form's operands:

    - iced-x86's Intel formatter names st(0) where the instruction uses it implicitly: ``fld st, dword ptr
      [rsi]``, ``fistp qword ptr [rax], st``, ``fld st, st(1)``, ``fstp st(1), st`` are fld m32, fistp m64,
      fld st(1), fstp st(1);
    - GNU as leaves st(0) out of the arithmetic, compares and fxch (`_X87_IMPLIED_ST0`; not fcmovcc):
      ``fxch st(2)``, ``fcomi st(1)``, ``fadd st(2)``, ``faddp st(1)`` are fxch st(0), st(2), fcomi st(0),
      st(1), fadd st(0), st(2), faddp st(1), st(0); and with no operand at all st(1) is meant (iced and
      objdump print ``faddp``, ``fxch``, ``fcom`` so): ``fsubp`` is ``fsubp st(1), st(0)`` (DE E9, SDM
      Vol.2 FSUB/FSUBP/FISUB: "FSUBP: subtract ST(0) from ST(1), store in ST(1), pop"). A bare ``fadd``
      stays an error: GNU as makes it ``faddp`` with a warning.

    Each applies only where no form takes the operands as written."""
    n = len(ops)
    if n == 2 and (ops[0] is _ST0 or ops[1] is _ST0) and (isinstance(ops[0], Mem) or isinstance(ops[1], Mem)):
        return mn, (ops[1] if ops[0] is _ST0 else ops[0],)   # no x87 form takes a memory operand and a register
    if n > 2 or not all(getattr(x, "kind", None) == "st" for x in ops): return mn, ops
    shapes = _x87_shapes(mn)
    if n == 2:
        if any(len(k) == 2 for k in shapes): return mn, ops
        if ops[1] is _ST0: return mn, ops[:1]
        if ops[0] is _ST0: return mn, ops[1:]
        return mn, ops
    if mn not in _X87_IMPLIED_ST0: return mn, ops
    if n == 1 and "s" not in shapes:
        if "0s" in shapes: return mn, (_ST0, ops[0])
        if "s0" in shapes: return mn, (ops[0], _ST0)
    if n == 0 and "" not in shapes and ("0s" in shapes) != ("s0" in shapes):
        return mn, ((_ST0, _ST1) if "0s" in shapes else (_ST1, _ST0))
    return mn, ops


# The x87 mnemonics whose st(0) operand GNU as lets one leave out (as 2.40: `fadd st(2)`, `fcom`, `faddp`)
_X87_IMPLIED_ST0 = frozenset(("fadd", "faddp", "fmul", "fmulp", "fsub", "fsubp", "fsubr", "fsubrp", "fdiv", "fdivp", "fdivr",
                              "fdivrp", "fcom", "fcomp", "fucom", "fucomp", "fcomi", "fcomip", "fucomi", "fucomip", "fxch"))


# fldenv/fnstenv/fnsave/frstor: unsized, the image of the 32/64-bit operand size (28 / 108 bytes); the `w`
# names (GNU as and objdump) are the 16-bit one (o16: 14 / 94 bytes; SDM Vol.1 8.1.10).
_FPU_IMAGE = {"fldenv": ("fldenv", 224), "fnstenv": ("fnstenv", 224), "fnsave": ("fnsave", 864), "frstor": ("frstor", 864),
              "fldenvw": ("fldenv", 112), "fnstenvw": ("fnstenv", 112), "fnsavew": ("fnsave", 752), "frstorw": ("frstor", 752),
              "fstenv": ("fstenv", 224), "fsave": ("fsave", 864), "fstenvw": ("fstenv", 112), "fsavew": ("fsave", 752)}


def _status_word_ax(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``fnstsw`` is ``fnstsw ax`` (GNU as 2.40: df e0; ``fstsw``: 9b df e0; SDM Vol.2 FSTSW/FNSTSW: the register form
    stores into ax)."""
    return (mn, (REGISTERS["ax"],)) if not ops else (mn, ops)


def _fpu_image(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``fldenv [rsi]`` is the 28-byte environment, ``fldenvw [rsi]`` the 14-byte one (and so for fnstenv,
    fnsave (108/94 bytes) and frstor), as GNU as and objdump spell them."""
    name, bits = _FPU_IMAGE[mn]
    if len(ops) == 1 and isinstance(ops[0], Mem) and not ops[0].size: return name, (ops[0].with_size(bits),)
    return name, ops


# objdump's names of the 16-bit branches (GNU as writes them with the data16 prefix): xbeginw is 66 C7 F8 cw, jmpw
# 66 E9 cw (JMP_REL16), callw 66 E8 cw (CALL_REL16); objdump prints the others `data16 jmp` (66 EB cb) or, for o16 jcc
# rel16, a bare `je`, which reads back as the rel32 form (tests/test_dialects.py OBJDUMP_GAPS). GNU as reads them so too,
# and `callw ax` / `jmpw [rax]` (CALL_RM16, JMP_RM16: 66 FF /2, /4) and `retw` / `retw 8` (RETNW: 66 C3, 66 C2 iw), which
# objdump prints so
_W_BRANCHES = {"xbeginw": "xbegin", "jmpw": "jmp", "callw": "call", "retw": "ret"}


def _w_branch(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``xbeginw 0x106`` (objdump) is ``data16 xbegin 0x106``, ``jmpw 0x100`` ``data16 jmp 0x100``, ``retw`` ``data16 ret``
    (`_W_BRANCHES`)."""
    return "data16 " + _W_BRANCHES[mn], ops


def _int3(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``int 3`` is the one-byte breakpoint ``int3`` (CC), as GNU as and llvm-mc write it (SDM Vol.2 INT n/INTO/INT3:
    CD 03 differs in virtual-8086 mode only); ``x86gen.encode("int", 3)`` and the form ``INT_IMM8`` keep CD 03."""
    return ("int3", ()) if ops == (3,) else (mn, ops)


SHORTHANDS = {**dict.fromkeys(IMPLICIT_OPERANDS, _implicit_operands), **dict.fromkeys(_W_BRANCHES, _w_branch),
              **dict.fromkeys(XMM0_THIRD, _xmm0_third),
              "imul": _imul, "mov": _sreg_load, "fwait": _fwait, "sysexitd": _sysexitd, "pushw": _stack_word, "popw": _stack_word,
              "push": _stack_qword, "pop": _stack_qword, "test": _test_swapped, "vmovd": _movd_r64, "movd": _movd_r64,
              "movsx": _movsx_dword, "shld": _shift_double_cl, "shrd": _shift_double_cl, "movq": _movq_gpr,
              **dict.fromkeys(_GPR64_AS_32, _gpr64_as_32), **dict.fromkeys(_ADDRESS_ONLY, _any_size_address),
              **dict.fromkeys(("shl", "sal", "shr", "sar", "rol", "ror", "rcl", "rcr"), _implied_one),
              **dict.fromkeys(_FPU_IMAGE, _fpu_image), "fnstsw": _status_word_ax, "fstsw": _status_word_ax, "int": _int3,
              **dict.fromkeys(GATHER_MNEMONICS, gather_mask),
              **dict.fromkeys(_SELECTOR_READ, _selector_r16), "lar": _lar_selector_r16, "lsl": _lar_selector_r16,
              **dict.fromkeys(_DESCRIPTOR_TABLE, _descriptor_pointer), **dict.fromkeys(("lfs", "lgs", "lss"), _far_pointer_load),
              # the x87 mnemonics with an st(i) form or an implicit st(0) next to a memory operand
              **dict.fromkeys(("fadd", "faddp", "fmul", "fmulp", "fsub", "fsubp", "fsubr", "fsubrp", "fdiv", "fdivp", "fdivr",
                               "fdivrp", "fcom", "fcomp", "fucom", "fucomp", "fcomi", "fcomip", "fucomi", "fucomip", "fxch",
                               "fld", "fst", "fstp", "fstpnce", "ffree", "ffreep", "fiadd", "fimul", "ficom", "ficomp", "fisub",
                               "fisubr", "fidiv", "fidivr", "fild", "fist", "fistp", "fisttp", "fbld", "fbstp",
                               "fcmovb", "fcmove", "fcmovbe", "fcmovu", "fcmovnb", "fcmovne", "fcmovnbe", "fcmovnu"), _x87)}


def shorthand(mn: str, ops: tuple) -> tuple[str, tuple]:
    """``(mnemonic, operands)`` as GNU as encodes them: ``imul eax, 10`` (``imul eax, eax, 10``), ``shr si``
    (count 1), ``push [rax]`` (qword), ``test eax, [rax]`` (swapped), ``vmovd xmm1, rax`` and ``movd rcx, mm5`` (vmovq, movq),
    ``movsx rax, ecx`` (movsxd), ``movmskps rbx, xmm0`` and the others of `_GPR64_AS_32` (the 32-bit register),
    ``shld eax, ebx`` (count in cl); else as written."""
    f = SHORTHANDS.get(mn)
    return (mn, ops) if f is None else f(mn, ops)


def parse_line(line: str) -> tuple[str, tuple]:
    mn, ops = split_line(line)
    if "{" in line or "bcst" in line:   # AVX-512 decorations, unless in a literal: `mov al, '{'`
        if has_decorations(line): return _decorated_line(mn, ops)
    if " " in mn:   # prefix words: the shorthands of the instruction they stand before
        words, _, base = mn.rpartition(" ")
        if base in _SELECTOR_READ and words == "data16":   # objdump's `data16 lldt ax`: the o16 form, 66 0F 00 /2
            return mn, tuple([parse_operand(x) for x in ops])
        base, o = shorthand(base, tuple([parse_operand(x) for x in ops]))
        return f"{words} {base}", o
    return shorthand(mn, tuple([parse_operand(o) for o in ops]))


def _decorated_line(mn: str, texts: list[str]) -> tuple[str, tuple]:
    """`parse_line` of a line that may hold EVEX decorations (``{k1}``, ``{z}``, ``{1to16}``, ``{rn-sae}``, objdump's
    ``bcst``): the operands as `parse_decorated` reads them, then the shorthands."""
    words, _, base = mn.rpartition(" ")
    ops, deco = split_decorations(parse_decorated(base, texts, parse_operand))
    base, ops = shorthand(base, ops)
    if deco is not None: ops = (*ops, deco)
    return (f"{words} {base}" if words else base), ops


# Comments and statement separators as GNU as has them in x86 Intel syntax: `#` to the end of the
# line, `/* … */`, and `;` between statements (`xor eax, eax; ret`); `//` to the end of the line
# too (llvm-mc; GNU as only at the start of a line). None of them counts inside a "string" or a
# character constant ('c', '\n', GNU's unclosed 'c). `_LEX` finds exactly these tokens; whatever it
# skips is statement text.
_LEX = Regex(r'"(?:[^"\\\n]|\\[^\n])*"|\'(?:\\(?:[0-7]{1,3}|x[0-9a-fA-F]+|[^\n])|[^\\\n])\'?'
                  r'|#[^\n]*|//[^\n]*|/\*[\s\S]*?\*/|/\*|"|;')
_LEXED = Regex(r"[#;/\"']")   # a line without these is one statement, as it is


def signed_terms(s: str, text: str) -> list[tuple[str, str]]:
    """``"a + 8 - b"`` → ``[("", "a"), ("+", "8"), ("-", "b")]``; terms side by side without a sign
    between them (``[rax 5]``, ``a b``) are an `AsmSyntaxError` naming ``text``."""
    out, pos = [], 0
    s = _STAR.sub("*", s)
    while pos < len(s):
        m = _TERM.match(s, pos)
        if not m or m.end() == pos: raise AsmSyntaxError(f"cannot parse {clip(text)}")
        if not m.group(1) and pos and s[pos:m.start(2)].strip() == "":
            raise AsmSyntaxError(f"missing + or - before {clip(m.group(2))} in {clip(text)}")
        out.append((m.group(1), m.group(2)))
        pos = m.end()
    return out


# Escapes in strings and character constants, as GNU as reads them (read.c, next_char_of_string):
# \b \f \n \r \t \v, octal \101 (one to three digits), \x41 (all the hex digits that follow; the
# byte is their low 8 bits, so \x4142 is 0x42), and a backslash before any other character is that
# character (\q is q, \" is "). Refused, since GNU as's reading silently differs from what C (and
# the writer, most likely) means: octal above \377 (GNU truncates), \x without digits (GNU: 0),
# \8 \9 (GNU: 8, 9), \a \e (GNU: a, e) and \u \U (GNU: u, U; llvm-mc refuses all of these).
_ESCAPE = Regex(r"\\(?:([0-7]{1,3})|x([0-9a-fA-F]*)|([\s\S])|$)")
_SIMPLE_ESCAPES = {"b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11}


def unescape(body: str, text: str) -> bytes:
    """The bytes of a string's body (between its quotes): UTF-8, with GNU as's escapes (see `_ESCAPE`). A character
    that UTF-8 has no bytes for (a lone surrogate such as ``'\\udcff'``, which ``errors="surrogateescape"`` decoding
    makes of a byte that is no UTF-8) is an `AsmSyntaxError`."""
    try: return _unescape(body, text)
    except UnicodeEncodeError as ex:
        raise AsmSyntaxError(f"character {ex.object[ex.start]!r} (U+{ord(ex.object[ex.start]):04X}) in {clip(text)} has no UTF-8"
                             f" bytes ({ex.reason})") from None


def _unescape(body: str, text: str) -> bytes:
    if "\\" not in body: return body.encode()
    out, pos = bytearray(), 0
    for m in _ESCAPE.finditer(body):
        out += body[pos:m.start()].encode()
        pos = m.end()
        octal, hexd, ch = m.groups()
        if octal is not None:
            v = int(octal, 8)
            if v > 0xFF: raise AsmSyntaxError(f"octal escape \\{octal} is above \\377 in {clip(text)}")
            out.append(v)
        elif hexd is not None:
            if not hexd: raise AsmSyntaxError(f"\\x without hex digits in {clip(text)}")
            out.append(int(hexd[-2:], 16))
        elif ch is None: raise AsmSyntaxError(f"a backslash ends {clip(text)}")
        elif ch in _SIMPLE_ESCAPES: out.append(_SIMPLE_ESCAPES[ch])
        elif ch in "89aeuU":
            raise AsmSyntaxError(f"escape \\{ch} in {clip(text)} is not supported (GNU as reads it as {ch!r}; "
                                 "write \\x.. for a byte)")
        else: out += ch.encode()
    out += body[pos:].encode()
    return bytes(out)


def char_value(const: str, text: str) -> int:
    """The value of a character constant ``'a'`` / ``'\\n'`` (GNU as also takes ``'a`` unclosed): one ASCII
    character or escape; ``'é'`` (more than one byte) is an `AsmSyntaxError`."""
    body = const[1:-1] if len(const) > 2 and const.endswith("'") else const[1:]
    if body[:1] == "\\" and body[1:2] in "01234567x":
        # GNU as takes one character after the backslash here ('\101' is '\1' and junk): say what to write
        raise AsmSyntaxError(f"numeric escape in character constant {clip(const)} (write the number) in {clip(text)}")
    b = unescape(body, text)
    if len(b) != 1: raise AsmSyntaxError(f"character constant {clip(const)} must be one ASCII character or escape in {clip(text)}")
    return b[0]


def split_statements(line: str) -> list[str]:
    """One source line → its statements, comments removed (see `_LEX`); blank statements dropped.

    ``"xor eax, eax; ret # zero"`` → ``["xor eax, eax", " ret "]``. An unterminated string or
    ``/*`` is an `AsmSyntaxError` (`strip_block_comments` first removes the ``/* … */`` that span lines).
    """
    m = _LEXED.search(line)
    if m is None: return [line] if line.strip() else []
    if line[m.start()] == "#":                    # the common case: nothing but a trailing `# comment`
        s = line[:m.start()]
        return [s] if s.strip() else []
    out, cur, pos = [], [], 0
    for m in _LEX.finditer(line):
        tok = m.group()
        c = tok[0]
        if c == "'" or (c == '"' and len(tok) > 1): continue        # quoted: statement text
        if c == '"': raise AsmSyntaxError(f"unterminated string in {clip(line)}")
        if tok == "/*": raise AsmSyntaxError(f"unterminated /* comment in {clip(line)}")
        cur.append(line[pos:m.start()])
        pos = m.end()
        if c == ";":
            out.append("".join(cur))
            cur = []
        elif tok[1] == "*": cur.append(" ")          # /* … */ separates like a space
        else: break                                   # `#` or `//`: the rest of the line is a comment
    else: cur.append(line[pos:])
    out.append("".join(cur))
    return [x for x in out if x.strip()]


def strip_block_comments(text: str) -> str:
    """``text`` with every ``/* … */`` (which may span lines) replaced by a space and the newlines it
    held, so that line numbers stay; quotes and ``#``/``//`` comments are respected as in `split_statements`."""
    def repl(m: re.Match) -> str:
        tok = m.group()
        if tok == "/*":
            raise AsmSyntaxError(f"line {text.count(chr(10), 0, m.start()) + 1}: unterminated /* comment")
        return " " + "\n" * (len(tok.splitlines()) - 1) if tok.startswith("/*") else tok   # as splitlines counts lines
    return _LEX.sub(repl, text)


def strip_comment(line: str) -> str:
    """The one statement of ``line`` without its comments ("" if none); more than one is an `AsmSyntaxError`."""
    stmts = split_statements(line)
    if len(stmts) > 1: raise AsmSyntaxError(f"{clip(line)} holds {len(stmts)} statements (`;` separates statements)")
    return stmts[0] if stmts else ""


_LINES: dict[str, tuple] = {}


def parse_text_line(text: str) -> tuple:
    """One line of source (any case, comments allowed) → (mnemonic, operands); cached by its text.

    An empty line gives ``("", ())``.
    """
    try: hit = _LINES.get(text)
    except TypeError: hit = None   # (unhashable: no text, said below)
    if hit is not None: return hit
    if text.__class__ is not str and not isinstance(text, str): raise wrong_type("x86gen.parse", "text", text, "a str")
    if _LEXED.search(text) is not None:
        # a quote: the program parser (character constants keep their case); `;`: more than one statement
        if "'" in text or '"' in text: raise AsmSyntaxError(f"{clip(text)}: quoted text (the program parser reads it)")
        line = strip_comment(text).lower().strip()
    else: line = text.lower().strip()
    if "{" in text: check_decoration_case(text)
    res = parse_line(line) if line else ("", ())
    if len(_LINES) >= _CACHE_MAX: _LINES.clear()
    _LINES[text] = res
    return res



# Pseudo-ops that iced-x86 and objdump print for an imm8 operand (SDM Vol.2 CMPPS "Compare predicates",
# PCLMULQDQ Table 4-13): `cmpltps x, y` = `cmpps x, y, 1`, `vcmpnge_uqpd x, y, z` = `vcmppd x, y, z, 0x19` (also
# AVX512-FP16 vcmpph/vcmpsh: `vcmpltph k, x, y`; AVX10.2 vcmpbf16: `vcmpeqbf16 k, x, y`, as llvm-objdump-22 prints it),
# `pclmulhqlqdq x, y` = `pclmulqdq x, y, 1`. The legacy compares know only the first eight predicates.
# The AVX-512 integer compares (SDM Vol.2 VPCMPB/VPCMPUB, table "Pseudo-Op and VPCMP* Implementation"): `vpcmpltub k, x, y` =
# `vpcmpub k, x, y, 1`; `vpcmpeqb` and `vpcmpeqd` … are instructions of their own (74/75/76, 0F38 29) with the same
# result as predicate 0, so only the unsigned `vpcmpequb` … and the other predicates are pseudo-ops here.
_PSEUDO_OP = Regex(r"(v?)(?:cmp([a-z_]+?)(ps|pd|ss|sd|ph|sh|bf16)|pclmul([lh])q([lh])qdq)$")
_VPCMP_PSEUDO_OP = Regex(r"vpcmp(eq|lt|le|false|neq|nlt|nle|true)(u?[bwdq])$")
_VPCMP_PREDICATES = {p: i for i, p in enumerate("eq lt le false neq nlt nle true".split())}
# AMD XOP's integer compares (AMD APM Vol.4 VPCOMB … VPCOMUQ, imm8[2:0]): `vpcomltb x, y, z` = `vpcomb x, y, z, 0`, as
# GNU as and objdump write them (lt le gt ge eq neq false true: 0-7)
_VPCOM_PSEUDO_OP = Regex(r"vpcom(lt|le|gt|ge|eq|neq|false|true)(u?[bwdq])$")
_VPCOM_PREDICATES = {p: i for i, p in enumerate("lt le gt ge eq neq false true".split())}
_CMP_PREDICATES = {p: i for i, p in enumerate(
    "eq lt le unord neq nlt nle ord eq_uq nge ngt false neq_oq ge gt true eq_os lt_oq le_oq unord_s neq_us nlt_uq nle_uq "
    "ord_s eq_us nge_uq ngt_uq false_os neq_os ge_oq gt_oq true_us".split())}


def pseudo_op(mn: str, ops: tuple) -> tuple[str, tuple] | None:
    """The instruction a compare/carry-less-multiply pseudo-op stands for (``cmpltps`` → ``cmpps …, 1``,
    ``vpcmpnltud`` → ``vpcmpud …, 5``, XOP's ``vpcomgeub`` → ``vpcomub …, 3``),
    or None if ``mn`` is no such pseudo-op."""
    if mn.startswith(EVEX_PREFIX):   # `{evex} vpclmulhqlqdq …` (objdump prints it for the EVEX form): `{evex} vpclmulqdq …, 0x01`
        alt = pseudo_op(mn[len(EVEX_PREFIX):], ops)
        return None if alt is None else (EVEX_PREFIX + alt[0], alt[1])
    m = _VPCMP_PSEUDO_OP.match(mn)
    if m is not None: return f"vpcmp{m.group(2)}", (*ops, _VPCMP_PREDICATES[m.group(1)])
    m = _VPCOM_PSEUDO_OP.match(mn)
    if m is not None: return f"vpcom{m.group(2)}", (*ops, _VPCOM_PREDICATES[m.group(1)])
    m = _PSEUDO_OP.match(mn)
    if m is None: return None
    v = m.group(1)
    if m.group(3):
        pred = _CMP_PREDICATES.get(m.group(2))
        if pred is None or (not v and pred >= 8): return None
        return f"{v}cmp{m.group(3)}", (*ops, pred)
    return f"{v}pclmulqdq", (*ops, (m.group(4) == "h") | (m.group(5) == "h") << 4)



def clear_line_caches() -> None:
    """Forget every parsed operand and line (`x86gen.text.clear_caches` also forgets the program parser's lines)."""
    _OPERANDS.clear()
    _LINES.clear()


def format_operand(x) -> str:
    """Intel syntax of one operand (ints as hex)."""
    if x.__class__ is int: return f"-{-x:#x}" if x < 0 else f"{x:#x}"
    if x.__class__ in _DECORATED:   # zmm1 {k1} {z}; a broadcast without its form: dword bcst [rax]
        return format_decorated(x)
    if isinstance(x, Mem) and x.base is None and x.index is not None and x.scale == 1:   # (VsibMem too)
        # an index without base: `[rax*1]`, since `[rax]` would read back as a base register (other bytes)
        s = str(x)
        i = s.index("[") + 1 + len(x.index.name)
        return s[:i] + "*1" + s[i:]
    return str(x)




# ---- AVX-512 decorations -------------------------------------------------------------------------------------

# rounding decorations -> x86gen's rc= value (SDM Vol.2 2.7.8, Table 2-36); iced-x86 prints round-to-nearest as rne-sae
ROUNDING_WORDS = {"rn-sae": RN_SAE, "rne-sae": RN_SAE, "rd-sae": RD_SAE, "ru-sae": RU_SAE, "rz-sae": RZ_SAE, "sae": SAE}
_DECORATION = Regex(r"\s*\{\s*([^{}]*?)\s*\}\s*")
_BCST_WORD = Regex(r"^(byte|word|dword|qword)\s+bcst\s+(.*)$")   # objdump: `DWORD BCST [rax]`
_ONE_TO = Regex(r"1to(\d+)")
_EXPECTED = "{k1}-{k7}, {z}, {1toN}, {rn-sae}, {rd-sae}, {ru-sae}, {rz-sae} or {sae}"


def _clip(text: str, limit: int = 120) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


def rounding_text(rc: int) -> str:
    """``{rn-sae}`` for `x86gen.RN_SAE` and so on (the GNU as / llvm-mc spelling)."""
    if not is_rounding(rc): raise OperandError(f"rc={rc!r} is no rounding mode (x86gen.RN_SAE, RD_SAE, RU_SAE, RZ_SAE or SAE)")
    return "{" + ROUNDING_NAMES[rc] + "}"


def split_decorations(ops: tuple) -> tuple[tuple, Decorations | None]:
    """``(operands, Decorations or None)`` of a parsed operand tuple."""
    if ops and ops[-1].__class__ is Decorations: return ops[:-1], ops[-1]
    return ops, None


class _Piece:
    """One operand's text split into its base text and its ``{…}`` decorations."""

    __slots__ = ("text", "base", "mask", "zero", "n", "bcst", "rc", "alone")

    def __init__(self, text: str):
        self.text, self.base, self.mask, self.zero, self.n, self.bcst, self.rc, self.alone = text, "", None, False, None, False, None, False


# GNU as and llvm-mc read a vector operation's decoration in lower case only (`{z}`, `{1to16}`, `{rn-sae}`), a register
# in any case (`{K1}`), and pseudo-prefixes in any case (`{VEX}`): x86gen reads text as they do.
_UPPER_DECORATION = Regex(r"\{\s*((?![kK][0-7]\s*\})[^{}]*[A-Z][^{}]*?)\s*\}")


def check_decoration_case(text: str) -> None:
    """Refuse a decoration of ``text`` (the line as written) that is not in lower case, as GNU as and llvm-mc do;
    a pseudo-prefix (``{VEX}``) and a mask register (``{K1}``) may be in any case."""
    for m in _UPPER_DECORATION.finditer(text):
        w = m.group(1)
        if w.lower() in ROUNDING_WORDS or w.lower() == "z" or _ONE_TO.fullmatch(w.lower()):
            raise AsmSyntaxError(f"{_clip('{' + w + '}')} in {_clip(text.strip())}: decorations are written in lower case,"
                                 f" {{{w.lower()}}} (as GNU as and llvm-mc read them)")


def _piece(t: str) -> _Piece:
    """Split operand text ``t`` (lower case) into base and decorations; errors for unknown or repeated ones."""
    p = _Piece(t)
    s = t.strip()
    if not s: raise AsmSyntaxError("empty operand (expected register, memory, immediate or a decoration)")
    i = s.find("{")
    base, rest = (s, "") if i < 0 else (s[:i].strip(), s[i:])
    pos = 0
    words = []
    while pos < len(rest):
        m = _DECORATION.match(rest, pos)
        if m is None: raise AsmSyntaxError(f"cannot parse the decorations of {_clip(s)} (expected {_EXPECTED})")
        words.append(m.group(1))
        pos = m.end()
    if not base: p.alone = True
    bm = _BCST_WORD.match(base)
    if bm:   # objdump's `dword bcst [rax]`: a broadcast of that element size
        p.bcst, base = True, f"{bm.group(1)} ptr {bm.group(2)}"
    p.base = base
    for w in words:
        if w in ROUNDING_WORDS:
            if p.rc is not None: raise AsmSyntaxError(f"two rounding decorations in {_clip(s)}")
            p.rc = ROUNDING_WORDS[w]
        elif w == "z":
            if p.zero: raise AsmSyntaxError(f"{{z}} twice in {_clip(s)}")
            p.zero = True
        elif re.fullmatch(r"[kK][0-7]", w):
            w = w.lower()
            if w == "k0":
                raise AsmSyntaxError(f"{{k0}} in {_clip(s)}: k0 cannot be a write mask (EVEX.aaa = 000 means no masking,"
                                     " SDM Vol.2 2.7.1); write no mask, or k1-k7")
            if p.mask is not None: raise AsmSyntaxError(f"two write masks in {_clip(s)}")
            p.mask = w
        elif (m := _ONE_TO.fullmatch(w)) is not None:
            if p.n is not None: raise AsmSyntaxError(f"two broadcasts in {_clip(s)}")
            n = int(m.group(1))
            if n not in (2, 4, 8, 16, 32):
                raise AsmSyntaxError(f"{{{w}}} in {_clip(s)}: a broadcast is {{1to2}}, {{1to4}}, {{1to8}}, {{1to16}} or {{1to32}}")
            p.n, p.bcst = n, True
        else:
            check_decoration_case(s)
            raise AsmSyntaxError(f"unknown decoration {_clip('{' + w + '}')} in {_clip(s)} (expected {_EXPECTED})")
    if p.alone and (p.mask or p.zero or p.bcst or len(words) != 1):
        raise AsmSyntaxError(f"misplaced {_clip(s)}: only a rounding ({{rn-sae}} … {{sae}}) stands as an operand of its own;"
                             " a mask {k1} and {z} follow the destination, {1toN} a memory operand")
    return p


# a character or string literal (GNU as: 'x', '\\n', "…"), whose braces are no decorations (`or al, -'{'`)
_QUOTED = Regex(r"'(?:\\.|[^'\\])'|\"(?:\\.|[^\"\\])*\"")


def has_decorations(line: str) -> bool:
    """Might ``line`` (lower case) hold EVEX decorations (so that `parse_decorated` reads it)?"""
    if "'" in line or '"' in line: line = _QUOTED.sub("", line)
    return "{" in line or "bcst" in line


def parse_decorated(mn: str, texts: list[str], parse_operand) -> tuple:
    """The operands of ``mn`` written as ``texts`` with EVEX decorations (see the module doc): structured operands,
    and a trailing `Decorations` if the line has a rounding or a ``{1toN}``. ``parse_operand`` reads a base."""
    pieces = [_piece(t) for t in texts]
    rc, ops, counts = None, [], []
    plain = [p for p in pieces if not p.alone]
    last_reg = None   # index among the plain operands of the last one that is no immediate
    values = [parse_operand(p.base) for p in plain]
    for j, v in enumerate(values):
        if v.__class__ is not int: last_reg = j
    j = -1
    for k, p in enumerate(pieces):
        if p.alone:
            if k == 0: raise AsmSyntaxError(f"misplaced {_clip(p.text.strip())}: a rounding operand follows the register operands")
            if rc is not None: raise AsmSyntaxError(f"two rounding decorations in {mn} {_clip(', '.join(texts))}")
            if any(x.__class__ is int for x in values[:j + 1]):
                raise AsmSyntaxError(f"misplaced {_clip(p.text.strip())}: a rounding operand precedes the immediates"
                                     " (as GNU as and llvm-mc read it)")
            rc = p.rc
            continue
        j += 1
        v = values[j]
        where = f"{_clip(p.text.strip())} (operand {j + 1} of {mn})"
        if p.rc is not None:
            if rc is not None: raise AsmSyntaxError(f"two rounding decorations in {mn} {_clip(', '.join(texts))}")
            if not isinstance(v, Reg) or (j != 0 and j != last_reg):
                raise AsmSyntaxError(f"misplaced rounding {where}: it is written after the destination register (iced),"
                                     " after the last register operand (objdump) or as an operand of its own (GNU as, llvm-mc)")
            rc = p.rc
        if (p.mask is not None or p.zero) and j != 0:
            raise AsmSyntaxError(f"misplaced write mask {where}: {{k1}}-{{k7}} and {{z}} follow the destination (the first operand)")
        if p.zero and p.mask is None:
            raise AsmSyntaxError(f"{{z}} without a write mask in {where}: zeroing-masking needs {{k1}}-{{k7}} before it")
        if p.bcst:
            if not isinstance(v, Mem):
                raise AsmSyntaxError(f"misplaced broadcast {where}: {{1toN}} follows a memory operand")
            if j == 0: raise AsmSyntaxError(f"misplaced broadcast {where}: a destination is never broadcast")
            if not v.size:
                v = v.with_size(_bcst_element(mn, j, p.n, where))
            if p.n is not None: counts.append((j, p.n))
            v = v.bcst
        if p.mask is not None:
            v = Masked(v, REGISTERS[p.mask], p.zero)
        ops.append(v)
    if rc is not None or counts: ops.append(Decorations(rc, tuple(counts)))
    return tuple(ops)


def _bcst_forms(mn: str):
    name = canonical(mn.rpartition("}")[2].rpartition(" ")[2])
    try: return forms_of(name)
    except UnknownMnemonicError:
        alt = pseudo_op(name, ())
        if alt is None: return []
        try: return forms_of(canonical(alt[0]))
        except UnknownMnemonicError: return []


def _bcst_element(mn: str, j: int, n: int | None, where: str) -> int:
    """The element size of an unsized broadcast ``[rax]{1toN}`` (llvm-mc takes it): the one that the forms of
    ``mn`` with N elements in operand ``j`` broadcast."""
    if n is None: raise EvexOperandError(f"broadcast {where} needs a size: dword ptr […]{{1toN}} or qword ptr […]{{1toN}}")
    sizes = {f.evex_bcst for f in _bcst_forms(mn) if f.evex_bcst and len(f.operands) > j
             and f.operands[j].mem and f.operands[j].mem // f.evex_bcst == n}
    if len(sizes) != 1:
        raise EvexOperandError(f"broadcast {where} needs a size: dword ptr […]{{1to{n}}} or qword ptr […]{{1to{n}}}"
                           + ("" if sizes else f" (no form of {mn} broadcasts {n} elements there)"))
    return sizes.pop()


def element_count(form, i: int) -> int:
    """N of ``{1toN}`` for a broadcast in operand ``i`` of ``form``: its memory size over the element size."""
    return form.operands[i].mem // form.evex_bcst if form.evex_bcst and form.operands[i].mem else 0


def decorated_form(mn: str, ops: tuple, deco: Decorations, ip: int = 0):
    """The form a line with a ``{1toN}`` must take when it is not the one `x86gen.select` picks from the operands (the
    forms that differ in N only: ``vcvtpd2ps xmm1, qword ptr [rax]{1to4}`` is the 256-bit source), else None; an
    `x86gen.EvexOperandError` when the N written is no form's."""
    if not deco.bcst: return None
    form, default = _bcst_choice(mn, ops, deco, ip)
    if not default and " " in mn:   # prefix words ({disp32}, {evex} …) go with the form the operands choose only
        raise PrefixError(f"{mn} {fmt_operands(ops)}: the {{1toN}} written names {form.id}, not the form the operands choose;"
                          " x86gen takes prefix words with the latter only")
    return None if default else form


def _bcst_choice(mn: str, ops: tuple, deco: Decorations, ip: int):
    """(the form for a line with a ``{1toN}``, whether it is the one the operands choose anyway); see `decorated_form`."""
    kw = {} if deco.rc is None else {"rc": deco.rc}
    try: form, err = select(mn, *ops, ip=ip, rc=deco.rc), None
    except EncodeError as ex:   # (operands several forms take: the N written may choose)
        if mn.startswith(VEX_PREFIX) or " " in mn: raise   # `{vex} …{1to4}`, prefix words: no other form is what they ask
        form, err = None, ex
    if form is not None and all(element_count(form, j) == n for j, n in deco.bcst): return form, True
    alts = [f for f in _bcst_forms(mn) if f is not form and f.encoding_kind == "evex" and len(f.operands) == len(ops)
            and all(element_count(f, i) == m for i, m in deco.bcst) and _accepts(f, ops, kw)]
    if alts: return min(alts, key=lambda f: f.length), False
    if form is None: raise err
    j, n = next((j, n) for j, n in deco.bcst if element_count(form, j) != n)
    have = element_count(form, j)
    raise EvexOperandError(f"{mn} {fmt_operands(ops)}: {{1to{n}}} in operand {j + 1}, but {form.id} broadcasts {have}"
                           f" elements there ({{1to{have}}}: its {form.operands[j].mem}-bit operand of {form.evex_bcst}-bit elements)")


def encode_decorated(mn: str, ops: tuple, deco: Decorations, ip: int = 0) -> bytes:
    """Bytes of a text line with `Decorations`: ``rc=`` passed on, in the form its ``{1toN}`` names (`decorated_form`)."""
    kw = {} if deco.rc is None else {"rc": deco.rc}
    if not deco.bcst:
        return encode(mn, *ops, ip=ip, **kw)
    form = decorated_form(mn, ops, deco, ip) if " " in mn else None
    if form is None and " " in mn: return encode(mn, *ops, ip=ip, **kw)   # the prefix words' path (x86gen.selection.prefixed)
    return encode_form(_bcst_choice(mn, ops, deco, ip)[0], ops, deco.rc, ip)   # (the decorated path of Form.__call__)


def _accepts(form, ops: tuple, kw: dict) -> bool: return _encodes(form, ops, kw) is not None


def format_decorated(x, n: int = 0) -> str | None:
    """GNU as / llvm-mc text of a decorated operand (`x86gen.Masked`, `x86gen.Bcst`), or None for any other:
    ``zmm1 {k1} {z}``, ``zmmword ptr [rax] {k1}``, ``dword ptr [rax]{1to16}`` (``n`` elements, from the form; without
    it objdump's ``dword bcst [rax]``, which x86gen and GNU as read)."""
    cls = x.__class__
    if cls is Masked:
        return f"{format_operand(x.op)} {{{x.mask.name}}}" + (" {z}" if x.zero else "")
    if cls is Bcst:
        return format_operand(x.plain) + f"{{1to{n}}}" if n else str(x)   # objdump's `dword bcst [rax]` without a form
    return None


_VECTOR_KINDS = ("xmm", "ymm", "zmm")


def format_instruction(mn: str, ops: tuple, rc: int | None = None, form=None) -> str:
    """Intel syntax of ``mn ops`` with AVX-512 decorations in the GNU as / llvm-mc dialect (which both of them, and
    x86gen, read back): ``{1toN}`` with N from ``form`` (a `Form`, or a callable giving it, asked only when there is a
    broadcast), and the rounding ``rc`` as an operand of its own after the last vector register, where llvm-mc
    wants it (``vcvtsi2ss xmm1, xmm2, {rn-sae}, rax``, ``vcmpps k2, zmm0, zmm1, {sae}, 1``)."""
    texts, last_vec = [], -1
    for i, x in enumerate(ops):
        if x.__class__ is Bcst:
            f = form() if callable(form) else form
            texts.append(format_decorated(x, element_count(f, i) if f is not None else 0))
        elif x.__class__ is Masked: texts.append(format_decorated(x))
        else: texts.append(format_operand(x))
        r = x.op if x.__class__ is Masked else x
        if getattr(r, "kind", None) in _VECTOR_KINDS: last_vec = i
    if rc is not None: texts.insert(last_vec + 1 if last_vec >= 0 else len(texts), rounding_text(rc))
    return mn + (" " + ", ".join(texts) if texts else "")


def listed_decorated(mn: str, ops, data: bytes) -> str:
    """An Assembler record's text (`format_instruction`): its operands, an `x86gen.evex.Rounding` after them if it has
    one, and its bytes ``data``, which name the form where a ``{1toN}`` chose one other than the operands' default."""
    ops = list(ops)
    rc = ops.pop().rc if ops and ops[-1].__class__ is Rounding else None
    ops = tuple(ops)

    def form():
        kw = {} if rc is None else {"rc": rc}
        f = select(mn, *ops, **kw)
        if not data or not any(x.__class__ is Bcst for x in ops) or _encodes(f, ops, kw) == data: return f
        return next((g for g in _bcst_forms(mn) if len(g.operands) == len(ops) and _encodes(g, ops, kw) == data), f)
    return format_instruction(mn, ops, rc, form)


def _encodes(form, ops: tuple, kw: dict) -> bytes | None:
    try: return form(*ops, **kw)
    except EncodeError: return None


# ---- the text of listings -------------------------------------------------------------------------------------

def insn_text(mn: str, ops: tuple, data: bytes = b"") -> str:
    """An instruction record's Intel-syntax text (AVX-512 decorations as GNU as prints them)."""
    if any(o.__class__ in (Masked, Bcst) or o.__class__ is Rounding for o in ops):   # AVX-512: {k1}, {1toN}, {rn-sae}
        return listed_decorated(mn, ops, data)
    return mn + (" " + ", ".join(format_operand(o) for o in ops) if ops else "")


def float_bits_text(size: int, v: float) -> str:
    """A float's stored bits as hex (dd/dq)."""
    return f"{struct.unpack('<I', struct.pack('<f', v))[0]:#x}" if size == 4 else f"{struct.unpack('<Q', struct.pack('<d', v))[0]:#x}"


