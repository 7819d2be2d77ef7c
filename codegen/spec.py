"""Load and validate isa/x86_64.yaml (the format is described in isa/README.md).

`load(path)` returns a list of `Form` records in file order. Every problem raises `SpecError`
naming the file, the line and the field; nothing is silently dropped.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field

import yaml

REG_CLASSES = {"r8": 8, "r16": 16, "r32": 32, "r64": 64, "xmm": 128, "ymm": 256, "zmm": 512, "k": 64, "mm": 64, "tmm": 8192}
MEM_SIZES = {8, 16, 32, 64, 80, 128, 256, 512}
FIXED_REGS = {"al": 8, "cl": 8, "ax": 16, "dx": 16, "eax": 32, "ecx": 32, "edx": 32, "rax": 64, "rcx": 64, "rdx": 64}
ROLES = {"R": "r", "W": "w", "RW": "rw", "CW": "cw", "RCW": "rcw", "CR": "cr", "N": "n"}
LOCS = {"reg", "rm", "vvvv", "opc", "is4", "imm", "fixed", "moffs"}
# L: AC, alignment check (clac/stac, popf); U: UIF, the user-interrupt flag (clui/stui/testui, SDM Vol.3 UINTR), as
# iced-x86's RflagsBits.AC/UIF report them
FLAG_LETTERS = {"O": "OF", "S": "SF", "Z": "ZF", "A": "AF", "C": "CF", "P": "PF", "D": "DF", "I": "IF", "L": "AC",
                "U": "UIF"}
FLAG_GROUPS = {"r": "read", "w": "written", "u": "undefined", "0": "cleared", "1": "set"}
FAMILY_KEYS = {"forms", "cpuid", "flags", "isel", "note"}
FORM_ATTRS = {"id", "cpuid", "flags", "imp"}
IMM_SIZES = {"ib": 8, "iw": 16, "id": 32, "io": 64, "cb": 8, "cd": 32}
MAPS = {"": 0, "0F": 1, "0F38": 2, "0F3A": 3}
PP = {"NP": 0, "66": 1, "F3": 2, "F2": 3}


class SpecError(Exception):
    """A malformed entry in the ISA spec; the message names file, line and field."""

    def __init__(self, file: str, line: int, field: str, msg: str):
        super().__init__(f"{file}:{line}: {field}: {msg}")
        self.file, self.line, self.field = file, line, field


@dataclass(frozen=True)
class Operand:
    kind: str          # as written, with r/m32 normalised to r32/m32
    role: str          # r w rw cw n
    loc: str           # reg rm vvvv opc is4 imm fixed
    reg: str | None    # register class (r32, xmm, ...) or a fixed register name
    mem: int | None    # memory size in bits, 0 for `m` (any), None if no memory allowed
    imm: int | None    # immediate width in bits
    sext: bool = False # immediate sign-extended to the operand size (simm8/simm32)

    @property
    def text(self) -> str:
        role = {v: k for k, v in ROLES.items()}[self.role]
        return f"{role}:{self.kind}"


@dataclass
class Form:
    id: str
    mnemonic: str
    operands: tuple[Operand, ...]
    implicit: tuple[tuple[str, str], ...]   # (role, register)
    encoding: str                           # as written in the spec (SDM syntax)
    enc: str                                # legacy | vex | evex
    opcode: int
    map: int                                # 0 none, 1 0F, 2 0F38, 3 0F3A
    pp: int                                 # mandatory prefix: 0 none, 1 66, 2 F3, 3 F2
    o16: bool                               # 0x66 operand-size prefix (legacy 16-bit forms)
    w: int | None                           # REX.W / VEX.W; None = ignored (encoded as 0)
    l: int | None                           # VEX.L / EVEX.L'L: 0, 1, 2; None = ignored (encoded as 0)
    modrm: str | None                       # "r", "0".."7", a fixed ModRM byte "E8" (two hex digits), or None
    opreg: bool                             # register in the opcode's low 3 bits (+rb/+rw/+rd/+ro)
    imms: tuple[int, ...]                   # immediate field widths in bits, in order
    is4: bool
    cpuid: str
    flags: dict[str, tuple[str, ...]]
    osize: int                              # operand size used for immediate sign extension
    line: int
    evex: dict[str, str] = field(default_factory=dict)


def _err(ctx, field, msg):
    raise SpecError(ctx[0], ctx[1], field, msg)


def parse_flags(text: str, ctx, sep=None) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for group in (text or "").replace(";", " ").split(sep):
        if "=" not in group: _err(ctx, "flags", f"expected GROUP=LETTERS, got {group!r}")
        g, letters = group.split("=", 1)
        if g not in FLAG_GROUPS: _err(ctx, "flags", f"unknown flag group {g!r} (use {', '.join(FLAG_GROUPS)})")
        bad = [c for c in letters if c not in FLAG_LETTERS]
        if bad: _err(ctx, "flags", f"unknown flag letter(s) {''.join(bad)!r} (use {''.join(FLAG_LETTERS)})")
        out[FLAG_GROUPS[g]] = tuple(sorted(FLAG_LETTERS[c] for c in letters))
    return out


_OPERAND = re.compile(r"^(?:(R|W|RW|CW|RCW|CR|N):)?([a-z0-9/]+)(?:@([a-z0-9]+))?$")


def parse_operand(text: str, ctx) -> Operand:
    m = _OPERAND.match(text.strip())
    if not m: _err(ctx, "operands", f"cannot parse operand {text.strip()!r} (expected [ROLE:]KIND[@LOC])")
    role, kind, loc = m.group(1) or "R", m.group(2), m.group(3)
    if loc is not None and loc not in LOCS: _err(ctx, "operands", f"unknown location @{loc} (use {', '.join(sorted(LOCS))})")
    if kind.startswith("r/m"): kind = f"r{kind[3:]}/m{kind[3:]}"
    reg = mem = imm = None
    sext = False
    if kind in REG_CLASSES: reg = kind
    elif kind in FIXED_REGS or kind == "1": reg = kind; loc = loc or ("fixed" if kind != "1" else "imm")
    elif re.fullmatch(r"s?imm(8|16|32|64)", kind):
        imm, sext = int(kind.lstrip("s")[3:]), kind.startswith("s")
    elif re.fullmatch(r"rel(8|32)", kind): imm = int(kind[3:])
    elif re.fullmatch(r"moffs(8|16|32|64)", kind): mem, loc = int(kind[5:]), loc or "moffs"   # 8-byte absolute address after the opcode
    elif re.fullmatch(r"vm(32|64)[xy]", kind): mem = -1   # VSIB: the element size comes from VEX.W (`load`)
    elif kind in ("m", "sibmem"): mem = 0   # sibmem: an address that must have a SIB byte (AMX tile loads/stores)
    elif re.fullmatch(r"m\d+", kind): mem = int(kind[1:])
    elif "/" in kind:
        r, _, mm = kind.partition("/")
        if r not in REG_CLASSES or not re.fullmatch(r"m\d+", mm): _err(ctx, "operands", f"unknown kind {kind!r}")
        reg, mem = r, int(mm[1:])
    else: _err(ctx, "operands", f"unknown kind {kind!r}")
    if mem and mem > 0 and mem not in MEM_SIZES: _err(ctx, "operands", f"bad memory size in {kind!r}")
    if imm is not None: loc = loc or "imm"
    # lea's address, prefetch's m8, nop's r/m32, hreset's imm8 (SDM Vol.2 HRESET: "imm8 is ignored")
    if role == "N" and reg is None and mem is None and imm is None:
        _err(ctx, "operands", f"role N (not accessed) is only for a register, memory or immediate operand, not {kind!r}")
    return Operand(kind, ROLES[role], loc or "", reg, mem, imm, sext)


_VEX = re.compile(r"^(VEX|EVEX)\.([A-Z0-9.]+)$")


def parse_encoding(text: str, ctx) -> dict:
    toks = text.split()
    if not toks: _err(ctx, "encoding", "empty")
    e = dict(enc="legacy", o16=False, pp=0, w=0, l=None, map=0, modrm=None, opreg=False, imms=[], is4=False)
    i = 0
    m = _VEX.match(toks[0])
    if m:
        e["enc"] = m.group(1).lower()
        parts = m.group(2).split(".")
        e["w"], e["l"] = None, None
        for p in parts:
            if p in ("128", "L0", "LZ"): e["l"] = 0
            elif p in ("256", "L1"): e["l"] = 1
            elif p == "512" and e["enc"] == "evex": e["l"] = 2
            elif p == "LIG": e["l"] = None
            elif p in PP: e["pp"] = PP[p]
            elif p in ("0F", "0F38", "0F3A"): e["map"] = MAPS[p]
            elif p in ("W0", "W1"): e["w"] = int(p[1])
            elif p == "WIG": e["w"] = None
            else: _err(ctx, "encoding", f"unknown {m.group(1)} field {p!r} in {toks[0]!r}")
        if not e["map"]: _err(ctx, "encoding", f"{toks[0]!r} names no opcode map (0F, 0F38, 0F3A)")
        i = 1
    else:
        while i < len(toks) and toks[i] in ("o16", "66", "F2", "F3", "REX.W"):
            t = toks[i]
            if t == "o16": e["o16"] = True
            elif t == "REX.W": e["w"] = 1
            else: e["pp"] = PP[t]
            i += 1
        if i < len(toks) and toks[i] == "0F":
            e["map"], i = 1, i + 1
            if i + 1 < len(toks) and toks[i] in ("38", "3A") and re.fullmatch(r"[0-9A-F]{2}", toks[i + 1]):
                e["map"], i = MAPS["0F" + toks[i]], i + 1
    if i >= len(toks) or not re.fullmatch(r"[0-9A-F]{2}(\+r[bwdo])?", toks[i]):
        _err(ctx, "encoding", f"expected an opcode byte (two upper-case hex digits) in {text!r}")
    e["opcode"] = int(toks[i][:2], 16)
    e["opreg"] = "+" in toks[i]
    for j, t in enumerate(toks[i + 1:]):
        if j == 0 and re.fullmatch(r"[0-9A-F]{2}", t) and not e["opreg"]:
            e["modrm"] = t   # a fixed ModRM byte that completes the opcode (lfence: 0F AE E8, rdtscp: 0F 01 F9)
        elif t == "/r" or re.fullmatch(r"/[0-7]", t):
            if e["modrm"] is not None: _err(ctx, "encoding", "two ModRM specifiers")
            e["modrm"] = t[1:]
        elif t in IMM_SIZES: e["imms"].append(IMM_SIZES[t])
        elif t == "/is4": e["is4"] = True
        else: _err(ctx, "encoding", f"unknown token {t!r} in {text!r}")
    if e["opreg"] and e["modrm"] is not None: _err(ctx, "encoding", "+r and ModRM together")
    return e


def assign_locations(ops: list[Operand], e: dict, ctx) -> list[Operand]:
    """Give each operand its encoding slot (isa/README.md, 'Inference'); explicit @loc wins."""
    ops = list(ops)
    if e["modrm"] is not None and len(e["modrm"]) == 2:
        # a fixed ModRM byte holds no operand, but for one written @reg whose number goes into its reg field (tilezero:
        # `W:tmm@reg | ... 49 C0` is the SDM's 11:rrr:000), which must then be 000
        if any(o.loc == "reg" for o in ops) and int(e["modrm"], 16) & 0b00_111_000:
            _err(ctx, "operands", f"@reg with the fixed ModRM byte {e['modrm']}, whose reg field is not 000")
        e = {**e, "modrm": None}
    def setloc(i, loc): ops[i] = Operand(**{**ops[i].__dict__, "loc": loc})
    if e["opreg"]:
        for i, o in enumerate(ops):
            if not o.loc and o.reg in REG_CLASSES: setloc(i, "opc"); break
    if e["is4"]:
        for i in reversed(range(len(ops))):
            if not ops[i].loc and ops[i].reg in ("xmm", "ymm"): setloc(i, "is4"); break
    free = [i for i, o in enumerate(ops) if not o.loc]
    taken = {o.loc for o in ops if o.loc}
    nfield = len(free) + sum(1 for o in ops if o.loc in ("reg", "rm", "vvvv"))
    if e["modrm"] is not None and "rm" not in taken:
        memish = [i for i in free if ops[i].mem is not None]
        if len(memish) > 1: _err(ctx, "operands", "more than one operand may be memory")
        if memish: setloc(memish[0], "rm"); free.remove(memish[0]); taken.add("rm")
    if e["modrm"] == "r": slots = ["reg", "vvvv", "rm"] if e["enc"] != "legacy" and nfield == 3 else ["reg", "rm"]
    elif e["modrm"] is not None: slots = ["vvvv", "rm"] if e["enc"] != "legacy" and nfield == 2 else ["rm"]
    else: slots = []
    slots = [s for s in slots if s not in taken]
    if len(free) > len(slots):
        _err(ctx, "operands", f"cannot place operand(s) {[ops[i].kind for i in free]}: no encoding slot left (write @loc)")
    for i, s in zip(free, slots): setloc(i, s)
    locs = [o.loc for o in ops]
    for loc in ("reg", "rm", "vvvv", "opc", "is4"):
        if locs.count(loc) > 1: _err(ctx, "operands", f"two operands in {loc}")
    if e["modrm"] == "r" and "reg" not in locs: _err(ctx, "operands", "/r but no operand in ModRM.reg")
    if e["modrm"] is not None and "rm" not in locs: _err(ctx, "operands", "ModRM but no operand in ModRM.rm")
    if e["modrm"] is not None and e["modrm"] != "r" and "reg" in locs: _err(ctx, "operands", "/digit leaves no room for a reg operand")
    if "vvvv" in locs and e["enc"] == "legacy": _err(ctx, "operands", "vvvv only exists in VEX/EVEX")
    if e["is4"] and "is4" not in locs: _err(ctx, "operands", "/is4 but no register for imm8[7:4]")
    for o in ops:
        if o.mem is not None and o.loc not in ("rm", "moffs"):
            _err(ctx, "operands", f"memory-capable {o.kind} must be in ModRM.rm, not {o.loc}")
        if o.loc == "moffs" and (e["modrm"] is not None or e["enc"] != "legacy" or not o.kind.startswith("moffs")):
            _err(ctx, "operands", f"{o.kind}@moffs: only a moffs operand of a legacy form without ModRM goes there")
    nimm = sum(1 for o in ops if o.loc == "imm" and o.kind != "1")
    if nimm != len(e["imms"]): _err(ctx, "encoding", f"{nimm} immediate operand(s) but {len(e['imms'])} immediate field(s)")
    return ops


def is_vsib(o: Operand) -> bool:
    """A VSIB memory operand (vm32x, vm32y, vm64x, vm64y: 32-/64-bit indices in an xmm/ymm register)."""
    return o.kind[:2] == "vm"


def vsib_element_size(ops: list[Operand], e: dict, ctx) -> list[Operand]:
    """``ops`` with each VSIB operand's memory size set to its element size: 32 bits with VEX.W0, 64 with W1
    (SDM Vol.2 VGATHERDPS/VGATHERDPD, VPGATHERDD/VPGATHERDQ …: W picks the element size, the kind the index size)."""
    out = []
    for o in ops:
        if is_vsib(o):
            if e["enc"] == "legacy" or e["w"] is None:
                _err(ctx, "operands", f"{o.kind}: a VSIB operand needs VEX.W0 or VEX.W1 (its element size)")
            o = Operand(**{**o.__dict__, "mem": 32 if e["w"] == 0 else 64})
        out.append(o)
    return out


def derive_id(mnemonic: str, ops: list[Operand], enc: str) -> str:
    parts = [mnemonic.upper()]
    for o in ops:
        if o.imm is not None: parts.append(f"REL{o.imm}_64" if o.kind.startswith("rel") else f"IMM{o.imm}")
        elif o.loc == "moffs" or is_vsib(o) or o.kind == "sibmem": parts.append(o.kind.upper())   # MOFFS32, VM32X, SIBMEM
        elif o.kind == "1": parts.append("1")
        elif o.reg in FIXED_REGS: parts.append(o.reg.upper())
        elif o.reg and o.mem is not None:
            parts.append(f"RM{o.mem}" if o.reg == f"r{o.mem}" else f"{o.reg.upper()}M{o.mem}")
        elif o.reg: parts.append("KR" if o.reg == "k" else o.reg.upper())   # iced spells a mask register KR
        else: parts.append("M" if o.mem == 0 else f"M{o.mem}")
    return ("" if enc == "legacy" else enc.upper() + "_") + "_".join(parts)


def _osize(mnemonic: str, ops: list[Operand], e: dict) -> int:
    """Operand size that an immediate is sign-extended to: the size of the first GPR/memory operand
    (push imm: 64, the default operand size of push in 64-bit mode, SDM Vol.1 3.6.1)."""
    if mnemonic in DEFAULT_64 and not any(o.reg for o in ops): return 64
    for o in ops:
        if o.reg in REG_CLASSES and o.reg.startswith("r"): return REG_CLASSES[o.reg]
        if o.reg in FIXED_REGS: return FIXED_REGS[o.reg]
        if o.mem: return o.mem
    return 64 if e["w"] == 1 else 16 if e["o16"] else 32


def _ctx_nodes(node):
    """Map a YAML mapping node to {key: (key_node, value_node)}."""
    return {k.value: (k, v) for k, v in node.value}


def compose(path: str, what: str) -> yaml.MappingNode:
    """The YAML node tree of a spec file (nodes keep their line numbers); its top level must be a mapping."""
    with open(path, encoding="utf-8") as f: text = f.read()
    try: root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as ex:
        mark = getattr(ex, "problem_mark", None)
        raise SpecError(path, mark.line + 1 if mark else 0, "yaml", str(ex).splitlines()[0]) from None
    if not isinstance(root, yaml.MappingNode): raise SpecError(path, 1, "top level", f"expected a mapping of {what}")
    return root


def load(path: str) -> list[Form]:
    root = compose(path, "mnemonic: family")
    forms: list[Form] = []
    seen_ids: dict[str, int] = {}
    seen_mn: set[str] = set()
    excluded_node = None
    for knode, fam in root.value:
        mn, line = knode.value, knode.start_mark.line + 1
        ctx = (path, line)
        if mn == EXCLUDED_KEY:
            excluded_node = (knode, fam)
            continue
        if mn in seen_mn: _err(ctx, mn, "duplicate family")
        seen_mn.add(mn)
        if not re.fullmatch(r"[a-z][a-z0-9]*", mn): _err(ctx, mn, "mnemonic must be lower case letters and digits")
        if not isinstance(fam, yaml.MappingNode): _err(ctx, mn, "family must be a mapping with a `forms:` list")
        keys = _ctx_nodes(fam)
        for k, (kn, _) in keys.items():
            if k not in FAMILY_KEYS:
                _err((path, kn.start_mark.line + 1), f"{mn}.{k}", f"unknown key (allowed: {', '.join(sorted(FAMILY_KEYS))})")
        if "forms" not in keys: _err(ctx, mn, "missing `forms:`")
        cpuid = keys["cpuid"][1].value if "cpuid" in keys else None
        if cpuid is None: _err(ctx, f"{mn}.cpuid", "missing (every family names its CPUID feature)")
        fam_flags = parse_flags(keys["flags"][1].value, (path, keys["flags"][1].start_mark.line + 1)) if "flags" in keys else {}
        fnode = keys["forms"][1]
        if not isinstance(fnode, yaml.SequenceNode) or not fnode.value: _err(ctx, f"{mn}.forms", "must be a non-empty list")
        for item in fnode.value:
            fl = item.start_mark.line + 1
            fctx = (path, fl)
            if not isinstance(item, yaml.ScalarNode): _err(fctx, f"{mn}.forms", "each form is one line: operands | encoding [| attrs]")
            fields = [s.strip() for s in item.value.split("|")]
            if len(fields) not in (2, 3): _err(fctx, f"{mn}.forms", f"expected 2 or 3 |-separated fields, got {len(fields)}")
            attrs: dict[str, str] = {}
            for a in (fields[2].split() if len(fields) == 3 else []):
                k, eq, v = a.partition("=")
                if not eq or k not in FORM_ATTRS: _err(fctx, "attrs", f"unknown attribute {a!r} (allowed: {', '.join(sorted(FORM_ATTRS))})")
                attrs[k] = v
            e = parse_encoding(fields[1], fctx)
            ops = [parse_operand(t, fctx) for t in fields[0].split(",")] if fields[0] else []
            ops = assign_locations(vsib_element_size(ops, e, fctx), e, fctx)
            implicit: list[tuple[str, str]] = []
            for t in filter(None, attrs.get("imp", "").split(",")):
                role, _, reg = t.partition(":")
                if role not in ROLES or not re.fullmatch(r"[a-z0-9]+", reg): _err(fctx, "imp", f"expected ROLE:register, got {t!r}")
                implicit.append((ROLES[role], reg))
            fid = attrs.get("id") or derive_id(mn, ops, e["enc"])
            if fid in seen_ids: _err(fctx, "id", f"duplicate id {fid} (first on line {seen_ids[fid]})")
            seen_ids[fid] = fl
            flags = parse_flags(attrs["flags"], fctx) if "flags" in attrs else fam_flags
            forms.append(Form(fid, mn, tuple(ops), tuple(implicit), fields[1], e["enc"], e["opcode"], e["map"], e["pp"], e["o16"],
                              e["w"], e["l"], e["modrm"], e["opreg"], tuple(e["imms"]), e["is4"], attrs.get("cpuid", cpuid),
                              flags, _osize(mn, ops, e), fl))
    _check_consistency(forms, path)
    if excluded_node is not None:
        for fid, (fl, _reason) in _parse_excluded(path, *excluded_node).items():
            if fid in seen_ids: _err((path, fl), f"{EXCLUDED_KEY}.{fid}", f"is also a form (line {seen_ids[fid]})")
    return forms


# The top-level `excluded:` mapping: iced-x86 Code name -> why the spec leaves that form out
# (tools/coverage.py reports them apart from the forms still missing).
EXCLUDED_KEY = "excluded"


def _parse_excluded(path: str, knode, node) -> dict[str, tuple[int, str]]:
    ctx = (path, knode.start_mark.line + 1)
    if not isinstance(node, yaml.MappingNode): _err(ctx, EXCLUDED_KEY, "must be a mapping of iced Code name: reason")
    out: dict[str, tuple[int, str]] = {}
    for k, v in node.value:
        fl = k.start_mark.line + 1
        if not isinstance(k, yaml.ScalarNode) or not re.fullmatch(r"[A-Z][A-Z0-9_]*", k.value):
            _err((path, fl), EXCLUDED_KEY, f"key {getattr(k, 'value', k)!r} is not an iced Code name (upper case)")
        if not isinstance(v, yaml.ScalarNode) or not str(v.value).strip():
            _err((path, fl), f"{EXCLUDED_KEY}.{k.value}", "needs a reason (a non-empty string)")
        if k.value in out: _err((path, fl), f"{EXCLUDED_KEY}.{k.value}", f"listed twice (first on line {out[k.value][0]})")
        out[k.value] = (fl, str(v.value).strip())
    return out


def excluded(path: str) -> dict[str, str]:
    """The spec's `excluded:` forms: iced Code name -> the reason written in the YAML."""
    root = compose(path, "mnemonic: family")
    for knode, node in root.value:
        if knode.value == EXCLUDED_KEY: return {k: r for k, (_l, r) in _parse_excluded(path, knode, node).items()}
    return {}


