#!/usr/bin/env python3
"""Draft isa/x86_64.yaml lines for the forms beyond iced (tools/llvm_forms.py's universe), for a human to review:
the sibling of tools/draft_forms.py for the forms iced-x86 cannot describe.

    python tools/draft_llvm_forms.py [--extension AVX10_2] [--mnemonic vaddbf16,...] [--all]

For each universe form not yet in the spec (`--all`: every one) it prints ``operands with roles | encoding | tuple=
mask= bcst= rc=``, grouped by mnemonic:

- operand kinds, masking (``K1``/``K1Z``), broadcast (``B16``/``B32``/``B64``) and ``_ER``/``_SAE`` from the form's id,
  which tools/llvm_forms.py made from what LLVM 22's decoder prints for {k1}, {k1}{z} and EVEX.b;
- the encoding as LLVM 22 decodes it (`LlvmForm.encoding`; EVEX.LIG where every L'L decodes the same);
- ``tuple=`` measured with llvm-mc-22: the disp8*N scale N is the smallest power of two whose displacement llvm-mc-22
  still encodes as disp8 (SDM Vol.2 2.7.5), for a plain and for a broadcast memory operand, named by the memory
  operand's share of the vector (FV/HV/QV with broadcast, FVM/HVM/QVM/OVM without, T1S for a scalar);
- roles from the AVX10.2 specification's operations (Intel AVX10.2 Architecture Specification): the destination is
  written (W), an accumulator read and written (RW: the FMA and dot-product forms), a compare or class test writes a
  mask (W:k), the vcomx*/vucomx*/vcomisbf16 compares read both operands and write rflags; a mask register is ``k``.

The result is a proposal: every line still has to be checked byte for byte with llvm-mc-22 (tests/test_fuzz_llvm.py).
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tools"))

import llvm_forms  # noqa: E402

from codegen import spec  # noqa: E402

SPEC = os.path.join(ROOT, "isa/x86_64.yaml")
LLVM_MC = ["llvm-mc-22", "-triple=x86_64", "-x86-asm-syntax=intel", "-output-asm-variant=1", "-show-encoding"]
PTR = {8: "byte", 16: "word", 32: "dword", 64: "qword", 128: "xmmword", 256: "ymmword", 512: "zmmword"}


def parse_id(fid: str, mnemonic: str) -> dict:
    """Operand kinds and EVEX attributes of a universe id (`codegen.spec.derive_id`'s parts read back)."""
    enc, _, rest = fid.partition("_")
    if enc not in ("EVEX", "VEX"): rest, enc = fid, "LEGACY"
    parts = rest[len(mnemonic) + 1:].split("_") if len(rest) > len(mnemonic) else []
    out = {"kinds": [], "mask": "", "bcst": 0, "rc": ""}
    for p in parts:
        if p in ("K1", "K1Z"): out["mask"] = p.lower(); continue
        if p in ("ER", "SAE"): out["rc"] = p.lower(); continue
        m = re.fullmatch(r"(XMM|YMM|ZMM)M(\d+)(?:B(\d+))?", p)
        if m:
            out["kinds"].append(f"{m.group(1).lower()}/m{m.group(2)}")
            out["bcst"] = int(m.group(3) or 0)
            continue
        m = re.fullmatch(r"RM(\d+)", p)
        if m: out["kinds"].append(f"r/m{m.group(1)}"); continue
        if p == "KR": out["kinds"].append("k"); continue
        if re.fullmatch(r"M\d+", p): out["kinds"].append(p.lower()); continue
        out["kinds"].append(p.lower())
    return out


# --- roles (Intel AVX10.2 spec, each instruction's "Operation") ------------------------------------------------------
RW_FIRST = re.compile(r"vf(n?)m(add|sub)(132|213|231)bf16|vpdp[bw][su]{2}ds?|vdpphps")   # accumulators
FLAG_COMPARES = {"vcomxsd": "w=OSZPC 0=A", "vcomxss": "w=OSZPC 0=A", "vcomxsh": "w=OSZPC 0=A",
                 "vucomxsd": "w=OSZPC 0=A", "vucomxss": "w=OSZPC 0=A", "vucomxsh": "w=OSZPC 0=A",
                 "vcomisbf16": "w=ZPC 0=OSA"}


def roles(mn: str, kinds: list[str]) -> list[str]:
    if mn in FLAG_COMPARES: return ["R"] * len(kinds)
    first = "RW" if RW_FIRST.fullmatch(mn) else "W"
    return [first] + ["R"] * (len(kinds) - 1)


# --- the tuple type, measured ------------------------------------------------------------------------------------
REGS = {"xmm": ["xmm3", "xmm4", "xmm5"], "ymm": ["ymm3", "ymm4", "ymm5"], "zmm": ["zmm3", "zmm4", "zmm5"], "k": ["k2", "k3"],
        "r32": ["ebx", "esi"], "r64": ["rbx", "rsi"], "tmm": ["tmm2", "tmm3"]}


def instance(mn: str, kinds: list[str], mem: str | None) -> str:
    """Intel text of ``mn`` with registers, and ``mem`` as the memory operand (None: a register there)."""
    used: dict = collections.Counter()
    ops = []
    for k in kinds:
        if k.startswith("imm"): ops.append("1"); continue
        if ("/" in k or k.startswith("m")) and mem is not None: ops.append(mem); continue
        cls = k.split("/")[0].replace("r/m", "r")
        ops.append(REGS[cls][used[cls]])
        used[cls] += 1
    return f"{mn} {', '.join(ops)}"


def assemble(lines: list[str]) -> list[bytes | None]:
    r = subprocess.run(LLVM_MC, input="\n".join(lines) + "\n", capture_output=True, text=True)
    bad = {int(m.group(1)) - 1 for m in re.finditer(r"<stdin>:(\d+):\d+: error", r.stderr)}
    enc = [bytes(int(b, 16) for b in m.group(1).split(",")) for m in re.finditer(r"encoding: \[([0-9a-fx,]+)\]", r.stdout)]
    it = iter(enc)
    return [None if i in bad else next(it, None) for i in range(len(lines))]


def mem_operand(kinds: list[str]) -> tuple[int, int] | None:
    """(index, bits) of the memory-capable operand."""
    for i, k in enumerate(kinds):
        m = re.search(r"(?:^|/)m(\d+)$", k)
        if m: return i, int(m.group(1))
    return None


def measure_n(mn: str, kinds: list[str], bits: int, bcst: int) -> int | None:
    """disp8*N's N: the smallest power of two that llvm-mc-22 encodes as a disp8 (one byte shorter than disp32...)."""
    ptr = PTR[bcst] if bcst else PTR[bits]
    suffix = f"{{1to{bits // bcst}}}" if bcst else ""
    lines = [instance("{evex} " + mn, kinds, f"{ptr} ptr [rax + {d}]{suffix}") for d in (1, 2, 4, 8, 16, 32, 64, 128)]
    got = assemble(lines)
    if any(g is None for g in got): return None
    shortest = min(len(g) for g in got)
    return next(d for d, g in zip((1, 2, 4, 8, 16, 32, 64, 128), got) if len(g) == shortest)


def tuple_type(enc: str, bits: int, bcst: int) -> str:
    m = re.match(r"EVEX\.(\d+|LIG)\.", enc)
    if m.group(1) == "LIG" or bits <= 64 and not bcst: return "T1S"
    share = int(m.group(1)) // bits
    return {1: "FV", 2: "HV", 4: "QV"}[share] if bcst else {1: "FVM", 2: "HVM", 4: "QVM", 8: "OVM"}[share]


def draft(f: llvm_forms.LlvmForm) -> tuple[str, str]:
    """(spec line, a remark or '') of one EVEX universe form."""
    d = parse_id(f.id, f.mnemonic)
    kinds = d["kinds"]
    ops = ", ".join(f"{r}:{k}" if r != "R" else k for r, k in zip(roles(f.mnemonic, kinds), kinds))
    attrs, remark = [], ""
    mo = mem_operand(kinds)
    if mo:
        _i, bits = mo
        tt = tuple_type(f.encoding, bits, d["bcst"])
        # the spec's N of that tuple type must be what llvm-mc-22 does
        n, nb = measure_n(f.mnemonic, kinds, bits, 0), (measure_n(f.mnemonic, kinds, bits, d["bcst"]) if d["bcst"] else 0)
        want = bits // 8 if tt != "T1S" else bits // 8
        if n != want or (d["bcst"] and nb != d["bcst"] // 8):
            remark = f"llvm-mc-22's disp8 N is {n} (broadcast {nb}), {tt} says {want} ({d['bcst'] // 8})"
        attrs.append(f"tuple={tt}")
    if d["mask"]: attrs.append(f"mask={d['mask']}")
    if d["bcst"]: attrs.append(f"bcst={d['bcst']}")
    if d["rc"]: attrs.append(f"rc={d['rc']}")
    return f"{ops} | {f.encoding} | {' '.join(attrs)}".rstrip(" |"), remark


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--extension", default="AVX10_2")
    ap.add_argument("--mnemonic", help="only these mnemonics (comma separated)")
    ap.add_argument("--all", action="store_true", help="also the forms the spec has already")
    args = ap.parse_args(argv)
    have = set() if args.all else {x.id for x in spec.load(SPEC)}
    want = set(args.mnemonic.split(",")) if args.mnemonic else None
    by_mn: dict = collections.defaultdict(list)
    for f in llvm_forms.universe():
        if f.extension != args.extension or f.id in have or not f.id.startswith("EVEX_"): continue
        if want and f.mnemonic not in want: continue
        by_mn[f.mnemonic].append(f)
    for mn, fs in by_mn.items():
        print(f"{mn}:" + (f"\n  flags: {FLAG_COMPARES[mn]}" if mn in FLAG_COMPARES else ""))
        print("  forms:")
        for f in fs:
            line, remark = draft(f)
            print(f"  - {line}" + (f"   # CHECK: {remark}" if remark else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
