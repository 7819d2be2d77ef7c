"""String instructions (issue 10): movs/cmps/scas/lods/stos/ins/outs, xlat, maskmovdqu/maskmovq, with their implicit
memory operands (isa/README.md: m8@rsi, m8@esrdi, m8@rbxal, m128@rdi).

Text as GNU as reads it (bytes from GNU as 2.40, checked against it when it is installed), the structured API
(bytes from iced-x86's encoder), and the errors: an address other than the implied one, a segment override on
es:[rdi], a rep prefix where iced-x86's OpCodeInfo allows none, an unsized generic name.
"""
from __future__ import annotations

import iced_x86 as I
import pytest
from test_text_rules import check

import x86gen
from x86gen import OperandError, PrefixError, al, byte, dword, mem, qword, rax, rbx, rdi, rsi, xmm0, xmm1, xmmword
from x86gen.selection.request import STRING_GENERIC, STRING_MNEMONICS, canonical, string_operands


def test_string_mnemonics_are_the_generic_names_with_their_sizes():
    """`x86gen.encoder.STRING_MNEMONICS` (written out) is each generic name, with each size suffix b/w/d/q except
    insq/outsq (no such instructions: SDM Vol.2 INS, OUTS), plus xlat/xlatb and the maskmov forms; every one is in the table."""
    assert STRING_GENERIC == {"movs", "cmps", "scas", "lods", "stos", "ins", "outs"}
    rule = ({f"{m}{s}" for m in STRING_GENERIC for s in "bwdq" if f"{m}{s}" not in ("insq", "outsq")}
            | STRING_GENERIC | {"xlat", "xlatb", "maskmovdqu", "maskmovq", "vmaskmovdqu"})
    assert STRING_MNEMONICS == rule
    assert all(x86gen.forms.forms_of(canonical(m)) for m in STRING_MNEMONICS - STRING_GENERIC)


@pytest.mark.parametrize("src, expect", [
    ("movsb", "a4"),                                        # GNU as 2.40
    ("movs byte ptr [rdi], byte ptr [rsi]", "a4"),          # GNU as 2.40
    ("rep movsb", "f3a4"),                                  # GNU as 2.40
    ("rep stosq", "f348ab"),                                # GNU as 2.40
    ("repne scasb", "f2ae"),                                # GNU as 2.40
    ("repnz scasq", "f248af"),                              # GNU as 2.40
    ("repe cmpsb", "f3a6"),                                 # GNU as 2.40
    ("repz cmpsw", "66f3a7"),                               # GNU as 2.40
    ("lodsd", "ad"),                                        # GNU as 2.40
    ("rep lodsb", "f3ac"),                                  # GNU as 2.40
    ("xlatb", "d7"),                                        # GNU as 2.40
    ("xlat byte ptr [rbx]", "d7"),                          # GNU as 2.40
    ("fs lodsb", "64ac"),                                   # GNU as 2.40
    ("fs xlatb", "64d7"),                                   # GNU as 2.40
    ("gs movsq", "6548a5"),                                 # GNU as 2.40
    ("movsw", "66a5"),                                      # GNU as 2.40
    ("movsd", "a5"),                                        # GNU as 2.40: no operands, the string move
    ("movsq", "48a5"),                                      # GNU as 2.40
    ("cmpsd", "a7"),                                        # GNU as 2.40: no operands, the string compare
    ("cmpsd xmm1, xmm2, 1", "f20fc2ca01"),                  # GNU as 2.40: the SSE2 compare of the same name
    ("movsd xmm1, xmm2", "f20f10ca"),                       # GNU as 2.40: the SSE2 move of the same name
    ("movsd xmm1, qword ptr [rax]", "f20f1008"),            # GNU as 2.40
    ("movsd qword ptr [rax], xmm9", "f2440f1108"),          # GNU as 2.40
    ("rep movsd", "f3a5"),                                  # GNU as 2.40
    ("movss xmm1, xmm2", "f30f10ca"),                       # GNU as 2.40
    ("movss xmm1, dword ptr [rax]", "f30f1008"),            # GNU as 2.40
    ("movss dword ptr [rax], xmm1", "f30f1108"),            # GNU as 2.40
    ("cmpsq", "48a7"),                                      # GNU as 2.40
    ("scasw", "66af"),                                      # GNU as 2.40
    ("lodsq", "48ad"),                                      # GNU as 2.40
    ("stosb", "aa"),                                        # GNU as 2.40
    ("insb", "6c"),                                         # GNU as 2.40
    ("outsd", "6f"),                                        # GNU as 2.40
    ("rep movs qword ptr [rdi], qword ptr [rsi]", "f348a5"),  # GNU as 2.40
    ("lods eax, dword ptr [rsi]", "ad"),                    # GNU as 2.40
    ("stos qword ptr [rdi], rax", "48ab"),                  # GNU as 2.40
    ("scas al, byte ptr [rdi]", "ae"),                      # GNU as 2.40
    ("cmps byte ptr [rsi], byte ptr [rdi]", "a6"),          # GNU as 2.40
    ("ins byte ptr [rdi], dx", "6c"),                       # GNU as 2.40
    ("outs dx, word ptr [rsi]", "666f"),                    # GNU as 2.40
    ("movsb byte ptr [rdi], byte ptr [rsi]", "a4"),         # GNU as 2.40 (and iced-x86's text)
    ("maskmovdqu xmm0, xmm1", "660ff7c1"),                  # GNU as 2.40: the [rdi] left out
    ("maskmovq mm2, mm7", "0ff7d7"),                        # GNU as 2.40
    ("vmaskmovdqu xmm9, xmm1", "c579f7c9"),                 # GNU as 2.40
])
def test_string_text_as_gnu_as(src, expect, tmp_path):
    check(src, expect, tmp_path)
    assert x86gen.assemble("nop\n" + src).hex() == "90" + expect   # the program parser
    assert x86gen.assemble("x: " + src).hex() == expect


