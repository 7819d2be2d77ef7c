#!/usr/bin/env python3
"""Draft isa/x86_64.yaml lines from iced-x86's facts, for a human to review (a development tool: the
spec stays the source of truth, written and read by people; nothing reads this tool's output directly).

    python tools/draft_forms.py [--cpuid AVX,AVX2] [--mnemonic addps,...] [--code ADDPS_XMM_XMMM128,...]

For every iced form that is not yet in the spec (nor `excluded:`) and that the spec can describe
(tools/iced_forms.py says which cannot, and why), it prints a spec line
``operands with roles | SDM encoding | attrs``, grouped into families by mnemonic:

- operand kinds and encoding slots from iced's `OpCodeInfo` (`op_kind(i)`, memory size, `op_code_string`);
  an explicit `@loc` only where the spec's inference (isa/README.md) would place an operand elsewhere;
- roles R/W/RW/CW/N from iced's `InstructionInfo.op_access(i)` on an instance encoded by iced itself,
  implicit registers (`imp=`) from `used_registers()` minus the explicit operands and the address
  registers (a 32-bit GPR read, 64-bit write is RW of the 32-bit name, as tests/test_roles_iced.py maps
  it), rflags from the instruction's `rflags_*`, CPUID from `cpuid_features()`;
- EVEX forms (``--encoding EVEX``): zmm and k operands as iced gives them, the attributes ``tuple=`` (the SDM's
  tuple type, inferred by `iced_forms.sdm_tuple` and checked: the loader's N from it must be iced's
  ``OpCodeInfo.tuple_type``), ``mask=`` (``can_use_op_mask_register`` / ``can_use_zeroing_masking``), ``bcst=``
  (``can_broadcast``, the element's bits) and ``rc=`` (``can_use_rounding_control`` / ``can_suppress_all_exceptions``);
  gathers/scatters (``require_op_mask_register``) are left out until masks are encoded;
- the family's `cpuid:`/`flags:` are its most common values, other forms override them; `id=` where the
  derived id is not iced's Code name.

Forms of a mnemonic that already has a family are printed as lines to add to that family (with the
overrides its defaults need). Forms it cannot draft (an access iced reports that the spec has no role for,
an implicit register x86gen does not know, an instance iced cannot encode) are listed at the end as
comments with the reason. The result still has to pass tests/test_fuzz_iced.py and
tests/test_roles_iced.py; a drafted line is a proposal, not a fact.
"""
from __future__ import annotations

import argparse
import collections
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tools"))

import iced_forms as F  # noqa: E402
import iced_x86 as I  # noqa: E402
import yaml  # noqa: E402

from codegen import spec  # noqa: E402

SPEC = os.path.join(ROOT, "isa/x86_64.yaml")
OPK = I.OpKind
REG = I.Register
ROLE_OF_ACCESS = {I.OpAccess.READ: "R", I.OpAccess.WRITE: "W", I.OpAccess.READ_WRITE: "RW", I.OpAccess.COND_WRITE: "CW",
                  I.OpAccess.READ_COND_WRITE: "RCW", I.OpAccess.COND_READ: "CR", I.OpAccess.NO_MEM_ACCESS: "N", I.OpAccess.NONE: "N"}
ACCESS_NAMES = {v: k for k, v in vars(I.OpAccess).items() if k.isupper()}
REG_NAMES = {v: k for k, v in vars(I.Register).items() if k.isupper() and isinstance(v, int)}
IMM_OPKIND = {"IMM8": OPK.IMMEDIATE8, "IMM16": OPK.IMMEDIATE16, "IMM32": OPK.IMMEDIATE32, "IMM64": OPK.IMMEDIATE64,
              "IMM8SEX16": OPK.IMMEDIATE8TO16, "IMM8SEX32": OPK.IMMEDIATE8TO32, "IMM8SEX64": OPK.IMMEDIATE8TO64,
              "IMM32SEX64": OPK.IMMEDIATE32TO64, "IMM8_CONST_1": OPK.IMMEDIATE8,
              "IMM4_M2Z": OPK.IMMEDIATE8}   # (vpermil2ps: imm8[3:0])
