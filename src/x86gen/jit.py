"""Run x86-64 machine code in-process (Linux x86-64 only).

The code is copied into a fresh anonymous mapping while it is read+write, then the
mapping is switched to read+execute with ``mprotect`` before anything can call it,
so the memory is never writable and executable at the same time.

    >>> add = compile(bytes.fromhex("488d0437c3"), argtypes=(ctypes.c_int64, ctypes.c_int64))  # lea rax,[rdi+rsi]; ret
    >>> add(2, 3)
    5
"""

from __future__ import annotations

import ctypes
import functools
import mmap
import os
import platform
import sys
import weakref
from collections.abc import Sequence
from typing import Any

from .errors import EncodeError, wrong_type

__all__ = ["JitFunction", "JitUnavailable", "available", "compile", "cpu_features"]


class JitUnavailable(RuntimeError):
    """Raised when machine code cannot be run here (only Linux on x86-64 with a 64-bit Python is supported)."""


def _unavailable_reason() -> str | None:
    if not sys.platform.startswith("linux"):
        return f"the JIT needs Linux, but this is {sys.platform!r}"
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return f"the JIT needs an x86-64 CPU, but this is {platform.machine()!r}"
    if sys.maxsize <= 2**32:
        return "the JIT needs a 64-bit Python process"
    return None


def available() -> bool:
    """Return True if :func:`compile` can run code on this platform."""
    return _unavailable_reason() is None


@functools.cache
def _mprotect() -> Any:
    fn = ctypes.CDLL(None, use_errno=True).mprotect
    fn.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    fn.restype = ctypes.c_int
    return fn


class JitFunction:
    """Callable wrapper around machine code living in its own read+execute mapping.

    Calling the object calls the code through a ctypes ``CFUNCTYPE(restype, *argtypes)``
    (System V AMD64 calling convention). The object owns the mapping: it is unmapped
    when the object is garbage-collected or :meth:`close` is called.
    """

    def __init__(self, code: bytes, restype: Any = ctypes.c_int64, argtypes: Sequence[Any] = (), *, name: str = "fn") -> None:
        reason = _unavailable_reason()
        if reason is not None:
            raise JitUnavailable(reason)
        proto = _prototype(restype, argtypes)
        if code is None or isinstance(code, (int, str)):   # (bytes(5) would be five zero bytes to run)
            raise wrong_type("x86gen.jit.compile", "code", code, "bytes")
        try: code = bytes(code)
        except (TypeError, ValueError): raise wrong_type("x86gen.jit.compile", "code", code, "bytes") from None
        if not code:
            raise EncodeError("cannot compile empty machine code")
        size = -(-len(code) // mmap.PAGESIZE) * mmap.PAGESIZE
        mm = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        try:
            mm.write(code)
            address = ctypes.addressof(ctypes.c_char.from_buffer(mm))  # temporary buffer export, released at once
            if _mprotect()(address, size, mmap.PROT_READ | mmap.PROT_EXEC) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"mprotect(PROT_READ|PROT_EXEC) failed: {os.strerror(err)}")
        except BaseException:
            mm.close()
            raise
        self._finalizer = weakref.finalize(self, mm.close)
        self._fn = proto(address)
        self.name, self.restype, self.argtypes = name, restype, tuple(argtypes)
        self._code, self._address, self._size = code, address, size

    @property
    def address(self) -> int:
        """Address of the first byte of the code."""
        return self._address

    @property
    def size(self) -> int:
        """Size in bytes of the executable mapping (``len(code)`` rounded up to whole pages)."""
        return self._size

    @property
    def code(self) -> bytes:
        """The machine code, as passed in."""
        return self._code

    @property
    def closed(self) -> bool:
        """True once the mapping has been released."""
        return not self._finalizer.alive

    def close(self) -> None:
        """Unmap the code now; calling the function afterwards raises ValueError."""
        self._finalizer()

    def __call__(self, *args: Any) -> Any:
        """Call the machine code with ``args`` converted per ``argtypes``."""
        if self.closed:
            raise ValueError(f"JIT function {self.name!r} has been closed")
        return self._fn(*args)

    def __repr__(self) -> str:
        def tname(t: Any) -> str:
            return "None" if t is None else getattr(t, "__name__", repr(t))

        sig = f"{tname(self.restype)} {self.name}({', '.join(map(tname, self.argtypes))})"
        state = "closed" if self.closed else f"at {self._address:#x}"
        return f"<JitFunction {sig} {state}, {len(self._code)} bytes>"


