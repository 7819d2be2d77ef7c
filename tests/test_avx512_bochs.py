"""tests/test_jit_avx512.py's AVX-512 programs run on Bochs's emulated AVX-512 CPU, for machines without AVX-512.

One Bochs boot (tests/bochs_harness.py) runs every case: the JIT tests' n (NS: every tail length, and n up to 1003)
for each of the three kernels, which are the same x86gen-built programs (imported, not copied), called in turn by a
driver also built with x86gen's Assembler (System V arguments; the data at fixed addresses in the payload); the
output memory comes back over port 0xE9. The results are compared bit for bit with the same Python references as
the JIT tests, guard lanes included (masked stores must leave them alone; masked-off loads of the NaN guards or of
the gather's out-of-range indices must not happen: index 1 << 30 is 4 GiB past the table, which the guest does not
map, so a load there is a page fault, which stops the run). Skips, saying why, without bochs and its BIOS images
(Debian: bochs, bochsbios, vgabios).
"""
from __future__ import annotations

import array
import random
import struct

import bochs_harness as bochs
import pytest
from test_jit_avx512 import NS, build_gather512, build_saxpy512, build_sum512, f32, saxpy_reference, sum_reference

from x86gen import Assembler, dword, qword
from x86gen.registers import eax, r11, rax, rbx, rcx, rdi, rdx, rsi, xmm0

_REASON = bochs.unavailable()
pytestmark = [pytest.mark.skipif(_REASON is not None, reason=f"Bochs cannot run here: {_REASON}"),
              pytest.mark.xdist_group("bochs")]

ALPHA = 1.75
SUM_SENTINEL = b"\xef\xbe\xad\xde"   # in each sum's result slot until the driver stores the result there


class Layout:
    """Bytes at addresses from `bochs.PAYLOAD` on: code and inputs first, then the outputs, dumped in one piece."""

    def __init__(self, driver_room: int = 0x4000):
        self.driver_room = driver_room
        self.image = bytearray(driver_room)          # the driver goes first, at PAYLOAD (the loader calls it there)
        self.out = bytearray()
        self.out_at = 0

    def place(self, data: bytes, align: int = 64) -> int:
        self.image += bytes(-len(self.image) % align)
        self.image += data
        return bochs.PAYLOAD + len(self.image) - len(data)

    def place_out(self, data: bytes) -> int:
        """Output memory (its initial bytes included), placed after everything `place` put (see `seal`)."""
        self.out += bytes(-len(self.out) % 64) + data
        return len(self.out) - len(data)     # an offset, made an address by `out_addr` once the inputs are all placed

    def seal(self) -> int:
        """The address of the output memory: after the inputs, 64-byte aligned."""
        self.image += bytes(-len(self.image) % 64)
        self.out_at = bochs.PAYLOAD + len(self.image)
        return self.out_at


def _floats(values) -> bytes:
    return array.array("f", values).tobytes()


