"""Programs with sections and symbols into ELF64 relocatable objects: `assemble_object` (``x86gen asm -f f.s -o f.o``).

The program text is read as `x86gen.program_text` reads it, with one `ObjectAssembler` per section:

- **sections**: ``.text``, ``.data``, ``.bss`` (always written, as GNU as writes them), ``.rodata``, ``.section name,
  "flags", @type[, entsize]`` (flags ``a w x M S T R e``; types progbits, nobits, note, init_array, fini_array,
  preinit_array), ``.pushsection``/``.popsection``, ``.previous``. A section's labels belong to it; ``.align`` pads
  with NOPs in an executable section and zeros elsewhere; the section's ``sh_addralign`` is its largest alignment.
- **symbols**: labels (``.L…`` labels are not written, as GNU as drops them, unless a relocation in a mergeable section
  needs them), ``.globl``/``.global``, ``.weak``, ``.local``, ``.hidden``/``.protected``/``.internal``, ``.type``
  (function, object, notype, tls_object, common), ``.size sym, expr``, ``.comm``, ``.lcomm`` (laid out after the rest of
  ``.bss``, as GNU as's bss subsection 1), ``.set``/``.equ``/``=`` with a constant (an ``SHN_ABS`` symbol) or a label
  plus or minus a constant (a symbol where the label is; its references are the label's); undefined symbols are global.
- **relocations**, as GNU as 2.40 chooses them: a branch to a symbol of another section, an undefined, weak or global
  symbol (a call to a global one too; a jmp/jcc to a global one of its own section is resolved and relaxed, as GNU
  as does outside ``-shared``) is a rel32 with ``R_X86_64_PLT32`` (``R_X86_64_PC32`` against the section symbol for a
  local label of another section); ``[rip+sym]`` is ``R_X86_64_PC32`` (addend -4 less any immediate after the
  displacement) unless ``sym`` is a local label of its own section; ``sym@GOTPCREL[rip]`` is ``R_X86_64_REX_GOTPCRELX``,
  ``R_X86_64_GOTPCRELX`` (mov, test, the ALU ops' load forms, call/jmp through memory) or ``R_X86_64_GOTPCREL``;
  ``call sym@PLT`` is ``R_X86_64_PLT32``; data (``.quad``/``.long``/``.short``/``.byte``) is ``R_X86_64_64``/``32``/
  ``16``/``8``, or ``PC64``/``PC32``/``PC16``/``PC8`` for ``sym - .`` and ``sym - label`` with the label in the data's
  section; ``offset sym`` / ``OFFSET FLAT:sym`` as an immediate is ``R_X86_64_32``, ``R_X86_64_32S`` (a sign-extended
  imm32) or ``R_X86_64_64`` (movabs); a label in a memory operand without rip (``tab[0+rax*8]``, ``[8*rax+.LJTI0_0]``,
  ``dword ptr sym``) is ``R_X86_64_32S`` (its absolute address in the disp32). A local label is relocated as its
  section symbol plus its offset. A difference of labels of one section is a constant.

``.ident "text"`` writes the text to section ``.comment``, as GNU as does. Accepted and dropped (they make no byte of
code or data): ``.file``, ``.loc``, ``.cfi_*``, ``.addrsig``,
``.addrsig_sym`` (so no ``.eh_frame``, no debug line table, no ``STT_FILE`` symbol). Not supported (an error): section
groups (``G``, comdat), ``.symver``, TLS and GOT modifiers other than ``@GOTPCREL`` and ``@PLT``.
"""
from __future__ import annotations

import re

from ._gen.asm_methods import BRANCH_MNEMONICS
from .assembler import Assembler, Label, LabelPlus, _Branch, _label_mem, unlabeled
from .elf import R_X86_64, SHF, SHN_ABS, SHN_COMMON, SHN_UNDEF, SHT, STB, STT, STV, ObjSection, ObjSymbol, Rela, write_object
from .encoder import encode, select
from .errors import AsmSyntaxError, EncodeError, ImmediateRangeError, LabelError, OperandError, clip, wrong_type
from .program_text import _IDENT, _NAME, _Parser, _split_args
from .syntax import Relocatable, evaluate, strip_block_comments, unescape

__all__ = ["assemble_object", "parse_object", "ObjectAssembler", "ObjectProgram"]

_OFFSET = re.compile(r"\s*offset\s+(?:flat\s*:\s*)?(.+)$", re.I | re.S)
_MODIFIERS = {"plt": "PLT32", "gotpcrel": "GOTPCREL"}
_TYPES = {"function": "func", "object": "object", "notype": "notype", "tls_object": "tls", "common": "common"}
_DROPPED = {".file", ".loc", ".addrsig", ".addrsig_sym", ".loc_mark_labels"}   # (and .cfi_*)


class SymImm:
    """``offset sym+4`` as an immediate: labels added and subtracted, and a constant (relocated at output)."""
    __slots__ = ("plus", "minus", "addend")
    sig = "i"

    def __init__(self, plus: tuple, minus: tuple, addend: int):
        self.plus, self.minus, self.addend = plus, minus, addend

    def __repr__(self) -> str: return f"SymImm({[x.name for x in self.plus]}, {[x.name for x in self.minus]}, {self.addend})"


