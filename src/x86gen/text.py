"""Intel-syntax text in, bytes out: ``assemble("vaddps ymm0, ymm1, ymmword ptr [rdi+8]")``.

One line is read by `x86gen.syntax` and encoded by `x86gen.encode`; a program (labels, directives, data, several
lines) is read by `x86gen.program_text` into an `x86gen.Assembler`. A branch target written as a number is an absolute
address; the text starts at address ``ip``.
"""
from __future__ import annotations

from .encoder import encode as _encode
from .errors import ArgumentTypeError, AsmSyntaxError, EncodeError, clip, wrong_type
from .syntax import _LINES, Decorations, clear_line_caches, encode_decorated, parse_text_line, pseudo_op, split_decorations

__all__ = ["assemble", "clear_caches", "parse_text_line"]


def assemble(text: str, ip: int = 0) -> bytes:
    """Assemble Intel-syntax text to bytes, the first instruction at address ``ip``.

    One instruction per line; programs with labels and directives go through
    `x86gen.program_text.assemble_program`.
    """
    try: hit = _LINES.get(text)
    except TypeError: hit = None   # (unhashable: no text, said below)
    if hit is None:
        if text.__class__ is not str and not isinstance(text, str): raise wrong_type("x86gen.assemble", "text", text, "a str")
        if "\n" in text or ":" in text or "." in text: return _program(text, ip)
        try: hit = parse_text_line(text)
        except AsmSyntaxError: return _program(text, ip)   # a label, `jmp short 0x10`, … : the program parser
        except EncodeError as ex: raise type(ex)(f"{clip(text.strip())}: {ex}") from None
    if not hit[0]: return b""
    ops = hit[1]
    if ops and ops[-1].__class__ is Decorations: return _assemble_decorated(hit[0], ops, text, ip)
    try: return _encode(hit[0], *ops, ip=ip)
    except ArgumentTypeError: raise wrong_type("x86gen.assemble", "ip", ip, "an int") from None   # (encode's only one)
    except EncodeError as ex:
        alt = pseudo_op(hit[0], ops) if "unknown mnemonic" in str(ex) else None   # cmpltps, pclmulhqlqdq, …
        if alt is None: raise type(ex)(f"{clip(text.strip())}: {ex}") from None
    try: return _encode(alt[0], *alt[1], ip=ip)
    except EncodeError as ex: raise type(ex)(f"{clip(text.strip())}: {ex}") from None



def _assemble_decorated(mn: str, ops: tuple, text: str, ip: int) -> bytes:
    """`assemble` of a line with a rounding or ``{1toN}`` (`x86gen.syntax.encode_decorated`), pseudo-ops too."""
    ops, deco = split_decorations(ops)
    try: return encode_decorated(mn, ops, deco, ip)
    except EncodeError as ex:
        alt = pseudo_op(mn, ops) if "unknown mnemonic" in str(ex) else None   # vcmpltps k1, zmm0, zmm1, {sae}
        if alt is None: raise type(ex)(f"{clip(text.strip())}: {ex}") from None
    try: return encode_decorated(alt[0], alt[1], deco, ip)
    except EncodeError as ex: raise type(ex)(f"{clip(text.strip())}: {ex}") from None



def _program(text: str, ip: int) -> bytes:
    """A program (labels, directives, several lines): `x86gen.program_text`, loaded on the first one."""
    from .program_text import assemble_program
    if ip.__class__ is not int:
        import operator
        try: ip = operator.index(ip)
        except TypeError: raise wrong_type("x86gen.assemble", "ip", ip, "an int") from None
    return assemble_program(text, ip)


def clear_caches() -> None:
    """Forget every parsed operand and line (text's and the program parser's): the next `assemble`
    parses as if for the first time. For benchmarks and memory; results never depend on the caches."""
    from .program_text import _DECORATED_TOKENS, _LINE_CACHE
    clear_line_caches()
    _LINE_CACHE.clear()
    _DECORATED_TOKENS.clear()
