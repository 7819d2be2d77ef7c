"""`Assembler`: whole functions with labels, branches, constants and data, relaxed and listed.

    >>> from x86gen import Assembler, eax, edi, ecx
    >>> a = Assembler()
    >>> loop, done = a.label("loop"), a.label("done")
    >>> a.xor(eax, eax); a.test(edi, edi); a.jle(done)
    >>> a.bind(loop)
    Label('loop')
    >>> a.add(eax, edi); a.dec(edi); a.jne(loop)
    >>> a.bind(done)
    Label('done')
    >>> a.ret()
    >>> a.assemble().hex()
    '31c085ff7e0601f8ffcf75fac3'

One method per mnemonic is generated from the spec (`x86gen._gen.asm_methods`; its stub asm_methods.pyi gives
type checkers and IDEs each method's operand types and forms); ``a.emit("add",
eax, 1)`` does the same by name. Instructions without a label operand are encoded at once into the
current byte chunk: a generated method looks up the plan for its operands' signatures
(`x86gen.selection.plans.plan_for`, one function that chooses the form and encodes) and appends the bytes; an
Assembler made with ``listing=True`` also keeps each instruction's mnemonic and operands, which `lines`,
`listing` and `text` print (as AsmJit keeps a listing only with a Logger attached: most of an append was that
record, so a backend that never prints one does not pay for it). The first use of a signature, label operands
and errors take `Assembler._emit`. Only branches to labels (and ``align``) sit between chunks, and
RIP-relative references to labels are patched in place once the layout is known.

Branch relaxation: every branch starts in its shortest form (rel8 where the mnemonic has one); a
branch whose displacement does not fit grows to the next form at once, and only the branches whose
span covers what moved are checked again (a worklist, as LLVM's MC layout does; `_grow_branches`),
until every branch fits. Branches only ever grow, so this ends, and because it starts from the
shortest sizes and grows a branch only when it does not fit the current layout, the result is the
least fixpoint without alignments, no longer than a layout found by starting long and shrinking (as
iced-x86's ``BlockEncoder`` does); with alignments it is GNU as's: a growth that an alignment
absorbs does not make a branch across that alignment long.

Labels as operands:

- branches: ``a.jl(loop)``, ``a.call(func)``, or a label name ``a.jmp("exit")``;
- RIP-relative memory: ``lbl.mem(size)`` / ``Mem(rip, size=64, label=lbl)`` is ``qword ptr [rip+lbl]``
  (the disp32 is ``label - end of instruction``, the end including any trailing immediate); a bare
  label where a memory operand is expected means the same (``a.lea(rax, table)``);
- data: ``a.dq(lbl)`` is the label's absolute address (``base + offset``).

`x86gen.program_text.assemble_program` parses whole Intel-syntax programs (GNU as / objdump / iced flavours)
into an Assembler; `x86gen.assemble` calls it for multi-line text. That module, and the text of listings, is
loaded on first use: a program built with these methods never compiles the text parser.
"""
from __future__ import annotations

import bisect
import math
import struct
from itertools import accumulate

from . import prefixes as P
from ._gen.asm_methods import BRANCH_MNEMONICS, MNEMONICS, PLANS, RC_PLANS, VARIADIC, AsmMethods
from .diagnostics import no_form_error
from .encoder import _RC_PLANS as _RC_KEPT
from .encoder import _encode_rc, encode, select
from .errors import (
    MAX_OUTPUT,
    ArgumentTypeError,
    EncodeError,
    ImmediateRangeError,
    LabelError,
    LabelOperand,
    NoListingError,
    OperandError,
    PrefixError,
    SizeLimitError,
    UnknownMnemonicError,
    clip,
    fmt_int,
    fmt_value,
    wrong_type,
)
from .evex import ROUNDING_RECORDS
from .forms import form_of, forms_of, get_form
from .memory import Bcst, Mem, SegMem, size_named
from .registers import REGISTERS, Gpr64, Masked
from .selection import pseudo
from .selection.candidates import candidates
from .selection.plans import Replan, plan_for
from .selection.prefixed import encode_prefixed
from .selection.request import (
    EVEX_PREFIX,
    MNEMONIC_ALIASES,
    REX2_PREFIX,
    STRING_MNEMONICS,
    VEX_PREFIX,
    canonical,
    lea_low_bits,
    string_operands,
)
from .syntax import float_bits_text, insn_text
from .table import A32_SPELLED, ip16_branch

__all__ = ["Assembler", "Label", "NOPS", "NOPS_GNU"]   # (parse_program and assemble_program: x86gen.program_text)
# The record format and tables below without a leading underscore (TEXT_LEN, TEXT_PADS, PLANS_BY_SIGNATURE,
# PLAIN_MNEMONICS, KEYWORD_METHODS, DATA_DIRECTIVES, DECORATED_OPERANDS, DataExpr, expr_text) are shared with the
# program parser, x86gen.program_text, which appends the same items.

_RIP = REGISTERS["rip"]
DECORATED_OPERANDS = (Masked, Bcst)   # AVX-512 operands that `Assembler._emit_evex` encodes
_HOLD = 0x7FFFFFF3   # the placeholder of a label's absolute disp32 (`Assembler._emit_rip`): no disp8, no disp8*N
NoneType = type(None)


def unlabeled(x):
    """Operand ``x`` (a memory operand naming a label, perhaps masked or broadcast) with a placeholder displacement
    for the label: ``[rip+label]`` as ``[rip+0]``, ``table[rax*8]`` as ``[rax*8+_HOLD]`` (a disp32 that no disp8 holds),
    which `Assembler.assemble` overwrites (checked to fit there: the addend alone may not, ``[x+0x80000000]`` is
    reachable from near x). Any other operand as it is."""
    mem = _label_mem(x)
    if mem is None: return x
    if mem.base is _RIP: out = Mem(_RIP, None, 1, 0, mem.size)
    else: out = Mem(mem.base, mem.index, mem.scale, _HOLD, mem.size)
    if mem.__class__ is SegMem: out = out.with_segment(mem.seg)
    elif mem.__class__ is Bcst and mem.unsized.__class__ is SegMem: out = out.with_segment(mem.unsized.seg)
    if x.__class__ is Masked: return Masked(out, x.mask, x.zero)
    return Bcst.of(out) if mem.__class__ is Bcst else out


def _label_mem(x):
    """The memory operand naming a label in operand ``x`` (itself, a `Bcst`, or the operand of a `Masked`), or None."""
    c = x.__class__
    if c is Masked: x, c = x.op, x.op.__class__
    if (c is Mem or c is SegMem or c is Bcst) and x.label is not None: return x
    return None
PLAIN_MNEMONICS = frozenset(MNEMONICS) - BRANCH_MNEMONICS
MAX_ALIGN = MAX_OUTPUT   # the largest alignment `Assembler.align` takes (bytes)
_INT64 = object()   # Assembler.jit's default restype (ctypes is imported only when jit is used)
KEYWORD_METHODS = {"and": "and_", "or": "or_", "not": "not_"}


class Label:
    """A position in an `Assembler`'s code, bound with `Assembler.bind`.

    Use it as a branch target (``a.jne(loop)``), as a RIP-relative memory operand (``lbl.mem(64)``,
    or the label itself where memory is expected) or as data (``a.dq(lbl)``). ``sig`` is "l", the
    operand signature `x86gen.encode` matches against ``rel8``/``rel32``.
    """

    __slots__ = ("name", "owner", "chunk", "pos", "offset", "line")
    sig = "l"
    kind = "label"

    def __init__(self, name: str, owner: Assembler | None = None):
        self.name, self.owner = name, owner
        self.chunk = -1         # index of the chunk it is bound in; -1 = not bound yet
        self.pos = 0            # where in the Assembler's item list (_code) it is bound
        self.offset = 0         # offset inside its chunk, as of the last layout
        self.line = 0           # source line of the first reference (text programs), for errors

    @property
    def bound(self) -> bool: return self.chunk >= 0

    @property
    def address(self) -> int:
        """The label's address in the last `Assembler.assemble` (base included)."""
        return self.owner.address_of(self)

    def mem(self, size: int | str = 0, disp: int = 0) -> Mem:
        """``[rip+label+disp]`` with an operand size in bits (or ``"qword"`` …); 0 = unsized."""
        if isinstance(size, str): size = size_named(size)
        return Mem(_RIP, None, 1, disp, size, label=self)

    def __repr__(self) -> str: return f"Label({self.name!r})"
    def __str__(self) -> str: return self.name

    def __add__(self, addend: int) -> LabelPlus:
        """``label + 3``: a place 3 bytes after the label, as a branch target (``a.jmp(top + 2)``) or data."""
        if addend.__class__ is not int: return NotImplemented
        return LabelPlus(self, addend)

    def __sub__(self, addend: int) -> LabelPlus:
        if addend.__class__ is not int: return NotImplemented
        return LabelPlus(self, -addend)