class ObjectAssembler(Assembler):
    """The `x86gen.Assembler` of one section of an object: its base is 0, ``.align`` pads with zeros outside code, an
    immediate may name symbols (`SymImm`), and `relocatable` lays it out leaving the references it cannot resolve to
    relocations."""

    __slots__ = ("section", "max_align", "_imm")

    def __init__(self, section: Section):
        super().__init__(0)
        self.section = section
        self.max_align = 1
        self._imm: list[tuple] = []   # (chunk, item position, offset in it, size, plus, minus, addend, line, signed)

    @property
    def executable(self) -> bool:
        """Whether the section holds code (flag ``x``): its ``.p2align 4, 0x90`` pads with NOPs, as GNU as pads it."""
        return bool(self.section.flags & SHF["x"])

    def align(self, n: int, fill: int | None = None, max_skip: int | None = None) -> None:
        """As `Assembler.align`; zeros (not NOPs) where the section is not executable; raises the section's alignment."""
        if fill is None and not self.section.flags & SHF["x"]: fill = 0
        super().align(n, fill, max_skip)
        self.max_align = max(self.max_align, n)

    def emit(self, mnemonic: str, *ops, rc: int | None = None) -> None:
        """As `Assembler.emit`; an immediate operand that names symbols (`SymImm`) is encoded as an imm32 (or movabs's
        imm64) of 0, its relocation kept."""
        k = next((i for i, x in enumerate(ops) if x.__class__ is SymImm), -1)
        if k < 0: return super().emit(mnemonic, *ops, rc=rc)
        mn = mnemonic.lower()
        if any(x.__class__ is SymImm for x in ops[k + 1:]): raise OperandError(f"{mn}: two immediates that name symbols")
        if canonical_branch(mn): raise OperandError(f"{mn}: `offset symbol` is not a branch target (write the symbol alone)")
        plain = (*ops[:k], 0x12345678, *ops[k + 1:])   # an imm32 (a sign-extended one where the operand is 64-bit)
        j = next((i for i, x in enumerate(plain) if _label_mem(x) is not None), -1)   # `mov [rip+x], offset .LC0`
        if j >= 0: plain = tuple(map(unlabeled, plain))
        b = encode(mn, *plain)
        form = select(mn, *plain)
        widths = form.imm_widths
        if len(widths) != 1 or form.is4:
            raise OperandError(f"{mn}: an immediate that names a symbol goes in an instruction with one immediate")
        size = widths[0] // 8
        if size < 4: raise OperandError(f"{mn}: a symbol's address does not go in a {widths[0]}-bit immediate")
        signed = "simm" in str(form.operands[k]).split(":")[-1]
        b = b[:len(b) - size] + bytes(size)
        e = ops[k]
        for lab in (*e.plus, *e.minus):
            if lab.line == 0: lab.line = self.line
        if j >= 0:
            mem = _label_mem(ops[j])
            lab = mem.label if mem.label.__class__ is not str else self.get_label(mem.label)
            b = self._label_fixup(mn, mem, lab, b, len(b) - size - 4)
        self._imm.append((len(self._vars), len(self._code), len(b) - size, size, e.plus, e.minus, e.addend, self.line, signed))
        self._add(b, mn, plain)
        self._layout = None

    def relocatable(self, keeps) -> tuple[bytearray, list[tuple]]:
        """The section's bytes, and what it leaves to relocations: ``(offset, kind, size, plus, minus, addend, line,
        extra)`` with kind ``"branch"`` (``extra``: the mnemonic), ``"rip"`` (``extra``: the instruction's bytes and the
        displacement's offset in them), ``"data"`` or ``"imm"`` (``extra``: whether a 32-bit immediate is sign-extended).
        ``keeps(label, kind, mnemonic)`` says whether a reference to ``label`` is resolved here: a branch or ``[rip+x]``
        to a label of this section (data and immediates are always relocations, unless they are a constant)."""
        pending = []
        moved = []   # (var index, label, addend)
        for i, v in enumerate(self._vars):
            if v.__class__ is not _Branch: continue
            t = v.target
            lab = t.label if t.__class__ is LabelPlus else t
            if lab.__class__ is not Label or keeps(lab, "branch", v.mnemonic): continue
            v.choices = v.choices[-1:]   # rel32: a relocation's field
            v.target = 0
            moved.append((i, lab, t.addend if t.__class__ is LabelPlus else 0, v.line, v.mnemonic))
        rips = [r for r in self._rip if not keeps(r[4], "rip", None)]
        self._rip = [r for r in self._rip if keeps(r[4], "rip", None)]
        absolute, self._abs = self._abs, []
        referenced = {r[4] for r in self._rip}
        for v in self._vars:
            if v.__class__ is _Branch and v.target.__class__ is not int:
                referenced.add(v.target.label if v.target.__class__ is LabelPlus else v.target)
        # labels of other sections (or none) stay unbound here: not this Assembler's to lay out
        self._labels = [x for x in self._labels if x.chunk >= 0 or x in referenced]
        out = bytearray(self.assemble())   # (code alignment: GNU as's NOPs, `x86gen.assembler.nop_fill`)
        base, starts, vstart, vsize = self._layout[:4]
        addr = self._item_addresses()
        for i, lab, addend, line, mn in moved:
            at = vstart[i] + vsize[i] - 4
            out[at:at + 4] = bytes(4)
            pending.append((at, "branch", 4, (lab,), (), addend, line, mn))
        for _ci, pos, doff, length, lab, addend, line in rips:
            at = addr[pos] + doff
            pending.append((at, "rip", 4, (lab,), (), addend - (length - doff), line, (self._code[pos], doff)))
        for _ci, pos, off, size, plus, minus, addend, line, signed in absolute:   # (signed: `table[rax*8]`'s disp32)
            pending.append((addr[pos] + off, "imm" if signed else "data", size, plus, minus, addend, line, signed))
        for _ci, pos, off, size, plus, minus, addend, line, signed in self._imm:
            pending.append((addr[pos] + off, "imm", size, plus, minus, addend, line, signed))
        return out, pending

    def _item_addresses(self) -> list[int]:
        """The address of each item of `_code` in the last layout."""
        _base, starts, vstart = self._layout[:3]
        out, vi, ci, off = [], 0, 0, 0
        vpos, nv = self._vpos, len(self._vpos)
        for j, b in enumerate(self._code):
            if vi < nv and j == vpos[vi]:
                out.append(vstart[vi])
                vi += 1
                ci, off = vi, 0
                continue
            out.append(starts[ci] + off)
            off += len(b)
        return out


