"""tinygrad 0.14.0's ``DEV=CPU:X86`` backend with every instruction's bytes from x86gen.

    >>> from x86gen.integrations import tinygrad as xg
    >>> xg.install()                    # or: with xg.installed(compare=True): ...
    >>> # DEV=CPU:X86 programs now render through x86gen; xg.stats() counts what was encoded

tinygrad keeps instruction selection, register allocation and its ``X86Ops`` uops; this module replaces
only the last step, ``X86Renderer.render`` (uops -> machine code), whose per-op ``encodings`` table is
never called. Each instruction's uop is mapped onto a form of `x86gen.reference.TINYGRAD_X86OPS` by the
source layout tinygrad's own encoder uses (`x86gen.reference.TINYGRAD_LAYOUT`, isa/tinygrad.yaml ``layouts``):
the sources are put into the ModRM.reg / ModRM.rm / VEX.vvvv / immediate slots, and the form with those
operand slots and kinds is chosen once per operand signature (`Form.accepts` the test, the widest immediate
first, as `x86gen.select_form` with ``imm="widest"``: tinygrad always writes ``81 /0 id``). Each process
builds the encoders once, from an on-disk code cache when it can (`prebuild`).

Options (`install` keywords):

- ``compare=True``: also run tinygrad's own encoder on every instruction and count the differences by
  reason (`stats`). The documented reasons are tinygrad's encoding choices, not errors of either side:
  ``redundant REX 0x40`` (tinygrad's ``reg_sz == 1 & reg >> 2`` test adds an empty REX prefix),
  ``disp32 where disp8 fits`` (tinygrad picks disp32 for -128), and both at once.
- ``assembler=True``: lay the kernel out with `x86gen.Assembler` (labels, rel8 branch relaxation:
  smaller code) instead of tinygrad's fixed rel32 jumps; ``last_listing()`` is its listing.
- ``stats_dir=path``: every process (also tinygrad's compile workers) writes its counts there.

Compile workers: tinygrad compiles kernels in a pool of *spawned* processes (tinygrad.engine.worker, a
worker replaced every ``BEAM_MAX_TASKS_PER_CHILD=16`` tasks) and sends them ``(ast, renderer)`` by pickle.
`install` makes the CPU device's renderer an instance of this module's `X86Renderer`, whose pickle names
this module and carries the options (`X86Renderer.__reduce__`), so a fresh worker imports x86gen and
renders with it: nothing to set up in the worker, no environment variable, no ``.pth`` hook.
"""
from __future__ import annotations

import collections
import contextlib
import hashlib
import json
import marshal
import os
import sys

from tinygrad.dtype import dtypes
from tinygrad.renderer.isa import Register
from tinygrad.renderer.isa import x86 as tx
from tinygrad.uop import Ops

from .. import table as _table
from .._version import __version__
from ..errors import EncodeError
from ..forms import get_form
from ..memory import Mem
from ..reference import TINYGRAD_LAYOUT, TINYGRAD_X86OPS
from ..registers import REGISTERS as _REGS
from ..registers import gpr, vec

__all__ = ["X86Renderer", "install", "uninstall", "installed", "stats", "reset_stats", "last_listing", "prebuild", "encode_uop",
           "TINYGRAD_VERSION"]
TINYGRAD_VERSION = "0.14.0"
X = tx.X86Ops
_STATS: collections.Counter = collections.Counter()
_LISTING: list = [""]   # the last kernel's Assembler (its listing on demand), "" before any

# ---- the mapping: a tinygrad instruction uop -> (form, operands) -------------------------------------------
_GPR = [{n: gpr(i, 8 * n) for n in (1, 2, 4, 8)} for i in range(16)]
_VEC = [(vec(i, 128), vec(i, 256)) for i in range(16)]
SLOT = {"reg": 0, "opc": 0, "rm": 1, "vvvv": 2, "imm": 3, "is4": 3, "fixed": 3}   # form operand loc -> role
WRITE_MEM, RM_1ST, RM_2ND, OPC = 0, 1, 2, 3
_KIND = {"store": WRITE_MEM, "store-digit": WRITE_MEM, "rm-first": RM_1ST, "rm-first-digit": RM_1ST, "rm-second": RM_2ND,
         "opcode-register": OPC}