class LabelPlus:
    """A label plus a constant (``jmp L+1``, ``jmp .+2``, ``a.jne(top + 4)``): where the label is, ``addend`` bytes on.
    As a branch target it is relaxed like the label (its ``chunk`` and ``offset`` are the label's, the offset moved)."""

    __slots__ = ("label", "addend")
    sig = "l"
    kind = "label"

    def __init__(self, label: Label, addend: int):
        self.label, self.addend = label, addend

    @property
    def chunk(self) -> int: return self.label.chunk

    @property
    def offset(self) -> int: return self.label.offset + self.addend

    @property
    def name(self) -> str: return f"{self.label.name}{'-' if self.addend < 0 else '+'}{abs(self.addend):#x}"

    def __add__(self, addend: int) -> LabelPlus:
        if addend.__class__ is not int: return NotImplemented
        return LabelPlus(self.label, self.addend + addend)

    def __sub__(self, addend: int) -> LabelPlus:
        if addend.__class__ is not int: return NotImplemented
        return LabelPlus(self.label, self.addend - addend)

    def __repr__(self) -> str: return f"LabelPlus({self.name})"
    def __str__(self) -> str: return self.name


# Recommended multi-byte NOPs (SDM Vol.2B, NOP, Table 4-12), index = length.
NOPS = (b"", bytes.fromhex("90"), bytes.fromhex("6690"), bytes.fromhex("0f1f00"), bytes.fromhex("0f1f4000"),
        bytes.fromhex("0f1f440000"), bytes.fromhex("660f1f440000"), bytes.fromhex("0f1f8000000000"),
        bytes.fromhex("0f1f840000000000"), bytes.fromhex("660f1f840000000000"))


# GNU as's NOPs of 10 and 11 bytes (prefixes 66 and 2e before the 8-byte 0f 1f 84 00 …): the longest it pads code with
NOPS_GNU = (*NOPS, bytes.fromhex("662e0f1f840000000000"), bytes.fromhex("66662e0f1f840000000000"))


