"""AVX-512 (EVEX) operand decorations in Intel-syntax text, as GNU as, llvm-mc, iced-x86 and objdump write them.

Read (both dialects; SDM Vol.2 2.7: EVEX.aaa, z, b, L'L):

- a write mask and zeroing after the destination: ``zmm1{k1}{z}`` (iced, objdump), ``zmm1 {k1} {z}`` (GNU as,
  llvm-mc), ``zmmword ptr [rax] {k1}`` (a masked memory destination); ``{k0}`` is an error (k0 means no mask),
  ``{z}`` needs a mask;
- broadcast: ``dword ptr [rax]{1to16}`` (iced, GNU as, llvm-mc; ``[rax]{1to16}`` unsized too) and objdump's
  ``DWORD BCST [rax]`` (``QWORD BCST [rax]{1to4}`` where the vector length is not otherwise known); the
  ``{1toN}`` must be the element count of the form the other operands choose (``{1to8}`` on the 512-bit
  vaddps is an error), or choose among forms that differ in it only (vcvtpd2ps xmm1, qword bcst […]{1to4});
- rounding ``{rn-sae}`` ``{rd-sae}`` ``{ru-sae}`` ``{rz-sae}`` (iced: ``{rne-sae}``) and ``{sae}``: as an operand of
  its own (GNU as, llvm-mc: ``vaddps zmm1, zmm2, zmm3, {rn-sae}``, ``vcvtsi2ss xmm1, xmm2, {rn-sae}, rax``,
  before any immediate), attached to the destination (iced: ``vaddps zmm1{k1}{rz-sae}, zmm2, zmm3``) or to the
  last register operand (objdump: ``vaddps zmm1,zmm2,zmm3{rn-sae}``);
- iced's gather/scatter masks as an operand: ``vgatherdps zmm1, k1, dword ptr [rax+zmm2*4]``,
  ``vscatterdps dword ptr [rax+zmm2*4], k1, zmm1``, ``vgatherpf0dps dword ptr [rax+zmm2*4], k1``.

A parsed line's operands are x86gen's structured ones (`x86gen.Masked`, `x86gen.Bcst`); rounding and the
written ``{1toN}`` ride in a trailing `Decorations` operand (`split_decorations` takes it off) that the text
encoder turns into ``rc=`` and a check of the form's element count.

Printed (``str(Instruction)``, listings, the CLI) in the GNU as / llvm-mc dialect, which both of them and x86gen
read back: ``vaddps zmm1 {k1} {z}, zmm2, dword ptr [rax]{1to16}``, ``vaddps zmm1, zmm2, zmm3, {rn-sae}``
(`format_decorated`).
"""
from __future__ import annotations

import re

from ._choose import canonical
from ._evex import choose, encode_form
from .encoder import encode, select
from .errors import AsmSyntaxError, EncodeError, EvexOperandError, OperandError, UnknownMnemonicError, fmt_operands
from .evex import RD_SAE, RN_SAE, ROUNDING_NAMES, RU_SAE, RZ_SAE, SAE, Masked, Rounding, is_rounding
from .forms import forms_of
from .memory import A32Mem, Bcst, Mem, VsibMem
from .registers import REGISTERS, KReg, Reg
from .text import GATHER_MNEMONICS, Decorations  # noqa: F401  (defined there: text reads a line without this module)

# rounding decorations -> x86gen's rc= value (SDM Vol.2 2.7.8, Table 2-36); iced-x86 prints round-to-nearest as rne-sae
ROUNDING_WORDS = {"rn-sae": RN_SAE, "rne-sae": RN_SAE, "rd-sae": RD_SAE, "ru-sae": RU_SAE, "rz-sae": RZ_SAE, "sae": SAE}
_DECORATION = re.compile(r"\s*\{\s*([^{}]*?)\s*\}\s*")
_BCST_WORD = re.compile(r"^(byte|word|dword|qword)\s+bcst\s+(.*)$")   # objdump: `DWORD BCST [rax]`
_ONE_TO = re.compile(r"1to(\d+)")
_EXPECTED = "{k1}-{k7}, {z}, {1toN}, {rn-sae}, {rd-sae}, {ru-sae}, {rz-sae} or {sae}"


