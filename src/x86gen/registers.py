"""Registers: one immutable singleton per architectural register name.

Each register carries the bit fields the encoder ORs into prefix and ModRM bytes, precomputed
once so that encoding a form is a handful of attribute loads:

- ``lo``: the low 3 bits of the register number (ModRM.rm, SIB.base/index, opcode +r);
  ``reg3`` is the same shifted into ModRM.reg (bits 5:3).
- ``rex_r`` / ``rex_x`` / ``rex_b``: bit 3 of the number placed at REX.R (0x04), REX.X (0x02),
  REX.B (0x01) (SDM Vol.2 2.2.1).
- ``vr`` / ``vx`` / ``vb``: the same bits *inverted* at their VEX byte-1 positions, R̄ 0x80,
  X̄ 0x40, B̄ 0x20 (SDM Vol.2 2.3.5.5); ``vv`` is VEX.vvvv = ~number, at bits 6:3.
- ``evr`` / ``evxb`` / ``evv``: the EVEX bits of the number, inverted (SDM Vol.2 2.7.1): ``evr`` is
  R̄ (bit 3, 0x80) and R̄' (bit 4, 0x10) of P0 for ModRM.reg; ``evxb`` is B̄ (bit 3, 0x20) and X̄
  (bit 4, 0x40) of P0 for a register in ModRM.rm (EVEX.X extends a register rm, SDM Vol.2 2.7.2,
  Table 2-31); ``evv`` is V̄' (bit 4 of vvvv, 0x08) of P2. ``vv`` serves EVEX.vvvv as well.
- ``hi16``: the number is 16-31 (xmm16-31, ymm16-31, zmm16-31, which only EVEX can encode; APX's r16-r31, which
  only REX2 and APX's EVEX can).
- ``rex2_r`` / ``rex2_x`` / ``rex2_b``: bits 4 and 3 of the number at their places in the REX2 payload byte
  M0 R4 X4 B4 W R3 X3 B3 (Intel APX Architecture Specification, 3.1.2.1 "REX2 prefix"): R4 0x40 / R3 0x04,
  X4 0x20 / X3 0x02, B4 0x10 / B3 0x01. For registers 0-15 they equal ``rex_r`` / ``rex_x`` / ``rex_b``.
- ``rex8``: 0x40 for spl/bpl/sil/dil, which exist only with a REX prefix; ``high`` marks
  ah/ch/dh/bh, which cannot be encoded when any REX prefix is present (SDM Vol.2 2.2.1.2).
- ``sig``: the operand signature used by `x86gen.encode` to choose forms.
"""
from __future__ import annotations

from .errors import EvexOperandError, OperandError, fmt_value


