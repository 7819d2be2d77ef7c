"""The real workload: machine code of tinygrad's x86 backend (about 620,000 instructions).

Every kernel is decoded with iced-x86; each instruction is then encoded by x86gen three ways:

- the form with the same id as iced's Code, fed iced's operands: the bytes must equal iced's own
  re-encoding of the instruction (not the corpus bytes: tests/data/README.md says 3.3% of them carry a
  redundant 0x40 REX prefix; that is counted and each such difference checked to be exactly that).
  iced's Encoder keeps a decoded disp32 even where a disp8 fits (a few corpus instructions have
  such a `[rsp+0x50]`), so x86gen is compared with iced's re-encoding with the displacement size
  reset (`reencode_canonical`), and those instructions are counted;
- `x86gen.encode(mnemonic, *operands)` and `x86gen.assemble(<iced's Intel text>)`: the bytes must
  decode to the same instruction (same semantics, maybe another form) and be no longer.

Identical instructions are checked once (an instruction's bytes and, for RIP-relative operands and
branches, its address identify it), so every corpus instruction is covered.
"""
from __future__ import annotations

import gzip
import json
import os
import time
from collections import Counter
from pathlib import Path

import iced_x86 as I
import pytest
from iced_oracle import CODE_NAMES, REPORT, decode_one, describe, intel, reencode, reencode_canonical, semantics, to_x86gen

import x86gen

pytestmark = pytest.mark.xdist_group("corpus")   # its module fixture runs once, on one worker

CORPUS = Path(__file__).resolve().parent / "data" / "tinygrad-ops-kernels.jsonl.gz"   # tests/data/README.md
EXPECTED_CODES = 111            # tests/data/README.md: "111 distinct iced `Code` values"
LEGACY_PREFIXES = {0x66, 0xF2, 0xF3}
# Checking every distinct instruction (98,544 distinct of 631,469) took 39-80 s in full runs on a shared 2-core
# machine (31 s with the corpus tests alone), a small part of the run, so CI checks them all too;
# X86GEN_CORPUS=sample checks a deterministic 1-in-5 sample.
SAMPLE_EVERY = 5


class Item:
    __slots__ = ("ins", "data", "count", "where")

    def __init__(self, ins, data, where):
        self.ins, self.data, self.count, self.where = ins, data, 0, where


@pytest.fixture(scope="module")
def corpus():
    assert CORPUS.exists(), f"the corpus is part of the repository: {CORPUS} is missing"
    t0 = time.perf_counter()
    kernels = 0
    total = 0
    items: dict[tuple, Item] = {}
    codes: Counter = Counter()
    with gzip.open(CORPUS, "rt") as fh:
        for line in fh:
            row = json.loads(line)
            kernels += 1
            data = bytes.fromhex(row["hex"])
            for ins in I.Decoder(64, data, ip=0):
                assert ins.code != I.Code.INVALID, f"{row['test']} {row['kernel']}: undecodable bytes at {ins.ip:#x}"
                b = data[ins.ip:ins.ip + ins.len]
                ip_dependent = ins.is_ip_rel_memory_operand or (ins.op_count and ins.op0_kind == I.OpKind.NEAR_BRANCH64)
                key = (b, ins.ip) if ip_dependent else (b,)
                it = items.get(key)
                if it is None:
                    it = items[key] = Item(ins, b, f"{row['kernel']}+{ins.ip:#x} ({row['test']})")
                it.count += 1
                codes[ins.code] += 1
                total += 1
    return {"kernels": kernels, "total": total, "items": items, "codes": codes, "load_s": time.perf_counter() - t0}


def _mode() -> str:
    return "sample" if os.environ.get("X86GEN_CORPUS") == "sample" else "all"


def test_corpus_codes_are_all_x86gen_forms(corpus):
    codes = corpus["codes"]
    missing = sorted(CODE_NAMES[c] for c in codes if CODE_NAMES[c] not in {f.id for f in x86gen.all_forms()})
    assert len(codes) == EXPECTED_CODES, f"corpus has {len(codes)} distinct codes, README says {EXPECTED_CODES}"
    assert not missing, (f"{len(missing)} of the corpus's {len(codes)} iced codes have no x86gen form: "
                         + ", ".join(f"{m} ({codes[getattr(I.Code, m)]}x)" for m in missing))


