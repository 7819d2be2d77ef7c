"""Tests for x86gen.jit: running machine code in-process.

All machine code below was produced by GNU as (`as --64`, `.intel_syntax noprefix`) and copied from
`objdump -d`; test_snippets_match_gnu_as re-assembles every snippet to check the pasted bytes.
"""

from __future__ import annotations

import ctypes
import gc
import platform
import re
import shutil
import subprocess
import sys

import pytest

from x86gen import jit

pytestmark = pytest.mark.skipif(not jit.available(), reason="JIT needs Linux x86-64")

I64 = ctypes.c_int64

SNIPPETS: dict[str, tuple[str, str]] = {  # name -> (Intel-syntax assembly, bytes from GNU as)
    "const": ("mov rax, 42\nret", "48 c7 c0 2a 00 00 00  c3"),
    "add": ("lea rax, [rdi+rsi]\nret", "48 8d 04 37  c3"),
    "sum": (  # sum of 1..n, 0 for n <= 0
        "xor eax, eax\ntest rdi, rdi\njle 2f\n1:\nadd rax, rdi\ndec rdi\njnz 1b\n2:\nret",
        "31 c0  48 85 ff  7e 08  48 01 f8  48 ff cf  75 f8  c3",
    ),
    "muladd1": (  # x*y + 1.0
        "mulsd xmm0, xmm1\nmov rax, 0x3ff0000000000000\nmovq xmm1, rax\naddsd xmm0, xmm1\nret",
        "f2 0f 59 c1  48 b8 00 00 00 00 00 00 f0 3f  66 48 0f 6e c8  f2 0f 58 c1  c3",
    ),
    "fma": ("vfmadd213sd xmm0, xmm1, xmm2\nret", "c4 e2 f1 a9 c2  c3"),  # x*y + z
}


def code(name: str) -> bytes:
    return bytes.fromhex(SNIPPETS[name][1])


def gnu_as(asm: str, tmp_path) -> bytes:
    """Assemble Intel-syntax `asm` with GNU as and return the .text bytes as listed by objdump."""
    src, obj = tmp_path / "t.s", tmp_path / "t.o"
    src.write_text(f".intel_syntax noprefix\n.text\n{asm}\n")
    subprocess.run(["as", "--64", "-o", str(obj), str(src)], check=True)
    dump = subprocess.run(["objdump", "-d", "-z", str(obj)], check=True, capture_output=True, text=True).stdout
    return bytes.fromhex("".join(m.group(1) for m in re.finditer(r"^\s*[0-9a-f]+:\t([0-9a-f ]+)", dump, re.M)))


def mapping_perms(address: int) -> str | None:
    """Permissions (e.g. 'r-xp') of the /proc/self/maps entry covering `address`, or None."""
    with open("/proc/self/maps") as f:
        for line in f:
            span, perms = line.split()[:2]
            start, end = (int(x, 16) for x in span.split("-"))
            if start <= address < end:
                return perms
    return None


@pytest.mark.skipif(not (shutil.which("as") and shutil.which("objdump")), reason="GNU as/objdump not installed")
def test_snippets_match_gnu_as(tmp_path):
    for name, (asm, hexbytes) in SNIPPETS.items():
        assert gnu_as(asm, tmp_path) == bytes.fromhex(hexbytes), name
    cpuid_asm = (
        "push rbx\nmov r8, rdx\nmov eax, edi\nmov ecx, esi\ncpuid\n"
        + "".join(f"mov [r8+{4 * i}], {r}\n" for i, r in enumerate(["eax", "ebx", "ecx", "edx"]))
        + "pop rbx\nret"
    )
    assert gnu_as(cpuid_asm, tmp_path) == jit._CPUID_CODE
    assert gnu_as("mov ecx, edi\nxgetbv\nshl rdx, 32\nor rax, rdx\nret", tmp_path) == jit._XGETBV_CODE


def test_constant():
    f = jit.compile(code("const"), name="answer")
    assert f() == 42
    assert f.code == code("const") and f.size % 4096 == 0 and f.size >= len(f.code)
    assert f.address == ctypes.cast(f._fn, ctypes.c_void_p).value
    assert "answer" in repr(f) and f"{f.address:#x}" in repr(f)


def test_add():
    add = jit.JitFunction(code("add"), I64, (I64, I64), name="add")
    assert add(2, 3) == 5
    assert add(-10, 4) == -6
    assert add(2**62, 2**62) == -(2**63)  # wraps like the hardware


@pytest.mark.parametrize("n", [0, 1, 2, 10, 1000, 123_457])
def test_loop_sum(n):
    total = jit.compile(code("sum"), I64, (I64,))
    assert total(n) == sum(range(1, n + 1))


def test_loop_sum_negative_is_zero():
    assert jit.compile(code("sum"), I64, (I64,))(-5) == 0


