"""Intel-syntax programs through `x86gen.assemble`: labels, comments, directives, errors, and the
round trip of printed text (x86gen's own, iced-x86's Intel formatter, GNU objdump -M intel) back to
the same bytes for instances of every form.
"""
from __future__ import annotations

import re
import shutil
import struct
import subprocess

import iced_x86 as I
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from iced_oracle import (
    _GPR_WIDTH_IMMATERIAL,
    _VPCMP_EQ,
    ICED_FORMS,
    ICED_UNSUFFIXED_16,
    decoder_options,
    operand_registers,
    request_mnemonic,
    semantics,
)

import x86gen
from x86gen import AsmSyntaxError, EncodeError, Instruction, Mem
from x86gen.program_text import parse_program
from x86gen.syntax import _GPR64_AS_32, _SELECTOR_READ

R = x86gen.REGISTERS
HAVE_AS = shutil.which("as") is not None and shutil.which("objdump") is not None
needs_binutils = pytest.mark.skipif(not HAVE_AS, reason="GNU as/objdump not installed")


def gnu_as(src: str, tmp_path) -> bytes:
    """The .text bytes GNU as makes of an Intel-syntax program."""
    s, o, b = tmp_path / "p.s", tmp_path / "p.o", tmp_path / "p.bin"
    s.write_text(".intel_syntax noprefix\n.text\n" + src + "\n")
    subprocess.run(["as", "--64", "-o", str(o), str(s)], check=True, capture_output=True)
    subprocess.run(["objcopy", "-O", "binary", "-j", ".text", str(o), str(b)], check=True)
    return b.read_bytes()


# ---- program syntax ------------------------------------------------------------------------------------

SUM_PROGRAM = """\
    .intel_syntax noprefix
    .text
    .globl  sum               # int64 sum(int64 n): 1 + 2 + ... + n
    .type   sum, @function
sum:
    xor     eax, eax          # total = 0
    test    rdi, rdi
    jle     .L3               // nothing to add

.L2:    add rax, rdi
    dec     rdi
    jnz     .L2
.L3:
    ret
    .size   sum, .-sum
"""


def test_program_with_labels_comments_directives():
    code = x86gen.assemble(SUM_PROGRAM)
    # GNU as, same program: 31 c0 48 85 ff 7e 08 48 01 f8 48 ff cf 75 f8 c3
    assert code.hex() == "31c04885ff7e084801f848ffcf75f8c3"


def test_numeric_local_labels_and_case():
    src = "xor eax, eax\n1: add eax, 1\ncmp eax, 10\njl 1b\njmp 2f\nud2\n2:\n1: ret\nJMP Done\nDone: RET"
    code = x86gen.assemble(src)
    ins = list(I.Decoder(64, code))
    assert ins[3].near_branch_target == 2 and ins[4].near_branch_target == ins[6].ip
    assert ins[7].near_branch_target == ins[8].ip


def test_data_and_alignment_directives():
    src = """
        lea rax, [rip+table]
        ret
        .p2align 3
    table:
        .byte 1, 2, 0xff, -1
        .short 0x1234
        .value 7
        .long 0xdeadbeef, table
        .quad table, -1
        .float 1.5
        .double 2.5
        .ascii "ab,c"
        .asciz "x;y#"
        .string "\\n"
        .zero 3
        db 1, "hi"
        dw 2
        dd 3
        .float 1.0
        dq 4
        .balign 16, 0xcc
    end:
    """
    code = x86gen.assemble(src, 0x1000)
    t = 0x8                                   # 7 (lea) + 1 (ret) padded to 8
    assert code[7] == 0xC3
    data = code[t:]
    expect = (bytes([1, 2, 255, 255]) + struct.pack("<HHII", 0x1234, 7, 0xDEADBEEF, 0x1000 + t)
              + struct.pack("<Qq", 0x1000 + t, -1) + struct.pack("<fd", 1.5, 2.5) + b"ab,c" + b"x;y#\0" + b"\n\0" + bytes(3)
              + b"\x01hi" + struct.pack("<HIfQ", 2, 3, 1.0, 4))
    assert data[:len(expect)] == expect
    assert len(code) % 16 == 0 and set(data[len(expect):]) <= {0xCC}
    disp = struct.unpack_from("<i", code, 3)[0]
    assert 7 + disp == t


