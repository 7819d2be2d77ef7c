"""GNU as and llvm-mc as batch oracles: assemble thousands of independent snippets in one process.

Each snippet ("unit": one line of text, or a small program) goes into its own ELF section
(``.section .u<k>,"ax",@progbits``), so every unit starts at offset 0, as ``x86gen.assemble`` does,
and nothing in one unit (alignment, labels) moves another. The object file is read with a small ELF64
reader below (stdlib only): a unit's bytes are its section's contents; a unit whose section has
relocations is marked (its bytes are not final). Diagnostics carry line numbers, which map back to
units. An assembler that reports an error writes no object file, so the units with errors are
blanked and the file is assembled again; errors without a line number (GNU as: an undefined local
label) split the batch in halves until they are attributed to a unit.

Nothing here uses x86gen.
"""
from __future__ import annotations

import bisect
import os
import re
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass, field

GNU_AS = shutil.which("as")
LLVM_MC = shutil.which("llvm-mc-14") or shutil.which("llvm-mc")
HAVE_GNU_AS = GNU_AS is not None
HAVE_LLVM_MC = LLVM_MC is not None


@dataclass
class Outcome:
    """What one assembler made of one unit: ``data`` (None if it refused the unit), its error and
    warning messages, and whether the bytes carry relocations (not final)."""
    data: bytes | None = None
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    relocated: bool = False

    @property
    def ok(self) -> bool:
        return self.data is not None and not self.errors


# --- a minimal ELF64 little-endian reader --------------------------------------------------------------


def elf_sections(blob: bytes) -> tuple[dict[str, bytes], set[str]]:
    """``({section name: contents}, {names of sections that have relocations})`` of an ELF64 object."""
    if blob[:4] != b"\x7fELF" or blob[4] != 2 or blob[5] != 1:
        raise ValueError("not an ELF64 little-endian object")
    e_shoff, = struct.unpack_from("<Q", blob, 0x28)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", blob, 0x3A)
    headers = []
    first = struct.unpack_from("<IIQQQQIIQQ", blob, e_shoff)
    if e_shnum == 0: e_shnum = first[5]            # extended numbering: count in section 0's sh_size
    if e_shstrndx == 0xFFFF: e_shstrndx = first[6]  # ... and the string table index in its sh_link
    for i in range(e_shnum):
        headers.append(struct.unpack_from("<IIQQQQIIQQ", blob, e_shoff + i * e_shentsize))
    strtab = headers[e_shstrndx]
    names_blob = blob[strtab[4]:strtab[4] + strtab[5]]

    def name(off: int) -> str:
        return names_blob[off:names_blob.index(b"\0", off)].decode()

    out: dict[str, bytes] = {}
    relocated: set[str] = set()
    for sh_name, sh_type, _flags, _addr, off, size, _link, info, _align, _entsize in headers:
        n = name(sh_name)
        if sh_type == 1:     # SHT_PROGBITS
            out[n] = blob[off:off + size]
        elif sh_type == 8:   # SHT_NOBITS
            out[n] = bytes(size)
        elif sh_type in (4, 9) and size:   # SHT_RELA, SHT_REL: applies to section `info`
            relocated.add(name(headers[info][0]))
    return out, relocated


# --- running an assembler over units ---------------------------------------------------------------------

_GNU_DIAG = re.compile(r"^[^:\n]*:(\d+): (Error|Warning): (.*)$", re.M)
_GNU_DIAG_NOLINE = re.compile(r"^[^:\n]*: (Error|Warning): (.*)$", re.M)
_LLVM_DIAG = re.compile(r"^[^:\n]*:(\d+):\d+: (error|warning): (.*)$", re.M)


def _source(units: list[str | None]) -> tuple[str, list[int]]:
    """Assembler source for ``units`` (None: left empty) and the first line number of each unit."""
    lines = [".intel_syntax noprefix"]
    starts = []
    for k, u in enumerate(units):
        lines.append(f'.section .u{k},"ax",@progbits')
        starts.append(len(lines) + 1)
        if u is not None: lines.extend(u.split("\n"))
    lines.append(".section .uend,\"ax\",@progbits")   # diagnostics after the last unit map past it
    return "\n".join(lines) + "\n", starts


def _run(tool: str, src: str, workdir: str) -> tuple[bytes | None, str]:
    path = os.path.join(workdir, "in.s")
    obj = os.path.join(workdir, "out.o")
    with open(path, "w", encoding="utf-8") as f: f.write(src)
    if os.path.exists(obj): os.unlink(obj)
    if tool == "gnu":
        cmd = [GNU_AS, "--64", "-msyntax=intel", "-mnaked-reg", "-o", obj, path]
    else:
        cmd = [LLVM_MC, "-triple=x86_64", "-x86-asm-syntax=intel", "--filetype=obj", "-o", obj, path]
    r = subprocess.run(cmd, capture_output=True, timeout=600)
    err = r.stderr.decode("utf-8", "replace")
    blob = None
    if r.returncode == 0 and os.path.exists(obj):
        with open(obj, "rb") as f: blob = f.read()
    return blob, err


def _diagnostics(tool: str, err: str, starts: list[int], n: int):
    """``(per-unit [(kind, message)], unattributed messages)``"""
    per: list[list[tuple[str, str]]] = [[] for _ in range(n)]
    loose = []
    pat = _GNU_DIAG if tool == "gnu" else _LLVM_DIAG
    for m in pat.finditer(err):
        line, kind, msg = int(m.group(1)), m.group(2).lower(), m.group(3)
        k = bisect.bisect_right(starts, line) - 1
        if 0 <= k < n: per[k].append((kind, msg))
        else: loose.append((kind, msg))
    if tool == "gnu":
        for m in _GNU_DIAG_NOLINE.finditer(err):
            loose.append((m.group(1).lower(), m.group(2)))
    return per, loose


