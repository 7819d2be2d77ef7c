"""Every form iced-x86 does not know, byte for byte against LLVM 22 (llvm-mc-22, llvm-objdump-22).

The forms with `oracle: llvm-mc-22` in the spec (isa/README.md "Oracles": AVX10.2, the newest AMX, MOVRS,
USER_MSR, MSR_IMM, SM4's EVEX forms…) have no iced Code, so tests/test_fuzz_iced.py cannot check them. Here each of
them gets instances written as Intel text from the form's operand kinds (`instances`: registers 0-31 of EVEX forms
and 0-15 of the others, memory with SIB, rbp/r13/rsp/r12 bases, index-only, RIP-relative, disp8*N and disp32 edges,
immediates at their edges, and the mask, ``{z}``, broadcast and rounding the form allows), in LLVM's own Intel spelling
and never from x86gen's formatter, and each instance must hold:

- **bytes**: `x86gen.assemble(text)` and the form's own door (`Instruction.of_form(id, *parsed operands)`) give the
  bytes llvm-mc-22 gives for the same text (``{evex}`` is written where the operands alone would let a VEX form
  of the mnemonic win, as both assemblers read it);
- **decoded back**: llvm-objdump-22 reads x86gen's bytes as exactly one instruction, whose text is the instance's
  (spacing and number spelling aside) or, where LLVM prints an alias (``vcmpunordps`` for ``vcmpps …, 3``), text that
  llvm-mc-22 assembles to the same bytes;
- **read back**: x86gen assembles llvm-objdump-22's text to the same bytes (the dialect check of the iced forms).

One llvm-mc-22 process assembles every instance of every form, one more pair of processes decodes them, so the module
costs a few seconds (`_results`). On top, `test_llvm_hypothesis` lets Hypothesis draw batches of random instances of
random forms (an llvm-mc-22 run per batch: `max_examples` batches in the profile). A form whose instances LLVM 22
refuses all fails by name with LLVM's message; without llvm-mc-22 every test here skips with `llvm_oracle.MISSING`.
"""
from __future__ import annotations

import functools
import os
import random
import re
import sys
from pathlib import Path

import llvm_oracle as L
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracles import forms_checked_by

import x86gen

pytestmark = pytest.mark.skipif(not L.HAVE_LLVM22, reason=L.MISSING)

FORMS = forms_checked_by("llvm-mc-22")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from llvm_forms import DECODE_ONLY  # noqa: E402

# Forms LLVM 22 decodes but never assembles (tools/llvm_forms.py `DECODE_ONLY`: AVX10.2's zero-extending vmovd/vmovw
# stores, whose text llvm-mc-22 reads as an older store or load of the same meaning): their own door is checked by
# llvm-objdump-22 alone, which must read the door's bytes as that mnemonic with the same operands. (LLVM prints their
# register form with ModRM.reg first and vmovw's m16 as `dword ptr`: the operands are compared as a set, sizes aside.)
DECODE_ONLY_IDS = {f.id for f in FORMS if (f.mnemonic, f.row.encoding) in DECODE_ONLY}
R = x86gen.REGISTERS
SIZE_WORDS = {8: "byte", 16: "word", 32: "dword", 64: "qword", 80: "tbyte", 128: "xmmword", 256: "ymmword",
              512: "zmmword"}
GPR64 = [f"r{n}" for n in ("ax", "cx", "dx", "bx", "sp", "bp", "si", "di")] + [f"r{i}" for i in range(8, 16)]
INDEXES = [r for r in GPR64 if r != "rsp"]
# a REX2 form's addresses draw from APX's registers too (r20 and r28 are indexes: X4 makes SIB.index 100 one, APX spec
# 3.1.2.1), half of them r16-r31; its general registers from all 32, its other registers from 0-15
EGPR64 = [f"r{i}" for i in range(16, 32)]
GPRS = ("r8", "r16", "r32", "r64")
# disp8*N edges are scaled per form (`_disps`); these are the plain ones
DISPS = [0, 8, -8, 127, -128, 128, -129, 0x7FFFFFFF, -0x80000000]
ROUNDING = ["{rn-sae}", "{rd-sae}", "{ru-sae}", "{rz-sae}"]