def test_label_differences_jump_table():
    """GCC's switch tables: `.long .L4-.L3`."""
    src = """
        lea rdx, [rip+.L3]
        movsxd rax, dword ptr [rdx+rdi*4]
        add rax, rdx
        jmp rax
    .L3:
        .long .L4-.L3
        .long .L5-.L3
    .L4: mov eax, 1
        ret
    .L5: mov eax, 2
        ret
    """
    a = parse_program(src)
    code = a.assemble()
    l3, l4, l5 = (a.address_of(n) for n in (".L3", ".L4", ".L5"))
    assert struct.unpack_from("<ii", code, l3) == (l4 - l3, l5 - l3)


GCC_O2_OUTPUT = """\
\t.file\t"k.c"
\t.intel_syntax noprefix
\t.text
\t.p2align 4
\t.globl\tscale
\t.type\tscale, @function
scale:
.LFB0:
\t.cfi_startproc
\ttest\trsi, rsi
\tje\t.L1
\tvmovss\txmm1, DWORD PTR .LC0[rip]
\txor\teax, eax
\t.p2align 4,,10
\t.p2align 3
.L3:
\tvmulss\txmm0, xmm1, DWORD PTR [rdi+rax*4]
\tvmovss\tDWORD PTR [rdi+rax*4], xmm0
\tadd\trax, 1
\tcmp\trsi, rax
\tjne\t.L3
.L1:
\tret
\t.cfi_endproc
.LFE0:
\t.size\tscale, .-scale
\t.section\t.rodata.cst4,"aM",@progbits,4
\t.align 4
.LC0:
\t.long\t1075838976
\t.ident\t"GCC: (GNU) 13.2.0"
\t.section\t.note.GNU-stack,"",@progbits
"""


def test_compiler_output():
    """A GCC -O2 -masm=intel listing: its code, and its constant in .rodata.cst4, which x86gen does not lay out (one
    section, .text: the constant's line is the error, where GNU as puts it in a section of its own; flattened into the
    code it would give other bytes than GNU as's .text). With the constant moved into .text the program assembles."""
    with pytest.raises(AsmSyntaxError, match=r"line 28: '\.align 4': in section \.rodata\.cst4: x86gen lays out one section"):
        parse_program(GCC_O2_OUTPUT)
    a = parse_program(GCC_O2_OUTPUT.replace('\t.section\t.rodata.cst4,"aM",@progbits,4\n', ""))
    code = a.assemble()
    lc0 = a.address_of(".LC0")
    assert struct.unpack_from("<f", code, lc0)[0] == 2.5
    ins = list(I.Decoder(64, code[:lc0]))
    movss = next(i for i in ins if i.mnemonic == I.Mnemonic.VMOVSS and i.memory_base == I.Register.RIP)
    assert movss.memory_displacement == lc0
    assert a.address_of(".L3") % 8 == 0


@needs_binutils
def test_compiler_output_matches_gnu_as_without_alignment(tmp_path):
    """Same bytes as GNU as for GCC-style output when no NOP padding is involved."""
    src = "\n".join(ln for ln in GCC_O2_OUTPUT.splitlines() if ".p2align" not in ln and ".section" not in ln and ".align" not in ln)
    assert x86gen.assemble(src) == gnu_as(src, tmp_path)


@needs_binutils
@settings(max_examples=25)
@given(st.lists(st.tuples(st.sampled_from(["nop", "add eax, 1", "add rax, 1000", "vaddps ymm0, ymm1, ymmword ptr [rdi+0x40]",
                                           "mov rax, 0x1122334455667788", "lea rcx, [rip+L0]", "label", "jmp", "jcc"]),
                          st.integers(0, 5), st.sampled_from(["je", "jne", "jl", "jg", "jb"])), min_size=1, max_size=120))