LAYOUT = {X[op]: _KIND[lay] for op, lay in TINYGRAD_LAYOUT.items() if lay in _KIND}   # isa/tinygrad.yaml `layouts`
HAS_REG = {X[op] for op, lay in TINYGRAD_LAYOUT.items() if lay in _KIND and not lay.endswith("-digit")}   # a ModRM.reg operand
JUMPS: dict = {}   # jump op -> its rel32 form's bytes with a 0 placeholder, filled by `prebuild`
SKIP = (X.DEFINE, X.LOOP_CMP)


_PASS = frozenset((Ops.NOOP, Ops.AFTER))


def greg(u):
    """tinygrad's `greg` (tinygrad/renderer/isa/__init__.py): the register a uop was allocated, through NOOP/AFTER."""
    while u.op in _PASS and u.src: u = u.src[0]
    t = u.tag
    return t[0] if t.__class__ is tuple else t


def _reg(u, r: Register):
    n = u.dtype.itemsize
    return _VEC[r.index][n > 16] if r.size == 16 else _GPR[r.index][n if n in (1, 2, 4) else 8]


def _val(u):
    """A source as an x86gen operand: an immediate (CAST of a CONST) as int, a register, or None (e.g. a flag producer)."""
    if u.op is Ops.CAST: return int(u.src[0].val)
    r = greg(u)
    return _reg(u, r) if r.__class__ is Register else None


def _mem(s, wide: bool = False) -> Mem:
    """tinygrad's four-source address (base, index, displacement, element size) as a sized memory operand."""
    i, z = greg(s[1]), s[3].src[0].val
    m = Mem(_GPR[greg(s[0]).index][8], None if i is None else _GPR[i.index][8], z if i is not None else 1, s[2].src[0].val, 8 * z)
    return m.with_disp32() if wide and m.disp and s[2].dtype.itemsize == 4 else m


def _roles(u, wide: bool = False) -> tuple:
    """(reg, rm, vvvv, imm) as tinygrad's encode() fills them (tinygrad/renderer/isa/x86.py `encode`)."""
    a, s = u.arg, u.src
    lay, reg, vvvv, imm = LAYOUT[a], None, None, None
    if lay == WRITE_MEM:   # stores: address first, else the destination is rm; then the value (reg) and imm
        rm, rest = (_mem(s, wide), s[4:]) if len(s) > 4 else (_reg(u, greg(u)), s)
        if a in HAS_REG: reg, rest = _val(rest[0]), rest[1:]
        if rest: imm = _val(rest[0])
    elif lay == RM_1ST:    # the first source is rm (or an address), the destination reg (or vvvv for /digit forms)
        rm, rest = (_mem(s, wide), s[4:]) if len(s) > 3 else (_val(s[0]), s[1:])
        if a in HAS_REG: reg = _reg(u, greg(u))
        else: vvvv = _reg(u, greg(u)) if u.dtype is not dtypes.void else None
        if rest and rest[0].op is Ops.CAST: imm = int(rest[0].src[0].val)
    elif lay == RM_2ND:    # the second source is rm; the first goes to vvvv (or reg when nothing is defined)
        rm, rest = (_mem(s[1:5], wide), s[:1] + s[5:]) if len(s) > 4 else (_val(s[1]), s[:1] + s[2:])
        if u.dtype is dtypes.void: reg = _val(rest[0])
        else: reg, vvvv, imm = _reg(u, greg(u)), _val(rest[0]), (_val(rest[1]) if len(rest) > 1 else None)
    else: rm, reg, imm = None, _reg(u, greg(u)), int(s[0].src[0].val)   # MOVABS: mov r64, imm64 (B8+r)
    return reg, rm, vvvv, imm


