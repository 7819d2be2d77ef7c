"""Check the spec's llvm-mc-22 forms (isa/README.md, `oracle:`) byte for byte against LLVM 22.

For every form marked ``oracle: llvm-mc-22`` it draws operand choices (registers of each class and number, memory
operands with every kind of base, index, scale and displacement, immediates at and inside their limits, masks),
encodes each through three doors of x86gen (the text `x86gen.assemble`, `x86gen.encode` by mnemonic and the form
itself, `x86gen.get_form(id)`), which must agree, and compares the bytes with one batch of
``llvm-mc-22 -triple=x86_64 -x86-asm-syntax=intel -output-asm-variant=1 -show-encoding``. Then
``llvm-objdump-22 -d -M intel`` must decode x86gen's bytes back to the instruction llvm-mc printed.

Where the two refuse differently the case is reported, except for the refusals the spec documents (`KNOWN`):
x86gen refuses AMX dot products whose tiles are not all different (#UD, which llvm-mc does not check), and LLVM 22
reads the 32-bit MSR address of urdmsr & co. as signed (GNU as and x86gen take 0x80000000-0xffffffff: llvm-mc is
given the signed value of the same bits for those).

    python tools/llvm22_check.py [--per-form N] [--seed S] [-v]

Prints one line per form (cases, agreements) and a summary; exits 1 on any disagreement.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "src")]

import x86gen  # noqa: E402
from codegen import spec  # noqa: E402

LLVM_MC = shutil.which("llvm-mc-22")
OBJDUMP = shutil.which("llvm-objdump-22")
R = x86gen.REGISTERS
GPR = {8: ["al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil", *(f"r{i}b" for i in range(8, 16)), "ah", "ch", "dh", "bh"],
       16: ["ax", "cx", "dx", "bx", "sp", "bp", "si", "di", *(f"r{i}w" for i in range(8, 16))],
       32: ["eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", *(f"r{i}d" for i in range(8, 16))],
       64: ["rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", *(f"r{i}" for i in range(8, 16))]}
PTR = {8: "byte", 16: "word", 32: "dword", 64: "qword", 128: "xmmword", 256: "ymmword", 512: "zmmword"}
# (why x86gen refuses, what llvm-mc does): refusals of x86gen's that llvm-mc 22 does not make, documented in the spec
KNOWN = {"tiles": "AMX: #UD unless the tiles differ (ISE TDPBF8PS, TMMULTF32PS; binutils' disassembler marks them bad)",
         "msr_imm": "the MSR address is an unsigned imm32 (GNU as, the Linux kernel's :u32); LLVM 22 takes -2^31..2^31-1"}


def reg_choices(kind: str, evex: bool) -> list[str]:
    if kind in ("r8", "r16", "r32", "r64"): return GPR[int(kind[1:])]
    if kind in ("xmm", "ymm"): return [f"{kind}{i}" for i in range(32 if evex else 16)]
    if kind == "zmm": return [f"zmm{i}" for i in range(32)]
    if kind == "tmm": return [f"tmm{i}" for i in range(8)]
    if kind == "k": return [f"k{i}" for i in range(8)]
    raise ValueError(kind)


def draw_mem(rng: random.Random, size: int, sib: bool, n: int) -> tuple[str, object]:
    """(text, x86gen operand) of a memory operand: bases rax…r15 (and rip, none), indexes, scales and displacements
    around the disp8 and disp8*N limits (``n``: the EVEX disp8 scale, 1 otherwise)."""
    base = rng.choice(GPR[64] + ([] if sib else ["rip", None]))
    index = rng.choice([None] + [r for r in GPR[64] if r != "rsp"]) if base != "rip" else None
    if sib and index is None and rng.random() < 0.5: index = rng.choice([r for r in GPR[64] if r != "rsp"])
    scale = rng.choice((1, 2, 4, 8)) if index else 1
    disp = rng.choice((0, 1, -1, 127, -128, 128, -129, 127 * n, -128 * n, 128 * n, n, 3 * n + 1, 0x12345678, -0x7FFFFFFF,
                       rng.randrange(-2**31, 2**31)))
    if base is None and index is None: base = "rax"
    parts = [p for p in (base, f"{scale}*{index}" if index else None) if p]
    text = "[" + " + ".join(parts) + (f" + {disp}" if disp > 0 else f" - {-disp}" if disp < 0 else "") + "]"
    ptr = f"{PTR[size]} ptr " if size else ""
    op = x86gen.mem(R[base] if base else None, R[index] if index else None, scale, disp, size=size)
    return ptr + text, op


def draw_imm(rng: random.Random, bits: int) -> int:
    if bits == 8: return rng.choice((0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)))
    return rng.choice((0, 1, -1, 0x7FFFFFFF, -0x80000000, 0x1B01, 0x80000000, 0xFFFFFFFF, rng.randrange(-2**31, 2**31)))


def cases(form, rng: random.Random, count: int) -> list[tuple[str, str, tuple, str]]:
    """(Intel text, the text for llvm-mc, x86gen operands, why x86gen must refuse or "") for ``count`` draws of
    ``form``'s operands. An MSR address of 0x80000000 or more is written for llvm-mc as the signed value of its bits
    (LLVM 22 refuses the unsigned one; the bytes are the same), so that those bytes are compared too."""
    evex = form.encoding_kind == "evex"
    out = []
    for _ in range(count):
        texts, ops, why = [], [], ""
        llvm = []
        for o in form.operands:
            if o.imm is not None:
                v = draw_imm(rng, o.imm)
                if o.imm == 32 and v >= 0x80000000: why = why or "msr_imm"
                texts.append(str(v)); ops.append(v)
                llvm.append(str(v - (1 << 32) if o.imm == 32 and v >= 0x80000000 else v))
                continue
            elif o.mem is not None and (o.reg is None or rng.random() < 0.5):
                t, m = draw_mem(rng, o.mem if o.kind != "sibmem" else 0, o.kind == "sibmem", form.disp8_n or 1)
                texts.append(t); ops.append(m)
            else:
                name = rng.choice(reg_choices(o.reg, evex))
                texts.append(name); ops.append(R[name])
            llvm.append(texts[-1])
        if form.evex_mask and rng.random() < 0.7:
            k = rng.randrange(1, 8)
            z = form.evex_mask == "k1z" and rng.random() < 0.5
            texts[0] += f" {{k{k}}}" + (" {z}" if z else "")
            llvm[0] = texts[0]
            ops[0] = ops[0].k(R[f"k{k}"]).z if z else ops[0].k(R[f"k{k}"])
        tiles = [x.num for o, x in zip(form.operands, ops) if o.reg == "tmm" and isinstance(x, x86gen.Reg)]
        if len(set(tiles)) != len(tiles): why = "tiles"
        # an EVEX form whose registers a VEX form also takes: {evex} asks llvm-mc and x86gen's text for this one
        head = "{evex} " if evex and any(f.encoding_kind == "vex" for f in x86gen.forms_of(form.mnemonic)) else ""
        out.append((f"{head}{form.mnemonic} {', '.join(texts)}", f"{head}{form.mnemonic} {', '.join(llvm)}", tuple(ops),
                    why))
    return out


def x86gen_bytes(form, text: str, ops: tuple) -> bytes | Exception:
    """The bytes of the three doors, which must agree; or the exception they all raise."""
    results = []
    for door in (lambda: x86gen.assemble(text), lambda: x86gen.get_form(form.id)(*ops),
                 lambda: x86gen.encode(form.mnemonic, *ops) if not text.startswith("{") else x86gen.assemble(text)):
        try: results.append(bytes(door()))
        except x86gen.EncodeError as ex: results.append(ex)
    kinds = {type(r) for r in results}
    if len(kinds) != 1 or (bytes in kinds and len(set(results)) != 1):
        raise AssertionError(f"{form.id}: {text}: the doors disagree: {results}")
    return results[0]


def llvm_mc(lines: list[str]) -> list[tuple[str, bytes] | str]:
    """llvm-mc-22's (printed text, bytes) per line, or its error message (one process for all lines)."""
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
        f.write("\n".join(lines) + "\n")
    try:
        p = subprocess.run([LLVM_MC, "-triple=x86_64", "-x86-asm-syntax=intel", "-output-asm-variant=1", "-show-encoding",
                            f.name], capture_output=True, text=True)
    finally: os.unlink(f.name)
    errors = {int(m.group(1)): m.group(2) for m in re.finditer(r"^\S+?:(\d+):\d+: error: (.*)$", p.stderr, re.M)}
    ok = [(m.group(1).strip(), bytes(int(b, 16) for b in m.group(2).split(",")))
          for m in re.finditer(r"^\s*(.*?)\s*# encoding: \[([0-9a-fx,]+)\]$", p.stdout, re.M)]
    out, it = [], iter(ok)
    for n in range(1, len(lines) + 1): out.append(errors[n] if n in errors else next(it))
    if next(it, None) is not None: raise AssertionError("llvm-mc printed more instructions than lines")
    return out