def test_random_programs_match_gnu_as(tmp_path_factory, items):
    """Random programs with forward/backward branches: byte-identical to GNU as (which relaxes the same way)."""
    lines, defined = [], set()
    for kind, k, jcc in items:
        if kind == "label" and k not in defined: lines.append(f"L{k}:"); defined.add(k)
        elif kind == "jmp": lines.append(f"jmp L{k}")
        elif kind == "jcc": lines.append(f"{jcc} L{k}")
        elif kind != "label": lines.append(kind)
    lines += [f"L{k}:" for k in range(6) if k not in defined] + ["ret"]
    src = "\n".join(lines)
    assert x86gen.assemble(src) == gnu_as(src, tmp_path_factory.mktemp("as"))


def test_gnu_style_memory_label_operands():
    a = parse_program("mov rax, qword ptr [rip + tbl + 8]\nmovsd_:\nvmovsd xmm0, QWORD PTR tbl[rip+16]\nret\ntbl: .quad 1, 2, 3")
    code = a.assemble()
    ins = list(I.Decoder(64, code[:a.address_of("tbl")]))
    assert ins[0].memory_displacement == a.address_of("tbl") + 8
    assert ins[1].memory_displacement == a.address_of("tbl") + 16


def test_iced_and_objdump_branch_spellings():
    assert x86gen.assemble("jmp short 0x1007", 0x1000).hex() == "eb05"
    assert x86gen.assemble("je near ptr 0x1000", 0x1000).hex() == "74fe"
    assert x86gen.assemble("call 0x1010 <f+0x10>", 0x1000).hex() == "e80b000000"
    assert x86gen.assemble("jmp    1a <f+0x1a>\n", 0x0).hex() == "eb18"      # objdump on an object file: bare hex
    assert x86gen.assemble("mov rax, QWORD PTR [rip+0x10]        # 0x1f <x>").hex() == "488b0510000000"
    assert x86gen.assemble("vcmpltps ymm0, ymm1, ymm2") == x86gen.assemble("vcmpps ymm0, ymm1, ymm2, 1")


# ---- errors name the line, the text and what was expected ----------------------------------------------

@pytest.mark.parametrize("src, line, pattern", [
    ("nop\nadd eax, [rdx+\nret", 2, r"line 2: 'add eax, \[rdx\+'.*memory operand"),
    ("nop\nnop\nfrob eax", 3, r"line 3: 'frob eax'.*unknown mnemonic 'frob'"),
    ("x:\nnop\nx:", 3, r"line 3: 'x:'.*already defined"),
    ("jmp nowhere\nret", 1, r"line 1: 'jmp nowhere'.*undefined label 'nowhere'"),
    ("nop\n.frobnicate 3", 2, r"line 2: '.frobnicate 3'.*unknown directive.*expected"),
    ("add eax, rcx", 1, r"no form of 'add' takes eax \(r32\), rcx \(r64\)"),
    ("nop\nmov eax, %ebx", 2, r"line 2: .*unknown operand '%ebx'.*expected a register"),
    ("jne 1f\nret", 1, r"line 1: 'jne 1f'.*no label `1:`"),
    (".att_syntax\nnop", 1, r"line 1.*AT&T syntax is not supported"),
    ("nop\n.long foo+", 2, r"line 2"),
])
def test_errors_name_line_and_expectation(src, line, pattern):
    with pytest.raises(EncodeError, match=pattern):
        x86gen.assemble(src)


def test_error_types():
    with pytest.raises(AsmSyntaxError):
        x86gen.assemble("nop\n.frobnicate")
    with pytest.raises(x86gen.UnknownMnemonicError):
        x86gen.assemble("nop\nfrob eax")
    with pytest.raises(x86gen.ImmediateRangeError):
        x86gen.assemble("nop\nadd al, 300")


# ---- round trip through three printers ------------------------------------------------------------------

