"""Intel-syntax programs: `parse_program` / `assemble_program` (labels, directives, data, comments; GNU as, objdump and
iced-x86 flavours), read into an `x86gen.Assembler`. Operands and single lines are read by `x86gen.syntax`.
"""
from __future__ import annotations

import math
import re
import struct

from ._gen.asm_methods import BRANCH_MNEMONICS, MNEMONICS, AsmMethods
from .assembler import (
    KEYWORD_METHODS,
    MAX_OUTPUT,
    NOPS_GNU,
    PLAIN_MNEMONICS,
    PLANS_BY_SIGNATURE,
    TEXT_LEN,
    TEXT_PADS,
    Assembler,
    DataExpr,
    Label,
    LabelPlus,
    _keep_plan,
    unlabeled,
)
from .errors import (
    AsmSyntaxError,
    EncodeError,
    ImmediateRangeError,
    LabelOperand,
    SizeLimitError,
    UnknownMnemonicError,
    wrong_type,
)
from .evex import ROUNDING_RECORDS
from .memory import SIZE_BITS, Mem
from .registers import REGISTERS, Masked
from .selection.plans import Replan, plan_for
from .selection.request import EVEX_PREFIX, MNEMONIC_ALIASES, REX2_PREFIX, STRING_MNEMONICS, canonical
from .syntax import (
    _CACHE_MAX,
    _FAR_DEFAULT,
    _FAR_MNEMONICS,
    _INT,
    _LEXED,
    _OPERANDS,
    _PREFIXES,
    _REGS,
    _SIZE_OF,
    _SIZE_PREFIX,
    _SIZED_WORDS,
    EXPRESSION,
    LOCAL_REF,
    PREFIX_WORDS,
    SHORTHANDS,
    UNSUPPORTED_REGISTERS,
    Decorations,
    Regex,
    Relocatable,
    _piece,
    _simple_address,
    char_value,
    check_decoration_case,
    check_ptr,
    clip,
    decorated_form,
    evaluate,
    far_memory,
    has_decorations,
    iced_sized,
    parse_decorated,
    parse_int,
    parse_operand,
    parse_text_line,
    prefix_words,
    pseudo_op,
    shorthand,
    signed_terms,
    split_decorations,
    split_statements,
    strip_block_comments,
    unescape,
    unknown_word,
    unwrap_sized,
)

_RIP = REGISTERS["rip"]


# The plain (non-branch) methods by mnemonic, with their number of operands (-1: any), for the text parser.
_METHODS: dict[str, tuple] = {}


def _method(mn: str) -> tuple | None:
    """(the Assembler's method of plain mnemonic ``mn``, its number of operands or -1 for any), or None; kept."""
    if mn not in PLAIN_MNEMONICS: return None
    f = getattr(AsmMethods, KEYWORD_METHODS.get(mn, mn), None)
    if f is None: return None
    hit = _METHODS[mn] = (f, -1 if f.__code__.co_flags & 4 else f.__code__.co_argcount - 1)
    return hit

# =====================================================================================================
# Intel-syntax programs
# =====================================================================================================

# Symbols as GNU as spells them: ASCII letters, digits, `_`, `.`, `$` (and `@` of `foo@plt`), not
# starting with a digit; `1:` … `1b`/`1f` are GNU's numeric local labels.
_LABEL_DEF = Regex(r"\s*([A-Za-z_.$][\w.$@]*|[0-9]+)\s*:(?!:)", re.ASCII)
_IDENT = Regex(r"[A-Za-z_.$][\w.$@]*$", re.ASCII)
_FLOAT = Regex(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?|inf(?:inity)?|nan)", re.ASCII | re.I)
_STRINGS = Regex(r'"(?:[^"\\]|\\.)*"', re.S)
_CHAR_CONST = Regex(r"'(\\(?:[0-7]{1,3}|x[0-9a-fA-F]+|[^\n])|[^\\\n])'?")   # 'a', '\n', GNU's unclosed 'a'
_SQ_STRING = Regex(r"'(?:[^'\\\n]|\\.)*'")   # db 'abc': a NASM string, no quote inside
_ANNOT = Regex(r"\s*<[^<>]*>\s*$")           # objdump's `<func+0x10>` after a branch target
_SYM_BRACKET = Regex(r"^(.*?)\[(.*)\]$")
_BRANCH_HINT = Regex(r"^(?:short|near(?:\s+ptr)?)\s+", re.I)
# Far branches to an immediate segment:offset (SDM Vol.2 JMP/CALL "far", EA/9A: invalid in 64-bit mode): x86gen
# has no forms for them, and dropping `far` would give a near branch (`jmp far 0x10` was `eb 0e`). GNU as and
# llvm-mc refuse `jmp far 0x10`. Far branches through memory are rewritten before (`x86gen.syntax.far_memory`).
_FAR = Regex(r"^(?:far\b|[0-9a-fx]+\s*:)", re.I)
# A line that is one label definition or one branch to a label (``jne .L3``), which `_Parser.line` takes without
# `statement`'s steps; the branch mnemonics whose label operand those steps do nothing else with (no prefix word, far
# branch or iced-x86 sized mnemonic).
_LABEL_LINE = Regex(r"([A-Za-z_.$][\w.$@]*|[0-9]+):", re.ASCII)
_BRANCH_LINE = Regex(r"([a-z]+) ([A-Za-z_.$][\w.$@]*)", re.ASCII)
_NEAR_BRANCHES = frozenset(   # (BRANCH_MNEMONICS are the table's own names: no look-up in the table)
    mn for mn in (*BRANCH_MNEMONICS, *MNEMONIC_ALIASES) if (mn if mn in BRANCH_MNEMONICS else MNEMONIC_ALIASES.get(mn)) in BRANCH_MNEMONICS
    and mn not in PREFIX_WORDS and mn not in _PREFIXES and mn not in _FAR_MNEMONICS and mn not in _SIZED_WORDS
    and (mn in ("jmp", "call") or mn not in _FAR_DEFAULT))
_SIZE_WORD = Regex(r"([A-Za-z_]\w*)\s+ptr\b", re.ASCII | re.I)
_IGNORED_DIRECTIVES = {   # directives that make no byte of .text (symbols, debug and unwind information)
    ".intel_syntax", ".globl", ".global", ".local", ".weak", ".hidden",
    ".type", ".size", ".file", ".ident", ".loc", ".cfi_startproc", ".cfi_endproc", ".cfi_def_cfa_offset", ".cfi_offset",
    ".cfi_def_cfa_register", ".cfi_def_cfa", ".cfi_restore", ".cfi_remember_state", ".cfi_restore_state", ".cfi_escape",
    ".cfi_sections", ".cfi_adjust_cfa_offset", ".cfi_rel_offset", ".cfi_register", ".cfi_signal_frame", ".cfi_personality",
    ".cfi_lsda", ".cfi_undefined", ".cfi_same_value", ".cfi_return_column", ".cfi_window_save", ".addrsig", ".addrsig_sym",
    ".code64", ".protected", ".internal",
}
# directives that choose the section of the lines that follow (`_Parser.section_directive`)
_SECTION_DIRECTIVES = {".text", ".data", ".bss", ".rodata", ".section", ".pushsection", ".popsection", ".previous"}
_DATA_DIRECTIVES = {
    ".byte": 1, ".1byte": 1, "db": 1, ".short": 2, ".value": 2, ".word": 2, ".2byte": 2, ".hword": 2, "dw": 2,
    ".long": 4, ".int": 4, ".4byte": 4, "dd": 4, ".quad": 8, ".8byte": 8, "dq": 8, ".octa": 16,
    ".dc": 2, ".dc.b": 1, ".dc.w": 2, ".dc.l": 4,   # GNU as's m68k-style names (2.40 has no .dc.q)
}
_FLOAT_DIRECTIVES = {".float": 4, ".single": 4, ".double": 8, ".dc.s": 4, ".dc.d": 8}
_SPACE_DIRECTIVES = {".ds": 2, ".ds.b": 1, ".ds.w": 2, ".ds.l": 4}   # `.ds.w n, fill`: n words of fill (GNU as)
# GNU as's NOPs of 1 to 11 bytes in 64-bit code, as `.nops` writes them (the longest first, then the rest)
_NOPS_GNU = NOPS_GNU


