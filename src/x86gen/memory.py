"""Memory operands: ``[base + index*scale + disp]`` with an optional operand size.

A `Mem` computes its ModRM.mod/rm bits, SIB byte and displacement once, when it is built, so
that every instruction using it only ORs in ModRM.reg and copies ``tail``. Building one is on the
hot path (every memory operand the text assembler parses), so everything that depends only on
``(base, index, scale)`` -- the checks, REX/VEX bits, SIB byte and ModRM for each displacement
width -- is worked out once per combination by `_shape` and cached in `_SHAPES` (registers are
singletons, so there are few keys); `Mem.__init__` then only picks the displacement width and
appends its bytes. The special cases (SDM Vol.2 2.1.5, Tables 2-2 and 2-3; 2.2.1.6 for
RIP-relative) are handled in `_shape`.
"""
from __future__ import annotations

import operator
from struct import Struct

from .errors import EvexOperandError, ImmediateRangeError, OperandError, fmt_int, fmt_value
from .registers import EGPR_ENCODINGS, REGISTERS, Gpr32, Gpr32X, Gpr64, Gpr64X, Masked, Reg, Rip, Xmm, Ymm, Zmm

# Operand sizes in bits and their Intel size keywords. The x87 environment and state images have the
# keywords of iced-x86's Intel formatter (`fldenv fpuenv14 ptr [rsi]`): 14/28 bytes for fldenv/fnstenv
# and 94/108 bytes for fnsave/frstor with a 16-bit / 32- or 64-bit operand size (SDM Vol.1 8.1.10,
# Figures 8-9 to 8-12), and mem384 is the 48-byte Key Locker handle of aesenc128kl & co. (iced-x86's keyword;
# GNU as and objdump write none); fword is the 6-byte far pointer m16:32 (GNU as, objdump, iced-x86). The 512-byte
# fxsave/fxrstor area (SDM Vol.2 FXSAVE) has no keyword (iced and objdump print none): such an operand prints without one.
SIZE_NAMES = {8: "byte", 16: "word", 32: "dword", 48: "fword", 64: "qword", 80: "tbyte", 128: "xmmword", 256: "ymmword", 512: "zmmword",
              112: "fpuenv14", 224: "fpuenv28", 752: "fpustate94", 864: "fpustate108", 384: "mem384"}
SIZE_BITS = {v: k for k, v in SIZE_NAMES.items()}
MEMORY_SIZES = (*SIZE_NAMES, 4096)                      # every size a memory operand may have (bits; 0: unsized)
# segment override prefixes (SDM Vol.2 2.1.1, group 2), by segment register name
SEGMENTS: dict[str, int] = {"es": 0x26, "cs": 0x2E, "ss": 0x36, "ds": 0x3E, "fs": 0x64, "gs": 0x65}
_SCALE_BITS = {1: 0, 2: 1, 4: 2, 8: 3}
_SIGS = {bits: f"m{bits}" for bits in MEMORY_SIZES}     # Mem.sig by size, for sized operands
_DISP8 = tuple(bytes((b,)) for b in range(256))         # the disp8 byte, by disp & 0xFF
_pack_disp32 = Struct("<i").pack                        # little-endian signed disp32

# (base, index, scale) -> (modrm0, tail0, modrm8, prefix, modrm32, rex, vxb, vsib, a32), filled by `_shape`:
# ModRM (mod/rm bits) and tail for disp = 0, or None when that still needs a displacement;
# ModRM for a disp8, or None when there is no disp8 form; the bytes before the displacement
# (the SIB byte, if any); ModRM for a disp32; the REX.X/B bits; the inverted VEX X̄/B̄ bits;
# None, or the signature prefix "mx"/"my"/"mz" of a VSIB operand (an xmm/ymm/zmm index register) or "me" of an address
# with an APX register r16-r31 (`EgprMem`; then rex holds the REX2 bits X4 B4 X3 B3); True for a 32-bit
# address (`A32Mem`: 32-bit base/index registers or eip, the 0x67 prefix).
_SHAPES: dict[tuple, tuple] = {}
_EIP = REGISTERS["eip"]
_RIP = REGISTERS["rip"]


