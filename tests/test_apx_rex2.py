"""APX's 32 general registers and the REX2 prefix (issue 26, first part): the rules, each with llvm-mc-22's bytes.

REX2 is D5 and one payload byte M0 R4 X4 B4 W R3 X3 B3 (Intel APX Architecture Specification, 3.1.2.1); the loader
derives a REX2 form from each legacy form of maps 0 and 1 it reaches (codegen/spec.py `rex2_forms`, isa/README.md
"REX2"), and tests/test_fuzz_llvm.py fuzzes every one of them against llvm-mc-22 and llvm-objdump-22
(``pytest tests/test_fuzz_llvm.py -k REX2``). The expected bytes below were printed by llvm-mc-22
(``llvm-mc-22 -triple=x86_64 -x86-asm-syntax=intel -output-asm-variant=1 -show-encoding``), never by x86gen.
Nothing here runs APX code: no CPU or emulator of this machine has APX.
"""
from __future__ import annotations

import llvm_oracle as L
import pytest

import x86gen
from x86gen import EgprOperandError, OperandError

R = x86gen.REGISTERS

# (Intel text, llvm-mc-22's bytes)
LLVM22 = [
    ("add r16, r17", "d5 58 01 c8"),                       # R4 B4 W: the brief's example
    ("mov rax, r16", "d5 48 89 c0"),                       # r16 in ModRM.reg (R4), W
    ("mov rax, qword ptr [r20 + 8*r20]", "d5 38 8b 04 e4"),  # r20 as index (X4: SIB.index 100 is r20, not "none")
    ("mov rax, qword ptr [rax + r20]", "d5 28 8b 04 20"),
    ("mov rax, qword ptr [rsp + r16]", "d5 28 8b 04 04"),
    ("mov rax, qword ptr [r20]", "d5 18 8b 04 24"),        # r20 as base needs a SIB byte, as rsp/r12 do
    ("mov r31b, byte ptr [r31 + 4*r28 - 128]", "d5 77 8a 7c a7 80"),
    ("lea r18, [r19 + 2*r20 + 0x7fffffff]", "d5 78 8d 94 63 ff ff ff 7f"),
    ("addps xmm0, xmmword ptr [r16]", "d5 90 58 00"),      # map 1: M0 = 1, no 0F byte
    ("movq xmm0, rax", "66 48 0f 6e c0"),                  # (no REX2: see the refusal of `movq xmm0, r16` below)
    ("pinsrw xmm0, r16d, 1", "66 d5 90 c4 c0 01"),         # the mandatory prefix before REX2
    ("add r16w, 0x1234", "66 d5 10 81 c0 34 12"),          # o16 before REX2
    ("push r16", "d5 10 50"),                              # +r: B4 (d64: no W)
    ("bswap r16", "d5 98 c8"),                             # map 1 +r
    ("xchg rax, r16", "d5 18 90"),
    ("xchg eax, r16d", "d5 10 90"),
    ("movabs r16, 0x123456789", "d5 18 b8 89 67 45 23 01 00 00 00"),
    ("mov r16, 1", "d5 18 c7 c0 01 00 00 00"),
    ("imul r16, r17, 5", "d5 58 6b c1 05"),
    ("shl r17d, cl", "d5 10 d3 e1"),
    ("mov r16b, sil", "d5 10 88 f0"),                      # sil and an EGPR: REX2 makes 4-7 spl…dil, as REX does
    ("setb r16b", "d5 90 92 c0"),
    ("movzx r16d, byte ptr [r17]", "d5 d0 b6 01"),
    ("mov r16, cr0", "d5 90 20 c0"),
    ("fld dword ptr [r16]", "d5 10 d9 00"),
    ("jmp qword ptr [r16]", "d5 10 ff 20"),
    ("lock add qword ptr [r16], rax", "f0 d5 18 01 00"),   # legacy prefixes before REX2
    ("mov rax, qword ptr fs:[r16]", "64 d5 18 8b 00"),
    ("mov r16, qword ptr [rip + 8]", "d5 48 8b 05 08 00 00 00"),
    ("{rex2} add rax, rbx", "d5 08 01 d8"),                # the pseudo-prefix: REX2 without an EGPR
    ("{rex2} mov rax, qword ptr [rip + 8]", "d5 08 8b 05 08 00 00 00"),
    ("{rex2} addps xmm0, xmm1", "d5 80 58 c1"),
]


@pytest.mark.parametrize("text, want", LLVM22)
def test_rex2_bytes_are_llvm_mc_22s(text, want):
    assert x86gen.assemble(text).hex(" ") == want


@pytest.mark.skipif(not L.HAVE_LLVM22, reason=L.MISSING)
def test_rex2_table_is_what_llvm_mc_22_prints():
    """The table above is llvm-mc-22's own output (run again here where it is installed)."""
    got = L.assemble([t for t, _ in LLVM22])
    assert [b.hex(" ") if isinstance(b, bytes) else b for b in got] == [w for _, w in LLVM22]


def test_rex2_through_encode_and_the_register_api():
    assert x86gen.encode("add", R["r16"], R["r17"]).hex(" ") == "d5 58 01 c8"
    assert x86gen.gpr(16) is R["r16"] and x86gen.gpr(17, 32) is R["r17d"] and x86gen.gpr(31, 8) is R["r31b"]
    assert R["r20"].sized(16) is R["r20w"]
    with pytest.raises(OperandError, match="0-31"):
        x86gen.gpr(32)
    # the plans compiled after many calls give the same bytes
    for _ in range(200): b = x86gen.encode("mov", R["rax"], x86gen.qword(R["r20"], R["r20"], 8))
    assert b.hex(" ") == "d5 38 8b 04 e4"