FORMS = ICED_FORMS
GPR64 = [r for r in R.values() if r.kind == "r64" and not r.hi16]
INDEXES = [r for r in GPR64 if r.name != "rsp"]
# registers 0-15 only: forms of every encoding take them (xmm16-31/ymm16-31 only EVEX, tests/test_fuzz_iced.py draws them)
REG_CLASSES = {k: [r for r in R.values() if r.kind == k and not r.hi16] for k in sorted({r.kind for r in R.values()} - {"rip"})}
DISPS = st.one_of(st.sampled_from([0, 1, -1, 127, 128, -128, -129, 0x7FFFFFFF, -0x80000000]), st.integers(-(1 << 31), (1 << 31) - 1))


GPR32 = [r for r in R.values() if r.kind == "r32" and not r.hi16]
INDEXES32 = [r for r in GPR32 if r.name != "esp"]


@st.composite
def memory(draw, bits: int, a32: bool = False):
    """A memory operand of ``bits``; with ``a32`` a 32-bit address (eip for rip; x86gen has no 32-bit absolute one), for
    a form whose memory operand is one (movdir64b/enqcmd/enqcmds r32, m512: SDM Vol.2 MOVDIR64B)."""
    shape = draw(st.sampled_from(["base", "base+index", "rip", "index"] + ([] if a32 else ["abs"])))
    gprs, indexes, rip = (GPR32, INDEXES32, R["eip"]) if a32 else (GPR64, INDEXES, R["rip"])
    disp = draw(DISPS)
    if shape == "base": return Mem(draw(st.sampled_from(gprs)), None, 1, disp, bits)
    scale = draw(st.sampled_from([1, 2, 4, 8]))
    if shape == "base+index": return Mem(draw(st.sampled_from(gprs)), draw(st.sampled_from(indexes)), scale, disp, bits)
    if shape == "rip": return Mem(rip, None, 1, disp, bits)
    if shape == "index": return Mem(None, draw(st.sampled_from(indexes)), scale, disp, bits)
    return Mem(None, None, 1, disp, bits)


# the base register of a string instruction's (or xlat's) implicit memory operand, by its location (isa/README.md)
IMPLICIT_BASE = {"rsi": "rsi", "rdi": "rdi", "esrdi": "rdi", "rbxal": "rbx"}


def operand(form, i):
    o = form.operands[i]
    if o.loc == "fixed": return st.just(R[o.reg])
    if o.loc in IMPLICIT_BASE: return st.just(Mem(R[IMPLICIT_BASE[o.loc]], None, 1, 0, o.mem))   # [rsi], es:[rdi], [rbx]
    if o.kind == "1": return st.just(1)
    if o.kind.startswith("rel"):   # displacement from the instruction start; made absolute with the ip
        lim = 1 << (o.imm - 1)
        return st.one_of(st.integers(-lim, lim - 1), st.sampled_from([-128, 127, 129, -126])).map(lambda d: ("rel", d))
    if o.imm is not None:
        return st.one_of(*[st.integers(lo, hi) for lo, hi in form.imm_ranges(i)])
    if o.kind.startswith("vm"):   # VSIB (vm32x, vm64y, vm64z, ...): a vector index register, xmm for x, ymm for y, zmm for z
        index = [r for r in R.values() if r.kind == f"{o.kind[-1]}mm" and (form.encoding_kind == "evex" or not r.hi16)]
        return st.builds(lambda b, i, sc, d: Mem(b, i, sc, d, o.mem), st.sampled_from([*GPR64, None]), st.sampled_from(index),
                         st.sampled_from([1, 2, 4, 8]), DISPS)
    choices = []
    if o.reg is not None: choices.append(st.sampled_from(REG_CLASSES[o.reg]))
    if o.mem is not None: choices.append(memory(o.mem, form.addrsize32))
    return st.one_of(*choices)


_INSTANCE: dict[str, st.SearchStrategy] = {}


def instance(form):
    """(mnemonic, operands with ("rel", d) for branch displacements); one strategy object per form, built once
    (a new one per example made hypothesis's caches grow until a long run hit RecursionError)."""
    hit = _INSTANCE.get(form.id)
    if hit is None:
        mn = request_mnemonic(form)   # `addr32 montmul`, `data16 jmp`: a form x86gen does not choose unasked
        ops = st.tuples(*[operand(form, i) for i in range(len(form.operands))])
        if form.evex_mask_required:   # a gather/scatter: a mask k1-k7 on its first operand (k0 is #UD)
            ops = st.tuples(ops, st.integers(1, 7)).map(lambda t: (t[0][0].k(R[f"k{t[1]}"]), *t[0][1:]))
        hit = _INSTANCE[form.id] = ops.map(lambda ops: (mn, ops))
    return hit


