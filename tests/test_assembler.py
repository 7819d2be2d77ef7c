"""x86gen.Assembler: labels, branch relaxation, RIP-relative constants, data, alignment, listing.

Expected bytes come from GNU as (`as --64`, `.intel_syntax noprefix`, copied from `objdump -d`) or
from iced-x86 (decoder/BlockEncoder), never from x86gen itself.
"""
from __future__ import annotations

import struct

import iced_x86 as I
import pytest
from hypothesis import given
from hypothesis import strategies as st

import x86gen
from x86gen import Assembler, EncodeError, Label, Mem, OperandError, mem
from x86gen.registers import eax, ecx, edi, r9, rax, rcx, rdi, rip, rsi, xmm0, xmm1, ymm0, ymm1, ymm2

JCC = ["jo", "jno", "jb", "jae", "je", "jne", "jbe", "ja", "js", "jns", "jp", "jnp", "jl", "jge", "jle", "jg"]


def nops(a: Assembler, n: int) -> None:
    """n bytes of one-byte nops (a known, fixed length between branch and target)."""
    for _ in range(n): a.nop()


def decode(code: bytes, ip: int = 0) -> list[I.Instruction]:
    out = list(I.Decoder(64, code, ip=ip))
    assert all(i.code != I.Code.INVALID for i in out), code.hex()
    assert sum(i.len for i in out) == len(code)
    return out


def iced_block_len(code: bytes, ip: int) -> int:
    """Length of the same program laid out by iced's BlockEncoder (branches re-sized by iced)."""
    be = I.BlockEncoder(64)
    be.add_many(decode(code, ip))
    return len(be.encode(ip))


# ---- basics ---------------------------------------------------------------------------------------


def test_sum_loop_matches_gnu_as():
    # GNU as: xor eax,eax; test edi,edi; jle done; loop: add eax,edi; dec edi; jne loop; done: ret
    a = Assembler()
    loop, done = a.label("loop"), a.label("done")
    a.xor(eax, eax); a.test(edi, edi); a.jle(done)
    a.bind(loop); a.add(eax, edi); a.dec(edi); a.jne(loop)
    a.bind(done); a.ret()
    assert a.assemble().hex() == "31c085ff7e0601f8ffcf75fac3"
    assert a.finalize() == bytes(a) == a.assemble()
    assert a.address_of(loop) == 6 and loop.address == 6 and a.address_of("done") == 12
    assert a.size == 13


def test_methods_emit_and_aliases():
    a = Assembler()
    a.vaddps(ymm0, ymm1, mem(rdi, size=256))
    a.emit("VADDPS", ymm0, ymm1, ymm2)
    a.and_(eax, 1); a.emit("and", eax, 1); a.or_(eax, ecx); a.not_(rax)
    top = a.here("top")
    a.jz(top); a.emit("jnz", top); a.cmovz(eax, ecx); a.setnz(x86gen.al)
    code = a.assemble()
    expect = x86gen.assemble("vaddps ymm0, ymm1, ymmword ptr [rdi]\nvaddps ymm0, ymm1, ymm2\nand eax, 1\nand eax, 1\n"
                             "or eax, ecx\nnot rax\ntop: je top\njne top\ncmove eax, ecx\nsetne al")
    assert code == expect
    ins = decode(code)
    assert [i.mnemonic for i in ins][-4:] == [I.Mnemonic.JE, I.Mnemonic.JNE, I.Mnemonic.CMOVE, I.Mnemonic.SETNE]
    with pytest.raises(x86gen.UnknownMnemonicError):
        a.emit("vaddpz", ymm0, ymm1, ymm2)


def test_label_api_errors():
    a, b = Assembler(), Assembler()
    lab = a.label("x")
    assert isinstance(lab, Label) and lab.sig == "l" and str(lab) == "x" and not lab.bound
    assert a.label("x") is lab                      # unbound name: the same forward label
    a.bind(lab)
    with pytest.raises(EncodeError, match="bound twice"):
        a.bind(lab)
    with pytest.raises(EncodeError, match="already defined"):
        a.label("x")
    with pytest.raises(OperandError, match="another Assembler"):
        b.jmp(lab)
    c = Assembler()
    c.jmp(c.label("nowhere"))
    with pytest.raises(EncodeError, match="undefined label 'nowhere'"):
        c.assemble()
    auto = Assembler().label()
    assert auto.name.startswith(".L")