def _prototype(restype: Any, argtypes: Any) -> Any:
    """``ctypes.CFUNCTYPE(restype, *argtypes)``, or the `x86gen.ArgumentTypeError` that says which is no ctypes type."""
    try: return ctypes.CFUNCTYPE(restype, *argtypes)
    except TypeError: pass
    try: ctypes.CFUNCTYPE(restype)
    except TypeError: raise wrong_type("x86gen.jit.compile", "restype", restype, "a ctypes type (or None for void)") from None
    if isinstance(argtypes, (str, bytes)) or not hasattr(argtypes, "__iter__"):
        raise wrong_type("x86gen.jit.compile", "argtypes", argtypes, "a sequence of ctypes types")
    for i, t in enumerate(argtypes):
        try: ctypes.CFUNCTYPE(None, t)
        except TypeError: raise wrong_type("x86gen.jit.compile", f"argtypes[{i}]", t, "a ctypes type") from None
    raise wrong_type("x86gen.jit.compile", "argtypes", argtypes, "a sequence of ctypes types")


def compile(code: bytes, restype: Any = ctypes.c_int64, argtypes: Sequence[Any] = (), *, name: str = "fn") -> JitFunction:
    """Load ``code`` into executable memory and return it as a callable :class:`JitFunction`.

    ``restype`` and ``argtypes`` are ctypes types (``restype=None`` for void). Raises
    :class:`JitUnavailable` unless running on Linux x86-64.
    """
    return JitFunction(code, restype, argtypes, name=name)


# fmt: off
# Hand-assembled with GNU as (`as --64`, `.intel_syntax noprefix`), bytes copied from `objdump -d`.
# void cpuid(uint32_t leaf /*edi*/, uint32_t subleaf /*esi*/, uint32_t out[4] /*rdx*/)
_CPUID_CODE = bytes.fromhex(
    "53"           # push rbx              ; rbx is callee-saved and cpuid clobbers it
    "49 89 d0"     # mov  r8, rdx          ; cpuid clobbers edx
    "89 f8"        # mov  eax, edi
    "89 f1"        # mov  ecx, esi
    "0f a2"        # cpuid
    "41 89 00"     # mov  [r8], eax
    "41 89 58 04"  # mov  [r8+4], ebx
    "41 89 48 08"  # mov  [r8+8], ecx
    "41 89 50 0c"  # mov  [r8+12], edx
    "5b"           # pop  rbx
    "c3"           # ret
)
# uint64_t xgetbv(uint32_t xcr /*edi*/)
_XGETBV_CODE = bytes.fromhex(
    "89 f9"        # mov ecx, edi
    "0f 01 d0"     # xgetbv             ; edx:eax = XCR[ecx]
    "48 c1 e2 20"  # shl rdx, 32
    "48 09 d0"     # or  rax, rdx
    "c3"           # ret
)

# (leaf, register index into eax/ebx/ecx/edx, bit, name)
_BITS = [
    (1, 3, 15, "CMOV"), (1, 3, 23, "MMX"), (1, 3, 25, "SSE"), (1, 3, 26, "SSE2"),
    (1, 2, 0, "SSE3"), (1, 2, 1, "PCLMULQDQ"), (1, 2, 9, "SSSE3"), (1, 2, 12, "FMA"), (1, 2, 13, "CX16"),
    (1, 2, 19, "SSE4_1"), (1, 2, 20, "SSE4_2"), (1, 2, 22, "MOVBE"), (1, 2, 23, "POPCNT"), (1, 2, 25, "AES"),
    (1, 2, 27, "OSXSAVE"), (1, 2, 28, "AVX"), (1, 2, 29, "F16C"), (1, 2, 30, "RDRAND"),
    (7, 1, 3, "BMI1"), (7, 1, 5, "AVX2"), (7, 1, 8, "BMI2"), (7, 1, 16, "AVX512F"), (7, 1, 17, "AVX512DQ"),
    (7, 1, 19, "ADX"), (7, 1, 28, "AVX512CD"), (7, 1, 29, "SHA"), (7, 1, 30, "AVX512BW"), (7, 1, 31, "AVX512VL"),
    (0x80000001, 2, 5, "LZCNT"),
    # the other AVX-512 subsets (SDM Vol.2 CPUID, leaf 07H sub-leaf 0 EBX/ECX/EDX and sub-leaf 1 EAX), iced-x86's names
    (7, 1, 21, "AVX512_IFMA"), (7, 1, 26, "AVX512PF"), (7, 1, 27, "AVX512ER"),
    (7, 2, 1, "AVX512_VBMI"), (7, 2, 6, "AVX512_VBMI2"), (7, 2, 11, "AVX512_VNNI"), (7, 2, 12, "AVX512_BITALG"),
    (7, 2, 14, "AVX512_VPOPCNTDQ"), (7, 3, 2, "AVX512_4VNNIW"), (7, 3, 3, "AVX512_4FMAPS"), (7, 3, 8, "AVX512_VP2INTERSECT"),
    (7, 3, 23, "AVX512_FP16"), (0x70001, 0, 5, "AVX512_BF16"),
]
# fmt: on
_NEEDS_YMM = {"AVX", "AVX2", "FMA", "F16C"}  # VEX-encoded: need the OS to save XMM+YMM state (XCR0 bits 1, 2)
_XCR0_YMM, _XCR0_ZMM = 0x06, 0xE6  # AVX-512 also needs opmask, ZMM_Hi256, Hi16_ZMM (XCR0 bits 5-7)


