"""Text in both dialects for every form: iced's and GNU objdump's Intel text assemble back to the bytes.

For every form of `x86gen.all_forms()`, a few deterministic instances (`test_second_oracle.form_instances`:
high and low registers, SIB / RIP-relative / disp8 / disp32 / absolute memory, edge immediates, rel8 and
rel32 edges) are encoded by the form at consecutive addresses. Their bytes are then written as text
twice, by tools that are not x86gen:

- (a) iced-x86's Intel formatter, in the dialect `iced_oracle.make_formatter` sets up for x86gen;
- (b) GNU ``objdump -D -b binary -m i386:x86-64 -M intel`` of all the bytes in one run
  (`gnu_oracle.objdump_intel`), as printed: upper-case size keywords, ``ds:`` absolutes, ``# 0x…``
  comments after RIP-relative operands, ``movabs``, ``[r13+0x0]``.

``x86gen.assemble(text, ip=address)`` must give the form's bytes, or an equivalent the text cannot tell
apart (`REASONS`: iced decodes both to the same instruction and x86gen's is shorter, or another opcode
of the same length, as ``01 /r`` for ``03 /r`` with two registers, or the VEX form of an EVEX form's text: x86gen
picks VEX where every operand allows it, as GNU as and llvm-mc do, even where EVEX's disp8*N would be shorter,
SDM Vol.2 2.7.5). Any other longer encoding, another
instruction, an exception that is no `EncodeError`, or an `EncodeError` for iced's text is a failure.
An `EncodeError` for objdump's text fails too, unless the text is of a spelling class listed in
`OBJDUMP_SPELLINGS`: each class is a separate test that xfails, with the class named in its reason,
while some instance of it is still refused (and passes once x86gen reads it), and the count per class
goes to the end-of-session summary. Where objdump reads the bytes as another length or prints
``(bad)``, that is reported per form as a failure (objdump and x86gen disagree about the bytes).

Cost: one objdump process (plus one per place where it reads a length other than x86gen's) and two
`x86gen.assemble` calls per instance.
"""
from __future__ import annotations

import collections
import os
import re

import gnu_oracle
import iced_x86 as I
import pytest
from iced_oracle import ICED_AMBIGUOUS, ICED_FORMS, REPORT, decode_one, decoder_options, decorations, describe, intel, semantics
from test_second_oracle import EVEX_FORM_IDS, IP, Unbuildable, decorated_instances, form_instances

import x86gen

pytestmark = [pytest.mark.skipif(not gnu_oracle.HAVE_OBJDUMP, reason="GNU objdump not installed"), pytest.mark.xdist_group("dialects")]

N_INSTANCES = int(os.environ.get("X86GEN_DIALECT_INSTANCES", "6"))
BASE = 0x1_0000_0000   # address of the first instance: every rel32 target stays positive

REASONS = ("x86gen shorter", "other opcode, same length", "VEX for an EVEX form, longer",
           "EVEX for an AVX-VNNI/AVX-IFMA/AVX-NE-CONVERT form without {vex}, as GNU as and llvm-mc")
# the VEX forms whose text without `{vex}` x86gen encodes with EVEX (x86gen.selection.candidates.VEX_ON_REQUEST)
_VEX_ON_REQUEST = {I.CpuidFeature.AVX_VNNI, I.CpuidFeature.AVX_IFMA, I.CpuidFeature.AVX_NE_CONVERT}

# Spelling classes of objdump's text that x86gen's parser does not read (yet): name -> a pattern of the
# text; the first class that matches counts a refused instance. Only an EncodeError on a matching objdump text counts;
# iced's text must still assemble back. None is listed: every objdump text of the table assembles back, so a refusal
# is a failure. Issue 10's forms brought these in and its work closed them: the prefix words lock/rep/bnd/notrack/
# xacquire/xrelease, objdump's segment words `cs nop` and overrides `fs:0x28`, `fs:[rax]`, the string instructions'
# `movs BYTE PTR es:[rdi],BYTE PTR ds:[rsi]`, `FWORD`/`OWORD PTR`, 32-bit addresses `[eax+ecx*2]`, `data16 sldt WORD PTR
# [rax]` (the o16 form) and the `rex.W`/`rex.WXB` words before a REX.W that changes nothing (`rex.W pinsrw xmm0,eax,0`,
# `rex.W call FWORD PTR [rsp]`; `x86gen.selection.prefixed.encode_rex`).
OBJDUMP_SPELLINGS: dict[str, str] = {}


