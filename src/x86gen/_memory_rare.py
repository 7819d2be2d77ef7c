"""The parts of `x86gen.memory` that a plain memory operand does not need, loaded on first use: 32-bit addresses
(`A32Mem`), displacements outside the signed 32-bit range (labels' addends, far absolute addresses), the address
checks' error messages, the operand variants (`Mem.with_disp32`, `Mem.with_sib`, `Mem.with_segment`, `Bcst.of`)
and the Intel-syntax address text. Every process without a bytecode cache compiles `x86gen.memory` on
``import x86gen``; this module only when one of these is first used (their names stay importable from
x86gen.memory)."""
from __future__ import annotations

from .errors import EvexOperandError, ImmediateRangeError, OperandError, fmt_int, fmt_value
from .memory import (
    _EIP,
    _RIP,
    _SCALE_BITS,
    _SHAPES,
    SEGMENTS,
    SIZE_NAMES,
    A32Mem,
    Mem,
    SegMem,
    VsibMem,
    _pack_disp32,
    _shape,
)
from .registers import REGISTERS, Gpr32, Gpr64, Rip, Xmm, Ymm, Zmm


def shape32(base, index, scale) -> tuple:
    """`x86gen.memory._shape` of a 32-bit address (a 32-bit base or index register, or eip): the same ModRM, SIB and
    displacement as the 64-bit registers of the same numbers, with the address-size prefix 0x67 (SDM Vol.2 2.1.1
    group 4, 3.6: in 64-bit mode 0x67 selects 32-bit addressing; Table 2-2's special cases are those of 64-bit
    addressing, 2.2.1.3). Every register of the address must be 32-bit: an address has one address size."""
    def wide(r):   # a register of a 64-bit address: refused with the reason
        return r is not None and (r.__class__ is Gpr64 or r is _RIP)
    if wide(base) or wide(index):
        parts = " and ".join(r.name for r in (base, index) if r is not None)
        raise OperandError(f"memory operand mixes 32- and 64-bit address registers ({parts}): an address is either 64-bit"
                           " or 32-bit (the 0x67 prefix; SDM Vol.2 3.6 address-size attribute), all its registers of that size")
    if base is not None and base is not _EIP and base.__class__ is not Gpr32:
        raise OperandError(f"memory base must be a 32-bit register or eip in a 32-bit address, not {fmt_value(base)}")
    if index is not None and index.__class__ is Gpr32:
        if index.num == 4:
            raise OperandError("esp cannot be an index register (SIB.index=100 means no index; SDM Vol.2 Table 2-3)")
        index64 = REGISTERS[index.name].sized(64)
    else: index64 = index
    base64 = None if base is None else _RIP if base is _EIP else base.sized(64)
    shape = (*(_SHAPES.get((base64, index64, scale)) or _shape(base64, index64, scale))[:8], True)
    _SHAPES[base, index, scale] = shape
    return shape


def address_error(base, index, scale) -> OperandError:
    """The error for a 64-bit address ``(base, index, scale)`` that `x86gen.memory._shape` refuses (the first of its
    checks that fails)."""
    if base is not None and base.__class__ not in (Gpr64, Rip):
        return OperandError(f"memory base must be a 64-bit register or rip, not {fmt_value(base)} (or, in a 32-bit address, a"
                            " 32-bit register or eip)")
    if index is not None:
        if isinstance(index, (Xmm, Ymm, Zmm)): pass   # VSIB: every vector register is an index
        elif index.__class__ is not Gpr64:
            return OperandError(f"memory index must be a 64-bit general register, not {fmt_value(index)} (or an xmm/ymm/zmm"
                                " register: the VSIB operand of a gather; a 32-bit one in a 32-bit address)")
        elif index.num == 4:
            return OperandError("rsp cannot be an index register (SIB.index=100 means no index; SDM Vol.2 Table 2-3)")
        if base is not None and base.__class__ is Rip:
            return OperandError("rip-relative addressing takes no index register")
    try: scale_ok = scale in _SCALE_BITS
    except TypeError: scale_ok = False   # unhashable
    if not scale_ok:
        return OperandError(f"scale must be 1, 2, 4 or 8, not {fmt_int(scale, True) if scale.__class__ is int else fmt_value(scale)}")
    return OperandError(f"scale {scale} without an index register")


def wide(base, index, disp: int, label, modrm32: int, prefix: bytes) -> tuple:
    """(modrm, tail, disp) of a displacement outside the signed 32-bit range, which ModRM cannot encode:

    - a label's addend (``[rip+label+disp]``): the disp32 is computed by the Assembler, which checks that
      ``label + disp - end of instruction`` fits; here it is a placeholder 0;
    - an absolute address (no base, no index) as a 64-bit value: the CPU sign-extends an absolute disp32
      (SDM Vol.2 2.2.1.3), so 0xffffffff80000000 … 0xffffffffffffffff are disp32 -0x80000000 … -1 and are
      encoded so; any other address gets no ModRM (modrm None here, then `Mem.far`): only ``mov`` al/ax/eax/rax
      with a moffs operand (opcodes A0-A3 with an 8-byte address, SDM Vol.2 MOV) can use it. ``disp`` becomes the address as a signed 64-bit
      value (as iced reports it).
    """
    if label is not None:
        if not -(1 << 63) <= disp < (1 << 64):
            raise ImmediateRangeError(f"label addend {fmt_int(disp)} does not fit in 64 bits")
        return modrm32, prefix + _pack_disp32(0), disp
    if base is None and index is None:
        if not -(1 << 63) <= disp < (1 << 64):
            raise ImmediateRangeError(f"absolute address {fmt_int(disp)} does not fit in 64 bits")
        if disp >= 1 << 63: disp -= 1 << 64
        if -(1 << 31) <= disp < (1 << 31): return modrm32, prefix + _pack_disp32(disp), disp
        return None, None, disp
    raise ImmediateRangeError(f"displacement {fmt_int(disp)} does not fit in a signed 32-bit field")


