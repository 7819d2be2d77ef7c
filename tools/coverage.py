#!/usr/bin/env python3
"""How much of x86-64 the spec covers, counted against iced-x86's list of instruction forms.

    python tools/coverage.py                 covered/total per encoding and CPUID feature, the missing
                                             forms (with the reason the spec cannot describe them yet)
                                             and the excluded ones (with the reason the YAML gives)
    python tools/coverage.py --markdown      the coverage tables of README.md
    python tools/coverage.py --write-readme  replace the tables in README.md (between the coverage markers)

The universe is every iced `Code` that is an instruction valid in 64-bit mode (`OpCodeInfo.mode64`,
`is_instruction`) with a LEGACY, VEX, EVEX, XOP or 3DNow! encoding (MVEX, Knights Corner's, is not counted).
A form is covered when isa/x86_64.yaml has it (same id as iced's Code name): every spec form iced knows is
fuzzed against iced by tests/test_fuzz_iced.py and its roles checked by tests/test_roles_iced.py, so a form
that fails those is not in the spec. A second section counts the spec's `oracle: llvm-mc-22` forms against
the forms LLVM 22 knows and iced does not (tools/llvm_forms.py: from LLVM 22's decoder and iced's, committed
as tools/data/llvm22_forms.tsv; tests/test_fuzz_llvm.py fuzzes them), per extension, with the missing ones
listed. The last line is

    LEGACY a/1627 VEX b/996 EVEX c/1733 … LLVM22+ d/e
"""
from __future__ import annotations

import argparse
import collections
import importlib.metadata
import os
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tools"))

import iced_forms  # noqa: E402
import llvm_forms  # noqa: E402

from codegen import spec  # noqa: E402

SPEC = os.path.join(ROOT, "isa/x86_64.yaml")
README = os.path.join(ROOT, "README.md")
BEGIN, END = "<!-- coverage:begin (python tools/coverage.py --write-readme) -->", "<!-- coverage:end -->"
NOT_YET = "not yet in the spec"


class Coverage:
    """The comparison of the spec with iced's forms."""

    def __init__(self, spec_path: str = SPEC):
        forms = spec.load(spec_path)
        self.spec_ids = {f.id for f in forms if f.oracle == "iced"}
        # counted in the LLVM 22 section; the REX2 forms (APX), which the loader derives from the legacy ones, apart
        self.beyond_iced = {f.id: f for f in forms if f.oracle != "iced" and f.encoding_kind != "rex2"}
        self.rex2 = [f.id for f in forms if f.encoding_kind == "rex2"]
        self.excluded = spec.excluded(spec_path)
        self.universe = {name: (code, enc) for code, name, enc in iced_forms.iced_codes() if enc in iced_forms.COUNTED}
        # the second section: the forms LLVM 22 knows and iced does not (tools/llvm_forms.py, tools/data/llvm22_forms.tsv)
        self.llvm = {u.id: u for u in llvm_forms.universe()}
        self.llvm_covered = {n for n in self.llvm if n in self.beyond_iced}
        self.llvm_excluded = {n: self.excluded[n] for n in self.llvm if n in self.excluded}
        self.llvm_missing = {n for n in self.llvm if n not in self.beyond_iced and n not in self.excluded}
        # ids neither list counts: a typo, or a form given the wrong oracle (tests/test_coverage.py checks that too)
        self.unknown = sorted((self.spec_ids | set(self.excluded) | set(self.beyond_iced)) - set(self.universe) - set(self.llvm))
        self.covered = {n for n in self.universe if n in self.spec_ids}
        self.missing = {n for n in self.universe if n not in self.spec_ids and n not in self.excluded}
        self.cpuid = {n: iced_forms.cpuid_name(code) for n, (code, _) in self.universe.items()}

    def reason(self, name: str) -> str:
        """Why a missing form is missing: what the spec cannot describe yet, else `NOT_YET`."""
        code, enc = self.universe[name]
        return iced_forms.unsupported_reason(code) or NOT_YET

    def by_encoding(self) -> list[tuple[str, int, int, int]]:
        """(encoding, covered, excluded, total) for LEGACY, VEX, EVEX."""
        rows = []
        for enc in iced_forms.COUNTED:
            names = [n for n, (_, e) in self.universe.items() if e == enc]
            rows.append((enc, sum(n in self.covered for n in names), sum(n in self.excluded for n in names), len(names)))
        return rows

    def by_cpuid(self) -> list[tuple[str, str, int, int]]:
        """(encoding, CPUID feature(s), covered, total), by encoding then feature."""
        c: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0])
        for n, (_, enc) in self.universe.items():
            c[enc, self.cpuid[n]][1] += 1
            c[enc, self.cpuid[n]][0] += n in self.covered
        order = {e: i for i, e in enumerate(iced_forms.COUNTED)}
        return [(e, f, a, b) for (e, f), (a, b) in sorted(c.items(), key=lambda kv: (order[kv[0][0]], kv[0][1]))]

    def by_extension(self) -> list[tuple[str, int, int, int]]:
        """(extension, covered, excluded, total) of the LLVM 22 forms beyond iced, by extension."""
        c: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
        for n, u in self.llvm.items():
            c[u.extension][0] += n in self.llvm_covered
            c[u.extension][1] += n in self.llvm_excluded
            c[u.extension][2] += 1
        return [(e, *v) for e, v in sorted(c.items())]

    def last_line(self) -> str:
        return " ".join([f"{enc} {cov}/{total}" for enc, cov, _x, total in self.by_encoding()]
                        + [f"LLVM22+ {len(self.llvm_covered)}/{len(self.llvm)}"])