FLAGS = (("r", "rflags_read"), ("w", "rflags_written"), ("u", "rflags_undefined"), ("0", "rflags_cleared"), ("1", "rflags_set"))
FLAG_LETTERS = (("O", I.RflagsBits.OF), ("S", I.RflagsBits.SF), ("Z", I.RflagsBits.ZF), ("A", I.RflagsBits.AF),
                ("P", I.RflagsBits.PF), ("C", I.RflagsBits.CF), ("D", I.RflagsBits.DF), ("I", I.RflagsBits.IF),
                ("L", I.RflagsBits.AC), ("U", I.RflagsBits.UIF))
COUNT_MNEMONICS = {"rol", "ror", "rcl", "rcr", "shl", "sal", "shr", "sar", "shld", "shrd"}   # imm 1 and 0 change flags differently
GPR64 = ["RAX", "RCX", "RDX", "RBX", "RSP", "RBP", "RSI", "RDI"] + [f"R{i}" for i in range(8, 16)]
GPR_NAME = {  # iced register name by (class, number)
    "r64": GPR64,
    "r32": ["EAX", "ECX", "EDX", "EBX", "ESP", "EBP", "ESI", "EDI"] + [f"R{i}D" for i in range(8, 16)],
    "r16": ["AX", "CX", "DX", "BX", "SP", "BP", "SI", "DI"] + [f"R{i}W" for i in range(8, 16)],
    "r8": ["AL", "CL", "DL", "BL", "SPL", "BPL", "SIL", "DIL"] + [f"R{i}L" for i in range(8, 16)],
}
GPR_ORDER = [8, 9, 10, 11, 12, 13, 3, 6, 7, 5]   # explicit registers: away from rax/rcx/rdx (implicit in many forms)
X64_FAMILY = {}   # iced register name -> ("gpr", num) / ("vec", num)
for _cls, _names in GPR_NAME.items():
    for _n, _r in enumerate(_names): X64_FAMILY[_r] = ("gpr", _n)
for _n in range(32):
    for _p in ("XMM", "YMM", "ZMM"): X64_FAMILY[f"{_p}{_n}"] = ("vec", _n)
for _n, _r in enumerate(("AH", "CH", "DH", "BH")): X64_FAMILY[_r] = ("gpr", _n)
for _n in range(8):
    X64_FAMILY[f"MM{_n}"], X64_FAMILY[f"K{_n}"], X64_FAMILY[f"TMM{_n}"] = ("mm", _n), ("k", _n), ("tmm", _n)
for _n in range(4): X64_FAMILY[f"BND{_n}"] = ("bnd", _n)   # MPX bnd0-bnd3
SMALL_FILES = ("mm", "k", "tmm", "bnd")   # register classes of 8 registers (mm0-mm7, k0-k7, tmm0-tmm7) and bnd0-bnd3
for _n in range(8): X64_FAMILY[f"ST{_n}"] = ("st", _n)
for _n in range(16): X64_FAMILY[f"CR{_n}"], X64_FAMILY[f"DR{_n}"] = ("cr", _n), ("dr", _n)
for _n, _r in enumerate(("ES", "CS", "SS", "DS", "FS", "GS")): X64_FAMILY[_r] = ("sreg", _n)
X86GEN_REG = {**{r: (r.lower() if not (r.startswith("R") and r.endswith("L") and r[1:-1].isdigit()) else r.lower()[:-1] + "b")
                 for names in GPR_NAME.values() for r in names},
              **{f"{p}{n}": f"{p.lower()}{n}" for p in ("XMM", "YMM") for n in range(16)},
              **{f"{p}{n}": f"{p.lower()}{n}" for p in ("MM", "K", "TMM") for n in range(8)},
              "AH": "ah", "CH": "ch", "DH": "dh", "BH": "bh",
              **{f"ST{n}": f"st{n}" for n in range(8)}, **{f"{p}{n}": f"{p.lower()}{n}" for p in ("CR", "DR") for n in range(16)},
              **{r: r.lower() for r in ("ES", "CS", "SS", "DS", "FS", "GS")}}


class CannotDraft(Exception):
    pass


def flag_text(ins: I.Instruction, sep: str = " ") -> str:
    groups = []
    for g, attr in FLAGS:
        bits = getattr(ins, attr)
        letters = "".join(c for c, b in FLAG_LETTERS if bits & b)
        if letters: groups.append(f"{g}={letters}")
    return sep.join(groups)