def _shape(base, index, scale) -> tuple:
    """Check a ``(base, index, scale)`` and compute its entry in `_SHAPES` (first use only)."""
    if base is _EIP or isinstance(base, Gpr32) or isinstance(index, Gpr32):   # a 32-bit address (`A32Mem`)
        return shape32(base, index, scale)
    # VSIB (SDM Vol.2 2.3.12): SIB.index names a vector register (VEX.X̄ its bit 3; EVEX: X̄ bit 3 and V̄' bit 4, 2.7.2,
    # so xmm16-31/ymm16-31 and zmm indexes are EVEX only); every number is an index, xmm4/ymm4 included (SIB.index =
    # 100 means "no index" only for a general register, so rsp cannot be one: SDM Vol.2 Table 2-3)
    vsib = None if index is None or index.__class__ is Gpr64 or index.__class__ is Gpr64X else \
        "mx" if isinstance(index, Xmm) else "my" if isinstance(index, Ymm) else "mz" if isinstance(index, Zmm) else None
    try: scale_bits = _SCALE_BITS.get(scale)
    except TypeError: scale_bits = None   # unhashable
    # r16-r31 (APX) as base or index: SIB.index = 100 is "no index" only with X4 = X3 = 0 (rsp), so r20 and r28 can be
    # indexes (Intel APX Architecture Specification, 3.1.2.1: X4 extends SIB.index as X3 does)
    egpr = (base.__class__ is Gpr64X) or (index.__class__ is Gpr64X)
    if ((base is not None and base.__class__ is not Gpr64 and base.__class__ is not Rip and base.__class__ is not Gpr64X)
            or scale_bits is None or (index is None and scale != 1)
            or (index is not None and (base.__class__ is Rip or (vsib is None and (
                (index.__class__ is not Gpr64 and index.__class__ is not Gpr64X) or index.num == 4))))):
        raise address_error(base, index, scale)
    if egpr:
        if vsib is not None:
            raise OperandError(f"memory base {base}: a VSIB address with an APX register r16-r31 needs APX's EVEX, which x86gen"
                               " does not encode yet")
        vsib = "me"
    is_reg = base is not None and base.__class__ is not Rip
    # REX.X/REX.B (bit 3), and for r16-r31 REX2.X4/B4 (bit 4) beside them: only the REX2 forms take an EgprMem
    rex = (index.rex2_x if index is not None else 0) | (base.rex2_b if is_reg else 0)
    vxb = (index.vx if index is not None else 0x40) | (base.vb if is_reg else 0x20)
    # SIB.index = 100 means "no index" and REX.X does not change that for rsp, so rsp can never be
    # an index (checked above); r12 (100 with REX.X = 1) can.
    sib = scale_bits << 6 | ((index.lo << 3) if index is not None else 0b100 << 3)
    if base is None:
        # [index*scale + disp32] or absolute [disp32]: SIB with base = 101 and mod = 00 (no base).
        # An absolute [disp32] needs this SIB form (rm = 100, base = 101, index = 100) too,
        # because the short rm = 101 form is RIP-relative.
        shape = (None, None, None, bytes((sib | 0b101,)), 0b00_000_100, rex, vxb, vsib, False)
    elif not is_reg:
        # [rip + disp32]: mod = 00, rm = 101; disp counted from the end of the instruction.
        shape = (None, None, None, b"", 0b00_000_101, rex, vxb, vsib, False)
    else:
        # ModRM.rm = 100 does not name rsp/r12 but says "a SIB byte follows", so an rsp/r12 base
        # always needs a SIB byte (with SIB.index = 100, "no index").
        if index is None and base.lo != 0b100: rm, prefix = base.lo, b""
        else: rm, prefix = 0b100, bytes((sib | base.lo,))
        # mod = 00 with rm (or SIB.base) = 101 does not name rbp/r13 but means "disp32, no base"
        # (with rm = 101 it is RIP-relative in 64-bit mode), so an rbp/r13 base is written with
        # an explicit disp8 of 0: it has no mod = 00 form.
        if base.lo == 0b101: modrm0, tail0 = None, None
        else: modrm0, tail0 = 0b00 << 6 | rm, prefix
        shape = (modrm0, tail0, 0b01 << 6 | rm, prefix, 0b10 << 6 | rm, rex, vxb, vsib, False)
    _SHAPES[base, index, scale] = shape
    return shape