def canonical_branch(mn: str) -> bool:
    """Whether ``mn`` is a branch mnemonic (jmp, jcc, call, loop, …)."""
    from .selection.request import canonical
    return canonical(mn) in BRANCH_MNEMONICS


# section attributes by name where `.section` gives none (GNU as's special sections)
def _default_attrs(name: str) -> tuple[int, int, int]:
    """(sh_type, flags, entsize) of section ``name`` when its directive gives no flags."""
    def under(*prefixes): return any(name == p or name.startswith(p + ".") for p in prefixes)
    if under(".text", ".init", ".fini"): return SHT["progbits"], SHF["a"] | SHF["x"], 0
    if under(".data", ".data1"): return SHT["progbits"], SHF["a"] | SHF["w"], 0
    if under(".rodata", ".rodata1"): return SHT["progbits"], SHF["a"], 0
    if under(".bss"): return SHT["nobits"], SHF["a"] | SHF["w"], 0
    if under(".tdata"): return SHT["progbits"], SHF["a"] | SHF["w"] | SHF["T"], 0
    if under(".tbss"): return SHT["nobits"], SHF["a"] | SHF["w"] | SHF["T"], 0
    for t in ("init_array", "fini_array", "preinit_array"):
        if under("." + t): return SHT[t], SHF["a"] | SHF["w"], 8
    if name.startswith(".note"): return SHT["note"], 0, 0
    if name == ".comment": return SHT["progbits"], SHF["M"] | SHF["S"], 1
    return SHT["progbits"], 0, 0


class Section:
    """A section of the program: ``name``, ``sh_type``, ``flags``, ``entsize``, its `ObjectAssembler` (``asm``), and
    for .bss the ``.lcomm`` symbols laid out after its bytes (``lcomm``: name, size, alignment)."""
    __slots__ = ("name", "sh_type", "flags", "entsize", "asm", "lcomm", "data", "obj")

    def __init__(self, name: str, sh_type: int, flags: int, entsize: int):
        self.name, self.sh_type, self.flags, self.entsize = name, sh_type, flags, entsize
        self.asm = ObjectAssembler(self)
        self.lcomm: list[tuple[str, int, int]] = []
        self.data = bytearray()
        self.obj: ObjSection | None = None