def instance(code: int, kinds: list[tuple[str, str]], use_mem: bool) -> tuple[I.Instruction, set]:
    """An instance of ``code`` encoded by iced and decoded again, and its explicit register families."""
    oc = I.OpCodeInfo(code)
    ins = I.Instruction()
    ins.code = code
    gprs, vecs, smalls = list(GPR_ORDER), list(range(1, 16)), list(range(1, 8))
    explicit: set = set()
    nimm = 0
    mn = F.MNEMONIC_NAMES[oc.mnemonic].lower()
    for i, (kind, slot) in enumerate(kinds):
        ok = F.OPCODE_KIND_NAMES[oc.op_kind(i)]
        if ok in ("BR64_1", "BR64_4"):
            ins.set_op_kind(i, OPK.NEAR_BRANCH64)
            ins.near_branch64 = 0x1000 + 0x10
            continue
        if ok in IMM_OPKIND:
            k = IMM_OPKIND[ok]
            if k == OPK.IMMEDIATE8 and nimm: k = OPK.IMMEDIATE8_2ND
            ins.set_op_kind(i, k)
            v = 1 if ok == "IMM8_CONST_1" else (3 if mn in COUNT_MNEMONICS else 2)
            if k == OPK.IMMEDIATE64: ins.set_immediate_i64(i, v)
            else: ins.set_immediate_i32(i, v)
            nimm += 1
            continue
        if slot == "fixed":
            r = getattr(REG, kind.upper())
            ins.set_op_kind(i, OPK.REGISTER)
            ins.set_op_register(i, r)
            explicit.add(X64_FAMILY[REG_NAMES[r]])
            continue
        if kind == "sibmem":   # AMX: base and index (the stride) are general registers
            ins.set_op_kind(i, OPK.MEMORY)
            ins.memory_base, ins.memory_index, ins.memory_index_scale = REG.R14, REG.R15, 1
            ins.memory_displacement, ins.memory_displ_size = 0x10, 1
            continue
        if kind.startswith("vm"):   # VSIB: an xmm/ymm index, xmm15/ymm15 (no explicit operand takes it)
            ins.set_op_kind(i, OPK.MEMORY)
            ins.memory_base, ins.memory_index, ins.memory_index_scale = REG.R14, getattr(REG, f"{kind[-1].upper()}MM15"), 4
            ins.memory_displacement, ins.memory_displ_size = 0x10, 1
            continue
        if (kind.startswith("m") and "/" not in kind and kind not in spec.REG_CLASSES) or ("/" in kind and use_mem):
            ins.set_op_kind(i, OPK.MEMORY)
            # a form with a 32-bit address size (`a32` with a memory operand: movdir64b/enqcmd r32, m512) takes a
            # 32-bit address (SDM Vol.2 MOVDIR64B: 0x67 sizes the ModRM.reg address and the memory operand alike)
            a32 = oc.address_size == 32
            ins.memory_base, ins.memory_index, ins.memory_index_scale = (REG.R14D, REG.R15D, 2) if a32 else (REG.R14, REG.R15, 2)
            ins.memory_displacement, ins.memory_displ_size = 0x10, 1
            continue
        cls = kind.split("/")[0] if not kind.startswith("r/m") else f"r{kind[3:]}"
        if cls.startswith("r") and cls[1:].isdigit():
            name = GPR_NAME[cls][gprs.pop(0)]
        elif cls == "kp1":   # vp2intersectd/q's mask-register pair: named by an even k
            name = "K2"
        elif cls in ("sreg", "cr", "dr"):   # registers that exist (ds; cr3, dr3), not the reserved cs/cr1
            name = {"sreg": "DS", "cr": "CR3", "dr": "DR3"}[cls]
        else:
            name = f"{cls.upper()}{(smalls if cls in SMALL_FILES else vecs).pop(0)}"
        ins.set_op_kind(i, OPK.REGISTER)
        ins.set_op_register(i, getattr(REG, name))
        explicit.add(X64_FAMILY[name])
    if I.OpCodeInfo(code).require_op_mask_register:   # gathers/scatters: k0 is #UD (SDM Vol.2 VPGATHERDD); the mask is no explicit operand
        ins.op_mask = REG.K1
        explicit.add(X64_FAMILY["K1"])
    enc = I.Encoder(64)
    try: enc.encode(ins, 0x1000)
    except ValueError as ex: raise CannotDraft(f"iced cannot encode an instance: {ex}") from None
    data = bytes(enc.take_buffer())
    mpx = F.cpuid_name(code) == "MPX"   # iced reads 0F 1A/1B as MPX only when asked (DecoderOptions.MPX)
    dec = I.Decoder(64, data, ip=0x1000, options=I.DecoderOptions.MPX if mpx else I.DecoderOptions.NONE).decode()
    if dec.code != code: raise CannotDraft(f"iced decodes its own encoding {data.hex(' ')} as {F.CODE_NAMES[dec.code]}")
    return dec, explicit


