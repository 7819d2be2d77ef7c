"""LLVM 22 as a byte oracle: llvm-mc-22 assembles Intel text, llvm-objdump-22 decodes bytes.

The forms iced-x86 1.21 does not know (the spec's `oracle: llvm-mc-22`, isa/README.md "Oracles") are checked
against LLVM 22 (Debian's package ``llvm-22``; `.ci/run` installs it when missing). Both tools run batched: one
llvm-mc-22 process for any number of lines (`assemble`), and one llvm-mc-22 plus one llvm-objdump-22 process for any
number of byte strings (`disassemble`), so the cost of a test grows with the lines, not with processes.

- `assemble(lines)`: for each line the bytes llvm-mc-22 gives (``-show-encoding``), or the error it printed for that
  line (`Refused`). llvm-mc-22 goes on after an error and names the line, so one bad line costs nothing else.
- `disassemble(chunks)`: for each byte string the instructions llvm-objdump-22 reads in it (Intel syntax, LLVM's
  spelling: ``vaddps zmm1 {k1} {z}, zmm2, dword ptr [rax + 8*rbx + 64]{1to16}``), each chunk under a symbol of its
  own, so a chunk read as two instructions or as ``<unknown>`` shows as such.
- `normalize(text)`: the text with spacing and numbers in one spelling, for comparing a request with a decoding.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

LLVM_MC = shutil.which("llvm-mc-22")
LLVM_OBJDUMP = shutil.which("llvm-objdump-22")
HAVE_LLVM22 = bool(LLVM_MC and LLVM_OBJDUMP)
MISSING = ("llvm-mc-22 / llvm-objdump-22 are not installed (Debian package llvm-22; .ci/run installs it): the forms "
           "iced-x86 does not know have no byte oracle here")
MC_ARGS = ("-triple=x86_64", "-x86-asm-syntax=intel", "-output-asm-variant=1")


@dataclass(frozen=True)
class Refused:
    """llvm-mc-22's error for one line (the first line of its message)."""
    message: str

    def __bool__(self) -> bool:   # a refusal is falsy, bytes are the answer
        return False


_ENCODING = re.compile(r"# encoding: \[([^\]]*)\]")
_ERROR = re.compile(r"^<stdin>:(\d+):\d+: error: (.*)$")


def _byte(tok: str) -> int:
    # llvm-mc prints fixups as A/B/…; our lines never need one (no symbol operands), so any such token is an error
    return int(tok, 16)


def assemble(lines: list[str]) -> list[bytes | Refused]:
    """llvm-mc-22's bytes for each line of Intel text, or `Refused` with its message. A line must hold one
    instruction (no labels, no directives): the n-th encoding printed belongs to the n-th line it did not refuse."""
    if not lines: return []
    if any("\n" in t or ";" in t for t in lines): raise ValueError("one instruction per line")
    proc = subprocess.run([LLVM_MC, *MC_ARGS, "-show-encoding"], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=600)
    refused: dict[int, str] = {}
    for ln in proc.stderr.splitlines():
        m = _ERROR.match(ln)
        if m: refused.setdefault(int(m.group(1)) - 1, m.group(2))
    encodings = [bytes(_byte(t.strip()) for t in m.group(1).split(",") if t.strip())
                 for m in map(_ENCODING.search, proc.stdout.splitlines()) if m]
    out: list[bytes | Refused] = []
    it = iter(encodings)
    for i in range(len(lines)):
        if i in refused: out.append(Refused(refused[i]))
        else:
            enc = next(it, None)
            if enc is None: raise RuntimeError(f"llvm-mc-22 printed fewer encodings than lines; stderr: {proc.stderr[:400]}")
            out.append(enc)
    if next(it, None) is not None: raise RuntimeError("llvm-mc-22 printed more encodings than lines")
    return out


_SYMBOL = re.compile(r"^[0-9a-f]+ <c(\d+)>:$")
_INSN = re.compile(r"^\s*[0-9a-f]+:\s+(.*?)\s*$")


def disassemble(chunks: list[bytes]) -> list[list[str]]:
    """llvm-objdump-22's Intel text for each byte string: the list of instructions it reads there (one, when the
    chunk is one instruction it knows; ``<unknown>`` where it knows none)."""
    if not chunks: return []
    src = ".text\n" + "".join(f"c{i}:\n" + (f".byte {', '.join(map(str, c))}\n" if c else "")
                              for i, c in enumerate(chunks))
    with tempfile.TemporaryDirectory(prefix="x86gen-llvm22-") as d:
        obj = os.path.join(d, "chunks.o")
        subprocess.run([LLVM_MC, "-triple=x86_64", "-filetype=obj", "-o", obj], input=src, text=True, check=True,
                       capture_output=True, timeout=600)
        proc = subprocess.run([LLVM_OBJDUMP, "-d", "-M", "intel", "--no-show-raw-insn", obj], capture_output=True,
                              text=True, check=True, timeout=600)
    out: list[list[str]] = [[] for _ in chunks]
    cur = None
    for ln in proc.stdout.splitlines():
        m = _SYMBOL.match(ln)
        if m:
            cur = int(m.group(1))
            continue
        m = _INSN.match(ln)
        if m and cur is not None:   # (a RIP-relative operand gets a `# 0x… <c4+0x100>` comment: dropped)
            text = " ".join(m.group(1).split(" # ")[0].split("\t")).strip()
            # LLVM 22 prints the SIB byte of an r20/r28 base (ModRM.rm 100 and B4: a SIB byte, index 100 "none") as
            # `[r20 + riz]`; riz is GNU as's name of "no index", which x86gen does not read: the address without it
            out[cur].append(text.replace(" + riz", ""))
    return out


_NUM = re.compile(r"(?<![\w.])(-?)(0x[0-9a-f]+|\d+)(?![\w.])")


def normalize(text: str) -> str:
    """One spelling for comparing Intel texts: lower case, single spaces only where they separate words, numbers in
    decimal, ``+ -n`` as ``- n``, no ``1*`` scale."""
    t = " ".join(text.lower().replace("\t", " ").split())
    t = _NUM.sub(lambda m: str(int(m.group(1) + m.group(2), 0)), t)
    t = re.sub(r"\s*([,+\-*\[\]{}:])\s*", r"\1", t)
    t = re.sub(r"(?<=[\[+])1\*", "", t)   # an index scaled by 1: `[rax + 1*r13]` is `[rax + r13]`
    return t.replace("+-", "-")