def materialise(mn, raw, ip):
    """Operands with branch targets made absolute; the canonical bytes (`encode`'s choice) or None if not encodable."""
    ops = tuple(ip + x[1] if isinstance(x, tuple) else x for x in raw)
    if any(isinstance(x, tuple) and not 0 <= ip + x[1] < 1 << 64 for x in raw):
        return ops, None   # a branch target outside the address space (ip 0 and a backward branch)
    try: return ops, x86gen.encode(mn, *ops, ip=ip)
    except EncodeError: return ops, None   # e.g. ah with a REX prefix: not an instance


# VEX.W1 / REX.W forms whose W bit the CPU ignores in 64-bit mode for a register operand: iced and objdump
# print the 32-bit register (`vpextrb ebx, xmm4, 1` for c4e3f914e301, `movmskps eax, xmm0` for 480f50c0),
# so the text means the W0 form (the mnemonics of tests/iced_oracle.py's _GPR_WIDTH_IMMATERIAL).
R32_SPELLED = {f.id for f in x86gen.all_forms() if any(o.reg == "r64" for o in f.operands)
               and getattr(I.Mnemonic, f.mnemonic.upper(), None) in _GPR_WIDTH_IMMATERIAL}
assert "VEX_VPEXTRB_R64M8_XMM_IMM8" in R32_SPELLED and "MOVMSKPS_R64_XMM" in R32_SPELLED
def printed_meaning(form, ops, code, ip, text):
    """The bytes an external printer's text of this instance should assemble to (None: skip the instance):
    vpcmpeqq for iced's and objdump's pseudo-op of vpcmpq with predicate 0;
    the 32-bit register's form where the printer spelled an R32_SPELLED form's 64-bit register as 32-bit
    (iced does for all of them, objdump for the VEX ones but not for `movmskps rax, xmm0`). objdump shows a
    REX.W that changes nothing (`pinsrw xmm0, eax, 0` with REX.W) as a `rex.W` prefix word, which x86gen reads
    (`x86gen.selection.prefixed.encode_rex`): such an instance means the shortest REX.W form that takes its operands (its own
    form's bytes, or PEXTRW_R64_XMM_IMM8's 0F C5 for PEXTRW_R64M16_XMM_IMM8's 0F 3A 15 with a register), each form's
    bytes checked against iced by the fuzz tests and the two read alike by iced in tests/test_dialects.py."""
    if text.startswith("rex"):
        fits = [f for f in x86gen.forms_of(form.mnemonic) if f.w and f.encoding_kind == "legacy" and f.accepts(*ops)]
        return min((f(*ops, ip=ip) if f.is_branch else f(*ops) for f in fits), key=len)
    if form.mnemonic in _VPCMP_EQ and ops[-1] == 0:   # vpcmpq k, x, y, 0 is `vpcmpeqq k, x, y` to iced and objdump:
        return x86gen.encode(_VPCMP_EQ[form.mnemonic], *ops[:-1], ip=ip)   # EVEX 0F38 29 /r (tests/iced_oracle.py semantics)
    if form.mnemonic in ("pclmulqdq", "vpclmulqdq") and ops[-1] in (2, 3) and "qdq " in text and text.split()[0] != form.mnemonic:
        return None   # objdump 2.40 prints imm8 2/3 as the pseudo-op of 0x10/0x11 (vpclmullqhqdq): its text is another instruction
    if form.id in SELECTOR_TEXT and text.startswith("data16 "): return code   # objdump's `data16 lldt ax`: the o16 form
    if form.id in SELECTOR_TEXT:   # iced prints ltr's REX.W form (48 0f 00 db) as `ltr bx`: 0f 00 db, the same operation
        return encode_as_r32(form, ops, ip, lambda x: x.kind == "r16" or (x.kind == "r64" and not re.search(rf"\b{x.name}\b", text)))
    if form.id in TEXT_R32 or form.id in SREG_TEXT:   # text rules apply to any text
        return own_text_meaning(form, ops, code, ip)
    if form.id in R32_SPELLED and any(getattr(x, "kind", None) == "r64" and not re.search(rf"\b{x.name}\b", text) for x in ops):
        return encode_as_r32(form, ops, ip, lambda x: x.kind == "r64")
    return code