class Unreachable:
    """The ModRM and tail of a far absolute address (see `wide`): a form that would encode it through ModRM
    (``modrm | reg``, ``bytes + tail``, ``struct.pack(.., modrm)``) raises an OperandError naming the address instead, at no cost to the
    forms' code for every other operand."""
    __slots__ = ("address",)

    def __init__(self, disp: int): self.address = disp & 0xFFFFFFFFFFFFFFFF

    def _raise(self, *_args):
        raise OperandError(f"address {self.address:#x} is out of reach of an absolute [disp32] (sign-extended, SDM Vol.2"
                           " 2.2.1.3): only the moffs forms of mov (al/ax/eax/rax, movabs) take a 64-bit address")

    __or__ = __ror__ = __add__ = __radd__ = __index__ = _raise   # (struct.pack takes __index__)


def with_disp32(m: Mem) -> Mem:
    """`Mem.with_disp32`."""
    shape = _SHAPES.get((m.base, m.index, m.scale)) or _shape(m.base, m.index, m.scale)
    if shape[2] is None: return m   # no base register: the displacement is a disp32 already
    out = Mem(m.base, m.index, m.scale, m.disp, m.size, m.label)
    out.modrm, out.tail = shape[4], shape[3] + _pack_disp32(m.disp)
    return out


def with_sib(m: Mem) -> Mem:
    """`Mem.with_sib`."""
    base = m.base
    if base is not None and base.__class__ is Rip:
        raise OperandError(f"{m}: a RIP-relative address has no SIB byte (a sibmem operand needs one)")
    if m.index is not None or base is None or base.lo == 0b100: return m
    out = Mem(base, None, 1, m.disp, m.size, m.label)
    out.modrm = (m.modrm & 0b11_000_000) | 0b100
    out.tail = bytes((0b00_100_000 | base.lo,)) + m.tail   # SIB: scale 1, index 100 (none), base
    return out


def with_segment(m: Mem, seg) -> Mem:
    """`Mem.with_segment`."""
    if seg is None: return Mem(m.base, m.index, m.scale, m.disp, m.size, m.label)
    name = getattr(seg, "name", seg)
    if name.__class__ is not str or name.lower() not in SEGMENTS:
        raise OperandError(f"unknown segment {fmt_value(seg)} (use one of {', '.join(SEGMENTS)})")
    out = object.__new__(SegMem)
    for k in Mem.__slots__: setattr(out, k, getattr(m, k))
    out.seg = name.lower()
    out.sig = f"{out.seg}:{m.sig}"
    return out


def address(m: Mem) -> str:
    """`Mem.address`: the bracketed address in Intel syntax."""
    parts = []
    if m.base is not None: parts.append(m.base.name)
    if m.index is not None: parts.append(f"{m.index.name}*{m.scale}" if m.scale != 1 else m.index.name)
    s = "+".join(parts)
    if m.label is not None: s += ("+" if s else "") + str(m.label)
    if m.far: s = f"{m.disp & 0xFFFFFFFFFFFFFFFF:#x}"   # a 64-bit absolute address
    elif m.disp or not s: s += (f"-{-m.disp:#x}" if m.disp < 0 else (f"+{m.disp:#x}" if s else f"{m.disp:#x}"))
    return f"[{s}]"


def bcst_of(cls, m: Mem):
    """`Bcst.of`: ``m`` as a broadcast source of class ``cls``."""
    if m.__class__ is not Mem:
        raise EvexOperandError(f"{m}: only a plain memory operand can be a broadcast source (not VSIB, segment-overridden or"
                               " one already broadcast)")
    if m.size not in (16, 32, 64):
        raise EvexOperandError(f"{m}: a broadcast element is a word, dword or qword (m16bcst/m32bcst/m64bcst, SDM Vol.2 2.7.5),"
                               f" not {SIZE_NAMES.get(m.size, 'unsized') if m.size else 'unsized'}: write dword(...).bcst")
    b = object.__new__(cls)
    for k in Mem.__slots__: setattr(b, k, getattr(m, k))
    b.sig = f"b{m.size}"
    return b


def a32_plain(m: A32Mem) -> Mem:
    """`A32Mem.plain`: the same operand with the 64-bit registers of the same numbers (rip for eip)."""
    b, i = m.base, m.index
    out = object.__new__(VsibMem if isinstance(i, (Xmm, Ymm, Zmm)) else Mem)
    for k in Mem.__slots__: setattr(out, k, getattr(m, k))   # the same bytes (a with_disp32 or with_sib one too)
    out.base = None if b is None else _RIP if b is _EIP else b.sized(64)
    if i is not None and i.__class__ is Gpr32: out.index = i.sized(64)
    out.sig = m.sig[4:]
    return out


def a32_error(err: Exception, plain: tuple, ops: tuple) -> Exception:
    """``err`` (an `EncodeError` raised for the `A32Mem.plain` operands ``plain``) with the addresses as they were
    given in ``ops`` (``[eax]``, not the ``[rax]`` of the bytes without 0x67), of the same class."""
    msg = str(err)
    for p, o in zip(plain, ops):
        if p is not o and isinstance(o, Mem): msg = msg.replace(p.address(), o.address())
    return type(err)(msg)