def test_jmp_call_indirect_and_labels():
    a = Assembler()
    f = a.label("f")
    a.call(f); a.jmp(rax); a.call(mem(rdi, disp=8, size=64)); a.jmp("f")
    a.bind(f); a.ret()
    ins = decode(a.assemble())
    assert [i.code for i in ins] == [I.Code.CALL_REL32_64, I.Code.JMP_RM64, I.Code.CALL_RM64, I.Code.JMP_REL8_64, I.Code.RETNQ]
    assert ins[0].near_branch_target == ins[-1].ip == ins[3].near_branch_target


def test_branch_to_absolute_address_uses_base():
    a = Assembler(base=0x401000)
    a.jmp(0x401000); a.call(0x402000)
    ins = decode(a.assemble(), 0x401000)
    assert ins[0].code == I.Code.JMP_REL8_64 and ins[0].near_branch_target == 0x401000
    assert ins[1].near_branch_target == 0x402000


# ---- relaxation at the rel8 limits ------------------------------------------------------------------

@pytest.mark.parametrize("mn", ["jmp", "je", "jl", "jg"])
@pytest.mark.parametrize("gap, short", [(0, True), (126, True), (127, True), (128, False), (129, False), (300, False)])
def test_forward_branch_limit(mn, gap, short):
    """A forward branch over `gap` bytes: displacement = gap for rel8, so 127 is the last short one."""
    a = Assembler()
    t = a.label()
    getattr(a, mn)(t); nops(a, gap); a.bind(t); a.ret()
    code = a.assemble()
    ins = decode(code)
    blen = 2 if short else (5 if mn == "jmp" else 6)
    assert ins[0].len == blen
    assert ins[0].near_branch_target == blen + gap == ins[-1].ip
    assert len(code) == blen + gap + 1


@pytest.mark.parametrize("mn", ["jmp", "jne", "jle"])
@pytest.mark.parametrize("gap, short", [(0, True), (125, True), (126, True), (127, False), (128, False)])
def test_backward_branch_limit(mn, gap, short):
    """A backward branch to `gap` bytes before it: displacement = -(gap + 2) for rel8, -128 at gap 126."""
    a = Assembler()
    t = a.here()
    nops(a, gap); getattr(a, mn)(t); a.ret()
    ins = decode(a.assemble())
    br = ins[-2]
    assert br.len == (2 if short else (5 if mn == "jmp" else 6))
    assert br.near_branch_target == 0


def test_cascading_growth():
    """Growing one branch pushes another over the limit: relaxation must iterate."""
    a = Assembler()
    t1, t2 = a.label("t1"), a.label("t2")
    a.jmp(t2)            # over 123 nops + the je: 125 + 2 = fits only while je is short
    a.je(t1)
    nops(a, 123)
    a.bind(t2)
    nops(a, 4)
    a.bind(t1)
    a.ret()
    # je: displacement 123 + 4 = 127 -> short; jmp: 2 + 123 = 125 -> short.
    assert [s for _, _, s in a.branch_sizes()] == [2, 2]
    b = Assembler()
    t1, t2 = b.label("t1"), b.label("t2")
    b.jmp(t2); b.je(t1); nops(b, 123); b.bind(t2); nops(b, 5); b.bind(t1); b.ret()
    # je: 128 -> near (6 bytes); then jmp: 6 + 123 = 129 -> near too.
    assert [s for _, _, s in b.branch_sizes()] == [5, 6]
    ins = decode(b.assemble())
    assert ins[0].near_branch_target == b.address_of("t2") and ins[1].near_branch_target == b.address_of("t1")
    assert b.relaxation_passes >= 3


def test_branch_sizes_match_gnu_as_at_limits():
    """Programs built around the limits, compared with bytes produced by GNU as (pasted)."""
    # as: `jmp 1f; .fill 127,1,0x90; 1: ret` -> eb 7f ...; with 128 -> e9 80 00 00 00
    a = Assembler(); t = a.label(); a.jmp(t); nops(a, 127); a.bind(t); a.ret()
    assert a.assemble()[:2] == bytes.fromhex("eb7f")
    a = Assembler(); t = a.label(); a.jmp(t); nops(a, 128); a.bind(t); a.ret()
    assert a.assemble()[:5] == bytes.fromhex("e980000000")
    # as: `1: .fill 126,1,0x90; jne 1b` -> 75 80; with 127 -> 0f 85 7b ff ff ff
    a = Assembler(); t = a.here(); nops(a, 126); a.jne(t)
    assert a.assemble()[-2:] == bytes.fromhex("7580")
    a = Assembler(); t = a.here(); nops(a, 127); a.jne(t)
    assert a.assemble()[-6:] == bytes.fromhex("0f857bffffff")