def encode_as_r32(form, ops, ip, which) -> bytes:
    """The bytes of ``form``'s mnemonic with the general registers ``which(reg)`` picks replaced by their 32-bit ones
    (what a text rule or a printer's spelling means: `ltr ax` is 0F 00 D8, iced's `vpextrb ebx, …` the W0 form)."""
    return x86gen.encode(form.mnemonic, *(R[_R32[x.num]] if getattr(x, "kind", None) in _GPR_KINDS and which(x) else x
                                          for x in ops), ip=ip)


_GPR_KINDS = ("r16", "r32", "r64")
_R32 = ["eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi"] + [f"r{i}d" for i in range(8, 16)]

# x86gen's own text of movmskps/pextrb/vpextrw/vpinsrw/... with a 64-bit register means the 32-bit one too
# (text._GPR64_AS_32: GNU as's encoding, no REX.W / VEX.W0, the 2-byte VEX prefix where it can): the same
# instruction, which `test_round_trip_x86gen_and_iced_text` checks iced decodes alike.
TEXT_R32 = {f.id for f in FORMS if f.mnemonic in _GPR64_AS_32 and any(o.reg == "r64" for o in f.operands)}
assert {"VEX_VPEXTRW_R64_XMM_IMM8", "MOVMSKPS_R64_XMM", "PINSRB_XMM_R64M8_IMM8"} <= TEXT_R32


# mov to/from a segment register with a 16- or 64-bit general register means its 32-bit one (text._sreg_load: GNU as's
# shorter encoding of the same instruction, 8E/8C without 66 or REX.W)
SREG_TEXT = {"MOV_R64M16_SREG", "MOV_SREG_R64M16", "MOV_SREG_RM16"}


# lldt/ltr/verr/verw/lmsw/lkgs with a 16-bit register mean its 32-bit one (text._SELECTOR_READ: GNU as's and
# llvm-mc's encoding, 0F 00 /r without 66; the operand size has no effect, SDM Vol.2 LLDT/LTR)
SELECTOR_TEXT = {f.id for f in FORMS if f.mnemonic in _SELECTOR_READ}
assert {"LTR_RM16", "LTR_R64M16", "LKGS_RM16"} <= SELECTOR_TEXT


def iced_text(form, code: bytes, ip: int) -> tuple[I.Instruction, str]:
    """(iced's last instruction of ``code``, iced's Intel text of all of it): one instruction, or two for a WAIT form,
    whose 9B iced's decoder reads as a WAIT of its own (9B DB E3 is `fwait` and `fninit`, a line each)."""
    decoded = list(I.Decoder(64, code, decoder_options(form), ip=ip))   # AMD for a 16-bit branch
    assert sum(x.len for x in decoded) == len(code) and len(decoded) <= 2 and not decoded[-1].is_invalid, code.hex()
    return decoded[-1], "\n".join(ICED.format(x) for x in decoded)


def iced_text_meaning(form, ops, code, ip, ins, text):
    """`printed_meaning` of iced's text, or None where that text does not say which instruction it is:
    iced writes the 16-bit iret/pushf/popf without a suffix, which GNU as (and x86gen's text) read as the 64-bit-mode
    default (tests/iced_oracle.py ICED_UNSUFFIXED_16), and a 16-bit branch (66 70 cb) without data16, the text of the
    64-bit one (x86gen's own text of these, `data16 jo 0x…`, is checked)."""
    if ins.code in ICED_UNSUFFIXED_16 or (form.opsize16 and form.is_branch): return None
    return printed_meaning(form, ops, code, ip, text)