# (`iced_oracle.ICED_AMBIGUOUS`: iced's text of those forms is refused; objdump's text of the same bytes is checked.)

# Forms whose bytes objdump 2.40 cannot print as assembly text: their instances are left out of the objdump
# stream (where each misread costs a re-run and desynchronises what follows) and only iced's text is checked.
# Each entry is re-checked on its own: when objdump prints text that assembles back, the entry is stale and
# `test_objdump_gaps_are_real` fails. Their count goes to the summary line.
_JCC = ("JO", "JNO", "JB", "JAE", "JE", "JNE", "JBE", "JA", "JS", "JNS", "JP", "JNP", "JL", "JGE", "JLE", "JG")
_ALIAS_FENCE = "an alias ModRM byte of the fence (SDM Vol.2 LFENCE/MFENCE/SFENCE: 0F AE F0-F7 / F8-FF); objdump prints (bad)"

OBJDUMP_GAPS: dict[str, str] = {
    "XBEGIN_REL16": "objdump 2.40 prints `xbeginw` with the fallback address cut to 16 bits; the CPU does not cut it"
                    " (SDM Vol.2 XBEGIN: the rel16 is added to the 64-bit RIP), so the text names another address",
    **{f"MFENCE_F{i}": _ALIAS_FENCE for i in range(1, 8)},
    **{f"SFENCE_F{c}": _ALIAS_FENCE for c in "9ABCDEF"},
    **{f: "objdump prints a non-RIP-relative PREFETCHIT0/1 as the NOP it is (SDM Vol.2 PREFETCHITx: NOP unless RIP-relative)"
       for f in ("PREFETCHIT0_M8", "PREFETCHIT1_M8")},
    "PREFETCHRESERVED3_M8": "objdump prints the reserved 0F 0D /3 as `prefetch` (0F 0D /0)",
    **{f: "binutils 2.40 predates SHA512/SM3/SM4 (objdump prints (bad))"
       for f in ("VEX_VSHA512MSG1_YMM_XMM", "VEX_VSHA512MSG2_YMM_YMM", "VEX_VSHA512RNDS2_YMM_YMM_XMM",
                 "VEX_VSM3MSG1_XMM_XMM_XMMM128", "VEX_VSM3MSG2_XMM_XMM_XMMM128", "VEX_VSM3RNDS2_XMM_XMM_XMMM128_IMM8",
                 "VEX_VSM4KEY4_XMM_XMM_XMMM128", "VEX_VSM4KEY4_YMM_YMM_YMMM256", "VEX_VSM4RNDS4_XMM_XMM_XMMM128",
                 "VEX_VSM4RNDS4_YMM_YMM_YMMM256")},
    "PBNDKB": "binutils 2.40 predates TSE (objdump prints (bad))",
    **{f: "binutils 2.40 does not know this VIA PadLock instruction (objdump prints `repz (bad)`)"
       for a in ("64", "32") for f in (f"XSHA512_{a}", f"XSHA512_ALT_{a}", f"XSTORE_ALT_{a}", f"CCS_HASH_{a}",
                                       f"CCS_ENCRYPT_{a}", f"VIA_UNDOC_F30FA6F0_{a}", f"VIA_UNDOC_F30FA6F8_{a}")},
    **{f: "binutils 2.40 predates AMX-COMPLEX (objdump prints (bad))"
       for f in ("VEX_TCMMIMFP16PS_TMM_TMM_TMM", "VEX_TCMMRLFP16PS_TMM_TMM_TMM")},
    **{f"RESERVEDNOP_RM{n}_R{n}_0F{op}": "objdump 2.40 prints the reserved NOPs 0F 0D/0F 18-1F /r without their ModRM.reg"
       " operand (`nop ecx`, which is 0F 1F /0), as MPX bnd* (0F 1A/1B) or misreads their length (0F 0D with a register)"
       for n in (16, 32, 64) for op in ("0D", "18", "19", "1A", "1B", "1C", "1D", "1E", "1F")},
    **{f: "an undocumented x87 alias iced-x86 decodes (SDM Vol.2 has no D8-DF opcode for it); objdump 2.40 prints (bad)"
       for f in ("FCOM_ST0_STI_DCD0", "FCOMP_ST0_STI_DCD8", "FCOMP_ST0_STI_DED0", "FSTP_STI_DFD0", "FSTP_STI_DFD8",
                 "FXCH_ST0_STI_DDC8", "FXCH_ST0_STI_DFC8", "FSTPNCE_STI")},
    "MOVSXD_R16_RM16": "objdump 2.40 prints the source of o16 63 /r as 32 bits (`movsxd cx,esi`); the instruction reads 16"
                       " (SDM Vol.2 MOVSXD r16, r/m16), and x86gen refuses a 32-bit source for a 16-bit destination",
    **{f"LKGS_{k}": "binutils 2.40 predates LKGS (objdump prints (bad))" for k in ("RM16", "R32M16", "R64M16")},
    **{f: "binutils 2.40 predates FRED: objdump prints F2/F3 0F 01 CA as `repnz clac` / `repz clac`" for f in ("ERETS", "ERETU")},
    **{f"VEX_VPDPW{s}{d}_{x}MM_{x}MM_{x}MMM{n}": "binutils 2.40 predates AVX-VNNI-INT16 (objdump prints (bad))"
       for s in ("SUD", "USD", "UUD") for d in ("", "S") for x, n in (("X", 128), ("Y", 256))},
    # the 16-bit near branches (iced_oracle.decoder_options): objdump 2.40 prints jmpw/callw (JMP_REL16, CALL_REL16)
    # as x86gen reads them, the others not
    **{f"{cc}_REL16": "objdump 2.40 prints o16 jcc rel16 (66 0F 8x cw) as a bare `jcc` to a 16-bit target, which is"
       " the rel32 form to GNU as and x86gen (SDM Vol.2 Jcc: the 16-bit form needs 0x66)" for cc in _JCC},
    **{f: "objdump 2.40 prints the target as Intel CPUs reach it (0x66 ignored, SDM Vol.2 Jcc/LOOP in 64-bit mode:"
       " `data16 je 0x100000010`), not the 16-bit IP the 16-bit branch sets (AMD), which x86gen refuses as out of reach"
       for f in (*(f"{cc}_REL8_16" for cc in (*_JCC, "JMP", "JRCXZ", "JECXZ")),
                 *(f"{m}_REL8_16_{c}" for m in ("LOOP", "LOOPE", "LOOPNE") for c in ("ECX", "RCX")))},
}