class Unbuildable(Exception):
    """An operand kind these instances cannot write (the message names it)."""


def _reg_names(cls: str, evex: bool) -> list[str]:
    """The registers of class ``cls`` an instance draws from: 0-31 with ``evex`` (True for an EVEX form's vector
    registers and a REX2 form's general ones), else 0-15."""
    regs = [r for r in R.values() if r.kind == cls and (evex or not r.hi16)]
    if cls == "r8": regs = [r for r in regs if r.name not in ("ah", "ch", "dh", "bh")]   # no REX-less high bytes here
    if not regs: raise Unbuildable(f"no registers of class {cls!r}")
    return [r.name for r in sorted(regs, key=lambda r: r.num)]


def _disps(form) -> list[int]:
    n = form.disp8_n or 1
    return DISPS + [127 * n, -128 * n, 128 * n, n + 1] if n > 1 else DISPS


def _address(rng: random.Random, form, sib_only: bool = False) -> str:
    shape = rng.choice(["base", "base", "base+index", "base+index", "index", "rip", "special"])
    if sib_only and shape in ("rip", "index"): shape = "base+index"
    disp = rng.choice(_disps(form))
    if shape == "rip": return f"[rip {'-' if disp < 0 else '+'} {abs(disp)}]"
    parts = []
    rex2 = form.encoding_kind == "rex2"
    bases, indexes = (GPR64 + EGPR64, INDEXES + EGPR64 * 2) if rex2 else (GPR64, INDEXES)
    if shape in ("base", "base+index"): parts.append(rng.choice(bases if not rex2 or rng.random() < 0.5 else EGPR64))
    if shape == "special": parts.append(rng.choice(["rsp", "rbp", "r12", "r13"] + (["r20", "r21", "r28", "r29"] if rex2 else [])))
    if shape in ("base+index", "index"): parts.append(f"{rng.choice([1, 2, 4, 8])}*{rng.choice(indexes)}")
    text = " + ".join(parts)
    if disp or not parts: text += f" {'-' if disp < 0 else '+'} {abs(disp)}" if parts else str(disp & 0xFFFFFFFF)
    return f"[{text}]"


def _imm(rng: random.Random, bits: int) -> int:
    # an imm32 up to 0x7fffffff: LLVM 22 reads urdmsr's/rdmsr's imm32 (an MSR address) as signed and refuses larger
    # ones, which x86gen takes as GNU as does (tests/test_llvm22_forms_text.py has GNU as's bytes for them)
    top = (1 << bits) - 1 if bits < 32 else (1 << 31) - 1
    return rng.choice([0, 1, top, top >> 1, rng.randrange(top + 1)])


# Where LLVM's text has a shorter form than the one asked for, a REX2 instance is written so that only the form asked
# for fits (llvm-mc-22 takes `{rex2}` as "REX2", not as "this form"): LLVM picks 83 /n ib for an 81 /n or 69 immediate
# that fits simm8, D0/D1 /n for a C0/C1 count of 1, the accumulator's own opcode (04/05 …, A8/A9) for al/ax/eax/rax
# with 80/81/F6/F7, 50+r/58+r for push/pop of a register, 90+r for xchg with the accumulator, and C7 /0 for a mov
# r64, imm64 that fits simm32; and it puts xchg's first register in ModRM.reg (87 /r read as `xchg r, r/m`).
def _rex2_imm(form, o, rng: random.Random) -> int:
    if o.sext and o.imm == 8: return rng.choice([0, 1, 127, -128, -1, rng.randrange(-128, 128)])
    if form.opcode_map == 0 and form.opcode in (0xC0, 0xC1): return rng.choice([0, 2, 127, 255, rng.randrange(2, 256)])
    if o.imm == 64: return rng.choice([1 << 32, (1 << 64) - 1 - (1 << 31), (1 << 63) - 1, rng.randrange(1 << 32, 1 << 63)])
    v = _imm(rng, o.imm)
    if form.opcode_map == 0 and form.opcode in (0x81, 0x69):   # outside simm8, as an unsigned o.imm-bit value
        top = min((1 << o.imm) - 129, (1 << 31) - 1)
        v = rng.choice([128, top, rng.randrange(128, top + 1)])
    return v