def test_egpr_names_are_registers_not_labels():
    """`r16` was read as a label (with `r16:` defined, `mov rax, r16` was a RIP-relative load); it is APX's register, as
    llvm-mc-22 reads it (GNU as 2.40 still reads it as a symbol), and no label may be named so."""
    assert x86gen.assemble("mov rax, r16").hex(" ") == "d5 48 89 c0"
    with pytest.raises(x86gen.AsmSyntaxError, match="r16 is a register"):
        x86gen.assemble("r16:\nmov rax, r16")
    with pytest.raises(x86gen.AsmSyntaxError, match="register"):
        x86gen.assemble("R31D: nop")


def test_high_byte_registers_never_meet_rex2():
    """ah/ch/dh/bh exist only without REX or REX2 (APX spec 3.1.2.1; llvm-mc-22: "can't encode 'ah' in an instruction
    requiring EVEX/REX2/REX prefix")."""
    for text in ("mov ah, r16b", "mov r16b, ah", "{rex2} mov ah, al", "add byte ptr [r16], bh"):
        with pytest.raises(OperandError, match="ah/bh/ch/dh"):
            x86gen.assemble(text)


@pytest.mark.parametrize("text, words", [
    ("pshufb xmm0, xmmword ptr [r16]", ["map 2", "EVEX promotion", "not encode yet"]),   # 0F 38: APX EVEX, next part
    ("crc32 r16d, eax", ["map 2", "EVEX promotion"]),
    ("palignr xmm0, xmmword ptr [r16], 1", ["map 3", "EVEX promotion"]),
    ("xsave [r16]", ["takes no REX2"]),                   # the XSAVE family: `rex2: no` (llvm-mc-22 refuses it too)
    ("vaddps xmm0, xmm1, xmmword ptr [r16]", ["REX2", "APX"]),   # a VEX form: only APX's EVEX would carry it
    ("mov al, byte ptr [r16d]", ["r16d", "not encode 0x67 with REX2 yet"]),
    # 66 with REX2.W (codegen/spec.py `rex2_eligible`): llvm-mc-22 writes 66 d5 98 6e c0, but llvm-objdump-22 reads 66 D5
    # (W=1) 6E with memory as MMX movq: left out until the APX spec is read on it
    ("movq xmm0, r16", ["takes no REX2"]),
])
def test_egpr_refused_where_no_rex2_form_takes_it(text, words):
    with pytest.raises(OperandError) as ei:
        x86gen.assemble(text)
    for w in words: assert w in str(ei.value), str(ei.value)


def test_egpr_refused_by_a_legacy_forms_own_door():
    """A legacy form called directly refuses r16-r31 (its class check, at no cost to the others): EgprOperandError."""
    with pytest.raises(EgprOperandError, match="REX2"):
        x86gen.get_form("ADD_RM64_R64")(R["r16"], R["rax"])
    with pytest.raises(EgprOperandError):
        x86gen.get_form("MOV_R64_RM64")(R["rax"], x86gen.qword(R["r16"]))
    assert x86gen.get_form("REX2_ADD_RM64_R64")(R["r16"], R["rax"]).hex(" ") == "d5 18 01 c0"   # llvm-mc-22: add r16, rax


@pytest.mark.parametrize("text", ["{rex2} jne 0", "{rex2} pshufb xmm0, xmm1", "{rex2} in al, dx", "{rex2} wrmsr"])
def test_rex2_pseudo_prefix_refused_where_rex2_does_not_reach(text):
    """Map 0 rows 7 and E, map 1 row 3 and map 2 take no REX2 (APX spec 3.1.2.1)."""
    with pytest.raises(x86gen.EncodeError):
        x86gen.assemble(text)


def test_rex2_forms_follow_the_loader_rule():
    """Every REX2 form is a legacy map 0/1 form's twin, outside the rows REX2 does not reach."""
    from codegen.spec import REX2_ROWS_EXCLUDED
    rex2 = [f for f in x86gen.all_forms() if f.encoding_kind == "rex2"]
    assert len(rex2) > 800
    for f in rex2:
        twin = x86gen.get_form(f.id.removeprefix("REX2_"))
        assert twin.encoding_kind == "legacy" and f.opcode_map in (0, 1) and f.opcode >> 4 not in REX2_ROWS_EXCLUDED[f.opcode_map]
    from oracles import forms_checked_by  # (the spec gives each to llvm-mc-22: tests/test_fuzz_llvm.py fuzzes it)
    assert {f.id for f in rex2} <= {f.id for f in forms_checked_by("llvm-mc-22")}
    ids = {f.id for f in rex2}
    assert "REX2_ADD_RM64_R64" in ids and "REX2_XSAVE_MEM" not in ids and not any(i.startswith("REX2_JNE") for i in ids)
    # `rex2=no` forms and `rex2: no` families LLVM 22 cannot check (isa/README.md "REX2") have none
    assert not ids & {"REX2_BSWAP_R16", "REX2_CALL_M1632", "REX2_SAL_RM32_CL", "REX2_BNDMK_BND_M64", "REX2_LLDT_RM16"}


def test_ordinary_forms_keep_their_bytes():
    """Without r16-r31 or `{rex2}` nothing changes: REX or no prefix, never REX2."""
    assert x86gen.assemble("add rax, rbx").hex(" ") == "48 01 d8"
    assert x86gen.assemble("mov eax, dword ptr [r13]").hex(" ") == "41 8b 45 00"
