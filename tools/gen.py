#!/usr/bin/env python3
"""Regenerate src/x86gen/_gen from isa/x86_64.yaml and the templates in codegen/.

    python tools/gen.py           write the generated modules, print a summary and their sizes
    python tools/gen.py --check   exit 1, naming the stale files, if the committed ones differ

Both print each generated file's size (bytes, bytes per form) and exit 1 when a module imported at run
time is larger than its budget (`BUDGETS`).
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from codegen import companion, render, spec  # noqa: E402

SPEC_FILES = ["isa/x86_64.yaml", "isa/tinygrad.yaml"]   # tinygrad.yaml: tinygrad backend names, groups, isel

# Size budgets of the generated modules imported at run time, in bytes: fixed + per_form * number of forms.
# Each is a little above the module's size at 1,868 forms after the compaction of issue 10 (the comments), so
# that a template change which makes every form cost more (the table is growing to ~4,000 forms: every
# per-form byte multiplies) fails `--check` and becomes a decision: shrink it, or raise the budget here and
# say why. A generated .py without a budget fails too. The stubs (.pyi) are never imported: no budget.
BUDGETS: dict[str, tuple[int, int]] = {
    "src/x86gen/_gen/__init__.py": (1_000, 0),
    "src/x86gen/_gen/asm_methods.py": (8_000, 12),    # 36,327 B: ~30 method makers (one per shape) and the table of which makes each method
    "src/x86gen/_gen/table/t*.py": (2_000, 200),      # a JSON row per form, its operands, flags and implicit registers as
    # indices (~190 B per form; 310 with them written out, in one file), in 16 modules a first encode loads one of
    "src/x86gen/_gen/table/__init__.py": (48_000, 0),  # the distinct operands, flag and implicit sets, the mnemonics
    "src/x86gen/_gen/encoders/e*.py": (160_000, 70),  # one function per shape, 32 per module; 60 until the string,
    # far-pointer, reserved-NOP and 0x67 forms brought shapes of their own
    "src/x86gen/_gen/encoders/__init__.py": (4_000, 0),
    "src/x86gen/_gen/schema.py": (8_000, 0),           # the row fields (codegen/schema.py) and the row classes (6,000 before them)
    "src/x86gen/_gen/groups.py": (22_000, 44),        # 134 KB at 2,888 forms: 19.5 KB of docs and op-level groups, a row per
    # form that starts with its id (38 until the EVEX ids, EVEX_VADDPS_ZMM_K1Z_ZMM_ZMMM512B32_ER, were a third of them)
    "src/x86gen/_gen/prefixes.py": (8_000, 0),        # the ids of the ~200 forms that take a prefix (not per form)
    "src/x86gen/_gen/ops.py": (3_000, 28),            # 82,148 B at 3,290 forms: the ids, 21 B per form, 36 B per EVEX form
    "src/x86gen/_gen/isel.py": (260_000, 0),          # 188,061 B: the isel tables of isa/tinygrad.yaml (not per form);
    # 200,000 until isel_avx512 (51 KB: zmm and AVX512VL selections) joined the VEX table's 181 KB; 232,595 B until each
    # note was written once (_N) instead of once per key
    "src/x86gen/_gen/reference.py": (48_000, 0),      # 41,948 B: tinygrad's names and sets (not per form)
}


def _sizes(outputs: dict[str, str]) -> dict[str, int]:
    """Bytes per generated file, the shape modules (``encoders/e000.py`` ...) summed as ``encoders/e*.py``."""
    sizes: dict[str, int] = {}
    for rel, text in outputs.items():
        key = re.sub(r"/encoders/e\d+\.py$", "/encoders/e*.py", rel)
        key = re.sub(r"/table/t\d+\.py$", "/table/t*.py", key)
        sizes[key] = sizes.get(key, 0) + len(text.encode("utf-8"))
    return sizes


def budget_errors(outputs: dict[str, str], n_forms: int, budgets: dict[str, tuple[int, int]] = BUDGETS) -> list[str]:
    """What is over its budget: the generated .py modules larger than ``fixed + per_form * n_forms`` bytes, and those
    without a budget."""
    errors = []
    for rel, size in sorted(_sizes(outputs).items()):
        if rel.endswith(".pyi"): continue
        if rel not in budgets: errors.append(f"{rel}: no size budget in tools/gen.py BUDGETS ({size:,} bytes)"); continue
        fixed, per_form = budgets[rel]
        limit = fixed + per_form * n_forms
        if size > limit:
            errors.append(f"{rel}: {size:,} bytes is over its budget of {limit:,} ({fixed:,} + {per_form} per form x {n_forms:,} forms)")
    return errors


def size_lines(outputs: dict[str, str], n_forms: int, budgets: dict[str, tuple[int, int]] = BUDGETS) -> list[str]:
    """One line per generated file: its size, bytes per form and budget."""
    out = []
    for rel, size in sorted(_sizes(outputs).items()):
        if rel in budgets: note = f"budget {budgets[rel][0] + budgets[rel][1] * n_forms:>9,}"
        else: note = "stub, not imported at run time" if rel.endswith(".pyi") else "no budget"
        out.append(f"  {rel:<36} {size:>9,} bytes {size / max(n_forms, 1):7.1f} B/form   {note}")
    return out


GENERATED_HEADER = "# GENERATED by tools/gen.py"


def remove_stale(root: str, extra: list[str]) -> list[str]:
    """Delete the files of ``extra`` (under _gen, not among this run's outputs) that an earlier run generated (their first
    line is `GENERATED_HEADER`: a shape module of a layout with more modules); the others are left alone. Returns the
    ones removed."""
    removed = []
    for rel in extra:
        path = os.path.join(root, rel)
        with open(path, encoding="utf-8", errors="replace") as fh: head = fh.read(len(GENERATED_HEADER))
        if head == GENERATED_HEADER:
            os.remove(path)
            removed.append(rel)
    return removed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only compare; exit 1 if any generated file is stale")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    try:
        forms = spec.load(os.path.join(ROOT, "isa/x86_64.yaml"))
        extra = companion.context(os.path.join(ROOT, "isa/tinygrad.yaml"), forms)
    except spec.SpecError as ex:
        print(f"error: {ex}", file=sys.stderr)
        return 2
    sources = {}
    for rel in SPEC_FILES + sorted("codegen/templates/" + n for n in os.listdir(os.path.join(ROOT, "codegen/templates"))):
        with open(os.path.join(ROOT, rel), "rb") as fh: sources[rel] = fh.read()
    # the row schema first: the code writer that renders the encoders reads rows through it (x86gen.table)
    schema_path = os.path.join(ROOT, render.SCHEMA)
    schema_text = render.render_schema()
    if (open(schema_path, encoding="utf-8").read() if os.path.exists(schema_path) else None) != schema_text:
        if args.check:
            print(f"stale: {render.SCHEMA}", file=sys.stderr)
            print("run `python tools/gen.py` and commit the result", file=sys.stderr)
            return 1
        with open(schema_path, "w", encoding="utf-8", newline="\n") as fh: fh.write(schema_text)
    outputs = render.render_all(forms, sources, extra)
    gen_dir = os.path.join(ROOT, "src/x86gen/_gen")
    stale, changed, unchanged = [], [], []
    existing = {os.path.relpath(os.path.join(d, n), ROOT).replace(os.sep, "/") for d, _dirs, names in os.walk(gen_dir)
                for n in names if n.endswith((".py", ".pyi"))}
    for rel, text in outputs.items():
        path = os.path.join(ROOT, rel)
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old == text: unchanged.append(rel); continue
        stale.append(rel)
        if not args.check:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="\n") as fh: fh.write(text)
            changed.append(rel)
    extra = sorted(existing - set(outputs))
    over = budget_errors(outputs, len(forms))
    if args.check:
        print("sizes:")
        for line in size_lines(outputs, len(forms)): print(line)
        for msg in over: print(f"over budget: {msg}")
        if stale or extra:
            for rel in stale: print(f"stale: {rel}")
            for rel in extra: print(f"not generated by tools/gen.py: {rel}")
            print("run `python tools/gen.py` and commit the result", file=sys.stderr)
            return 1
        if over:
            print("shrink the generated modules or raise BUDGETS in tools/gen.py (say why)", file=sys.stderr)
            return 1
        print(f"generated files up to date ({len(outputs)} files, {len(forms)} forms)")
        return 0
    by_enc = collections.Counter(f.encoding_kind for f in forms)
    by_cpuid = collections.Counter(f.cpuid for f in forms)
    print(f"{len(forms)} forms, {len({f.mnemonic for f in forms})} mnemonics from isa/x86_64.yaml")
    print("  by encoding: " + ", ".join(f"{k} {v}" for k, v in sorted(by_enc.items())))
    print("  by CPUID:    " + ", ".join(f"{k} {v}" for k, v in sorted(by_cpuid.items())))
    for rel in sorted(outputs): print(f"  {'changed  ' if rel in changed else 'unchanged'} {rel}")
    removed = remove_stale(ROOT, extra)
    for rel in extra:
        print(f"  removed  {rel} (generated before, no longer)" if rel in removed else f"  warning: {rel} is not generated by tools/gen.py")
    print("sizes:")
    for line in size_lines(outputs, len(forms)): print(line)
    for msg in over: print(f"error: over budget: {msg}", file=sys.stderr)
    print(f"done in {time.perf_counter() - t0:.2f} s")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