def own_text_meaning(form, ops, code, ip):
    """The bytes x86gen's own text of this instance (`str(Instruction(...))`) should assemble to."""
    if form.id in SREG_TEXT:
        return encode_as_r32(form, ops, ip, lambda x: x.kind in ("r16", "r64"))
    if form.id in SELECTOR_TEXT:
        return encode_as_r32(form, ops, ip, lambda x: x.kind == "r16")
    if form.id not in TEXT_R32: return code
    return encode_as_r32(form, ops, ip, lambda x: x.kind == "r64")


def test_push_negative_immediate_text():
    """push imm8/imm32 sign-extend to 64 bits: iced and objdump print -1 as 0xffffffffffffffff."""
    assert x86gen.assemble("push 0xffffffffffffffff") == bytes.fromhex("6aff")
    assert x86gen.assemble("push 0xffffffff80000000") == bytes.fromhex("6800000080")


def iced_formatter() -> I.Formatter:
    """iced's Intel formatter: memory sizes always, 0x hex, rip-relative as [rip+disp]; the rest default
    (so `short` branch hints and pseudo-ops such as vcmpltps stay in)."""
    f = I.Formatter(I.FormatterSyntax.INTEL)
    f.hex_prefix, f.hex_suffix = "0x", ""
    f.memory_size_options = I.MemorySizeOptions.ALWAYS
    f.rip_relative_addresses = True
    return f


ICED = iced_formatter()
IPS = st.sampled_from([0, 0x1000, 0x401000, 0x7FFF_0000_0000])


# In the CI profile a few examples per form (every form's text also goes through
# test_every_form_round_trips_deterministically, and every form is fuzzed against iced in tests/test_fuzz_iced.py);
# the profile's number otherwise.
TEXT_EXAMPLES = 5 if settings.get_current_profile_name() == "ci" else settings.default.max_examples


@pytest.mark.parametrize("form_id", [f.id for f in FORMS])
@settings(max_examples=TEXT_EXAMPLES)
@given(data=st.data())
def test_round_trip_x86gen_and_iced_text(form_id, data):
    """x86gen's text and iced's Intel text of an instance of this form assemble to the same bytes."""
    form = x86gen.get_form(form_id)
    ip = data.draw(IPS)
    mn, raw = data.draw(instance(form))
    ops, code = materialise(mn, raw, ip)
    assume(code is not None)
    text = str(Instruction(mn, *ops))
    own = own_text_meaning(form, ops, code, ip)
    assert x86gen.assemble(text, ip) == own, text
    assert x86gen.assemble(text.upper(), ip) == own
    if own != code:
        assert semantics(I.Decoder(64, own, ip=ip).decode()) == semantics(I.Decoder(64, code, ip=ip).decode())
    ins, itext = iced_text(form, code, ip)
    expect = iced_text_meaning(form, ops, code, ip, ins, itext)
    if expect is not None:
        assert x86gen.assemble(itext, ip) == expect, f"iced: {itext!r}"