class ObjectProgram(_Parser):
    """The program parser of `x86gen.program_text` with sections and symbols: `parse_object` fills it, `elf` writes
    the object."""

    def __init__(self):
        self.sections: dict[str, Section] = {}
        for name in (".text", ".data", ".bss"): self._section(name, None)
        super().__init__(self.sections[".text"].asm)
        self.section = ".text"
        self.defs: dict[str, Section] = {}        # label name -> its section
        self.binding: dict[str, str] = {}         # name -> "global" / "weak" / "local" (.globl, .weak, .local)
        self.vis: dict[str, str] = {}             # name -> "hidden" / "protected" / "internal"
        self.types: dict[str, str] = {}           # name -> key of STT (.type)
        self.sizes: dict[str, tuple] = {}         # name -> (expression's value, line) (.size)
        self.aliases: dict[str, tuple] = {}       # name -> (label, addend) (.set X, label+4)
        self.common: dict[str, tuple] = {}        # name -> (size, alignment) (.comm)
        self.order: dict[str, int] = {}           # name -> first appearance
        self.source: list[str] = []

    # -- sections --

    def _section(self, name: str, attrs: tuple | None) -> Section:
        sec = self.sections.get(name)
        if sec is None:
            t, f, e = _default_attrs(name) if attrs is None else attrs
            sec = self.sections[name] = Section(name, t, f, e)
            sec.asm.source = getattr(self, "source", None)
        elif attrs is not None and attrs[:2] != (sec.sh_type, sec.flags):
            raise AsmSyntaxError(f"section {clip(name)}: flags or type other than those it was given first")
        return sec

    def section_directive(self, d: str, rest: str) -> None:
        """``.text``, ``.data``, ``.bss``, ``.rodata``, ``.section``, ``.pushsection``, ``.popsection``, ``.previous``."""
        if d in (".text", ".data", ".bss", ".rodata"):
            if rest.strip(): raise AsmSyntaxError(f"{d} {clip(rest.strip())}: subsections are not supported")
            name, attrs = d, None
        elif d == ".previous":
            name, attrs = self.previous, None
        elif d == ".popsection":
            if not self.pushed: raise AsmSyntaxError(".popsection without a .pushsection")
            name, attrs = self.pushed.pop(), None
        else:
            args = _split_args(rest)
            name = args[0].strip().strip('"')
            if not name: raise AsmSyntaxError(f"{d} expects a section name")
            attrs = self._attrs(name, args[1:], d)
            if d == ".pushsection": self.pushed.append(self.section)
        sec = self._section(name, attrs)
        self.previous, self.section = self.section, name
        line = self.a.line
        self.a = sec.asm
        self.a.line = line

    def _attrs(self, name: str, args: list[str], d: str) -> tuple | None:
        """(sh_type, flags, entsize) of ``.section name, "flags", @type, entsize``; None where only the name is given."""
        if not args: return None
        fl = args[0].strip()
        if not (len(fl) >= 2 and fl[0] == fl[-1] == '"'):
            raise AsmSyntaxError(f"{d} {clip(name)}: expected the flags in quotes (\"awx\"), got {clip(fl)}")
        flags = 0
        for c in fl[1:-1]:
            if c == "G" or c == "o" or c == "?":
                raise AsmSyntaxError(f"{d} {clip(name)}: section flag {c!r} (groups, link order) is not supported")
            if c not in SHF or c == "I": raise AsmSyntaxError(f"{d} {clip(name)}: unknown section flag {c!r}")
            flags |= SHF[c]
        t, _f, _e = _default_attrs(name)
        if len(args) > 1:
            w = args[1].strip()
            if w[:1] not in ("@", "%") or w[1:].lower() not in SHT or w[1:].lower() in ("null", "symtab", "strtab", "rela"):
                raise AsmSyntaxError(f"{d} {clip(name)}: unknown section type {clip(w)} (expected @progbits, @nobits, @note, "
                                     "@init_array, @fini_array, @preinit_array)")
            t = SHT[w[1:].lower()]
        elif t == SHT["note"]: t = SHT["progbits"]
        entsize = 8 if t in (SHT["init_array"], SHT["fini_array"], SHT["preinit_array"]) else 0   # (pointers)
        if len(args) > 2: entsize = self.constant(args[2], d)
        if flags & SHF["M"] and not entsize: raise AsmSyntaxError(f"{d} {clip(name)}: a mergeable section (M) needs an entry size")
        if len(args) > 3: raise AsmSyntaxError(f"{d} {clip(name)}: too many arguments")
        return t, flags, entsize

    # -- labels --

    def _seen(self, name: str) -> None:
        if name not in self.order: self.order[name] = len(self.order)

    def define(self, name: str) -> None:
        if name.isdigit():
            lab = self.local_fwd.get(name)
            if lab is not None and lab.owner is not self.a:   # `jmp 1f` in another section: the same name here
                self.local_fwd.pop(name)
                lab = self.a.label(lab.name)
                self.local_back[name] = lab
                self.a.bind(lab)
                self.defs[lab.name] = self.sections[self.section]
                return
            super().define(name)
            self.defs[self.local_back[name].name] = self.sections[self.section]
            return
        if name in self.defs or name in self.aliases or name in self.common:
            raise AsmSyntaxError(f"symbol {clip(name)} is already defined")
        if "@" in name: raise AsmSyntaxError(f"label {clip(name)}: `@` goes in a reference (foo@PLT), not a label")
        super().define(name)
        self.defs[name] = self.sections[self.section]
        self._seen(name)

    def ref(self, name: str) -> Label:
        lab = super().ref(name)
        if lab.owner is not self.a:   # a numeric label (`1b`) of another section: by its name here
            lab = self.a.get_label(lab.name)
            if lab.line == 0: lab.line = self.a.line
        self._seen(name.split("@")[0])
        return lab

    def target_of(self, name: str):
        hit = self.aliases.get(name)
        if hit is not None:
            lab = self.ref(hit[0])
            return lab + hit[1] if hit[1] else lab
        return super().target_of(name)

    def symbol_value(self, name: str):
        hit = self.aliases.get(name)
        if hit is not None: return Relocatable((self.ref(hit[0]),), (), hit[1])
        return super().symbol_value(name)

    def operand(self, t: str, branch: bool):
        if self.aliases and not branch:
            def sub(m):
                hit = self.aliases.get(m.group())
                if hit is None: return m.group()
                return f"{hit[0]}{hit[1]:+d}" if hit[1] else hit[0]
            t = _NAME.sub(sub, t)
        if not branch:
            m = _OFFSET.match(t)
            if m is not None:
                v = evaluate(self.substitute(m.group(1)).strip(), self.symbol_value)
                if v.__class__ is int: return v
                return SymImm(v.plus, v.minus, v.addend)
        return super().operand(t, branch)

    # -- directives --

    def directive(self, d: str, rest: str) -> None:
        if d in (".globl", ".global", ".weak", ".local"):
            for name in self._names(d, rest):
                self.binding[name] = {".globl": "global", ".global": "global"}.get(d, d[1:])
            return None
        if d in (".hidden", ".protected", ".internal"):
            for name in self._names(d, rest): self.vis[name] = d[1:]
            return None
        if d == ".type": return self._type(rest)
        if d == ".size": return self._size(rest)
        if d in (".comm", ".lcomm"): return self._comm(d, rest)
        if d == ".ident": return self._ident(rest)
        if d in _DROPPED or d.startswith(".cfi_"): return None
        if d in (".symver", ".eqv", ".tls_common", ".gnu_attribute"):
            raise AsmSyntaxError(f"{d} is not supported by x86gen's object writer")
        return super().directive(d, rest)

    def _ident(self, rest: str) -> None:
        """``.ident "text"``: the text and a NUL in section .comment (mergeable strings), after a NUL the first time, as
        GNU as writes it."""
        t = rest.strip()
        if not (len(t) >= 2 and t[0] == t[-1] == '"'): raise AsmSyntaxError(f".ident expects a quoted string, got {clip(t)}")
        new = ".comment" not in self.sections
        sec = self._section(".comment", (SHT["progbits"], SHF["M"] | SHF["S"], 1))
        line, sec.asm.line = sec.asm.line, self.a.line
        sec.asm._data(1, ((b"\0" if new else b"") + unescape(t[1:-1], t) + b"\0",))
        sec.asm.line = line

    def _names(self, d: str, rest: str) -> list[str]:
        names = [x.strip() for x in rest.split(",")] if rest.strip() else []
        if not names: raise AsmSyntaxError(f"{d} expects symbol names")
        for name in names:
            if not _IDENT.match(name) or "@" in name: raise AsmSyntaxError(f"{d}: {clip(name)} is not a symbol name")
            self._seen(name)
        return names

    def _type(self, rest: str) -> None:
        args = _split_args(rest)
        if len(args) != 2: raise AsmSyntaxError(".type expects a symbol and a type: .type sym, @function")
        name, t = self._names(".type", args[0])[0], args[1].strip().strip('"')
        key = t[1:] if t[:1] in ("@", "%") else t
        key = {"STT_FUNC": "function", "STT_OBJECT": "object", "STT_NOTYPE": "notype", "STT_TLS": "tls_object",
               "STT_COMMON": "common"}.get(key, key)
        if key not in _TYPES:
            raise AsmSyntaxError(f".type {clip(name)}, {clip(t)}: not supported (expected @function, @object, @notype, "
                                 "@tls_object or @common)")
        self.types[name] = _TYPES[key]

    def _size(self, rest: str) -> None:
        args = _split_args(rest)
        if len(args) != 2: raise AsmSyntaxError(".size expects a symbol and a size: .size sym, .-sym")
        name = self._names(".size", args[0])[0]
        self.dot = None
        self.sizes[name] = (evaluate(args[1], self.symbol_value, directive=True), self.a.line)

    def _comm(self, d: str, rest: str) -> None:
        args = _split_args(rest)
        if not 2 <= len(args) <= (3 if d == ".comm" else 2):
            raise AsmSyntaxError(f"{d} expects a symbol, a size" + (" and an alignment" if d == ".comm" else
                                 " (GNU as takes no alignment for .lcomm on x86-64 ELF)"))
        name = self._names(d, args[0])[0]
        size = self.constant(args[1], d)
        if size < 0: raise AsmSyntaxError(f"{d} {clip(name)}: a negative size")
        if len(args) > 2:
            align = self.constant(args[2], d)
            if align <= 0 or align & (align - 1): raise AsmSyntaxError(f"{d} {clip(name)}: alignment {align} is not a power of 2")
        elif d == ".lcomm":   # GNU as's alignment of .lcomm by its size: the largest power of 2 up to it, at most 8
            align = 8 if size >= 8 else 4 if size >= 4 else 2 if size >= 2 else 1
        else:   # and of .comm: the least power of 2 it fits in, at most 16
            align = min(16, 1 << max(size - 1, 0).bit_length())
        if name in self.defs or name in self.aliases or name in self.symbols:
            raise AsmSyntaxError(f"{d} {clip(name)}: the symbol is already defined")
        if name in self.common:
            if self.common[name][0] != size: raise AsmSyntaxError(f"{d} {clip(name)}: another size than before")
            return
        if d == ".lcomm" or self.binding.get(name) == "local":   # a local: in .bss
            self.sections[".bss"].lcomm.append((name, size, align))
            self.common[name] = (size, align, True)
            self.types.setdefault(name, "object")
        else:
            self.common[name] = (size, align, False)

    def set_symbol(self, d: str, rest: str) -> None:
        name, comma, expr = rest.partition(",")
        name, expr = name.strip(), expr.strip()
        if comma and name and expr and _IDENT.match(name) and name != ".":
            self.dot = None
            try: v = evaluate(expr, self.symbol_value, directive=True)
            except EncodeError: v = None
            if v.__class__ is Relocatable:
                if len(v.plus) != 1 or v.minus:
                    raise AsmSyntaxError(f"{d} {clip(name)}: a value that names labels is a label plus or minus a constant here")
                if name in self.defs or name in self.aliases or name in self.symbols or name in self.common:
                    raise AsmSyntaxError(f"symbol {clip(name)} is already defined")
                if name in self.a._named:
                    raise AsmSyntaxError(f"{d} {clip(name)} after its use on line {self.a._named[name].line}: define the"
                                         " symbol before its first use")
                self.aliases[name] = (v.plus[0].name, v.addend)
                self._seen(name)
                return
        if name in self.aliases: raise AsmSyntaxError(f"symbol {clip(name)} is already defined")
        super().set_symbol(d, rest)
        self._seen(name)


