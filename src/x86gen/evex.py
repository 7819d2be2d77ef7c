"""AVX-512 (EVEX) operand decorations: opmasks, zeroing, embedded broadcast and static rounding.

EVEX's third payload byte P2 = z L'L b V̄' aaa (SDM Vol.2 2.7.1, Table 2-30) carries what legacy and VEX
encodings have no field for:

- ``aaa``: the opmask register k1-k7 that predicates the destination's elements (SDM Vol.2 2.7.3; Vol.1
  15.6.1). aaa = 000 (k0) means "no masking", so k0 can never be a mask: ``zmm1.k(k0)`` is an error.
- ``z``: zeroing-masking, the masked-off elements are zeroed instead of keeping the destination's old
  value (merge-masking). Only where the form allows it (its ``evex_mask`` is ``k1z``), and never with a
  memory destination (a masked store leaves masked-off elements unwritten; EVEX.z = 1 with a memory
  destination is #UD, SDM Vol.2 2.8).
- ``b`` with a memory operand: embedded broadcast (SDM Vol.2 2.7.5/2.7.6): one element of
  ``bcst`` bits is loaded and repeated ``{1toN}`` times; the compressed displacement is then scaled by
  the element size (Table 2-34, the FV/HV rows with EVEX.b = 1).
- ``b`` with register operands only: static rounding ``{er}`` (SDM Vol.2 2.7.8, Table 2-36), the rounding
  mode in L'L (which then does not give the vector length: 512 bits is implied), exceptions suppressed;
  or ``{sae}`` alone (SDM Vol.2 2.7.9/2.7.10).

The structured API, for compiler backends:

    >>> import x86gen
    >>> from x86gen import zmm1, zmm2, zmm3, k1, rax, dword
    >>> x86gen.encode("vaddps", zmm1.k(k1).z, zmm2, dword(rax).bcst).hex()
    '62f16cd95808'
    >>> x86gen.encode("vaddps", zmm1, zmm2, zmm3, rc=x86gen.RZ_SAE).hex()
    '62f16c7858cb'

``reg.k(k1)`` (xmm/ymm/zmm, xmm16-31/ymm16-31 and k registers) and ``mem.k(k1)`` make a `Masked`
destination; ``.z`` on it the zeroing copy; ``masked(op, k, zero=False)`` does both. ``dword(...).bcst``
(``qword``, ``word``) is a `x86gen.memory.Bcst` operand, whose ``{1toN}`` the form decides. Rounding is the
keyword ``rc=`` of `x86gen.encode`, `x86gen.select`, forms, the Assembler's methods and `Instruction`,
with one of the plain ints `RN_SAE`, `RD_SAE`, `RU_SAE`, `RZ_SAE` (static rounding; implies SAE) or `SAE`.
Decorations outside what a form allows raise `x86gen.EvexOperandError` naming the forms that would fit.
"""
from __future__ import annotations

from .memory import Mem
from .registers import KReg, Masked, Reg, Xmm, Ymm, Zmm

# Static rounding (SDM Vol.2 2.7.8, Table 2-36: EVEX.L'L with EVEX.b = 1, register operands only). Each also
# suppresses all exceptions. The values are the L'L bits (the MXCSR.RC encoding, SDM Vol.1 4.8.4).
RN_SAE = 0   # round to nearest (even), {rn-sae}
RD_SAE = 1   # round down (toward -inf), {rd-sae}
RU_SAE = 2   # round up (toward +inf), {ru-sae}
RZ_SAE = 3   # round toward zero (truncate), {rz-sae}
SAE = 4      # suppress all exceptions only, {sae} (SDM Vol.2 2.7.9/2.7.10: EVEX.b = 1, L'L keeps its meaning)
ROUNDING = (RN_SAE, RD_SAE, RU_SAE, RZ_SAE, SAE)
# the text of each value as GNU as, llvm-mc and iced-x86 write it
ROUNDING_NAMES = {RN_SAE: "rn-sae", RD_SAE: "rd-sae", RU_SAE: "ru-sae", RZ_SAE: "rz-sae", SAE: "sae"}