def _iced(code: str, seg=None, **prefix) -> bytes:
    """iced-x86's bytes for its Code ``code`` (64-bit addresses), with a segment override and rep prefixes."""
    c = getattr(I.Code, code)
    m = {"MOVSB_M8_M8": I.Instruction.create_movsb, "LODSB_AL_M8": I.Instruction.create_lodsb,
         "CMPSB_M8_M8": I.Instruction.create_cmpsb, "STOSQ_M64_RAX": I.Instruction.create_stosq,
         "OUTSB_DX_M8": I.Instruction.create_outsb, "SCASB_AL_M8": I.Instruction.create_scasb}
    if code in m:
        kw = {"segment_prefix": seg} if seg is not None and code not in ("STOSQ_M64_RAX", "SCASB_AL_M8") else {}
        ins = m[code](64, **kw, **prefix)
    elif code == "XLAT_M8":
        ins = I.Instruction.create_mem(c, I.MemoryOperand(I.Register.RBX, I.Register.AL, seg=seg or I.Register.NONE))
    else:
        ins = I.Instruction.create_maskmovdqu(64, I.Register.XMM0, I.Register.XMM1, seg or I.Register.NONE)
    e = I.Encoder(64)
    e.encode(ins, 0)
    return e.take_buffer()


FS, GS, ES = I.Register.FS, I.Register.GS, I.Register.ES
REP = I.RepPrefixKind.REPE
REPNE = I.RepPrefixKind.REPNE