def _clip(text: str, limit: int = 120) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


def rounding_text(rc: int) -> str:
    """``{rn-sae}`` for `x86gen.RN_SAE` and so on (the GNU as / llvm-mc spelling)."""
    if not is_rounding(rc): raise OperandError(f"rc={rc!r} is no rounding mode (x86gen.RN_SAE, RD_SAE, RU_SAE, RZ_SAE or SAE)")
    return "{" + ROUNDING_NAMES[rc] + "}"


def split_decorations(ops: tuple) -> tuple[tuple, Decorations | None]:
    """``(operands, Decorations or None)`` of a parsed operand tuple."""
    if ops and ops[-1].__class__ is Decorations: return ops[:-1], ops[-1]
    return ops, None


class _Piece:
    """One operand's text split into its base text and its ``{…}`` decorations."""

    __slots__ = ("text", "base", "mask", "zero", "n", "bcst", "rc", "alone")

    def __init__(self, text: str):
        self.text, self.base, self.mask, self.zero, self.n, self.bcst, self.rc, self.alone = text, "", None, False, None, False, None, False


def _piece(t: str) -> _Piece:
    """Split operand text ``t`` (lower case) into base and decorations; errors for unknown or repeated ones."""
    p = _Piece(t)
    s = t.strip()
    if not s: raise AsmSyntaxError("empty operand (expected register, memory, immediate or a decoration)")
    i = s.find("{")
    base, rest = (s, "") if i < 0 else (s[:i].strip(), s[i:])
    pos = 0
    words = []
    while pos < len(rest):
        m = _DECORATION.match(rest, pos)
        if m is None: raise AsmSyntaxError(f"cannot parse the decorations of {_clip(s)} (expected {_EXPECTED})")
        words.append(m.group(1))
        pos = m.end()
    if not base: p.alone = True
    bm = _BCST_WORD.match(base)
    if bm:   # objdump's `dword bcst [rax]`: a broadcast of that element size
        p.bcst, base = True, f"{bm.group(1)} ptr {bm.group(2)}"
    p.base = base
    for w in words:
        if w in ROUNDING_WORDS:
            if p.rc is not None: raise AsmSyntaxError(f"two rounding decorations in {_clip(s)}")
            p.rc = ROUNDING_WORDS[w]
        elif w == "z":
            if p.zero: raise AsmSyntaxError(f"{{z}} twice in {_clip(s)}")
            p.zero = True
        elif re.fullmatch(r"k[0-7]", w):
            if w == "k0":
                raise AsmSyntaxError(f"{{k0}} in {_clip(s)}: k0 cannot be a write mask (EVEX.aaa = 000 means no masking,"
                                     " SDM Vol.2 2.7.1); write no mask, or k1-k7")
            if p.mask is not None: raise AsmSyntaxError(f"two write masks in {_clip(s)}")
            p.mask = w
        elif (m := _ONE_TO.fullmatch(w)) is not None:
            if p.n is not None: raise AsmSyntaxError(f"two broadcasts in {_clip(s)}")
            n = int(m.group(1))
            if n not in (2, 4, 8, 16, 32):
                raise AsmSyntaxError(f"{{{w}}} in {_clip(s)}: a broadcast is {{1to2}}, {{1to4}}, {{1to8}}, {{1to16}} or {{1to32}}")
            p.n, p.bcst = n, True
        else:
            raise AsmSyntaxError(f"unknown decoration {_clip('{' + w + '}')} in {_clip(s)} (expected {_EXPECTED})")
    if p.alone and (p.mask or p.zero or p.bcst or len(words) != 1):
        raise AsmSyntaxError(f"misplaced {_clip(s)}: only a rounding ({{rn-sae}} … {{sae}}) stands as an operand of its own;"
                             " a mask {k1} and {z} follow the destination, {1toN} a memory operand")
    return p