def _integer(x, what: str) -> int:
    """``x`` as an int if it is one (a numpy integer, say); a float or anything else is an error."""
    try: return operator.index(x)
    except TypeError: raise OperandError(f"memory operand {what} must be an integer, not {fmt_value(x)}") from None


class Mem:
    """A memory operand. Build it with `mem` (or the `byte`/`dword`/... helpers); immutable.

    ``size`` is the operand size in bits, or 0 when unsized (an address, as for lea, or a
    size that the other operands decide). With an xmm/ymm/zmm ``index`` the operand is a `VsibMem`.
    """

    __slots__ = ("base", "index", "scale", "disp", "size", "modrm", "tail", "rex", "vxb", "sig", "label")
    mask_target = "memory"   # a masked store's destination (`x86gen.registers.Masked`)
    encodings: frozenset[str] | None = None   # the encoding kinds that can carry the address, where not all can

    def __init__(self, base: Reg | None = None, index: Reg | None = None, scale: int = 1, disp: int = 0, size: int = 0,
                 label: object = None):
        if disp.__class__ is not int: disp = _integer(disp, "displacement")
        if size.__class__ is not int: size = _integer(size, "size")
        try:
            modrm0, tail0, modrm8, prefix, modrm32, rex, vxb, vsib, a32 = _SHAPES[base, index, scale]
        except (KeyError, TypeError):       # first use of this combination (or not one at all)
            modrm0, tail0, modrm8, prefix, modrm32, rex, vxb, vsib, a32 = _shape(base, index, scale)
        if not disp and tail0 is not None:
            modrm, tail = modrm0, tail0
        elif modrm8 is not None and -128 <= disp <= 127:
            modrm, tail = modrm8, prefix + _DISP8[disp & 0xFF]
        elif -(1 << 31) <= disp < (1 << 31):
            modrm, tail = modrm32, prefix + _pack_disp32(disp)
        elif a32 and label is None and (disp >> 31 == 1 or disp >> 31 == -2):
            # a 32-bit address wraps at 4 GiB (SDM Vol.2 3.6): [eax+0xffffffff] is [eax-1] and [eax-0x80000001] is
            # [eax+0x7fffffff], as GNU as and llvm-mc read them
            disp += (1 << 32) if disp < 0 else -(1 << 32)
            modrm, tail = (modrm8, prefix + _DISP8[disp & 0xFF]) if modrm8 is not None and -128 <= disp <= 127 else \
                (modrm32, prefix + _pack_disp32(disp))
        else:   # a label's addend or an absolute address beyond a disp32 (or an error)
            modrm, tail, disp = wide(base, index, disp, label, modrm32, prefix)
        sig = _SIGS.get(size) if size else "m"
        if sig is None:
            raise OperandError(f"unknown memory operand size {fmt_int(size, True)} bits (use {', '.join(map(str, MEMORY_SIZES))} or 0)")
        if modrm is None:   # a 64-bit absolute address: only the moffs forms (A0-A3) take it
            sig = "moffs" + sig[1:]
            modrm = tail = Unreachable(disp)
        elif vsib is not None:   # a vector index: a VsibMem, which only the VSIB forms take ("mx32": xmm index, dword)
            sig = vsib + sig[1:]
            self.__class__ = EgprMem if vsib == "me" else VsibMem
        if a32:   # a 32-bit address: an A32Mem, which the forms take through the prefix layer ("a32:m32")
            sig = "a32:" + sig
            self.__class__ = A32Mem
        self.base = base
        self.index = index
        self.scale = scale
        self.disp = disp
        self.size = size
        self.label = label
        self.sig = sig
        self.modrm = modrm
        self.tail = tail
        self.rex = rex
        self.vxb = vxb

    @property
    def kind(self) -> str: return self.sig

    @property
    def far(self) -> bool:
        """A 64-bit absolute address that ModRM cannot encode (only the moffs forms take it)."""
        return self.modrm.__class__ is not int   # (an `Unreachable`)

    def with_size(self, size: int) -> Mem:
        """The same address with another operand size (bits)."""
        return Mem(self.base, self.index, self.scale, self.disp, size, self.label)

    def with_disp32(self) -> Mem:
        """The same operand with its displacement in a 32-bit field even where a disp8 or none would do
        (mod = 10; SDM Vol.2 Table 2-2): a fixed slot a JIT can patch, or the bytes of an encoder that
        always writes disp32. Operands without a base register (``[disp32]``, ``[rip+disp32]``) already
        have one and are returned as they are. EVEX forms do not keep it: they re-encode the displacement
        with their disp8*N scale (`disp8n`), so a multiple of N in range still becomes a disp8 there."""
        return with_disp32(self)

    def with_sib(self) -> Mem:
        """The same operand written with a SIB byte where ModRM alone would do: ``[rax]`` as ModRM.rm = 100 and
        SIB (index 100, "none"; base rax), as the AMX sibmem operands need it (SDM Vol.2 TILELOADD/TILESTORED:
        the memory operand must use a SIB byte, #UD otherwise). Operands with an index, an rsp/r12 base or no base
        have a SIB byte already and are returned as they are; RIP-relative ones have no SIB form (`OperandError`)."""
        return with_sib(self)

    def disp8n(self, n: int) -> tuple:
        """(ModRM mod/rm bits, tail) of this operand in an EVEX instruction whose disp8 is scaled by ``n`` bytes
        (compressed displacement, SDM Vol.2 2.7.5): a displacement that is a multiple of ``n`` with
        quotient in -128..127 is the disp8 ``disp // n``; any other nonzero one (a plain disp8 included) a
        disp32. Operands without a base register (RIP-relative, ``[index*scale+disp32]``, absolute) and labels
        keep their disp32, and a zero displacement its encoding without one."""
        modrm = self.modrm
        if modrm.__class__ is not int or self.label is not None: return modrm, self.tail   # (far: no ModRM)
        mod = modrm & 0xC0
        if not mod: return modrm, self.tail   # no displacement ([rax]), or no base register: disp32 (mod 00)
        # a base register and a disp8 (mod 01) or disp32 (mod 10) after the SIB byte, if any: re-encoded with N
        disp = self.disp
        if not disp: return modrm, self.tail   # ([rbp]'s disp8 0; with_disp32's 0 stays a disp32, [rbp] too)
        prefix = self.tail[:-1] if mod == 0x40 else self.tail[:-4]
        q, r = divmod(disp, n)
        if not r and -128 <= q <= 127: return (modrm & 0x3F) | 0x40, prefix + _DISP8[q & 0xFF]
        return (modrm & 0x3F) | 0x80, prefix + _pack_disp32(disp)

    @property
    def bcst(self) -> Bcst:
        """This operand as an AVX-512 embedded broadcast source (SDM Vol.2 2.7.5): ``dword(rax).bcst`` is one dword at
        ``[rax]`` repeated over the vector, ``dword ptr [rax]{1to16}`` in a zmm form with 32-bit elements. The size
        (16, 32 or 64 bits) is the element size; the form decides N in ``{1toN}``. See `Bcst`."""
        return Bcst.of(self)

    def k(self, mask) -> object:
        """This operand as a masked destination ``[mem] {k1}`` (a masked store; `x86gen.Masked`). Zeroing is not
        possible on memory (``.z`` raises `x86gen.EvexOperandError`)."""
        return Masked(self, mask)

    def with_segment(self, seg: str | None) -> Mem:
        """The same operand with a segment override (``"fs"``, ``"gs"``, ``"es"``, ``"cs"``, ``"ss"``, ``"ds"``; a segment
        register object works too): a `SegMem`, which `x86gen.encode`, the `Assembler` and the text parser encode
        with the segment prefix byte (SDM Vol.2 2.1.1, group 2; see `x86gen.prefixes`). None: the operand without one."""
        return with_segment(self, seg)

    def address(self) -> str:
        """The bracketed address in Intel syntax, e.g. ``[rdi+rsi*4+0xa]``."""
        return address(self)

    def __str__(self) -> str:
        name = SIZE_NAMES.get(self.size)
        return (f"{name} ptr " if name else "") + self.address()

    def __repr__(self) -> str: return f"Mem({self})"

    def _key(self): return (self.base, self.index, self.scale, self.disp, self.size, self.label)
    def __eq__(self, other): return isinstance(other, Mem) and self._key() == other._key()
    def __hash__(self): return hash(self._key())