class Reg:
    """A machine register. Compare by identity; print as its Intel name."""

    __slots__ = ("name", "num", "size", "lo", "reg3", "rex_r", "rex_x", "rex_b", "vr", "vx", "vb", "vv", "rex2_r", "rex2_x", "rex2_b",
                 "evr", "evxb", "evv", "hi16",
                 "is4", "rex8", "high", "sig")
    kind = "reg"
    encodings: frozenset[str] | None = None   # the encoding kinds that can carry the register, where not all can

    def __init__(self, name: str, num: int, size: int, *, high: bool = False):
        self.name, self.num, self.size, self.high = name, num, size, high
        self.lo = num & 7
        self.reg3 = (num & 7) << 3
        hi = (num >> 3) & 1
        self.rex_r, self.rex_x, self.rex_b = hi << 2, hi << 1, hi
        self.vr, self.vx, self.vb = (0 if hi else 0x80), (0 if hi else 0x40), (0 if hi else 0x20)
        self.vv = (~num & 15) << 3
        b3, b4 = (num >> 3) & 1, (num >> 4) & 1
        self.rex2_r, self.rex2_x, self.rex2_b = b4 << 6 | b3 << 2, b4 << 5 | b3 << 1, b4 << 4 | b3
        b3, b4 = (num >> 3) & 1, (num >> 4) & 1
        self.evr = (0 if b3 else 0x80) | (0 if b4 else 0x10)
        self.evxb = (0 if b3 else 0x20) | (0 if b4 else 0x40)
        self.evv = 0 if b4 else 0x08
        self.hi16 = num >= 16
        self.is4 = (num & 15) << 4
        self.rex8 = 0x40 if (self.kind == "r8" and 4 <= num <= 7 and not high) else 0
        # xmm16-31/ymm16-31 have a signature of their own: `x86gen.encode` plans are per signature and leave out
        # the class checks it answers, so a VEX plan must never see them (only EVEX forms take "xmm+"/"ymm+")
        # r16-r31 (APX's EGPRs) likewise: "r64+" … ("r8+"), which only REX2 (and APX's EVEX) forms take
        self.sig = name if name in SIG_REGS else self.kind + "+" if self.hi16 and self.kind in ("xmm", "ymm", "r8", "r16", "r32", "r64") \
            else self.kind

    def __repr__(self) -> str: return self.name
    __str__ = __repr__
    def __reduce__(self): return (_lookup, (self.name,))

    def sized(self, bits: int) -> Reg:
        """The register with the same number in another width: ``rax.sized(8)`` is al, ``xmm3.sized(256)``
        is ymm3 (general registers: 8, 16, 32, 64; vector registers: 128, 256, 512). ah/ch/dh/bh have no
        other widths. Raises `x86gen.OperandError` for a width the register file does not have."""
        if self.high or self.kind in ("k", "mm", "tmm", "rip", "st", "sreg", "cr", "dr", "bnd"):
            raise OperandError(f"{self.name} has no {bits}-bit form")
        return (gpr if self.kind[0] == "r" else vec)(self.num, bits)


def _lookup(name: str) -> Reg: return REGISTERS[name]


class Gpr8(Reg):
    """8-bit general register (al … r15b, spl … dil, and the legacy ah/ch/dh/bh)."""
    __slots__ = ()
    kind = "r8"


class Gpr16(Reg):
    """16-bit general register."""
    __slots__ = ()
    kind = "r16"


class Gpr32(Reg):
    """32-bit general register."""
    __slots__ = ()
    kind = "r32"


class Gpr64(Reg):
    """64-bit general register."""
    __slots__ = ()
    kind = "r64"


# APX's extended general-purpose registers r16-r31 (Intel APX Architecture Specification, 2.1 "Extended GPRs"): bit 4
# of their number is REX2.R4/X4/B4 or APX EVEX's R4/X4/B4, which no legacy (REX) or VEX prefix, nor plain EVEX, has.
# Classes of their own, as xmm16-31's: every legacy/VEX/EVEX encoder tests ``__class__ is Gpr64`` and so refuses them at
# no cost; the REX2 encoders (`x86gen.encoding.rex2`) take both classes.
EGPR_ENCODINGS = frozenset(("rex2", "apx_evex"))


class Gpr8X(Gpr8):
    """r16b-r31b: an 8-bit EGPR (APX), encoded by REX2 (and APX's EVEX) only."""
    __slots__ = ()
    encodings = EGPR_ENCODINGS


class Gpr16X(Gpr16):
    """r16w-r31w: a 16-bit EGPR (APX), encoded by REX2 (and APX's EVEX) only."""
    __slots__ = ()
    encodings = EGPR_ENCODINGS


class Gpr32X(Gpr32):
    """r16d-r31d: a 32-bit EGPR (APX), encoded by REX2 (and APX's EVEX) only."""
    __slots__ = ()
    encodings = EGPR_ENCODINGS


class Gpr64X(Gpr64):
    """r16-r31: a 64-bit EGPR (APX), encoded by REX2 (and APX's EVEX) only."""
    __slots__ = ()
    encodings = EGPR_ENCODINGS


class _Maskable:
    """The ``.k(mask)`` of the registers an EVEX form may mask (xmm/ymm/zmm 0-31 and k registers)."""
    __slots__ = ()

    mask_target = "register"   # (what `Masked` takes: xmm/ymm/zmm 0-31 and k registers)

    def k(self, mask: KReg) -> Masked:
        """This register as a masked destination ``zmm1 {k1}`` (`Masked`; ``.z`` on it adds ``{z}``).
        k0 is no mask (EVEX.aaa = 000 means none, SDM Vol.2 2.7.3): ``.k(k0)`` raises `x86gen.EvexOperandError`."""
        return Masked(self, mask)