# a character or string literal (GNU as: 'x', '\\n', "…"), whose braces are no decorations (`or al, -'{'`)
_QUOTED = re.compile(r"'(?:\\.|[^'\\])'|\"(?:\\.|[^\"\\])*\"")


def has_decorations(line: str) -> bool:
    """Might ``line`` (lower case) hold EVEX decorations (so that `parse_decorated` reads it)?"""
    if "'" in line or '"' in line: line = _QUOTED.sub("", line)
    return "{" in line or "bcst" in line


def parse_decorated(mn: str, texts: list[str], parse_operand) -> tuple:
    """The operands of ``mn`` written as ``texts`` with EVEX decorations (see the module doc): structured operands,
    and a trailing `Decorations` if the line has a rounding or a ``{1toN}``. ``parse_operand`` reads a base."""
    pieces = [_piece(t) for t in texts]
    rc, ops, counts = None, [], []
    plain = [p for p in pieces if not p.alone]
    last_reg = None   # index among the plain operands of the last one that is no immediate
    values = [parse_operand(p.base) for p in plain]
    for j, v in enumerate(values):
        if v.__class__ is not int: last_reg = j
    j = -1
    for k, p in enumerate(pieces):
        if p.alone:
            if k == 0: raise AsmSyntaxError(f"misplaced {_clip(p.text.strip())}: a rounding operand follows the register operands")
            if rc is not None: raise AsmSyntaxError(f"two rounding decorations in {mn} {_clip(', '.join(texts))}")
            if any(x.__class__ is int for x in values[:j + 1]):
                raise AsmSyntaxError(f"misplaced {_clip(p.text.strip())}: a rounding operand precedes the immediates"
                                     " (as GNU as and llvm-mc read it)")
            rc = p.rc
            continue
        j += 1
        v = values[j]
        where = f"{_clip(p.text.strip())} (operand {j + 1} of {mn})"
        if p.rc is not None:
            if rc is not None: raise AsmSyntaxError(f"two rounding decorations in {mn} {_clip(', '.join(texts))}")
            if not isinstance(v, Reg) or (j != 0 and j != last_reg):
                raise AsmSyntaxError(f"misplaced rounding {where}: it is written after the destination register (iced),"
                                     " after the last register operand (objdump) or as an operand of its own (GNU as, llvm-mc)")
            rc = p.rc
        if (p.mask is not None or p.zero) and j != 0:
            raise AsmSyntaxError(f"misplaced write mask {where}: {{k1}}-{{k7}} and {{z}} follow the destination (the first operand)")
        if p.zero and p.mask is None:
            raise AsmSyntaxError(f"{{z}} without a write mask in {where}: zeroing-masking needs {{k1}}-{{k7}} before it")
        if p.bcst:
            if not isinstance(v, Mem):
                raise AsmSyntaxError(f"misplaced broadcast {where}: {{1toN}} follows a memory operand")
            if j == 0: raise AsmSyntaxError(f"misplaced broadcast {where}: a destination is never broadcast")
            if not v.size:
                v = v.with_size(_bcst_element(mn, j, p.n, where))
            if p.n is not None: counts.append((j, p.n))
            v = v.bcst
        if p.mask is not None:
            v = Masked(v, REGISTERS[p.mask], p.zero)
        ops.append(v)
    if rc is not None or counts: ops.append(Decorations(rc, tuple(counts)))
    return tuple(ops)


def _bcst_forms(mn: str):
    from .text import pseudo_op
    name = canonical(mn.rpartition("}")[2].rpartition(" ")[2])
    try: return forms_of(name)
    except UnknownMnemonicError:
        alt = pseudo_op(name, ())
        if alt is None: return []
        try: return forms_of(canonical(alt[0]))
        except UnknownMnemonicError: return []


