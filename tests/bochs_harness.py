"""Run a 64-bit payload on Bochs's emulated CPU (headless), for code this machine's CPU cannot run (AVX-512).

`run(payload)` builds a raw hard-disk image: a loader written for GNU as (`as --32`, linked to a flat binary at 0x7c00),
then ``payload`` at `PAYLOAD` (0x10000). The BIOS boots the loader's first sector, which reads the rest of the loader
and the payload with int 13h AH=42h (EDD extended read), enables A20, enters protected mode, builds identity-mapped
page tables for the first GiB (2 MiB pages), sets CR4.PAE/OSFXSR/OSXMMEXCPT/OSXSAVE, EFER.LME and CR0.PG (SDM Vol.3
9.8.5 "Initializing IA-32e Mode"), XCR0 = 0xE7 (x87, SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM: SDM Vol.1 13.3), prints
CPUID.(EAX=7,ECX=0).EBX and XCR0, calls the payload (System V: rsp 16-byte aligned before the call, interrupts off so
the red zone is safe), which returns rax = the address and rdx = the length of its output, prints that memory in hex
and stops Bochs through its shutdown port (0x8900). All output goes through Bochs's port 0xE9 hack to its stdout.
An exception in the guest goes to a handler that prints its vector, error code, rip and cr2 and stops Bochs; `run`
raises `BochsError` with them (and with the log's last lines when Bochs stops otherwise: a triple fault makes it
panic and exit, with ``reset_on_triple_fault=0``, instead of booting again).

Debian's bochs 2.7 has no ``nogui`` display library; its ``rfb`` one with ``timeout=0`` does not wait for a VNC client.
Its build includes the debugger, which stops before the first instruction, so a command file says ``continue``.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

PAYLOAD = 0x10000               # where the payload is loaded (below the loader's stack at 0x80000)
MAX_PAYLOAD = 0x60000           # PAYLOAD + this stays below the stack
CPU_MODEL = "tigerlake"         # a Bochs CPU model with AVX-512 (F, CD, BW, DQ, VL, ...)
BIOS = Path("/usr/share/bochs/BIOS-bochs-latest")
VGABIOS = Path("/usr/share/bochs/VGABIOS-lgpl-latest")
STUB_SECTORS = 4                # the loader, padded to 2 KiB
_CYLINDER = 16 * 63 * 512       # heads * sectors per track * sector size: Bochs wants whole cylinders


class BochsError(RuntimeError):
    """Bochs did not run the payload to its end (a fault, a timeout, or a setup problem)."""


def unavailable() -> str | None:
    """Why `run` cannot work here (None when it can): bochs, its BIOS images, GNU as and ld are needed."""
    for tool in ("bochs", "as", "ld"):
        if shutil.which(tool) is None: return f"{tool!r} is not installed (apt-get install bochs bochsbios vgabios)"
    for rom in (BIOS, VGABIOS):
        if not rom.exists(): return f"{rom} is missing (apt-get install bochsbios vgabios)"
    return None


@dataclass(frozen=True)
class Result:
    cpuid7_ebx: int             # CPUID.(EAX=7,ECX=0).EBX in the guest; bit 16 is AVX512F
    xcr0: int                   # XGETBV(0) after the loader's XSETBV
    out: bytes                  # the payload's output memory
    seconds: float


LOADER = r"""
# Boot sector + loader: real mode -> protected mode -> long mode, AVX-512 state on, call the payload at PAYLOAD.
        .set PAYLOAD, 0x10000
        .code16
        .globl _start
_start:
        cli
        xor %ax, %ax
        mov %ax, %ds
        mov %ax, %es
        mov %ax, %ss
        mov $0x7c00, %sp
        ljmp $0, $1f
1:      mov %dl, boot_drive
        mov $'B', %al
        out %al, $0xe9
        # the rest of the stub: LBA 1.. to 0x7e00
        movw $(STUB_SECTORS - 1), dap_count
        movw $0x7e00, dap_off
        movw $0, dap_seg
        movl $1, dap_lba
        call read
        # the payload: PAYLOAD_SECTORS from LBA STUB_SECTORS to PAYLOAD, 64 sectors (32 KiB) at a time
        movl $STUB_SECTORS, dap_lba
        movw $0, dap_off
        movw $(PAYLOAD >> 4), dap_seg
        mov $PAYLOAD_SECTORS, %cx
