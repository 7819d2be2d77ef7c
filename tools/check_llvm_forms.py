#!/usr/bin/env python3
"""Check the spec's `oracle: llvm-mc-22` forms byte for byte against llvm-mc-22, and read x86gen's bytes back with
llvm-objdump-22 (a development check; the CI test of these forms lives in tests/).

    python tools/check_llvm_forms.py [--cpuid AVX10_2] [--per-form 40] [--seed 1] [-v]

For every such form it draws instances (registers 0-31 of each vector operand, k1-k7 masks with and without {z},
broadcasts, rounding/SAE, memory operands with base/index/scale, disp8*N edges (N·127, N·128, −N·128, −N·129, not a
multiple of N) and RIP-relative addresses, random immediates), writes each in Intel syntax and

1. encodes it with x86gen (`x86gen.assemble`, with `{evex}` as llvm-mc-22 gets it; where the text names another form
   of the same length, such as the AVX10.2 store `vmovd m32, xmm` (EVEX.66.0F.W0 D6) whose text is AVX512F's 66 0F 7E
   to every assembler, the form itself through `x86gen.encoding.decorated.encode_form`), and checks that the bytes
   are the form's (EVEX map, pp, W, opcode, L'L);
2. assembles the same text with llvm-mc-22 (one process) and compares the bytes (not for the forms whose text
   llvm-mc-22 assembles to another form: they are checked by 3 only);
3. disassembles x86gen's bytes with llvm-objdump-22 -d -M intel and compares its text with llvm-mc-22's printing of
   the instance (numbers compared by value).

It prints the figures per check and the first differences, and exits 1 on any difference.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "src"))

import x86gen  # noqa: E402
from codegen import spec  # noqa: E402
from x86gen.encoding.decorated import encode_form  # noqa: E402
from x86gen.syntax import parse_text_line  # noqa: E402

SPEC = os.path.join(ROOT, "isa/x86_64.yaml")
MC = ["llvm-mc-22", "-triple=x86_64", "-x86-asm-syntax=intel", "-output-asm-variant=1", "-show-encoding"]
PTR = {8: "byte", 16: "word", 32: "dword", 64: "qword", 128: "xmmword", 256: "ymmword", 512: "zmmword"}
GPR64 = "rax rcx rdx rbx rsp rbp rsi rdi r8 r9 r10 r11 r12 r13 r14 r15".split()
GPR32 = "eax ecx edx ebx esp ebp esi edi r8d r9d r10d r11d r12d r13d r14d r15d".split()
RC_ER = ("{rn-sae}", "{rd-sae}", "{ru-sae}", "{rz-sae}")


def address(rng: random.Random, n: int) -> str:
    """A memory address: base/index/scale and a displacement at a disp8*N edge, or RIP-relative."""
    disp = rng.choice([0, n * 127, n * 128, -n * 128, -n * 129, n + 1, n * rng.randint(-128, 127), rng.randint(-2**31, 2**31 - 1)])
    if rng.random() < 0.12: return "[rip]" if not disp else f"[rip + {disp}]" if disp > 0 else f"[rip - {-disp}]"
    base = rng.choice(GPR64)
    parts = [base]
    if rng.random() < 0.6:
        parts.append(f"{rng.choice([1, 2, 4, 8])}*{rng.choice([g for g in GPR64 if g != 'rsp'])}")
    text = " + ".join(parts)
    if disp: text += f" + {disp}" if disp > 0 else f" - {-disp}"
    return f"[{text}]"


def instance(f: spec.Form, rng: random.Random) -> tuple[str, bool]:
    """Intel text of one instance of ``f`` and whether its ModRM.rm operand is memory."""
    use_mem = any(o.mem is not None for o in f.operands) and (
        all(o.reg is None for o in f.operands if o.loc == "rm") or rng.random() < 0.5)
    bcst = use_mem and f.evex_bcst and rng.random() < 0.35
    ops = []
    for i, o in enumerate(f.operands):
        if o.imm is not None: ops.append(str(rng.randint(0, 255))); continue
        if o.loc == "rm" and use_mem:
            if bcst:
                elem = f.evex_bcst
                ops.append(f"{PTR[elem]} ptr {address(rng, elem // 8)}{{1to{o.mem // elem}}}")
            else: ops.append(f"{PTR[o.mem]} ptr {address(rng, f.disp8_n or 1)}")
            continue
        r = o.reg
        if r in ("xmm", "ymm", "zmm"): t = f"{r}{rng.randrange(32)}"
        elif r == "k": t = f"k{rng.randrange(8)}"
        elif r == "r64": t = rng.choice(GPR64)
        elif r == "r32": t = rng.choice(GPR32)
        else: raise SystemExit(f"{f.id}: operand kind {o.kind} not drawn by this script")
        if i == 0 and f.evex_mask and rng.random() < 0.6:
            t += f" {{k{rng.randint(1, 7)}}}"
            if f.evex_mask == "k1z" and rng.random() < 0.5: t += " {z}"
        ops.append(t)
    if f.evex_rc and not use_mem and rng.random() < 0.4:
        rc = rng.choice(RC_ER) if f.evex_rc == "er" else "{sae}"
        k = len(ops) - sum(o.imm is not None for o in f.operands)
        ops.insert(k, rc)
    return f"{f.mnemonic} {', '.join(ops)}", use_mem


def form_of_bytes(f: spec.Form, b: bytes, rounding: bool) -> bool:
    """Whether ``b`` are bytes of ``f``: EVEX map, pp, W, opcode (and L'L without rounding, SDM Vol.2 2.7.1)."""
    if f.encoding_kind != "evex" or b[0] != 0x62: return False
    p0, p1, p2 = b[1], b[2], b[3]
    if (p0 & 7) != f.opcode_map or (p1 & 3) != f.mandatory_prefix or b[4] != f.opcode: return False
    if f.w is not None and (p1 >> 7) != f.w: return False
    return rounding or f.vex_l is None or ((p2 >> 5) & 3) == f.vex_l


def mc(lines: list[str]) -> list[tuple[bytes | None, str]]:
    r = subprocess.run(MC, input="\n".join(lines) + "\n", capture_output=True, text=True)
    bad = {int(m.group(1)) - 1 for m in re.finditer(r"<stdin>:(\d+):\d+: error", r.stderr)}
    outs = []
    for line in r.stdout.splitlines():
        m = re.match(r"\s*(.*?)\s*# encoding: \[([0-9a-fx,]*)\]", line)
        if m: outs.append((bytes(int(x, 16) for x in m.group(2).split(",")), m.group(1)))
    it = iter(outs)
    return [(None, "") if i in bad else next(it, (None, "")) for i in range(len(lines))]


def objdump(chunks: list[bytes]) -> list[str]:
    """llvm-objdump-22's text of each chunk (one object of .byte lines, one disassembly)."""
    with tempfile.TemporaryDirectory() as d:
        src, obj = os.path.join(d, "x.s"), os.path.join(d, "x.o")
        with open(src, "w") as fh:
            for c in chunks: fh.write(".byte " + ",".join(str(x) for x in c) + "\n")
        subprocess.run(["llvm-mc-22", "-triple=x86_64", "-filetype=obj", "-o", obj, src], check=True)
        out = subprocess.run(["llvm-objdump-22", "-d", "-M", "intel", "--no-show-raw-insn", obj],
                             capture_output=True, text=True, check=True).stdout
    at = {}
    for line in out.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s+(.*)$", line)
        if m: at[int(m.group(1), 16)] = m.group(2)
    res, off = [], 0
    for c in chunks:
        res.append(at.get(off, "<none>"))
        off += len(c)
    return res


# How LLVM 22 prints two AVX10.2 stores (Intel AVX10.2 spec VMOVD/VMOVW: VMOVD xmm1/m32, xmm2 = EVEX.128.66.0F.W0 D6,
# VMOVW xmm1/m16, xmm2 = EVEX.128.F3.MAP5.W0 7E, ModRM.rm written): their register form with ModRM.reg first
# (`vmovd xmm21, xmm22` for 62 a1 7d 08 d6 ee in LLVM's avx10.2-copy-64-intel.s), VMOVW's m16 as `dword ptr`. The
# text llvm-objdump-22 gives x86gen's bytes is read back through these before it is compared.
PRINTED_REVERSED = {"EVEX_VMOVD_XMMM32_XMM", "EVEX_VMOVW_XMMM16_XMM"}


def llvm_printing(fid: str, text: str) -> str:
    if fid not in PRINTED_REVERSED: return text
    text = text.replace("dword ptr", "word ptr") if fid == "EVEX_VMOVW_XMMM16_XMM" else text
    m = re.fullmatch(r"(\S+\s+)(xmm\d+), (xmm\d+)", text.strip())
    return f"{m.group(1)}{m.group(3)}, {m.group(2)}" if m else text


def norm(text: str) -> str:
    text = re.sub(r"\b1\*", "", text.split("#")[0].replace("{evex}", ""))   # [rax + 1*rcx] is [rax + rcx]
    text = re.sub(r"-?0x[0-9a-f]+|-?\b\d+\b", lambda m: str(int(m.group(0), 0)), text)
    return " ".join(text.replace(",", " , ").split())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpuid", default="AVX10_2", help="only forms with this CPUID feature (default AVX10_2; 'all')")
    ap.add_argument("--per-form", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    forms = [f for f in spec.load(SPEC) if f.oracle == "llvm-mc-22" and (args.cpuid == "all" or f.cpuid == args.cpuid)]
    cases = []   # (form, text, x86gen bytes or error, direct)
    errors = []
    for f in forms:
        for _ in range(args.per_form):
            text, _mem = instance(f, rng)
            line = ("{evex} " if f.encoding_kind == "evex" else "") + text
            rounding = any(t in text for t in RC_ER + ("{sae}",))
            try:
                b = x86gen.assemble(line)
                direct = False
                if not form_of_bytes(f, b, rounding):   # the text names another form: encode this one itself
                    mn, ops = parse_text_line(text)
                    b, direct = encode_form(x86gen.get_form(f.id), ops), True
                if not form_of_bytes(f, b, rounding): errors.append(f"{f.id}: {line}: x86gen's bytes {b.hex(' ')} are not the form's")
            except x86gen.EncodeError as ex:
                errors.append(f"{f.id}: {line}: x86gen refuses it: {ex}")
                continue
            cases.append((f, line, b, direct))
    got = mc([c[1] for c in cases])
    dis = objdump([c[2] for c in cases])
    n_mc = n_mc_ok = n_od_ok = 0
    for (f, line, b, direct), (mb, mtext), dtext in zip(cases, got, dis):
        if direct: mtext = line   # (llvm-mc-22 prints the text of the other form it chose: compare with ours)
        if mb is None:
            errors.append(f"{f.id}: {line}: llvm-mc-22 refuses it (x86gen: {b.hex(' ')})")
            continue
        if not direct:
            n_mc += 1
            if mb == b: n_mc_ok += 1
            else: errors.append(f"{f.id}: {line}: x86gen {b.hex(' ')} llvm-mc-22 {mb.hex(' ')}")
        if norm(llvm_printing(f.id, dtext)) == norm(mtext): n_od_ok += 1
        else: errors.append(f"{f.id}: {line}: llvm-objdump-22 reads x86gen's {b.hex(' ')} as {dtext!r}, llvm-mc-22 prints {mtext!r}")
    print(f"{len(forms)} forms, {len(cases)} instances: llvm-mc-22 bytes equal {n_mc_ok}/{n_mc} "
          f"({len(cases) - n_mc} encoded as the form itself, text of another form to llvm-mc-22); "
          f"llvm-objdump-22 text equal {n_od_ok}/{len(cases)}; {len(errors)} differences")
    for e in errors[: (len(errors) if args.v else 30)]: print("  " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