def objdump_lines(code: bytes, vma: int) -> dict[int, str]:
    """{address: instruction text} from `objdump -D -M intel` of raw bytes loaded at ``vma``."""
    import os
    import tempfile
    fd, path = tempfile.mkstemp(suffix=".bin")
    try:
        with os.fdopen(fd, "wb") as fh: fh.write(code)
        out = subprocess.run(["objdump", "-D", "-w", "-b", "binary", "-m", "i386:x86-64", "-M", "intel",
                              f"--adjust-vma={vma:#x}", path], check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(path)
    res = {}
    for m in re.finditer(r"^\s*([0-9a-f]+):\t[0-9a-f ]+\t(.*)$", out, re.M):
        res[int(m.group(1), 16)] = m.group(2).strip()
    return res


from test_dialects import OBJDUMP_GAPS  # noqa: E402 - the forms whose bytes objdump cannot print as text

CHUNK = 48
CHUNKS = [FORMS[i:i + CHUNK] for i in range(0, len(FORMS), CHUNK)]


# One objdump process per example: in the CI profile a few examples per chunk (every form's objdump text is
# also checked, deterministically, by tests/test_dialects.py), the profile's number otherwise.
OBJDUMP_EXAMPLES = 4 if settings.get_current_profile_name() == "ci" else settings.default.max_examples


@needs_binutils
@pytest.mark.parametrize("chunk", range(len(CHUNKS)), ids=lambda k: f"{CHUNKS[k][0].id}..")
@settings(max_examples=OBJDUMP_EXAMPLES)
@given(data=st.data())
def test_round_trip_objdump_text(chunk, data):
    """One instance of each form of the chunk, laid out back to back, disassembled by GNU objdump;
    every line of objdump's text assembles to that instruction's bytes."""
    ip0 = ip = data.draw(IPS)
    items = []
    for form in CHUNKS[chunk]:
        if form.id in OBJDUMP_GAPS: continue   # objdump 2.40 cannot print these bytes (tests/test_dialects.py)
        mn, raw = data.draw(instance(form))
        ops, code = materialise(mn, raw, ip)
        if code is None: continue
        items.append((ip, code, form, ops))
        ip += len(code)
    blob = b"".join(c for _, c, _, _ in items)
    texts = objdump_lines(blob, ip0)
    for at, code, form, ops in items:
        assert at in texts, f"objdump did not start an instruction at {at:#x} ({form.id} {ops})"
        expect = printed_meaning(form, ops, code, at, texts[at])
        if expect is not None:
            assert x86gen.assemble(texts[at], at) == expect, f"objdump: {texts[at]!r} for {code.hex()} ({form.id})"


VSIB_INDEX = {"x": "xmm", "y": "ymm", "z": "zmm"}   # vm32x, vm64y, vm32z: the index register's class


def test_every_form_round_trips_deterministically():
    """A fixed instance of every form (registers/first memory shape/low immediates) through x86gen's and iced's text."""
    bad = []
    for form in FORMS:
        ops = []
        for i, o in enumerate(form.operands):
            if o.loc == "fixed": ops.append(R[o.reg])
            elif o.loc in IMPLICIT_BASE: ops.append(Mem(R[IMPLICIT_BASE[o.loc]], None, 1, 0, o.mem))
            elif o.kind == "1": ops.append(1)
            elif o.kind.startswith("rel"): ops.append(0x1000 + 0x40)
            elif o.imm is not None: ops.append(form.imm_ranges(i)[-1][1])
            elif o.kind == "kp1": ops.append(operand_registers(o.kind)[1])   # vp2intersectd/q's mask-register pair: k2 (even)
            elif o.reg is not None: ops.append(REG_CLASSES[o.reg][(3 + i) % len(REG_CLASSES[o.reg])])
            elif o.kind.startswith("vm"): ops.append(Mem(R["rdi"], REG_CLASSES[VSIB_INDEX[o.kind[-1]]][7], 4, 0x10, o.mem))
            elif form.addrsize32: ops.append(Mem(R["edi"], R["esi"], 4, 0x10, o.mem))   # (enqcmd r32: a 32-bit address)
            elif o.kind == "mib": ops.append(Mem(R["rdi"], R["rsi"], 1, 0x10, o.mem))   # MPX: the index unscaled (SDM BNDLDX)
            else: ops.append(Mem(R["rdi"], R["rsi"], 4, 0x10, o.mem))
        if form.evex_mask_required: ops[0] = ops[0].k(R["k1"])   # a gather/scatter: k0 is #UD
        code = x86gen.encode(request_mnemonic(form), *ops, ip=0x1000)
        ins, itext = iced_text(form, code, 0x1000)
        for text, expect in ((str(Instruction(request_mnemonic(form), *ops)), own_text_meaning(form, ops, code, 0x1000)),
                             (itext, iced_text_meaning(form, ops, code, 0x1000, ins, itext))):
            if expect is None: continue
            try:
                if x86gen.assemble(text, 0x1000) != expect: bad.append((form.id, text))
            except EncodeError as ex:
                bad.append((form.id, text, str(ex)))
    assert not bad, "\n".join(map(str, bad))