2:      test %cx, %cx
        jz 3f
        mov $64, %bx
        cmp %bx, %cx
        jae 4f
        mov %cx, %bx
4:      mov %bx, dap_count
        push %cx
        push %bx
        call read
        pop %bx
        pop %cx
        sub %bx, %cx
        movzwl %bx, %eax
        addl %eax, dap_lba
        shl $5, %bx               # 512-byte sectors -> 16-byte paragraphs
        add %bx, dap_seg
        jmp 2b
3:      jmp stage2

read:   mov $dap, %si
        mov $0x42, %ah            # int 13h extended read (EDD)
        mov boot_drive, %dl
        int $0x13
        jc fail16
        ret
fail16: mov $'!', %al
        out %al, $0xe9
        cli
        hlt

boot_drive: .byte 0
        .p2align 2
dap:    .byte 16, 0
dap_count: .word 0
dap_off: .word 0
dap_seg: .word 0
dap_lba: .quad 0

        .org 510
        .byte 0x55, 0xaa

stage2:
        in $0x92, %al             # fast A20
        or $2, %al
        out %al, $0x92
        lgdtl gdt_ptr
        mov %cr0, %eax
        or $1, %eax
        mov %eax, %cr0
        ljmpl $0x18, $pm32

        .code32
pm32:   mov $0x10, %ax
        mov %ax, %ds
        mov %ax, %es
        mov %ax, %ss
        # page tables at 0x1000 (PML4), 0x2000 (PDPT), 0x3000 (PD: 512 2-MiB pages, the first GiB identity-mapped)
        mov $0x1000, %edi
        xor %eax, %eax
        mov $(3 * 4096 / 4), %ecx
        rep stosl
        movl $0x2003, 0x1000
        movl $0x3003, 0x2000
        mov $0x3000, %edi
        mov $0x83, %eax           # present | writable | PS (2 MiB)
        mov $512, %ecx
5:      mov %eax, (%edi)
        add $0x200000, %eax
        add $8, %edi
        loop 5b
        mov %cr4, %eax
        or $((1 << 5) | (1 << 9) | (1 << 10) | (1 << 18)), %eax   # PAE, OSFXSR, OSXMMEXCPT, OSXSAVE
        mov %eax, %cr4
        mov $0x1000, %eax
        mov %eax, %cr3
        mov $0xc0000080, %ecx     # EFER.LME
        rdmsr
        or $(1 << 8), %eax
        wrmsr
        mov %cr0, %eax
        and $~(1 << 2), %eax      # EM off
        or $((1 << 31) | (1 << 1) | (1 << 5)), %eax   # PG, MP, NE
        mov %eax, %cr0
        ljmp $0x08, $lm64

        .code64
lm64:   mov $0x10, %ax
        mov %ax, %ds
        mov %ax, %es
        mov %ax, %ss
        mov $0x80000, %rsp
        # IDT at 0x4000: vectors 0-31 (exceptions) go to exc_N, which print the vector, error code and rip
        mov $0x4000, %edi
        lea exc_table(%rip), %rsi
        mov $32, %ecx
1:      movzwl (%rsi), %eax       # the handlers are below 64 KiB
        mov %ax, (%rdi)           # offset 15:0
        movw $0x08, 2(%rdi)       # the 64-bit code segment
        movw $0x8e00, 4(%rdi)     # present, DPL 0, 64-bit interrupt gate (SDM Vol.3 6.14.1)
        movl $0, 6(%rdi)          # offset 31:16 and 63:32 (zero), reserved
        movl $0, 8(%rdi)
        movl $0, 12(%rdi)
        add $2, %rsi
        add $16, %rdi
        loop 1b
        lidt idt_ptr(%rip)
        xor %ecx, %ecx
        mov $0xe7, %eax           # XCR0: x87 | SSE | AVX | opmask | ZMM_Hi256 | Hi16_ZMM
        xor %edx, %edx
        xsetbv
        lea msg_cpuid(%rip), %rsi
        call puts
        mov $7, %eax
        xor %ecx, %ecx
        cpuid
        mov %ebx, %edi
        call hex32
        lea msg_xcr0(%rip), %rsi
        call puts
        xor %ecx, %ecx
        xgetbv
        mov %eax, %edi
        call hex32
        mov $'\n', %al
        out %al, $0xe9
        mov $PAYLOAD, %rax
        call *%rax                # returns rax = output address, rdx = its length in bytes
        mov %rax, %r12
        mov %rdx, %rbx
        lea msg_out(%rip), %rsi
        call puts
        mov %r12, %rsi