def _as(x, kind: str):
    """A general register as the form's register kind: another width (vpextrb r32/m8, shl's cl) or, as tinygrad's
    encoder uses only register numbers, the vector register of that number (a scalar DEFINE in vpinsrd's vvvv)."""
    if kind[0] in "xy": return vec(x.num, 128 if kind == "xmm" else 256)
    return x.sized(8 if kind == "cl" else int(kind[1:]))


def _sig(x): return None if x is None else "i" if x.__class__ is int else x.sig


def _choose(a, roles: tuple):
    """(form, encoder, operand order, resized operands, merge register, unsized) for one signature. As in tinygrad's
    encoder, the operation size is the reg operand's (else rm's) and other registers are only numbers: first the forms
    that take the operands as they are, then those taking the other registers as their kind (`_as`: the nearest width);
    each with the memory operand sized by tinygrad's element size, then unsized (vmovups xmm, m128 of float elements)."""
    forms = sorted((get_form(i) for i in TINYGRAD_X86OPS[a.name]), key=lambda f: -sum(o.imm or 0 for o in f.operands))
    for resizing, unsized in ((False, False), (False, True), (True, False), (True, True)):
        rs = tuple(r.with_size(0) if unsized and r.__class__ is Mem else r for r in roles)
        best = None
        for f in forms:
            order = tuple(SLOT[o.loc] for o in f.operands)
            ops = [rs[k] if k != 2 or rs[2] is not None else vec(0, 128 if o.kind == "xmm" else 256)   # vvvv unset: xmm0
                   for k, o in zip(order, f.operands)]
            if any(x is None for x in ops): continue
            keep = 0 if 0 in order else 1   # the role whose size is the operation's
            resize = tuple((j, o.reg) for j, (o, x) in enumerate(zip(f.operands, ops)) if resizing and order[j] != keep and
                           x.__class__ is not int and x.kind[0] == "r" and o.reg and o.reg[0] in "rcxy" and
                           (x.name if o.loc == "fixed" else x.kind) != o.reg)
            cost = sum(abs(ops[j].size - int(k[1:])) for j, k in resize if k[0] == "r")   # (kinds r8 … r64)
            for j, kind in resize: ops[j] = _as(ops[j], kind)
            if f.accepts(*ops) and (best is None or cost < best[0]):
                best = (cost, (f.id, _encoder(f.id), order, resize, (ops[order.index(2)] if 2 in order and rs[2] is None else None),
                               unsized))
        if best: return best[1]
    raise EncodeError(f"x86gen.integrations.tinygrad: no form of {a.name} ({', '.join(TINYGRAD_X86OPS[a.name])}) takes "
                      f"reg/rm/vvvv/imm = {', '.join(str(x) for x in roles)}")


_PLANS: dict[tuple, tuple] = {}


def encode_uop(u, wide: bool = False) -> tuple:
    """(form id, its encoder, operands) for one instruction uop; ``wide``: displacements tinygrad writes as disp32 stay disp32."""
    if not _CACHE["loaded"]: prebuild()
    r = _roles(u, wide)
    a, b, c, d = r
    p = _PLANS.get((u.arg, None if a is None else "i" if a.__class__ is int else a.sig,
                    None if b is None else "i" if b.__class__ is int else b.sig,
                    None if c is None else "i" if c.__class__ is int else c.sig,
                    None if d is None else "i" if d.__class__ is int else d.sig))   # = _sig of each, inline
    if p is None:
        key = (u.arg, _sig(a), _sig(b), _sig(c), _sig(d))
        p = _PLANS[key] = _choose(u.arg, r)
        _CACHE["dirty"] = True
    f, enc, order, resize, merge, unsized = p
    ops = [r[k] if k != 2 or merge is None else merge for k in order]
    if unsized: ops = [x.with_size(0) if x.__class__ is Mem else x for x in ops]
    for j, kind in resize: ops[j] = _as(ops[j], kind)
    return f, enc, ops