def retarget(form, ops: tuple, ip: int, length: int, rel: int | None) -> tuple:
    """``ops`` with the branch target moved for an instruction at ``ip``."""
    if rel is None: return ops
    wrap = 0xFFFF if decoder_options(form) else (1 << 64) - 1   # a 16-bit branch's target: a 16-bit IP, the same rel
    return tuple((ip + length + rel) & wrap if o.kind.startswith("rel") else x for o, x in zip(form.operands, ops))


def compare(data: bytes, got: bytes, ip: int, options: int = 0) -> str | None:
    """None if ``got`` (x86gen's bytes for the text) is ``data``, else the reason it is an allowed
    equivalent (`REASONS`), else raises AssertionError with what differs (``options``: iced's DecoderOptions for the
    form, `iced_oracle.decoder_options`: AMD for a 16-bit branch)."""
    if got == data: return None
    # (AVX-512 masks, zeroing, broadcast and rounding too: `semantics` leaves them out)
    mine = [(semantics(i), decorations(i)) for i in I.Decoder(64, data, ip=ip, options=options)]
    theirs = [(semantics(i), decorations(i)) for i in I.Decoder(64, got, ip=ip, options=options)]
    if any(i.code == I.Code.INVALID for i in I.Decoder(64, got, ip=ip, options=options)) or theirs != mine:
        raise AssertionError(f"gave {describe(got, ip, options)}, the form {describe(data, ip, options)}")
    if len(got) < len(data): return REASONS[0]
    if len(got) == len(data): return REASONS[1]
    if data[0] == 0x62 and [i.encoding for i in I.Decoder(64, got, ip=ip)] == [I.EncodingKind.VEX]: return REASONS[2]
    vex = list(I.Decoder(64, data, ip=ip))
    if [i.encoding for i in vex] == [I.EncodingKind.VEX] and _VEX_ON_REQUEST & set(vex[0].cpuid_features()) \
            and [i.encoding for i in I.Decoder(64, got, ip=ip)] == [I.EncodingKind.EVEX]:
        return REASONS[3]
    raise AssertionError(f"gave the longer {describe(got, ip)}, the form {describe(data, ip)}")