def _bcst_element(mn: str, j: int, n: int | None, where: str) -> int:
    """The element size of an unsized broadcast ``[rax]{1toN}`` (llvm-mc takes it): the one that the forms of
    ``mn`` with N elements in operand ``j`` broadcast."""
    if n is None: raise EvexOperandError(f"broadcast {where} needs a size: dword ptr […]{{1toN}} or qword ptr […]{{1toN}}")
    sizes = {f.evex_bcst for f in _bcst_forms(mn) if f.evex_bcst and len(f.operands) > j
             and f.operands[j].mem and f.operands[j].mem // f.evex_bcst == n}
    if len(sizes) != 1:
        raise EvexOperandError(f"broadcast {where} needs a size: dword ptr […]{{1to{n}}} or qword ptr […]{{1to{n}}}"
                           + ("" if sizes else f" (no form of {mn} broadcasts {n} elements there)"))
    return sizes.pop()


def element_count(form, i: int) -> int:
    """N of ``{1toN}`` for a broadcast in operand ``i`` of ``form``: its memory size over the element size."""
    return form.operands[i].mem // form.evex_bcst if form.evex_bcst and form.operands[i].mem else 0


def decorated_form(mn: str, ops: tuple, deco: Decorations, ip: int = 0):
    """The form a line with a ``{1toN}`` must take when it is not the one `x86gen.select` picks from the operands (the
    forms that differ in N only: ``vcvtpd2ps xmm1, qword ptr [rax]{1to4}`` is the 256-bit source), else None; an
    `x86gen.EvexOperandError` when the N written is no form's."""
    if not deco.bcst: return None
    form, default = _bcst_choice(mn, ops, deco, ip)
    return None if default else form


def _bcst_choice(mn: str, ops: tuple, deco: Decorations, ip: int):
    """(the form for a line with a ``{1toN}``, whether it is the one the operands choose anyway); see `decorated_form`."""
    kw = {} if deco.rc is None else {"rc": deco.rc}
    # (`x86gen._evex.choose` is `select` for decorated operands, which a broadcast always is)
    try: form, err = choose(mn, ops, deco.rc, ip), None
    except EncodeError as ex: form, err = None, ex   # (operands several forms take: the N written may choose)
    if form is not None and all(element_count(form, j) == n for j, n in deco.bcst): return form, True
    alts = [f for f in _bcst_forms(mn) if f is not form and f.encoding_kind == "evex" and len(f.operands) == len(ops)
            and all(element_count(f, i) == m for i, m in deco.bcst) and _accepts(f, ops, kw)]
    if alts: return min(alts, key=lambda f: f.length), False
    if form is None: raise err
    j, n = next((j, n) for j, n in deco.bcst if element_count(form, j) != n)
    have = element_count(form, j)
    raise EvexOperandError(f"{mn} {fmt_operands(ops)}: {{1to{n}}} in operand {j + 1}, but {form.id} broadcasts {have}"
                           f" elements there ({{1to{have}}}: its {form.operands[j].mem}-bit operand of {form.evex_bcst}-bit elements)")


def encode_decorated(mn: str, ops: tuple, deco: Decorations, ip: int = 0) -> bytes:
    """Bytes of a text line with `Decorations`: ``rc=`` passed on, in the form its ``{1toN}`` names (`decorated_form`)."""
    kw = {} if deco.rc is None else {"rc": deco.rc}
    if not deco.bcst:
        return encode(mn, *ops, ip=ip, **kw)
    return encode_form(_bcst_choice(mn, ops, deco, ip)[0], ops, deco.rc, ip)   # (the decorated path of Form.__call__)


def _accepts(form, ops: tuple, kw: dict) -> bool: return _encodes(form, ops, kw) is not None


def format_decorated(x, n: int = 0) -> str | None:
    """GNU as / llvm-mc text of a decorated operand (`x86gen.Masked`, `x86gen.Bcst`), or None for any other:
    ``zmm1 {k1} {z}``, ``zmmword ptr [rax] {k1}``, ``dword ptr [rax]{1to16}`` (``n`` elements, from the form; without
    it objdump's ``dword bcst [rax]``, which x86gen and GNU as read)."""
    cls = x.__class__
    if cls is Masked:
        from .text import format_operand
        return f"{format_operand(x.op)} {{{x.mask.name}}}" + (" {z}" if x.zero else "")
    if cls is Bcst:
        from .text import format_operand
        return format_operand(x.plain) + f"{{1to{n}}}" if n else str(x)   # objdump's `dword bcst [rax]` without a form
    return None


def _vsib(x) -> bool:
    """A VSIB memory operand, with a 64- or a 32-bit address (`A32Mem`)?"""
    return x.__class__ is VsibMem or (x.__class__ is A32Mem and x.plain.__class__ is VsibMem)


def gather_mask(mn: str, ops: tuple) -> tuple[str, tuple]:
    """iced's ``vgatherdps zmm1, k1, dword ptr [rax+zmm2*4]`` is ``vgatherdps zmm1 {k1}, dword ptr [rax+zmm2*4]``;
    ``vscatterdps dword ptr [rax+zmm2*4], k1, zmm1`` and ``vgatherpf0dps dword ptr [rax+zmm2*4], k1`` put the mask on
    the VSIB operand (`GATHER_MNEMONICS`). The VEX gathers' xmm/ymm mask operand is left as it is."""
    try:
        if len(ops) == 3 and ops[1].__class__ is KReg and ops[1].num:
            a, k, b = ops
            if isinstance(a, Reg) and _vsib(b): return mn, (Masked(a, k), b)
            if _vsib(a) and isinstance(b, Reg): return mn, (Masked(a, k), b)
        if len(ops) == 2 and _vsib(ops[0]) and ops[1].__class__ is KReg and ops[1].num:
            return mn, (Masked(ops[0], ops[1]),)
    except EncodeError: pass   # a mask x86gen.Masked refuses: the operands as written (no form takes them)
    return mn, ops


_VECTOR_KINDS = ("xmm", "ymm", "zmm")


def format_instruction(mn: str, ops: tuple, rc: int | None = None, form=None) -> str:
    """Intel syntax of ``mn ops`` with AVX-512 decorations in the GNU as / llvm-mc dialect (which both of them, and
    x86gen, read back): ``{1toN}`` with N from ``form`` (a `Form`, or a callable giving it, asked only when there is a
    broadcast), and the rounding ``rc`` as an operand of its own after the last vector register, where llvm-mc
    wants it (``vcvtsi2ss xmm1, xmm2, {rn-sae}, rax``, ``vcmpps k2, zmm0, zmm1, {sae}, 1``)."""
    from .text import format_operand
    texts, last_vec = [], -1
    for i, x in enumerate(ops):
        if x.__class__ is Bcst:
            f = form() if callable(form) else form
            texts.append(format_decorated(x, element_count(f, i) if f is not None else 0))
        elif x.__class__ is Masked: texts.append(format_decorated(x))
        else: texts.append(format_operand(x))
        r = x.op if x.__class__ is Masked else x
        if getattr(r, "kind", None) in _VECTOR_KINDS: last_vec = i
    if rc is not None: texts.insert(last_vec + 1 if last_vec >= 0 else len(texts), rounding_text(rc))
    return mn + (" " + ", ".join(texts) if texts else "")


def listed_decorated(mn: str, ops, data: bytes) -> str:
    """An Assembler record's text (`format_instruction`): its operands, an `x86gen.evex.Rounding` after them if it has
    one, and its bytes ``data``, which name the form where a ``{1toN}`` chose one other than the operands' default."""
    ops = list(ops)
    rc = ops.pop().rc if ops and ops[-1].__class__ is Rounding else None
    ops = tuple(ops)

    def form():
        kw = {} if rc is None else {"rc": rc}
        f = select(mn, *ops, **kw)
        if not data or not any(x.__class__ is Bcst for x in ops) or _encodes(f, ops, kw) == data: return f
        return next((g for g in _bcst_forms(mn) if len(g.operands) == len(ops) and _encodes(g, ops, kw) == data), f)
    return format_instruction(mn, ops, rc, form)


def _encodes(form, ops: tuple, kw: dict) -> bytes | None:
    try: return form(*ops, **kw)
    except EncodeError: return None
