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
_CACHE_MAX = 1 << 16   # entries of each text cache (operands, lines)
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


_STAR = re.compile(r"\s*\*\s*")


def _parse_address(inner: str, size: int, text: str) -> Mem:
    base = index = None
    scale, disp = 1, 0
    pos = 0
    inner = _STAR.sub("*", inner.strip())   # `rbx * 2` as `rbx*2`
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
            try: index, scale = _REGS[r], parse_int(n)
            except ValueError: raise AsmSyntaxError(f"bad scale {n!r} in {text!r}") from None
        elif term in _REGS:
            if sign == "-": raise AsmSyntaxError(f"a register cannot be subtracted in {text!r}")
            if base is None: base = _REGS[term]
            elif index is None: index = _REGS[term]
            else: raise AsmSyntaxError(f"too many registers in {text!r}")
        else:
            try: v = parse_int(term)
            except ValueError: raise AsmSyntaxError(f"unknown symbol {term!r} in {text!r}") from None
            disp += -v if sign == "-" else v
    if base is not None and base.kind == "rip" and index is not None: raise AsmSyntaxError(f"rip with an index in {text!r}")
    if base is None and index is None: disp = _abs_disp(disp)
    elif 1 << 63 <= disp < 1 << 64: disp -= 1 << 64   # objdump: `[rip+0xffffffffffffffff]` is disp32 -1
    return Mem(base, index, scale, disp, size)


# `[size ptr] [base + index*scale ± disp]` with registers and a hex/decimal displacement, in one match;
# anything else (a leading index, `10h`, `ds:`, errors) takes `_parse_address`, which reads the same.
_SIMPLE = re.compile(r"(?:(byte|word|dword|qword|tbyte|xmmword|ymmword|zmmword|oword)\s+(?:ptr\s*)?)?"
                     r"\[\s*([a-z]\w*)\s*(?:\+\s*([a-z]\w*)(?:\*([1248]))?\s*)?(?:([+-])\s*(0x[0-9a-f]+|\d+)\s*)?\]")


def _simple_address(t: str) -> Mem | None:
    m = _SIMPLE.fullmatch(t)
    if m is None: return None
    size, b, i, scale, sign, d = m.groups()
    base, index = _REGS.get(b), _REGS.get(i) if i else None
    if base is None or (i and index is None) or (index is not None and base.kind == "rip"): return None
    disp = 0
    if d:
        disp = int(d, 16) if d[1:2] == "x" else int(d)
        if sign == "-": disp = -disp
        elif 1 << 63 <= disp < 1 << 64: disp -= 1 << 64   # objdump: `[rip+0xffffffffffffffff]` is disp32 -1
    return Mem(base, index, int(scale) if scale else 1, disp, SIZE_BITS.get(size, 128) if size else 0)


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
    elif t[-1:] == "]" and (v := _simple_address(t)) is not None: pass   # the common `[size ptr] [base+index*s+disp]`
    else:
        size = 0
        m = _SIZE_PREFIX.match(t)
        if m:
            size = SIZE_BITS.get(m.group(1), 128)
            t = m.group(2).strip()
        seg = t.startswith("ds:")
        if seg: t = t[3:].strip()
        if t.startswith("["):
            if not t.endswith("]"): raise AsmSyntaxError(f"missing ']' in {text!r}")
            v = _parse_address(t[1:-1], size, text)
        elif size or seg:   # objdump's `dword ptr ds:0x10`, and unsized `lea ax, ds:0x0`
            try: v = Mem(None, None, 1, _abs_disp(parse_int(t)), size)
            except ValueError: raise AsmSyntaxError(f"cannot parse memory operand {text!r}") from None
        else:
            try: v = parse_int(t)
            except ValueError: raise AsmSyntaxError(f"unknown operand {text.strip()!r}") from None
    if len(_OPERANDS) >= _CACHE_MAX: _OPERANDS.clear()   # bounded: start again rather than keep the oldest
    _OPERANDS[text] = v
    return v


def split_line(line: str) -> tuple[str, list[str]]:
    """``"add eax, [rdi+4]"`` → ``("add", ["eax", "[rdi+4]"])``; the text must be lower case."""
    line = line.strip()
    if "\t" in line: line = line.replace("\t", " ")   # `xor\teax, eax` (compiler output)
    sp = line.find(" ")
    if sp < 0: return line, []
    mn, rest = line[:sp], line[sp + 1:]
    if mn in _PREFIXES:
        raise AsmSyntaxError(f"instruction prefix {mn!r} is not supported")
    return mn, rest.split(",")


_PREFIXES = {"lock", "rep", "repe", "repz", "repne", "repnz", "data16", "addr32", "rex", "rex.w", "{vex}", "{vex3}"}


def imul_shorthand(mn: str, ops: tuple) -> tuple:
    """The operands as written, except ``imul eax, 10`` (iced, GNU as, llvm-mc), which is ``imul eax, eax, 10``."""
    if mn == "imul" and len(ops) == 2 and ops[1].__class__ is int: return (ops[0], *ops)
    return ops


def parse_line(line: str) -> tuple[str, tuple]:
    mn, ops = split_line(line)
    return mn, imul_shorthand(mn, tuple([parse_operand(o) for o in ops]))


def _strip_comment(line: str) -> str:
    if "#" not in line and ";" not in line and "/" not in line: return line
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
    if len(_LINES) >= _CACHE_MAX: _LINES.clear()
    _LINES[text] = res
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
        except AsmSyntaxError: return _assemble_program(text, ip)   # a label, `jmp short 0x10`, … : the program parser
        except EncodeError as ex: raise type(ex)(f"{text.strip()!r}: {ex}") from None
    if not hit[0]: return b""
    try: return _encode(hit[0], *hit[1], ip=ip)
    except EncodeError as ex:
        if hit[0].startswith("vcmp") and "unknown mnemonic" in str(ex): return _assemble_program(text, ip)   # vcmpltps …
        raise type(ex)(f"{text.strip()!r}: {ex}") from None


def _assemble_program(text: str, ip: int) -> bytes:
    from .assembler import assemble_program  # labels, directives, data: the program parser
    return assemble_program(text, ip)


def format_operand(x) -> str:
    """Intel syntax of one operand (ints as hex)."""
    if x.__class__ is int: return f"-{-x:#x}" if x < 0 else f"{x:#x}"
    if x.__class__ is Mem and x.base is None and x.index is not None and x.scale == 1:
        # an index without base: `[rax*1]`, since `[rax]` would read back as a base register (other bytes)
        s = str(x)
        i = s.index("[") + 1 + len(x.index.name)
        return s[:i] + "*1" + s[i:]
    return str(x)


def clear_caches() -> None:
    """Forget every parsed operand and line (text's and the program parser's): the next `assemble`
    parses as if for the first time. For benchmarks and memory; results never depend on the caches."""
    _OPERANDS.clear()
    _LINES.clear()
    import sys
    asm = sys.modules.get(__package__ + ".assembler")
    if asm is not None: asm._LINE_CACHE.clear()
