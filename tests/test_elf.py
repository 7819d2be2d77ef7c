"""ELF64 relocatable objects (`x86gen.assemble_object`, ``x86gen asm -o f.o``) against GNU as 2.40.

Each program is assembled by x86gen and by GNU as (``as --64``); the two objects are compared through readelf: the
sections (name, type, flags, size, entry size, alignment) and their bytes, the symbols (name, binding, type, section,
value, size) and the relocations (section, offset, type, symbol, addend). Expected results are GNU as's, never
x86gen's. Differences allowed, with their reason:

- ``.eh_frame`` (and its relocations, and the section symbols only they use): x86gen drops ``.cfi_*`` directives;
- ``STT_FILE`` symbols: x86gen drops ``.file``.

``readelf -a`` must read each of x86gen's objects without a warning; programs with ``main`` are linked with gcc and
run, their output equal to the GNU-as-built program's. A C file compiled with ``gcc -O2 -S -masm=intel`` at test time
goes the same way.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
from gnu_oracle import elf_sections

import x86gen
from x86gen import AsmSyntaxError, EncodeError, LabelError, OperandError

AS, READELF, GCC, CLANG = shutil.which("as"), shutil.which("readelf"), shutil.which("gcc"), shutil.which("clang")
needs_binutils = pytest.mark.skipif(AS is None or READELF is None, reason="GNU as / readelf are not installed")
needs_gcc = pytest.mark.skipif(GCC is None, reason="gcc is not installed (needed to compile, link and run)")
DROPPED_SECTIONS = {".eh_frame", ".rela.eh_frame"}   # x86gen drops .cfi_* (module doc)

HEAD = ".intel_syntax noprefix\n"

PROGRAMS = {
    # functions calling each other and libc's puts/printf; strings in .rodata; global data in .data and .bss
    "calls": HEAD + """
    .text
    .globl main
    .type main, @function
main:
    push rbx
    lea rdi, [rip+.Lhello]
    call puts@PLT
    call twice
    mov esi, eax
    lea rdi, [rip+fmt]
    xor eax, eax
    call printf
    mov eax, dword ptr [rip+counter]
    add dword ptr [rip+counter], 7
    mov qword ptr [rip+buffer+8], rax
    call helper
    xor eax, eax
    pop rbx
    ret
    .size main, .-main
    .globl twice
    .type twice, @function
twice:
    mov eax, dword ptr [rip+counter]
    add eax, eax
    ret
    .size twice, .-twice
helper:
    lea rax, [rip+helper]
    ret
    .section .rodata
.Lhello: .string "hello from x86gen"
fmt: .asciz "twice: %d\\n"
    .data
    .globl counter
    .type counter, @object
    .size counter, 4
counter: .long 21
    .bss
    .globl buffer
    .p2align 4
buffer: .zero 64
    .section .note.GNU-stack,"",@progbits
""",
    # a jump table in .rodata of .text labels (PIC: label differences; and absolute: .quad)
    "jump_table": HEAD + """
    .text
    .globl pick
pick:
    cmp edi, 3
    ja .Ldefault
    lea rdx, [rip+.Ltable]
    movsxd rax, dword ptr [rdx+rdi*4]
    add rax, rdx
    jmp rax
.Lc0: mov eax, 10
    ret
.Lc1: mov eax, 11
    ret
.Lc2: mov eax, 12
    ret
.Lc3: mov eax, 13
    ret
.Ldefault: mov eax, -1
    ret
    .section .rodata
    .p2align 2
.Ltable:
    .long .Lc0-.Ltable, .Lc1-.Ltable, .Lc2-.Ltable, .Lc3-.Ltable
    .p2align 3
abs_table: .quad .Lc0, .Lc1, pick, pick+4
    .long .Lc3 - .Lc0
    .long .Lc1 - .
""",
    # .set/.equ/=, .comm/.lcomm, weak, hidden, offset immediates, GOTPCREL, cross-section branches
    "symbols": HEAD + """
    .set N, 5
    .equ M, N*2
    K = 3
    .text
    .globl f
    .type f, @function