def test_float_sse():
    f = jit.compile(code("muladd1"), ctypes.c_double, (ctypes.c_double, ctypes.c_double))
    for x, y in [(2.0, 3.0), (-1.5, 4.0), (0.0, 1e300), (0.1, 0.2)]:
        assert f(x, y) == x * y + 1.0


def test_float_fma():
    if "FMA" not in jit.cpu_features():
        pytest.skip("CPU/OS without FMA")
    f = jit.compile(code("fma"), ctypes.c_double, (ctypes.c_double,) * 3)
    assert f(2.0, 3.0, 4.0) == 10.0
    x = 1.0 + 2.0**-30  # fused: x*x - 1 keeps the 2**-60 term that separate mul+add rounds away
    assert f(x, x, -1.0) == 2.0**-29 + 2.0**-60


def test_mapping_is_read_execute_only():
    f = jit.compile(code("const"))
    perms = mapping_perms(f.address)
    assert perms is not None and perms[:3] == "r-x", perms


def test_mapping_released_when_dropped():
    f = jit.compile(code("const"))
    address = f.address
    assert mapping_perms(address)[:3] == "r-x"
    del f
    gc.collect()
    assert (mapping_perms(address) or "")[:3] != "r-x"


def test_close():
    f = jit.compile(code("const"))
    address = f.address
    f.close()
    assert f.closed and "closed" in repr(f)
    assert (mapping_perms(address) or "")[:3] != "r-x"
    with pytest.raises(ValueError):
        f()
    f.close()  # idempotent


def test_empty_code_rejected():
    with pytest.raises(ValueError):
        jit.compile(b"")


def test_unavailable_elsewhere(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    with pytest.raises(jit.JitUnavailable, match="Linux"):
        jit.compile(code("const"))
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    with pytest.raises(jit.JitUnavailable, match="x86-64"):
        jit.compile(code("const"))
    assert issubclass(jit.JitUnavailable, RuntimeError) and not jit.available()


def test_cpu_features():
    feats = jit.cpu_features()
    assert isinstance(feats, frozenset)
    assert {"SSE", "SSE2"} <= feats  # x86-64 baseline
    assert jit.cpu_features() is feats  # cached
    if {"AVX2", "FMA"} <= feats:
        assert "AVX" in feats and "OSXSAVE" in feats


def test_cpu_features_agree_with_proc_cpuinfo():
    try:
        with open("/proc/cpuinfo") as f:
            flags = set(next(line for line in f if line.startswith("flags")).split(":", 1)[1].split())
    except (OSError, StopIteration):
        pytest.skip("no /proc/cpuinfo flags")
    feats = jit.cpu_features()
    names = ["SSE2", "SSE4_1", "SSE4_2", "POPCNT", "AVX", "AVX2", "FMA", "F16C", "BMI1", "BMI2", "AVX512F"]
    for name in names:
        assert (name in feats) == (name.lower() in flags), name
    assert ("LZCNT" in feats) == ("abm" in flags)


# the AVX-512 subsets as Linux's /proc/cpuinfo names them (arch/x86/include/asm/cpufeatures.h), by iced-x86's name
AVX512_CPUINFO = {"AVX512F": "avx512f", "AVX512CD": "avx512cd", "AVX512DQ": "avx512dq", "AVX512BW": "avx512bw",
                  "AVX512VL": "avx512vl", "AVX512_IFMA": "avx512ifma", "AVX512_VBMI": "avx512vbmi", "AVX512_VBMI2": "avx512_vbmi2",
                  "AVX512_VNNI": "avx512_vnni", "AVX512_BITALG": "avx512_bitalg", "AVX512_VPOPCNTDQ": "avx512_vpopcntdq",
                  "AVX512_BF16": "avx512_bf16", "AVX512_FP16": "avx512_fp16", "AVX512_VP2INTERSECT": "avx512_vp2intersect",
                  "AVX512_4VNNIW": "avx512_4vnniw", "AVX512_4FMAPS": "avx512_4fmaps", "AVX512PF": "avx512pf", "AVX512ER": "avx512er"}


def test_cpu_features_avx512_subsets_agree_with_proc_cpuinfo():
    """Every AVX-512 subset is reported exactly when Linux reports it (it clears them too when XCR0 lacks the state)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = set(next(line for line in f if line.startswith("flags")).split(":", 1)[1].split())
    except (OSError, StopIteration):
        pytest.skip("no /proc/cpuinfo flags")
    feats = jit.cpu_features()
    got = {name for name in AVX512_CPUINFO if name in feats}
    want = {name for name, flag in AVX512_CPUINFO.items() if flag in flags}
    assert got == want
    assert {n for n in feats if n.startswith("AVX512")} <= set(AVX512_CPUINFO)
