"""tools/coverage.py: the spec counted against iced-x86's instruction forms, and the README table it generates."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import iced_x86 as I
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT))

import iced_forms  # noqa: E402

from codegen import spec  # noqa: E402

# tools/coverage.py, loaded by path: the name `coverage` may already be coverage.py's package in sys.modules
_spec = importlib.util.spec_from_file_location("x86gen_tools_coverage", ROOT / "tools" / "coverage.py")
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)


@pytest.fixture(scope="module")
def cov():
    return C.Coverage()


def test_universe_totals_are_iceds():
    """The totals are iced-x86 1.21's: every Code that is an instruction in 64-bit mode, by encoding
    (counted here directly from OpCodeInfo, not through iced_forms)."""
    counts = {"LEGACY": 0, "VEX": 0, "EVEX": 0, "XOP": 0}
    names = {getattr(I.EncodingKind, k): k for k in counts}
    for n in dir(I.Code):
        if not n.isupper(): continue
        oc = I.OpCodeInfo(getattr(I.Code, n))
        if oc.mode64 and oc.is_instruction and oc.encoding in names: counts[names[oc.encoding]] += 1
    assert counts == {"LEGACY": 1627, "VEX": 996, "EVEX": 1733, "XOP": 103}
    universe = {e: sum(1 for _c, _n, enc in iced_forms.iced_codes() if enc == e) for e in counts}
    assert universe == counts


def test_every_spec_form_and_exclusion_is_an_iced_form(cov):
    assert cov.unknown == []
    assert not (set(cov.excluded) & cov.spec_ids)


def test_last_line_counts_the_spec(cov):
    forms = spec.load(str(ROOT / "isa" / "x86_64.yaml"))
    by_enc = {"LEGACY": 0, "VEX": 0, "EVEX": 0, "XOP": 0, "D3NOW": 0}
    for f in forms:
        if f.oracle == "iced": by_enc[f.encoding_kind.upper()] += 1
    assert cov.last_line().startswith(f"LEGACY {by_enc['LEGACY']}/1627 VEX {by_enc['VEX']}/996 EVEX {by_enc['EVEX']}/1733"
                                      f" XOP {by_enc['XOP']}/103 D3NOW {by_enc['D3NOW']}/24")
    assert C.report(cov).splitlines()[-1] == cov.last_line()


def test_every_missing_form_has_a_reason(cov):
    for n in cov.missing:
        assert cov.reason(n)
    assert "XBEGIN_REL32" not in cov.missing and "MONITORD" not in cov.missing   # in the spec now
    assert not {"JMP_REL16", "JE_REL8_16", "LOOP_REL8_16_ECX", "JRCXZ_REL8_16"} & set(cov.missing)   # the 16-bit branches too


def test_16_bit_near_transfers_and_segment_store_are_covered(cov):
    """Issue 24: o16 ret, call/jmp r/m16 and mov r/m16, sreg are forms now, no longer excluded (iced-x86 reads the first
    four with DecoderOptions.AMD, tests/iced_oracle.decoder_options)."""
    new = {"RETNW", "RETNW_IMM16", "CALL_RM16", "JMP_RM16", "MOV_RM16_SREG"}
    assert new <= cov.spec_ids and not new & set(cov.excluded) and not new & set(cov.missing)


def test_excluded_forms_have_reasons(cov):
    assert cov.excluded, "the spec excludes the Knights Corner VEX forms"
    assert all(r.strip() for r in cov.excluded.values())
    assert "VEX_KNC_KMOV_KR_KR" in cov.excluded


def test_readme_table_is_current(cov):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert C.readme_with_table(text, C.markdown(cov)) == text, "README coverage table is stale: run python tools/coverage.py --write-readme"


def test_excluded_must_be_valid(tmp_path):
    """`excluded:` entries need an upper-case Code name and a reason, and cannot also be forms."""
    base = "nop:\n  cpuid: INTEL8086\n  forms:\n  - \"   | 90 | id=NOPD\"\n"
    for body, msg in [("excluded:\n  NOPD: a reason\n", "is also a form"),
                      ("excluded:\n  FOO_BAR: ''\n", "needs a reason"),
                      ("excluded:\n  foo: why\n", "not an iced Code name"),
                      ("excluded:\n  - FOO\n", "must be a mapping")]:
        p = tmp_path / "s.yaml"
        p.write_text(base + body)
        with pytest.raises(spec.SpecError, match=msg):
            spec.load(str(p))
    p.write_text(base + "excluded:\n  FOO_BAR: because\n")
    assert spec.excluded(str(p)) == {"FOO_BAR": "because"}


# --- tools/draft_forms.py --encoding EVEX -------------------------------------------------------------

def _draft():
    import draft_forms
    return draft_forms


@pytest.mark.parametrize("code, line", [
    # SDM Vol.2 opcode tables (opcode/instruction column and Tuple Type of the "Instruction Operand Encoding")
    ("EVEX_VADDPS_ZMM_K1Z_ZMM_ZMMM512B32_ER", "W:zmm, zmm, zmm/m512 | EVEX.512.0F.W0 58 /r | tuple=FV mask=k1z bcst=32 rc=er"),
    ("EVEX_VCMPPD_KR_K1_YMM_YMMM256B64_IMM8", "W:k, ymm, ymm/m256, imm8 | EVEX.256.66.0F.W1 C2 /r ib | tuple=FV mask=k1 bcst=64"),
    ("EVEX_VCVTPS2PD_ZMM_K1Z_YMMM256B32_SAE", "W:zmm, ymm/m256 | EVEX.512.0F.W0 5A /r | tuple=HV mask=k1z bcst=32 rc=sae"),
    ("EVEX_VPMOVZXBQ_ZMM_K1Z_XMMM64", "W:zmm, xmm/m64 | EVEX.512.66.0F38.WIG 32 /r | tuple=OVM mask=k1z"),
    ("EVEX_VPMOVZXWD_ZMM_K1Z_YMMM256", "W:zmm, ymm/m256 | EVEX.512.66.0F38.WIG 33 /r | tuple=HVM mask=k1z"),
    ("EVEX_VPMOVZXBD_ZMM_K1Z_XMMM128", "W:zmm, xmm/m128 | EVEX.512.66.0F38.WIG 31 /r | tuple=QVM mask=k1z"),
    ("EVEX_VMOVDDUP_YMM_K1Z_YMMM256", "W:ymm, ymm/m256 | EVEX.256.F2.0F.W1 12 /r | tuple=DUP mask=k1z"),
    ("EVEX_VPSLLD_ZMM_K1Z_ZMM_XMMM128", "W:zmm, zmm, xmm/m128 | EVEX.512.66.0F.W0 F2 /r | tuple=M128 mask=k1z"),
    ("EVEX_VINSERTF32X4_ZMM_K1Z_ZMM_XMMM128_IMM8", "W:zmm, zmm, xmm/m128, imm8 | EVEX.512.66.0F3A.W0 18 /r ib | tuple=T4 mask=k1z"),
    ("EVEX_VBROADCASTI32X2_ZMM_K1Z_XMMM64", "W:zmm, xmm/m64 | EVEX.512.66.0F38.W0 59 /r | tuple=T2 mask=k1z"),
    ("EVEX_VEXTRACTF32X8_YMMM256_K1Z_ZMM_IMM8", "W:ymm/m256, zmm, imm8 | EVEX.512.66.0F3A.W0 1B /r ib | tuple=T8 mask=k1z"),
    ("EVEX_VCVTSD2SI_R64_XMMM64_ER", "W:r64, xmm/m64 | EVEX.LIG.F2.0F.W1 2D /r | tuple=T1F rc=er"),
    ("EVEX_VPINSRD_XMM_XMM_RM32_IMM8", "W:xmm, xmm, r/m32, imm8 | EVEX.128.66.0F3A.W0 22 /r ib | tuple=T1S"),
    ("EVEX_VCOMPRESSPD_ZMMM512_K1Z_ZMM", "W:zmm/m512, zmm | EVEX.512.66.0F38.W1 8A /r | tuple=T1S64 mask=k1z"),
    ("EVEX_VMOVQ_XMM_RM64", "W:xmm, r/m64 | EVEX.128.66.0F.W1 6E /r | tuple=T1S"),
])
def test_draft_evex_lines(code, line):
    """Drafted EVEX lines: operands, encoding and the attributes tuple=, mask=, bcst=, rc= as the SDM gives them."""
    d = _draft().draft(getattr(I.Code, code))
    got = f"{d['operands']} | {d['encoding']} | {d['evex']}"
    assert (got, d["id"]) == (line, None)


def test_draft_evex_every_form_has_iceds_n_and_code():
    """Every EVEX form the drafter can write: the tuple type it infers gives iced's N and N with broadcast (the
    drafter checks, raising CannotDraft otherwise), the id derived from mask=/bcst=/rc= is iced's Code name, and the
    forms it cannot write are the kinds tools/iced_forms.py names."""
    dr = _draft()
    failed, drafted = [], 0
    for code, name, enc in iced_forms.iced_codes():
        if enc != "EVEX": continue
        try: d = dr.draft(code)
        except iced_forms.Unsupported: continue
        except dr.CannotDraft as ex: failed.append(f"{name}: {ex}"); continue
        drafted += 1
        if d["id"] is not None and not name.endswith(("_0F11", "_MAP5_11")):   # (vmovss's/vmovsh's 2nd form)
            failed.append(f"{name}: derived id differs")
    assert not failed and drafted > 1400, failed[:20]


def test_each_form_has_the_oracle_that_knows_it():
    """A form the spec gives to iced-x86 has an iced Code (its id), and a form it gives to llvm-mc-22 has none: nobody
    looks for the latter in iced, and a form iced knows is never checked by the second oracle alone."""
    codes = {n for n in dir(I.Code) if n.isupper()}
    forms = spec.load(str(ROOT / "isa" / "x86_64.yaml"))
    assert {f.oracle for f in forms} <= set(spec.ORACLES)
    unknown = [f"{f.id} (isa/x86_64.yaml:{f.line})" for f in forms if f.oracle == "iced" and f.id not in codes]
    assert not unknown, (f"iced-x86 has no Code for {', '.join(unknown)}: a form iced does not know needs `oracle: "
                         "llvm-mc-22` and its family's `source:` (isa/README.md, \"Adding an instruction\"); its bytes are "
                         "then checked by tests/test_fuzz_llvm.py")
    known = [f"{f.id} (isa/x86_64.yaml:{f.line})" for f in forms if f.oracle == "llvm-mc-22" and f.id in codes]
    assert not known, f"iced-x86 knows {', '.join(known)}: leave its oracle iced (the default)"