def _random_program(draw_int, draw_choice, n_labels, n_items):
    a = Assembler(base=0x10000)
    labels = [a.label() for _ in range(n_labels)]
    pending = list(labels)
    fillers = [lambda: a.nop(), lambda: a.add(eax, ecx), lambda: a.add(rax, 1), lambda: a.add(ecx, 1000),
               lambda: a.add(rcx, mem(rdi, rsi, 4, 1000)), lambda: a.mov(rax, 0x1122334455667788),
               lambda: a.vaddps(ymm0, ymm1, mem(r9, disp=-300, size=256))]
    for _ in range(n_items):
        r = draw_int(0, 99)
        if r < 12 and pending: a.bind(pending.pop(draw_int(0, len(pending) - 1)))
        elif r < 40: getattr(a, draw_choice(JCC + ["jmp"]))(draw_choice(labels))
        elif r < 44: a.call(draw_choice(labels))
        else: draw_choice(fillers)()
    for lab in pending: a.bind(lab)
    a.ret()
    return a


@given(st.data())
def test_relaxation_vs_iced_block_encoder(data):
    """Random programs: every branch reaches its label, and the code is never longer than iced's BlockEncoder."""
    n_labels = data.draw(st.integers(1, 8))
    n_items = data.draw(st.integers(1, 160))
    a = _random_program(lambda lo, hi: data.draw(st.integers(lo, hi)), lambda xs: data.draw(st.sampled_from(xs)), n_labels, n_items)
    code = a.assemble()
    ins = decode(code, 0x10000)
    targets = {a.address_of(lab) for lab in a._labels}
    for i in ins:
        if i.is_jcc_short_or_near or i.is_jmp_short_or_near or i.is_call_near:
            assert i.near_branch_target in targets
        if i.is_jcc_short_or_near or i.is_jmp_short_or_near:
            disp = i.near_branch_target - i.next_ip
            if i.len == 2:
                assert -128 <= disp <= 127
            else:
                # shortest that reaches: made short (everything else as laid out), it would not reach.
                # Forward: target and end move together, the displacement stays; backward: only the end moves.
                as_short = disp if disp >= 0 else disp + i.len - 2
                assert not -128 <= as_short <= 127, f"{i} could be short"
    assert len(code) <= iced_block_len(code, 0x10000)


def test_200_instruction_loop_body_same_length_as_iced():
    """A loop whose body is 200 instructions: the back branch needs rel32; iced's BlockEncoder agrees on the length."""
    a = Assembler()
    top, done = a.label("top"), a.label("done")
    a.xor(eax, eax); a.test(rdi, rdi); a.je(done)
    a.bind(top)
    for i in range(200):
        a.add(rax, (i % 7) + 1)                  # 4 bytes each: 800-byte body
    a.dec(rdi); a.jne(top)
    a.bind(done); a.ret()
    code = a.assemble()
    assert dict((m, s) for m, _, s in a.branch_sizes()) == {"je": 6, "jne": 6}
    assert len(code) == iced_block_len(code, 0)
    ins = decode(code)
    assert ins[2].near_branch_target == len(code) - 1 and ins[-2].near_branch_target == a.address_of(top)


# ---- RIP-relative labels, data, alignment -------------------------------------------------------------

def test_rip_relative_constant_pool():
    a = Assembler()
    c1, c2 = a.label("c1"), a.label("c2")
    a.vmovsd(xmm0, c1.mem(64))
    a.vaddsd(xmm0, xmm0, Mem(rip, size=64, label=c2))
    a.cmp(c1.mem("dword", disp=4), 5)            # trailing imm8: disp counts from the end of the instruction
    a.lea(rax, c2)                               # a bare label where memory is meant
    a.ret()
    a.align(8)
    a.bind(c1); a.dq(1.5)
    a.bind(c2); a.dq(2.25)
    code = a.assemble()
    ins = decode(code[:a.address_of(c1)])
    assert ins[0].memory_displacement == a.address_of(c1)
    assert ins[1].memory_displacement == a.address_of(c2)
    assert ins[2].memory_displacement == a.address_of(c1) + 4 and ins[2].immediate(1) == 5
    assert ins[3].memory_displacement == a.address_of(c2) and ins[3].code == I.Code.LEA_R64_M
    off = a.address_of(c1)
    assert off % 8 == 0 and struct.unpack_from("<dd", code, off) == (1.5, 2.25)