def _rex2_register_only(form) -> bool:
    """Is the r/m operand of this REX2 form written as memory only (push/pop r/m, xchg r/m, r: `_rex2_imm`)?"""
    return form.opcode_map == 0 and (form.opcode in (0x86, 0x87, 0x8F) or (form.opcode == 0xFF and form.modrm == "6"))


def _rex2_avoid(form, o) -> set[int]:
    """Register numbers a REX2 instance does not write for operand ``o`` (`_rex2_imm`): the accumulator where LLVM has a
    shorter opcode for it, cs as mov's destination (#UD: x86gen refuses it)."""
    if form.opcode_map != 0: return set()
    # (83 /n ib too: for ax, 66 83 /n ib and 66 05 iw … are both 4 bytes, and the read-back of the legacy text LLVM
    # prints, `add ax, -0x25`, is x86gen's 66 05 db ff where llvm-mc-22 writes 66 83 c0 db: a tie, no REX2 form)
    if o.loc == "rm" and form.opcode in (0x80, 0x81, 0x83, 0xF6, 0xF7): return {0}
    if o.loc == "opc" and 0x90 <= form.opcode <= 0x97: return {0}
    if form.opcode == 0x8E and o.reg == "sreg": return {1}
    return set()


def instance(form, rng: random.Random, use_memory: bool) -> str:
    """One instance of ``form`` as LLVM 22's Intel text (LLVM's own spelling of masks, broadcast and rounding)."""
    evex = form.encoding_kind == "evex"
    rex2 = form.encoding_kind == "rex2"
    words: list[str] = []
    rm_is_memory = False
    bcst = False
    for o in form.operands:
        if o.loc == "fixed": words.append(o.reg)
        elif o.kind == "1": words.append("1")   # the shifts' count of one (D0/D1)
        elif o.imm is not None: words.append(str(_rex2_imm(form, o, rng) if rex2 else _imm(rng, o.imm)))
        elif o.kind.startswith(("vm", "rel", "moffs")) or o.kind == "kp1": raise Unbuildable(f"operand kind {o.kind!r}")
        elif o.mem is not None and (o.reg is None or use_memory or (rex2 and _rex2_register_only(form))):
            rm_is_memory = True
            addr = _address(rng, form, sib_only=o.kind == "sibmem")
            if form.evex_bcst and o.loc == "rm" and rng.random() < 0.4:
                bcst = True
                words.append(f"{SIZE_WORDS[form.evex_bcst]} ptr {addr}{{1to{o.mem // form.evex_bcst}}}")
            else:
                words.append(f"{SIZE_WORDS[o.mem]} ptr {addr}" if o.mem in SIZE_WORDS else addr)
        elif o.reg == "tmm":   # AMX: the tile operands must be distinct registers (#UD otherwise; llvm-mc-22 refuses)
            words.append(rng.choice([r for r in _reg_names("tmm", evex) if r not in words]))
        elif o.reg is not None:
            # registers 16-31: an EVEX form's vector ones, a REX2 form's general ones (APX's EVEX forms: not yet)
            wide = form.encoding_kind == "rex2" if o.reg in GPRS else evex
            avoid = _rex2_avoid(form, o) if rex2 else set()
            words.append(rng.choice([r for r in _reg_names(o.reg, wide) if R[r].num not in avoid]))
        else: raise Unbuildable(f"operand kind {o.kind!r}")
    decorated = bcst
    if form.evex_mask and words and (form.evex_mask_required or rng.random() < 0.5):
        words[0] += f" {{k{rng.randrange(1, 8)}}}"
        if form.evex_mask == "k1z" and "ptr" not in words[0] and rng.random() < 0.5:   # zeroing: a register destination
            words[0] += " {z}"
        decorated = True
    if form.evex_rc and not rm_is_memory and rng.random() < 0.5:
        n_imm = sum(o.imm is not None for o in form.operands)
        words.insert(len(words) - n_imm, rng.choice(ROUNDING) if form.evex_rc == "er" else "{sae}")
        decorated = True
    text = form.mnemonic + (" " + ", ".join(words) if words else "")
    if evex and not decorated and not _evex_only(form, words): text = "{evex} " + text
    if form.encoding_kind == "rex2": text = "{rex2} " + text   # (llvm-mc-22's: REX2 with r0-r15 too, the form asked for)
    return text