_UNARY_OPS = Regex(r"[\s+~-]*")


def _unary_int(s: str) -> int:
    """A number after unary operators, as GNU as reads a data value: ``~5`` is -6, ``--5`` is 5,
    ``-~97`` is 98 (`parse_int` takes one sign). Raises `AsmSyntaxError` if no number follows."""
    m = _UNARY_OPS.match(s)
    v = parse_int(s[m.end():])
    for op in reversed(m.group()):
        if op == "-": v = -v
        elif op == "~": v = ~v
    return v


def _split_args(s: str) -> list[str]:
    """Split at commas outside quotes."""
    if '"' not in s and "'" not in s: return [x.strip() for x in s.split(",")]
    out, cur, q = [], [], None
    i = 0
    while i < len(s):
        ch = s[i]
        if q:
            cur.append(ch)
            if ch == "\\" and i + 1 < len(s): cur.append(s[i + 1]); i += 1
            elif ch == q: q = None
        elif ch in "\"'": q = ch; cur.append(ch)
        elif ch == ",": out.append("".join(cur).strip()); cur = []
        else: cur.append(ch)
        i += 1
    out.append("".join(cur).strip())
    return out


def _unquote(s: str) -> bytes:
    """The bytes of a quoted string ``"…"`` (or ``'…'`` in db), UTF-8 with GNU as's escapes."""
    return unescape(s[1:-1], s)


def _float_value(s: str, size: int, d: str):
    """A ``.float``/``.double`` value: a float, or for a NaN its bits as GNU as and llvm-mc store them
    (every mantissa bit set: ``.float nan`` is 0x7fffffff, where Python's struct gives 0x7fc00000).
    Numbers beyond the format's range or nonzero ones that round to zero are refused (GNU as:
    "cannot create floating-point number")."""
    t = s.strip()
    if not _FLOAT.fullmatch(t): raise AsmSyntaxError(f"{d} expects floating-point numbers, got {clip(t)}")
    v = float(t)
    if v != v:
        bits = (1 << (8 * size - 1)) - 1
        return bits | (1 << (8 * size - 1)) if t[0] == "-" else bits
    fmt = "<f" if size == 4 else "<d"
    try: back = struct.unpack(fmt, struct.pack(fmt, v))[0]
    except OverflowError: back = math.inf
    underflow = back == 0 and any(c in "123456789" for c in t.lower().partition("e")[0])   # 1e-400 is 0.0 already
    if (math.isinf(back) and "inf" not in t.lower()) or underflow:
        raise AsmSyntaxError(f"{d} {clip(t)}: out of the range of a {8 * size}-bit float")
    return v


def _leb128(v: int, signed: bool, d: str) -> bytes:
    """``v`` in LEB128 (DWARF 5, 7.6): 7 bits a byte, low first; bit 7 set on every byte but the last. Unsigned, a
    negative value is an error (GNU as takes it as 64-bit two's complement: ``.uleb128 -1`` is ten bytes); signed,
    the last byte's bit 6 is the sign."""
    if not signed and v < 0:
        raise AsmSyntaxError(f".uleb128 {v}: a negative value (write .sleb128, or the unsigned value)")
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if (not signed and not v) or (signed and ((v == 0 and not b & 0x40) or (v == -1 and b & 0x40))):
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