def redundant_rex(corpus_bytes: bytes, canonical: bytes) -> bool:
    """Is ``corpus_bytes`` ``canonical`` plus one 0x40 REX prefix (after any legacy prefixes)?"""
    if len(corpus_bytes) != len(canonical) + 1: return False
    i = 0
    while i < len(corpus_bytes) and corpus_bytes[i] in LEGACY_PREFIXES: i += 1
    return corpus_bytes[i] == 0x40 and corpus_bytes[:i] + corpus_bytes[i + 1:] == canonical


def test_corpus_reencodes_like_iced(corpus):
    """Form-level encoding == iced's re-encoding; encode() and assemble() decode to the same
    instruction in no more bytes. Every distinct corpus instruction (or a 1-in-5 sample, see _mode)."""
    items = list(corpus["items"].values())
    mode = _mode()
    if mode == "sample": items = items[::SAMPLE_EVERY]
    t0 = time.perf_counter()
    failures: list[str] = []
    checked = checked_w = differ = differ_w = rex_w = long_disp = form_bad = 0
    shorter_encode = shorter_asm = 0
    for it in items:
        ins = it.ins
        ip = ins.ip
        plain = reencode(ins, ip)
        canonical = reencode_canonical(ins, ip)
        if canonical != plain:
            long_disp += it.count
            if not (len(canonical) == len(plain) - 3 and semantics(decode_one(canonical, ip)) == semantics(ins)):
                failures.append(f"{it.where}: iced re-encodes {plain.hex(' ')}, canonically {canonical.hex(' ')}")
        if plain != it.data:
            differ += 1
            differ_w += it.count
            if redundant_rex(it.data, plain): rex_w += it.count
            else: failures.append(f"{it.where}: corpus {it.data.hex(' ')} vs iced {plain.hex(' ')}: not a redundant REX")
        name = CODE_NAMES[ins.code]
        try:
            form = x86gen.get_form(name)
        except x86gen.EncodeError:
            continue   # reported by test_corpus_codes_are_all_x86gen_forms
        mn, ops = to_x86gen(ins)
        sem = semantics(ins)
        try:
            rel = bool(form.operands) and form.operands[0].kind.startswith("rel")
            got = form(*ops, ip=ip) if rel else form(*ops)
            if got != canonical:
                form_bad += 1
                failures.append(f"{it.where}: {name}{ops}: x86gen {got.hex(' ')}, iced {describe(canonical, ip)}")
            b2 = x86gen.encode(mn, *ops, ip=ip)
            ins2 = decode_one(b2, ip)
            if semantics(ins2) != sem or len(b2) > len(canonical):
                failures.append(f"{it.where}: encode({mn}, {ops}) = {describe(b2, ip)}, iced {describe(canonical, ip)}")
            shorter_encode += len(b2) < len(canonical)
            text = intel(ins)
            b3 = x86gen.assemble(text, ip=ip)
            ins3 = decode_one(b3, ip)
            if semantics(ins3) != sem or len(b3) > len(canonical):
                failures.append(f"{it.where}: assemble({text!r}) = {describe(b3, ip)}, iced {describe(canonical, ip)}")
            shorter_asm += len(b3) < len(canonical)
        except (x86gen.EncodeError, AssertionError) as ex:
            failures.append(f"{it.where}: {intel(ins)!r} ({name}): {type(ex).__name__}: {ex}")
        checked += 1
        checked_w += it.count
        if len(failures) > 50: break
    dt = time.perf_counter() - t0
    total = corpus["total"]
    n_items = len(corpus["items"])
    scope = ("all instructions" if mode == "all" else f"a deterministic 1-in-{SAMPLE_EVERY} sample of the distinct instructions")
    REPORT["corpus"] = (
        f"corpus: {corpus['kernels']} kernels, {total} instructions ({n_items} distinct), {len(corpus['codes'])} iced codes; "
        f"checked {scope}: {checked} distinct = {checked_w} instructions in {dt:.1f}s (+{corpus['load_s']:.1f}s decoding)\n"
        f"        form-level bytes == iced re-encoding: {checked - form_bad}/{checked} distinct; "
        f"encode()/assemble() same instruction and no longer: {checked - len(failures)}/{checked} "
        f"(shorter than iced's form: encode {shorter_encode}, assemble {shorter_asm})\n"
        f"        corpus bytes != iced re-encoding: {differ_w} instructions "
        f"({100 * differ_w / max(checked_w, 1):.1f}%, {differ} distinct), "
        f"{rex_w} of them exactly one redundant 0x40 REX prefix; "
        f"{long_disp} instructions with a disp32 where a disp8 fits (x86gen and canonical iced: disp8)")
    assert not failures, f"{len(failures)} corpus instructions misencoded:\n" + "\n".join(failures[:50])
    assert differ_w == rex_w