class SegMem(Mem):
    """A memory operand with a segment override, ``qword ptr fs:[0x28]``: made by `Mem.with_segment` (or
    ``mem(..., seg="fs")``). Its signature (``"fs:m64"``) is its own, so the per-signature encoders of plain
    operands never take it; `x86gen.encode` and the `Assembler` encode the plain operand and put the segment
    prefix before it; a form called directly refuses it (its class is not `Mem`). A VSIB operand may have one too
    (its `plain` operand is the `VsibMem`)."""

    __slots__ = ("seg",)

    @property
    def mask_target(self) -> str:   # a masked store's destination with an override (GNU as: 64 62 … for fs:[rax] {k1})
        return "memory" if self.plain.__class__ in (Mem, VsibMem, A32Mem) else "no memory"

    @property
    def kind(self) -> str: return self.sig

    @property
    def plain(self) -> Mem:
        """The operand without its segment override."""
        return Mem(self.base, self.index, self.scale, self.disp, self.size, self.label)

    def with_size(self, size: int) -> Mem:
        return self.plain.with_size(size).with_segment(self.seg)

    def __str__(self) -> str:
        name = SIZE_NAMES.get(self.size)
        return (f"{name} ptr " if name else "") + f"{self.seg}:" + self.address()

    def _key(self): return (*Mem._key(self), self.seg)