6:      test %rbx, %rbx
        jz 7f
        movzbl (%rsi), %edi
        call hex8
        inc %rsi
        dec %rbx
        jmp 6b
7:      lea msg_end(%rip), %rsi
        call puts
shutdown:
        lea msg_shutdown(%rip), %rsi
        mov $0x8900, %dx
8:      lodsb
        test %al, %al
        jz 9f
        out %al, %dx
        jmp 8b
9:      cli
        hlt
        jmp 9b

        # exception handlers: the CPU pushes an error code for vectors 8, 10-14, 17, 21, 29 and 30 (SDM Vol.3 6.13);
        # the others push 0 in its place, so that exc_common finds vector, error code, rip on the stack
        .irp v, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
exc_\v:
        .if !(\v == 8 || (\v >= 10 && \v <= 14) || \v == 17 || \v == 21 || \v == 29 || \v == 30)
        push $0
        .endif
        push $\v
        jmp exc_common
        .endr
exc_common:
        lea msg_exc(%rip), %rsi
        call puts
        mov (%rsp), %edi
        call hex8
        lea msg_err(%rip), %rsi
        call puts
        mov 8(%rsp), %edi
        call hex32
        lea msg_rip(%rip), %rsi
        call puts
        mov 20(%rsp), %edi
        call hex32
        mov 16(%rsp), %edi
        call hex32
        lea msg_cr2(%rip), %rsi
        call puts
        mov %cr2, %rdi
        shr $32, %rdi
        call hex32
        mov %cr2, %rdi
        call hex32
        mov $'\n', %al
        out %al, $0xe9
        jmp shutdown
exc_table:
        .irp v, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
        .word exc_\v
        .endr

puts:   lodsb                     # rsi: NUL-terminated string -> port 0xe9
        test %al, %al
        jz 1f
        out %al, $0xe9
        jmp puts
1:      ret
hex32:  push %rcx                 # edi -> 8 hex digits
        mov $8, %ecx
1:      rol $4, %edi
        mov %edi, %eax
        call nibble
        loop 1b
        pop %rcx
        ret
hex8:   push %rcx                 # dil -> 2 hex digits
        shl $24, %edi
        mov $2, %ecx
        jmp 1b
nibble: and $15, %eax
        cmp $10, %al
        jb 1f
        add $('a' - '0' - 10), %al
1:      add $'0', %al
        out %al, $0xe9
        ret

msg_cpuid: .asciz "\ncpuid7.ebx="
msg_xcr0: .asciz " xcr0="
msg_out: .asciz "out="
msg_end: .asciz "\nend\n"
msg_shutdown: .asciz "Shutdown"
msg_exc: .asciz "\nexception="
msg_err: .asciz " error="
msg_rip: .asciz " rip="
msg_cr2: .asciz " cr2="

        .p2align 3
gdt:    .quad 0
        .quad 0x00209a0000000000  # 0x08: 64-bit code
        .quad 0x00cf92000000ffff  # 0x10: data
        .quad 0x00cf9a000000ffff  # 0x18: 32-bit code
gdt_ptr: .word gdt_ptr - gdt - 1
        .long gdt
idt_ptr: .word 32 * 16 - 1
        .quad 0x4000
"""


_EXCEPTION = re.compile(r"exception=([0-9a-f]{2}) error=([0-9a-f]{8}) rip=([0-9a-f]{16}) cr2=([0-9a-f]{16})")
_VECTORS = {0: "#DE", 1: "#DB", 2: "NMI", 3: "#BP", 4: "#OF", 5: "#BR", 6: "#UD", 7: "#NM", 8: "#DF", 10: "#TS", 11: "#NP",
            12: "#SS", 13: "#GP", 14: "#PF", 16: "#MF", 17: "#AC", 18: "#MC", 19: "#XM", 20: "#VE", 21: "#CP"}
_DONE = re.compile(r"cpuid7\.ebx=([0-9a-f]{8}) xcr0=([0-9a-f]{8})\nout=([0-9a-f]*)\nend\n")


def _bochsrc(disk: Path, cylinders: int, log: Path) -> str:
    return f"""\