def _check_consistency(forms: list[Form], path: str) -> None:
    """Cross-form checks: operand sizes agree with o16/REX.W, and no two forms share an encoding."""
    seen: dict[tuple, Form] = {}
    for f in forms:
        ctx = (path, f.line)
        gpr = [REG_CLASSES[o.reg] for o in f.operands if o.loc in ("reg", "rm", "opc") and o.reg in ("r16", "r32", "r64")]
        if f.enc == "legacy" and gpr and f.mnemonic not in NO_OSIZE_CHECK:
            size = gpr[0]
            if (size == 16) != f.o16: _err(ctx, "encoding", f"16-bit operand {'needs' if size == 16 else 'must not have'} o16")
            if (size == 64) != (f.w == 1) and f.mnemonic not in DEFAULT_64:
                _err(ctx, "encoding", f"64-bit operand {'needs' if size == 64 else 'must not have'} REX.W")
        # two forms whose bytes could coincide: same opcode fields and the same register/memory shape per operand
        shape = tuple((o.loc, o.reg is not None, o.mem is not None, o.reg if o.loc == "fixed" else None) for o in f.operands)
        key = (f.enc, f.o16, f.pp, f.w or 0, f.l or 0, f.map, f.opcode, f.modrm, f.opreg, shape)
        if key in seen: _err(ctx, "encoding", f"same encoding as {seen[key].id} (line {seen[key].line})")
        seen[key] = f