class Bcst(Mem):
    """An AVX-512 embedded-broadcast memory operand (SDM Vol.2 2.7.5, EVEX.b = 1 with memory): one element of
    ``size`` bits (16, 32 or 64) at the address, repeated over the vector: ``dword(rax).bcst`` is GNU as's
    ``dword ptr [rax]{1to16}`` in ``vaddps zmm1, zmm2, …`` (iced-x86: ``dword bcst [rax]``). Only EVEX forms that
    allow a broadcast of that element size (their ``evex_bcst``) take it; its signature (``"b32"``) is no plain
    memory signature, so no other form does. With a broadcast, the compressed disp8 is scaled by the element size
    (SDM Vol.2 Table 2-34, FV/HV with EVEX.b = 1). ``plain`` is the same address as a plain `Mem`."""

    __slots__ = ("unsized",)   # the address as a plain unsized `Mem` (what the form's encoder takes)
    mask_target = "no memory"

    @classmethod
    def of(cls, m: Mem) -> Bcst:
        """``m`` (a plain `Mem` of 16, 32 or 64 bits) as a broadcast source (`x86gen.EvexOperandError` otherwise)."""
        return bcst_of(cls, m)

    @property
    def kind(self) -> str: return f"m{self.size}bcst"

    @property
    def plain(self) -> Mem:
        """The address as a `Mem` of the element size (with its segment override or 32-bit address: a `SegMem`, an
        `A32Mem`)."""
        return self.unsized.with_size(self.size)

    @property
    def bcst(self) -> Bcst: return self

    def with_size(self, size: int) -> Mem: return Bcst.of(self.plain.with_size(size))

    def k(self, mask):
        raise _evex_error(f"{self}: a broadcast operand is a source; only a destination takes a mask")

    def __str__(self) -> str:
        seg = self.unsized.seg + ":" if self.unsized.__class__ is SegMem else ""
        return f"{SIZE_NAMES[self.size]} bcst {seg}{self.address()}"

    def __repr__(self) -> str: return f"Bcst({self})"
    def _key(self): return (*Mem._key(self), "bcst", getattr(self.unsized, "seg", None))