def _evex_only(form, words: list[str]) -> bool:
    """Do the operands alone say EVEX (a zmm, a register 16-31, a mask register operand)? Else a VEX form of the same
    mnemonic may win, in x86gen as in LLVM, and the instance asks for this form with ``{evex}``."""
    return form.vex_l == 2 or any(w.split()[0] in R and (R[w.split()[0]].hi16 or R[w.split()[0]].kind in ("zmm",))
                                  for w in words if w.split())


def instances(form, n: int, seed: int = 0) -> list[str]:
    """``n`` instances of ``form`` (half with a memory r/m where it may be memory), distinct where possible."""
    rng = random.Random(f"{form.id}/{seed}")
    out: list[str] = []
    for j in range(3 * n):
        if len(out) >= n: break
        t = instance(form, rng, use_memory=j % 2 == 1)
        if t not in out: out.append(t)
    return out


# instances per form in the sweep (``X86GEN_LLVM_INSTANCES``, default 12; a long run: 200); Hypothesis adds its batches
N_INSTANCES = int(os.environ.get("X86GEN_LLVM_INSTANCES", "12"))


@functools.cache
def _results(n: int = N_INSTANCES) -> dict[str, list[tuple[str, str]]]:
    """Every instance of every llvm-mc-22 form through both assemblers and llvm-objdump-22: form id → its failures
    (text, what went wrong); an id absent from the dict had all instances pass."""
    texts: list[tuple[str, str]] = []
    failures: dict[str, list[tuple[str, str]]] = {}
    for f in FORMS:
        try: texts += [(f.id, t) for t in instances(f, n)]
        except Unbuildable as ex: failures[f.id] = [("", f"no instances: {ex}")]
    _check(texts, failures)
    from iced_oracle import REPORT
    REPORT["llvm-mc-22"] = (f"llvm-mc-22: {len(FORMS)} forms iced-x86 does not know, {len(texts)} instances, "
                            f"{len(failures)} forms with a wrong instance; their roles, flags and CPUID come from the "
                            "documentation their family names (`source:`), no oracle checks them")
    return failures


