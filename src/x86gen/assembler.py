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
(`x86gen.encoder.plan_for`, one function that chooses the form and encodes), appends the bytes and
a listing record ``(mnemonic, bytes, *operands)``; the first use of a signature, label operands and
errors take `Assembler._emit`. Only branches to labels (and ``align``) sit between chunks, and
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

`assemble_program` parses whole Intel-syntax programs (GNU as / objdump / iced flavours) into an
Assembler; `x86gen.assemble` calls it for multi-line text.
"""
from __future__ import annotations

import bisect
import math
import re
import struct

from ._evex_text import Decorations, decorated_form, has_decorations, listed_decorated, parse_decorated, split_decorations
from ._gen.asm_methods import BRANCH_MNEMONICS, MNEMONICS, PLANS, VARIADIC, AsmMethods
from ._table import A32_SPELLED
from .encoder import (
    EVEX_PREFIX,
    MNEMONIC_ALIASES,
    STRING_MNEMONICS,
    VEX_PREFIX,
    LabelOperand,
    candidates,
    canonical,
    encode,
    encode_prefixed,
    lea_low_bits,
    no_form_error,
    plan_for,
    select,
    string_operands,
)
from .errors import (
    MAX_OUTPUT,
    AsmSyntaxError,
    EncodeError,
    ImmediateRangeError,
    LabelError,
    OperandError,
    PrefixError,
    SizeLimitError,
    UnknownMnemonicError,
    fmt_int,
    fmt_value,
)
from .evex import Masked, Rounding
from .memory import SIZE_BITS, A32Mem, Bcst, Mem, SegMem, size_named
from .registers import REGISTERS
from .text import (
    _FAR_MNEMONICS,
    _INT,
    _LEXED,
    _OPERANDS,
    _PREFIXES,
    _REGS,
    _SIZE_PREFIX,
    PREFIX_WORDS,
    SHORTHANDS,
    UNSUPPORTED_REGISTERS,
    char_value,
    clip,
    far_memory,
    format_operand,
    iced_sized,
    parse_int,
    parse_operand,
    parse_text_line,
    prefix_words,
    pseudo_op,
    shorthand,
    signed_terms,
    split_statements,
    strip_block_comments,
    unescape,
    unknown_word,
)

__all__ = ["Assembler", "Label", "assemble_program", "NOPS"]

_RIP = REGISTERS["rip"]
_DECORATED = (Masked, Bcst)   # AVX-512 operands that `Assembler._emit_evex` encodes
_PLAIN = frozenset(MNEMONICS) - BRANCH_MNEMONICS
MAX_ALIGN = MAX_OUTPUT   # the largest alignment `Assembler.align` takes (bytes)
_INT64 = object()   # Assembler.jit's default restype (ctypes is imported only when jit is used)
_KEYWORD_METHODS = {"and": "and_", "or": "or_", "not": "not_"}


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
        self.pos = 0            # where in the Assembler's record list it is bound
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


# Recommended multi-byte NOPs (SDM Vol.2B, NOP, Table 4-12), index = length.
NOPS = (b"", bytes.fromhex("90"), bytes.fromhex("6690"), bytes.fromhex("0f1f00"), bytes.fromhex("0f1f4000"),
        bytes.fromhex("0f1f440000"), bytes.fromhex("660f1f440000"), bytes.fromhex("0f1f8000000000"),
        bytes.fromhex("0f1f840000000000"), bytes.fromhex("660f1f840000000000"))


def nop_fill(n: int) -> bytes:
    """``n`` bytes of NOPs, as few instructions as possible (9 bytes at most each)."""
    return NOPS[9] * (n // 9) + NOPS[n % 9]


class _Branch:
    """A branch to a label (or an absolute address) between two chunks; its size is chosen by relaxation."""
    __slots__ = ("mnemonic", "target", "choices", "k", "line")

    def __init__(self, mnemonic, target, choices, line):
        self.mnemonic, self.target, self.choices, self.k, self.line = mnemonic, target, choices, 0, line

    def size(self) -> int: return self.choices[self.k][1]


class _Align:
    __slots__ = ("n", "fill", "max_skip", "line")

    def __init__(self, n, fill, max_skip, line):
        self.n, self.fill, self.max_skip, self.line = n, fill, max_skip, line

    def pad(self, addr: int) -> int:
        p = -addr % self.n
        return 0 if self.max_skip is not None and p > self.max_skip else p


# Plans of `Assembler._emit` by (mnemonic, *operand signature); the fixed-arity methods' nested tables
# (`x86gen._gen.asm_methods.PLANS`) get the same plans.
_FLAT: dict[tuple, object] = {}
_BRANCH_INFO: dict[str, tuple] = {}
# What an Assembler holds (`Assembler._lst`) is one flat list of records of _RL items each, in program order.
# Flat, so that appending an instruction keeps no new object (nothing for the garbage collector to scan);
# with the bytes always second, so that a chunk's bytes are one ``b"".join(lst[start + 1:end:_RL])``:
#   instruction:  mnemonic, bytes, operands 1-5 (None where there are fewer; vpermil2ps has 5)
#   label:        _REC_LABEL, b"", label, None…
#   branch/align: _REC_VAR, b"", index in _vars, None…   (ends a chunk; its bytes come from relaxation)
#   data:         _REC_DATA, bytes, size, values, None…
_RL = 7
_PAD = tuple((None,) * (_RL - 2 - n) for n in range(_RL - 1))   # the Nones after n operands
_REC_LABEL, _REC_VAR, _REC_DATA = -1, -2, -3
_PACK = {1: struct.Struct("<B"), 2: struct.Struct("<H"), 4: struct.Struct("<I"), 8: struct.Struct("<Q")}
_SPACK = {1: struct.Struct("<b"), 2: struct.Struct("<h"), 4: struct.Struct("<i"), 8: struct.Struct("<q")}
_DATA_NAMES = {1: "db", 2: "dw", 4: "dd", 8: "dq"}


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
        forms, _ = candidates(mn, ("l",), (lab,))
        # never a form with a 32-bit implicit address (addr32 loop: counts in ecx) or a 16-bit branch (o16: AMD CPUs
        # truncate rip to 16 bits) unless it is the mnemonic's only kind (jecxz): relaxation must not change the operation
        forms = [f for f in forms if not (f.addrsize32 or f.opsize16)] or forms
        hit = tuple((f, f.length, *f.imm_ranges(0)[0]) for f in forms)
        _BRANCH_INFO[mn] = hit
    return hit


def _branch16_info(mn: str, words: list[str]) -> tuple:
    """`_branch_info` for ``data16 jmp`` / ``data16 addr32 loop`` (``words``: the prefix words, data16 among them): the
    16-bit branches (o16: JMP_REL8_16, JMP_REL16), whose target is a 16-bit IP (SDM Vol.2 JMP, operand size 16). Their
    reach is relaxed as a plain displacement; the encoder counts it modulo 2^16 and refuses a label above 0xffff."""
    key = (mn, *words)
    hit = _BRANCH_INFO.get(key)
    if hit is None:
        a32 = "addr32" in words and canonical(mn) not in A32_SPELLED   # (jecxz says its 32-bit address itself)
        forms, _ = candidates(mn, ("l",), (Label("x"),), "data16 addr32" if a32 else "data16")
        hit = tuple((f, f.length, *f.imm_ranges(0)[0]) for f in forms)
        _BRANCH_INFO[key] = hit
    return hit


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
    pre = [0] * (nv + 1)          # pre[c]: bytes of chunks before chunk c, without the items
    for c in range(nv): pre[c + 1] = pre[c] + lens[c]
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
    # branches after it see it; a target ahead is taken where it was plus the growth so far, unless an alignment
    # lies between (which may absorb it). Most programs are done after it (one pass over the items).
    nalign = [0] * (nv + 1)        # nalign[c]: alignments among items 0 .. c-1
    for j in aligns: nalign[j + 1] = 1
    for c in range(nv): nalign[c + 1] += nalign[c]
    shift, grew = 0, False         # how far the current item has moved from the first layout
    now = [0] * (nv + 1)           # chunk start addresses as this pass leaves them
    for i, v in enumerate(vars_):
        now[i] = cstart[i] + shift
        at = now[i] + lens[i]
        if v.__class__ is _Branch:
            t = v.target
            if t.__class__ is int: dest = t
            elif t.chunk <= i: dest = now[t.chunk] + t.offset
            else: dest = cstart[t.chunk] + t.offset + (shift if nalign[t.chunk] == nalign[i + 1] else 0)
            choices = v.choices
            _f, length, lo, hi = choices[0]
            if not lo <= dest - (at + length) <= hi:
                k = 1
                while k < len(choices):
                    _f, length, lo, hi = choices[k]
                    if lo <= dest - (at + length) <= hi: break
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
        if not lo <= (t if t.__class__ is int else now[t.chunk] + t.offset) - (now[i] + lens[i] + length) <= hi:
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
            if lo <= dest - (start + length) <= hi: continue
            k = v.k + 1
            while k < len(choices):
                _f, length, lo, hi = choices[k]
                if lo <= dest - (start + length) <= hi: break
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
    """

    __slots__ = ("base", "_lst", "_vars", "_vpos", "_rip", "_abs", "_labels", "_named", "_layout", "line", "source")

    def __init__(self, base: int = 0):
        self.base = base
        self._lst: list = []               # the program: records of _RL items (see _RL); chunk i ends at _vars[i]
        self._vars: list = []              # branches and alignments, sized by `_relax`
        self._vpos: list[int] = []         # where each of them is in _lst
        self._rip: list[tuple] = []        # (chunk, record position, disp offset in it, its length, label, addend, line)
        self._abs: list[tuple] = []        # (chunk, record position, offset in it, size, plus labels, minus labels, addend, line)
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
            hit = self._named.get(name)
            if hit is not None:
                if hit.bound: raise LabelError(f"label {clip(name, 80)} is already defined")
                return hit
        lab = Label(name, self)
        self._labels.append(lab)
        self._named[name] = lab
        return lab

    def bind(self, label: Label | str) -> Label:
        """Place ``label`` at the current position (the address of the next instruction)."""
        if label.__class__ is str: label = self.label(label)
        if label.owner is not self: raise LabelError(f"label {clip(label.name, 80)} belongs to another Assembler")
        if label.chunk >= 0: raise LabelError(f"label {clip(label.name, 80)} is bound twice")
        label.chunk, label.pos = len(self._vars), len(self._lst)
        self._lst += (_REC_LABEL, b"", label, *_PAD[1])
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
        mn = mnemonic if mnemonic in _PLAIN or mnemonic in BRANCH_MNEMONICS else mnemonic.lower()
        if mn in STRING_MNEMONICS: mn, ops = string_operands(mn, ops)   # `movsb`, `movs byte ptr [rdi], …`: the form's operands
        if mn in _PLAIN: return self._emit(mn, ops)
        if " " in mn: return self._emit_prefixed(mn, ops)
        if mn in BRANCH_MNEMONICS: return self._jump(mn, ops) if mn in ("jmp", "call") else self._branch(mn, ops)
        canon = MNEMONIC_ALIASES.get(mn)
        if canon in BRANCH_MNEMONICS: return self.emit(canon, *ops)
        if canon in _PLAIN: return self._emit(mn, ops)
        from .forms import forms_of
        for pseudo in (EVEX_PREFIX, VEX_PREFIX):   # `{evex} vaddps`, `{vex} vpdpbusd`
            if mn.startswith(pseudo) and forms_of(mn[len(pseudo):]): return self._emit(mn, ops)
        forms_of(mn)                     # raises UnknownMnemonicError with suggestions
        raise UnknownMnemonicError(f"unknown mnemonic {fmt_value(mnemonic)}")

    def movabs(self, a, b) -> None:
        """GNU ``movabs``: mov with a 64-bit absolute address (``movabs eax, [0x10]``, al/ax/eax/rax only) or a
        64-bit immediate (``movabs rax, 5`` keeps its 8 bytes)."""
        return self._emit("movabs", (a, b))

    def _emit(self, mn: str, ops: tuple) -> None:
        """Append one instruction: the general path, taken by ``*ops`` methods, `emit` and the generated
        methods' first use of an operand signature, label operands and errors (see the module doc)."""
        try: sig = tuple(["i" if x.__class__ is int else x.sig for x in ops])
        except AttributeError:
            from .forms import forms_of
            raise no_form_error(mn, ops, forms_of(canonical(mn))) from None
        if "l" in sig:   # a label where memory is meant: [rip+label]
            return self._emit(mn, tuple(x.mem() if x.__class__ is Label else x for x in ops))
        key = (mn, *sig)
        plan = _FLAT.get(key)
        if plan is None:
            if any(x.__class__ in _DECORATED for x in ops): return self._emit_evex(mn, ops, None)   # {k1}, {z}, {1toN}
            if any(x.__class__ is SegMem or x.__class__ is A32Mem for x in ops):   # fs:[rax], [eax]: a segment / 0x67 prefix
                return self._emit_prefixed(mn, ops)
            if mn in STRING_MNEMONICS:   # `movsb`, `lodsb byte ptr [rsi]`: the form's name and operands
                m2, filled = string_operands(mn, ops)
                if m2 is not mn or filled is not ops: return self._emit(m2, filled)
            if mn == "lea" and sig[-1][:5] == "moffs":   # lea r32, [0x80000000]: the low 32 bits (encoder.lea_low_bits)
                near = lea_low_bits(mn, ops)
                if near is not None: return self._emit(mn, near)
            plan = plan_for(mn, sig, ops, labels=True)[0]
            _FLAT[key] = plan
            table = PLANS.get(mn)
            if table is not None:   # the generated method's fast path from now on
                _store(table.setdefault(len(sig), {}) if mn in VARIADIC else table, sig, plan)
        try: out = plan(*ops)
        except LabelOperand: return self._emit_rip(mn, ops)
        self._lst += (mn, out, *ops, *_PAD[len(ops)])

    def _emit_evex(self, mn: str, ops: tuple, rc: int | None) -> None:
        """An AVX-512 instruction with a masked destination, a broadcast source or rounding (`x86gen._evex`, the
        slow path; never planned). Its record holds the operands and, with ``rc``, an `x86gen.evex.Rounding` after
        them. A label in a memory operand is not supported here (yet)."""
        for x in ops:
            m = x.op if x.__class__ is Masked else x
            if m.__class__ is Label or (isinstance(m, Mem) and m.label is not None):
                raise OperandError(f"{mn}: a label memory operand with masking or broadcast is not supported by the Assembler"
                                   " (yet); load the address into a register")
        out = encode(mn, *ops, rc=rc) if rc is not None else encode(mn, *ops)
        rec = ops if rc is None else (*ops, Rounding(rc))
        if len(rec) > 4: raise OperandError(f"{mn}: at most 3 operands with rc= in an Assembler record")
        self._lst += (mn, out, *rec, *_PAD[len(rec)])

    def _emit_prefixed(self, mn: str, ops: tuple) -> None:
        """An instruction with prefix words (``lock add``) or a segment override (`SegMem`): `encode_prefixed`'s bytes.
        A branch to a label or address with a prefix (``bnd jmp .L1``) is not supported (it would need relaxation)."""
        base = mn.rsplit(" ", 1)[-1]
        words = mn.split()[:-1]
        if canonical(base) in BRANCH_MNEMONICS and len(ops) == 1 and ops[0].__class__ in (str, Label) \
                and "data16" in words and set(words) <= {"data16", "addr32"}:   # `data16 jmp .L1`: a 16-bit branch
            return self._branch(mn, ops, choices=_branch16_info(canonical(base), words))
        if canonical(base) in BRANCH_MNEMONICS and len(ops) == 1 and ops[0].__class__ in (int, str, Label):
            raise PrefixError(f"{mn} {fmt_value(ops[0])}: a prefix on a branch to a label or address is not supported by the"
                              " Assembler (yet); x86gen.encode takes it with an address and ip=")
        if any(x.__class__ is Label for x in ops): ops = tuple(x.mem() if x.__class__ is Label else x for x in ops)
        if any(x.__class__ in (Mem, SegMem) and x.label is not None for x in ops): return self._emit_rip(mn, ops)
        out = encode_prefixed(mn, ops)[0]
        self._lst += (mn, out, *ops, *_PAD[len(ops)])

    def _emit_rip(self, mn: str, ops: tuple) -> None:
        """An instruction whose memory operand names a label (``[rip+label]``): encoded with the label's
        displacement left at its addend, patched by `assemble`."""
        i = next(i for i, x in enumerate(ops) if x.__class__ in (Mem, SegMem) and x.label is not None)
        m = ops[i]
        if m.base is not _RIP: raise OperandError(f"{mn}: a label in memory operand {m} must be RIP-relative ([rip+{m.label}])")
        lab = m.label
        if lab.__class__ is str: lab = self.get_label(lab)
        elif lab.__class__ is not Label or lab.owner is not self:
            raise OperandError(f"{mn}: {lab!r} is not a label of this Assembler")
        # encoded with disp32 0, which `assemble` overwrites with label + addend - end of instruction (checked
        # to fit there: the addend alone may not, [x+0x80000000] is reachable from near x)
        seg = Mem(_RIP, None, 1, 0, m.size)
        plain = (*ops[:i], seg if m.__class__ is Mem else seg.with_segment(m.seg), *ops[i + 1:])
        b = encode(mn, *plain)
        form = select(mn, *plain)
        if not m.size and form.operands[i].mem:   # list it with the size the form gives it: `dword ptr [rip+c]`
            ops = (*ops[:i], m.with_size(form.operands[i].mem), *ops[i + 1:])
        tail = sum(form.imm_widths) // 8 + (1 if form.is4 else 0)
        self._rip.append((len(self._vars), len(self._lst), len(b) - tail - 4, len(b), lab, m.disp, self.line))
        if lab.line == 0: lab.line = self.line
        self._lst += (mn, b, *ops, *_PAD[len(ops)])
        self._layout = None

    def _branch(self, mn: str, ops: tuple, rel32: bool = False, choices: tuple | None = None) -> None:
        """A branch to a label, name or address, relaxed (`_grow_branches`) among ``choices`` (default `_branch_info`)."""
        if len(ops) != 1: raise OperandError(f"{mn} takes one operand (a label or an address), got {len(ops)}")
        target = ops[0]
        cls = target.__class__
        if cls is str: target = self.get_label(target)
        elif cls is Label:
            if target.owner is not self: raise OperandError(f"{mn}: label {target.name!r} belongs to another Assembler")
        elif cls is not int: raise OperandError(f"{mn}: the target must be a label or an address, not {target!r}")
        if target.__class__ is Label and target.line == 0: target.line = self.line
        if choices is None: choices = _branch_info(mn)[-1:] if rel32 else _branch_info(mn)
        self._var(_Branch(mn, target, choices, self.line))

    def _var(self, v) -> None:
        """End the current chunk with a branch or an alignment (sized by `_relax`)."""
        self._vpos.append(len(self._lst))
        self._lst += (_REC_VAR, b"", len(self._vars), *_PAD[1])
        self._vars.append(v)
        self._layout = None

    def _jump(self, mn: str, ops: tuple, rel32: bool = False) -> None:
        if len(ops) == 1 and (ops[0].__class__ in (int, str, Label)): return self._branch(mn, ops, rel32)
        return self._emit(mn, ops)

    def emit_form(self, form, *ops, rc: int | None = None) -> None:
        """Append one instruction in exactly this form (a form id or `x86gen.Form`), listed like any other:
        ``a.emit_form("ADD_RM32_IMM32", eax, 1)`` is ``81 c0 01 00 00 00`` where ``a.add(eax, 1)`` picks
        ``83 /0 ib``. A branch form takes a label (or name, or address) and keeps its size: no relaxation."""
        if not hasattr(form, "operands"):
            from .forms import get_form
            form = get_form(form)
        if form.is_branch and len(ops) == 1 and ops[0].__class__ in (str, Label):
            choice = next(c for c in _branch_info(form.mnemonic) if c[0] is form)
            target = ops[0]
            if target.__class__ is str: target = self.get_label(target)
            elif target.owner is not self: raise OperandError(f"{form.mnemonic}: label {target.name!r} belongs to another Assembler")
            if target.line == 0: target.line = self.line
            return self._var(_Branch(form.mnemonic, target, (choice,), self.line))
        if any(x.__class__ is Label or (x.__class__ is Mem and x.label is not None) for x in ops):
            raise OperandError(f"emit_form({form.id}): label operands other than a branch target are not supported; use emit()")
        if len(ops) > 4: raise OperandError(f"{form.id} takes {len(form.operands)} operands, got {len(ops)}")
        if rc is not None:   # AVX-512 rounding / SAE (x86gen.evex)
            out = form(*ops, rc=rc)
            rec = (*ops, Rounding(rc))
            if len(rec) > 4: raise OperandError(f"{form.id}: at most 3 operands with rc= in an Assembler record")
            self._lst += (form.mnemonic, out, *rec, *_PAD[len(rec)])
            return
        out = form(*ops)
        self._lst += (form.mnemonic, out, *ops, *_PAD[len(ops)])

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

    def float32(self, *values: float) -> None: self._data(4, tuple(float(v) for v in values))
    def float64(self, *values: float) -> None: self._data(8, tuple(float(v) for v in values))

    def _data(self, size: int, values: tuple) -> None:
        code = bytearray()
        fixups = []
        for v in values:
            c = v.__class__
            if c is int:
                if not -(1 << (8 * size - 1)) <= v < (1 << (8 * size)):
                    raise ImmediateRangeError(f"{_DATA_NAMES[size]} {fmt_int(v)}: does not fit in {8 * size} bits")
                code += (v & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
            elif c is float:
                if size == 4: code += struct.pack("<f", v)
                elif size == 8: code += struct.pack("<d", v)
                else: raise OperandError(f"{_DATA_NAMES[size]}: floats need dd (float32) or dq (float64)")
            elif c in (bytes, bytearray, str):
                if size != 1: raise OperandError(f"{_DATA_NAMES[size]}: strings and bytes go in db")
                code += v.encode() if c is str else v
            elif c is Label or c is _Expr:
                e = v if c is _Expr else _Expr((v,), (), 0)
                for lab in (*e.plus, *e.minus):
                    if lab.owner is not self: raise OperandError(f"label {lab.name!r} belongs to another Assembler")
                    if lab.line == 0: lab.line = self.line
                fixups.append((len(self._vars), len(self._lst), len(code), size, e.plus, e.minus, e.addend, self.line))
                code += bytes(size)
            else:
                raise OperandError(f"{_DATA_NAMES[size]}: cannot store {fmt_value(v)}")
        if len(code) > MAX_OUTPUT:
            raise SizeLimitError(f"{_DATA_NAMES[size]}: {len(code):#x} bytes of data, more than the limit {MAX_OUTPUT:#x}")
        self._abs += fixups
        self._lst += (_REC_DATA, bytes(code), size, values, *_PAD[2])
        self._layout = None

    def zero(self, n: int, fill: int = 0) -> None:
        """``n`` bytes of ``fill`` (GNU ``.zero`` / ``.skip`` / ``.space``); at most `MAX_OUTPUT` bytes."""
        if n.__class__ is not int or n < 0: raise OperandError(f".zero: the size must be a non-negative int, not {fmt_value(n)}")
        if n > MAX_OUTPUT: raise SizeLimitError(f".zero {fmt_int(n)}: more than the limit of {MAX_OUTPUT:#x} bytes of output")
        if fill.__class__ is not int or not -128 <= fill <= 255:
            raise OperandError(f".zero: fill byte {fmt_value(fill)} is not an int that fits in a byte")
        self._data(1, (bytes((fill & 0xFF,)) * n,))

    def align(self, n: int, fill: int | None = None, max_skip: int | None = None) -> None:
        """Pad to a multiple of ``n`` bytes (absolute address, base included) with NOPs or ``fill``
        bytes; with ``max_skip``, only if that takes at most ``max_skip`` bytes (GNU ``.p2align``)."""
        if n.__class__ is not int or n <= 0 or n & (n - 1):
            raise OperandError(f"alignment must be a power of two, not {fmt_value(n)}")
        if n > MAX_ALIGN: raise SizeLimitError(f"alignment {fmt_int(n)} is larger than the largest supported, {MAX_ALIGN:#x}")
        if fill is not None and (fill.__class__ is not int or not -128 <= fill <= 255):
            raise OperandError(f"fill byte {fmt_value(fill)} is not an int that fits in a byte")
        if max_skip is not None and (max_skip.__class__ is not int or max_skip < 0):
            raise OperandError(f"max_skip {fmt_value(max_skip)} is not a non-negative int")
        self._var(_Align(n, fill, max_skip, self.line))

    # ---- layout and output ---------------------------------------------------------------------------

    def _relax(self):
        """Choose every branch's form and compute chunk/variable-item addresses (see module doc)."""
        # every append adds a listing record, so (base, record count) identifies the program's state
        if self._layout is not None and self._layout[6] == (self.base, len(self._lst)): return self._layout
        for lab in self._labels:
            if lab.chunk < 0 and self._referenced(lab):
                raise self._err(lab.line, f"undefined label {clip(lab.name, 80)} (no label definition and no bind())", LabelError)
        lst, vars_ = self._lst, self._vars
        cstart = [0] + [p + _RL for p in self._vpos]     # record positions where chunks start and end
        cend = [*self._vpos, len(lst)]
        # offsets inside their chunks of what is referred to by place: labels, RIP-relative instructions, data fixups
        places = sorted({(lab.pos, lab.chunk) for lab in self._labels if lab.chunk >= 0}
                        | {(r[1], r[0]) for r in self._rip} | {(d[1], d[0]) for d in self._abs})
        # each chunk's bytes, joined once (assemble() reuses them): a chunk with places in it is joined piece by
        # piece, so that the pieces' lengths give the places' offsets (b"".join is faster than adding up len()s)
        chunks = [b"".join(lst[a + 1:b:_RL]) for a, b in zip(cstart, cend)] if not places else []
        offs: dict[int, int] = {}
        if places:
            k, np_ = 0, len(places)
            for c, (a, b) in enumerate(zip(cstart, cend)):
                if k == np_ or places[k][1] != c:
                    chunks.append(b"".join(lst[a + 1:b:_RL]))
                    continue
                pieces, pos, off = [], a, 0
                while k < np_ and places[k][1] == c:
                    p = places[k][0]
                    piece = b"".join(lst[pos + 1:p:_RL])
                    pieces.append(piece)
                    off += len(piece)
                    offs[p] = off
                    pos = p
                    k += 1
                pieces.append(b"".join(lst[pos + 1:b:_RL]))
                chunks.append(b"".join(pieces))
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
                vstart.append(addr); vsize.append(s)
                addr += s
        if addr - base > MAX_OUTPUT:
            raise SizeLimitError(f"the program is {addr - base:#x} bytes long, more than the limit of {MAX_OUTPUT:#x}")
        self._layout = (base, starts, vstart, vsize, addr, iterations, (base, len(self._lst)), chunks, offs)
        return self._layout

    def _referenced(self, lab: Label) -> bool:
        if lab.line: return True
        return any(v.__class__ is _Branch and v.target is lab for v in self._vars) or any(r[4] is lab for r in self._rip) \
            or any(lab in a[4] or lab in a[5] for a in self._abs)

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
                    try: out += form.encode(dest, ip=vstart[i])
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
        for ci, pos, off, size, plus, minus, addend, line in self._abs:
            value = sum(starts[x.chunk] + x.offset for x in plus) - sum(starts[x.chunk] + x.offset for x in minus) + addend
            if not -(1 << (8 * size - 1)) <= value < (1 << (8 * size)):
                raise self._err(line, f"value {fmt_int(value)} of {clip(_expr_text(plus, minus, addend), 120)} "
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

        from . import jit
        code = self.assemble()
        if not code: raise EncodeError("jit: the program is empty (no machine code to run)")
        return jit.compile(code, ctypes.c_int64 if restype is _INT64 else restype, argtypes, name=name)

    # ---- listing ------------------------------------------------------------------------------------

    def lines(self) -> list[tuple[int | None, bytes, str]]:
        """(address, bytes, Intel-syntax text) per instruction, data directive and label (address None for labels)."""
        code = self.assemble()
        base, starts, vstart, vsize = self._layout[:4]
        out: list[tuple[int | None, bytes, str]] = []
        # records hold their bytes, not their place: walk each chunk (a branch or alignment ends one) adding up lengths
        lst = self._lst
        ci, off = 0, 0
        for j in range(0, len(lst), _RL):
            kind, b = lst[j], lst[j + 1]
            a = starts[ci] + off
            off += len(b)
            if kind.__class__ is str:
                out.append((a, code[a - base:a - base + len(b)], _insn_text(kind, [x for x in lst[j + 2:j + _RL] if x is not None], b)))
            elif kind == _REC_VAR:
                i = lst[j + 2]
                ci, off = i + 1, 0
                v = self._vars[i]
                a = vstart[i]
                b = code[a - base:a - base + vsize[i]]
                if v.__class__ is _Branch: out.append((a, b, f"{v.mnemonic} {_target_text(v.target)}"))
                else:
                    args = [str(v.n)]
                    if v.fill is not None or v.max_skip is not None: args.append("" if v.fill is None else f"{v.fill:#x}")
                    if v.max_skip is not None: args.append(str(v.max_skip))
                    out.append((a, b, ".balign " + ", ".join(args)))
            elif kind == _REC_DATA:
                out.append((a, code[a - base:a - base + len(b)], _data_text(lst[j + 2], lst[j + 3])))
            else:
                out.append((None, b"", f"{lst[j + 2].name}:"))
        return out

    def listing(self, width: int = 10) -> str:
        """Address, bytes and Intel syntax per line; labels on lines of their own.

        At most ``width`` bytes per row: longer data and padding continue on following rows.
        """
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

    def __str__(self) -> str: return self.listing()

    def __repr__(self) -> str:
        return f"<Assembler {len(self._lst) // _RL} items, {len(self._vars)} branches/aligns, base {self.base:#x}>"


def _target_text(t) -> str:
    return t.name if t.__class__ is Label else f"{t:#x}"


def _insn_text(mn: str, ops: tuple, data: bytes = b"") -> str:
    if any(o.__class__ in _DECORATED or o.__class__ is Rounding for o in ops):   # AVX-512: {k1}, {1toN}, {rn-sae}
        return listed_decorated(mn, ops, data)
    return mn + (" " + ", ".join(format_operand(o) for o in ops) if ops else "")


def _expr_text(plus, minus, addend) -> str:
    s = "+".join(x.name for x in plus)
    for x in minus: s += f"-{x.name}"
    if addend or not s: s += (f"+{addend:#x}" if addend >= 0 else f"-{-addend:#x}") if s else f"{addend:#x}"
    return s


def _data_text(size: int, values: tuple) -> str:
    if size in (4, 8) and values and all(v.__class__ is float and math.isfinite(v) for v in values):
        # floats print as .float/.double (the text parser refuses floats in dd/dq, as GNU as does);
        # repr() round-trips every finite float exactly
        return (".float " if size == 4 else ".double ") + ", ".join(repr(v) for v in values)
    parts = []
    for v in values:
        c = v.__class__
        if c is int: parts.append(f"{v:#x}" if v >= 0 else f"-{-v:#x}")
        elif c is float: parts.append(_float_bits_text(size, v))   # mixed with ints or not finite: the stored bits
        elif c is str or c is bytes or c is bytearray:
            b = v.encode() if c is str else bytes(v)
            parts.append(", ".join(f"{x:#x}" for x in b) if any(x < 32 or x > 126 or x in b'"\\' for x in b)
                         else '"' + b.decode() + '"')
        elif c is Label: parts.append(v.name)
        else: parts.append(_expr_text(v.plus, v.minus, v.addend))
    return f"{_DATA_NAMES[size]} " + ", ".join(parts)


def _float_bits_text(size: int, v: float) -> str:
    return f"{struct.unpack('<I', struct.pack('<f', v))[0]:#x}" if size == 4 else f"{struct.unpack('<Q', struct.pack('<d', v))[0]:#x}"


class _Expr:
    """``label1 + label2 - label3 + 8`` in a data directive."""
    __slots__ = ("plus", "minus", "addend")

    def __init__(self, plus, minus, addend):
        self.plus, self.minus, self.addend = tuple(plus), tuple(minus), addend


# The plain (non-branch) methods by mnemonic, with their number of operands (-1: any), for the text parser.
_METHODS = {mn: (f, -1 if f.__code__.co_flags & 4 else f.__code__.co_argcount - 1)
            for mn in _PLAIN for f in [getattr(AsmMethods, _KEYWORD_METHODS.get(mn, mn), None)] if f is not None}

# Aliases (jz, cmovnz, setc, sal, movabs, …) share the canonical method.
for _alias, _canon in MNEMONIC_ALIASES.items():
    _m = _KEYWORD_METHODS.get(_canon, _canon)
    if _alias not in MNEMONICS and hasattr(AsmMethods, _m) and not hasattr(Assembler, _alias):
        setattr(Assembler, _alias, getattr(AsmMethods, _m))


# =====================================================================================================
# Intel-syntax programs
# =====================================================================================================

# Symbols as GNU as spells them: ASCII letters, digits, `_`, `.`, `$` (and `@` of `foo@plt`), not
# starting with a digit; `1:` … `1b`/`1f` are GNU's numeric local labels.
_LABEL_DEF = re.compile(r"\s*([A-Za-z_.$][\w.$@]*|[0-9]+)\s*:(?!:)", re.ASCII)
_IDENT = re.compile(r"[A-Za-z_.$][\w.$@]*$", re.ASCII)
_LOCAL_REF = re.compile(r"([0-9]+)([bf])$")
_FLOAT = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?|inf(?:inity)?|nan)", re.ASCII | re.I)
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_CHAR_CONST = re.compile(r"'(\\(?:[0-7]{1,3}|x[0-9a-fA-F]+|[^\n])|[^\\\n])'?")   # 'a', '\n', GNU's unclosed 'a'
_SQ_STRING = re.compile(r"'(?:[^'\\\n]|\\.)*'")   # db 'abc': a NASM string, no quote inside
_ANNOT = re.compile(r"\s*<[^<>]*>\s*$")           # objdump's `<func+0x10>` after a branch target
_SYM_BRACKET = re.compile(r"^(.*?)\[(.*)\]$")
_BRANCH_HINT = re.compile(r"^(?:short|near(?:\s+ptr)?)\s+", re.I)
# Far branches to an immediate segment:offset (SDM Vol.2 JMP/CALL "far", EA/9A: invalid in 64-bit mode): x86gen
# has no forms for them, and dropping `far` would give a near branch (`jmp far 0x10` was `eb 0e`). GNU as and
# llvm-mc refuse `jmp far 0x10`. Far branches through memory are rewritten before (`x86gen.text.far_memory`).
_FAR = re.compile(r"^(?:far\b|[0-9a-fx]+\s*:)", re.I)
_SIZE_WORD = re.compile(r"([A-Za-z_]\w*)\s+ptr\b", re.ASCII | re.I)
_IGNORED_DIRECTIVES = {
    ".intel_syntax", ".text", ".data", ".rodata", ".bss", ".section", ".globl", ".global", ".local", ".weak", ".hidden",
    ".type", ".size", ".file", ".ident", ".loc", ".cfi_startproc", ".cfi_endproc", ".cfi_def_cfa_offset", ".cfi_offset",
    ".cfi_def_cfa_register", ".cfi_def_cfa", ".cfi_restore", ".cfi_remember_state", ".cfi_restore_state", ".cfi_escape",
    ".cfi_sections", ".cfi_adjust_cfa_offset", ".cfi_rel_offset", ".cfi_register", ".cfi_signal_frame", ".cfi_personality",
    ".cfi_lsda", ".cfi_undefined", ".cfi_same_value", ".cfi_return_column", ".cfi_window_save", ".addrsig", ".addrsig_sym",
    ".code64", ".previous", ".popsection", ".pushsection", ".protected", ".internal", ".uleb128", ".sleb128", ".end", ".endbr",
}
_DATA_DIRECTIVES = {
    ".byte": 1, ".1byte": 1, "db": 1, ".short": 2, ".value": 2, ".word": 2, ".2byte": 2, ".hword": 2, "dw": 2,
    ".long": 4, ".int": 4, ".4byte": 4, "dd": 4, ".quad": 8, ".8byte": 8, "dq": 8,
}
_FLOAT_DIRECTIVES = {".float": 4, ".single": 4, ".double": 8}


_UNARY_OPS = re.compile(r"[\s+~-]*")


def _unary_int(s: str) -> int:
    """A number after unary operators, as GNU as reads a data value: ``~5`` is -6, ``--5`` is 5,
    ``-~97`` is 98 (`parse_int` takes one sign). Raises `AsmSyntaxError` if no number follows."""
    m = _UNARY_OPS.match(s)
    v = parse_int(s[m.end():])
    for op in reversed(m.group()):
        if op == "-": v = -v
        elif op == "~": v = ~v
    return v


def _split_args(s: str) -> list[str]:
    """Split at commas outside quotes."""
    if '"' not in s and "'" not in s: return [x.strip() for x in s.split(",")]
    out, cur, q = [], [], None
    i = 0
    while i < len(s):
        ch = s[i]
        if q:
            cur.append(ch)
            if ch == "\\" and i + 1 < len(s): cur.append(s[i + 1]); i += 1
            elif ch == q: q = None
        elif ch in "\"'": q = ch; cur.append(ch)
        elif ch == ",": out.append("".join(cur).strip()); cur = []
        else: cur.append(ch)
        i += 1
    out.append("".join(cur).strip())
    return out


def _unquote(s: str) -> bytes:
    """The bytes of a quoted string ``"…"`` (or ``'…'`` in db), UTF-8 with GNU as's escapes."""
    return unescape(s[1:-1], s)


def _float_value(s: str, size: int, d: str):
    """A ``.float``/``.double`` value: a float, or for a NaN its bits as GNU as and llvm-mc store them
    (every mantissa bit set: ``.float nan`` is 0x7fffffff, where Python's struct gives 0x7fc00000).
    Numbers beyond the format's range or nonzero ones that round to zero are refused (GNU as:
    "cannot create floating-point number")."""
    t = s.strip()
    if not _FLOAT.fullmatch(t): raise AsmSyntaxError(f"{d} expects floating-point numbers, got {clip(t)}")
    v = float(t)
    if v != v:
        bits = (1 << (8 * size - 1)) - 1
        return bits | (1 << (8 * size - 1)) if t[0] == "-" else bits
    fmt = "<f" if size == 4 else "<d"
    try: back = struct.unpack(fmt, struct.pack(fmt, v))[0]
    except OverflowError: back = math.inf
    underflow = back == 0 and any(c in "123456789" for c in t.lower().partition("e")[0])   # 1e-400 is 0.0 already
    if (math.isinf(back) and "inf" not in t.lower()) or underflow:
        raise AsmSyntaxError(f"{d} {clip(t)}: out of the range of a {8 * size}-bit float")
    return v


class _Parser:
    """Reads program text into an `Assembler`, one line at a time."""

    def __init__(self, asm: Assembler):
        self.a = asm
        self.local_back: dict[str, Label] = {}   # GNU numeric labels: `1:` … `jmp 1b` / `jne 1f`
        self.local_fwd: dict[str, Label] = {}
        self.nlocal = 0
        self.section_fill: int | None = None     # None: NOP padding (code); 0 in data sections
        self.target: str | None = None           # the text of the last branch operand that named a label

    # -- labels --

    def define(self, name: str) -> None:
        a = self.a
        if name.isdigit():
            lab = self.local_fwd.pop(name, None) or a.label(f".Llocal{name}_{self._n()}")
            self.local_back[name] = lab
            a.bind(lab)
        else:
            lab = a._named.get(name)
            if lab is not None and lab.bound:
                raise AsmSyntaxError(f"label {clip(name)} is already defined")
            a.bind(a.get_label(name))

    def _n(self) -> int:
        self.nlocal += 1
        return self.nlocal

    def ref(self, name: str) -> Label:
        m = _LOCAL_REF.match(name)
        if m:
            n, d = m.groups()
            if d == "b":
                lab = self.local_back.get(n)
                if lab is None: raise AsmSyntaxError(f"{clip(name)}: no label {n}: before this line")
                return lab
            lab = self.local_fwd.get(n)
            if lab is None:
                lab = self.a.label(f".Llocal{n}_{self._n()}")
                lab.line = self.a.line
                self.local_fwd[n] = lab
            return lab
        lab = self.a.get_label(name)
        if lab.line == 0: lab.line = self.a.line
        return lab

    # -- lines --

    def line(self, raw: str):
        """Parse one line into the Assembler. Returns what `parse_program` may do instead for the same
        text later (see `_LINE_CACHE`), or None if that needs a parse again."""
        if "\t" in raw: raw = raw.replace("\t", " ")     # compilers separate with tabs
        if ":" not in raw and "." not in raw and '"' not in raw and "'" not in raw:
            # a plain instruction (the common line): text's cached parser, then the assembler
            try: mn, ops = parse_text_line(raw)
            except AsmSyntaxError: pass          # a label operand, `short`, …: the full path below
            else:
                if not mn: return _skip
                if ops and ops[-1].__class__ is Decorations: return self.decorated(mn, ops)   # {rn-sae}, {1to16}
                if mn in _PLAIN: return self.plain(mn, ops)
                if mn not in _DATA_DIRECTIVES and mn != "align" and (mn in MNEMONICS or pseudo_op(mn, ()) is None):
                    if MNEMONIC_ALIASES.get(mn) in _PLAIN: return self.plain(mn, ops)
                    return self.a.emit(mn, *ops)
        if _LEXED.search(raw) is None: return self.statement(raw.strip())   # no comment, `;` or quote: as it is
        stmts = split_statements(raw)
        if len(stmts) > 1:                           # `xor eax, eax; ret`: each statement, the line not kept
            for st in stmts: self.statement(st.strip())
            return None
        return self.statement(stmts[0].strip() if stmts else "")

    def statement(self, s: str):
        """One statement (comments removed, stripped): label definitions, then a directive or an
        instruction. Returns what `line` returns."""
        labels: list[str] = []
        while s:
            m = _LABEL_DEF.match(s)
            if not m: break
            self.define(m.group(1))
            labels.append(m.group(1))
            s = s[m.end():].strip()
        if not s: return _Define(labels[0]) if len(labels) == 1 else _skip if not labels else None
        parts = s.split(None, 1)
        head = parts[0]
        rest = parts[1].strip() if len(parts) > 1 else ""
        low = head.lower()
        if rest[:1] == "=" and rest[1:2] != "=":
            raise AsmSyntaxError("symbol assignments (`=`, .set, .equ) are not supported")
        if low.startswith(".") or low in _DATA_DIRECTIVES or low == "align":
            self.directive(low, rest)
            return _Directive(low, rest) if not labels else None
        branch_to = self.instruction(low, rest)
        return _BranchTo(low, branch_to) if branch_to is not None and not labels else None

    def decorated(self, mn: str, ops: tuple) -> None:
        """Append an instruction whose operands end with `x86gen._evex_text.Decorations`: its rounding as ``rc=``, in
        the form its ``{1toN}`` names where that is not the one the operands choose (`decorated_form`)."""
        ops, deco = split_decorations(ops)
        kw = {} if deco.rc is None else {"rc": deco.rc}
        form = decorated_form(mn, ops, deco)
        if form is None: self.a.emit(mn, *ops, **kw)
        else: self.a.emit_form(form, *ops, **kw)

    def plain(self, mn: str, ops: tuple):
        """Append an instruction without label operands; its listing record (which holds its bytes) is
        what a later identical line appends."""
        a = self.a
        n0, r0 = len(a._lst), len(a._rip)
        m = _METHODS.get(mn)
        if m is not None and (m[1] < 0 or m[1] == len(ops)): m[0](a, *ops)   # the generated method's fast path
        else: a._emit(mn, ops)
        return tuple(a._lst[n0:]) if len(a._rip) == r0 and len(a._lst) == n0 + _RL else None

    def directive(self, d: str, rest: str) -> None:
        a = self.a
        if d in _DATA_DIRECTIVES:
            size = _DATA_DIRECTIVES[d]
            vals = [self.data_value(x, size, d) for x in _split_args(rest)] if rest else []
            return a._data(size, tuple(vals))
        if d in _FLOAT_DIRECTIVES:
            size = _FLOAT_DIRECTIVES[d]
            return a._data(size, tuple(_float_value(x, size, d) for x in _split_args(rest)))
        if d in (".ascii", ".asciz", ".string"):
            out = b""
            for x in _split_args(rest):
                strings = _STRINGS.findall(x)          # GNU as: `"a" "b"` (no comma) is one string "ab"
                if not strings or _STRINGS.sub("", x).strip():
                    raise AsmSyntaxError(f"{d} expects quoted strings, got {clip(x)}")
                out += b"".join(_unquote(q) for q in strings) + (b"\0" if d != ".ascii" else b"")
            return a._data(1, (out,))
        if d in (".zero", ".skip", ".space"):
            args = _split_args(rest)
            if len(args) > 2: raise AsmSyntaxError(f"{d} takes a size and a fill byte")
            n = self.count_arg(args[0], d, "a size")
            fill = self.int_arg(args[1], d) if len(args) > 1 else 0
            if not -0x80 <= fill <= 0xFF: raise AsmSyntaxError(f"{d}: the fill value {clip(args[1])} does not fit in a byte")
            return a.zero(n, fill & 0xFF)
        if d in (".align", ".balign", ".p2align", "align"):
            args = _split_args(rest) if rest else []
            if not args or not args[0]: raise AsmSyntaxError(f"{d} expects an alignment")
            n = self.count_arg(args[0], d, "an alignment")
            if d == ".p2align":
                if n > 63: raise AsmSyntaxError(f".p2align {clip(args[0])}: at most 63 (2**63 bytes)")
                n = 1 << n
            fill = self.int_arg(args[1], d) if len(args) > 1 and args[1] else self.section_fill
            mx = self.int_arg(args[2], d) if len(args) > 2 and args[2] else None
            if mx is not None and mx <= 0: mx = None   # GNU as: a max-skip of 0 (or below) is no limit, not "never pad"
            return a.align(n, fill, mx)
        if d == ".intel_syntax":
            if rest and rest.lower() != "noprefix": raise AsmSyntaxError(".intel_syntax: only `noprefix` is supported")
            return
        if d == ".att_syntax": raise AsmSyntaxError("AT&T syntax is not supported (write Intel syntax, .intel_syntax noprefix)")
        if d in (".text",): self.section_fill = None; return
        if d in (".data", ".bss", ".rodata"): self.section_fill = 0; return
        if d in (".section", ".pushsection"):
            name = rest.split(",")[0].strip().strip('"')
            self.section_fill = None if name.startswith(".text") else 0
            return
        if d in _IGNORED_DIRECTIVES or d.startswith(".cfi_"): return
        if d in (".set", ".equ", ".equiv"): raise AsmSyntaxError(f"{d} (symbol definitions) is not supported")
        raise AsmSyntaxError(f"unknown directive {clip(d)} (expected an instruction, a label, or one of .byte .short .long .quad "
                             ".float .double .ascii .asciz .zero .align .p2align .balign .text .data .section .globl .type .size)")

    def int_arg(self, s: str, d: str) -> int:
        try: return parse_int(s)
        except ValueError: raise AsmSyntaxError(f"{d}: expected a number, got {clip(s.strip())}") from None

    def count_arg(self, s: str, d: str, what: str) -> int:
        """A directive's size or alignment: an integer ≥ 0 (GNU as: `.p2align -1` is 2**63, `.zero -1` nothing)."""
        n = self.int_arg(s, d)
        if n < 0: raise AsmSyntaxError(f"{d}: {what} cannot be negative, got {clip(s.strip())}")
        return n

    def data_value(self, s: str, size: int, d: str):
        if not s: raise AsmSyntaxError("empty value in data directive")
        if s[0] == "'" and _CHAR_CONST.fullmatch(s): return char_value(s, s)   # .long 'a' is 97 (GNU as)
        if s[0] == '"' or (s[0] == "'" and size == 1 and _SQ_STRING.fullmatch(s)):   # db 'abc' (NASM)
            if size != 1 or len(s) < 2 or s[-1] != s[0]: raise AsmSyntaxError(f"bad string {clip(s)} (strings go in db/.ascii)")
            return _unquote(s)
        if "'" in s:
            # character constants in an expression are numbers (GNU as): `-'h'` is -104, `'a'+'b'` 195
            t = _CHAR_CONST.sub(lambda m: f" {char_value(m.group(), s)} ", s)   # spaced: `'a''b'` is no 9798
            try:
                if "'" in t: raise AsmSyntaxError(s)     # `'ab'` in .long: no character constant
                return self.data_value(t, size, d)
            except ImmediateRangeError: raise ImmediateRangeError(f"{clip(s)} does not fit in {8 * size} bits") from None
            except AsmSyntaxError:
                raise AsmSyntaxError(f"cannot parse {clip(s)} (expected a number, a character constant, a label, "
                                     "or label±number)") from None
        try: v = _unary_int(s) if s[0] in "+-~" else parse_int(s)
        except ValueError: pass
        else:
            if not -(1 << (8 * size - 1)) <= v < 1 << (8 * size):
                raise ImmediateRangeError(f"{clip(s)} does not fit in {8 * size} bits")
            return v
        if _FLOAT.fullmatch(s):
            # NASM's dd/dq take floats (`dd 1.5` is float32 1.5; the Assembler's listing prints them so);
            # GNU as and llvm-mc refuse `.long 1.5`: storing float bits there would be a guess.
            if d in ("dd", "dq"): return _float_value(s, size, d)
            raise AsmSyntaxError(f"{clip(s)} is a floating-point number in an integer directive (floats go in .float/.double)")
        return self.expr(s)

    def expr(self, s: str):
        """``label``, ``label+8``, ``.L4-.L3`` (labels and ints, + and -)."""
        plus, minus, addend = [], [], 0
        for sign, term in signed_terms(s, s):
            try:
                v = parse_int(term)
                addend += -v if sign == "-" else v
                continue
            except ValueError: pass
            if term.lower() in UNSUPPORTED_REGISTERS or not term.isascii(): raise unknown_word(term, s)
            if not (_IDENT.match(term) or _LOCAL_REF.match(term)):
                raise AsmSyntaxError(f"cannot parse {clip(s)} (expected a number, a label or label±number)")
            (minus if sign == "-" else plus).append(self.ref(term))
        if not plus and not minus: return addend
        if len(plus) == 1 and not minus and not addend: return plus[0]
        return _Expr(plus, minus, addend)

    def instruction(self, mn: str, rest: str) -> str | None:
        """Parse and append an instruction; returns the label name of a branch whose operand is just that."""
        if mn == EVEX_PREFIX:   # `{evex} vaddps …`: the EVEX forms only (x86gen.encoder.candidates)
            mn2, _, rest2 = rest.strip().partition(" ")
            mn2 = mn2.lower()
            if not mn2 or mn2.startswith("{") or mn2 in _PREFIXES:
                raise AsmSyntaxError(f"{EVEX_PREFIX} must precede a mnemonic, not {clip(mn2) or 'nothing'}")
            return self.instruction(EVEX_PREFIX + mn2, rest2.strip())
        words = ""
        if mn in PREFIX_WORDS:   # lock, rep, {vex}, {vex3}, objdump's `ss` …: kept as words of the mnemonic (x86gen.prefixes)
            mn, rest = prefix_words(mn, rest)
            words, _, mn = mn.rpartition(" ")
        if mn in _PREFIXES or mn == "ret":   # iced-x86's `data16 push 5`, `ret far` (x86gen.text.iced_sized)
            sized = iced_sized(mn, rest)
            if sized is not None: mn, rest = sized
            elif mn != "ret": raise AsmSyntaxError(f"instruction prefix {clip(mn)} is not supported")
        far = far_memory(mn, rest)   # `jmp far ptr [rax]`, `ljmp [rax]` (x86gen.text.far_memory)
        if far is not None: mn, rest = far
        if mn in _FAR_MNEMONICS: raise UnknownMnemonicError(f"{mn}: far branches are not supported by x86gen")
        branch = canonical(mn) in BRANCH_MNEMONICS
        self.target = None
        deco = None
        if not branch and has_decorations(rest):   # AVX-512 {k1}, {z}, {1to16}, {rn-sae}, objdump's bcst
            ops, deco = split_decorations(parse_decorated(mn, _split_args(rest), lambda t: self.operand(t, False)))
        else: ops = tuple(self.operand(t, branch) for t in _split_args(rest)) if rest else ()
        if branch and len(ops) == 1 and self.target is not None:   # `jne .L3`, `jmp 1f`
            self.a.emit(f"{words} {mn}" if words else mn, *ops)
            return None if words else self.target   # (`data16 jmp 1f`: parsed again each time, not cached by `low`)
        mn, ops = shorthand(mn, ops)
        if mn not in MNEMONICS:    # vcmpltps x, y, z = vcmpps x, y, z, 1; pclmulhqlqdq (objdump, iced)
            alt = pseudo_op(mn, ops)
            if alt is not None: mn, ops = alt
        if deco is not None: return self.decorated(f"{words} {mn}" if words else mn, (*ops, deco))
        self.a.emit(f"{words} {mn}" if words else mn, *ops)

    def operand(self, t: str, branch: bool):
        if not t: raise AsmSyntaxError("empty operand (expected register, memory, immediate or label)")
        if "'" in t: t = _CHAR_CONST.sub(lambda m: str(char_value(m.group(), t)), t)   # 'a' is 97, before case folds
        low = t.lower()
        if branch:
            if _FAR.match(low):
                raise AsmSyntaxError(f"far branch {clip(t)}: a far branch to an immediate segment:offset is invalid in 64-bit"
                                     " mode (SDM Vol.2 JMP/CALL); far branches go through memory: jmp fword ptr [rax]")
            low = _BRANCH_HINT.sub("", low)
            t = _BRANCH_HINT.sub("", t)
            if "<" in low:                        # objdump: `jmp 1a <f+0x1a>` (hex without 0x in object files)
                m = _ANNOT.search(t)
                if m:
                    t = t[:m.start()].strip(); low = t.lower()
                    if re.fullmatch(r"[0-9a-f]+", low): return int(low, 16)
        if branch and low not in _REGS and low not in UNSUPPORTED_REGISTERS and (_IDENT.match(t) or _LOCAL_REF.match(t)):
            # a label: no operand parse
            self.target = t
            return self.ref(t)
        try:
            return parse_operand(low)
        except AsmSyntaxError:
            pass
        if branch:
            if _IDENT.match(t) or _LOCAL_REF.match(t): return self.ref(t)
            if not t.isascii(): raise unknown_word(t, t)
            if "[" in t: return self.label_mem(t)     # `jmp qword ptr [rip+T]`: indirect, through memory at label T
            raise AsmSyntaxError(f"bad branch target {clip(t)} (expected a label, an address or a register/memory operand)")
        m = _SIZE_WORD.match(t)
        if m and m.group(1).lower() not in SIZE_BITS:
            raise AsmSyntaxError(f"unknown size keyword {clip(m.group(1))} in {clip(t)} (expected "
                                 f"{', '.join(sorted(SIZE_BITS, key=SIZE_BITS.get))} ptr)")
        if "[" in t or _IDENT.match(t.split()[-1] if t.split() else ""):
            return self.label_mem(t)
        if "0" <= t[:1] <= "9": parse_int(t)          # a number or its error
        if not t.isascii(): raise unknown_word(t, t)
        raise AsmSyntaxError(f"unknown operand {clip(t)} (expected a register, memory [base+index*scale+disp], an immediate, "
                             "or a label in a branch or in [rip+label])")

    def label_mem(self, t: str) -> Mem:
        """A memory operand naming a label: ``[rip+name]``, ``qword ptr [rip+name+8]``, GCC's ``.LC0[rip]``."""
        low = t.strip()
        size_txt = ""
        seg = None
        m = _SIZE_PREFIX.match(low.lower())
        if m:
            size_txt = m.group(1) + " ptr "
            low = low[len(low) - len(m.group(2)):].strip()
        m = _SYM_BRACKET.match(low)
        if m:
            outside, inner = m.group(1).strip(), m.group(2)
            seg_m = _SEGMENT_WORD.match(outside.lower())
            if seg_m: seg, outside = seg_m.group(1), outside[seg_m.end():].strip()
        elif _IDENT.match(low):
            outside, inner = low, ""       # `qword ptr label`: RIP-relative, as GNU as reads it in 64-bit code
        else:
            raise AsmSyntaxError(f"cannot parse memory operand {clip(t)}")
        terms = signed_terms(outside + ("+" if outside and inner else "") + inner, t)
        sym, rest = None, []
        for sign, term in terms:
            if term.lower() in _REGS or "*" in term or _INT.fullmatch(term):
                rest.append(sign + term.lower())
            elif term.lower() in UNSUPPORTED_REGISTERS: raise unknown_word(term, t)
            elif _IDENT.match(term) or _LOCAL_REF.match(term):
                if sym is not None: raise AsmSyntaxError(f"two labels in memory operand {clip(t)}")
                if sign == "-": raise AsmSyntaxError(f"a label cannot be subtracted in memory operand {clip(t)}")
                sym = term
            else:
                raise unknown_word(term, t)
        if sym is None: raise AsmSyntaxError(f"cannot parse memory operand {clip(t)}")
        rest = [x for x in rest if x.lstrip("+") != "rip"]   # [rip+x+8] is [x+8]; the addend alone may exceed disp32
        inner_txt = "+".join(x.lstrip("+") if x[0] != "-" else x for x in rest).replace("+-", "-") or "0"
        base = parse_operand(f"{size_txt}[{inner_txt}]")
        if base.base is not None or base.index is not None:
            raise AsmSyntaxError(f"a label in a memory operand must be RIP-relative ([rip+{sym}]), got {clip(t)}")
        m = Mem(_RIP, None, 1, base.disp, base.size, label=self.ref(sym))
        return m if seg in (None, "ds") else m.with_segment(seg)   # ds: the segment of [rip+x] anyway (no byte)


_SEGMENT_WORD = re.compile(r"(es|cs|ss|ds|fs|gs)\s*:")

# Per source line (its exact text), what parsing it did, to do again without parsing: the record of an
# instruction without labels (mnemonic, bytes, operands: its bytes depend on the text alone), or
# a callable taking the parser for label definitions, branches to labels, directives and blank lines.
_LINE_CACHE: dict[str, object] = {}
_LINE_CACHE_MAX = 1 << 16   # entries (~250 bytes each with their records)


def _skip(p: _Parser) -> None: return None


class _Define:
    __slots__ = ("name",)
    def __init__(self, name: str): self.name = name
    def __call__(self, p: _Parser) -> None: p.define(self.name)


class _Directive:
    __slots__ = ("d", "rest")
    def __init__(self, d: str, rest: str): self.d, self.rest = d, rest
    def __call__(self, p: _Parser) -> None: p.directive(self.d, self.rest)


class _BranchTo:
    """``jne .L3``: the label is looked up again each time (``1f`` means the next ``1:``)."""
    __slots__ = ("mn", "target")
    def __init__(self, mn: str, target: str): self.mn, self.target = mn, target
    def __call__(self, p: _Parser) -> None: p.a.emit(self.mn, p.ref(self.target))


# A line that may be more than one plain instruction: a label or directive (``:``, ``.``), a comment,
# a quoted string (all of which the full parser handles).
_NOT_PLAIN = re.compile(r"[:.#;/\"']")


def _plain_record(raw: str):
    """The listing record of ``raw`` if it is one plain instruction whose operand signature has been
    met before (the common line of a program): parsed and encoded here without the general parser's
    layers. None sends the line to `_Parser.line`, which handles everything else and reports errors."""
    if _NOT_PLAIN.search(raw) is not None: return None
    s = raw.lower().strip()
    if "\t" in s: s = s.replace("\t", " ")   # compilers separate with tabs
    sp = s.find(" ")
    if sp < 0: mn, toks = s, ()
    else: mn, toks = s[:sp], s[sp + 1:].split(",")
    ops, key = [], [mn]
    for t in toks:
        v = _OPERANDS.get(t)
        if v is None:
            try: v = parse_operand(t)
            except EncodeError: return None
        ops.append(v)
        key.append("i" if v.__class__ is int else v.sig)
    if mn in SHORTHANDS:
        mn, ops = SHORTHANDS[mn](mn, tuple(ops))
        key = [mn, *["i" if x.__class__ is int else x.sig for x in ops]]
    plan = _FLAT.get(tuple(key))
    if plan is None: return None
    try: out = plan(*ops)
    except (EncodeError, LabelOperand): return None
    return (mn, out, *ops, *_PAD[len(ops)])


def parse_program(text: str, base: int = 0, asm: Assembler | None = None) -> Assembler:
    """Parse an Intel-syntax program into an `Assembler` (not yet assembled).

    Errors are `AsmSyntaxError` (or other `EncodeError`\\ s) naming the line number, the line and what
    was expected.
    """
    a = Assembler(base) if asm is None else asm
    p = _Parser(a)
    a.source = lines = text.splitlines()
    if "/*" in text: lines = strip_block_comments(text).splitlines()   # same line numbers, comments gone
    cache, lst = _LINE_CACHE, a._lst
    n = 0
    for raw in lines:
        n += 1
        hit = cache.get(raw)
        if hit.__class__ is tuple:   # an instruction line met before: append its record, which holds its bytes
            lst += hit
            continue
        if hit is None:
            hit = _plain_record(raw)
            if hit is not None:
                if len(cache) >= _LINE_CACHE_MAX: cache.clear()
                cache[raw] = hit
                lst += hit
                continue
        a.line = n
        try:
            if hit is not None: hit(p)     # a label, branch or directive line met before: parsed already
            else:
                hit = p.line(raw)
                if hit is not None:
                    if len(cache) >= _LINE_CACHE_MAX: cache.clear()   # bounded: start again rather than keep the oldest
                    cache[raw] = hit
        except EncodeError as ex:
            raise type(ex)(f"line {n}: {clip(raw.strip())}: {ex}") from None
    a.line = 0
    if p.local_fwd:
        name = next(iter(p.local_fwd))
        line = p.local_fwd[name].line
        raise AsmSyntaxError(f"line {line}: {clip(a.source[line - 1].strip())}: no label `{name}:` after this reference to {name}f")
    return a


def assemble_program(text: str, ip: int = 0) -> bytes:
    """Assemble a whole Intel-syntax program (labels, directives, comments) starting at address ``ip``."""
    return parse_program(text, ip).assemble()