def test_rip_label_with_is4_and_imm():
    a = Assembler()
    c = a.label("c")
    a.vblendvps(ymm0, ymm1, c.mem(256), ymm2)    # is4 byte after the displacement
    a.vcmpps(ymm0, ymm1, c.mem(256), 1)          # imm8 after the displacement
    a.ret(); a.align(32); a.bind(c); a.dd(*range(8))
    ins = decode(a.assemble()[:a.address_of(c)])
    assert ins[0].memory_displacement == a.address_of(c) == ins[1].memory_displacement


def test_label_with_a_base_register_is_its_absolute_address():
    """``c[rdi+8]``: the label's address (base included) plus the addend in a disp32, as GNU as encodes
    ``mov rax, QWORD PTR [rdi+0x1008]`` (48 8b 87 08 10 00 00); an address beyond the signed disp32 is an error."""
    a = Assembler(base=0x1000)
    c = a.here("c")
    a.mov(rax, Mem(rdi, size=64, disp=8, label=c))
    assert a.assemble() == bytes.fromhex("488b8708100000")
    a = Assembler(base=0x7FFFFFFC)
    c = a.here("c")
    a.mov(rax, Mem(rdi, size=64, disp=8, label=c))
    with pytest.raises(x86gen.ImmediateRangeError, match="does not fit in 32 bits"):
        a.assemble()
    with pytest.raises(OperandError, match="64-bit base and index"):
        Assembler().mov(eax, Mem(edi, size=32, label=c))


def test_data_directives():
    a = Assembler(base=0x1000)
    t = a.here("t")
    a.db(1, 255, -1, b"ab", "c"); a.dw(0x1234, -2); a.dd(0xDEADBEEF, 1.5); a.dq(-1, 2.5, t); a.bytes(b"\x00\x01")
    code = a.assemble()
    assert code == (bytes([1, 255, 255]) + b"abc" + struct.pack("<Hh", 0x1234, -2) + struct.pack("<If", 0xDEADBEEF, 1.5)
                    + struct.pack("<qdQ", -1, 2.5, 0x1000) + b"\x00\x01")
    with pytest.raises(x86gen.ImmediateRangeError):
        a.db(256)
    with pytest.raises(OperandError):
        a.dw(1.5)


def test_align_nops_fill_and_max_skip():
    a = Assembler()
    a.ret(); a.align(16); a.ret()
    code = a.assemble()
    assert len(code) == 17 and code[16] == 0xC3
    assert all(i.mnemonic == I.Mnemonic.NOP for i in decode(code[1:16]))
    b = Assembler(); b.ret(); b.align(8, fill=0xCC); b.ret()
    assert b.assemble() == b"\xc3" + b"\xcc" * 7 + b"\xc3"
    c = Assembler(); c.ret(); c.align(16, max_skip=10); c.ret()       # would need 15 bytes: skipped
    assert c.assemble() == b"\xc3\xc3"
    d = Assembler(base=0x1004); d.align(16); d.ret()                  # absolute alignment
    assert len(d.assemble()) == 13
    with pytest.raises(OperandError):
        Assembler().align(12)


def test_align_and_branches_together():
    """Alignment between a branch and its target: padding shrinks when the branch grows; still correct."""
    a = Assembler()
    t = a.label()
    a.jmp(t); nops(a, 110); a.align(32); nops(a, 10); a.bind(t); a.ret()
    ins = decode(a.assemble())
    assert ins[0].near_branch_target == a.address_of(t)


# ---- listing ---------------------------------------------------------------------------------------

def test_listing_and_text_round_trip():
    a = Assembler(listing=True)
    loop, c = a.label("loop"), a.label("cst")
    a.vbroadcastss(ymm0, c.mem(32))
    a.bind(loop)
    a.vaddps(ymm1, ymm1, ymm0); a.dec(ecx); a.jne(loop)
    a.ret(); a.align(4); a.bind(c); a.dd(1.0)
    lst = a.listing()
    lines = lst.splitlines()
    assert lines[0].split()[:2] == ["00000000", "c4"] and lines[0].endswith("vbroadcastss ymm0, dword ptr [rip+cst]")
    assert "loop:" in lines and "cst:" in lines
    assert any(ln.endswith("jne loop") and " 75 " in ln for ln in lines)
    assert str(a) == lst
    assert x86gen.assemble(a.text()) == a.assemble()
    for addr, b, text in a.lines():
        if addr is not None and not text.startswith((".", "d")):
            assert len(b) == decode(b)[0].len