class Xmm(_Maskable, Reg):
    """128-bit vector register."""
    __slots__ = ()
    kind = "xmm"


class Ymm(_Maskable, Reg):
    """256-bit vector register."""
    __slots__ = ()
    kind = "ymm"


class XmmHigh(Xmm):
    """xmm16-xmm31: a 128-bit vector register that only EVEX encodes (SDM Vol.2 2.7.1, EVEX.R'/V'/X).

    A class of its own so that the legacy and VEX encoders, which test ``__class__ is Xmm``, refuse it at
    no cost (`x86gen.diagnostics.operand_error` says why); EVEX encoders take both classes."""
    __slots__ = ()
    encodings = frozenset(("evex",))


class YmmHigh(Ymm):
    """ymm16-ymm31: a 256-bit vector register that only EVEX encodes (see `XmmHigh`)."""
    __slots__ = ()
    encodings = frozenset(("evex",))


class Zmm(_Maskable, Reg):
    """512-bit vector register (EVEX only)."""
    __slots__ = ()
    encodings = frozenset(("evex",))
    kind = "zmm"


class KReg(_Maskable, Reg):
    """AVX-512 opmask register k0-k7 (SDM Vol.1 15.1.3): ModRM.reg/rm and VEX.vvvv name it with 3 bits;
    there is no k8-k15, so REX.R/VEX.R̄ and the top bit of vvvv are never set for it."""
    __slots__ = ()
    kind = "k"


class Mmx(Reg):
    """64-bit MMX register mm0-mm7 (SDM Vol.1 9.2.2). ModRM names it with 3 bits; REX.R and REX.B are
    ignored for MMX registers (SDM Vol.2 2.2.1.2: "REX.R ... is ignored when ModR/M specifies other
    registers"), so there is no mm8-mm15 and the register bits never reach a REX prefix."""
    __slots__ = ()
    kind = "mm"

    def __init__(self, name: str, num: int, size: int):
        super().__init__(name, num, size)
        self.sig = "MM"   # not "mm": the encoder reads a signature that starts with "m" as a memory operand


class Tmm(Reg):
    """AMX tile register tmm0-tmm7 (SDM Vol.1 18.2): ModRM.reg/rm and VEX.vvvv name it with 3 bits; there is no
    tmm8-tmm15, so REX/VEX register-extension bits are never set for it."""
    __slots__ = ()
    kind = "tmm"
class StReg(Reg):
    """x87 FPU stack register st(i): ``st0`` … ``st7`` in Python (iced-x86's names), printed ``st(0)`` …
    ``st(7)`` as GNU as and iced-x86 write them. ``i`` counts from the top of the register stack
    (SDM Vol.1 8.1.2); the forms that name one encode ``i`` in the low 3 bits of their second opcode
    byte (``D8 C0+i``: ModRM with mod = 11, reg = the opcode digit, rm = ``i``; SDM Vol.2 A.5). There
    is no REX bit for it: only eight exist."""
    __slots__ = ()
    kind = "st"

    def __repr__(self) -> str: return f"st({self.num})"
    __str__ = __repr__


class SegReg(Reg):
    """Segment register es, cs, ss, ds, fs, gs (numbers 0-5 as in ModRM.reg; SDM Vol.1 3.4.2), the operand of
    ``mov r/m, sreg`` (8C) and ``mov sreg, r/m16`` (8E; cs cannot be loaded so: #UD), and fs/gs of push/pop.
    In 64-bit mode es, cs, ss and ds have base 0 (SDM Vol.1 3.4.2.1)."""
    __slots__ = ()
    kind = "sreg"


class CrReg(Reg):
    """Control register cr0, cr2, cr3, cr4 or cr8 (SDM Vol.3 2.5; the others are reserved and #UD), the
    ModRM.reg operand of ``mov cr, r64`` / ``mov r64, cr`` (0F 22 / 0F 20; cr8 takes REX.R)."""
    __slots__ = ()
    kind = "cr"