def spelling_class(text: str) -> str | None:
    for name, pat in OBJDUMP_SPELLINGS.items():
        if re.search(pat, text): return name
    return None


def plain_instances(form) -> list[tuple[tuple, int | None, dict]]:
    """`form_instances` as ``(operands, branch displacement, encoding keywords)``."""
    return [(ops, rel, {}) for ops, rel in form_instances(form, N_INSTANCES)]


def evex_instances(form) -> list[tuple[tuple, int | None, dict]]:
    """`test_second_oracle.decorated_instances`: masked, zeroing, broadcast and rounding instances (``rc=``)."""
    return [(ops, None, {} if rc is None else {"rc": rc}) for ops, rc in decorated_instances(form)]


def run_dialects(forms, assemble=None, instances=plain_instances) -> dict:
    """Encode the instances of ``forms`` (``instances(form)``: `plain_instances`, or `evex_instances`), disassemble
    them with iced and objdump, assemble both texts with ``assemble`` (default `x86gen.assemble`; a seam for the
    meta-test). Returns counters, the failures (``form id -> [messages]``) and the refused instances per spelling class."""
    if assemble is None: assemble = x86gen.assemble
    failures: dict[str, list[str]] = collections.defaultdict(list)
    insts = []   # (form, ip, data)
    ip = BASE
    for form in forms:
        try:
            cases = instances(form)
        except (Unbuildable, AttributeError) as ex:
            failures[form.id].append(f"no instances: {ex}")
            continue
        if not cases and instances is plain_instances: failures[form.id].append("no valid instance drawn")
        for ops, rel, kw in cases:
            try:
                if rel is not None: ops = retarget(form, ops, ip, len(form(*ops, ip=IP)), rel)   # valid at IP
                data = form(*ops, ip=ip) if form.is_branch else form(*ops, **kw)
            except Exception as ex:   # noqa: BLE001 - EncodeError or a bug; reported, the other forms go on
                failures[form.id].append(f"x86gen refused {ops}: {type(ex).__name__}: {ex}")
                continue
            insts.append((form, ip, data))
            ip += len(data)
    gaps = [x for x in insts if x[0].id in OBJDUMP_GAPS]   # NOPs of their length in objdump's stream
    dis = gnu_oracle.objdump_intel([b"\x90" * len(d) if f.id in OBJDUMP_GAPS else d for f, _, d in insts], BASE)
    keep = [k for k, x in enumerate(insts) if x[0].id not in OBJDUMP_GAPS]
    insts, dis = [insts[k] for k in keep], [dis[k] for k in keep]
    counts = collections.Counter()
    reasons = {"iced": collections.Counter(), "objdump": collections.Counter()}
    spelled: dict[str, list[str]] = collections.defaultdict(list)
    for (form, ip, data), od in zip(insts, dis):
        assert od.address == ip
        opt = decoder_options(form)   # AMD for a 16-bit branch
        texts = {"iced": intel(decode_one(data, ip, opt))}   # (finit, 9B DB E3: one WAIT form for iced's encoder and formatter)
        if not od.exact or not od.texts:
            failures[form.id].append(f"objdump reads {data.hex(' ')} otherwise: {od.texts} (not exactly these bytes)")
        elif any("(bad)" in t for t in od.texts):
            failures[form.id].append(f"objdump prints {od.texts} for {describe(data, ip)}")
        else:
            texts["objdump"] = "\n".join(od.texts)
        for dialect, text in texts.items():
            counts[dialect] += 1
            try:
                got = assemble(text, ip=ip)
                why = compare(data, got, ip, opt)
                if why: reasons[dialect][why] += 1
            except x86gen.EncodeError as ex:
                if dialect == "iced" and form.id in ICED_AMBIGUOUS and "cannot say which" in str(ex):
                    reasons[dialect]["iced's one name of several encodings, refused"] += 1
                    continue
                cls = spelling_class(text) if dialect == "objdump" else None
                if cls: spelled[cls].append(f"{form.id}: {text!r}: {ex}")
                else: failures[form.id].append(f"{dialect} {text!r}: {type(ex).__name__}: {ex}")
            except AssertionError as ex:
                failures[form.id].append(f"{dialect} {text!r}: {ex}")
            except Exception as ex:   # noqa: BLE001 - any other exception is a bug, reported with the text
                failures[form.id].append(f"{dialect} {text!r}: raised {type(ex).__name__}: {ex}")
    for form, ip, data in gaps:   # iced's text only (OBJDUMP_GAPS)
        counts["iced"] += 1
        opt = decoder_options(form)
        text = intel(decode_one(data, ip, opt))
        try:
            why = compare(data, assemble(text, ip=ip), ip, opt)
            if why: reasons["iced"][why] += 1
        except Exception as ex:   # noqa: BLE001 - EncodeError, AssertionError or a bug: reported with the text
            failures[form.id].append(f"iced {text!r}: {type(ex).__name__}: {ex}")
    return {"forms": len(forms), "instances": len(insts) + len(gaps), "counts": counts, "reasons": reasons,
            "failures": dict(failures), "spelled": dict(spelled), "gaps": sorted({f.id for f, _, _ in gaps})}


