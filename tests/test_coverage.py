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
    counts = {"LEGACY": 0, "VEX": 0, "EVEX": 0}
    names = {getattr(I.EncodingKind, k): k for k in counts}
    for n in dir(I.Code):
        if not n.isupper(): continue
        oc = I.OpCodeInfo(getattr(I.Code, n))
        if oc.mode64 and oc.is_instruction and oc.encoding in names: counts[names[oc.encoding]] += 1
    assert counts == {"LEGACY": 1627, "VEX": 996, "EVEX": 1733}
    universe = {e: sum(1 for _c, _n, enc in iced_forms.iced_codes() if enc == e) for e in counts}
    assert universe == counts


def test_every_spec_form_and_exclusion_is_an_iced_form(cov):
    assert cov.unknown == []
    assert not (set(cov.excluded) & cov.spec_ids)


def test_last_line_counts_the_spec(cov):
    forms = spec.load(str(ROOT / "isa" / "x86_64.yaml"))
    by_enc = {"LEGACY": 0, "VEX": 0, "EVEX": 0}
    for f in forms: by_enc[f.encoding_kind.upper()] += 1
    assert cov.last_line() == f"LEGACY {by_enc['LEGACY']}/1627 VEX {by_enc['VEX']}/996 EVEX {by_enc['EVEX']}/1733"
    assert C.report(cov).splitlines()[-1] == cov.last_line()


def test_every_missing_form_has_a_reason(cov):
    for n in cov.missing:
        assert cov.reason(n)
    assert cov.reason("XBEGIN_REL32") == "xbegin's rel16/rel32"
    assert cov.reason("LFS_R32_M1632") == "memory operand of 6 bytes"


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