class DrReg(Reg):
    """Debug register dr0 … dr7 (SDM Vol.3 18.2; dr8-dr15 #UD), the ModRM.reg operand of ``mov dr, r64`` /
    ``mov r64, dr`` (0F 23 / 0F 21)."""
    __slots__ = ()
    kind = "dr"


class BndReg(Reg):
    """MPX bound register bnd0 … bnd3 (SDM Vol.1 17.3.1): a lower and an upper bound of 64 bits each. ModRM names it with
    3 bits, but only 0-3 exist: bnd4-bnd7 (and REX.R/REX.B set for it, bnd8-bnd15) are #UD (SDM Vol.2 BNDMK, BNDMOV …),
    so its register bits never reach a REX prefix."""
    __slots__ = ()
    kind = "bnd"


class Rip(Reg):
    """The instruction pointer, usable only as a memory base (RIP-relative addressing)."""
    __slots__ = ()
    kind = "rip"


# Registers that some forms name as a fixed operand (`add eax, imm32`, `shl r/m32, cl`): they get
# their own signature so that `encode` considers those forms too.
# st0 is the x87 stack top, the fixed operand of `fadd st(0), st(i)` and friends; fs/gs of push/pop fs/gs.
SIG_REGS = frozenset({"al", "cl", "ax", "dx", "eax", "ecx", "edx", "rax", "rcx", "rdx", "st0", "fs", "gs"})

_GPR64 = ["rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi"] + [f"r{i}" for i in range(8, 16)]
_GPR32 = ["eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi"] + [f"r{i}d" for i in range(8, 16)]
_GPR16 = ["ax", "cx", "dx", "bx", "sp", "bp", "si", "di"] + [f"r{i}w" for i in range(8, 16)]
_GPR8 = ["al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil"] + [f"r{i}b" for i in range(8, 16)]

REGISTERS: dict[str, Reg] = {}
for _i in range(16):
    for _cls, _names, _size in ((Gpr64, _GPR64, 64), (Gpr32, _GPR32, 32), (Gpr16, _GPR16, 16), (Gpr8, _GPR8, 8)):
        REGISTERS[_names[_i]] = _cls(_names[_i], _i, _size)
    REGISTERS[f"xmm{_i}"] = Xmm(f"xmm{_i}", _i, 128)
    REGISTERS[f"ymm{_i}"] = Ymm(f"ymm{_i}", _i, 256)
for _i in range(16, 32):
    for _cls, _suffix, _size in ((Gpr64X, "", 64), (Gpr32X, "d", 32), (Gpr16X, "w", 16), (Gpr8X, "b", 8)):
        REGISTERS[f"r{_i}{_suffix}"] = _cls(f"r{_i}{_suffix}", _i, _size)
    REGISTERS[f"xmm{_i}"] = XmmHigh(f"xmm{_i}", _i, 128)
    REGISTERS[f"ymm{_i}"] = YmmHigh(f"ymm{_i}", _i, 256)
for _i in range(32):
    REGISTERS[f"zmm{_i}"] = Zmm(f"zmm{_i}", _i, 512)
for _i, _n in enumerate(("ah", "ch", "dh", "bh")):
    REGISTERS[_n] = Gpr8(_n, _i + 4, 8, high=True)
for _i in range(8):
    REGISTERS[f"k{_i}"] = KReg(f"k{_i}", _i, 64)
for _i in range(8):
    REGISTERS[f"mm{_i}"] = Mmx(f"mm{_i}", _i, 64)
for _i in range(8):
    REGISTERS[f"tmm{_i}"] = Tmm(f"tmm{_i}", _i, 8192)   # up to 16 rows of 64 bytes
for _i in range(8):
    REGISTERS[f"st{_i}"] = StReg(f"st{_i}", _i, 80)
for _i, _n in enumerate(("es", "cs", "ss", "ds", "fs", "gs")):
    REGISTERS[_n] = SegReg(_n, _i, 16)
for _i in (0, 2, 3, 4, 8):
    REGISTERS[f"cr{_i}"] = CrReg(f"cr{_i}", _i, 64)