def _evex_error(msg: str) -> OperandError: return EvexOperandError(msg)


class A32Mem(Mem):
    """A memory operand with a 32-bit address: 32-bit base/index registers or eip, ``dword ptr [ecx+edx*2]``,
    ``[eip+0x10]`` (`Mem` and `mem` make one whenever the registers are 32-bit). In 64-bit mode the address-size
    prefix 0x67 selects 32-bit addressing: the CPU computes the address in 32 bits and zero-extends it (SDM Vol.2
    2.1.1 group 4 and 3.6 "address-size attribute"); ModRM, SIB and displacement are those of the 64-bit registers
    with the same numbers (SDM Vol.2 Table 2-2 and 2.2.1.3, with REX.B/X for r8d-r15d). Its signature
    (``"a32:m32"``) is its own, so the per-signature encoders of plain operands never take it; `x86gen.encode`, the
    `Assembler` and a form called directly encode the `plain` operand and put 0x67 before it, after a 16-bit form's
    operand-size prefix 66 and before F2/F3, a mandatory prefix, REX, VEX and EVEX, as iced-x86 writes it. All
    registers of an address have one size: mixing 32- and 64-bit ones is an `OperandError`."""

    __slots__ = ()

    mask_target = "memory"   # a masked store's or a scatter's destination with a 32-bit address (67 62 …)

    @property
    def kind(self) -> str: return self.sig

    @property
    def plain(self) -> Mem:
        """The same operand with the 64-bit registers of the same numbers (rip for eip): the bytes without 0x67."""
        return a32_plain(self)

    def with_size(self, size: int) -> Mem:
        if self.base is None and self.index is None: return a32_absolute(Mem(None, None, 1, self.disp, size))   # (addr32 [addr])
        return Mem(self.base, self.index, self.scale, self.disp, size, self.label)


class VsibMem(Mem):
    """A VSIB memory operand (SDM Vol.2 2.3.12), as the gathers and scatters take it: ``[base + vindex*scale + disp]``
    with an xmm, ymm (AVX2, AVX-512: xmm0-31/ymm0-31) or zmm (AVX-512) index register, each of whose elements is an
    index. `Mem` (and `mem`, `dword`, …, the
    text parser) makes one whenever the index is a vector register: ``mem(rax, xmm1, 4, size=32)`` is
    ``dword ptr [rax+xmm1*4]``, the operand of ``vgatherdps xmm0, dword ptr [rax+xmm1*4], xmm2``. ``size`` is the
    element size (dword or qword), or 0. The base may be any 64-bit register or none (``[xmm1*4+disp32]``),
    not rip. Only the VSIB forms (operand kinds vm32x … vm64z) take it; every other memory form
    refuses it (its ``__class__`` is not `Mem`), so a vector index is never encoded as a general one."""

    __slots__ = ()

    @property
    def kind(self) -> str: return f"VSIB memory, {self.index.kind} index"


class EgprMem(Mem):
    """A memory operand whose base or index is an APX register r16-r31 (``qword ptr [r16+r17*8]``; `Mem` and `mem` make
    one whenever such a register is in the address). Bit 4 of their numbers is REX2.X4/B4 (Intel APX Architecture
    Specification, 3.1.2.1), which no REX, VEX or plain EVEX prefix has, so only REX2 forms (and later APX's EVEX ones) take
    it: its class is not `Mem`, which every other form's encoder tests, and its signature (``"me64"``) is its own. ``rex``
    holds X4 B4 X3 B3 at their REX2 places (0x20 0x10 0x02 0x01)."""

    __slots__ = ()
    encodings = EGPR_ENCODINGS
    mask_target = "no memory"   # (a masked store is EVEX: APX's, not implemented yet)

    @property
    def kind(self) -> str: return self.sig