def implicit_text(ins: I.Instruction, explicit: set, address: set, opsize: int) -> list[str]:
    """The ``imp=`` entries: iced's used registers that are no explicit operand or address register."""
    by_family: dict = collections.defaultdict(list)
    order = []
    for u in I.InstructionInfoFactory().info(ins).used_registers():
        name = REG_NAMES[u.register]
        fam = X64_FAMILY.get(name)
        if fam is None: raise CannotDraft(f"implicit register {name} is not an x86gen register")
        if fam in explicit or fam in address: continue
        if fam not in by_family: order.append(fam)
        by_family[fam].append((name, u.access))
    out = []
    for fam in order:
        acc = by_family[fam]
        if fam[0] == "vec":
            if len(acc) == 1 and acc[0][1] == I.OpAccess.READ and acc[0][0][:3] in ("XMM", "YMM"):
                out.append(f"R:{acc[0][0].lower()}"); continue
            reads = [n for n, a in acc if a == I.OpAccess.READ]
            writes = [n for n, a in acc if a == I.OpAccess.WRITE]
            if len(acc) == 2 and reads and writes and writes[0].startswith("ZMM"): out.append(f"RW:{reads[0].lower()}"); continue
            if len(acc) == 1 and writes and writes[0][:3] in ("ZMM", "XMM"): out.append(f"W:xmm{fam[1]}"); continue   # legacy: XMM
            raise CannotDraft(f"implicit vector register access {acc}")
        if len(acc) == 2:   # a 32-bit read and a (zero-extending) 64-bit write: one entry of the 32-bit name
            (n1, a1), (n2, a2) = sorted(acc, key=lambda x: x[0] in GPR64)
            if n1 in GPR_NAME["r32"] and n2 in GPR64 and (a1, a2) == (I.OpAccess.READ, I.OpAccess.WRITE):
                out.append(f"RW:{X86GEN_REG[n1]}"); continue
            if n1 in GPR_NAME["r32"] and n2 in GPR64 and (a1, a2) == (I.OpAccess.READ, I.OpAccess.COND_WRITE):
                out.append(f"RCW:{X86GEN_REG[n1]}"); continue
        for name, a in acc:   # else each access as iced reports it
            if a not in ROLE_OF_ACCESS or a in (I.OpAccess.NO_MEM_ACCESS, I.OpAccess.NONE):
                raise CannotDraft(f"implicit {name} is {ACCESS_NAMES[a]}")
            if a in (I.OpAccess.WRITE, I.OpAccess.COND_WRITE) and name in GPR64 and opsize != 64 and len(acc) == 1:
                name = GPR_NAME["r32"][fam[1]]   # W:edx for a 32-bit operation (the CPU writes rdx zero-extended)
            elif a in (I.OpAccess.WRITE, I.OpAccess.COND_WRITE) and name in GPR64:
                name = GPR_NAME["r32"][fam[1]]   # cpuid's CR:ecx,W:ecx: the write zero-extends
            out.append(f"{ROLE_OF_ACCESS[a]}:{X86GEN_REG[name]}")
    return out