for _i in range(8):
    REGISTERS[f"dr{_i}"] = DrReg(f"dr{_i}", _i, 64)
for _i in range(4):
    REGISTERS[f"bnd{_i}"] = BndReg(f"bnd{_i}", _i, 128)
REGISTERS["rip"] = Rip("rip", 5, 64)
# eip: the base of a 32-bit RIP-relative address (`[eip+disp32]`, with the 0x67 prefix: the instruction pointer's low
# 32 bits plus disp32, zero-extended; SDM Vol.2 2.2.1.6), a `memory.A32Mem`
REGISTERS["eip"] = Rip("eip", 5, 32)
# Aliases accepted on input: r8l … r15l (Intel's spelling of r8b … r15b).
ALIASES = {f"r{i}l": REGISTERS[f"r{i}b"] for i in range(8, 16)}

# The register names of every x86-64 register file, as GNU as and llvm-mc spell them in Intel syntax:
# general, rip/eip/ip, segment (SDM Vol.1 3.4.2), control and debug (Vol.3 2.5, 18.2), x87 st(i)
# and MMX (Vol.1 8.1, 9.2), xmm/ymm/zmm 0-31 and opmask k0-k7 (Vol.1 15.1), AMX tiles (tmm), MPX
# bounds (bnd), and GNU as's zero index eiz/riz. Text reads any of these as a register, never as a
# label; the ones REGISTERS lacks are reported as not supported (`x86gen.syntax.UNSUPPORTED_REGISTERS`).
X86_REGISTER_NAMES = frozenset([
    *REGISTERS, *ALIASES, "eip", "ip", "es", "cs", "ss", "ds", "fs", "gs", "eiz", "riz", "st",
    *(f"{p}{i}" for p in ("cr", "dr") for i in range(16)), *(f"st({i})" for i in range(8)),
    *(f"mm{i}" for i in range(8)), *(f"{p}mm{i}" for p in "xyz" for i in range(32)), *(f"k{i}" for i in range(8)),
    *(f"tmm{i}" for i in range(8)), *(f"bnd{i}" for i in range(4)),
])

globals().update(REGISTERS)
_BY_NUMBER: dict[tuple[str, int, int], Reg] = {(("v" if r.kind in ("xmm", "ymm", "zmm") else "g"), r.num, r.size): r
                                              for r in REGISTERS.values() if r.kind[0] in "rxyz" and r.kind != "rip" and not r.high}


def _by_number(file: str, num: int, bits: int) -> Reg:
    try: return _BY_NUMBER[file, num, bits]
    except (KeyError, TypeError):
        what = "general register" if file == "g" else "vector register"
        widths, nums = ("8, 16, 32 or 64", "0-31; 16-31 are APX's, REX2 forms only") if file == "g" else ("128, 256 or 512", "0-31")
        raise OperandError(f"no {what} number {str(num)[:20]} of {str(bits)[:20]} bits (numbers {nums}, widths {widths})") from None


def gpr(num: int, bits: int = 64) -> Reg:
    """The general register with this number (0-15, as in ModRM/REX; 16-31 APX's r16-r31, which only REX2 forms take)
    and width: ``gpr(0, 32)`` is eax, ``gpr(4, 8)`` is spl (never ah: that is ``REGISTERS["ah"]``), ``gpr(9)`` is r9,
    ``gpr(17, 32)`` is r17d. Raises `x86gen.OperandError`."""
    return _by_number("g", num, bits)


def vec(num: int, bits: int = 128) -> Reg:
    """The vector register with this number (0-31) and width: ``vec(3)`` is xmm3, ``vec(3, 256)`` is ymm3,
    ``vec(17, 512)`` is zmm17 (numbers 16-31 and zmm only in EVEX forms). Raises `x86gen.OperandError`."""
    return _by_number("v", num, bits)



# ---- AVX-512 opmasks ------------------------------------------------------------------------------------------------
# A masked operand is defined here, with the registers, because `Reg.k` makes one; memory operands say whether they can
# be masked by their class's `mask_target` (x86gen.memory), so this module needs no memory classes. The other EVEX
# decorations (rounding, broadcast) are x86gen.evex's and x86gen.memory's.