def parse_object(text: str) -> ObjectProgram:
    """Read an Intel-syntax program with sections and symbols (see the module doc) into an `ObjectProgram`. Errors
    are `x86gen.EncodeError` subclasses naming the line."""
    if not isinstance(text, str): raise wrong_type("parse_object", "text", text, "a str")
    p = ObjectProgram()
    source = text.splitlines()
    lines = strip_block_comments(text).splitlines() if "/*" in text else source
    p.source = source
    for sec in p.sections.values(): sec.asm.source = source
    for n, raw in enumerate(lines, 1):
        p.a.line = n
        try: p.line(raw)
        except EncodeError as ex: raise type(ex)(f"line {n}: {clip(raw.strip())}: {ex}") from None
        if p.stopped: break
    if p.local_fwd:
        name = next(iter(p.local_fwd))
        line = p.local_fwd[name].line
        raise AsmSyntaxError(f"line {line}: {clip(source[line - 1].strip())}: no label `{name}:` after this reference to {name}f")
    return p


class _Writer:
    """Lays out the sections of an `ObjectProgram` and turns what they leave into symbols and relocations."""

    def __init__(self, p: ObjectProgram):
        self.p = p
        self.syms: dict[str, ObjSymbol] = {}
        self.section_syms: dict[str, ObjSymbol] = {}
        self.got = False

    def err(self, line: int, msg: str, cls=LabelError) -> EncodeError:
        src = self.p.source[line - 1].strip() if 0 < line <= len(self.p.source) else ""
        return cls(f"line {line}: {clip(src)}: {msg}" if line else msg)

    def bind_of(self, name: str) -> str:
        """"global", "weak" or "local" at the end of the program."""
        b = self.p.binding.get(name)
        if b is not None: return b
        if name in self.p.common: return "local" if self.p.common[name][2] else "global"
        return "local" if name in self.p.defs or name in self.p.aliases or name in self.p.symbols else "global"

    def keeps(self, sec: Section):
        """`ObjectAssembler.relocatable`'s ``keeps`` for section ``sec``: a branch to a label of ``sec`` that is not weak
        (a call: not global either), ``[rip+label]`` with a local label of ``sec``."""
        p = self.p

        def keep(lab: Label, kind: str, mn) -> bool:
            if lab.chunk < 0 or p.defs.get(lab.name) is not sec: return False
            b = self.bind_of(lab.name)
            if kind == "branch":
                from .selection.request import canonical
                return b == "local" or (b == "global" and canonical(mn) != "call")
            return b == "local"
        return keep

    def where(self, name: str) -> tuple:
        """(section or None, value) of a symbol by name: a label's section and offset, an alias's, None for an undefined
        or common symbol."""
        p = self.p
        sec = p.defs.get(name)
        if sec is not None: return sec, sec.asm.address_of(sec.asm._named[name])
        hit = p.aliases.get(name)
        if hit is not None:
            s, v = self.where(hit[0])
            return s, v + hit[1]
        if name in p.common and p.common[name][2]:
            return p.sections[".bss"], self.lcomm_at[name]
        return None, 0

    def where_label(self, lab: Label) -> tuple:
        """`where` of a label: its own section where it is bound (`.` too), else by its name."""
        if lab.chunk >= 0:
            sec = lab.owner.section
            return sec, sec.asm.address_of(lab)
        return self.where(lab.name)

    def symbol(self, name: str, line: int = 0) -> ObjSymbol:
        """The symbol named ``name`` (made for an undefined one, or for a local label where a relocation needs it)."""
        s = self.syms.get(name)
        if s is None:
            sec = self.p.defs.get(name)
            if sec is not None:   # a `.L` label of a mergeable section, a GOT entry's local label
                s = self.syms[name] = ObjSymbol(name, sec.obj, self.where(name)[1])
                return s
            if name.startswith(".L"):
                raise self.err(line, f"undefined label {clip(name)} (a .L label is local: it is defined in this file or nowhere)")
            s = self.syms[name] = ObjSymbol(name, SHN_UNDEF, bind=STB["weak" if self.p.binding.get(name) == "weak" else "global"],
                                            stype=STT[self.p.types.get(name, "notype")], vis=STV[self.p.vis.get(name, "default")])
        return s

    def section_symbol(self, sec: Section) -> ObjSymbol:
        s = self.section_syms.get(sec.name)
        if s is None: s = self.section_syms[sec.name] = ObjSymbol("", sec.obj, stype=STT["section"])
        return s

    def target(self, name: str, line: int, addend: int = 0) -> tuple[ObjSymbol, int]:
        """(symbol, value to add) of a relocation against ``name`` with ``addend``: the symbol itself where it is global,
        weak, undefined or common, or a label of a mergeable section with an addend (GNU as moves no such relocation to
        the section symbol: the linker may move the strings apart), else its section's symbol and its offset."""
        sec, v = self.where(name)
        label = self.p.aliases.get(name, (name,))[0]
        if sec is None:
            if name in self.p.aliases: raise self.err(line, f"{clip(name)} is an alias of an undefined symbol (not supported)")
            return self.symbol(name, line), 0
        if self.bind_of(label) != "local" and label in self.syms: return self.syms[label], v - self.syms[label].value
        if sec.flags & SHF["M"] and addend:
            s = self.symbol(label, line)
            return s, v - s.value
        return self.section_symbol(sec), v

    def run(self) -> bytes:
        p = self.p
        secs = list(p.sections.values())
        bss = p.sections[".bss"]
        self.lcomm_at: dict[str, int] = {}
        laid = {}
        for sec in secs:
            sec.obj = ObjSection(sec.name, sec.sh_type, sec.flags, entsize=sec.entsize)
            data, pending = sec.asm.relocatable(self.keeps(sec))
            laid[sec.name] = pending
            sec.data = data
        size = len(bss.data)
        for name, n, align in bss.lcomm:
            size += -size % align
            self.lcomm_at[name] = size
            size += n
            bss.asm.max_align = max(bss.asm.max_align, align)
        for sec in secs:
            o = sec.obj
            o.align = sec.asm.max_align
            if sec.sh_type == SHT["nobits"]:
                if any(sec.data) or laid[sec.name]:
                    raise EncodeError(f"section {sec.name} (@nobits) holds bytes other than zeros (GNU as: attempt to store"
                                      " non-zero value in the section): put them in .data")
                o.size = size if sec is bss else len(sec.data)
            else:
                o.data, o.size = sec.data, len(sec.data)
        self.symbols()
        for sec in secs:
            for item in laid[sec.name]: self.relocate(sec, *item)
            sec.obj.relocs.sort(key=lambda r: r.offset)   # (in address order, as GNU as writes them)
            sec.obj.data = bytes(sec.data)
        self.sizes(True)
        if self.got and "_GLOBAL_OFFSET_TABLE_" not in self.syms: self.symbol("_GLOBAL_OFFSET_TABLE_")
        ordered = sorted(self.syms.values(), key=lambda s: p.order.get(s.name, 1 << 30))
        return write_object([s.obj for s in secs], [*self.section_syms.values(), *ordered])

    def symbols(self) -> None:
        """The symbols of the labels, ``.set`` names, ``.comm``/``.lcomm`` and the names only ``.globl`` or ``.type``
        gives."""
        p = self.p
        for name, sec in p.defs.items():
            if name.startswith(".L") or "@" in name: continue
            self.syms[name] = ObjSymbol(name, sec.obj, sec.asm.address_of(sec.asm._named[name]))
        for name, (target, _addend) in p.aliases.items():
            sec, v = self.where(name)
            if sec is None: raise LabelError(f".set {clip(name)}, {clip(target)}: {clip(target)} is not defined here "
                                             "(an alias of an undefined symbol is not supported)")
            if not name.startswith(".L"): self.syms[name] = ObjSymbol(name, sec.obj, v)
        for name, v in p.symbols.items():
            if not name.startswith(".L"): self.syms[name] = ObjSymbol(name, SHN_ABS, v & ((1 << 64) - 1))
        for name, (size, align, local) in p.common.items():
            if local: self.syms[name] = ObjSymbol(name, p.sections[".bss"].obj, self.lcomm_at[name], size)
            else: self.syms[name] = ObjSymbol(name, SHN_COMMON, align, size, stype=STT["object"])
        for name in list(p.binding) + list(p.types):
            if name not in self.syms and not name.startswith(".L") and self.bind_of(name) != "local":
                self.symbol(name)
        for name, s in self.syms.items():
            s.bind = STB[self.bind_of(name)]
            if s.section == SHN_UNDEF and s.bind == STB["local"]: s.bind = STB["global"]
            if name in p.types: s.stype = STT[p.types[name]]
            elif s.section == SHN_COMMON: s.stype = STT["object"]
            if name in p.vis: s.vis = STV[p.vis[name]]
        self.sizes(False)

    def sizes(self, late: bool) -> None:
        """The ``.size`` of each symbol; a ``.L`` label's (clang writes ``.size .L.str, 9``) only where a relocation has
        made it a symbol (``late``: after the relocations), as GNU as keeps it."""
        p = self.p
        for name, (v, line) in p.sizes.items():
            if name not in self.syms:
                if name.startswith(".L") and name in p.defs: continue
                raise self.err(line, f".size {clip(name)}: no such symbol here", AsmSyntaxError)
            if late and not name.startswith(".L"): continue
            self.syms[name].size = self.constant(v, line, ".size")
        if late:   # (and its .type: clang writes `.type .L.str,@object`)
            for name, t in p.types.items():
                if name.startswith(".L") and name in self.syms: self.syms[name].stype = STT[t]

    def constant(self, v, line: int, d: str) -> int:
        """The value of a `Relocatable` whose labels are of one section and cancel."""
        if v.__class__ is int: return v
        total, n, secs = v.addend, 0, set()
        for sign, labs in ((1, v.plus), (-1, v.minus)):
            for lab in labs:
                sec, x = self.where_label(lab)
                if sec is None: raise self.err(line, f"{d}: {clip(lab.name)} is not defined", AsmSyntaxError)
                secs.add(sec.name)
                total += sign * x
                n += sign
        if n or len(secs) > 1: raise self.err(line, f"{d}: the value is not a constant (labels of different sections)",
                                              AsmSyntaxError)
        return total

    def relocate(self, sec: Section, at: int, kind: str, size: int, plus, minus, addend: int, line: int, extra) -> None:
        """One reference that `ObjectAssembler.relocatable` left: a relocation in ``sec`` at ``at``, or a constant."""
        relocs = sec.obj.relocs
        if kind == "branch":
            lab = plus[0]
            name, mod = self.modifier(lab.name, line)
            if mod not in (None, "PLT32"): raise self.err(line, f"{clip(lab.name)}: @{mod} is not a branch target", OperandError)
            s, v = self.target(name, line, addend - 4)
            local = s.stype == STT["section"] or (s.bind == STB["local"] and s.section is not SHN_UNDEF)
            rtype = "PC32" if local and mod is None else "PLT32"
            relocs.append(Rela(at, R_X86_64[rtype], s, v + addend - 4))
            return
        if kind == "rip":
            lab = plus[0]
            name, mod = self.modifier(lab.name, line)
            if mod == "GOTPCREL":
                self.got = True
                relocs.append(Rela(at, R_X86_64[_gotpcrel(*extra)], self.symbol(name, line), addend))
                return
            if mod is not None: raise self.err(line, f"{clip(lab.name)}: @{mod} in a memory operand is not supported", OperandError)
            s, v = self.target(name, line, addend)
            relocs.append(Rela(at, R_X86_64["PC32"], s, v + addend))
            return
        # data or an immediate: sum what is known; one symbol (plus) may remain, and one label of this section (minus)
        const, outside, secs = addend, [], {}
        for sign, labs in ((1, plus), (-1, minus)):
            for lab in labs:
                name, mod = self.modifier(lab.name, line)
                if mod is not None: raise self.err(line, f"{clip(lab.name)}: @{mod} in data is not supported", OperandError)
                s, v = self.where_label(lab) if mod is None else self.where(name)
                if s is None: outside.append((sign, name)); continue
                secs.setdefault(s.name, [0, []])
                secs[s.name][0] += sign
                secs[s.name][1].append((sign, name))
                const += sign * v
        live = {k: e for k, e in secs.items() if e[0]}
        pcrel = False
        if sec.name in live and live[sec.name][0] == -1:   # `sym - .`: relative to here
            del live[sec.name]
            pcrel = True
            const += at
        target = None
        if len(outside) == 1 and outside[0][0] == 1 and not live: target = (self.symbol(outside[0][1], line), const)
        elif not outside and len(live) == 1:
            (k, (cnt, names)), = live.items()
            if cnt == 1:
                plus_names = [nm for sg, nm in names if sg == 1]
                rel = const - self.where(plus_names[0])[1]   # (the addend against the label itself)
                # (`sym - label`: GNU as keeps a label of a mergeable section as the symbol, as it does with an addend:
                # the fixup has a subtracted symbol when write.c's adjust_reloc_syms looks at it)
                sym, v = self.target(plus_names[0], line, rel or pcrel) if len(names) == 1 else \
                    (self.section_symbol(self.p.sections[k]), 0)
                target = (sym, const - (self.where(plus_names[0])[1] - v if len(names) == 1 else 0))
        elif not outside and not live:
            if pcrel: raise self.err(line, "a value relative to here that names no other section", OperandError)
            self.store(sec, at, size, const, line, kind)
            return
        if target is None:
            what = ", ".join(n for _s, n in outside) or ", ".join(live)
            raise self.err(line, f"the value cannot be written as one relocation (it names {what}): a symbol plus a constant,"
                                 " or a symbol minus a label of this section", OperandError)
        if pcrel:
            rtype = {8: "PC64", 4: "PC32", 2: "PC16", 1: "PC8"}[size]
        else:
            rtype = {8: "64", 4: "32S" if extra else "32", 2: "16", 1: "8"}[size]
        relocs.append(Rela(at, R_X86_64[rtype], target[0], target[1]))

    def store(self, sec: Section, at: int, size: int, value: int, line: int, kind: str) -> None:
        if not -(1 << (8 * size - 1)) <= value < (1 << (8 * size)):
            raise self.err(line, f"value {value} does not fit in {8 * size} bits", ImmediateRangeError)
        sec.data[at:at + size] = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")

    def modifier(self, name: str, line: int) -> tuple[str, str | None]:
        """``puts@PLT`` -> ("puts", "PLT32"); a name without ``@`` -> (name, None)."""
        if "@" not in name: return name, None
        base, _, mod = name.partition("@")
        m = _MODIFIERS.get(mod.lower())
        if m is None or not base:
            raise self.err(line, f"{clip(name)}: the modifier @{mod} is not supported (only @PLT and @GOTPCREL are)", OperandError)
        return base, m


