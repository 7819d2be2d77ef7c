"""Intel-syntax text in, bytes out: ``assemble("vaddps ymm0, ymm1, ymmword ptr [rdi+8]")``.

The syntax is what GNU ``objdump -d -M intel`` and iced-x86's Intel formatter print and what
GNU as (``.intel_syntax noprefix``) and llvm-mc accept: ``mnemonic op, op, ...`` with registers,
immediates (``10``, ``-0x10``, ``10h``), and memory operands ``[size ptr] [base+index*scale+disp]``
(``rip`` as base for RIP-relative; ``ds:`` overrides are accepted and ignored). Case-insensitive.
A branch target written as a number is an absolute address; the text starts at address ``ip``.

Parsed operands are cached by their text, so a program that repeats operands parses each once.
"""
from __future__ import annotations

import re

from .encoder import encode as _encode
from .errors import AsmSyntaxError, EncodeError
from .memory import SIZE_BITS, Mem
from .registers import ALIASES, REGISTERS

_REGS = {**REGISTERS, **ALIASES}
_OPERANDS: dict[str, object] = {}
_SIZE_PREFIX = re.compile(r"^(byte|word|dword|qword|tbyte|xmmword|ymmword|zmmword|oword)\s+(?:ptr\s*)?(.*)$")
_TERM = re.compile(r"\s*([+-]?)\s*([^+\-\s]+)\s*")


def parse_int(s: str) -> int:
    """An integer in C (``0x1f``, ``0b101``, ``017`` is decimal) or MASM (``1fh``) notation."""
    t = s.strip().replace("_", "")
    neg = t.startswith("-")
    if neg or t.startswith("+"): t = t[1:].strip()
    if t.endswith("h") and re.fullmatch(r"[0-9][0-9a-f]*h", t): v = int(t[:-1], 16)
    elif t.startswith(("0x", "0b", "0o")): v = int(t, 0)
    elif t.isdigit(): v = int(t, 10)
    else: raise ValueError(s)
    return -v if neg else v


def _parse_address(inner: str, size: int, text: str) -> Mem:
    base = index = None
    scale, disp = 1, 0
    pos = 0
    inner = inner.strip()
    if not inner: raise AsmSyntaxError(f"empty memory operand {text!r}")
    while pos < len(inner):
        m = _TERM.match(inner, pos)
        if not m or m.end() == pos: raise AsmSyntaxError(f"cannot parse memory operand {text!r}")
        sign, term = m.group(1), m.group(2)
        pos = m.end()
        if "*" in term:
            a, _, b = term.partition("*")
            r, n = (a, b) if a in _REGS else (b, a)
            if r not in _REGS or sign == "-": raise AsmSyntaxError(f"bad index term {term!r} in {text!r}")
            if index is not None: raise AsmSyntaxError(f"two index registers in {text!r}")
            index, scale = _REGS[r], parse_int(n)
        elif term in _REGS:
            if sign == "-": raise AsmSyntaxError(f"a register cannot be subtracted in {text!r}")
            if base is None: base = _REGS[term]
            elif index is None: index = _REGS[term]
            else: raise AsmSyntaxError(f"too many registers in {text!r}")
        else:
            try: v = parse_int(term)
            except ValueError: raise AsmSyntaxError(f"unknown symbol {term!r} in {text!r}") from None
            disp += -v if sign == "-" else v
    if base is None and index is not None and scale == 1 and False: pass
    if base is not None and base.kind == "rip" and index is not None: raise AsmSyntaxError(f"rip with an index in {text!r}")
    if base is None and index is None and disp >= 1 << 31 and disp < 1 << 32: disp -= 1 << 32
    return Mem(base, index, scale, disp, size)