# movzx/movsx/movsxd decide o16/REX.W by their destination, which is also the first GPR: checked normally.
# crc32's o16 sizes its source (`crc32 r32, r/m16`, SDM Vol.2 CRC32), not its destination.
NO_OSIZE_CHECK: set[str] = {"crc32"}
# push/pop r64 default to 64-bit operand size in long mode (SDM Vol.1 3.6.1): no REX.W.
# rdpid r64 and the 64-bit-only forms of this kind (SDM Vol.2 RDPID: "F3 0F C7 /7 RDPID r64") have no REX.W either;
# so are the instructions whose register operand is 64-bit in 64-bit mode whatever REX.W says (SDM Vol.2 SENDUIPI,
# UMONITOR (an address), VMREAD/VMWRITE ("in 64-bit mode ... 64 bits"), INVEPT/INVVPID/INVPCID).
DEFAULT_64 = {"push", "pop", "call", "jmp", "ret", "rdpid", "senduipi", "umonitor", "vmread", "vmwrite", "invept",
              "invvpid", "invpcid"}


def main(argv: list[str]) -> int:
    path = argv[1] if len(argv) > 1 else "isa/x86_64.yaml"
    try: forms = load(path)
    except SpecError as ex:
        print(f"error: {ex}", file=sys.stderr)
        return 1
    print(f"{path}: {len(forms)} forms, {len({f.mnemonic for f in forms})} mnemonics, ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