def mem(base: Reg | str | None = None, index: Reg | str | None = None, scale: int = 1, disp: int = 0, size: int | str = 0,
        seg: str | None = None) -> Mem:
    """Build a memory operand, e.g. ``mem(rdi, rsi, 4, 10, size=32)`` is ``dword ptr [rdi+rsi*4+0xa]``.

    ``base`` may be a 64-bit register, ``rip`` or None (then ``[index*scale+disp32]`` or an absolute
    ``[disp32]``); ``size`` is in bits (8 … 512) or a name such as ``"dword"``; 0 means unsized. An xmm/ymm
    ``index`` makes a VSIB operand (`VsibMem`) for the gathers: ``mem(rdi, ymm3, 8, size=64)``. ``seg`` is a
    segment override (`Mem.with_segment`): ``mem(disp=0x28, size=64, seg="fs")`` is ``qword ptr fs:[0x28]``.
    """
    if isinstance(base, str): base = register_named(base)
    if isinstance(index, str): index = register_named(index)
    if isinstance(size, str): size = size_named(size)
    m = Mem(base, index, scale, disp, size)
    return m if seg is None else m.with_segment(seg)


def register_named(name: str) -> Reg:
    """The register called ``name`` (any case); `OperandError` if there is none."""
    r = REGISTERS.get(name) or REGISTERS.get(name.lower())
    if r is None: raise OperandError(f"no register named {fmt_value(name)}")
    return r


def size_named(name: str) -> int:
    """An operand size name (``"dword"``, any case; ``"oword"`` = ``"xmmword"``, ``"mmword"`` = ``"qword"``, as in GNU as) in
    bits; `OperandError` if unknown."""
    low = name.lower()
    bits = SIZE_BITS.get(low) or {"oword": 128, "mmword": 64}.get(low)
    if bits is None: raise OperandError(f"unknown operand size {fmt_value(name)} (use {', '.join(SIZE_BITS)})")
    return bits


def _sized(bits: int):
    def make(base: Reg | None = None, index: Reg | None = None, scale: int = 1, disp: int = 0) -> Mem:
        return Mem(base, index, scale, disp, bits)
    make.__name__ = SIZE_NAMES[bits]
    make.__doc__ = f"A {bits}-bit memory operand: ``{SIZE_NAMES[bits]} ptr [base+index*scale+disp]``."
    return make


byte, word, dword, qword = _sized(8), _sized(16), _sized(32), _sized(64)
xmmword, ymmword, zmmword = _sized(128), _sized(256), _sized(512)



# ---- the rarer cases: 32-bit addresses, wide displacements, address errors, operand variants, the address text ----


def shape32(base, index, scale) -> tuple:
    """`x86gen.memory._shape` of a 32-bit address (a 32-bit base or index register, or eip): the same ModRM, SIB and
    displacement as the 64-bit registers of the same numbers, with the address-size prefix 0x67 (SDM Vol.2 2.1.1
    group 4, 3.6: in 64-bit mode 0x67 selects 32-bit addressing; Table 2-2's special cases are those of 64-bit
    addressing, 2.2.1.3). Every register of the address must be 32-bit: an address has one address size."""
    if base.__class__ is Gpr32X or index.__class__ is Gpr32X:
        raise OperandError(f"a 32-bit address with APX's r16d-r31d ({', '.join(str(r) for r in (base, index) if r is not None)}):"
                           " x86gen does not encode 0x67 with REX2 yet; use the 64-bit registers")
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
    if base is not None and base.__class__ not in (Gpr64, Gpr64X, Rip):
        return OperandError(f"memory base must be a 64-bit register or rip, not {fmt_value(base)} (or, in a 32-bit address, a"
                            " 32-bit register or eip)")
    if index is not None:
        if isinstance(index, (Xmm, Ymm, Zmm)): pass   # VSIB: every vector register is an index
        elif index.__class__ is not Gpr64 and index.__class__ is not Gpr64X:
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