def report(cov: Coverage) -> str:
    out = [f"x86gen spec coverage against iced-x86 {importlib.metadata.version('iced-x86')} (instruction forms valid in 64-bit mode)", ""]
    out.append(f"{'encoding':10} {'covered':>8} {'excluded':>9} {'missing':>8} {'total':>6}")
    for enc, a, x, t in cov.by_encoding():
        out.append(f"{enc:10} {a:8} {x:9} {t - a - x:8} {t:6}")
    out += ["", "by CPUID feature (covered/total):"]
    for enc in iced_forms.COUNTED:
        items = [f"{f} {a}/{t}" for e, f, a, t in cov.by_cpuid() if e == enc]
        out += textwrap.wrap(f"{enc}: " + ", ".join(items), 110, subsequent_indent="    ")
    by_reason: dict[str, list[str]] = collections.defaultdict(list)
    for n in sorted(cov.missing): by_reason[f"{cov.universe[n][1]}: {cov.reason(n)}"].append(n)
    out += ["", f"missing forms ({len(cov.missing)}), by reason:"]
    for why, names in sorted(by_reason.items(), key=lambda kv: (kv[0].split(":")[0] == "EVEX", -len(kv[1]), kv[0])):
        out += textwrap.wrap(f"{why} ({len(names)}): " + ", ".join(names), 110, initial_indent="  ", subsequent_indent="      ")
    out += ["", f"excluded forms ({len(cov.excluded)}), with the reason in isa/x86_64.yaml:"]
    for n, why in sorted(cov.excluded.items()): out.append(f"  {n}: {why}")
    out += ["", *llvm_report(cov)]
    out += ["", f"REX2 (APX) {len(cov.rex2)}: forms the loader derives from the legacy ones (codegen/spec.py `rex2_forms`, "
                "isa/README.md \"REX2\"), each fuzzed against llvm-mc-22 by tests/test_fuzz_llvm.py"]
    if cov.unknown:
        out += ["", f"ids that are not counted iced forms ({len(cov.unknown)}): {', '.join(cov.unknown)}"]
    out.append(cov.last_line())
    return "\n".join(out)