def _check(texts: list[tuple[str, str]], failures: dict[str, list[tuple[str, str]]]) -> None:
    """Check each (form id, text) instance (module docstring); failures go to ``failures[form id]``. Bytes that differ
    from llvm-mc-22's pass only as the same instruction: llvm-objdump-22 prints both alike, and x86gen's are no longer
    (the assemblers' choice between equivalent encodings: ``vmovups ymm2, ymm10`` as 10 /r or 11 /r; the form's door
    may be longer, it was asked for that form)."""
    llvm = L.assemble([t for _, t in texts])
    texts, llvm = _place_rounding(texts, llvm)
    rows: list[tuple[int, bytes, bytes, bytes | str]] = []   # (instance, llvm's, x86gen.assemble's, the door's)
    for k, ((fid, text), want) in enumerate(zip(texts, llvm)):
        bad = failures.setdefault(fid, [])
        if isinstance(want, L.Refused):
            bad.append((text, f"llvm-mc-22 refuses it: {want.message}"))
            continue
        try: got = x86gen.assemble(text)
        except x86gen.EncodeError as ex:
            bad.append((text, f"x86gen refuses it ({type(ex).__name__}: {ex}); llvm-mc-22: {want.hex(' ')}"))
            continue
        ins = x86gen.Instruction.parse(_plain(text))
        try: door = x86gen.Instruction.of_form(fid, *_door_operands(text, ins.operands), rc=ins.rc).encode()
        except x86gen.EncodeError as ex: door = f"{type(ex).__name__}: {ex}"
        rows.append((k, want, got, door))
    chunks = sorted({b for _, want, got, door in rows for b in (want, got, door) if isinstance(b, bytes)})
    text_of = dict(zip(chunks, L.disassemble(chunks)))
    aliases: list[tuple[int, str, bytes]] = []
    back_of: dict[int, tuple[str, bytes]] = {}
    for k, want, got, door in rows:
        fid, text = texts[k]
        dec = text_of[got]
        if len(dec) != 1 or dec[0] == "<unknown>":
            failures[fid].append((text, f"llvm-objdump-22 reads x86gen's {got.hex(' ')} as {dec}"))
            continue
        if got != want and (text_of[want] != dec or len(got) > len(want)):
            failures[fid].append((text, f"x86gen.assemble {got.hex(' ')} ({dec[0]}), llvm-mc-22 {want.hex(' ')} "
                                        f"({text_of[want][0]})"))
        if fid in DECODE_ONLY_IDS and isinstance(door, bytes):
            if not _same_instruction(text_of[door], text): failures[fid].append((text, f"the form's door {door.hex(' ')} "
                                                                                      f"reads back as {text_of[door]}"))
        elif door != want and (not isinstance(door, bytes) or text_of[door] != text_of[want]):
            failures[fid].append((text, f"the form's door {door.hex(' ') if isinstance(door, bytes) else door}, "
                                        f"llvm-mc-22 {want.hex(' ')}"))
        if L.normalize(dec[0]) != L.normalize(_plain(text)): aliases.append((k, dec[0], got))
        try: back_of[k] = (dec[0], x86gen.assemble(dec[0]))
        except x86gen.EncodeError as ex:
            failures[fid].append((text, f"x86gen refuses llvm-objdump-22's {dec[0]!r}: {type(ex).__name__}: {ex}"))
    # read back: x86gen's bytes for llvm-objdump-22's text are the same instruction (its text lost a `{evex}`)
    again = sorted({b for _, b in back_of.values()} - set(text_of))
    text_of.update(zip(again, L.disassemble(again)))
    for k, (dec, back) in back_of.items():
        if text_of[back] != [dec]:
            failures[texts[k][0]].append((texts[k][1], f"x86gen reads llvm-objdump-22's {dec!r} as {back.hex(' ')} "
                                                      f"({text_of[back]})"))
    # where LLVM prints another text than the instance (an alias, another spelling), that text must be the same
    # instruction to llvm-mc-22
    for (k, dec, got), b in zip(aliases, L.assemble([d for _, d, _ in aliases])):
        if isinstance(b, L.Refused): continue   # LLVM prints what it cannot read (`vcmpordbf16`): x86gen read it above
        if b != got and text_of.get(b, [dec]) != [dec]:
            failures[texts[k][0]].append((texts[k][1], f"llvm-objdump-22 prints {dec!r}, which llvm-mc-22 reads as {b!r}"))
    for fid in [k for k, v in failures.items() if not v]: del failures[fid]