megs: 64
romimage: file={BIOS}
vgaromimage: file={VGABIOS}
display_library: rfb, options="timeout=0"
cpu: model={CPU_MODEL}, count=1, ips=50000000, reset_on_triple_fault=0
ata0: enabled=1, ioaddr1=0x1f0, ioaddr2=0x3f0, irq=14
ata0-master: type=disk, path={disk}, mode=flat, cylinders={cylinders}, heads=16, spt=63
boot: disk
port_e9_hack: enabled=1
speaker: enabled=0
sound: waveoutdrv=dummy, waveindrv=dummy, midioutdrv=dummy
clock: sync=none
log: {log}
panic: action=fatal
error: action=report
info: action=report
debug: action=ignore
"""


def run(payload: bytes, timeout: float = 60.0) -> Result:
    """Boot Bochs with ``payload`` (64-bit code and data, assembled for address `PAYLOAD`) and return its output."""
    if len(payload) > MAX_PAYLOAD: raise BochsError(f"payload of {len(payload):#x} bytes, more than {MAX_PAYLOAD:#x}")
    with tempfile.TemporaryDirectory(prefix="x86gen-bochs-") as tmp:
        d = Path(tmp)
        sectors = max(1, -(-len(payload) // 512))
        (d / "loader.S").write_text(LOADER)
        subprocess.run(["as", "--32", "--defsym", f"STUB_SECTORS={STUB_SECTORS}", "--defsym", f"PAYLOAD_SECTORS={sectors}",
                        "-o", str(d / "loader.o"), str(d / "loader.S")], check=True, capture_output=True)
        subprocess.run(["ld", "-m", "elf_i386", "--oformat", "binary", "-Ttext", "0x7c00", "-o", str(d / "loader.bin"),
                        str(d / "loader.o")], check=True, capture_output=True)
        loader = (d / "loader.bin").read_bytes()
        if len(loader) > STUB_SECTORS * 512: raise BochsError(f"the loader is {len(loader)} bytes, more than {STUB_SECTORS} sectors")
        image = loader.ljust(STUB_SECTORS * 512, b"\0") + payload
        image = image.ljust(-(-len(image) // _CYLINDER) * _CYLINDER, b"\0")
        (d / "disk.img").write_bytes(image)
        (d / "bochsrc").write_text(_bochsrc(d / "disk.img", len(image) // _CYLINDER, d / "bochs.log"))
        cmd = ["bochs", "-q", "-f", str(d / "bochsrc")]
        helptext = subprocess.run(["bochs", "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  errors="replace").stdout
        if "-rc filename" in helptext:   # built with the debugger, which waits for a command before the first instruction
            (d / "debugger.rc").write_text("continue\nquit\n")
            cmd += ["-rc", str(d / "debugger.rc")]
        start = time.monotonic()
        try:
            proc = subprocess.run(cmd, cwd=d, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
                                  text=True, errors="replace")
            stdout = proc.stdout
        except subprocess.TimeoutExpired as e:
            stdout = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            stdout += f"\n[timed out after {timeout} s]"
        seconds = time.monotonic() - start
        m = _DONE.search(stdout)
        exc = _EXCEPTION.search(stdout)
        if exc is not None:
            vec = int(exc[1], 16)
            raise BochsError(f"exception {vec} ({_VECTORS.get(vec, 'reserved')}) in the guest, error code {exc[2]}, "
                             f"rip {exc[3]}, cr2 {exc[4]} (the payload is at {PAYLOAD:#x})")
        if m is None or stdout.count("cpuid7.ebx=") != 1:
            log = (d / "bochs.log").read_text(errors="replace") if (d / "bochs.log").exists() else ""
            lines = [ln for ln in log.splitlines() if "i[" not in ln[:20]][-15:]   # panics, errors, the last exception
            raise BochsError("Bochs did not run the payload to its end.\nstdout (last 2000 chars):\n"
                             + stdout[-2000:] + "\nlog (not info):\n" + "\n".join(lines))
        return Result(int(m[1], 16), int(m[2], 16), bytes.fromhex(m[3]), seconds)


if __name__ == "__main__":   # a smoke run: a payload returning 8 bytes of itself
    import struct
    code = b"\xb8" + struct.pack("<I", PAYLOAD + 16) + b"\xba\x08\x00\x00\x00\xc3"   # mov eax, out; mov edx, 8; ret
    r = run(code.ljust(16, b"\x90") + bytes(range(8)))
    print(f"cpuid7.ebx={r.cpuid7_ebx:#010x} AVX512F={bool(r.cpuid7_ebx >> 16 & 1)} xcr0={r.xcr0:#x} out={r.out.hex()} "
          f"in {r.seconds:.2f} s")