STRUCTURED = [
    (("movsb",), lambda: _iced("MOVSB_M8_M8")),
    (("movs", byte(rdi), byte(rsi)), lambda: _iced("MOVSB_M8_M8")),
    (("movsb", byte(rdi), byte(rsi)), lambda: _iced("MOVSB_M8_M8")),
    (("fs movsb",), lambda: _iced("MOVSB_M8_M8", FS)),
    (("movsb", byte(rdi), mem(rsi, size=8, seg="fs")), lambda: _iced("MOVSB_M8_M8", FS)),
    (("movs", byte(rdi).with_segment("es"), byte(rsi).with_segment("gs")), lambda: _iced("MOVSB_M8_M8", GS)),
    (("rep movsb",), lambda: _iced("MOVSB_M8_M8", rep_prefix=REP)),
    (("lodsb",), lambda: _iced("LODSB_AL_M8")),
    (("lods", al, byte(rsi).with_segment("fs")), lambda: _iced("LODSB_AL_M8", FS)),
    (("lodsb", byte(rsi)), lambda: _iced("LODSB_AL_M8")),   # iced-x86's text leaves al out
    (("cmpsb", byte(rsi).with_segment("es"), byte(rdi)), lambda: _iced("CMPSB_M8_M8", ES)),
    (("repne cmpsb",), lambda: _iced("CMPSB_M8_M8", rep_prefix=REPNE)),
    (("rep stosq",), lambda: _iced("STOSQ_M64_RAX", rep_prefix=REP)),
    (("stos", qword(rdi), rax), lambda: _iced("STOSQ_M64_RAX")),
    (("repne scasb",), lambda: _iced("SCASB_AL_M8", rep_prefix=REPNE)),
    (("outsb",), lambda: _iced("OUTSB_DX_M8")),
    (("xlat", byte(rbx)), lambda: _iced("XLAT_M8")),
    (("xlatb",), lambda: _iced("XLAT_M8")),
    (("gs xlatb",), lambda: _iced("XLAT_M8", GS)),
    (("maskmovdqu", xmm0, xmm1), lambda: _iced("MASKMOVDQU_RDI_XMM_XMM")),
    (("maskmovdqu", xmmword(rdi), xmm0, xmm1), lambda: _iced("MASKMOVDQU_RDI_XMM_XMM")),
    (("fs maskmovdqu", xmm0, xmm1), lambda: _iced("MASKMOVDQU_RDI_XMM_XMM", FS)),
]


@pytest.mark.parametrize("call, iced", STRUCTURED, ids=[" ".join(map(str, c[0])) for c in STRUCTURED])
def test_structured_api_like_iced(call, iced):
    assert x86gen.encode(*call).hex() == iced().hex()
    a = x86gen.Assembler()
    a.emit(*call)
    assert a.assemble() == iced()


REFUSED = [
    (("movs", byte(rax), byte(rsi)), OperandError, r"operand 1 is byte ptr \[rax\].*es:\[rdi\] only"),
    (("movsb", byte(rdi), byte(rsi, disp=1)), OperandError, r"operand 2 .*\[rsi\] only"),
    (("lodsb", al, byte(rdi)), OperandError, r"\[rsi\] only"),
    (("xlat", byte(rbx, disp=8)), OperandError, r"\[rbx\] only"),
    (("maskmovdqu", xmmword(rax), xmm0, xmm1), OperandError, r"\[rdi\] only"),
    (("movs", mem(rdi), mem(rsi)), OperandError, "operand size is not given"),
    (("movs", dword(rdi), byte(rsi)), OperandError, "no form"),
    (("ins", qword(rdi), x86gen.dx), OperandError, "operand size"),
    (("movsb", byte(rdi).with_segment("fs"), byte(rsi)), PrefixError, "es:\\[rdi\\], which takes no segment override"),
    (("es stosb",), PrefixError, "applies to no operand"),
    (("movsb", byte(rdi), byte(rsi).with_segment("fs")), None, None),   # (the override of [rsi]: fine)
    (("fs movsb", byte(rdi), byte(rsi).with_segment("gs")), PrefixError, "two segment overrides"),
    (("repne xlatb",), PrefixError, "does not take the repne prefix"),   # (GNU as 2.40 takes repne movsb: F2 A4)
    (("rep xlatb",), PrefixError, "does not take the rep prefix"),
    (("rep maskmovdqu", xmm0, xmm1), PrefixError, "does not take the rep prefix"),
    (("rep movsd", xmm0, xmm1), PrefixError, "does not take the rep prefix"),   # the SSE2 movsd takes none
    (("movsd", xmm0, dword(rsi)), OperandError, "no form"),
    (("lock movsb",), PrefixError, "does not take the lock prefix"),
]