def summary(res: dict) -> str:
    parts = []
    for dialect in ("iced", "objdump"):
        r = res["reasons"][dialect]
        eq = ", ".join(f"{n} {why}" for why, n in r.most_common())
        parts.append(f"{res['counts'][dialect]} {dialect} texts" + (f" ({eq})" if eq else ""))
    line = (f"dialects: {res['forms']} forms, {res['instances']} instances; " + "; ".join(parts)
            + f"; {len(res['failures'])} forms failed")
    if res.get("gaps"):
        line += f"\n      {len(res['gaps'])} forms objdump 2.40 cannot print (OBJDUMP_GAPS): iced's text only"
    if res["spelled"]:
        line += "\n      objdump spellings x86gen refuses (xfail): " + ", ".join(
            f"{cls}: {len(v)}" for cls, v in sorted(res["spelled"].items()))
    return line


@pytest.fixture(scope="module")
def dialects():
    res = run_dialects(ICED_FORMS)
    REPORT["dialects"] = summary(res)
    return res


def test_both_dialects_assemble_back(dialects):
    bad = [f"{fid}: {m}" for fid, ms in dialects["failures"].items() for m in ms]
    assert not bad, f"{len(dialects['failures'])} forms whose text does not assemble back:\n" + "\n".join(bad[:60])


@pytest.mark.parametrize("spelling", sorted(OBJDUMP_SPELLINGS) or ["(none listed)"])
def test_objdump_spelling_class(dialects, spelling):
    """An objdump spelling x86gen refuses is an open finding: xfail naming it while an instance is refused."""
    if spelling == "(none listed)":   # every objdump refusal is then a failure of test_both_dialects_assemble_back
        assert not dialects["spelled"], dialects["spelled"]
        return
    refused = dialects["spelled"].get(spelling, [])
    if refused:
        pytest.xfail(f"objdump spelling {spelling!r} refused by x86gen.assemble in {len(refused)} instances, "
                     f"e.g. {refused[0]}")


@pytest.fixture(scope="module")
def evex_dialects():
    res = run_dialects([x86gen.get_form(i) for i in EVEX_FORM_IDS], instances=evex_instances)
    REPORT["dialects, AVX-512"] = "AVX-512 decorations, " + summary(res)
    return res