def objdump(chunks: list[bytes]) -> list[str]:
    """llvm-objdump-22's Intel text of each chunk (the chunks laid one after the other in one object)."""
    with tempfile.TemporaryDirectory() as d:
        src, obj = os.path.join(d, "b.s"), os.path.join(d, "b.o")
        with open(src, "w") as f:
            f.write(".text\n" + "".join(".byte " + ",".join(str(b) for b in c) + "\n" for c in chunks))
        subprocess.run([LLVM_MC, "-triple=x86_64", "-filetype=obj", src, "-o", obj], check=True)
        p = subprocess.run([OBJDUMP, "-d", "-M", "intel", "--no-show-raw-insn", obj], capture_output=True, text=True,
                           check=True)
    by_addr = {int(m.group(1), 16): m.group(2).strip()
               for m in re.finditer(r"^\s*([0-9a-f]+):\s+(.*)$", p.stdout, re.M)}
    out, at = [], 0
    for c in chunks:
        out.append(by_addr.get(at, "<none>"))
        at += len(c)
    return out


def norm(text: str) -> str:
    """An instruction's text as both tools print it, whitespace and `{evex}` aside (objdump does not print it)."""
    text = text.replace("{evex}", "").split("#")[0]
    # numbers as values: llvm-mc prints decimal, llvm-objdump hex (6913 is 0x1b01, -1 is -0x1)
    text = re.sub(r"(?<![\w.])(-?)(0x[0-9a-f]+|\d+)\b", lambda m: str(int(m.group(1) + m.group(2), 0)), text)
    return re.sub(r"\s+", " ", text).strip()


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-form", type=int, default=200)
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args(argv)
    if not (LLVM_MC and OBJDUMP):
        print("llvm-mc-22 and llvm-objdump-22 are needed", file=sys.stderr)
        return 2
    forms = [f for f in spec.load(os.path.join(ROOT, "isa", "x86_64.yaml")) if f.oracle == "llvm-mc-22"]
    rng = random.Random(args.seed)
    todo = [(f, *c) for f in forms for c in cases(f, rng, args.per_form)]
    mine = [x86gen_bytes(f, t, ops) for f, t, _lt, ops, _why in todo]
    theirs = llvm_mc([lt for _f, _t, lt, _o, _w in todo])
    bad, stats = [], {f.id: [0, 0, 0, 0] for f in forms}   # cases, same bytes, both refuse, known refusals
    decode = []
    for (f, text, _lt, _ops, why), a, b in zip(todo, mine, theirs):
        st = stats[f.id]
        st[0] += 1
        if isinstance(a, bytes) and isinstance(b, tuple):
            if a != b[1]: bad.append(f"{f.id}: {text}: x86gen {a.hex(' ')}, llvm-mc-22 {b[1].hex(' ')}")
            else:
                st[1] += 1
                decode.append((f, text, a, b[0]))
        elif isinstance(a, Exception) and isinstance(b, str):
            st[2] += 1
            if args.v: print(f"  both refuse {text}: x86gen {type(a).__name__}, llvm-mc {b}")
        elif isinstance(a, Exception) and why in KNOWN:
            st[3] += 1
            if args.v: print(f"  known: {text}: x86gen {type(a).__name__} ({KNOWN[why]})")
        else:
            bad.append(f"{f.id}: {text}: x86gen {a.hex(' ') if isinstance(a, bytes) else repr(a)}, llvm-mc-22 {b!r}")
    for (f, text, a, printed), got in zip(decode, objdump([a for _f, _t, a, _p in decode])):
        if norm(got) != norm(printed):
            bad.append(f"{f.id}: {text}: llvm-objdump-22 decodes {a.hex(' ')} as {got!r}, llvm-mc-22 printed {printed!r}")
    for f in forms:
        n, same, both, known = stats[f.id]
        print(f"{f.id:42s} {n:5d} cases  {same:5d} same bytes + decoded  {both:4d} both refuse  {known:4d} known")
    total = [sum(s[i] for s in stats.values()) for i in range(4)]
    print(f"{len(forms)} forms, {total[0]} cases: {total[1]} same bytes (and llvm-objdump-22 decodes them back), "
          f"{total[2]} refused by both, {total[3]} known differences, {len(bad)} disagreements")
    for b in bad[:50]: print("DISAGREE", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