def _build_cases():
    """The payload and, per case, (name, n, output offset, length, expected bytes)."""
    lay = Layout()
    kernels = {name: lay.place(build().assemble()) for name, build in
               (("saxpy", build_saxpy512), ("sum", build_sum512), ("gather", build_gather512))}
    rnd = random.Random(2000)
    table = [f32(rnd.uniform(-1e6, 1e6)) for _ in range(997)]
    table_at = lay.place(_floats(table))
    calls, expect = [], []
    for n in NS:
        rnd = random.Random(n)
        x = [rnd.randint(-4096, 4096) / 64 for _ in range(n)] + [1e30] * 16   # guard lanes after n
        y = [rnd.randint(-4096, 4096) / 64 for _ in range(n)] + [7.0] * 16
        y_off = lay.place_out(_floats(y))
        calls.append(("saxpy", n, lay.place(_floats(x)), y_off))
        expect.append(("saxpy", n, y_off, _floats(saxpy_reference(ALPHA, x[:n], y[:n]) + [7.0] * 16)))

        rnd = random.Random(1000 + n)
        xs = [f32(rnd.uniform(-100, 100)) for _ in range(n)] + [float("nan")] * 16   # NaN guards: must not be read
        s_off = lay.place_out(SUM_SENTINEL)
        calls.append(("sum", n, lay.place(_floats(xs)), s_off))
        expect.append(("sum", n, s_off, struct.pack("<f", sum_reference(xs[:n]))))

        rnd = random.Random(2000 + n)
        idx = [rnd.randrange(len(table)) for _ in range(n)] + [1 << 30] * 16   # guards: would fault if read
        o_off = lay.place_out(_floats([0.0] * n + [-3.0] * 16))
        calls.append(("gather", n, lay.place(array.array("i", idx).tobytes()), o_off))
        expect.append(("gather", n, o_off, _floats([table[i] for i in idx[:n]] + [-3.0] * 16)))
    out_at = lay.seal()

    a = Assembler(base=bochs.PAYLOAD)
    a.push(rbx)                                   # rsp 16-byte aligned at each call below (System V)
    for name, n, in_at, out_off in calls:
        a.mov(rdi, n)
        if name == "saxpy":                       # saxpy(n, alpha, x, y)
            a.mov(eax, struct.unpack("<I", struct.pack("<f", ALPHA))[0])
            a.vmovd(xmm0, eax)
            a.mov(rsi, in_at)
            a.mov(rdx, out_at + out_off)
        elif name == "sum":                       # sum(n, x) -> xmm0
            a.mov(rsi, in_at)
        else:                                     # gather(n, table, idx, out)
            a.mov(rsi, table_at)
            a.mov(rdx, in_at)
            a.mov(rcx, out_at + out_off)
        a.mov(rax, kernels[name])
        a.call(rax)
        if name == "sum":
            a.mov(r11, out_at + out_off)
            a.vmovss(dword(r11), xmm0)
    a.mov(rax, out_at)                            # the loader dumps rdx bytes from rax
    a.mov(rdx, len(lay.out))
    a.pop(rbx)
    a.ret()
    driver = a.assemble()
    assert len(driver) <= lay.driver_room, "the driver outgrew its room"
    lay.image[:len(driver)] = driver
    return bytes(lay.image) + bytes(lay.out), expect


@pytest.fixture(scope="module")
def bochs_run():
    payload, expect = _build_cases()
    return bochs.run(payload), expect


def test_guest_cpu_has_avx512(bochs_run):
    """The guest's CPUID says AVX512F and the loader enabled the opmask and ZMM state, so the passes below ran
    AVX-512 code (and the payload returned: the output is there)."""
    r, _ = bochs_run
    assert r.cpuid7_ebx >> 16 & 1, f"CPUID.7.EBX = {r.cpuid7_ebx:#010x}: no AVX512F in Bochs's {bochs.CPU_MODEL}"
    assert r.xcr0 == 0xE7
    assert r.out


@pytest.mark.parametrize("kernel", ["saxpy", "sum", "gather"])
def test_avx512_kernel_on_bochs(bochs_run, kernel):
    r, expect = bochs_run
    bad = [(n, r.out[off:off + len(want)].hex(), want.hex()) for name, n, off, want in expect
           if name == kernel and r.out[off:off + len(want)] != want]
    assert not bad, f"{kernel}: n, got, expected (first 3 mismatches): {[(n, g[:96], w[:96]) for n, g, w in bad[:3]]}"


def test_guest_fault_is_an_error():
    """A fault in the payload stops the run with the exception, not with a plausible output: a load from 4 GiB,
    which the guest does not map, is a #PF (the masked-off gather lanes above load from there too)."""
    a = Assembler(base=bochs.PAYLOAD)
    a.mov(rax, 1 << 32)
    a.mov(rax, qword(rax))
    a.ret()
    with pytest.raises(bochs.BochsError, match=r"exception 14 \(#PF\).* cr2 0000000100000000"):
        bochs.run(a.assemble())