def nop_fill(n: int) -> bytes:
    """``n`` bytes of NOPs as GNU as 2.40 pads code to an alignment: 11-byte NOPs, then one NOP of what is left
    (`NOPS_GNU`)."""
    return NOPS_GNU[11] * (n // 11) + NOPS_GNU[n % 11]


def _listed_mnemonic(form, ops: tuple) -> str:
    """The mnemonic a listing writes for ``form`` given by `Assembler.emit_form`: with ``{vex}``/``{evex}`` where the
    mnemonic alone would choose the other encoding (EVEX vaddps, VEX vpdpbusd), so that `Assembler.text` assembles back
    to the form's bytes. (Another form of the same encoding, such as ADD_RM32_IMM32 for a small immediate, has no such
    word: its text gives the shorter form.)"""
    kind = form.encoding_kind
    if kind == "legacy" or kind == "xop": return form.mnemonic   # (no pseudo-prefix asks for XOP)
    try: default = select(form.mnemonic, *ops)
    except EncodeError: return form.mnemonic
    if default.encoding_kind == kind: return form.mnemonic
    return ("{evex} " if kind == "evex" else "{vex} ") + form.mnemonic


class _Branch:
    """A branch to a label (or an absolute address) between two chunks; its size is chosen by relaxation."""
    __slots__ = ("mnemonic", "target", "choices", "k", "line", "words", "n", "wrap16")

    def __init__(self, mnemonic, target, choices, line, words=(), n=0):
        self.mnemonic, self.target, self.choices, self.k, self.line = mnemonic, target, choices, 0, line
        self.words, self.n = words, n   # prefix words (``bnd``) and their bytes, before the form's (`_prefixed_branch_info`)
        self.wrap16 = target.__class__ is int and ip16_branch(choices[0][0])   # (`_disp`)

    def size(self) -> int: return self.choices[self.k][1]


class _Align:
    __slots__ = ("n", "fill", "max_skip", "line")

    def __init__(self, n, fill, max_skip, line):
        self.n, self.fill, self.max_skip, self.line = n, fill, max_skip, line

    def pad(self, addr: int) -> int:
        p = -addr % self.n
        return 0 if self.max_skip is not None and p > self.max_skip else p


class _Org:
    """``.org offset, fill``: padding up to ``offset`` bytes from the program's start (GNU as: from the section's)."""
    __slots__ = ("offset", "fill", "max_skip", "line", "owner")
    n = 0   # (no alignment: for the listing)

    def __init__(self, offset, fill, line, owner):
        self.offset, self.fill, self.max_skip, self.line, self.owner = offset, fill, None, line, owner

    def pad(self, addr: int) -> int:   # (never below 0 while branches grow; `_relax` says when it would be)
        return max(0, self.owner.base + self.offset - addr)


# Plans of `Assembler._emit` by (mnemonic, *operand signature); the fixed-arity methods' nested tables
# (`x86gen._gen.asm_methods.PLANS`) get the same plans.
PLANS_BY_SIGNATURE: dict[tuple, object] = {}
_BRANCH_INFO: dict[str, tuple] = {}
# What an Assembler holds is one entry per item in `Assembler._code`, in program order: an instruction's or a data
# directive's bytes, b"" for a label and for a branch or alignment (which ends a chunk; its bytes come from
# relaxation). Positions (`Label.pos`, `_vpos`, the fixups) index `_code`, and a chunk's bytes are one
# ``b"".join(code[start:end])``. With ``listing=True``, `Assembler._text` holds what `Assembler.lines` prints, one
# record of TEXT_LEN items per entry of `_code`, in one flat list (appending keeps no new object, nothing for the
# garbage collector to scan):
#   instruction:  mnemonic, operands 1-5 (None where there are fewer; vpermil2ps has 5)
#   label:        _REC_LABEL, label, None…
#   branch/align: _REC_VAR, index in _vars, None…
#   data:         _REC_DATA, size, values, None…
TEXT_LEN = 6
TEXT_PADS = tuple((None,) * (TEXT_LEN - 1 - n) for n in range(TEXT_LEN))   # the Nones after n operands
_REC_LABEL, _REC_VAR, _REC_DATA = -1, -2, -3
_PACK = {1: struct.Struct("<B"), 2: struct.Struct("<H"), 4: struct.Struct("<I"), 8: struct.Struct("<Q")}
_SPACK = {1: struct.Struct("<b"), 2: struct.Struct("<h"), 4: struct.Struct("<i"), 8: struct.Struct("<q")}
DATA_DIRECTIVES = {1: "db", 2: "dw", 4: "dd", 8: "dq", 16: ".octa"}


def _keep_plan(mn: str, sig: tuple, ops: tuple, key: tuple):
    """The plan of ``key`` (mnemonic and signature) from `x86gen.selection.plans`, kept for `Assembler._emit` and the
    generated method's fast path (its plan table)."""
    plan = plan_for(mn, sig, ops)[0]
    PLANS_BY_SIGNATURE[key] = plan
    table = PLANS.get(mn)
    if table is not None: _store(table.setdefault(len(sig), {}) if mn in VARIADIC else table, sig, plan)
    return plan


def _store(table: dict, sig: tuple, plan) -> None:
    """Put ``plan`` in a method's nested plan table (one dict level per operand)."""
    if not sig:
        table[()] = plan
        return
    for s in sig[:-1]: table = table.setdefault(s, {})
    table[sig[-1]] = plan


def _branch_info(mn: str) -> tuple:
    """[(form, length, lo, hi)] of the rel forms of ``mn``, shortest first."""
    hit = _BRANCH_INFO.get(mn)
    if hit is None:
        lab = Label("x")
        forms = [form_of(r) for r in candidates(mn, ("l",), (lab,))[0]]
        # never a form with a 32-bit implicit address (addr32 loop: counts in ecx) or a 16-bit branch (o16: AMD CPUs
        # truncate rip to 16 bits) unless it is the mnemonic's only kind (jecxz): relaxation must not change the operation
        forms = [f for f in forms if not (f.addrsize32 or f.opsize16)] or forms
        hit = tuple((f, f.length, *f.imm_ranges(0)[0]) for f in forms)
        _BRANCH_INFO[mn] = hit
    return hit


def _prefixed_branch_info(mn: str, words: list[str]) -> tuple[tuple, int]:
    """(`_branch_info`'s choices, the number of prefix bytes) for a branch with prefix words: ``bnd jne`` (the forms that
    take the words, F2 before each), ``data16 jmp`` / ``data16 addr32 loop`` (the 16-bit branches, o16: JMP_REL8_16,
    JMP_REL16, whose target is a 16-bit IP, SDM Vol.2 JMP, operand size 16; their reach is relaxed as a plain
    displacement, the encoder counts it modulo 2^16 and refuses a label above 0xffff). Each choice's length counts
    the prefix bytes, which move the branch's end."""
    key = (mn, *words)
    hit = _BRANCH_INFO.get(key)
    if hit is None:
        legacy = [w for w in words if w not in (P.DATA16, P.ADDR32)]
        disp = next((w for w in legacy if w in ("{disp8}", "{disp32}")), None)
        if any(w in P.CHOOSING for w in legacy):   # {disp8}/{disp32}: the rel8/rel32 form (x86gen.selection.pseudo)
            picks, legacy = pseudo.split(legacy, f"{' '.join(words)} {mn}")
            if set(picks) != {"disp"}:
                raise pseudo.cannot(next(w for w in picks.values() if w != disp), f"{' '.join(words)} {mn}",
                                    "a branch to a label or address has no ModRM or VEX encoding to choose")
        if any(w not in P.PREFIX_BYTES for w in legacy):
            raise PrefixError(f"{' '.join(words)} {mn}: only bnd, data16 and addr32 go on a branch to a label or address here")
        a32 = P.ADDR32 in words and canonical(mn) not in A32_SPELLED   # (jecxz says its 32-bit address itself)
        sized = " ".join(w for w, on in ((P.DATA16, P.DATA16 in words), (P.ADDR32, a32)) if on)
        lab = Label("x")
        rows = candidates(mn, ("l",), (lab,), sized)[0]
        forms = [form_of(r) for r in rows]
        if not sized: forms = [f for f in forms if not (f.addrsize32 or f.opsize16)] or forms   # (as `_branch_info`)
        if disp is not None:
            rel = [f for f in forms if pseudo.rel_width(f) == (8 if disp == "{disp8}" else 32)]
            if not rel: raise pseudo.rel_error(disp, f"{' '.join(words)} {mn}", forms)
            forms = rel
        want = {P.SPEC_NAME.get(w, w) for w in legacy}
        ok = [f for f in forms if want <= P.allowed(f.id)]
        if not ok:
            P.check(legacy, forms[0], mn, (lab,))   # raises: why the form takes none of the words
            raise PrefixError(f"{' '.join(words)} {mn}: no form of {mn} takes {', '.join(sorted(want))}")
        n = len(legacy)
        hit = _BRANCH_INFO[key] = (tuple((f, f.length + n, *f.imm_ranges(0)[0]) for f in ok), n)
    return hit


def _disp(v, d: int) -> int:
    """Branch ``v``'s displacement ``d`` as its encoder counts it: modulo 2^16 for a 16-bit branch to an address, whose
    new IP is (next IP + rel) AND 0xffff (SDM Vol.2 JMP/Jcc, operand size 16: `x86gen.table.ip16_branch`)."""
    return ((d + 0x8000) & 0xFFFF) - 0x8000 if v.wrap16 else d


def _stretch(shift: int, n: int) -> int:
    """How far a target beyond alignments (the widest ``n`` bytes) is taken to have moved when the code before them
    moved ``shift`` bytes, as GNU as's relax_frag estimates it: the growth rounded toward 0 to a multiple of ``n`` (the
    rest is taken to be absorbed by the padding; its max-skip is not looked at, as GNU as does not)."""
    if n <= 1: return shift
    return shift & ~(n - 1) if shift > 0 else -((-shift) & ~(n - 1))


def _widest(values: list[int]):
    """``f(a, b)``: the largest of ``values[a:b]`` (0 if empty), by a sparse table (O(1) a query)."""
    table = [values]
    k = 1
    while 2 * k <= len(values):
        prev = table[-1]
        table.append([max(prev[j], prev[j + k]) for j in range(len(prev) - k)])
        k *= 2

    def f(a: int, b: int) -> int:
        if b <= a: return 0
        lv = (b - a).bit_length() - 1
        row = table[lv]
        return max(row[a], row[b - (1 << lv)])
    return f


def _grow_branches(vars_: list, lens: list[int], base: int) -> int:
    """Branch relaxation (see the module doc): set each branch's form (``v.k``); returns the number of rounds.

    Chunk ``c`` (``lens[c]`` bytes) is followed by variable item ``c`` (a branch or an alignment), so an address
    is a static prefix sum of chunk lengths plus a prefix sum of item sizes, kept in a Fenwick tree. Every branch
    starts short; one pass in program order grows those that do not fit (as GNU as's first pass), then a
    worklist holds the branches still to check. One that does not fit grows at once (the tree is
    updated and the change is carried through the alignments after it, as far as it shifts anything), and only
    the branches whose span covers a changed item are checked again: those are found by a stabbing query on a
    static segment tree of spans. So a chain of n branches that grow one after the other (each pushing the
    previous one out of reach) takes O(n log n) steps, not n passes over the program; and a branch is checked
    against the layout with every earlier growth in it, so an alignment that absorbs a growth (its padding
    shrinks) keeps a later branch over it short, as GNU as does (it does not add the growth of earlier branches
    across an alignment)."""
    nv = len(vars_)
    pre = [0, *accumulate(lens[:nv])]   # pre[c]: bytes of chunks before chunk c, without the items
    size = [0] * nv
    branches, aligns, absolute = [], [], []
    cstart = [0] * (nv + 1)        # the first layout (every branch short): chunk start addresses
    addr = base
    for i, v in enumerate(vars_):
        cstart[i] = addr
        addr += lens[i]
        if v.__class__ is _Branch:
            v.k = 0
            s = v.choices[0][1]
            branches.append(i)
            if v.target.__class__ is int: absolute.append(i)
        else:
            s = v.pad(addr)
            aligns.append(i)
        size[i] = s
        addr += s
    cstart[nv] = addr
    # First one pass in program order, as GNU as relaxes: a branch that does not fit grows at once, so the
    # branches after it see it; a target ahead is taken where it was plus the growth so far, rounded toward 0 to a
    # multiple of the widest alignment between (`_stretch`: GNU as's estimate, not 0, so that 60 grown `je` before
    # `jbe .L1; .p2align 4` leave the jbe short, 76 xx, as GNU as writes it). Most programs are done after it.
    nalign = [0] * (nv + 1)        # nalign[c]: alignments among items 0 .. c-1
    for j in aligns: nalign[j + 1] = 1
    if aligns: nalign = [0, *accumulate(nalign[1:])]
    widest = _widest([vars_[j].n for j in aligns])   # the largest alignment among aligns[a:b]
    shift, grew = 0, False         # how far the current item has moved from the first layout
    now = [0] * (nv + 1)           # chunk start addresses as this pass leaves them
    for i, v in enumerate(vars_):
        now[i] = cstart[i] + shift
        at = now[i] + lens[i]
        if v.__class__ is _Branch:
            t = v.target
            if t.__class__ is int: dest = t
            elif t.chunk <= i: dest = now[t.chunk] + t.offset
            elif not shift or nalign[t.chunk] == nalign[i + 1]: dest = cstart[t.chunk] + t.offset + shift
            else: dest = cstart[t.chunk] + t.offset + _stretch(shift, widest(nalign[i + 1], nalign[t.chunk]))
            choices = v.choices
            _f, length, lo, hi = choices[0]
            if not lo <= _disp(v, dest - (at + length)) <= hi:
                k = 1
                while k < len(choices):
                    _f, length, lo, hi = choices[k]
                    if lo <= _disp(v, dest - (at + length)) <= hi: break
                    k += 1
                k = min(k, len(choices) - 1)   # out of reach of every form: assemble() reports it
                if k:
                    v.k = k
                    shift += choices[k][1] - size[i]
                    size[i] = choices[k][1]
                    grew = True
        else:
            p = v.pad(at)
            shift += p - size[i]
            size[i] = p
    if not grew: return 1
    now[nv] = cstart[nv] + shift
    # then the branches that the pass left out of reach (growths after them, growths across alignments): a
    # worklist on the exact layout
    work = []
    for i in branches:
        v = vars_[i]
        t = v.target
        _f, length, lo, hi = v.choices[v.k]
        if not lo <= _disp(v, (t if t.__class__ is int else now[t.chunk] + t.offset) - (now[i] + lens[i] + length)) <= hi:
            work.append(i)
    if not work: return 2
    tree = [0] + size              # Fenwick tree over item sizes (1-based)
    for i in range(1, nv + 1):
        j = i + (i & -i)
        if j <= nv: tree[j] += tree[i]

    def before(i: int) -> int:     # total size of items 0 .. i-1
        s = 0
        while i > 0:
            s += tree[i]
            i -= i & -i
        return s

    def add(i: int, d: int) -> None:
        i += 1
        while i <= nv:
            tree[i] += d
            i += i & -i

    # spans: branch i depends on the items strictly between it and its target (a label in chunk t starts
    # after item t - 1); a branch to an absolute address depends on every item before it (kept apart)
    width = 1
    while width < nv: width <<= 1
    nodes: dict[int, list[int]] = {}
    for i in branches:
        t = vars_[i].target
        if t.__class__ is int: continue
        lo, hi = (i + 1, t.chunk - 1) if t.chunk > i else (t.chunk, i - 1)
        lo += width; hi += width + 1
        while lo < hi:
            if lo & 1: nodes.setdefault(lo, []).append(i); lo += 1
            if hi & 1: hi -= 1; nodes.setdefault(hi, []).append(i)
            lo >>= 1; hi >>= 1
    queued = bytearray(nv)
    for i in work: queued[i] = 1
    later: list[int] = []          # the next round's worklist

    def push(j: int) -> None:
        if not queued[j]:
            queued[j] = 1
            later.append(j)

    rounds = 1
    while work:
        rounds += 1
        for i in work:
            queued[i] = 0
            v = vars_[i]
            t = v.target
            dest = t if t.__class__ is int else base + pre[t.chunk] + before(t.chunk) + t.offset
            start = base + pre[i + 1] + before(i)
            choices = v.choices
            _f, length, lo, hi = choices[v.k]
            if lo <= _disp(v, dest - (start + length)) <= hi: continue
            k = v.k + 1
            while k < len(choices):
                _f, length, lo, hi = choices[k]
                if lo <= _disp(v, dest - (start + length)) <= hi: break
                k += 1
            if k == len(choices): k = len(choices) - 1   # out of reach of every form: assemble() reports it
            if k == v.k: continue
            d = choices[k][1] - choices[v.k][1]
            v.k = k
            size[i] += d
            add(i, d)
            changed = [i]
            shift = d                      # how far everything after the last changed item moved
            a = bisect.bisect_right(aligns, i)
            while shift and a < len(aligns):
                j = aligns[a]
                p = vars_[j].pad(base + pre[j + 1] + before(j))
                if p != size[j]:
                    shift += p - size[j]
                    add(j, p - size[j])
                    size[j] = p
                    changed.append(j)
                a += 1
            push(i)                        # its own target may have moved with it
            for j in changed:
                n = j + width
                while n:
                    for b in nodes.get(n, ()): push(b)
                    n >>= 1
            for b in absolute[bisect.bisect_right(absolute, i):]: push(b)
        work = later[:]
        later.clear()
    return rounds + 1


class Assembler(AsmMethods):
    """Build machine code instruction by instruction; `assemble` returns the bytes.

    ``base`` is the address of the first byte: it matters only for absolute addresses (``dq label``,
    branches to integer addresses) and alignment; everything else is position-independent.
    ``listing=True`` keeps each instruction's mnemonic and operands for `lines`, `listing`, `text` and ``str()``
    (a debugging aid: without it appending an instruction is about a sixth cheaper).
    """

    __slots__ = ("base", "_code", "_text", "_vars", "_vpos", "_rip", "_abs", "_labels", "_named", "_layout", "line", "source")

    def __init__(self, base: int = 0, *, listing: bool = False):
        if base.__class__ is not int: base = _int_arg("x86gen.Assembler", "base", base)
        self.base = base
        self._code: list[bytes] = []      # the program: bytes per item (see TEXT_LEN); chunk i ends at _vars[i]
        self._text: list | None = [] if listing else None   # with listing=True: TEXT_LEN items per item (see TEXT_LEN)
        self._vars: list = []              # branches and alignments, sized by `_relax`
        self._vpos: list[int] = []         # where each of them is in _code
        self._rip: list[tuple] = []        # (chunk, item position, disp offset in it, its length, label, addend, line)
        # (chunk, item position, offset in it, size, plus labels, minus labels, addend, line, signed): data, and a label's
        # absolute address in a sign-extended disp32 (signed)
        self._abs: list[tuple] = []
        self._labels: list[Label] = []
        self._named: dict[str, Label] = {}
        self._layout = None
        self.line = 0                      # current source line (set by parse_program) for error messages
        self.source: list[str] | None = None   # the program's lines, when parsed from text

    # ---- labels -------------------------------------------------------------------------------------

    def label(self, name: str | None = None) -> Label:
        """A new unbound label (named ``.L<n>`` unless ``name`` is given); bind it with `bind`.

        A name already used returns that label if it is not yet bound (a forward reference by name).
        """
        if name is None:
            name = f".L{len(self._labels)}"
            while name in self._named: name += "_"
        else:
            try: hit = self._named.get(name)
            except TypeError: hit = None   # (unhashable: no name, said below)
            if hit is not None:
                if hit.bound: raise LabelError(f"label {clip(name, 80)} is already defined")
                return hit
        if name.__class__ is not str and not isinstance(name, str): raise wrong_type("Assembler.label", "name", name, "a str or None")
        lab = Label(name, self)
        self._labels.append(lab)
        self._named[name] = lab
        return lab

    def bind(self, label: Label | str) -> Label:
        """Place ``label`` at the current position (the address of the next instruction)."""
        if label.__class__ is str: label = self.label(label)
        try: owner = label.owner
        except AttributeError: raise wrong_type("Assembler.bind", "label", label, "a Label or a str") from None
        if owner is not self: raise LabelError(f"label {clip(label.name, 80)} belongs to another Assembler")
        if label.chunk >= 0: raise LabelError(f"label {clip(label.name, 80)} is bound twice")
        code = self._code
        label.chunk, label.pos = len(self._vars), len(code)
        code.append(b"")   # (`_add`, written out: labels and branches are a tenth of a program's appends)
        if self._text is not None: self._text += (_REC_LABEL, label, None, None, None, None)
        self._layout = None
        return label

    def here(self, name: str | None = None) -> Label:
        """A new label bound at the current position."""
        return self.bind(self.label(name))

    def get_label(self, name: str) -> Label:
        """The label with this name (created unbound if new)."""
        hit = self._named.get(name)
        return hit if hit is not None else self.label(name)

    @property
    def labels(self) -> dict[str, Label]:
        return dict(self._named)

    # ---- instructions -------------------------------------------------------------------------------

    def emit(self, mnemonic: str, *ops, rc: int | None = None) -> None:
        """Append one instruction by mnemonic: ``a.emit("vaddps", ymm0, ymm1, ymm2)``; ``rc=``: AVX-512 rounding or
        SAE (`x86gen.evex`)."""
        if mnemonic.__class__ is not str: raise UnknownMnemonicError(f"a mnemonic is a string, not {fmt_value(mnemonic)}")
        if rc is not None: return self._emit_evex(mnemonic.lower(), ops, rc)
        mn = mnemonic if mnemonic in PLAIN_MNEMONICS or mnemonic in BRANCH_MNEMONICS else mnemonic.lower()
        if mn in STRING_MNEMONICS: mn, ops = string_operands(mn, ops)   # `movsb`, `movs byte ptr [rdi], …`: the form's operands
        if mn in PLAIN_MNEMONICS: return self._emit(mn, ops)
        if " " in mn: return self._emit_prefixed(mn, ops)
        if mn in BRANCH_MNEMONICS: return self._jump(mn, ops) if mn in ("jmp", "call") else self._branch(mn, ops)
        canon = MNEMONIC_ALIASES.get(mn)
        if canon in BRANCH_MNEMONICS: return self.emit(canon, *ops)
        if canon in PLAIN_MNEMONICS: return self._emit(mn, ops)
        for word in (EVEX_PREFIX, VEX_PREFIX, REX2_PREFIX):   # `{evex} vaddps`, `{vex} vpdpbusd`, `{rex2} add`
            if mn.startswith(word) and forms_of(mn[len(word):]): return self._emit(mn, ops)
        forms_of(mn)                     # raises UnknownMnemonicError with suggestions
        raise UnknownMnemonicError(f"unknown mnemonic {fmt_value(mnemonic)}")

    def movabs(self, a, b) -> None:
        """GNU ``movabs``: mov with a 64-bit absolute address (``movabs eax, [0x10]``, al/ax/eax/rax only) or a
        64-bit immediate (``movabs rax, 5`` keeps its 8 bytes)."""
        return self._emit("movabs", (a, b))

    def _emit(self, mn: str, ops: tuple) -> None:
        """Append one instruction: the general path, taken by ``*ops`` methods, `emit` and the generated
        methods' first use of an operand signature, label operands, plans due to be compiled and errors (see the
        module doc)."""
        try: sig = tuple(["i" if x.__class__ is int else x.sig for x in ops])
        except AttributeError: raise no_form_error(mn, ops, forms_of(canonical(mn))) from None
        if "l" in sig:   # a label where memory is meant: [rip+label]
            return self._emit(mn, tuple(x.mem() if x.__class__ is Label else x for x in ops))
        key = (mn, *sig)
        plan = PLANS_BY_SIGNATURE.get(key)
        if plan is None:
            if mn in STRING_MNEMONICS:   # `movsb`, `lodsb byte ptr [rsi]`: the form's name and operands
                m2, filled = string_operands(mn, ops)
                if m2 is not mn or filled is not ops: return self._emit(m2, filled)
            if mn == "lea" and sig[-1][:5] == "moffs":   # lea r32, [0x80000000]: the low 32 bits (selection.request.lea_low_bits)
                near = lea_low_bits(mn, ops)
                if near is not None: return self._emit(mn, near)
            plan = _keep_plan(mn, sig, ops, key)
        try: out = plan(*ops)
        except LabelOperand: return self._emit_rip(mn, ops)
        except Replan:   # used often enough to be compiled: again, with the compiled plan kept
            _keep_plan(mn, sig, ops, key)
            return self._emit(mn, ops)
        self._add(out, mn, ops)

    def _add(self, out: bytes, kind, items: tuple) -> None:
        """Append one item: its bytes and, with a listing, its record (``kind``: the mnemonic or a _REC_ kind)."""
        self._code.append(out)
        if self._text is not None: self._text += (kind, *items, *TEXT_PADS[len(items)])

    def _emit_evex(self, mn: str, ops: tuple, rc: int | None) -> None:
        """An AVX-512 instruction with rounding ``rc`` (`x86gen.encode`'s plans, kept by rounding and signature). Its
        record holds the operands and an `x86gen.evex.Rounding` after them. A label in a memory operand is not
        supported here (yet)."""
        if any(x.__class__ is Label for x in ops): ops = tuple(x.mem() if x.__class__ is Label else x for x in ops)
        if any(_label_mem(x) is not None for x in ops): return self._emit_rip(mn, ops, rc=rc)
        out = _encode_rc(mn, ops, 0, rc)
        if len(ops) >= TEXT_LEN - 1: raise OperandError(f"{mn}: {len(ops)} operands and rc=: more than an Assembler record holds")
        table = RC_PLANS.get(mn)
        if table is not None:   # the method's table (one level per operand, under the rounding): its next call's fast path
            key = (mn, rc, *["i" if x.__class__ is int else x.sig for x in ops])
            hit = _RC_KEPT.get(key)
            if hit is not None: _store(table.setdefault(rc, {}), key[2:], hit[0])
        self._add(out, mn, (*ops, ROUNDING_RECORDS[rc]))

    def _emit_prefixed(self, mn: str, ops: tuple) -> None:
        """An instruction with prefix words (``lock add``) or a segment override (`SegMem`): `encode_prefixed`'s bytes.
        A branch to a label or address with a prefix (``bnd jmp .L1``) is not supported (it would need relaxation)."""
        base = mn.rsplit(" ", 1)[-1]
        words = mn.split()[:-1]
        if canonical(base) in BRANCH_MNEMONICS and len(ops) == 1 and ops[0].__class__ in (int, str, Label):
            # `bnd jne .L1`, `data16 jmp .L1`: a relaxed branch whose forms take the words, their bytes before it
            choices, n = _prefixed_branch_info(canonical(base), words)
            return self._branch(mn, ops, choices=choices, words=[w for w in words if w in P.PREFIX_BYTES], n=n)
        if any(x.__class__ is Label for x in ops): ops = tuple(x.mem() if x.__class__ is Label else x for x in ops)
        if any(_label_mem(x) is not None for x in ops): return self._emit_rip(mn, ops)
        out = encode_prefixed(mn, ops)[0]
        self._add(out, mn, ops)

    def _emit_rip(self, mn: str, ops: tuple, form=None, rc: int | None = None) -> None:
        """An instruction whose memory operand names a label: ``[rip+label]`` (its displacement patched by `assemble` with
        label + addend - end of instruction), or ``table[rax*8]`` / ``[rbx+label]`` (a base or index register: the
        label's absolute address plus the addend in a sign-extended disp32, as GNU as encodes it; R_X86_64_32S in an
        object). The operand may be masked (``{k1}``) or broadcast (``{1to16}``); ``form`` and ``rc`` as `emit_form`'s."""
        i, m = next(((i, x) for i, x in enumerate(ops) if _label_mem(x) is not None), (-1, None))
        if m is None:
            x = next((x for x in ops if isinstance(getattr(x, "op", x), Mem) and getattr(x, "op", x).label is not None), None)
            raise OperandError(f"{mn}: a label in memory operand {x} goes with 64-bit base and index registers (not a 32-bit"
                               " or VSIB address)")
        mem = _label_mem(m)
        lab = mem.label
        if lab.__class__ is str: lab = self.get_label(lab)
        elif lab.__class__ is not Label or lab.owner is not self:
            raise OperandError(f"{mn}: {lab!r} is not a label of this Assembler")
        if mem.base is not _RIP and (mem.base.__class__ is not Gpr64 and mem.base is not None
                                     or mem.index.__class__ not in (Gpr64, NoneType)):
            raise OperandError(f"{mn}: a label in memory operand {mem} goes with 64-bit base and index registers")
        plain = (*ops[:i], unlabeled(m), *ops[i + 1:])
        if form is None:
            b = encode(mn, *plain) if rc is None else _encode_rc(mn, plain, 0, rc)
            form = select(mn, *plain)
        else: b = form(*plain) if rc is None else form(*plain, rc=rc)
        if not mem.size and m is mem and form.operands[i].mem:   # list it with the size the form gives it: `dword ptr [rip+c]`
            ops = (*ops[:i], m.with_size(form.operands[i].mem), *ops[i + 1:])
        tail = sum(form.imm_widths) // 8 + (1 if form.is4 else 0) + (1 if form.encoding_kind == "d3now" else 0)
        b = self._label_fixup(mn, mem, lab, b, len(b) - tail - 4)
        self._add(b, mn, ops if rc is None else (*ops, ROUNDING_RECORDS[rc]))
        self._layout = None

    def _label_fixup(self, mn: str, mem, lab: Label, b: bytes, at: int) -> bytes:
        """Keep the fixup of label memory operand ``mem`` (of label ``lab``) whose placeholder disp32 (`unlabeled`) is at
        ``at`` in ``b``, the bytes of the instruction about to be appended; returns the bytes to append."""
        rip = mem.base is _RIP
        if b[at:at + 4] != _SPACK[4].pack(0 if rip else _HOLD):   # (never: ModRM forms end with disp32, then immediates)
            raise OperandError(f"{mn}: x86gen cannot place the displacement of label memory operand {mem}")
        if rip: self._rip.append((len(self._vars), len(self._code), at, len(b), lab, mem.disp, self.line))
        else:
            b = b[:at] + bytes(4) + b[at + 4:]
            self._abs.append((len(self._vars), len(self._code), at, 4, (lab,), (), mem.disp, self.line, True))
        if lab.line == 0: lab.line = self.line
        return b

    def _branch(self, mn: str, ops: tuple, rel32: bool = False, choices: tuple | None = None, words=(), n: int = 0) -> None:
        """A branch to a label, name or address, relaxed (`_grow_branches`) among ``choices`` (default `_branch_info`)."""
        if len(ops) != 1: raise OperandError(f"{mn} takes one operand (a label or an address), got {len(ops)}")
        target = ops[0]
        cls = target.__class__
        if cls is str: target = self.get_label(target)
        elif cls is Label or cls is LabelPlus:
            lab = target if cls is Label else target.label
            if lab.owner is not self: raise OperandError(f"{mn}: label {lab.name!r} belongs to another Assembler")
            if lab.line == 0: lab.line = self.line
        elif cls is not int: raise OperandError(f"{mn}: the target must be a label or an address, not {target!r}")
        if target.__class__ is Label and target.line == 0: target.line = self.line
        if choices is None:
            choices = _branch_info(mn)
            if rel32: choices = choices[-1:]
        self._var(_Branch(mn, target, choices, self.line, words, n))

    def _var(self, v) -> None:
        """End the current chunk with a branch or an alignment (sized by `_relax`)."""
        code, vars_ = self._code, self._vars
        self._vpos.append(len(code))
        code.append(b"")   # (`_add`, written out)
        if self._text is not None: self._text += (_REC_VAR, len(vars_), None, None, None, None)
        vars_.append(v)
        self._layout = None

    def _jump(self, mn: str, ops: tuple, rel32: bool = False) -> None:
        if len(ops) == 1 and (ops[0].__class__ in (int, str, Label, LabelPlus)): return self._branch(mn, ops, rel32)
        return self._emit(mn, ops)

    def emit_form(self, form, *ops, rc: int | None = None) -> None:
        """Append one instruction in exactly this form (a form id or `x86gen.Form`), listed like any other:
        ``a.emit_form("ADD_RM32_IMM32", eax, 1)`` is ``81 c0 01 00 00 00`` where ``a.add(eax, 1)`` picks
        ``83 /0 ib``. A branch form takes a label (or name, or address) and keeps its size: no relaxation."""
        if not hasattr(form, "operands"): form = get_form(form)
        if form.is_branch and len(ops) == 1 and ops[0].__class__ in (str, Label, int):
            # a label, or an absolute address: where this branch is, and so its displacement, is known when laid out
            choice = (form, form.length, *form.imm_ranges(0)[0])
            target = ops[0]
            if target.__class__ is str: target = self.get_label(target)
            elif target.__class__ is Label and target.owner is not self:
                raise OperandError(f"{form.mnemonic}: label {target.name!r} belongs to another Assembler")
            if target.__class__ is Label and target.line == 0: target.line = self.line
            return self._var(_Branch(form.mnemonic, target, (choice,), self.line))
        if any(x.__class__ is Label for x in ops): ops = tuple(x.mem() if x.__class__ is Label else x for x in ops)
        if len(ops) + (rc is not None) > TEXT_LEN - 1:   # (a record holds 5 operands, the rounding one of them)
            raise OperandError(f"{form.id} takes {len(form.operands)} operands, got {len(ops)}" + (" and rc=" if rc is not None else ""))
        if any(_label_mem(x) is not None for x in ops): return self._emit_rip(form.mnemonic, ops, form=form, rc=rc)
        if rc is not None:   # AVX-512 rounding / SAE (x86gen.evex)
            self._add(form(*ops, rc=rc), form.mnemonic, (*ops, ROUNDING_RECORDS[rc]))
            return
        out = form(*ops)
        self._add(out, form.mnemonic if self._text is None else _listed_mnemonic(form, ops), ops)

    # ---- data and alignment --------------------------------------------------------------------------

    def db(self, *values) -> None:
        """Bytes: ints (-128 … 255), ``bytes`` or ``str`` (UTF-8)."""
        self._data(1, values)

    def dw(self, *values) -> None:
        """16-bit words (ints)."""
        self._data(2, values)

    def dd(self, *values) -> None:
        """32-bit values: ints, floats (stored as float32), labels (absolute address, must fit)."""
        self._data(4, values)

    def dq(self, *values) -> None:
        """64-bit values: ints, floats (stored as float64), labels (absolute address)."""
        self._data(8, values)

    def bytes(self, data: bytes) -> None:
        """Raw bytes (``bytes``, ``bytearray``, ``memoryview``, or an iterable of ints 0..255)."""
        if isinstance(data, (int, str)) or data is None:   # bytes(10**10) would allocate that many zeros: use zero()
            raise OperandError(f"Assembler.bytes takes bytes, not {fmt_value(data)} (zero(n) for n zero bytes)")
        try: b = bytes(data)
        except (TypeError, ValueError): raise OperandError(f"Assembler.bytes: {fmt_value(data)} is not bytes") from None
        self._data(1, (b,))

    def float32(self, *values: float) -> None: self._data(4, _floats(".float", values))
    def float64(self, *values: float) -> None: self._data(8, _floats(".double", values))

    def _data(self, size: int, values: tuple) -> None:
        code = bytearray()
        fixups = []
        for v in values:
            c = v.__class__
            if c is int:
                if not -(1 << (8 * size - 1)) <= v < (1 << (8 * size)):
                    raise ImmediateRangeError(f"{DATA_DIRECTIVES[size]} {fmt_int(v)}: does not fit in {8 * size} bits")
                code += (v & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
            elif c is float:
                if size == 4: code += struct.pack("<f", v)
                elif size == 8: code += struct.pack("<d", v)
                else: raise OperandError(f"{DATA_DIRECTIVES[size]}: floats need dd (float32) or dq (float64)")
            elif c in (bytes, bytearray, str):
                if size != 1: raise OperandError(f"{DATA_DIRECTIVES[size]}: strings and bytes go in db")
                try: code += v.encode() if c is str else v
                except UnicodeEncodeError as ex:   # a lone surrogate ('\udcff', from surrogateescape): no UTF-8
                    raise OperandError(f"db: {fmt_value(v)} is no UTF-8 text: {ex.reason} ({v[ex.start]!r} at index {ex.start})") from None
            elif c is Label or c is DataExpr or c is LabelPlus:
                if c is LabelPlus: v = DataExpr((v.label,), (), v.addend)
                if size not in _PACK: raise OperandError(f"{DATA_DIRECTIVES[size]}: a label's address goes in 1 to 8 bytes")
                e = v if v.__class__ is DataExpr else DataExpr((v,), (), 0)
                for lab in (*e.plus, *e.minus):
                    if lab.owner is not self: raise OperandError(f"label {lab.name!r} belongs to another Assembler")
                    if lab.line == 0: lab.line = self.line
                fixups.append((len(self._vars), len(self._code), len(code), size, e.plus, e.minus, e.addend, self.line, False))
                code += bytes(size)
            else:
                raise OperandError(f"{DATA_DIRECTIVES[size]}: cannot store {fmt_value(v)}")
        if len(code) > MAX_OUTPUT:
            raise SizeLimitError(f"{DATA_DIRECTIVES[size]}: {len(code):#x} bytes of data, more than the limit {MAX_OUTPUT:#x}")
        self._abs += fixups
        self._add(bytes(code), _REC_DATA, (size, values))
        self._layout = None

    def zero(self, n: int, fill: int = 0) -> None:
        """``n`` bytes of ``fill`` (GNU ``.zero`` / ``.skip`` / ``.space``); at most `MAX_OUTPUT` bytes."""
        if n.__class__ is not int: n = _int_arg("Assembler.zero", "n", n)
        if n < 0: raise OperandError(f".zero: the size must be a non-negative int, not {fmt_value(n)}")
        if n > MAX_OUTPUT: raise SizeLimitError(f".zero {fmt_int(n)}: more than the limit of {MAX_OUTPUT:#x} bytes of output")
        if fill.__class__ is not int: fill = _int_arg("Assembler.zero", "fill", fill)
        if not -128 <= fill <= 255:
            raise OperandError(f".zero: fill byte {fmt_value(fill)} is not an int that fits in a byte")
        self._data(1, (bytes((fill & 0xFF,)) * n,))

    def align(self, n: int, fill: int | None = None, max_skip: int | None = None) -> None:
        """Pad to a multiple of ``n`` bytes (absolute address, base included) with NOPs or ``fill``
        bytes; with ``max_skip``, only if that takes at most ``max_skip`` bytes (GNU ``.p2align``)."""
        if n.__class__ is not int: n = _int_arg("Assembler.align", "n", n)
        if n <= 0 or n & (n - 1):
            raise OperandError(f"alignment must be a power of two, not {fmt_value(n)}")
        if n > MAX_ALIGN: raise SizeLimitError(f"alignment {fmt_int(n)} is larger than the largest supported, {MAX_ALIGN:#x}")
        if fill is not None and fill.__class__ is not int: fill = _int_arg("Assembler.align", "fill", fill)
        if fill is not None and not -128 <= fill <= 255:
            raise OperandError(f"fill byte {fmt_value(fill)} is not an int that fits in a byte")
        if max_skip is not None and max_skip.__class__ is not int: max_skip = _int_arg("Assembler.align", "max_skip", max_skip)
        if max_skip is not None and max_skip < 0:
            raise OperandError(f"max_skip {fmt_value(max_skip)} is not a non-negative int")
        self._var(_Align(n, fill, max_skip, self.line))

    def org(self, offset: int, fill: int = 0) -> None:
        """Pad with ``fill`` bytes up to ``offset`` bytes from the program's start (GNU ``.org``); an error at layout
        if the code before it is longer (GNU as: "attempt to move .org backwards")."""
        if offset.__class__ is not int: offset = _int_arg("Assembler.org", "offset", offset)
        if fill.__class__ is not int: fill = _int_arg("Assembler.org", "fill", fill)
        if offset < 0 or offset > MAX_OUTPUT: raise OperandError(f".org {fmt_value(offset)}: not an offset 0..{MAX_OUTPUT:#x}")
        if not -128 <= fill <= 255: raise OperandError(f".org: fill byte {fmt_value(fill)} is not an int that fits in a byte")
        self._var(_Org(offset, fill & 0xFF, self.line, self))

    # ---- layout and output ---------------------------------------------------------------------------

    def _relax(self):
        """Choose every branch's form and compute chunk/variable-item addresses (see module doc)."""
        # every append adds an item, so (base, item count) identifies the program's state
        if self._layout is not None and self._layout[6] == (self.base, len(self._code)): return self._layout
        for lab in self._labels:
            if lab.chunk < 0 and self._referenced(lab):
                raise self._err(lab.line, f"undefined label {clip(lab.name, 80)} (no label definition and no bind(); flat"
                                " bytes have no relocations: a symbol defined elsewhere needs an object file,"
                                " x86gen.assemble_object or x86gen asm -o file.o)", LabelError)
        code, vars_ = self._code, self._vars
        cstart = [0] + [p + 1 for p in self._vpos]     # item positions where chunks start and end
        cend = [*self._vpos, len(code)]
        # offsets inside their chunks of what is referred to by place: labels, RIP-relative instructions, data fixups
        places = sorted({(lab.pos, lab.chunk) for lab in self._labels if lab.chunk >= 0}
                        | {(r[1], r[0]) for r in self._rip} | {(d[1], d[0]) for d in self._abs})
        # each chunk's bytes, joined once (assemble() reuses them), piece by piece where places fall in it: the pieces'
        # lengths give the places' offsets (b"".join is faster than adding up len()s)
        chunks: list[bytes] = []
        offs: dict[int, int] = {}
        k, nplaces = 0, len(places)
        for c, (a, b) in enumerate(zip(cstart, cend)):
            pieces, pos, off = [], a, 0
            while k < nplaces and places[k][1] == c:
                p = places[k][0]
                if p > pos:   # (a label at the chunk's start, a loop's head after a branch, needs no piece)
                    piece = b"".join(code[pos:p])
                    pieces.append(piece)
                    off += len(piece)
                    pos = p
                offs[p] = off
                k += 1
            piece = b"".join(code[pos:b])
            chunks.append(b"".join((*pieces, piece)) if pieces else piece)
        lens = list(map(len, chunks))
        for lab in self._labels:
            if lab.chunk >= 0: lab.offset = offs[lab.pos]
        base = self.base
        iterations = _grow_branches(vars_, lens, base)
        nv = len(vars_)
        starts, vstart, vsize = [], [], []
        addr = base
        for i in range(len(lens)):
            starts.append(addr)
            addr += lens[i]
            if i < nv:
                v = vars_[i]
                s = v.choices[v.k][1] if v.__class__ is _Branch else v.pad(addr)
                if v.__class__ is _Org and addr - base > v.offset:
                    raise self._err(v.line, f".org {v.offset:#x}: the code before it is {addr - base:#x} bytes long"
                                    " (.org cannot move back)", OperandError)
                vstart.append(addr); vsize.append(s)
                addr += s
        if addr - base > MAX_OUTPUT:
            raise SizeLimitError(f"the program is {addr - base:#x} bytes long, more than the limit of {MAX_OUTPUT:#x}")
        self._layout = (base, starts, vstart, vsize, addr, iterations, (base, len(self._code)), chunks, offs)
        return self._layout

    def _referenced(self, lab: Label) -> bool:
        if lab.line: return True
        return any(v.__class__ is _Branch and getattr(v.target, "label", v.target) is lab for v in self._vars) \
            or any(r[4] is lab for r in self._rip) or any(lab in a[4] or lab in a[5] for a in self._abs)

    def assemble(self) -> bytes:
        """The machine code: branches relaxed, labels resolved, alignment padded."""
        base, starts, vstart, vsize, end, _, _, chunks, offs = self._relax()
        vars_ = self._vars
        nv = len(vars_)
        out = bytearray()
        for i, chunk in enumerate(chunks):
            out += chunk
            if i < nv:
                v = vars_[i]
                if v.__class__ is _Branch:
                    form = v.choices[v.k][0]
                    t = v.target
                    dest = t if t.__class__ is int else starts[t.chunk] + t.offset
                    try:
                        if v.n: out += P.layout(v.words, form, form.encoder(dest, ip=vstart[i] + v.n), None)
                        else: out += form.encoder(dest, ip=vstart[i])
                    except EncodeError as ex: raise self._err(v.line, f"{v.mnemonic} {t}: {ex}", type(ex)) from None
                elif vsize[i]:
                    out += nop_fill(vsize[i]) if v.fill is None else bytes((v.fill & 0xFF,)) * vsize[i]
        for ci, pos, doff, length, lab, addend, line in self._rip:
            at = starts[ci] + offs[pos]
            disp = starts[lab.chunk] + lab.offset + addend - (at + length)
            if not -(1 << 31) <= disp < (1 << 31):
                raise self._err(line, f"RIP-relative displacement to {clip(lab.name, 80)} ({fmt_int(disp)}) does not fit in 32 bits",
                                ImmediateRangeError)
            _SPACK[4].pack_into(out, at - base + doff, disp)
        for ci, pos, off, size, plus, minus, addend, line, signed in self._abs:
            value = sum(starts[x.chunk] + x.offset for x in plus) - sum(starts[x.chunk] + x.offset for x in minus) + addend
            if not -(1 << (8 * size - 1)) <= value < (1 << (8 * size - signed)):   # (a disp32 is sign-extended)
                raise self._err(line, f"value {fmt_int(value)} of {clip(expr_text(plus, minus, addend), 120)} "
                               f"does not fit in {8 * size} bits", ImmediateRangeError)
            _PACK[size].pack_into(out, starts[ci] + offs[pos] - base + off, value & ((1 << (8 * size)) - 1))
        return bytes(out)

    finalize = assemble

    def __bytes__(self) -> bytes: return self.assemble()

    def _err(self, line: int, msg: str, cls: type[EncodeError] = EncodeError) -> EncodeError:
        """An error of class ``cls`` naming source line ``line`` (when the program came from text) and the line."""
        if not line: return cls(msg)
        src = self.source[line - 1].strip() if self.source and line <= len(self.source) else None
        return cls(f"line {line}: " + (f"{clip(src)}: " if src else "") + msg)

    def address_of(self, label: Label | str) -> int:
        """The address of a bound label in the current layout (base included)."""
        if label.__class__ is str:
            hit = self._named.get(label)
            if hit is None: raise LabelError(f"no label named {fmt_value(label)} in this Assembler")
            label = hit
        elif label.__class__ is not Label or label.owner is not self:
            raise LabelError(f"{fmt_value(label)} is not a label of this Assembler")
        if label.chunk < 0: raise LabelError(f"label {clip(label.name, 80)} is not bound")
        return self._relax()[1][label.chunk] + label.offset

    @property
    def size(self) -> int:
        """Length in bytes of the assembled code."""
        lay = self._relax()
        return lay[4] - lay[0]

    @property
    def relaxation_passes(self) -> int:
        """How many rounds the last relaxation took: 1 + the rounds of its worklist (each round checks the branches
        that the previous round's growths may have pushed out of reach; `_grow_branches`)."""
        return self._relax()[5]

    def branch_sizes(self) -> list[tuple[str, str, int]]:
        """(mnemonic, target, length) for each branch in the current layout."""
        self._relax()
        return [(v.mnemonic, str(v.target), v.choices[v.k][1]) for v in self._vars if v.__class__ is _Branch]

    def jit(self, restype=_INT64, argtypes=(), *, name: str = "fn"):
        """Assemble and load into executable memory: see `x86gen.jit.compile` (``restype`` defaults to int64;
        None means void). An empty program raises `EncodeError`."""
        import ctypes

        from . import jit  # (ctypes and mmap: loaded when a program is first run)
        code = self.assemble()
        if not code: raise EncodeError("jit: the program is empty (no machine code to run)")
        try: return jit.compile(code, ctypes.c_int64 if restype is _INT64 else restype, argtypes, name=name)
        except ArgumentTypeError as ex:   # (named as this method)
            raise ArgumentTypeError(str(ex).replace("x86gen.jit.compile", "Assembler.jit", 1)) from None

    # ---- listing ------------------------------------------------------------------------------------

    def lines(self) -> list[tuple[int | None, bytes, str]]:
        """(address, bytes, Intel-syntax text) per instruction, data directive and label (address None for labels).
        Needs an Assembler made with ``listing=True`` (`x86gen.NoListingError` otherwise)."""
        text = self._text
        if text is None:
            raise NoListingError("this Assembler keeps no listing: make it with Assembler(listing=True) for lines(), listing(), text()")
        code = self.assemble()
        base, starts, vstart, vsize = self._layout[:4]
        out: list[tuple[int | None, bytes, str]] = []
        # items hold their bytes, not their place: walk each chunk (a branch or alignment ends one) adding up lengths
        ci, off = 0, 0
        for j, b in enumerate(self._code):
            t = TEXT_LEN * j
            kind = text[t]
            a = starts[ci] + off
            off += len(b)
            if kind.__class__ is str:
                ops = [x for x in text[t + 1:t + TEXT_LEN] if x is not None]
                out.append((a, code[a - base:a - base + len(b)], insn_text(kind, ops, b)))
            elif kind == _REC_VAR:
                i = text[t + 1]
                ci, off = i + 1, 0
                v = self._vars[i]
                a = vstart[i]
                b = code[a - base:a - base + vsize[i]]
                if v.__class__ is _Branch: out.append((a, b, f"{v.mnemonic} {target_text(v.target)}"))
                elif v.__class__ is _Org: out.append((a, b, f".org {v.offset:#x}, {v.fill:#x}"))
                else:
                    args = [str(v.n)]
                    if v.fill is not None or v.max_skip is not None: args.append("" if v.fill is None else f"{v.fill:#x}")
                    if v.max_skip is not None: args.append(str(v.max_skip))
                    out.append((a, b, ".balign " + ", ".join(args)))
            elif kind == _REC_DATA:
                out.append((a, code[a - base:a - base + len(b)], data_text(text[t + 1], text[t + 2])))
            else:
                out.append((None, b"", f"{text[t + 1].name}:"))
        return out

    def listing(self, width: int = 10) -> str:
        """Address, bytes and Intel syntax per line; labels on lines of their own.

        At most ``width`` bytes per row: longer data and padding continue on following rows.
        """
        if width.__class__ is not int: width = _int_arg("Assembler.listing", "width", width)
        if width < 1: raise EncodeError(f"Assembler.listing: width must be at least 1 (bytes per row), not {fmt_int(width, True)}")
        rows = []
        for addr, b, text in self.lines():
            if addr is None: rows.append(f"{text}"); continue
            chunks = [b[i:i + width] for i in range(0, len(b), width)] or [b""]
            rows.append(f"  {addr:08x}  {chunks[0].hex(' '):<{3 * width - 1}}  {text}")
            for j, c in enumerate(chunks[1:], 1):
                rows.append(f"  {addr + j * width:08x}  {c.hex(' ')}")
        return "\n".join(rows)

    def text(self) -> str:
        """The program as Intel-syntax text that `assemble_program` turns back into the same bytes."""
        return "\n".join(t if a is None else "    " + t for a, _b, t in self.lines())

    def __str__(self) -> str:
        """The listing (with ``listing=True``), else the repr."""
        return self.listing() if self._text is not None else repr(self)

    def __repr__(self) -> str:
        return f"<Assembler {len(self._code)} items, {len(self._vars)} branches/aligns, base {self.base:#x}>"


def expr_text(plus, minus, addend) -> str:
    """The text of a data expression: ``a+b-c+0x8`` (label names, then the addend)."""
    s = "+".join(x.name for x in plus)
    for x in minus: s += f"-{x.name}"
    if addend or not s: s += (f"+{addend:#x}" if addend >= 0 else f"-{-addend:#x}") if s else f"{addend:#x}"
    return s


class DataExpr:
    """``label1 + label2 - label3 + 8`` in a data directive."""
    __slots__ = ("plus", "minus", "addend")

    def __init__(self, plus, minus, addend):
        self.plus, self.minus, self.addend = tuple(plus), tuple(minus), addend


# Other names (jz, cmovnz, setc, sal, movabs, …) share the canonical method (`x86gen._gen.asm_methods.method` makes both).



def _int_arg(func: str, arg: str, value) -> int:
    """``value`` as an int (``operator.index``: numpy integers too), or the `x86gen.ArgumentTypeError` of ``func``'s
    ``arg``."""
    import operator
    try: return operator.index(value)
    except TypeError: raise wrong_type(func, arg, value, "an int") from None


def _floats(directive: str, values: tuple) -> tuple:
    """`Assembler.float32`/`float64`'s values as floats; a value that is none is an `x86gen.OperandError`, as
    `Assembler.db`'s are."""
    try: return tuple(float(v) for v in values)
    except (TypeError, ValueError):
        for v in values:
            try: float(v)
            except (TypeError, ValueError): raise OperandError(f"{directive}: cannot store {fmt_value(v)} (a float or an int)") from None
        raise


def target_text(t) -> str:
    """A branch target's text: the label's name or the absolute address."""
    return t.name if t.__class__ is Label or t.__class__ is LabelPlus else f"{t:#x}"


def data_text(size: int, values: tuple) -> str:
    """A data record's directive (db/dw/dd/dq, .float/.double) with its values."""
    if size in (4, 8) and values and all(v.__class__ is float and math.isfinite(v) for v in values):
        # floats print as .float/.double (the text parser refuses floats in dd/dq, as GNU as does);
        # repr() round-trips every finite float exactly
        return (".float " if size == 4 else ".double ") + ", ".join(repr(v) for v in values)
    parts = []
    for v in values:
        c = v.__class__
        if c is int: parts.append(f"{v:#x}" if v >= 0 else f"-{-v:#x}")
        elif c is float: parts.append(float_bits_text(size, v))   # mixed with ints or not finite: the stored bits
        elif c is str or c is bytes or c is bytearray:
            b = v.encode() if c is str else bytes(v)
            parts.append(", ".join(f"{x:#x}" for x in b) if any(x < 32 or x > 126 or x in b'"\\' for x in b)
                         else '"' + b.decode() + '"')
        elif c is Label: parts.append(v.name)
        else: parts.append(expr_text(v.plus, v.minus, v.addend))
    return f"{DATA_DIRECTIVES[size]} " + ", ".join(parts)