def _gotpcrel(code: bytes, doff: int) -> str:
    """GNU as's choice for ``sym@GOTPCREL[rip]`` in instruction ``code``: the relaxable kinds (mov r, [m] 8B, test 85,
    the ALU ops' r, [m] forms 03 0B … 3B, call/jmp [m] FF /2 /4) are GOTPCRELX, REX_GOTPCRELX with a REX prefix."""
    i = 0
    while code[i] in (0x66, 0x67, 0xF2, 0xF3, 0x2E, 0x36, 0x3E, 0x26, 0x64, 0x65, 0xF0): i += 1
    rex = 0x40 <= code[i] <= 0x4F
    if rex: i += 1
    op, reg = code[i], (code[i + 1] >> 3) & 7
    if op in (0x8B, 0x85) or (op | 0x38) == 0x3B or (op == 0xFF and reg in (2, 4)):
        return "REX_GOTPCRELX" if rex else "GOTPCRELX"
    return "GOTPCREL"


def assemble_object(text: str) -> bytes:
    """An ELF64 x86-64 relocatable object (the bytes of a ``.o`` file) from Intel-syntax program text with sections,
    symbols and references to symbols defined elsewhere; see the module doc for what is read and how relocations are
    chosen (as GNU as 2.40 chooses them)."""
    return _Writer(parse_object(text)).run()