class _Parser:
    """Reads program text into an `Assembler`, one line at a time."""

    def __init__(self, asm: Assembler):
        self.a = asm
        self.local_back: dict[str, Label] = {}   # GNU numeric labels: `1:` … `jmp 1b` / `jne 1f`
        self.local_fwd: dict[str, Label] = {}
        self.nlocal = 0
        self.section = ".text"                   # the section lines go to: only .text is laid out (see `switch`)
        self.previous = ".text"                  # `.previous` goes back to it
        self.pushed: list[str] = []              # `.pushsection` … `.popsection`
        self.stopped = False                     # `.end`: GNU as reads no further
        self.target: str | None = None           # the text of the last branch operand that named a label
        self.symbols: dict[str, int] = {}        # `.set X, 5`, `X = 5`: absolute symbols (`set_symbol`)
        self.fixed: set[str] = set()             # those .equiv defined, which nothing redefines
        self.dot: Label | None = None            # `.` in the directive being read (`data_value`)

    # -- labels --

    def define(self, name: str) -> None:
        a = self.a
        if name.isdigit():
            lab = self.local_fwd.pop(name, None) or a.label(f".Llocal{name}_{self._n()}")
            self.local_back[name] = lab
            a.bind(lab)
        else:
            low = name.lower()
            if low in _REGS or low in UNSUPPORTED_REGISTERS or low == "riz":
                # a register name is never a label: an operand `r16` would read the register, not the label (r16-r31 are
                # APX's registers, which llvm-mc-22 reads so; GNU as 2.40 read them as symbols)
                raise AsmSyntaxError(f"label {name}: {name} is a register, not a label name")
            lab = a._named.get(name)
            if lab is not None and lab.bound:
                raise AsmSyntaxError(f"label {clip(name)} is already defined")
            if name in self.symbols: raise AsmSyntaxError(f"symbol {clip(name)} is already defined (by .set, .equ or =)")
            a.bind(a.get_label(name))

    def _n(self) -> int:
        self.nlocal += 1
        return self.nlocal

    def ref(self, name: str) -> Label:
        m = LOCAL_REF.match(name)
        if m:
            n, d = m.groups()
            if d == "b":
                lab = self.local_back.get(n)
                if lab is None: raise AsmSyntaxError(f"{clip(name)}: no label {n}: before this line")
                return lab
            lab = self.local_fwd.get(n)
            if lab is None:
                lab = self.a.label(f".Llocal{n}_{self._n()}")
                lab.line = self.a.line
                self.local_fwd[n] = lab
            return lab
        lab = self.a.get_label(name)
        if lab.line == 0: lab.line = self.a.line
        return lab

    def target_of(self, name: str):
        """A branch's target named ``name``: a label (`ref`), the value of a symbol (an address), or `.` (the branch)."""
        if self.symbols:
            v = self.symbols.get(name)
            if v is not None: return v
        if name == ".": return self.a.here(f".Ldot{self._n()}")
        return self.ref(name)

    # -- symbols --

    def set_symbol(self, d: str, rest: str) -> None:
        """``.set X, expr`` / ``.equ X, expr`` / ``X = expr`` (which may redefine X, as in GNU as) and ``.equiv X, expr``
        (which may not): X is an absolute value, read where it is used after this line (an immediate, a displacement,
        data, a branch target). A name used before as a label (or an address: GNU as would take X's later value there),
        a register or a keyword of Intel syntax, or a value that names a label, is an error."""
        name, comma, expr = rest.partition(",")
        name, expr = name.strip(), expr.strip()
        if not comma or not name or not expr: raise AsmSyntaxError(f"{d} expects a name and a value: {d} NAME, VALUE")
        if name == ".":
            raise AsmSyntaxError(f"{d} .: setting the location counter is not supported (x86gen lays out code from its"
                                 " base; write .zero or .balign)")
        if not _IDENT.match(name): raise AsmSyntaxError(f"{d} {clip(name)}: not a symbol name")
        low = name.lower()
        if low in _REGS or low in UNSUPPORTED_REGISTERS or low == "riz":
            raise AsmSyntaxError(f"{d} {name}: {name} is a register, not a symbol name")
        if low in _KEYWORDS: raise AsmSyntaxError(f"{d} {name}: {name} is a keyword of Intel syntax, not a symbol name")
        if name in self.a._named:
            lab = self.a._named[name]
            raise AsmSyntaxError(f"symbol {clip(name)} is already defined as a label" if lab.bound else
                                 f"{d} {clip(name)} after its use on line {lab.line} as a label or an address: define"
                                 " the symbol before its first use")
        if name in self.fixed or (d == ".equiv" and name in self.symbols):
            raise AsmSyntaxError(f"symbol {clip(name)} is already defined" + (" (by .equiv)" if name in self.fixed else ""))
        v = self.constant(expr, d)
        self.symbols[name] = v
        if d == ".equiv": self.fixed.add(name)

    def constant(self, s: str, d: str) -> int:
        """The value of expression ``s`` of directive ``d``, which must name no label."""
        v = evaluate(s, self.symbol_value, directive=True)
        if v.__class__ is not int:
            raise AsmSyntaxError(f"{d} {clip(s)}: a value that names a label is not supported here (a constant is)")
        return v

    def symbol_value(self, name: str):
        """A name's value in an expression: a symbol's, ``.`` (`dot`), else a label (a `Relocatable`)."""
        v = self.symbols.get(name)
        if v is not None: return v
        if name == ".":
            if self.dot is None: self.dot = self.a.here(f".Ldot{self._n()}")
            return Relocatable((self.dot,), (), 0)
        if name.lower() in UNSUPPORTED_REGISTERS or not name.isascii(): raise unknown_word(name, name)
        if not (_IDENT.match(name) or LOCAL_REF.match(name)): raise AsmSyntaxError(f"cannot parse {clip(name)}")
        return Relocatable((self.ref(name),), (), 0)

    def substitute(self, t: str) -> str:
        """Operand text ``t`` with each symbol as its value in parentheses, and `.` as a label bound here (the start of
        the instruction)."""
        def value(m):
            w = m.group()
            if w == ".": return self.target_of(".").name
            v = self.symbols.get(w)
            return w if v is None else f"({v})"
        return _NAME.sub(value, t)

    # -- lines --

    def line(self, raw: str):
        """Parse one line into the Assembler. Returns what `parse_program` may do instead for the same
        text later (see `_LINE_CACHE`), or None if that needs a parse again."""
        if "\t" in raw: raw = raw.replace("\t", " ")     # compilers separate with tabs
        s = raw.strip() if raw[:1] == " " else raw
        if s[-1:] == ":":   # `.L3:` alone, as `statement` reads it
            m = _LABEL_LINE.fullmatch(s)
            if m is not None:
                self.define(m.group(1))
                return _Define(m.group(1))
        else:   # `jne .L3`, as `instruction` and `operand` read it
            m = _BRANCH_LINE.fullmatch(s)
            if m is not None and m.group(1) in _NEAR_BRANCHES:
                t = m.group(2)
                low = t.lower()
                if low not in _REGS and low not in UNSUPPORTED_REGISTERS and _FAR.match(low) is None:
                    self.target = t
                    self.a.emit(m.group(1), self.target_of(t))
                    return _BranchTo(m.group(1), t)
        if ":" not in raw and "." not in raw and '"' not in raw and "'" not in raw and "=" not in raw:
            # a plain instruction (the common line): text's cached parser, then the assembler
            try: mn, ops = parse_text_line(raw)
            except AsmSyntaxError: pass          # a label operand, `short`, …: the full path below
            else:
                if not mn: return _skip
                if ops and ops[-1].__class__ is Decorations: return self.decorated(mn, ops)   # {rn-sae}, {1to16}
                if mn in PLAIN_MNEMONICS: return self.plain(mn, ops)
                if mn not in _DATA_DIRECTIVES and mn != "align" and (mn in MNEMONICS or pseudo_op(mn, ()) is None):
                    if MNEMONIC_ALIASES.get(mn) in PLAIN_MNEMONICS: return self.plain(mn, ops)
                    return self.a.emit(mn, *ops)
        if _LEXED.search(raw) is None: return self.statement(raw.strip())   # no comment, `;` or quote: as it is
        stmts = split_statements(raw)
        if len(stmts) > 1:                           # `xor eax, eax; ret`: each statement, the line not kept
            for st in stmts: self.statement(st.strip())
            return None
        return self.statement(stmts[0].strip() if stmts else "")

    def statement(self, s: str):
        """One statement (comments removed, stripped): label definitions, then a directive or an
        instruction. Returns what `line` returns."""
        labels: list[str] = []
        while s:
            m = _LABEL_DEF.match(s)
            if not m: break
            self.define(m.group(1))
            labels.append(m.group(1))
            s = s[m.end():].strip()
        if not s: return _Define(labels[0]) if len(labels) == 1 else _skip if not labels else None
        parts = s.split(None, 1)
        head = parts[0]
        rest = parts[1].strip() if len(parts) > 1 else ""
        low = head.lower()
        if "=" in s:
            m = _ASSIGN.match(s)
            if m is not None:   # `X = 5` is `.set X, 5` (GNU as)
                self.set_symbol("=", f"{m.group(1)}, {m.group(2)}")
                return None
        if low.startswith(".") or low in _DATA_DIRECTIVES or low == "align":
            self.directive(low, rest)
            return _Directive(low, rest) if not labels else None
        branch_to = self.instruction(low, rest)
        return _BranchTo(low, branch_to) if branch_to is not None and not labels else None

    def decorated(self, mn: str, ops: tuple) -> None:
        """Append an instruction whose operands end with `x86gen.syntax.Decorations`: its rounding as ``rc=``, in
        the form its ``{1toN}`` names where that is not the one the operands choose (`decorated_form`)."""
        ops, deco = split_decorations(ops)
        kw = {} if deco.rc is None else {"rc": deco.rc}
        form = decorated_form(mn, tuple(map(unlabeled, ops)), deco)   # (`[rip+label]{1to16}`: as `[rip+0]{1to16}`)
        if form is None: self.a.emit(mn, *ops, **kw)
        else: self.a.emit_form(form, *ops, **kw)

    def plain(self, mn: str, ops: tuple):
        """Append an instruction without label operands; its bytes and listing record, ``(bytes, record)``, are
        what a later identical line appends (see `_LINE_CACHE`)."""
        a = self.a
        n0, r0 = len(a._code), len(a._rip)
        # the record is kept whether or not this Assembler keeps a listing (the cache serves both kinds): the
        # method writes it to a list of its own, which then goes where the Assembler's records go
        text, a._text = a._text, []
        try:
            m = _METHODS.get(mn) or _method(mn)
            if m is not None and (m[1] < 0 or m[1] == len(ops)): m[0](a, *ops)   # the generated method's fast path
            else: a._emit(mn, ops)
        finally:
            rec, a._text = a._text, text
        if text is not None: text += rec
        return (a._code[-1], tuple(rec)) if len(a._rip) == r0 and len(a._code) == n0 + 1 and len(rec) == TEXT_LEN else None

    def directive(self, d: str, rest: str) -> None:
        a = self.a
        if d in _DATA_DIRECTIVES:
            size = _DATA_DIRECTIVES[d]
            self.dot = None   # (`.` is where each value goes: `symbol_value`)
            vals = [self.data_value(x, size, d, i * size) for i, x in enumerate(_split_args(rest))] if rest else []
            return a._data(size, tuple(vals))
        if d in _FLOAT_DIRECTIVES:
            size = _FLOAT_DIRECTIVES[d]
            return a._data(size, tuple(_float_value(x, size, d) for x in _split_args(rest)))
        if d in (".ascii", ".asciz", ".string"):
            out = b""
            for x in _split_args(rest):
                strings = _STRINGS.findall(x)          # GNU as: `"a" "b"` (no comma) is one string "ab"
                if not strings or _STRINGS.sub("", x).strip():
                    raise AsmSyntaxError(f"{d} expects quoted strings, got {clip(x)}")
                out += b"".join(_unquote(q) for q in strings) + (b"\0" if d != ".ascii" else b"")
            return a._data(1, (out,))
        if d in _SPACE_DIRECTIVES or d in (".fill", ".nops", ".org"): return self.fill_directive(d, _split_args(rest))
        if d in (".zero", ".skip", ".space"):
            args = _split_args(rest)
            if len(args) > 2: raise AsmSyntaxError(f"{d} takes a size and a fill byte")
            n = self.count_arg(args[0], d, "a size")
            fill = self.int_arg(args[1], d) if len(args) > 1 else 0
            if not -0x80 <= fill <= 0xFF: raise AsmSyntaxError(f"{d}: the fill value {clip(args[1])} does not fit in a byte")
            return a.zero(n, fill & 0xFF)
        if d in (".align", ".balign", ".p2align", "align"):
            args = _split_args(rest) if rest else []
            if not args or not args[0]: raise AsmSyntaxError(f"{d} expects an alignment")
            n = self.count_arg(args[0], d, "an alignment")
            if d == ".p2align":
                if n > 63: raise AsmSyntaxError(f".p2align {clip(args[0])}: at most 63 (2**63 bytes)")
                n = 1 << n
            if len(args) > 3: raise AsmSyntaxError(f"{d} takes an alignment, a fill value and a maximum skip, got {len(args)} values")
            fill = self.int_arg(args[1], d) if len(args) > 1 and args[1] else None
            mx = self.int_arg(args[2], d) if len(args) > 2 and args[2] else None
            if mx is not None and mx <= 0: mx = None   # GNU as: a max-skip of 0 (or below) is no limit, not "never pad"
            if fill is not None and fill & 0xFF == 0x90 and getattr(a, "executable", True):
                fill = None   # `.p2align 4, 0x90` in code: NOPs, as GNU as pads it (x86 md_do_align: the fill is the 1-byte NOP)
            return a.align(n, fill, mx)
        if d == ".intel_syntax":
            if rest and rest.lower() != "noprefix": raise AsmSyntaxError(".intel_syntax: only `noprefix` is supported")
            return
        if d == ".att_syntax": raise AsmSyntaxError("AT&T syntax is not supported (write Intel syntax, .intel_syntax noprefix)")
        if d in _SECTION_DIRECTIVES: return self.section_directive(d, rest)
        if d in (".uleb128", ".sleb128"):   # LEB128 (GNU as, DWARF): 7 bits a byte, low first, bit 7 set but on the last
            if not rest: raise AsmSyntaxError(f"{d} expects one or more values")
            out = b"".join(_leb128(self.int_arg(x, d), d == ".sleb128", d) for x in _split_args(rest))
            return a._data(1, (out,))
        if d == ".end": self.stopped = True; return   # GNU as: the end of the input (what follows is not read)
        if d in _IGNORED_DIRECTIVES or d.startswith(".cfi_"): return
        if d in (".set", ".equ", ".equiv"): return self.set_symbol(d, rest)
        if d == ".eqv": raise AsmSyntaxError(".eqv (a symbol evaluated where it is used) is not supported: write .set")
        raise AsmSyntaxError(f"unknown directive {clip(d)} (expected an instruction, a label, or one of .byte .short .long .quad "
                             ".float .double .ascii .asciz .zero .fill .nops .org .align .p2align .balign .uleb128 .text .globl .type)")

    def fill_directive(self, d: str, args: list[str]) -> None:
        """``.fill repeat, size, value``, ``.ds.w count, fill``, ``.nops size, max``, ``.org offset, fill`` as GNU as lays
        them out; where GNU as warns and writes something else (a size clamped, a value truncated), an error."""
        a = self.a
        if not args or not args[0]: raise AsmSyntaxError(f"{d} expects a count")
        n = self.count_arg(args[0], d, "the count")
        if d == ".org":   # to offset n of the program, padded with a byte (GNU as: 0), as the layout puts it
            if len(args) > 2: raise AsmSyntaxError(".org takes an offset and a fill byte")
            fill = self.int_arg(args[1], d) if len(args) > 1 else 0
            if not -0x80 <= fill <= 0xFF: raise AsmSyntaxError(f".org: the fill value {clip(args[1])} does not fit in a byte")
            return a.org(n, fill & 0xFF)
        if d == ".nops":
            if len(args) > 2: raise AsmSyntaxError(".nops takes a size and the largest NOP's size")
            most = self.count_arg(args[1], d, "the largest NOP") if len(args) > 1 else 0
            if most > 11: raise AsmSyntaxError(f".nops: a NOP has 1 to 11 bytes, not {most} (GNU as: invalid single nop size)")
            most = most or 11
            return a._data(1, (_NOPS_GNU[most] * (n // most) + _NOPS_GNU[n % most],))
        if d in _SPACE_DIRECTIVES:   # `.ds.w 2, 0x1234`: count elements of the fill value
            if len(args) > 2: raise AsmSyntaxError(f"{d} takes a count and a fill value")
            size, times = _SPACE_DIRECTIVES[d], n
        else:   # .fill repeat, size, value: value's low 4 bytes, then zeros up to size (GNU as's documented layout)
            if len(args) > 3: raise AsmSyntaxError(".fill takes a repeat count, a size and a value")
            size = self.count_arg(args[1], d, "the size") if len(args) > 1 and args[1] else 1
            if size > 8: raise AsmSyntaxError(f".fill: the size is at most 8 bytes, not {size} (GNU as clamps it to 8)")
            times = n
        v = self.int_arg(args[-1], d) if len(args) > (1 if d in _SPACE_DIRECTIVES else 2) else 0
        low = min(size, 4) if d == ".fill" else size
        if v < 0 and low < size:
            raise ImmediateRangeError(f"{d}: a negative value {clip(args[-1])} in {size} bytes: GNU as stores its low 4 bytes,"
                                      " then zeros (-1 is ff ff ff ff 00 …); write .quad for a 64-bit value")
        if not -(1 << (8 * low - 1)) <= v < 1 << (8 * low):
            raise ImmediateRangeError(f"{d}: the value {clip(args[-1])} does not fit in {8 * low} bits")
        if times * size > MAX_OUTPUT: raise SizeLimitError(f"{d}: {times * size:#x} bytes, more than the limit {MAX_OUTPUT:#x}")
        return a._data(1, ((v & ((1 << (8 * low)) - 1)).to_bytes(low, "little").ljust(size, b"\0") * times,))

    def section_directive(self, d: str, rest: str) -> None:
        """``.text``, ``.data``, ``.bss``, ``.rodata``, ``.section``, ``.pushsection``, ``.popsection``, ``.previous``:
        which section the lines that follow go to. x86gen lays out one section, .text: in any other, lines that would
        make bytes or labels are errors (`parse_program`), where GNU as would put them apart from the code (the issue
        on sections and objects lays them out); directives that make nothing (``.globl``, ``.type``, ``.cfi_*``) are
        read there too, so ``.section .note.GNU-stack,"",@progbits`` at the end of a compiler's output is fine."""
        if d in (".text", ".data", ".bss", ".rodata"):
            if rest.strip(): raise AsmSyntaxError(f"{d} {clip(rest.strip())}: subsections are not supported")
            name = d
        elif d == ".previous":
            name = self.previous
        elif d == ".popsection":
            if not self.pushed: raise AsmSyntaxError(".popsection without a .pushsection")
            name = self.pushed.pop()
        else:   # .section / .pushsection NAME[, flags, type …]
            name = rest.split(",")[0].strip().strip('"')
            if not name: raise AsmSyntaxError(f"{d} expects a section name")
            if d == ".pushsection": self.pushed.append(self.section)
        self.previous, self.section = self.section, name

    def int_arg(self, s: str, d: str) -> int:
        try: return parse_int(s)
        except AsmSyntaxError:
            t = s.strip()
            if not t or not (EXPRESSION.search(t) or t in self.symbols):
                raise AsmSyntaxError(f"{d}: expected a number, got {clip(t)}") from None
        return self.constant(t, d)   # `.zero 2+3`, `.balign X`

    def count_arg(self, s: str, d: str, what: str) -> int:
        """A directive's size or alignment: an integer ≥ 0 (GNU as: `.p2align -1` is 2**63, `.zero -1` nothing)."""
        n = self.int_arg(s, d)
        if n < 0: raise AsmSyntaxError(f"{d}: {what} cannot be negative, got {clip(s.strip())}")
        return n

    def data_value(self, s: str, size: int, d: str, at: int = 0):
        if not s: raise AsmSyntaxError("empty value in data directive")
        if s[0] == "'" and _CHAR_CONST.fullmatch(s): return char_value(s, s)   # .long 'a' is 97 (GNU as)
        if s[0] == '"' or (s[0] == "'" and size == 1 and _SQ_STRING.fullmatch(s)):   # db 'abc' (NASM)
            if size != 1 or len(s) < 2 or s[-1] != s[0]: raise AsmSyntaxError(f"bad string {clip(s)} (strings go in db/.ascii)")
            return _unquote(s)
        if "'" in s:
            # character constants in an expression are numbers (GNU as): `-'h'` is -104, `'a'+'b'` 195
            t = _CHAR_CONST.sub(lambda m: f" {char_value(m.group(), s)} ", s)   # spaced: `'a''b'` is no 9798
            try:
                if "'" in t: raise AsmSyntaxError(s)     # `'ab'` in .long: no character constant
                return self.data_value(t, size, d, at)
            except ImmediateRangeError: raise ImmediateRangeError(f"{clip(s)} does not fit in {8 * size} bits") from None
            except AsmSyntaxError:
                raise AsmSyntaxError(f"cannot parse {clip(s)} (expected a number, a character constant, a label, "
                                     "or label±number)") from None
        try: v = _unary_int(s) if s[0] in "+-~" else parse_int(s)
        except ValueError:
            digits = s.lstrip("+-~ \t")
            if digits.isascii() and digits.isdigit(): raise   # `08`, 5000 digits: what parse_int says, no float
        else:
            if not -(1 << (8 * size - 1)) <= v < 1 << (8 * size):
                raise ImmediateRangeError(f"{clip(s)} does not fit in {8 * size} bits")
            return v
        if _FLOAT.fullmatch(s):
            # NASM's dd/dq take floats (`dd 1.5` is float32 1.5; the Assembler's listing prints them so);
            # GNU as and llvm-mc refuse `.long 1.5`: storing float bits there would be a guess.
            if d in ("dd", "dq"): return _float_value(s, size, d)
            raise AsmSyntaxError(f"{clip(s)} is a floating-point number in an integer directive (floats go in .float/.double)")
        return self.expr(s, size, at)

    def expr(self, s: str, size: int, at: int = 0):
        """An expression of a data directive (`x86gen.syntax.evaluate`): a number, or labels (`.` too: the place of the
        value, ``at`` bytes into the directive) added and subtracted with numbers: ``label+8``, ``.L4-.L3``, ``.-L``."""
        v = evaluate(s, self.symbol_value, directive=True)
        if v.__class__ is int:
            if not -(1 << (8 * size - 1)) <= v < 1 << (8 * size):
                raise ImmediateRangeError(f"{clip(s)} does not fit in {8 * size} bits")
            return v
        plus, minus, addend = v.plus, v.minus, v.addend
        if at and self.dot is not None: addend += at * (plus.count(self.dot) - minus.count(self.dot))
        if not plus and not minus: return addend
        if len(plus) == 1 and not minus and not addend: return plus[0]
        return DataExpr(plus, minus, addend)

    def instruction(self, mn: str, rest: str) -> str | None:
        """Parse and append an instruction; returns the label name of a branch whose operand is just that."""
        if mn == EVEX_PREFIX or mn == REX2_PREFIX:   # `{evex} vaddps …`, `{rex2} add …`: those forms only (selection.candidates)
            mn2, _, rest2 = rest.strip().partition(" ")
            mn2 = mn2.lower()
            if not mn2 or mn2.startswith("{") or mn2 in _PREFIXES:
                raise AsmSyntaxError(f"{mn} must precede a mnemonic, not {clip(mn2) or 'nothing'}")
            return self.instruction(mn + mn2, rest2.strip())
        words = ""
        if mn in PREFIX_WORDS:   # lock, rep, {vex}, {vex3}, objdump's `ss` …: kept as words of the mnemonic (x86gen.prefixes)
            mn, rest = prefix_words(mn, rest)
            words, _, mn = mn.rpartition(" ")
        if mn in _PREFIXES or mn == "ret":   # iced-x86's `data16 push 5`, `ret far` (x86gen.syntax.iced_sized)
            sized = iced_sized(mn, rest)
            if sized is not None: mn, rest = sized
            elif mn != "ret": raise AsmSyntaxError(f"instruction prefix {clip(mn)} is not supported")
        far = far_memory(mn, rest)   # `jmp far ptr [rax]`, `ljmp [rax]` (x86gen.syntax.far_memory)
        if far is not None: mn, rest = far
        if mn in _FAR_MNEMONICS: raise UnknownMnemonicError(f"{mn}: far branches are not supported by x86gen")
        branch = canonical(mn) in BRANCH_MNEMONICS
        self.target = None
        deco = None
        if not branch and has_decorations(rest):   # AVX-512 {k1}, {z}, {1to16}, {rn-sae}, objdump's bcst
            ops, deco = split_decorations(parse_decorated(mn, _split_args(rest), lambda t: self.operand(t, False)))
        else: ops = tuple(self.operand(t, branch) for t in _split_args(rest)) if rest else ()
        if branch and len(ops) == 1 and self.target is not None:   # `jne .L3`, `jmp 1f`
            self.a.emit(f"{words} {mn}" if words else mn, *ops)
            return None if words else self.target   # (`data16 jmp 1f`: parsed again each time, not cached by `low`)
        mn, ops = shorthand(mn, ops)
        if mn not in MNEMONICS:    # vcmpltps x, y, z = vcmpps x, y, z, 1; pclmulhqlqdq (objdump, iced)
            alt = pseudo_op(mn, ops)
            if alt is not None: mn, ops = alt
        if deco is not None: return self.decorated(f"{words} {mn}" if words else mn, (*ops, deco))
        self.a.emit(f"{words} {mn}" if words else mn, *ops)

    def operand(self, t: str, branch: bool):
        if not t: raise AsmSyntaxError("empty operand (expected register, memory, immediate or label)")
        if "'" in t: t = _CHAR_CONST.sub(lambda m: str(char_value(m.group(), t)), t)   # 'a' is 97, before case folds
        if self.symbols or "." in t: t = self.substitute(t)   # `mov eax, X` (.set X, 5), `jmp .`
        low = t.lower()
        if branch:
            if _FAR.match(low):
                raise AsmSyntaxError(f"far branch {clip(t)}: a far branch to an immediate segment:offset is invalid in 64-bit"
                                     " mode (SDM Vol.2 JMP/CALL); far branches go through memory: jmp fword ptr [rax]")
            if low[:5] == "near " and low[5:].lstrip()[:3] != "ptr":   # (`near ptr L` is as `L`, as GNU as reads it)
                raise AsmSyntaxError(f"{clip(t)}: `near` without ptr, which GNU as and llvm-mc refuse; write the label alone"
                                     ", sized to reach it (as GNU as sizes `jmp near ptr L`), or {disp32} jmp L for a rel32")
            low = _BRANCH_HINT.sub("", low)
            t = _BRANCH_HINT.sub("", t)
            if "<" in low:                        # objdump: `jmp 1a <f+0x1a>` (hex without 0x in object files)
                m = _ANNOT.search(t)
                if m:
                    t = t[:m.start()].strip(); low = t.lower()
                    if re.fullmatch(r"[0-9a-f]+", low): return int(low, 16)
        if branch and low not in _REGS and low not in UNSUPPORTED_REGISTERS and (_IDENT.match(t) or LOCAL_REF.match(t)):
            # a label: no operand parse
            self.target = t
            return self.ref(t)
        try:
            return parse_operand(low)
        except AsmSyntaxError:
            pass
        if branch:
            if _IDENT.match(t) or LOCAL_REF.match(t): return self.ref(t)
            if not t.isascii(): raise unknown_word(t, t)
            if "[" in t: return self.label_mem(t)     # `jmp qword ptr [rip+T]`: indirect, through memory at label T
            if EXPRESSION.search(t) and _NAME.search(t):   # `jmp L+1`, `jmp .+2`: a label plus a number (GNU as)
                self.dot = None   # (`.` is the branch's own address)
                v = evaluate(t, self.symbol_value)
                if v.__class__ is int: return v
                if len(v.plus) == 1 and not v.minus: return LabelPlus(v.plus[0], v.addend)
                raise AsmSyntaxError(f"branch target {clip(t)}: a label plus or minus a number (jmp L+1, jmp .+2), or an"
                                     " address, is a branch target; not a sum or difference of labels")
            raise AsmSyntaxError(f"bad branch target {clip(t)} (expected a label, an address or a register/memory operand)")
        m = _SIZE_WORD.match(t)
        if m and m.group(1).lower() not in _SIZE_OF:
            raise AsmSyntaxError(f"unknown size keyword {clip(m.group(1))} in {clip(t)} (expected "
                                 f"{', '.join(sorted(SIZE_BITS, key=SIZE_BITS.get))} ptr)")
        if "[" in t or _IDENT.match(t.split()[-1] if t.split() else ""):
            return self.label_mem(t)
        if t[:1] != "%" and EXPRESSION.search(t): evaluate(low)   # an expression's error (`1==1`, `5/0`; not AT&T's %eax)
        if "0" <= t[:1] <= "9": parse_int(t)          # a number or its error
        if not t.isascii(): raise unknown_word(t, t)
        raise AsmSyntaxError(f"unknown operand {clip(t)} (expected a register, memory [base+index*scale+disp], an immediate, "
                             "or a label in a branch or in [rip+label])")

    def label_mem(self, t: str) -> Mem:
        """A memory operand naming a label: ``[rip+name]``, ``qword ptr [rip+name+8]``, GCC's ``.LC0[rip]``; without rip
        (``table[0+rax*8]``, ``[8*rax+.LJTI0_0]``, ``dword ptr name``, ``[name]``) the label's absolute address in a
        sign-extended disp32, as GNU as and llvm-mc read them (R_X86_64_32S in an object)."""
        low = unwrap_sized(t.strip())   # gcc's `[QWORD PTR .L5[0+rax*8]]`
        size_txt = ""
        seg = None
        m = _SIZE_PREFIX.match(low.lower())
        if m:
            check_ptr(m, low)
            size_txt = m.group(1) + " ptr "
            low = low[len(low) - len(m.group(2)):].strip()
        m = _SYM_BRACKET.match(low)
        if m:
            outside, inner = m.group(1).strip(), m.group(2)
            seg_m = _SEGMENT_WORD.match(outside.lower())
            if seg_m: seg, outside = seg_m.group(1), outside[seg_m.end():].strip()
        elif _IDENT.match(low):
            outside, inner = low, ""       # `qword ptr label`: its absolute address (disp32), as GNU as and llvm-mc read it
        else:
            raise AsmSyntaxError(f"cannot parse memory operand {clip(t)}")
        join = "+" if outside and inner and inner.lstrip()[:1] not in ("+", "-") else ""   # (`tab[-4+rax*4]`)
        terms = signed_terms(outside + join + inner, t)
        sym, rest = None, []
        for sign, term in terms:
            if term.lower() in _REGS or "*" in term or _INT.fullmatch(term):
                rest.append(sign + term.lower())
            elif term.lower() in UNSUPPORTED_REGISTERS: raise unknown_word(term, t)
            elif _IDENT.match(term) or LOCAL_REF.match(term):
                if sym is not None: raise AsmSyntaxError(f"two labels in memory operand {clip(t)}")
                if sign == "-": raise AsmSyntaxError(f"a label cannot be subtracted in memory operand {clip(t)}")
                sym = term
            else:
                raise unknown_word(term, t)
        if sym is None:
            if EXPRESSION.search(t): parse_operand(t.lower())   # its error: `[rax+5/0]`, `[rax+riz*1+2*4]`
            raise AsmSyntaxError(f"cannot parse memory operand {clip(t)}")
        rip = any(x.lstrip("+") == "rip" for x in rest)
        rest = [x for x in rest if x.lstrip("+") != "rip"]   # [rip+x+8] is [x+8]; the addend alone may exceed disp32
        inner_txt = "+".join(x.lstrip("+") if x[0] != "-" else x for x in rest).replace("+-", "-") or "0"
        base = parse_operand(f"{size_txt}[{inner_txt}]")
        if base.base is not None or base.index is not None or not rip:
            # `table[0+rax*8]`, `[8*rax+.LJTI0_0]`, `dword ptr sym`: the label's absolute address in a disp32 (sign-extended;
            # R_X86_64_32S in an object), as GNU as reads them
            if base.__class__ is not Mem: raise AsmSyntaxError(f"a label in memory operand {clip(t)} with a 32-bit or vector"
                                                              " address is not supported")
            m = Mem(base.base, base.index, base.scale, base.disp, base.size, label=self.ref(sym))
        else: m = Mem(_RIP, None, 1, base.disp, base.size, label=self.ref(sym))
        return m if seg in (None, "ds") else m.with_segment(seg)   # ds: the segment of [rip+x] anyway (no byte)


_SEGMENT_WORD = Regex(r"(es|cs|ss|ds|fs|gs)\s*:")
# a name in operand text (not the letters of a number: 0x1f, 10h), `.` alone included; `X = 5` (not `==`)
_NAME = Regex(r"(?<![\w.$@])[A-Za-z_.$][\w.$@]*", re.ASCII)
_ASSIGN = Regex(r"([A-Za-z_.$][\w.$@]*)\s*=(?!=)\s*(.*)$", re.ASCII)
# words an Intel-syntax operand reads otherwise than as a symbol: size keywords, ptr, operators (x86gen.syntax.evaluate)
_KEYWORDS = frozenset({*_SIZE_OF, "ptr", "offset", "short", "near", "far", "bcst", "flat", "and", "or", "xor", "not", "mod",
                       "shl", "shr", "eq", "ne", "lt", "le", "gt", "ge"})

# Per source line (its exact text), what parsing it did, to do again without parsing: an instruction without labels
# as (bytes, listing record) (its bytes depend on the text alone; the record is appended where the Assembler keeps
# a listing), or a callable taking the parser for label definitions, branches to labels, directives and blank lines.
_LINE_CACHE: dict[str, object] = {}
_LINE_CACHE_MAX = 1 << 16   # entries (~250 bytes each with their records)


def _skip(p: _Parser) -> None: return None


class _Define:
    __slots__ = ("name",)
    def __init__(self, name: str): self.name = name
    def __call__(self, p: _Parser) -> None: p.define(self.name)


class _Directive:
    __slots__ = ("d", "rest")
    def __init__(self, d: str, rest: str): self.d, self.rest = d, rest
    def __call__(self, p: _Parser) -> None: p.directive(self.d, self.rest)


class _BranchTo:
    """``jne .L3``: the label is looked up again each time (``1f`` means the next ``1:``)."""
    __slots__ = ("mn", "target")
    def __init__(self, mn: str, target: str): self.mn, self.target = mn, target
    def __call__(self, p: _Parser) -> None: p.a.emit(self.mn, p.target_of(self.target))


def _operand_text(t: str):
    """`parse_operand` of an operand's text (not in `_OPERANDS`), or None where it raises (the line takes
    `_Parser.line`). The common memory operand goes to `_simple_address` without `parse_operand`'s other checks."""
    try:
        u = t[1:] if t[:1] == " " else t   # (`, [rax]`: the space after the comma)
        if u[-1:] == "]": v = _simple_address(u)
        else:   # a decimal or 0x number, as `parse_int` reads it (a leading 0 is octal there; `_` no digit separator)
            w = u[1:] if u[:1] == "-" else u
            v = None
            if w.isascii() and w.isalnum() and (w[0] != "0" or len(w) == 1 or w[1] == "x"):
                try: v = int(w) if w.isdigit() else int(w, 16) if w[1:2] == "x" else None
                except ValueError: v = None   # (0xg, too many digits: parse_operand says which)
                if v is not None and w is not u: v = -v
        if v is not None:
            if len(_OPERANDS) >= _CACHE_MAX: _OPERANDS.clear()   # as parse_operand caches it
            _OPERANDS[t] = v
            return v
        return parse_operand(t)
    except EncodeError: return None


def _plain_record(raw: str):
    """``(bytes, listing record)`` of ``raw`` if it is one instruction without labels whose operands `parse_operand`
    reads (the common line of a program): split, parsed and encoded here without the general parser's layers.
    None sends the line to `_Parser.line`, which handles everything else and reports errors.

    No character needs checking first: a label definition, directive, comment, quote or statement separator
    leaves the mnemonic one no plan has or an operand `parse_operand` refuses (a segment override
    ``fs:[rax]`` is a `SegMem`, whose signature no plan has either), so such a line gets None here."""
    s = raw.lower()
    if s[:1] == " " or "\t" in s: s = s.replace("\t", " ").strip()   # compilers separate with tabs
    if "{" in s:
        check_decoration_case(raw)   # `{Z}`: lower case only, as GNU as reads it
        return _decorated_record(s)
    mn, _, rest = s.partition(" ")
    get = _OPERANDS.get
    if not rest:
        ops = ()
        key = (mn,)
    elif "," not in rest:
        a = get(rest)
        if a is None:
            if mn in _NEAR_BRANCHES: return None   # most likely a label (`jne .L3`): `_Parser.line`
            a = _operand_text(rest)
            if a is None: return None
        ops = (a,)
        key = (mn, "i" if a.__class__ is int else a.sig)
    else:
        toks = rest.split(",")
        if len(toks) == 2:
            ta, tb = toks
            a = get(ta)
            if a is None:
                a = _operand_text(ta)
                if a is None: return None
            b = get(tb)
            if b is None:
                b = _operand_text(tb)
                if b is None: return None
            ops = (a, b)
            key = (mn, "i" if a.__class__ is int else a.sig, "i" if b.__class__ is int else b.sig)
        elif len(toks) == 3:
            ta, tb, tc = toks
            a = get(ta)
            if a is None:
                a = _operand_text(ta)
                if a is None: return None
            b = get(tb)
            if b is None:
                b = _operand_text(tb)
                if b is None: return None
            c = get(tc)
            if c is None:
                c = _operand_text(tc)
                if c is None: return None
            ops = (a, b, c)
            key = (mn, "i" if a.__class__ is int else a.sig, "i" if b.__class__ is int else b.sig,
                   "i" if c.__class__ is int else c.sig)
        else:
            vals = []
            for t in toks:
                v = get(t)
                if v is None:
                    v = _operand_text(t)
                    if v is None: return None
                vals.append(v)
            ops = tuple(vals)
            key = (mn, *["i" if v.__class__ is int else v.sig for v in ops])
    f = SHORTHANDS.get(mn)
    if f is not None:
        mn2, ops2 = f(mn, ops)
        if mn2 is not mn or ops2 is not ops:   # rewritten: `imul eax, 10`, `shr si`, `mov es, ax`, …
            mn, ops = mn2, ops2
            key = (mn, *["i" if x.__class__ is int else x.sig for x in ops])
    plan = PLANS_BY_SIGNATURE.get(key)
    if plan is None:
        plan = _first_plan(mn, key, ops)
        if plan is None: return None
    try: out = plan(*ops)
    except (EncodeError, LabelOperand, Replan): return None   # (Replan: the Assembler's path compiles the plan)
    return out, (mn,) + ops + TEXT_PADS[len(ops)]


# Decorated lines (AVX-512 masks, {z}, {1toN}, a rounding operand) take `_decorated_record` the first time, as plain
# ones take `_plain_record`: their operands and plans are kept here.
_DECORATED_TOKENS: dict[str, tuple] = {}    # operand text → (operand, N of its {1toN} or 0), or (None, rc): `{rn-sae}`
_DECORATED_PLANS: dict[tuple, object] = {}  # (mnemonic, rc, {1toN} counts, *signature) → plan


def _decorated_token(t: str) -> tuple | None:
    """(operand, N) of decorated operand text ``t`` (`_DECORATED_TOKENS`), or None where the general parser reads it (an
    unsized broadcast, iced's ``zmm1 {rn-sae}``, errors)."""
    hit = _DECORATED_TOKENS.get(t)
    if hit is not None: return hit
    try:
        p = _piece(t)
        if p.alone: hit = (None, p.rc)   # `{rn-sae}` as an operand of its own, as GNU as and llvm-mc write it
        elif p.rc is not None or (p.zero and p.mask is None): return None
        else:
            v = parse_operand(p.base)
            if p.bcst:
                if not isinstance(v, Mem) or not v.size: return None   # (unsized: the element size from the forms)
                v = v.bcst
            if p.mask is not None: v = Masked(v, REGISTERS[p.mask], p.zero)
            hit = (v, p.n or 0)
    except EncodeError: return None
    if len(_DECORATED_TOKENS) >= _CACHE_MAX: _DECORATED_TOKENS.clear()
    _DECORATED_TOKENS[t] = hit
    return hit


def _decorated_record(s: str):
    """``(bytes, listing record)`` of line ``s`` (lower case, stripped) if it is one instruction with AVX-512 decorations
    that the Assembler's `emit` would append as it is (with ``rc=`` for a rounding operand, which comes last): its plan
    is `x86gen.encode`'s (`plan_for` with the same operands and rounding). None sends the line to `_Parser.line`: a
    ``{1toN}`` that names another form than the operands choose, a rounding before an immediate, errors."""
    mn, _, rest = s.partition(" ")
    if mn not in PLAIN_MNEMONICS or not rest: return None
    ops, counts, rc = [], [], None
    get = _OPERANDS.get
    for t in rest.split(","):
        if rc is not None: return None
        v = get(t)
        if v is None:
            if "{" in t:
                d = _decorated_token(t)
                if d is None: return None
                v, n = d
                if v is None:
                    rc = n
                    continue
                if n: counts.append((len(ops), n))
            else:
                v = _operand_text(t)
                if v is None: return None
        ops.append(v)
    if rc is not None and (not ops or len(ops) >= TEXT_LEN - 1 or any(x.__class__ is int for x in ops)):
        return None   # (a rounding comes before the immediates: the general parser says so)
    ops = tuple(ops)
    counts = tuple(counts)
    key = (mn, rc, counts, *["i" if x.__class__ is int else x.sig for x in ops])
    plan = _DECORATED_PLANS.get(key)
    if plan is None:
        try:
            if counts and decorated_form(mn, ops, Decorations(rc, counts)) is not None: return None   # (another form)
            plan = plan_for(mn, key[3:], ops, rc)[0]
        except EncodeError: return None
        _DECORATED_PLANS[key] = plan
    try: out = plan(*ops)
    except (EncodeError, LabelOperand, Replan): return None
    if rc is not None: ops += (ROUNDING_RECORDS[rc],)
    return out, (mn,) + ops + TEXT_PADS[len(ops)]


def _first_plan(mn: str, key: tuple, ops: tuple):
    """The plan of a signature met for the first time, made and kept as `Assembler._emit` makes it; None sends the line
    to `_Parser.line` (string instructions, lea of a 64-bit address, mnemonics with methods of their own, errors)."""
    if mn not in PLAIN_MNEMONICS or mn in STRING_MNEMONICS or (mn == "lea" and key[-1][:5] == "moffs"): return None
    try: return _keep_plan(mn, key[1:], ops, key)
    except EncodeError: return None


def _off_text_line(p: _Parser, raw: str, n: int) -> bool:
    """Line ``n`` in a section other than .text: read (directives only), refused if it makes bytes or a label.
    Returns whether the section that follows is still not .text."""
    a = p.a
    n0 = len(a._code)
    a.line = n
    try: p.line(raw)
    except EncodeError as ex:
        raise type(ex)(f"line {n}: {clip(raw.strip())}: {ex}") from None
    if len(a._code) != n0:   # (a label is an item too)
        raise AsmSyntaxError(f"line {n}: {clip(raw.strip())}: in section {p.section}: x86gen lays out one section, .text, in flat"
                             " bytes (x86gen.assemble) (GNU as would put this apart from the code): keep code, data and labels in .text,"
                             " or make an ELF object with x86gen.assemble_object (x86gen asm -o file.o)")
    return p.section != ".text"


def parse_program(text: str, base: int = 0, asm: Assembler | None = None, *, listing: bool = True) -> Assembler:
    """Parse an Intel-syntax program into an `Assembler` (not yet assembled), which keeps a listing (`Assembler.lines`,
    `Assembler.listing`) unless ``listing`` is False; with ``asm``, into that Assembler, as it was made.

    Errors are `AsmSyntaxError` (or other `EncodeError`\\ s) naming the line number, the line and what
    was expected.
    """
    if text.__class__ is not str and not isinstance(text, str): raise wrong_type("parse_program", "text", text, "a str")
    if asm is None:
        if base.__class__ is not int:
            import operator
            try: base = operator.index(base)
            except TypeError: raise wrong_type("parse_program", "base", base, "an int") from None
        a = Assembler(base, listing=listing)
    elif isinstance(asm, Assembler): a = asm
    else: raise wrong_type("parse_program", "asm", asm, "an Assembler or None")
    p = _Parser(a)
    a.source = lines = text.splitlines()
    if "/*" in text: lines = strip_block_comments(text).splitlines()   # same line numbers, comments gone
    cache, code, recs = _LINE_CACHE, a._code, a._text
    n = 0
    room = _LINE_CACHE_MAX - len(cache)   # entries the cache takes before it starts again (bounded)
    off = False   # in a section other than .text (`_Parser.section_directive`): every line through `_Parser.line`
    for raw in lines:
        n += 1
        if off:
            off = _off_text_line(p, raw, n)
            if p.stopped: break
            continue
        hit = cache.get(raw)
        if hit is None:
            hit = _plain_record(raw)
            if hit is not None:
                room -= 1
                if room < 0: cache.clear(); room = _LINE_CACHE_MAX - 1
                cache[raw] = hit
                code.append(hit[0])
                if recs is not None: recs += hit[1]
                continue
        elif hit.__class__ is tuple:   # an instruction line met before: append its bytes (and listing record)
            code.append(hit[0])
            if recs is not None: recs += hit[1]
            continue
        a.line = n
        try:
            if hit is not None: hit(p)     # a label, branch or directive line met before: parsed already
            else:
                hit = p.line(raw)
                if hit is not None:
                    room -= 1
                    if room < 0: cache.clear(); room = _LINE_CACHE_MAX - 1   # start again rather than keep the oldest
                    cache[raw] = hit
        except EncodeError as ex:
            raise type(ex)(f"line {n}: {clip(raw.strip())}: {ex}") from None
        if p.section != ".text" or p.stopped:
            if p.stopped: break
            off = True
    a.line = 0
    if p.local_fwd:
        name = next(iter(p.local_fwd))
        line = p.local_fwd[name].line
        raise AsmSyntaxError(f"line {line}: {clip(a.source[line - 1].strip())}: no label `{name}:` after this reference to {name}f")
    return a


def assemble_program(text: str, ip: int = 0) -> bytes:
    """Assemble a whole Intel-syntax program (labels, directives, comments) starting at address ``ip``."""
    return parse_program(text, ip, listing=False).assemble()