f:
    mov eax, N+M+K
    mov eax, offset table
    mov rax, offset table+8
    mov eax, OFFSET FLAT:counter
    push offset f
    movabs rax, offset ext_data
    mov rax, qword ptr stdout@GOTPCREL[rip]
    mov eax, dword ptr errno_loc@GOTPCREL[rip]
    call qword ptr fptr@GOTPCREL[rip]
    lea rcx, qword ptr table@GOTPCREL[rip]
    mov dword ptr [rip+big], 1
    mov byte ptr [rip+small], 2
    mov dword ptr [rip+lc], 3
    call wk
    jmp .Lcold
    call g
    jmp g
    ret
    .weak wk
wk: ret
    .globl g
    .hidden g
g:  ret
    .section .text.unlikely,"ax",@progbits
.Lcold:
    call f
    jmp .Lback
    .text
.Lback: ret
    .set alias, table+4
    .data
    .p2align 3
table: .quad 1, 2, alias, ext_data, wku
    .weak wku
    .comm big, 64, 32
    .comm cnt, 3
    .lcomm small, 3
    .lcomm lbuf, 40
    .local lc
    .comm lc, 8, 8
    .globl counter
counter: .long 0
""",
    # sections by .section with flags and types, .pushsection/.popsection, .previous, numeric labels, alignment
    "sections": HEAD + """
    .text
    .p2align 4
start:
1:  dec edi
    jnz 1b
    jmp 2f
    nop
2:  ret
    .section .rodata.str1.1,"aMS",@progbits,1
.LC0: .string "abc"
.LC1: .string "defgh"
    .section .rodata.cst8,"aM",@progbits,8
    .p2align 3
.LC2: .double 1.5
    .text
    lea rdi, [rip+.LC0]
    lea rsi, [rip+.LC1+2]
    movsd xmm0, qword ptr [rip+.LC2]
    .pushsection .data.rel.local,"aw"
    .p2align 3
ptr: .quad .LC1, .LC1+1, start
    .popsection
    ret
    .data
    .byte 1
    .previous
    nop
    .section .init_array,"aw",@init_array
    .p2align 3
    .quad start
    .section .tbss,"awT",@nobits
    .zero 16
    .section .mydata,"aw",@progbits
    .p2align 4, 0
    .short 0x1234, start - .
    .section .bss.big,"aw",@nobits
    .zero 100
    .ident "x86gen test"
""",
    # what gcc and clang write: labels in memory operands with an index (non-PIC jump tables and lookup tables:
    # R_X86_64_32S), gcc's doubled brackets, `sym+8[rip]`, `120[rdi]`, `rep bsf`, broadcasts and masks on [rip+label],
    # .p2align with a max-skip or a 0x90 fill, clang's .addrsig
    "compiler_syntax": HEAD + """
    .text
    .globl f
f:
    mov rax, QWORD PTR ZSTD_fcs_fieldSize[0+rax*8]
    mov eax, DWORD PTR CSWTCH.6[0+rdi*4]
    jmp [QWORD PTR .L1078[0+r11*8]]
    jmp qword ptr [8*rax + .LJTI0_0]
    mov eax, dword ptr tab[rdx+rax*4+8]
    lea rax, tab[rax]
    mov eax, dword ptr ext
    mov eax, [ext+4]
    mov rax, QWORD PTR sym+8[rip]
    mov rax, QWORD PTR 120[rdi]
    call [QWORD PTR [rbx+48]]
    rep bsf rax, rcx
    rep bsr eax, dword ptr [rdi]
    vaddps zmm0, zmm1, DWORD PTR .LC0[rip]{1to16}
    vaddps zmm0{k1}{z}, zmm1, DWORD PTR [rip+.LC0]{1to16}
    vmovups zmm2{k2}, [rip+.LC0]
    vmulpd zmm3{k1}, zmm4, QWORD PTR ext_vec[rip]{1to8}
    cmp ax, -1
    .p2align 4,,10
    ret
    .p2align 4,,3
    nop
    .p2align 4, 0x90
    ret
    .addrsig
    .addrsig_sym f
    .section .rodata
    .p2align 3