@pytest.mark.parametrize("form_id", EVEX_FORM_IDS)
def test_evex_decorated_dialects(evex_dialects, form_id):
    """Masked, zeroing, broadcast and rounding instances of every EVEX form that allows them (iced decides:
    `test_second_oracle.decorated_instances`), as iced's Intel formatter and objdump print them
    (``zmm1{k1}{z}``, ``dword ptr [rax]{1to16}`` / ``DWORD BCST [rax]``, ``zmm1{rne-sae}`` / ``zmm3{rn-sae}``),
    assemble back to their bytes with their decorations."""
    bad = evex_dialects["failures"].get(form_id, [])
    assert not bad, "\n".join(bad)


def test_evex_dialects_detect_a_dropped_decoration():
    """The check can fail: an assembler that drops the mask (aaa = 000) of what it reads is caught in both dialects."""
    def unmasked(text, ip=0):
        data = bytearray(x86gen.assemble(text, ip=ip))
        data[3] &= ~0x07   # EVEX P2.aaa (SDM Vol.2 2.7.1)
        return bytes(data)
    res = run_dialects([x86gen.get_form("EVEX_VADDPS_ZMM_K1Z_ZMM_ZMMM512B32_ER")], unmasked, evex_instances)
    ms = res["failures"]["EVEX_VADDPS_ZMM_K1Z_ZMM_ZMMM512B32_ER"]
    assert any(m.startswith("iced ") for m in ms) and any(m.startswith("objdump ") for m in ms), ms


def test_objdump_gaps_are_real():
    """Each OBJDUMP_GAPS entry is a form of the table whose first instance objdump, run on it alone, still
    cannot print as text that assembles back to its bytes (else the entry is stale: remove it)."""
    stale = []
    for fid, why in sorted(OBJDUMP_GAPS.items()):
        form = x86gen.get_form(fid)   # raises if the form left the table
        ops, _ = form_instances(form, 1)[0]
        data = form(*ops, ip=IP) if form.is_branch else form(*ops)   # (a branch's target: valid at IP)
        od = gnu_oracle.objdump_intel([data], IP)[0]
        if od.exact and od.texts and not any("(bad)" in t for t in od.texts):
            try:
                if x86gen.assemble("\n".join(od.texts), ip=IP) == data: stale.append(f"{fid}: objdump prints {od.texts} ({why})")
            except x86gen.EncodeError:
                pass
    assert not stale, "OBJDUMP_GAPS entries objdump now prints correctly:\n" + "\n".join(stale)


def test_dialects_detect_wrong_bytes():
    """The check can fail: an assembler that gives other bytes (or raises) is caught in both dialects."""
    forms = [x86gen.get_form(i) for i in ("ADD_RM32_R32", "VEX_VADDPS_YMM_YMM_YMMM256", "JMP_REL32_64")]

    def tampered(text, ip=0):
        data = bytearray(x86gen.assemble(text, ip=ip))
        data[-1] ^= 0x01
        return bytes(data)

    res = run_dialects(forms, tampered)
    assert set(res["failures"]) == {f.id for f in forms}
    for ms in res["failures"].values():
        assert any(m.startswith("iced ") for m in ms) and any(m.startswith("objdump ") for m in ms), ms

    def refusing(text, ip=0):
        raise x86gen.AsmSyntaxError("refused")

    res = run_dialects(forms[:1], refusing)
    assert len(res["failures"]["ADD_RM32_R32"]) == 2 * res["instances"]


def test_spelling_class_counts_refused_objdump_text(monkeypatch):
    """A refused objdump text of a listed class is counted for the class (and xfails there), not failed;
    iced's text refused the same way still fails."""
    monkeypatch.setitem(OBJDUMP_SPELLINGS, "upper-case size keyword", r"\b[A-Z]+ PTR\b")

    def refusing_upper(text, ip=0):
        if re.search(r"\bPTR\b", text): raise x86gen.AsmSyntaxError("refused")
        return x86gen.assemble(text, ip=ip)

    res = run_dialects([x86gen.get_form("ADD_RM32_R32")], refusing_upper)
    refused = res["spelled"]["upper-case size keyword"]   # the memory instances, objdump's text only
    assert refused and all(" PTR " in m for m in refused), res
    assert "ADD_RM32_R32" not in res["failures"]
    assert f"objdump spellings x86gen refuses (xfail): upper-case size keyword: {len(refused)}" in summary(res)