def _reason(u, ours: bytes, theirs: bytes) -> str:
    """Why tinygrad's bytes differ from x86gen's: one of the documented reasons, else 'other'."""
    def no_rex(b: bytes) -> set:
        return {b[:i] + b[i + 1:] for i in range(min(len(b), 3)) if b[i] == 0x40}
    if ours in no_rex(theirs): return "redundant REX 0x40"
    _f, enc, ops = encode_uop(u, wide=True)
    wide = enc(*ops)
    if wide == theirs: return "disp32 where disp8 fits"
    if wide in no_rex(theirs): return "redundant REX 0x40 + disp32 where disp8 fits"
    return "other"


class X86Renderer(tx.X86Renderer):
    """tinygrad's X86Renderer with `render` encoding through x86gen (same name, so ``DEV=CPU:X86`` selects it)."""

    options: dict = {}

    def __reduce__(self): return (_make, (self.target, self.options))   # compile workers get this class and the options

    def render(self, uops) -> str:
        if not _CACHE["loaded"]: prebuild()
        o, st = self.options, _STATS
        compare, asm = o.get("compare", False), (o.get("assembler") and _assembler())
        ref = tx.encodings if compare else None
        binary, targets, jumps = bytearray(), {}, []
        for u in uops:
            if u.op is not Ops.INS or u.arg in SKIP: continue
            a = u.arg
            if a is X.LABEL:
                if asm: asm.bind(asm.get_label(u.tag))
                else: targets[u.tag] = len(binary)
                continue
            st["instructions"] += 1
            if a in JUMPS:
                if asm: asm.emit(a.name.lower(), asm.get_label(u.tag))
                else: binary += JUMPS[a]; jumps.append((u.tag, len(binary)))
                b = JUMPS[a]
            elif a is X.RET: b = b"\xc3"; asm.emit_form("RETNQ") if asm else binary.extend(b)
            else:
                try:
                    f, enc, ops = encode_uop(u)
                    b = enc(*ops)
                except (KeyError, IndexError, AttributeError, TypeError) as e:   # a uop this mapping does not know
                    raise EncodeError(f"x86gen.integrations.tinygrad: cannot encode {a} (dtype {u.dtype}, srcs "
                                      f"{[x.op.name for x in u.src][:8]}): {type(e).__name__}: {str(e)[:200]}") from e
                if asm: asm.emit_form(f, *ops)
                else: binary += b
            if compare:
                st["tinygrad_encoder_calls"] += 1
                if (theirs := ref[a](u)) != b: st["differ: " + _reason(u, b, theirs)] += 1
                else: st["same bytes"] += 1
        if asm:
            binary = asm.assemble()
            _LISTING[0] = asm   # its listing is made when last_listing() asks for it
            st["jumps relaxed to rel8 (assembler=True)"] += sum(1 for b in asm.branch_sizes() if b[2] == 2)
        for tag, end in jumps: binary[end - 4:end] = (targets[tag] - end).to_bytes(4, "little", signed=True)
        st["kernels"] += 1
        if o.get("stats_dir"): _write_stats(o["stats_dir"])
        if _CACHE["dirty"]: _save_cache()
        return binary.hex()


def _assembler():
    from ..assembler import Assembler
    return Assembler(listing=True)   # (for last_listing())


def _make(target, options):
    r = X86Renderer(target)
    r.options = options
    return r


# ---- start-up: the encoders of tinygrad's forms and the chosen plans from an on-disk cache ------------------------
# The form encoders are generated functions (x86gen._gen.encoders), bound on first use without compiling; what a
# compile worker (replaced every 16 kernels) would redo is choosing the form per operand signature, and, where Python
# keeps no bytecode (PYTHONDONTWRITEBYTECODE, a read-only install), compiling the shape modules those forms use from
# source (about 1-3 ms each). The choices and those modules' code are kept in a marshal file, keyed by the Python
# version, x86gen's version, the generated files that number the shapes (the table, encoders/__init__.py) and the
# sources that choose (this file, forms), with the
# decoded table rows of those forms' mnemonics (`x86gen._table.preload`: the table itself is then not read); in
# $X86GEN_CACHE_DIR, else $XDG_CACHE_HOME/x86gen or ~/.cache/x86gen (X86GEN_CACHE_DIR="" turns it off).
# A missing, stale, unreadable or unwritable cache only costs time.
_ENC: dict[str, object] = {}
_CACHE = {"loaded": False, "dirty": False}