def draft(code: int) -> dict:
    """{mnemonic, operands, encoding, id, cpuid, flags, imp} of one form (raises CannotDraft/Unsupported)."""
    oc = I.OpCodeInfo(code)
    name = F.CODE_NAMES[code]
    why = F.unsupported_reason(code)
    if why: raise F.Unsupported(why)
    kinds = F.spec_operands(code)
    encoding = F.spec_encoding(code)
    evex = F.evex_attrs(code) if encoding.startswith("EVEX.") else {}
    mn = F.MNEMONIC_NAMES[oc.mnemonic].lower()
    variants = [False] + ([True] if any("/" in k for k, _s in kinds) else [])
    seen = None
    for use_mem in variants:
        ins, explicit = instance(code, kinds, use_mem)
        info = I.InstructionInfoFactory().info(ins)
        address = set()
        if any(ins.op_kind(i) == OPK.MEMORY for i in range(ins.op_count)):
            address = {X64_FAMILY["R14"], X64_FAMILY["R15"], ("vec", 15)}   # ("vec", 15): a VSIB index
        ops = []
        for i, (kind, slot) in enumerate(kinds):
            if slot == "imm":
                ops.append((kind, "R", slot)); continue
            a = info.op_access(i)
            if a not in ROLE_OF_ACCESS: raise CannotDraft(f"operand {i + 1} is {ACCESS_NAMES[a]} for iced (no spec role)")
            role = ROLE_OF_ACCESS[a]
            memory_only = (kind.startswith("m") and "/" not in kind and kind not in spec.REG_CLASSES) or kind.startswith("vm")
            if (a == I.OpAccess.NO_MEM_ACCESS) != (role == "N" and memory_only):
                raise CannotDraft(f"operand {i + 1} ({kind}) is {ACCESS_NAMES[a]} for iced")
            ops.append((kind, role, slot))
        opsize_ops = ops
        sig = (ops, flag_text(ins))
        if seen is not None and seen[0] != sig:
            raise CannotDraft(f"roles or flags differ between the register and the memory instance: {seen[0]} / {sig}")
        if seen is None: seen = (sig, ins, explicit, address)
    ops = opsize_ops
    _sig, ins, explicit, address = seen
    gpr_sizes = [int(k[3:]) if k.startswith("r/m") else int(k.split("/")[0][1:]) for k, _r, s in ops
                 if s != "fixed" and (k.startswith("r/m") or k.split("/")[0] in ("r16", "r32", "r64"))]
    opsize = next(iter(gpr_sizes), 0) \
        or {16: 16, 32: 32, 64: 64}.get(oc.operand_size, 32)
    imp = implicit_text(ins, explicit, address, opsize)
    # locations: write @loc only where the spec's inference differs
    ctx = ("draft", 0)
    e = spec.parse_encoding(encoding, ctx)

    def text(with_loc: set) -> list[str]:
        return [("" if r == "R" else f"{r}:") + k + (f"@{s}" if i in with_loc else "") for i, (k, r, s) in enumerate(ops)]

    with_loc: set = set()
    for _ in range(2):
        parsed = [spec.parse_operand(t, ctx) for t in text(with_loc)]
        try: placed = spec.assign_locations(parsed, e, ctx)
        except spec.SpecError as ex:
            if with_loc: raise CannotDraft(f"spec cannot place the operands: {ex}") from None
            with_loc = {i for i, (_k, _r, s) in enumerate(ops) if s not in ("imm", "fixed")}
            continue
        wrong = {i for i, (o, (_k, _r, s)) in enumerate(zip(placed, ops)) if o.loc != s}
        if not wrong: break
        with_loc = {i for i, (_k, _r, s) in enumerate(ops) if s not in ("imm", "fixed")}
    else:
        raise CannotDraft("spec cannot place the operands")
    parsed = spec.assign_locations(spec.vsib_element_size([spec.parse_operand(t, ctx) for t in text(with_loc)], e, ctx), e, ctx)
    if evex:   # the loader's disp8*N from the drafted tuple= must be iced's (the tuple type is inferred, iced_forms.sdm_tuple)
        ev = spec.evex_fields(evex, parsed, e, ctx)
        if any(o.mem is not None for o in parsed) and (ev["disp8_n"], ev["disp8_n_bcst"]) != F.iced_tuple(code):
            raise CannotDraft(f"tuple={evex.get('tuple')} gives N {ev['disp8_n']}/{ev['disp8_n_bcst']}, iced {F.iced_tuple(code)}")
    derived = spec.derive_id(mn, parsed, e["encoding_kind"], {"mask": evex.get("mask", ""), "rc": evex.get("rc", ""),
                                                              "bcst": int(evex.get("bcst", 0))})
    return dict(mnemonic=mn, operands=", ".join(text(with_loc)), encoding=encoding, id=None if derived == name else name,
                cpuid=F.cpuid_name(code), flags=flag_text(ins), imp=",".join(imp), code=name,
                evex=" ".join(f"{k}={v}" for k, v in evex.items()))


