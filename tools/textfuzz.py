"""Run the differential text fuzz (tests/test_text_diff_gnu.py) outside pytest and print its counts.

    python tools/textfuzz.py                       # CI size (the test's seed and counts)
    python tools/textfuzz.py --thorough            # the thorough mode's counts
    python tools/textfuzz.py --lines 50000 --programs 5000 --seed 7 --minutes 5 --examples 3

Prints the summary line (lines, programs, identical, equivalent by reason, refused by both,
mismatches), then the mismatches grouped by class (known open classes named), a few examples each.
With --minutes, runs batches with successive seeds until the time is up. Exit status 1 if any
mismatch was found. Run from the repository root (it puts src/ and tests/ on sys.path).
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--src", default=os.path.join(ROOT, "src"), help="x86gen source tree to fuzz (default: this checkout's src/)")
    p.add_argument("--thorough", action="store_true", help="the thorough mode's counts")
    p.add_argument("--seed", type=int)
    p.add_argument("--lines", type=int)
    p.add_argument("--programs", type=int)
    p.add_argument("--minutes", type=float, help="repeat with seed, seed+1, ... until this much time has passed")
    p.add_argument("--examples", type=int, default=2, help="examples printed per mismatch class")
    a = p.parse_args(argv)
    sys.path[:0] = [os.path.abspath(a.src), os.path.join(ROOT, "tests")]
    import test_text_diff_gnu as T
    print(f"x86gen from {T.x86gen.__file__}")
    if a.thorough: os.environ["X86GEN_TEXTFUZZ"] = "thorough"
    seed, n_lines, n_programs = T.budget()
    seed = a.seed if a.seed is not None else seed
    n_lines = a.lines if a.lines is not None else n_lines
    n_programs = a.programs if a.programs is not None else n_programs
    total = T.Stats()
    t0 = time.time()
    seeds = []
    while True:
        s = T.run(seed, n_lines, n_programs)
        seeds.append(seed)
        total.lines += s.lines
        total.programs += s.programs
        total.counts.update(s.counts)
        total.reasons.update(s.reasons)
        total.mismatches += s.mismatches
        if not a.minutes or time.time() - t0 > a.minutes * 60: break
        seed += 1
    print(total.summary() + f" (seeds {seeds[0]}..{seeds[-1]}, {time.time() - t0:.0f} s)")
    still_open = T.open_classes()
    print("open known classes (a reproducer still mismatches): " + ("; ".join(sorted(still_open)) or "none"))
    if total.mismatches:
        def cls(m): return T.known_class(m, still_open) or "(no open known class)"
        by = collections.Counter(cls(m) for m in total.mismatches)
        print("mismatch classes: " + "; ".join(f"{n} x {k}" for k, n in by.most_common()))
        groups = collections.defaultdict(list)
        for m in total.mismatches: groups[(cls(m), m.reason)].append(m)
        for (k, reason), ms in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            print(f"\n{len(ms)} x {k}: {reason}")
            for m in sorted(ms, key=lambda m: len(m.text))[:a.examples]:
                print(f"    {m.text!r}  [{', '.join(m.features)}]\n        x86gen: {m.x86gen[:300]}\n        GNU as: {m.gnu[:300]}")
    return 1 if total.mismatches else 0   # (the pytest test xfails instead when all are of open known classes)


if __name__ == "__main__":
    sys.exit(main())