def parse_operand(text: str):
    """One operand (lower-case text) → register, `Mem` or int. Cached."""
    hit = _OPERANDS.get(text)
    if hit is not None: return hit
    t = text.strip()
    if t in _REGS: v = _REGS[t]
    else:
        size = 0
        m = _SIZE_PREFIX.match(t)
        if m:
            size = SIZE_BITS.get(m.group(1), 128)
            t = m.group(2).strip()
        if t.startswith("ds:"): t = t[3:].strip()
        if t.startswith("["):
            if not t.endswith("]"): raise AsmSyntaxError(f"missing ']' in {text!r}")
            v = _parse_address(t[1:-1], size, text)
        elif size:
            try: v = Mem(None, None, 1, parse_int(t), size)   # objdump's `dword ptr ds:0x10`
            except ValueError: raise AsmSyntaxError(f"cannot parse memory operand {text!r}") from None
        else:
            try: v = parse_int(t)
            except ValueError: raise AsmSyntaxError(f"unknown operand {text.strip()!r}") from None
    if len(_OPERANDS) < 1 << 16: _OPERANDS[text] = v
    return v


def split_line(line: str) -> tuple[str, list[str]]:
    """``"add eax, [rdi+4]"`` → ``("add", ["eax", "[rdi+4]"])``; the text must be lower case."""
    line = line.strip()
    sp = line.find(" ")
    if sp < 0: return line, []
    mn, rest = line[:sp], line[sp + 1:]
    if mn in _PREFIXES:
        raise AsmSyntaxError(f"instruction prefix {mn!r} is not supported")
    return mn, rest.split(",")


_PREFIXES = {"lock", "rep", "repe", "repz", "repne", "repnz", "data16", "addr32", "rex", "rex.w", "{vex}", "{vex3}"}


def parse_line(line: str) -> tuple[str, tuple]:
    mn, ops = split_line(line)
    return mn, tuple(parse_operand(o) for o in ops)


def _strip_comment(line: str) -> str:
    for c in ("#", ";", "//"):
        i = line.find(c)
        if i >= 0: line = line[:i]
    return line


_LINES: dict[str, tuple] = {}


def parse_text_line(text: str) -> tuple:
    """One line of source (any case, comments allowed) → (mnemonic, operands); cached by its text.

    An empty line gives ``("", ())``.
    """
    hit = _LINES.get(text)
    if hit is not None: return hit
    line = _strip_comment(text).lower().strip()
    res = parse_line(line) if line else ("", ())
    if len(_LINES) < 1 << 16: _LINES[text] = res
    return res


def assemble(text: str, ip: int = 0) -> bytes:
    """Assemble Intel-syntax text to bytes, the first instruction at address ``ip``.

    One instruction per line; programs with labels and directives go through
    `x86gen.assembler.assemble_program`.
    """
    hit = _LINES.get(text)
    if hit is None:
        if "\n" in text or ":" in text or "." in text: return _assemble_program(text, ip)
        try: hit = parse_text_line(text)
        except EncodeError as ex: raise type(ex)(f"{text.strip()!r}: {ex}") from None
    if not hit[0]: return b""
    try: return _encode(hit[0], *hit[1], ip=ip)
    except EncodeError as ex: raise type(ex)(f"{text.strip()!r}: {ex}") from None


def _assemble_program(text: str, ip: int) -> bytes:
    try:
        from .assembler import assemble_program
    except ImportError:
        assemble_program = None
    if assemble_program is not None: return assemble_program(text, ip)
    out = bytearray()
    for n, raw in enumerate(text.splitlines(), 1):
        line = _strip_comment(raw).lower().strip()
        if not line or line.startswith("."): continue
        try:
            mn, ops = parse_line(line)
            out += _encode(mn, *ops, ip=ip + len(out))
        except EncodeError as ex:
            raise type(ex)(f"line {n}: {raw.strip()!r}: {ex}") from None
    return bytes(out)


def format_operand(x) -> str:
    """Intel syntax of one operand (ints as hex)."""
    if x.__class__ is int: return f"-{-x:#x}" if x < 0 else f"{x:#x}"
    return str(x)