def _listing_program(a: Assembler) -> None:
    loop, c = a.label("loop"), a.label("cst")
    a.vbroadcastss(ymm0, c.mem(32))
    a.bind(loop)
    a.add(eax, 1); a.vaddps(ymm1, ymm1, ymm0); a.emit("add", eax, edi); a.dec(ecx); a.jne(loop)
    a.ret(); a.align(4); a.bind(c); a.dd(1.0)


def test_listing_is_kept_only_when_asked_for():
    """An Assembler keeps the mnemonic and operands of what it appends only with listing=True; without, the same
    program gives the same bytes, lines/listing/text raise `NoListingError` and str() is the repr."""
    a, b = Assembler(), Assembler(listing=True)
    _listing_program(a); _listing_program(b)
    code = a.assemble()
    assert code == b.assemble()
    # iced-x86 decodes every instruction, and the jne reaches the loop's first instruction (the add)
    ins = []
    for i in I.Decoder(64, code):
        ins.append(i)
        if i.mnemonic == I.Mnemonic.RET: break
    assert [i.mnemonic for i in ins][-2:] == [I.Mnemonic.JNE, I.Mnemonic.RET]
    assert ins[-2].near_branch_target == ins[1].ip and ins[-2].len == 2
    for call in (a.lines, a.listing, a.text):
        with pytest.raises(x86gen.NoListingError, match="listing=True"): call()
    assert str(a) == repr(a) and "items" in str(a)
    assert [t for _a, _b, t in b.lines()][:3] == ["vbroadcastss ymm0, dword ptr [rip+cst]", "loop:", "add eax, 0x1"]


def test_parse_program_listing_and_the_line_cache():
    """Program text parsed without a listing (x86gen.assemble) and then with one (parse_program) gives the full
    listing: the line cache keeps each line's listing record either way."""
    from x86gen.program_text import assemble_program, parse_program
    text = "top:\n  add eax, 1\n  imul ecx, edx, 7\n  movsb\n  dec ecx\n  jne top\n  ret\n"
    x86gen.text.clear_caches()
    code = assemble_program(text)
    a = parse_program(text)
    assert a.assemble() == code == x86gen.assemble(text)
    assert [t for _a, _b, t in a.lines()] == ["top:", "add eax, 0x1", "imul ecx, edx, 0x7",
                                               "movsb byte ptr [rdi], byte ptr [rsi]", "dec ecx", "jne top", "ret"]
    assert code.hex() == "83c0016bca07a4ffc975f5c3"   # GNU as 2.40 (as --64, objcopy -O binary)
    assert parse_program(text, listing=False).assemble() == code
    with pytest.raises(x86gen.NoListingError): parse_program(text, listing=False).lines()


def test_reuse_after_assemble():
    a = Assembler(listing=True)
    a.mov(eax, 1)
    first = a.assemble()
    assert a.size == 5
    a.ret()
    assert a.assemble() == first + b"\xc3" and a.size == 6
    t = a.here("t")
    a.jmp(t)
    assert a.size == 8 and len(a.lines()) == 4 and a.address_of(t) == 6
    a.base = 0x1000
    assert a.address_of(t) == 0x1006


def test_rcx_operands_and_misc():
    a = Assembler()
    a.mov(rcx, rax); a.shl(eax, x86gen.cl); a.imul(eax, ecx, 10); a.push(rax); a.pop(rcx); a.ret(8)
    assert a.assemble() == x86gen.assemble("mov rcx, rax\nshl eax, cl\nimul eax, ecx, 10\npush rax\npop rcx\nret 8")
    assert xmm1 is x86gen.xmm1


def test_five_operand_instruction_in_a_program():
    """vpermil2ps takes five operands (four registers and the is5 selector): its Assembler record has room for all of
    them (assembler.TEXT_LEN), through the generated method, `emit` and text, and the listing shows all five."""
    R = x86gen.REGISTERS
    ops = (R["xmm1"], R["xmm2"], R["xmm3"], R["xmm4"], 2)
    a = x86gen.Assembler(listing=True)
    a.vpermil2ps(*ops)
    a.emit("vpermil2ps", *ops)
    a.nop()
    want = "c4e36948cb42" * 2 + "90"   # llvm-mc 14: vpermil2ps xmm1, xmm2, xmm3, xmm4, 2
    assert a.assemble().hex() == want
    assert [line.split(None, 7)[-1] for line in a.listing().splitlines()[:2]] == ["vpermil2ps xmm1, xmm2, xmm3, xmm4, 0x2"] * 2
    assert x86gen.assemble("vpermil2ps xmm1, xmm2, xmm3, xmm4, 2\nnop").hex() == want[12:]