class Masked:
    """A destination with an opmask: ``zmm1 {k1}`` (merge-masking) or ``zmm1 {k1} {z}`` (zeroing-masking).

    ``op`` is the register (xmm/ymm/zmm 0-31, or a k register: a masked compare's destination) or the memory
    operand (a masked store); ``mask`` the `KReg` k1-k7 in EVEX.aaa; ``zero`` the EVEX.z bit. Immutable.
    Build it with ``reg.k(k1)``, ``mem.k(k1)``, ``.z`` or `masked`. Only EVEX forms whose first operand
    may be masked take it (`x86gen.EvexOperandError` otherwise). ``sig`` is the operand's signature
    with ``{k}``/``{kz}`` appended (no plain form's signature)."""

    __slots__ = ("op", "mask", "zero", "sig", "p2", "_hash")

    def __init__(self, op, mask: KReg, zero: bool = False):   # op: a Reg or an x86gen.memory.Mem
        if mask.__class__ is not KReg:
            raise EvexOperandError(f"{fmt_value(op)}: a mask is a k register k1-k7, not {fmt_value(mask)}")
        if mask.num == 0:
            raise EvexOperandError(f"{fmt_value(op)} {{k0}}: k0 cannot be a mask (EVEX.aaa = 000 means no masking, SDM Vol.2"
                                   " 2.7.3); leave the operand unmasked or use k1-k7")
        target = getattr(op, "mask_target", None)   # "register", "memory" (`x86gen.memory.Mem.mask_target`), or none
        if target == "memory" or target == "no memory":
            # a plain Mem or a VsibMem (a scatter's destination; with a 32-bit address too: A32Mem, 0x67, SDM Vol.2 3.6)
            if target == "no memory":
                raise EvexOperandError(f"{fmt_value(op)}: only a plain or VSIB memory destination can be masked (not a"
                                       " broadcast, segment-overridden or other 32-bit address operand)")
            if zero:
                raise EvexOperandError(f"{op} {{{mask}}} {{z}}: zeroing-masking with a memory destination is #UD (SDM Vol.2 2.8,"
                                       " EVEX exception conditions: a masked store leaves the masked-off elements unwritten); drop {z}")
        elif target != "register":
            raise EvexOperandError(f"{fmt_value(op)}: only xmm/ymm/zmm/k registers and memory destinations take a mask")
        if zero.__class__ is not bool: raise EvexOperandError(f"zero= must be a bool, not {fmt_value(zero)}")
        self.op, self.mask, self.zero = op, mask, zero
        self.sig = f"{op.sig}{{kz}}" if zero else f"{op.sig}{{k}}"
        self.p2 = (0x80 if zero else 0) | mask.num   # EVEX.z and EVEX.aaa (SDM Vol.2 2.7.1: P2 = z L'L b V̄' aaa)
        self._hash = hash((Masked, op, mask, zero))    # (plans remember register combinations by it)

    @property
    def z(self) -> Masked:
        """The zeroing-masking copy: ``zmm1.k(k1).z`` is ``zmm1 {k1} {z}``."""
        return Masked(self.op, self.mask, True)

    @property
    def kind(self) -> str:
        return f"{self.op.kind} {{{self.mask}}}" + (" {z}" if self.zero else "")

    def __str__(self) -> str: return f"{self.op} {{{self.mask}}}" + (" {z}" if self.zero else "")
    def __repr__(self) -> str: return f"Masked({self})"
    def __eq__(self, other): return other.__class__ is Masked and (self.op, self.mask, self.zero) == (other.op, other.mask, other.zero)
    def __hash__(self): return self._hash


__all__ = ["gpr", "vec", "Reg", "Gpr8", "Gpr16", "Gpr32", "Gpr64", "Gpr8X", "Gpr16X", "Gpr32X", "Gpr64X",
           "Xmm", "Ymm", "XmmHigh", "YmmHigh", "Zmm", "KReg", "Mmx", "Tmm",
           "StReg", "SegReg", "CrReg", "DrReg", "BndReg", "Rip", "Masked", "REGISTERS", *REGISTERS]