.L1078: .quad .Lx, .Ly
.LJTI0_0: .quad .Lx
.LC0: .long 0x3f800000
CSWTCH.6: .long 1, 2, 3
tab: .long 5, 6, 7
    .text
.Lx: ret
.Ly: ret
    .data
    .p2align 4, 0x90
    .byte 1
""",
    # what the C suite showed: a negative displacement before an index (gcc), an `offset` immediate stored through a
    # label operand, clang's .type/.size of .L labels and its relative string tables into a mergeable section
    "clang_style": HEAD + """
    .text
g:
    mov dword ptr merge_tmp[-4+rax*4], ecx
    mov qword ptr [rip + ep], offset .L.str.2
    mov dword ptr [rip + cnt], offset .L.str
    mov qword ptr tab[8*rax], offset .L.str.2+1
    lea rax, [rip + .L.str.2]
    ret
    .section .rodata.str1.1,"aMS",@progbits,1
    .type .L.str,@object
.L.str: .asciz "black"
    .size .L.str, 6
    .type .L.str.2,@object
.L.str.2: .asciz "red"
    .size .L.str.2, 4
    .section .rodata,"a",@progbits
    .p2align 2
.Lreltable.color:
    .long .L.str-.Lreltable.color
    .long .L.str.2-.Lreltable.color
    .bss
    .globl ep