def assemble_units(units: list[str], tool: str = "gnu", workdir: str | None = None) -> list[Outcome]:
    """Assemble each unit with GNU as (``tool="gnu"``) or llvm-mc (``"llvm"``); one `Outcome` per unit.

    A unit must not leave its section (``.section``, ``.text``, …) nor open a comment it does not close:
    that would move the units after it (`ValueError`)."""
    for u in units:
        if re.search(r"^\s*\.(section|text|data|bss|pushsection|popsection|previous)\b", u, re.M) or u.count("/*") != u.count("*/"):
            raise ValueError(f"unit {u[:80]!r} would change the section or comment state of the units after it")
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="x86gen-oracle-") as d:
            return assemble_units(units, tool, d)
    if not units: return []
    out = [Outcome() for _ in units]
    live: list[str | None] = list(units)
    for _attempt in range(3):
        src, starts = _source(live)
        blob, err = _run(tool, src, workdir)
        per, loose = _diagnostics(tool, err, starts, len(units))
        for k, diags in enumerate(per):
            if live[k] is None: continue
            for kind, msg in diags:
                (out[k].errors if kind == "error" else out[k].warnings).append(msg)
        if blob is not None:
            sections, relocated = elf_sections(blob)
            for k, u in enumerate(live):
                if u is None: continue
                out[k].data = sections.get(f".u{k}", b"")
                out[k].relocated = f".u{k}" in relocated
            return out
        failed = [k for k, d in enumerate(per) if live[k] is not None and any(kind == "error" for kind, _ in d)]
        if not failed:
            if any(kind == "error" for kind, _ in loose) and len(units) > 1:
                return _split(units, tool, workdir)
            for k, u in enumerate(live):   # refused without saying where: every unit is refused
                if u is not None: out[k].errors.append(err.strip()[:500] or f"{tool} failed")
            return out
        for k in failed: live[k] = None
        # the per-unit messages are kept; clear those of the units that stay, they are reported again
        for k, u in enumerate(live):
            if u is not None: out[k] = Outcome()
    for k, u in enumerate(live):
        if u is not None: out[k].errors.append("assembler kept failing")
    return out


def _split(units: list[str], tool: str, workdir: str) -> list[Outcome]:
    """Attribute errors that name no line by assembling the halves separately."""
    mid = len(units) // 2
    return assemble_units(units[:mid], tool, workdir) + assemble_units(units[mid:], tool, workdir)


# --- objdump: the text GNU's disassembler prints for given bytes -------------------------------------------

OBJDUMP = shutil.which("objdump")
HAVE_OBJDUMP = OBJDUMP is not None
_OBJDUMP_LINE = re.compile(r"^\s*([0-9a-f]+):\t([0-9a-f]{2}(?: [0-9a-f]{2})*)\s*(?:\t(.*))?$")


def _objdump_lines(path: str, base: int, start: int | None) -> dict[int, tuple[int, str]]:
    """``{address: (length, text)}`` of the instructions objdump prints for the raw file at ``path``."""
    cmd = [OBJDUMP, "-D", "-z", "-b", "binary", "-m", "i386:x86-64", "-M", "intel", "--insn-width=15",
           f"--adjust-vma={base:#x}"]
    if start is not None: cmd.append(f"--start-address={start:#x}")
    r = subprocess.run(cmd + [path], capture_output=True, timeout=600, check=True)
    out: dict[int, tuple[int, str]] = {}
    for line in r.stdout.decode("utf-8", "replace").splitlines():
        m = _OBJDUMP_LINE.match(line)
        if m: out[int(m.group(1), 16)] = (len(m.group(2).split()), (m.group(3) or "").strip())
    return out


@dataclass
class Disassembly:
    """What objdump printed for one chunk of bytes: the instruction texts, in order, and whether they
    cover the chunk exactly (False: objdump read an instruction across the chunk's end)."""
    address: int
    texts: list[str]
    exact: bool


def objdump_intel(chunks: list[bytes], base: int = 0x1_0000_0000, max_runs: int = 50) -> list[Disassembly]:
    """Disassemble ``chunks`` laid out one after another from address ``base`` with
    ``objdump -D -b binary -m i386:x86-64 -M intel`` in one process. Where objdump reads a chunk with
    another length than the chunk's, the chunks after it would be read out of step: objdump is run
    again from the first chunk it did not start at (``--start-address``), at most ``max_runs`` times
    in all; chunks still not reached get an empty, inexact `Disassembly`."""
    starts, pos = [], base
    for c in chunks:
        starts.append(pos)
        pos += len(c)
    out: list[Disassembly | None] = [None] * len(chunks)
    with tempfile.TemporaryDirectory(prefix="x86gen-objdump-") as d:
        path = os.path.join(d, "chunks.bin")
        with open(path, "wb") as f: f.write(b"".join(chunks))
        first: int | None = 0
        runs = 0
        while first is not None and runs < max_runs and chunks:
            lines = _objdump_lines(path, base, starts[first] if first else None)
            runs += 1
            nxt = None
            for k in range(first, len(chunks)):
                if out[k] is not None: continue
                a, end = starts[k], starts[k] + len(chunks[k])
                if a not in lines:
                    if nxt is None: nxt = k
                    continue
                texts, cur = [], a
                while cur < end and cur in lines:
                    n, t = lines[cur]
                    texts.append(t)
                    cur += n
                out[k] = Disassembly(a, texts, cur == end)
            first = nxt
    return [o if o is not None else Disassembly(starts[k], [], False) for k, o in enumerate(out)]