def _encoder(fid: str):
    e = _ENC.get(fid)
    if e is None:
        e = _ENC[fid] = get_form(fid).encoder
        _CACHE["dirty"] = True
    return e


def _cache_path() -> str | None:
    d = os.environ.get("X86GEN_CACHE_DIR")
    if d is None: d = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "x86gen")
    if not d: return None
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # the code depends on the table, the encoder writer
    # and the operand classes, and on how the generated shapes are numbered and grouped in modules (the table's shape
    # column, encoders.CHUNK)
    files = ("memory.py", "registers.py", "forms.py", os.path.join("_gen", "table", "__init__.py"),
             os.path.join("_gen", "encoders", "__init__.py"))
    stats = [os.stat(f) for f in (__file__, *(os.path.join(pkg, m) for m in files))]
    key = f"{sys.version} {__version__} {[(st.st_size, st.st_mtime_ns) for st in stats]} {TINYGRAD_VERSION}"
    key = hashlib.sha256(key.encode()).hexdigest()[:16]
    return os.path.join(d, f"tinygrad-{key}.marshal")


def prebuild() -> int:
    """Make the encoders of every form tinygrad uses (`x86gen.reference.TINYGRAD_X86OPS`) ready, from the code cache
    when it is there (else compiled, and the cache written); returns how many. Called once per process, on first use."""
    _CACHE["loaded"] = True
    path = _cache_path()
    try:
        with open(path, "rb") as fh: codes, plans, jumps, modules, rows = marshal.loads(fh.read())   # (marshal.load(fh) is 10x slower)
        _table.preload(rows)
        for name, code in modules.items(): _load_shape_module(name, code)
        for fid in codes: _ENC.setdefault(fid, get_form(fid).encoder)
        for (name, *sig), (fid, order, resize, merge, unsized) in plans.items():
            _PLANS.setdefault((X[name], *sig), (fid, _ENC[fid], order, resize, merge and _REGS[merge], unsized))
        JUMPS.update((X[n], b) for n, b in jumps.items())
    except (OSError, ValueError, EOFError, TypeError, KeyError):
        JUMPS.update((o, get_form(f"{o.name}_REL32_64").encode_rel(0)[0]) for o in (X.JE, X.JNE, X.JL, X.JB, X.JGE, X.JMP))
        for ids in TINYGRAD_X86OPS.values():
            for fid in ids: _encoder(fid)
        _save_cache()
    return len(_ENC)


_SHAPE_PACKAGE = "x86gen._gen.encoders"


def _load_shape_module(name: str, code) -> None:
    """Make the shape module ``name`` (x86gen._gen.encoders.eNNN) from its cached code, as an import of its file would."""
    if name in sys.modules or not name.startswith(_SHAPE_PACKAGE + ".e"): return
    import importlib.util

    from .._gen import encoders as parent
    spec = importlib.util.spec_from_file_location(name, code.co_filename)
    mod = importlib.util.module_from_spec(spec)
    mod.__dict__["_FROM_CODE_CACHE"] = True   # (how tests/test_tinygrad.py tells a cached module from an imported one)
    sys.modules[name] = mod
    try: exec(code, mod.__dict__)
    except BaseException:
        del sys.modules[name]
        raise
    setattr(parent, name.rpartition(".")[2], mod)