@functools.cache
def cpu_features() -> frozenset[str]:
    """Return the CPU's instruction-set extensions usable here, e.g. ``{"SSE2", "AVX2", "FMA", "BMI2", ...}``.

    Runs CPUID (and XGETBV) through the JIT. AVX-family and AVX-512 features are only reported
    when the OS has enabled the matching register state (OSXSAVE and XCR0: bits 1-2 for AVX, and bits 5-7,
    opmask, ZMM_Hi256 and Hi16_ZMM, for AVX-512). The AVX-512 subsets have iced-x86's names, as the forms' ``cpuid``:
    AVX512F, AVX512CD, AVX512DQ, AVX512BW, AVX512VL, AVX512_IFMA, AVX512_VBMI, AVX512_VBMI2, AVX512_VNNI,
    AVX512_BITALG, AVX512_VPOPCNTDQ, AVX512_BF16, AVX512_FP16, AVX512_VP2INTERSECT, AVX512_4VNNIW, AVX512_4FMAPS,
    AVX512PF, AVX512ER; and AVX10_1, AVX10_2 from the AVX10 version (CPUID leaf 24H), the name the AVX10.2 forms' ``cpuid``
    gives. The result is cached.
    """
    regs = (ctypes.c_uint32 * 4)()
    cpuid_fn = compile(_CPUID_CODE, None, (ctypes.c_uint32, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32)), name="cpuid")

    def cpuid(leaf: int, subleaf: int = 0) -> tuple[int, ...]:
        cpuid_fn(leaf, subleaf, regs)
        return tuple(regs)

    max_leaf, max_ext = cpuid(0)[0], cpuid(0x80000000)[0]
    leaves = {leaf: cpuid(leaf) for leaf in (1, 7, 0x80000001) if leaf <= (max_ext if leaf & 0x80000000 else max_leaf)}
    if 7 in leaves and leaves[7][0] >= 1: leaves[0x70001] = cpuid(7, 1)   # leaf 7 sub-leaf 1 (EAX of sub-leaf 0: the last one)
    found = {name for leaf, reg, bit, name in _BITS if leaf in leaves and leaves[leaf][reg] >> bit & 1}
    # AVX10 (Intel AVX10 Architecture Specification, "Enumeration"): CPUID.(07H,1):EDX[19] says leaf 24H is there, whose
    # EBX[7:0] is the converged vector ISA's version; AVX10.2 is version 2 or later (and all of AVX10.1 with it)
    if 0x70001 in leaves and leaves[0x70001][3] >> 19 & 1 and max_leaf >= 0x24:
        version = cpuid(0x24)[1] & 0xFF
        found |= {f"AVX10_{v}" for v in range(1, min(version, 2) + 1)}
    xcr0 = 0
    if "OSXSAVE" in found:  # XGETBV faults unless the OS has set CR4.OSXSAVE
        xcr0 = compile(_XGETBV_CODE, ctypes.c_uint64, (ctypes.c_uint32,), name="xgetbv")(0)
    if xcr0 & _XCR0_YMM != _XCR0_YMM:
        found -= _NEEDS_YMM
    if xcr0 & _XCR0_ZMM != _XCR0_ZMM:
        found = {name for name in found if not name.startswith(("AVX512", "AVX10"))}
    return frozenset(found)
