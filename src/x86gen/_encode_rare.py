"""The requests of `x86gen.encode` that are not a plain instruction, loaded on the first one: prefix words, segment
overrides, 32-bit addresses and string instructions (rewritten into a form's operands), immediates given as bool or
numpy integers, lea of a far absolute address, and AVX-512 decorations. Each rewrites the request and hands it back to
`x86gen.encoder._encode` (``again``), encodes it itself, or returns None: then `_encode` goes on as for a plain
instruction. A process's first plain encode compiles none of this."""
from __future__ import annotations

from .errors import UnknownMnemonicError, fmt_value


def rewritten(mnemonic, ops: tuple, ip: int, again) -> bytes | None:
    """A mnemonic with prefix words (``lock add``), a segment override or 32-bit address in its operands (the prefix
    layer, x86gen._prefixed), or a string instruction with its operands left out or unsized (`movsb`, ``lods eax,
    dword ptr [rsi]``: x86gen._strings)."""
    if mnemonic.__class__ is not str: raise UnknownMnemonicError(f"a mnemonic is a string, not {fmt_value(mnemonic)}")
    from .encoder import STRING_MNEMONICS
    from .memory import A32Mem, SegMem
    if " " in mnemonic or SegMem in map(type, ops) or A32Mem in map(type, ops):
        from ._prefixed import encode_prefixed
        return encode_prefixed(mnemonic, ops, ip)[0]
    if mnemonic in STRING_MNEMONICS:
        from ._strings import string_operands
        mn, filled = string_operands(mnemonic, ops)
        if mn is not mnemonic or filled is not ops: return again(mn, filled, ip)
    return None   # (a string instruction with its form's own operands: a plain instruction)


def int_like(mnemonic: str, ops: tuple, ip: int, again) -> bytes:
    """Operands without a signature: immediates given as bool or numpy integers (`operator.index`) are encoded as
    ints; anything else is an operand no form takes."""
    from ._choose import canonical, forms_of, no_form_error
    from ._form_rare import int_operands
    ints = int_operands(ops)
    if ints is not None: return again(mnemonic, ints, ip)
    raise no_form_error(mnemonic, ops, forms_of(canonical(mnemonic))) from None


def lea_far(mnemonic: str, ops: tuple, ip: int, again) -> bytes | None:
    """lea of a 64-bit absolute address: a 16/32-bit destination keeps only the low bits of the address
    (x86gen._operand_rewrites.lea_low_bits), so a disp32 with the same low bits encodes it."""
    from ._operand_rewrites import lea_low_bits
    near = lea_low_bits(mnemonic, ops)
    return again(mnemonic, near, ip) if near is not None else None


def evex_encode(mnemonic, ops: tuple, rc, ip: int) -> bytes:
    """Masks, broadcast or ``rc=``: the EVEX slow path (x86gen._evex), which keeps no plan."""
    if mnemonic.__class__ is not str: raise UnknownMnemonicError(f"a mnemonic is a string, not {fmt_value(mnemonic)}")
    from ._evex import encode
    return encode(mnemonic, ops, rc, ip)