ep: .zero 8
cnt: .zero 4
merge_tmp: .zero 64
tab: .zero 64
""",
}

# programs with `main` that are linked and run (with the output each prints)
RUN = {"calls"}


def _readelf(path: str, *flags: str) -> str:
    return subprocess.run([READELF, "-W", *flags, path], capture_output=True, text=True, check=True).stdout


def _sections(path: str) -> list[tuple]:
    """(name, type, size, entsize, flags, align, target of a RELA) of each section, from readelf -SW."""
    out, names = [], {}
    rows = []
    for line in _readelf(path, "-S").splitlines():
        m = re.match(r"\s*\[\s*(\d+)\]\s+(\S*)\s+(\S+)\s+\S+\s+\S+\s+(\S+)\s+(\S+)\s+(\S*?)\s*(\d+)\s+(\d+)\s+(\d+)$", line)
        if m:
            idx, name, typ, size, es, flg, lk, inf, al = m.groups()
            names[int(idx)] = name
            rows.append((name, typ, size, es, flg, al, int(inf)))
    for name, typ, size, es, flg, al, inf in rows:
        if name in ("", *DROPPED_SECTIONS): continue
        if typ == "SYMTAB": size = "-"   # (its size depends on the symbols compared below)
        if name in (".strtab", ".shstrtab"): size = "-"
        out.append((name, typ, size, es, flg, al, names.get(inf) if typ == "RELA" else ""))
    return out


def _relocations(path: str) -> list[tuple]:
    """(section, offset, type, symbol, addend) of each relocation, from readelf -rW."""
    out, sec = [], None
    for line in _readelf(path, "-r").splitlines():
        m = re.match(r"Relocation section '([^']+)'", line)
        if m: sec = m.group(1); continue
        m = re.match(r"([0-9a-f]{16})\s+[0-9a-f]{16}\s+(\S+)\s+[0-9a-f]{16}\s+(\S+)\s*([+-])\s*([0-9a-f]+)$", line)
        if m and sec not in DROPPED_SECTIONS:
            off, typ, sym, sign, add = m.groups()
            out.append((sec, int(off, 16), typ, sym, int(add, 16) * (-1 if sign == "-" else 1)))
    return sorted(out)


def _symbols(path: str, used_sections: set[str] | None = None) -> list[tuple]:
    """(name, binding, type, section, value, size, visibility) of each symbol but the null one and STT_FILE ones; with
    ``used_sections``, section symbols only of those sections."""
    secnames = {}
    for line in _readelf(path, "-S").splitlines():
        m = re.match(r"\s*\[\s*(\d+)\]\s+(\S+)", line)
        if m: secnames[m.group(1)] = m.group(2)
    out = []
    for line in _readelf(path, "-s").splitlines():
        parts = line.split()
        if len(parts) < 7 or not parts[0].rstrip(":").isdigit() or parts[0] == "0:": continue
        _n, value, size, typ, bind, vis, ndx, *name = parts
        name = name[0] if name else ""
        if typ == "FILE": continue
        sec = secnames.get(ndx, ndx)
        if typ == "SECTION":
            if used_sections is not None and sec not in used_sections: continue
            name = sec
        out.append((name, bind, typ, sec, int(value, 16), int(size), vis))
    return sorted(out)


def _gnu_object(src: str, tmp_path, name: str) -> str:
    s, o = tmp_path / f"{name}.s", tmp_path / f"{name}.gas.o"
    # clang's .addrsig/.addrsig_sym (which GNU as 2.40 does not know; llvm-mc writes them to .llvm_addrsig, a hint for
    # the linker's identical code folding, which x86gen drops): left out of GNU as's input
    src = re.sub(r"(?m)^\s*\.addrsig.*$", "", src)
    s.write_text(src)
    subprocess.run([AS, "--64", "-o", str(o), str(s)], check=True, capture_output=True)
    return str(o)


def _x86gen_object(src: str, tmp_path, name: str) -> str:
    o = tmp_path / f"{name}.x86gen.o"
    o.write_bytes(x86gen.assemble_object(src))
    return str(o)


def _compare(gas: str, ours: str) -> None:
    """The two objects hold the same sections, bytes, symbols and relocations (but for the listed differences)."""
    assert _sections(ours) == _sections(gas)
    relocs = _relocations(gas)
    assert _relocations(ours) == relocs
    used = {r[3] for r in relocs}
    assert _symbols(ours) == _symbols(gas, used)
    with open(gas, "rb") as fh: g = elf_sections(fh.read())[0]
    with open(ours, "rb") as fh: x = elf_sections(fh.read())[0]
    for name, data in g.items():
        if name in DROPPED_SECTIONS or name in (".symtab", ".strtab", ".shstrtab") or name.startswith(".rela"): continue
        assert x.get(name) == data, name
    # readelf reads every part of it without a complaint
    r = subprocess.run([READELF, "-aW", ours], capture_output=True, text=True)
    assert r.returncode == 0 and not r.stderr, r.stderr


@needs_binutils
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_object_equals_gnu_as(name, tmp_path):
    src = PROGRAMS[name]
    _compare(_gnu_object(src, tmp_path, name), _x86gen_object(src, tmp_path, name))


def _link_and_run(obj: str, exe: str) -> str:
    subprocess.run([GCC, "-o", exe, obj], check=True, capture_output=True)
    return subprocess.run([exe], capture_output=True, text=True, check=True, timeout=20).stdout


@needs_binutils
@needs_gcc
@pytest.mark.parametrize("name", sorted(RUN))
def test_linked_program_runs_as_gnu_as_built(name, tmp_path):
    src = PROGRAMS[name]
    want = _link_and_run(_gnu_object(src, tmp_path, name), str(tmp_path / "gas.exe"))
    got = _link_and_run(_x86gen_object(src, tmp_path, name), str(tmp_path / "x86gen.exe"))
    assert got == want and "hello from x86gen" in got


C_PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int counter = 3;
static int table[16];
const char *names[] = {"zero", "one", "two", "three", "four", "five"};
long big[100];
static int sq(int x) { return x * x; }
__attribute__((noinline)) int classify(int c) {
  switch (c) { case 0: return 10; case 1: return 21; case 2: return 32; case 3: return 43;
               case 4: return 54; case 5: return 65; case 7: return 7; default: return -1; }
}
__attribute__((noinline)) double avg(const int *v, int n) {
  double s = 0; for (int i = 0; i < n; i++) s += v[i]; return n ? s / n : 0.0; }
static int cmp(const void *a, const void *b) { return *(const int *)b - *(const int *)a; }
int main(int argc, char **argv) {
  for (int i = 0; i < 16; i++) table[i] = sq(i) + counter;
  for (int i = 0; i < 8; i++) printf("%d %s %d\n", i, i < 6 ? names[i] : "?", classify(i));
  big[5] = strlen(argv[0]) > 0;
  char buf[64]; snprintf(buf, sizeof buf, "%.3f", avg(table, 16));
  puts(buf);
  qsort(table, 16, sizeof(int), cmp);
  printf("%d %d %ld %d\n", table[0], table[15], big[5], counter);
  return 0;
}
"""