def with_disp_size(m: Mem, bits: int, n: int = 0) -> Mem | None:
    """``m`` (of any `Mem` class) with its displacement in a disp8 (``bits`` 8) or disp32 (32) field, as GNU as's
    ``{disp8}``/``{disp32}`` ask (SDM Vol.2 Table 2-2: mod 01 / mod 10), even where a shorter one would do
    (``[rax]``: 40 00 / 80 00 00 00 00); None where the address has no such field: a disp8 needs a base register
    (RIP-relative, ``[index*scale+disp32]`` and absolute addresses have only a disp32) and a displacement that fits,
    scaled by ``n`` in an EVEX form (its disp8*N, 2.7.5: a multiple of ``n`` in -128*n..127*n; 0: not EVEX); a 64-bit
    absolute address (moffs) has neither. An EVEX form re-encodes a nonzero displacement (`Mem.disp8n`): a disp32 it
    keeps only with a scale no displacement is a multiple of (the caller's ``n=``)."""
    if m.far: return None
    shape = _SHAPES.get((m.base, m.index, m.scale)) or _shape(m.base, m.index, m.scale)
    modrm8, prefix, modrm32 = shape[2], shape[3], shape[4]
    if modrm8 is None: return m if bits == 32 else None   # no base register: a disp32 already, and only that
    disp = m.disp
    if bits == 8:
        if not (disp % n == 0 and -128 <= disp // n <= 127 if n else -128 <= disp <= 127): return None
        if disp: return m   # its disp8 (or the disp8*N the EVEX form makes of it)
        modrm, tail = modrm8, prefix + _DISP8[0]
    else: modrm, tail = modrm32, prefix + _pack_disp32(disp)
    out = object.__new__(m.__class__)
    for k in m.__class__.__slots__ + Mem.__slots__ if m.__class__ is not Mem else Mem.__slots__: setattr(out, k, getattr(m, k))
    out.modrm, out.tail = modrm, tail
    if m.__class__ is Bcst: out.unsized = with_disp_size(m.unsized, bits, n)   # (the address the EVEX encoder takes)
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
    inner = m.plain if m.__class__ is SegMem else m
    if inner.__class__ is not Mem and inner.__class__ is not A32Mem:
        raise EvexOperandError(f"{m}: a broadcast source is a memory operand with a general base or index (not VSIB or"
                               " one already broadcast)")
    if m.size not in (16, 32, 64):
        raise EvexOperandError(f"{m}: a broadcast element is a word, dword or qword (m16bcst/m32bcst/m64bcst, SDM Vol.2 2.7.5),"
                               f" not {SIZE_NAMES.get(m.size, 'unsized') if m.size else 'unsized'}: write dword(...).bcst")
    b = object.__new__(cls)
    for k in Mem.__slots__: setattr(b, k, getattr(m, k))
    # "b32"; "fs:b32", "a32:b32" with an override or a 32-bit address (plans are kept by signature: never the same)
    b.sig = f"b{m.size}" if m.__class__ is Mem else m.sig[:m.sig.rindex("m")] + f"b{m.size}"
    # the address the form's encoder takes, after the prefix layer (`x86gen.encoding.decorated`) has taken off a segment
    # override or a 32-bit address, as it does for any memory operand: GNU as writes `dword ptr fs:[eax]{1to4}` so
    b.unsized = m.with_size(0)
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


def a32_absolute(m: Mem) -> A32Mem:
    """An absolute address (``[0x12345678]``, no register) as a 32-bit one, as ``addr32`` makes it (GNU as): an `A32Mem`
    whose `plain` operand is ``m``'s [disp32] with the address's low 32 bits (0x67 zero-extends it, SDM Vol.2 3.6).
    ``m.disp`` must be a 32-bit address (-2^31 .. 2^32-1)."""
    low = m.disp & 0xFFFFFFFF
    p = Mem(None, None, 1, low - (1 << 32) if low >> 31 else low, m.size)
    out = object.__new__(A32Mem)
    for k in Mem.__slots__: setattr(out, k, getattr(p, k))
    out.sig = "a32:" + p.sig
    return out


def a32_error(err: Exception, plain: tuple, ops: tuple) -> Exception:
    """``err`` (an `EncodeError` raised for the `A32Mem.plain` operands ``plain``) with the addresses as they were
    given in ``ops`` (``[eax]``, not the ``[rax]`` of the bytes without 0x67), of the same class."""
    msg = str(err)
    for p, o in zip(plain, ops):
        if p is not o and isinstance(o, Mem): msg = msg.replace(p.address(), o.address())
    return type(err)(msg)
