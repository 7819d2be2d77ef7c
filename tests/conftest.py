"""Test configuration: Hypothesis profiles and the end-of-session report.

Profiles (pick one with HYPOTHESIS_PROFILE=name; without it, ``ci``, whether or not the CI variable is set):

- ``ci`` (the default, and what CI runs): 30 examples per form, derandomized (the same examples on every
  run, so a failure reproduces by running again), no example database, no deadline. Every form is fuzzed
  in every run. A plain ``pytest`` (the README's command) took 8 minutes on a 2-core machine with no other
  test run on it (about 14 CPU-minutes over the two xdist workers), 12-14 minutes while another checkout's
  test run shared the two cores.
- ``dev`` (opt-in): 60 examples per form, random (new examples each run), with the local example database
  (.hypothesis/: failures are replayed first). Several times longer: 49 minutes on a loaded 2-core machine.
- ``thorough`` (opt-in): 1000 examples per form, random, for a long run before a release.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "src") not in sys.path:   # `pytest` from the repo root without PYTHONPATH=src
    sys.path.insert(0, str(ROOT / "src"))

_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                     HealthCheck.filter_too_much])
settings.register_profile("ci", max_examples=30, derandomize=True, database=None, print_blob=True, **_COMMON)
settings.register_profile("dev", max_examples=60, **_COMMON)
settings.register_profile("thorough", max_examples=1000, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or "ci")


def pytest_report_header(config):
    name, s = settings.get_current_profile_name(), settings.default
    more = "; HYPOTHESIS_PROFILE=dev or thorough for more, random examples" if name == "ci" else ""
    return f"hypothesis profile: {name} (max_examples={s.max_examples}, {'derandomized' if s.derandomize else 'random'}){more}"


def pytest_runtest_setup(item):
    """Work around hypothesis's pytest plugin (6.155, still in 6.170): for each parametrized item it wraps the
    test function's settings in new ``Settings(parent=<the previous ones>)``, so with thousands of per-form
    items the parent chain outgrows the recursion limit (RecursionError in ``settings.database`` after ~950
    forms). Each item starts again from the function's own settings."""
    obj = getattr(item, "obj", None)
    fn = getattr(obj, "__func__", obj)
    own = getattr(fn, "_hypothesis_internal_use_settings", None)
    if own is None: return
    first = fn.__dict__.get("_x86gen_own_settings")
    if first is None: fn._x86gen_own_settings = own
    else: fn._hypothesis_internal_use_settings = first


# pytest-xdist: each worker writes its counters (iced_oracle.FUZZ_STATS, FUZZ_FAILED, REPORT) to a file in a
# directory the controller made, which merges them for the summary below.
def pytest_configure(config):
    if not hasattr(config, "workerinput") and getattr(config.option, "numprocesses", None):
        import tempfile
        config._x86gen_reports = tempfile.mkdtemp(prefix="x86gen-reports-")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):   # xdist hook (controller): tell the worker where to write
    node.workerinput["x86gen_reports"] = node.config._x86gen_reports


def pytest_sessionfinish(session, exitstatus):
    where = getattr(session.config, "workerinput", {}).get("x86gen_reports")
    if not where: return
    try:
        import iced_oracle
    except ImportError:  # pragma: no cover
        return
    import json
    with open(os.path.join(where, session.config.workerinput["workerid"] + ".json"), "w") as fh:
        json.dump({"stats": iced_oracle.FUZZ_STATS, "failed": sorted(iced_oracle.FUZZ_FAILED), "report": iced_oracle.REPORT}, fh)


def _merge_worker_reports(config, iced_oracle) -> None:
    where = getattr(config, "_x86gen_reports", None)
    if not where or not os.path.isdir(where): return
    import json
    import shutil
    for name in sorted(os.listdir(where)):
        with open(os.path.join(where, name)) as fh: got = json.load(fh)
        for fid, counts in got["stats"].items():
            mine = iced_oracle.FUZZ_STATS.setdefault(fid, {})
            for k, v in counts.items(): mine[k] = mine.get(k, 0) + v
        iced_oracle.FUZZ_FAILED.update(got["failed"])
        iced_oracle.REPORT.update(got["report"])
    shutil.rmtree(where, ignore_errors=True)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    try:
        import iced_oracle
    except ImportError:  # pragma: no cover - iced-x86 missing: the test modules say so
        return
    _merge_worker_reports(config, iced_oracle)
    lines = []
    stats = iced_oracle.FUZZ_STATS
    fuzzed = {k: s for k, s in stats.items() if s["examples"]}
    if stats:
        bad = sorted(iced_oracle.FUZZ_FAILED)
        total = sum(s["examples"] for s in fuzzed.values())
        corners = sum(s.get("corners", 0) for s in stats.values())
        if fuzzed:
            per = [s["examples"] for s in fuzzed.values()]
            encoded = sum(s["encoded"] for s in fuzzed.values())
            errors = sum(s["errors"] for s in fuzzed.values())
            lines.append(f"fuzz: {len(fuzzed)} forms x {total / len(fuzzed):.0f} examples checked against iced-x86, "
                         f"{len(bad)} mismatches")
            lines.append(f"      ({total} hypothesis examples in all, {min(per)}..{max(per)} per form; {encoded} encoded and "
                         f"matched iced, {errors} raised the expected error; profile {settings.get_current_profile_name()})")
            decorated = sum(s.get("decorated", 0) for s in fuzzed.values())
            evex = sum(s["examples"] for k, s in fuzzed.items() if k.startswith("EVEX_"))
            if decorated:
                lines.append(f"      EVEX: {decorated} of {evex} examples with AVX-512 masks, zeroing, broadcast or rounding/SAE")
        if corners:
            lines.append(f"      + {corners} deterministic corner cases over {sum(1 for s in stats.values() if s.get('corners'))} forms")
        if bad:
            lines.append(f"      forms with a mismatch: {', '.join(bad)}")
    for key in sorted(iced_oracle.REPORT):
        lines.append(iced_oracle.REPORT[key])
    if lines:
        terminalreporter.write_sep("=", "x86gen vs iced-x86")
        for ln in lines:
            terminalreporter.write_line(ln)