@needs_binutils
@needs_gcc
@pytest.mark.parametrize("flags", [["-O2"], ["-O2", "-fPIC"], ["-O0"]], ids=["O2", "O2-fPIC", "O0"])
def test_gcc_output_assembles_links_and_runs(flags, tmp_path):
    c = tmp_path / "prog.c"
    c.write_text(C_PROGRAM)
    s = tmp_path / "prog.s"
    subprocess.run([GCC, *flags, "-S", "-masm=intel", "-o", str(s), str(c)], check=True, capture_output=True)
    src = s.read_text()
    gas, ours = _gnu_object(src, tmp_path, "prog"), _x86gen_object(src, tmp_path, "prog")
    _compare(gas, ours)
    assert _link_and_run(ours, str(tmp_path / "x.exe")) == _link_and_run(gas, str(tmp_path / "g.exe"))


@needs_binutils
def test_cli_writes_an_object(tmp_path):
    src = PROGRAMS["calls"]
    f = tmp_path / "calls.s"
    f.write_text(src)
    out = tmp_path / "calls.o"
    r = subprocess.run([sys.executable, "-m", "x86gen", "asm", "-f", str(f), "-o", str(out)], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": os.path.dirname(x86gen.__path__[0])})
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == x86gen.assemble_object(src)
    _compare(_gnu_object(src, tmp_path, "calls"), str(out))


FLAT_COMPILER_SYNTAX = HEAD + """nop
jmp [QWORD PTR .L5[0+r11*8]]
jmp qword ptr [8*rax + .L5]
mov eax, dword ptr .L5[rdx+rax*4+8]
vaddps zmm0{k1}{z}, zmm1, DWORD PTR .L5[rip]{1to16}
call [QWORD PTR [rbx+48]]
.p2align 4, 0x90
.L5: .quad 0
"""
# GNU as 2.40, linked by GNU ld at address 0 (ld -Ttext=0; objcopy -O binary -j .text): the labels' absolute addresses
# in the disp32s, the 11-byte NOP of the alignment
FLAT_COMPILER_SYNTAX_GNU = ("9042ff24dd30000000ff24c5300000008b84823800000062f174d958050f000000ff533066662e0f1f84000000"
                            "0000900000000000000000")


def test_flat_assemble_compiler_syntax_as_gnu_as_and_ld_at_address_0():
    assert x86gen.assemble(FLAT_COMPILER_SYNTAX).hex() == FLAT_COMPILER_SYNTAX_GNU
    with pytest.raises(LabelError, match=r"line 1: .*undefined label 'tab'.*assemble_object"):
        x86gen.assemble("mov eax, dword ptr tab[0+rax*4]\nret")


def test_flat_assemble_unchanged_and_names_external_symbols():
    assert x86gen.assemble("xor eax, eax\nret") == bytes.fromhex("31c0c3")
    with pytest.raises(LabelError, match=r"undefined label 'puts'.*assemble_object"):
        x86gen.assemble("call puts\nret")


@pytest.mark.parametrize("src, err, msg", [
    ("call foo@GOTOFF", OperandError, r"line 2: .*@GOTOFF is not supported"),
    (".bss\n.byte 1", EncodeError, r"\.bss .*non-zero"),
    ('.section .g,"aG",@progbits,grp', AsmSyntaxError, r"line 2: .*section flag 'G'"),
    ("jmp .Lnowhere", LabelError, r"line 2: 'jmp \.Lnowhere': undefined label '\.Lnowhere'"),
    ("a: ret\n.data\na: .byte 1", AsmSyntaxError, r"line 4: .*symbol 'a' is already defined"),
    (".quad x@PLT", OperandError, r"line 2: .*@PLT32 in data is not supported"),
    (".lcomm x, 4, 4", AsmSyntaxError, r"line 2: .*takes no alignment"),
    (".data\n.long x - y", OperandError, r"line 3: .*cannot be written as one relocation"),
])
def test_object_errors(src, err, msg):
    with pytest.raises(err, match=msg):
        x86gen.assemble_object(HEAD + src)


def test_object_header_and_tables():
    """An empty program: the sections GNU as always writes (.text, .data, .bss) and the tables; the ELF header's
    fields (ELFCLASS64, little-endian, ET_REL, EM_X86_64)."""
    obj = x86gen.assemble_object("")
    assert obj[:4] == b"\x7fELF" and obj[4] == 2 and obj[5] == 1
    assert int.from_bytes(obj[16:18], "little") == 1 and int.from_bytes(obj[18:20], "little") == 62
    assert sorted(elf_sections(obj)[0]) == [".bss", ".data", ".text"]


# Relaxation as GNU as 2.40 relaxes: 60 `je` that grow to rel32 (240 bytes) before `jbe .L1; .p2align 4`: GNU as takes
# the target as moved by the growth rounded down to the alignment (write.c relax_frag), so the jbe stays short, 76 3e
# (GNU as 2.40's bytes at 0x168), then 6 bytes of NOP
RELAX_PAST_ALIGN = HEAD + "je .Lfar\n" * 60 + "jbe .L1\n.p2align 4\n.zero 56\n.L1: nop\n.zero 300\n.Lfar: ret\n"


def test_branch_past_an_alignment_stays_short_as_gnu_as():
    code = x86gen.assemble(RELAX_PAST_ALIGN)
    assert code[0x168:0x16a].hex() == "763e"
    assert code[0x16a:0x170].hex() == "660f1f440000"
    assert code[:6].hex() == "0f84" + (len(code) - 1 - 6).to_bytes(4, "little").hex()


@needs_binutils
@pytest.mark.parametrize("seed", range(3))
def test_relaxation_with_alignments_equals_gnu_as(seed, tmp_path):
    """Random programs of jmp/jcc to labels ahead and behind, .p2align (with and without a max-skip) and .zero: x86gen's
    flat bytes equal GNU as's .text."""
    import random
    rnd = random.Random(seed)
    lines, defined = [], set()
    for _ in range(400):
        r = rnd.random()
        if r < 0.35: lines.append(f"{rnd.choice(['jmp', 'je', 'jne', 'jbe', 'jg'])} .L{rnd.randrange(12)}")
        elif r < 0.45: lines.append(f".p2align {rnd.choice([2, 3, 4, 5])}" + rnd.choice(["", ",,10", ",,3", ",,7"]))
        elif r < 0.55:
            n = rnd.randrange(12)
            if n not in defined: lines.append(f".L{n}:"); defined.add(n)
        elif r < 0.75: lines.append(f".zero {rnd.randint(1, 160)}")
        else: lines.append(rnd.choice(["nop", "mov eax, 1", "add rax, rbx", "ret"]))
    lines += [f".L{n}:" for n in range(12) if n not in defined]
    src = HEAD + "\n".join(lines) + "\n"
    with open(_gnu_object(src, tmp_path, "relax"), "rb") as fh: gnu = elf_sections(fh.read())[0][".text"]
    assert x86gen.assemble(src) == gnu


# ---- a C program of some size (tests/data/elf_suite.c: a stack-machine interpreter, hashes, sorts, an expression
# evaluator, compression, bit tricks, vector loops) compiled by gcc and clang at test time

SUITE_C = os.path.join(os.path.dirname(__file__), "data", "elf_suite.c")
SUITE_VARIANTS = {   # id -> (compiler, flags, link flags)
    "gcc-O2-nopic": (GCC, ["-O2", "-fno-pic"], ["-no-pie"]),   # absolute tables: tab[0+rax*8], R_X86_64_32S
    "gcc-O2-fPIC": (GCC, ["-O2", "-fPIC"], []),
    "clang-O2": (CLANG, ["-O2"], []),
    "clang-O2-nopic": (CLANG, ["-O2", "-fno-pic"], ["-no-pie"]),   # [8*rax + .LJTI0_0]
}
SUITE_BYTES: dict[str, tuple[int, int, int, int]] = {}   # id -> (identical section bytes, section bytes, identical file bytes, file size)


def _suite_report() -> None:
    try:
        from iced_oracle import REPORT
    except ImportError:
        return
    sec_same = sum(v[0] for v in SUITE_BYTES.values()); sec_all = sum(v[1] for v in SUITE_BYTES.values())
    file_same = sum(v[2] for v in SUITE_BYTES.values()); file_all = sum(v[3] for v in SUITE_BYTES.values())
    REPORT["elf suite"] = (f"elf_suite.c through x86gen ({', '.join(sorted(SUITE_BYTES))}): section bytes identical to GNU as's "
                           f"{sec_same}/{sec_all} ({100 * sec_same / max(sec_all, 1):.2f}%), whole objects {file_same}/{file_all}"
                           f" bytes at the same offsets ({100 * file_same / max(file_all, 1):.1f}%: x86gen writes no .eh_frame)")


@needs_binutils
@pytest.mark.parametrize("variant", sorted(SUITE_VARIANTS))
def test_c_suite_compiled_assembled_linked_and_run(variant, tmp_path):
    """tests/data/elf_suite.c compiled with ``-S -masm=intel``, assembled by x86gen and GNU as: the objects compare equal
    (`_compare`), and the programs linked by gcc print the same."""
    cc, flags, link = SUITE_VARIANTS[variant]
    if cc is None or GCC is None: pytest.skip(f"{variant.split('-')[0]} (and gcc to link) is needed to compile the C suite")
    s = tmp_path / "suite.s"
    subprocess.run([cc, *flags, "-S", "-masm=intel", "-o", str(s), SUITE_C], check=True, capture_output=True)
    src = s.read_text()
    gas, ours = _gnu_object(src, tmp_path, "suite"), _x86gen_object(src, tmp_path, "suite")
    _compare(gas, ours)
    with open(gas, "rb") as fh: gb = fh.read()
    with open(ours, "rb") as fh: xb = fh.read()
    g, x = elf_sections(gb)[0], elf_sections(xb)[0]
    keep = [n for n in g if n not in DROPPED_SECTIONS and n not in (".symtab", ".strtab", ".shstrtab")
            and not n.startswith((".rela", ".bss", ".tbss"))]   # (the bytes of the file's sections: not @nobits)
    same = sum(sum(a == b for a, b in zip(g[n], x.get(n, b""))) for n in keep)
    SUITE_BYTES[variant] = (same, sum(len(g[n]) for n in keep), sum(a == b for a, b in zip(gb, xb)), len(gb))
    _suite_report()
    run = []
    for obj, exe in ((gas, "g.exe"), (ours, "x.exe")):
        subprocess.run([GCC, *link, "-o", str(tmp_path / exe), obj], check=True, capture_output=True)
        run.append(subprocess.run([str(tmp_path / exe)], capture_output=True, text=True, check=True, timeout=20).stdout)
    assert run[1] == run[0] and "vm: 55" in run[0] and "lz 537 -> " in run[0]