def masked(op: Reg | Mem, k: KReg, zero: bool = False) -> Masked:
    """``op {k}`` (or ``op {k} {z}`` with ``zero``): see `Masked`. Raises `x86gen.EvexOperandError` for k0, a
    register that cannot be masked or zeroing on a memory destination."""
    return Masked(op, k, zero)


class Rounding:
    """The rounding of an instruction as an item of an `x86gen.Assembler`'s record (after its operands), so that
    listings can print it (``{rn-sae}``, GNU as's separate operand); ``rc`` is the int (`RN_SAE` … `SAE`). Not an
    operand: `x86gen.encode` and the forms take ``rc=``."""

    __slots__ = ("rc",)

    def __init__(self, rc: int): self.rc = rc
    def __str__(self) -> str: return "{" + ROUNDING_NAMES.get(self.rc, "?") + "}"
    def __repr__(self) -> str: return f"Rounding({self})"
    def __eq__(self, other): return other.__class__ is Rounding and other.rc == self.rc
    def __hash__(self): return hash((Rounding, self.rc))


# the blends whose mask chooses between the two sources, element by element, so every element of the destination is
# written whatever the mask (SDM Vol.2 VBLENDMPD/VBLENDMPS, VPBLENDMB/VPBLENDMW, VPBLENDMD/VPBLENDMQ: "Blend … Using an
# OpMask Control"): no merge, the destination keeps its plain role
MASK_SELECTS = frozenset(("vblendmps", "vblendmpd", "vpblendmb", "vpblendmw", "vpblendmd", "vpblendmq"))


def operand_roles(form, ops: tuple) -> tuple[tuple[str, ...], KReg | None]:
    """(the roles of the explicit operands of ``form`` with operands ``ops``, the mask register read or None).

    Roles are the spec's (``r``, ``w``, ``rw``, ``cw``, ``rcw``; `x86gen.Form` operands' ``role``) changed by a mask on
    the destination (SDM Vol.2 2.7.3/2.7.4; as iced-x86's InstructionInfo reports them):

    - the mask register is read (a gather's or scatter's is also written, `x86gen.Form.evex_mask_required`: the instruction
      clears each element's bit as it completes it, not the AVX512PF prefetches'; the spec's roles of those forms are
      their masked ones);
    - merge-masking keeps the masked-off elements, so it reads the destination: a zmm destination is read and
      conditionally written (``rcw``), an xmm/ymm one read and written (``rw``: the bits above the vector length are
      zeroed whatever the mask), a memory destination (a masked store) conditionally written (``cw``);
    - zeroing-masking writes every element: the roles stay those of the plain form; so does a blend whose mask
      selects the source of each element (`MASK_SELECTS`).
    """
    roles = [o.role for o in form.operands]
    m = ops[0] if ops else None
    if m.__class__ is not Masked: return tuple(roles), None
    if not m.zero and roles[0] in ("w", "rw") and form.mnemonic not in MASK_SELECTS:
        if isinstance(m.op, Mem): roles[0] = "cw"
        elif m.op.__class__ is Zmm: roles[0] = "rcw"
        elif isinstance(m.op, (Xmm, Ymm)): roles[0] = "rw"
    return tuple(roles), m.mask


def is_rounding(rc: object) -> bool:
    """Is ``rc`` one of `RN_SAE` … `RZ_SAE`, `SAE`?"""
    return rc.__class__ is int and 0 <= rc <= SAE


__all__ = ["Masked", "masked", "RN_SAE", "RD_SAE", "RU_SAE", "RZ_SAE", "SAE", "ROUNDING", "ROUNDING_NAMES", "Rounding", "is_rounding",
           "operand_roles"]


ROUNDING_RECORDS = {rc: Rounding(rc) for rc in ROUNDING_NAMES}   # rc → the `Rounding` an Assembler's record holds