def _save_cache() -> None:
    _CACHE["dirty"] = False
    path = _cache_path()
    if path is None: return
    codes = sorted(_ENC)   # the form ids (their encoders are bound again, from the shape modules below)
    modules = {}           # the shape modules they use, compiled: name -> code object
    for name, mod in list(sys.modules.items()):
        src = getattr(mod, "__file__", None)
        if name.startswith(_SHAPE_PACKAGE + ".e") and src:
            try:
                with open(src, "rb") as fh: modules[name] = compile(fh.read(), src, "exec", dont_inherit=True)
            except (OSError, SyntaxError): pass
    plans = {(k[0].name, *k[1:]): (p[0], p[2], p[3], p[4] and p[4].name, p[5]) for k, p in _PLANS.items()}
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        rows = _table.plain_rows(sorted({get_form(fid).mnemonic for fid in codes}))   # their mnemonics' decoded rows
        with open(tmp, "wb") as fh: marshal.dump((codes, plans, {o.name: b for o, b in JUMPS.items()}, modules, rows), fh)
        os.replace(tmp, path)
    except OSError: pass


# ---- install / uninstall ------------------------------------------------------------------------------------
_SAVED: list = []


def install(*, compare: bool = False, assembler: bool = False, stats_dir: str | None = None) -> None:
    """Make tinygrad's ``DEV=CPU:X86`` render with x86gen (see the module docstring for the options).

    Devices opened later create this module's `X86Renderer`; an already opened CPU device drops its cached
    X86 renderer. Compile workers started from now on render with x86gen too (the renderer is pickled to them)."""
    from tinygrad.runtime import ops_cpu
    if not _SAVED: _SAVED.append(ops_cpu.X86Renderer)
    X86Renderer.options = {"compare": compare, "assembler": assembler, "stats_dir": stats_dir and os.fspath(stats_dir)}
    _swap(ops_cpu, _SAVED[0], X86Renderer)


def uninstall() -> None:
    """Undo `install`: tinygrad's own renderer and encoder again."""
    from tinygrad.runtime import ops_cpu
    if _SAVED: _swap(ops_cpu, X86Renderer, _SAVED.pop())


def _swap(ops_cpu, old, new) -> None:
    ops_cpu.X86Renderer = new
    from tinygrad.device import Device
    for name in list(Device._opened_devices):
        d = Device[name]
        if getattr(d, "renderers", None) and old in d.renderers:
            d.renderers[d.renderers.index(old)] = new
            for k in [k for k in d.cached_renderer if k[0] is old]: del d.cached_renderer[k]
    from tinygrad.engine.worker import terminate_worker_pool
    terminate_worker_pool()   # workers spawned before hold the old renderer's compiled kernels cache; start fresh


@contextlib.contextmanager
def installed(**options):
    """``with installed(compare=True): ...``: `install` for the block, then `uninstall`."""
    install(**options)
    try: yield
    finally: uninstall()


def stats() -> dict[str, int]:
    """Counts of this process plus those the processes writing to ``stats_dir`` left there: kernels, instructions
    (encoded by x86gen), with ``compare``: tinygrad_encoder_calls, "same bytes", "differ: <reason>"."""
    total = collections.Counter(_STATS)
    d = X86Renderer.options.get("stats_dir")
    if d and os.path.isdir(d):
        for fn in os.listdir(d):
            if fn.endswith(".json") and fn != f"{os.getpid()}.json":
                with open(os.path.join(d, fn)) as fh: total.update(json.load(fh))
    return dict(total)


def reset_stats() -> None:
    _STATS.clear()


def last_listing() -> str:
    """The `x86gen.Assembler` listing of the last kernel rendered in this process (``assembler=True``)."""
    a = _LISTING[0]
    return a if a.__class__ is str else a.listing()


def _write_stats(d: str) -> None:
    os.makedirs(d, exist_ok=True)
    tmp = os.path.join(d, f".{os.getpid()}.tmp")
    with open(tmp, "w") as fh: json.dump(dict(_STATS), fh)
    os.replace(tmp, os.path.join(d, f"{os.getpid()}.json"))