@pytest.mark.parametrize("call, err, match", REFUSED, ids=[" ".join(map(str, c[0])) for c in REFUSED])
def test_wrong_string_operands_are_errors(call, err, match):
    if err is None:
        x86gen.encode(*call)
        return
    with pytest.raises(err, match=match):
        x86gen.encode(*call)
    with pytest.raises(err, match=match):
        x86gen.Assembler().emit(*call)


@pytest.mark.parametrize("src", ["movs byte ptr [rax], byte ptr [rsi]", "lods al, byte ptr [rdi]", "movs [rdi], [rsi]",
                                 "stos byte ptr fs:[rdi], al", "rep xlatb", "repne xlatb", "xlat byte ptr [rbx+4]",
                                 "movsq qword ptr ds:[rdi], qword ptr [rsi]", "cmps byte ptr [rsi], byte ptr ds:[rdi]"])
def test_wrong_string_text_is_an_error(src):
    """GNU as 2.40 refuses each of these too (`invalid operand`, `ambiguous operand size`, `expecting operand after ','`,
    `operand 1 must use 'es' segment`: ds: is the default segment of [rdi] elsewhere, but es:[rdi] takes no other one)
    or, for rep on xlat/lods with repne, iced-x86's OpCodeInfo allows no such prefix."""
    with pytest.raises(x86gen.EncodeError):
        x86gen.assemble(src)


def test_string_mnemonics_are_the_tables():
    """`STRING_MNEMONICS` is the table's mnemonics with an implicit memory operand, their generic names and xlatb."""
    from x86gen.table import IMPLICIT_MEM
    table = {f.mnemonic for f in x86gen.all_forms() if any(o.loc in IMPLICIT_MEM for o in f.operands)}
    generic = {m[:-1] for m in table if m[:-1] in ("movs", "cmps", "scas", "lods", "stos", "ins", "outs")}
    assert STRING_MNEMONICS == table | generic | {"xlatb"}


def test_string_operands_fill_in_and_keep():
    assert string_operands("movsb", ()) == ("movsb", (byte(rdi), byte(rsi)))
    assert string_operands("lods", (dword(rsi),)) == ("lodsd", (x86gen.eax, dword(rsi)))
    ops = (xmm0, xmm1, mem("rax", size=64))
    assert string_operands("movsd", ops)[1] is ops or string_operands("movsd", ops) == ("movsd", ops)


def test_implicit_memory_is_no_load_to_fold():
    """A string instruction's [rsi] cannot take another address: no ReadMem group (a load folded there), WriteMem yes."""
    from x86gen import groups
    assert "MOVSB_M8_M8" not in groups.ReadMem1st and "MOVSB_M8_M8" not in groups.ReadMem2nd
    assert "LODSB_AL_M8" not in groups.ReadMem1st and "MOVSB_M8_M8" in groups.WriteMem


def test_assembler_methods_leave_implicit_operands_out():
    """The generated methods take the implied operands or leave them out, as `encode` (bytes: GNU as 2.40 for
    `movsb`, `lodsq`, `maskmovdqu xmm0, xmm1`, `xlatb`, `movsd xmm0, xmm1`, `movsd`, `cmpsd`)."""
    a = x86gen.Assembler()
    a.movsb()
    a.movsb(byte(rdi), byte(rsi))
    a.lodsq()
    a.maskmovdqu(xmm0, xmm1)
    a.xlat()
    a.movsd(xmm0, xmm1)
    a.movsd()
    a.cmpsd()
    assert a.assemble().hex() == "a4" "a4" "48ad" "660ff7c1" "d7" "f20f10c1" "a5" "a7"
    with pytest.raises(OperandError, match=r"es:\[rdi\] only"):
        a.movsb(byte(rax), byte(rsi))
