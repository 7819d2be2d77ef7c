"""Memory operands: ``[base + index*scale + disp]`` with an optional operand size.

A `Mem` computes its ModRM.mod/rm bits, SIB byte and displacement once, when it is built, so
that every instruction using it only ORs in ModRM.reg and copies ``tail``. The special cases
(SDM Vol.2 2.1.5, Tables 2-2 and 2-3; 2.2.1.6 for RIP-relative):

- ModRM.rm = 100 does not name rsp/r12 but says "a SIB byte follows", so an rsp/r12 base always
  needs a SIB byte (with SIB.index = 100, "no index").
- mod = 00 with rm (or SIB.base) = 101 does not name rbp/r13 but means "disp32, no base" (with
  rm = 101 it is RIP-relative in 64-bit mode), so an rbp/r13 base is written with an explicit
  disp8 of 0.
- SIB.index = 100 means "no index" and REX.X does not change that for rsp, so rsp can never be an
  index; r12 (100 with REX.X = 1) can.
- An absolute ``[disp32]`` needs the SIB form (rm = 100, base = 101, index = 100), because the
  short rm = 101 form is RIP-relative.
"""
from __future__ import annotations

from .errors import ImmediateRangeError, OperandError
from .registers import REGISTERS, Gpr64, Reg, Rip

SIZE_NAMES = {8: "byte", 16: "word", 32: "dword", 64: "qword", 80: "tbyte", 128: "xmmword", 256: "ymmword", 512: "zmmword"}
SIZE_BITS = {v: k for k, v in SIZE_NAMES.items()}
_SCALE_BITS = {1: 0, 2: 1, 4: 2, 8: 3}


class Mem:
    """A memory operand. Build it with `mem` (or the `byte`/`dword`/... helpers); immutable.

    ``size`` is the operand size in bits, or 0 when unsized (an address, as for lea, or a
    size that the other operands decide).
    """

    __slots__ = ("base", "index", "scale", "disp", "size", "modrm", "tail", "rex", "vxb", "sig", "label")

    def __init__(self, base: Reg | None = None, index: Reg | None = None, scale: int = 1, disp: int = 0, size: int = 0,
                 label: object = None):
        if base is not None and base.__class__ not in (Gpr64, Rip):
            raise OperandError(f"memory base must be a 64-bit register or rip, not {base!r}"
                               + (" (32-bit addressing is not supported)" if base.kind == "r32" else ""))
        if index is not None:
            if index.__class__ is not Gpr64:
                raise OperandError(f"memory index must be a 64-bit general register, not {index!r}")
            if index.num == 4:
                raise OperandError("rsp cannot be an index register (SIB.index=100 means no index; SDM Vol.2 Table 2-3)")
            if base is not None and base.__class__ is Rip:
                raise OperandError("rip-relative addressing takes no index register")
        if scale not in _SCALE_BITS:
            raise OperandError(f"scale must be 1, 2, 4 or 8, not {scale!r}")
        if index is None and scale != 1:
            raise OperandError(f"scale {scale} without an index register")
        if not -(1 << 31) <= disp < (1 << 31):
            raise ImmediateRangeError(f"displacement {disp:#x} does not fit in a signed 32-bit field")
        if size and size not in SIZE_NAMES:
            raise OperandError(f"unknown memory operand size {size} bits")
        self.base, self.index, self.scale, self.disp, self.size, self.label = base, index, scale, disp, size, label
        self.sig = f"m{size}" if size else "m"
        d32 = (disp & 0xFFFFFFFF).to_bytes(4, "little")
        sib_index = (index.lo << 3) if index is not None else 0b100 << 3   # 100 = no index
        self.rex = (index.rex_x if index is not None else 0) | (base.rex_b if base is not None and base.kind != "rip" else 0)
        self.vxb = (index.vx if index is not None else 0x40) | (base.vb if base is not None and base.kind != "rip" else 0x20)
        if base is None:
            # [index*scale + disp32] or absolute [disp32]: SIB with base = 101 and mod = 00 (no base).
            self.modrm = 0b00_000_100
            self.tail = bytes((_SCALE_BITS[scale] << 6 | sib_index | 0b101,)) + d32
        elif base.kind == "rip":
            # [rip + disp32]: mod = 00, rm = 101; disp counted from the end of the instruction.
            self.modrm = 0b00_000_101
            self.tail = d32
        else:
            if disp == 0 and base.lo != 0b101: mod, dbytes = 0b00, b""
            elif -128 <= disp <= 127: mod, dbytes = 0b01, bytes((disp & 0xFF,))
            else: mod, dbytes = 0b10, d32
            if index is None and base.lo != 0b100:
                self.modrm, self.tail = mod << 6 | base.lo, dbytes
            else:
                self.modrm = mod << 6 | 0b100
                self.tail = bytes((_SCALE_BITS[scale] << 6 | sib_index | base.lo,)) + dbytes

    @property
    def kind(self) -> str: return self.sig

    def with_size(self, size: int) -> Mem:
        """The same address with another operand size (bits)."""
        return Mem(self.base, self.index, self.scale, self.disp, size, self.label)

    def address(self) -> str:
        """The bracketed address in Intel syntax, e.g. ``[rdi+rsi*4+0xa]``."""
        parts = []
        if self.base is not None: parts.append(self.base.name)
        if self.index is not None: parts.append(f"{self.index.name}*{self.scale}" if self.scale != 1 else self.index.name)
        s = "+".join(parts)
        if self.label is not None: s += ("+" if s else "") + str(self.label)
        if self.disp or not s: s += (f"-{-self.disp:#x}" if self.disp < 0 else (f"+{self.disp:#x}" if s else f"{self.disp:#x}"))
        return f"[{s}]"

    def __str__(self) -> str:
        return (f"{SIZE_NAMES[self.size]} ptr " if self.size else "") + self.address()

    def __repr__(self) -> str: return f"Mem({self})"

    def _key(self): return (self.base, self.index, self.scale, self.disp, self.size, self.label)
    def __eq__(self, other): return isinstance(other, Mem) and self._key() == other._key()
    def __hash__(self): return hash(self._key())


def mem(base: Reg | str | None = None, index: Reg | str | None = None, scale: int = 1, disp: int = 0, size: int | str = 0) -> Mem:
    """Build a memory operand, e.g. ``mem(rdi, rsi, 4, 10, size=32)`` is ``dword ptr [rdi+rsi*4+0xa]``.

    ``base`` may be a 64-bit register, ``rip`` or None (then ``[index*scale+disp32]`` or an absolute
    ``[disp32]``); ``size`` is in bits (8 … 512) or a name such as ``"dword"``; 0 means unsized.
    """
    if isinstance(base, str): base = REGISTERS[base]
    if isinstance(index, str): index = REGISTERS[index]
    if isinstance(size, str): size = SIZE_BITS[size]
    return Mem(base, index, scale, disp, size)


def _sized(bits: int):
    def make(base: Reg | None = None, index: Reg | None = None, scale: int = 1, disp: int = 0) -> Mem:
        return Mem(base, index, scale, disp, bits)
    make.__name__ = SIZE_NAMES[bits]
    make.__doc__ = f"A {bits}-bit memory operand: ``{SIZE_NAMES[bits]} ptr [base+index*scale+disp]``."
    return make


byte, word, dword, qword = _sized(8), _sized(16), _sized(32), _sized(64)
xmmword, ymmword, zmmword = _sized(128), _sized(256), _sized(512)