def _door_operands(text: str, parsed: tuple) -> tuple:
    """The operands for the form's own door: the parsed ones, except that a register is the one the instance names
    (parsing reads `movmskps r20, xmm1` as r20d, the register `movmskps` writes whatever W says; the door of the r64
    form takes r20)."""
    words = _plain(text).partition(" ")[2].split(", ")
    if len(words) != len(parsed): return parsed
    return tuple(R[w] if w in R and getattr(p, "kind", None) in GPRS else p for w, p in zip(words, parsed))


def _plain(text: str) -> str:
    """The instance without the pseudo-prefix that asked for its form (``{evex}``, ``{rex2}``)."""
    return text.removeprefix("{evex} ").removeprefix("{rex2} ")


def _same_instruction(decoded: list[str], text: str) -> bool:
    """Is llvm-objdump-22's one instruction ``decoded`` the instance ``text``: the same mnemonic and the same operands,
    in any order and with the size keywords left out (`DECODE_ONLY_IDS`)?"""
    def parts(t: str) -> tuple[str, list[str]]:
        mn, _, ops = L.normalize(t.removeprefix("{evex} ")).partition(" ")
        return mn, sorted(re.sub(r"^\w+ ptr", "", o) for o in ops.split(","))
    return len(decoded) == 1 and parts(decoded[0]) == parts(text)


def _place_rounding(texts: list[tuple[str, str]], llvm: list) -> tuple[list[tuple[str, str]], list]:
    """LLVM's Intel syntax puts ``{rn-sae}``/``{sae}`` after the register operands, except where a general register or
    an immediate is the source (``vcvtsi2sh xmm0, xmm1, {rd-sae}, eax``): an instance LLVM refuses with the rounding
    last is tried with it at the other places, and the first place LLVM takes is the instance's text."""
    texts, llvm = list(texts), list(llvm)
    tries: list[tuple[int, str]] = []
    for k, ((_fid, text), want) in enumerate(zip(texts, llvm)):
        if not isinstance(want, L.Refused) or "sae}" not in text: continue
        head, _, ops = text.partition(" ")
        words = ops.split(", ")
        rc = next(w for w in words if w.endswith("sae}"))
        rest = [w for w in words if w != rc]
        tries += [(k, f"{head} {', '.join(rest[:i] + [rc] + rest[i:])}") for i in range(1, len(rest))]
    for (k, t), b in zip(tries, L.assemble([t for _, t in tries])):
        if isinstance(b, bytes) and isinstance(llvm[k], L.Refused): texts[k], llvm[k] = (texts[k][0], t), b
    return texts, llvm


@pytest.mark.parametrize("form_id", [f.id for f in FORMS])
def test_llvm_form(form_id):
    bad = _results().get(form_id)
    if bad:
        pytest.fail(f"{form_id}: {len(bad)} instance(s) wrong, e.g.\n" + "\n".join(f"  {t}\n    {why}" for t, why in bad[:6]))


def test_forms_beyond_iced_have_a_source():
    """Every llvm-mc-22 form names the documentation its roles, flags and CPUID come from (isa/README.md)."""
    from oracles import spec_forms
    assert all(f.source for f in spec_forms() if f.oracle == "llvm-mc-22")


@st.composite
def _batch(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    picks = draw(st.lists(st.integers(0, len(FORMS) - 1), min_size=1, max_size=200))
    out = []
    for j, i in enumerate(picks):
        try: out += [(FORMS[i].id, t) for t in instances(FORMS[i], 1, seed=seed + j)]
        except Unbuildable: pass
    return out


@pytest.mark.skipif(not FORMS, reason="no form of the spec is checked by llvm-mc-22")
@given(_batch())
def test_llvm_hypothesis(batch):
    failures: dict[str, list[tuple[str, str]]] = {}
    _check(batch, failures)
    assert not failures, "\n".join(f"{fid}: {t}\n    {why}" for fid, bad in failures.items() for t, why in bad[:3])