def family_defaults(path: str) -> dict[str, dict[str, str]]:
    """{mnemonic: {"cpuid": ..., "flags": ...}} of the spec's families, as written."""
    with open(path, encoding="utf-8") as fh: data = yaml.safe_load(fh)
    return {mn: {"cpuid": fam.get("cpuid", ""), "flags": fam.get("flags", "") or ""} for mn, fam in data.items()
            if mn != spec.EXCLUDED_KEY and isinstance(fam, dict)}


def form_line(d: dict, fam: dict, width: int, enc_width: int) -> str:
    attrs = [d["evex"]] if d.get("evex") else []
    if d["id"]: attrs.append(f"id={d['id']}")
    if d["cpuid"] != fam["cpuid"]: attrs.append(f"cpuid={d['cpuid']}")
    if spec.parse_flags(d["flags"], ("draft", 0)) != spec.parse_flags(fam["flags"], ("draft", 0)):
        attrs.append(f"flags={d['flags'].replace(' ', ';')}" if d["flags"] else "flags=")
    if d["imp"]: attrs.append(f"imp={d['imp']}")
    body = f"{d['operands']:<{max(width, 6)}} | " + (f"{d['encoding']:<{enc_width}} | " + " ".join(attrs) if attrs else d["encoding"])
    body = body.rstrip()
    return f'  - "{body}"' if not d["operands"] or body[0] in "[{&*!|>'\"%@`" else f"  - {body}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpuid", help="only forms with these CPUID feature names (comma separated, as coverage.py prints them)")
    ap.add_argument("--mnemonic", help="only these mnemonics (comma separated)")
    ap.add_argument("--code", help="only these iced Code names (comma separated)")
    ap.add_argument("--encoding", default="LEGACY,VEX", help="encodings to draft: LEGACY, VEX, EVEX (default LEGACY,VEX)")
    args = ap.parse_args(argv)
    have = {f.id for f in spec.load(SPEC)} | set(spec.excluded(SPEC))
    fams = family_defaults(SPEC)
    want_cpuid = set(args.cpuid.split(",")) if args.cpuid else None
    want_mn = set(args.mnemonic.split(",")) if args.mnemonic else None
    want_code = set(args.code.split(",")) if args.code else None
    drafts: dict[str, list[dict]] = collections.defaultdict(list)
    failed: list[tuple[str, str]] = []
    for code, name, enc in F.iced_codes():
        if enc not in args.encoding.split(",") or name in have: continue
        if want_code and name not in want_code: continue
        if want_cpuid and F.cpuid_name(code) not in want_cpuid: continue
        mn = F.MNEMONIC_NAMES[I.OpCodeInfo(code).mnemonic].lower()
        if want_mn and mn not in want_mn: continue
        try: d = draft(code)
        except (F.Unsupported, CannotDraft, spec.SpecError) as ex: failed.append((name, str(ex)))
        else: drafts[mn].append(d)
    for mn, ds in drafts.items():
        width = max(len(d["operands"]) for d in ds)
        enc_width = max(len(d["encoding"]) for d in ds)
        if mn in fams:
            print(f"# add to {mn}:")
            fam = fams[mn]
        else:
            fam = {"cpuid": collections.Counter(d["cpuid"] for d in ds).most_common(1)[0][0],
                   "flags": collections.Counter(d["flags"] for d in ds).most_common(1)[0][0]}
            print(f"{mn}:\n  cpuid: {fam['cpuid']}" + (f"\n  flags: {fam['flags']}" if fam["flags"] else "") + "\n  forms:")
        for d in ds: print(form_line(d, fam, width, enc_width))
    for name, why in failed: print(f"# cannot draft {name}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