def llvm_report(cov: Coverage) -> list[str]:
    """The second section: the forms LLVM 22 knows and iced-x86 does not, covered/total per extension, the missing
    ones with their reasons."""
    out = ["LLVM 22 forms beyond iced-x86 (tools/data/llvm22_forms.tsv: what libLLVM-22 decodes and iced-x86 does not, APX "
           "left out; tools/llvm_forms.py)", "",
           f"{'extension':14} {'covered':>8} {'excluded':>9} {'missing':>8} {'total':>6}"]
    for e, a, x, t in cov.by_extension(): out.append(f"{e:14} {a:8} {x:9} {t - a - x:8} {t:6}")
    a, t = len(cov.llvm_covered), len(cov.llvm)
    out.append(f"{'all':14} {a:8} {len(cov.llvm_excluded):9} {len(cov.llvm_missing):8} {t:6}"
               + (f"   ({100 * a / t:.1f}% covered)" if t else ""))
    by_reason: dict[str, list[str]] = collections.defaultdict(list)
    for n in sorted(cov.llvm_missing): by_reason[f"{cov.llvm[n].extension}: {NOT_YET}"].append(n)
    out += ["", f"missing forms beyond iced ({len(cov.llvm_missing)}), by reason:"]
    for why, names in sorted(by_reason.items()):
        out += textwrap.wrap(f"{why} ({len(names)}): " + ", ".join(names), 110, initial_indent="  ", subsequent_indent="      ")
    if cov.llvm_excluded:
        out += ["", f"excluded forms beyond iced ({len(cov.llvm_excluded)}), with the reason in isa/x86_64.yaml:"]
        out += [f"  {n}: {why}" for n, why in sorted(cov.llvm_excluded.items())]
    return out


def markdown(cov: Coverage) -> str:
    """The README's coverage tables (per encoding; per CPUID feature in a collapsed section)."""
    out = ["| encoding | covered | excluded | missing | total |", "|---|---:|---:|---:|---:|"]
    for enc, a, x, t in cov.by_encoding(): out.append(f"| {enc} | {a} | {x} | {t - a - x} | {t} |")
    out += ["", "<details><summary>Per CPUID feature (covered/total)</summary>", "",
            "| encoding | CPUID feature | covered | total |", "|---|---|---:|---:|"]
    for e, f, a, t in cov.by_cpuid(): out.append(f"| {e} | {f} | {a} | {t} |")
    out += ["", "</details>", "", "Forms beyond iced-x86 (LLVM 22 is their oracle):", "",
            "| extension | covered | excluded | missing | total |", "|---|---:|---:|---:|---:|"]
    for e, a, x, t in cov.by_extension(): out.append(f"| {e} | {a} | {x} | {t - a - x} | {t} |")
    out += ["", f"`python tools/coverage.py` → `{cov.last_line()}`"]
    return "\n".join(out)


def readme_with_table(text: str, table: str) -> str:
    """README text with the block between the coverage markers replaced by ``table``."""
    i, j = text.find(BEGIN), text.find(END)
    if i < 0 or j < i: raise SystemExit(f"README.md has no coverage markers ({BEGIN} … {END})")
    return text[:i + len(BEGIN)] + "\n" + table + "\n" + text[j:]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--markdown", action="store_true", help="print the README tables")
    ap.add_argument("--write-readme", action="store_true", help="update the tables in README.md")
    args = ap.parse_args(argv)
    cov = Coverage()
    if cov.unknown:
        print(f"error: spec/excluded ids that are neither counted iced forms of 64-bit mode nor LLVM 22 forms beyond iced "
              f"(tools/data/llvm22_forms.tsv): {', '.join(cov.unknown)}", file=sys.stderr)
        return 1
    if args.write_readme:
        with open(README, encoding="utf-8") as fh: text = fh.read()
        with open(README, "w", encoding="utf-8", newline="\n") as fh: fh.write(readme_with_table(text, markdown(cov)))
        print(cov.last_line())
    elif args.markdown: print(markdown(cov))
    else: print(report(cov))
    return 0


if __name__ == "__main__":
    sys.exit(main())
