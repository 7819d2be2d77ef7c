"""Every x86-64 register name GNU as and llvm-mc know (`X86_REGISTER_NAMES`, importable from x86gen.registers), for
the text parser: loaded on first use, so that ``import x86gen`` does not compile it."""
from __future__ import annotations

from .registers import ALIASES, REGISTERS

# The register names of every x86-64 register file, as GNU as and llvm-mc spell them in Intel syntax:
# general, rip/eip/ip, segment (SDM Vol.1 3.4.2), control and debug (Vol.3 2.5, 18.2), x87 st(i)
# and MMX (Vol.1 8.1, 9.2), xmm/ymm/zmm 0-31 and opmask k0-k7 (Vol.1 15.1), AMX tiles (tmm), MPX
# bounds (bnd), and GNU as's zero index eiz/riz. Text reads any of these as a register, never as a
# label; the ones REGISTERS lacks are reported as not supported (`x86gen.text.UNSUPPORTED_REGISTERS`).
X86_REGISTER_NAMES = frozenset([
    *REGISTERS, *ALIASES, "eip", "ip", "es", "cs", "ss", "ds", "fs", "gs", "eiz", "riz", "st",
    *(f"{p}{i}" for p in ("cr", "dr") for i in range(16)), *(f"st({i})" for i in range(8)),
    *(f"mm{i}" for i in range(8)), *(f"{p}mm{i}" for p in "xyz" for i in range(32)), *(f"k{i}" for i in range(8)),
    *(f"tmm{i}" for i in range(8)), *(f"bnd{i}" for i in range(4)),
])
