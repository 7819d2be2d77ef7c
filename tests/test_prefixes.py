"""Prefixes (issue 10): lock, xacquire/xrelease, rep, bnd, notrack, segment overrides and {vex3}.

Which forms take which prefix is checked against iced-x86's `OpCodeInfo.can_use_*_prefix` for every form of the
table; the bytes of prefixed instructions against iced-x86's encoder (the instruction x86gen encodes without the
prefix, decoded by iced, given the prefix and encoded again) and against GNU as (up to the order of the legacy
prefixes, which the CPU ignores: SDM Vol.2 2.1.1); each refusal by its error class.
"""
from __future__ import annotations

import random

import gnu_oracle
import iced_x86 as I
import pytest
from iced_oracle import ICED_FORMS, decode_one, decoder_options, reencode

import x86gen
from x86gen import PrefixError, mem
from x86gen.prefixes import allowed
from x86gen.registers import REGISTERS as R

pytestmark = pytest.mark.xdist_group("prefixes")

ICED_FLAGS = {"lock": "can_use_lock_prefix", "xacquire": "can_use_xacquire_prefix", "xrelease": "can_use_xrelease_prefix",
              "rep": "can_use_rep_prefix", "repne": "can_use_repne_prefix", "bnd": "can_use_bnd_prefix",
              "notrack": "can_use_notrack_prefix"}
# where x86gen takes more than iced's OpCodeInfo says: `rep ret` (F3 C3), which GNU as accepts and iced encodes, and
# repne on every string instruction (GNU as 2.40: `repne lodsb` is F2 AC; iced decodes it with has_repne_prefix)
EXTRA = {"RETNQ": {"rep"}, "RETNQ_IMM16": {"rep"}, "JMP_REL8_64": {"bnd"},   # (GNU as 2.40: `bnd jmp L` short is F2 EB cb)
         "RETNW": {"rep"}, "RETNW_IMM16": {"rep"},   # (GNU as 2.40: `rep data16 ret` is 66 F3 C3)
         **dict.fromkeys("""MOVSB_M8_M8 MOVSW_M16_M16 MOVSD_M32_M32 MOVSQ_M64_M64 LODSB_AL_M8 LODSW_AX_M16 LODSD_EAX_M32
            LODSQ_RAX_M64 STOSB_M8_AL STOSW_M16_AX STOSD_M32_EAX STOSQ_M64_RAX INSB_M8_DX INSW_M16_DX INSD_M32_DX OUTSB_DX_M8
            OUTSW_DX_M16 OUTSD_DX_M32""".split(), {"repne"}),
         # gcc's `rep bsf` / `rep bsr` (GNU as 2.40: F3 before the form's bytes, 66 before F3: `rep bsf ax, cx` is 66 F3 0F BC C1)
         **dict.fromkeys("BSF_R16_RM16 BSF_R32_RM32 BSF_R64_RM64 BSR_R16_RM16 BSR_R32_RM32 BSR_R64_RM64".split(), {"rep"})}


def test_allowed_prefixes_are_icedx86s():
    bad = []
    for f in ICED_FORMS:
        info = I.OpCodeInfo(getattr(I.Code, f.id))
        want = {w for w, a in ICED_FLAGS.items() if getattr(info, a)} | EXTRA.get(f.id, set())
        if set(allowed(f.id)) != want: bad.append((f.id, sorted(want), sorted(allowed(f.id))))
    assert not bad


def _random_operands(form, rng: random.Random) -> tuple:
    ops = []
    for o in form.operands:
        if o.mem is not None and o.loc == "rm":
            base = rng.choice([r for r in ("rax", "rbx", "rsp", "rbp", "r12", "r13", "r15", None)])
            index = rng.choice([None, "rcx", "r9", "rbp"]) if base != "rip" else None
            disp = rng.choice([0, 1, -0x80, 0x7f, 0x1234, -0x80000000])
            ops.append(mem(base, index, rng.choice((1, 2, 4, 8)) if index else 1, disp, size=o.mem))
        elif o.reg in ("r8", "r16", "r32", "r64"):
            ops.append(rng.choice([r for r in R.values() if r.kind == o.reg and not getattr(r, "high", False) and not r.hi16]))
        elif o.imm is not None:
            ops.append(rng.randrange(0, 1 << min(o.imm, 8)) - (1 << (min(o.imm, 8) - 1)))
        else: pytest.skip(f"{form.id}: operand {o}")
    return tuple(ops)


ICED_SET = {"lock": "has_lock_prefix", "xacquire": "has_xacquire_prefix", "xrelease": "has_xrelease_prefix",
            "rep": "has_repe_prefix", "repne": "has_repne_prefix", "bnd": "has_repne_prefix"}
SEGS = {"es": I.Register.ES, "cs": I.Register.CS, "fs": I.Register.FS, "gs": I.Register.GS, "ss": I.Register.SS}


def _iced_with(plain: bytes, words: list[str], seg: str | None, options: int = 0) -> bytes:
    """iced's bytes for ``plain`` (decoded with ``options``: `iced_oracle.decoder_options`) with the prefix ``words`` and
    segment override ``seg``."""
    ins = decode_one(plain, 0, options)
    for w in words:
        if w == "notrack": ins.segment_prefix = I.Register.DS
        else: setattr(ins, ICED_SET[w], True)
    if seg: ins.segment_prefix = SEGS[seg]
    return _rip_kept(ins, len(plain))


def _rip_kept(ins, plain_len: int, encoder=None) -> bytes:
    """iced's bytes for ``ins`` at ip 0, a RIP-relative operand kept as the same [rip+disp] (iced keeps the absolute
    target, which the longer instruction would move: its target is moved by the prefixes' length)."""
    def enc():
        if ins.encoding == I.EncodingKind.D3NOW and not encoder: return reencode(ins, 0)   # (iced's Encoder drops REX there)
        e = encoder() if encoder else I.Encoder(64)
        e.encode(ins, 0)
        return e.take_buffer()
    out = enc()
    if ins.is_ip_rel_memory_operand and len(out) != plain_len:
        ins.memory_displacement = (ins.memory_displacement + len(out) - plain_len) & ((1 << 64) - 1)
        out = enc()
    return out


LOCKABLE = [f for f in ICED_FORMS if "lock" in allowed(f.id)]


@pytest.mark.parametrize("form", LOCKABLE, ids=lambda f: f.id)
def test_lock_hle_and_segments_like_iced(form):
    """lock, xacquire lock, xrelease lock, and a segment override with them, on random operands of every lockable form."""
    rng = random.Random(form.id)
    for _ in range(6):
        ops = _random_operands(form, rng)
        plain = x86gen.encode(form.mnemonic, *ops)   # (the form encode chooses: 83 /0 ib for a small immediate)
        for words in (["lock"], ["xacquire", "lock"], ["xrelease", "lock"]):
            if not set(words) <= allowed(form.id): continue
            seg = rng.choice([None, "fs", "gs", "es", "cs"])
            xops = (ops[0].with_segment(seg), *ops[1:]) if seg else ops
            got = x86gen.encode(" ".join(words) + " " + form.mnemonic, *xops)
            assert got == _iced_with(plain, words, seg), (form.id, words, seg, ops)


HLE_MOV = [f for f in ICED_FORMS if "xrelease" in allowed(f.id) and "lock" not in allowed(f.id)]


@pytest.mark.parametrize("form", HLE_MOV, ids=lambda f: f.id)
def test_xrelease_mov_like_iced(form):
    rng = random.Random(form.id)
    for _ in range(6):
        ops = _random_operands(form, rng)
        assert x86gen.encode("xrelease mov", *ops) == _iced_with(x86gen.encode("mov", *ops), ["xrelease"], None)


# (text, iced-x86: the instruction by its Code with prefixes set) -> bytes from iced's encoder
def _iced(code, *ops, **flags) -> bytes:
    """iced-x86's bytes for `Instruction.create_*` of ``code`` with operands given as dicts (memory: MemoryOperand
    arguments), ("i", value) immediates or registers, and the instruction's prefix attributes set from ``flags``."""
    M = I.MemoryOperand
    args, kinds = [], []
    for o in ops:
        if isinstance(o, dict): args.append(M(**o)); kinds.append("mem")
        elif isinstance(o, tuple): args.append(o[1]); kinds.append("i32")
        else: args.append(o); kinds.append("reg")
    code = getattr(I.Code, code)
    ins = getattr(I.Instruction, "create_" + "_".join(kinds))(code, *args) if args else I.Instruction.create(code)
    for k, v in flags.items(): setattr(ins, k, v)
    e = I.Encoder(64)
    e.encode(ins, 0)
    return e.take_buffer()


Rg = I.Register

ICED_CASES = [
    ("lock add word ptr fs:[rax], ax", lambda: _iced("ADD_RM16_R16", dict(base=Rg.RAX, seg=Rg.FS), Rg.AX, has_lock_prefix=True)),
    ("lock add dword ptr [rax+r8], eax", lambda: _iced("ADD_RM32_R32", dict(base=Rg.RAX, index=Rg.R8), Rg.EAX, has_lock_prefix=True)),
    ("xacquire lock add dword ptr [rax], 1", lambda: _iced("ADD_RM32_IMM8", dict(base=Rg.RAX), ("i", 1), has_lock_prefix=True,
                                                           has_xacquire_prefix=True)),
    ("xrelease mov dword ptr [rax], 1", lambda: _iced("MOV_RM32_IMM32", dict(base=Rg.RAX), ("i", 1), has_xrelease_prefix=True)),
    ("lock cmpxchg16b xmmword ptr gs:[rdi]", lambda: _iced("CMPXCHG16B_M128", dict(base=Rg.RDI, seg=Rg.GS), has_lock_prefix=True)),
    ("bnd jmp rax", lambda: _iced("JMP_RM64", Rg.RAX, has_repne_prefix=True)),
    ("notrack jmp rax", lambda: _iced("JMP_RM64", Rg.RAX, segment_prefix=Rg.DS)),
    ("notrack bnd call qword ptr [rax]", lambda: _iced("CALL_RM64", dict(base=Rg.RAX), segment_prefix=Rg.DS, has_repne_prefix=True)),
    ("bnd ret", lambda: _iced("RETNQ", has_repne_prefix=True)),
    ("rep ret", lambda: _iced("RETNQ", has_repe_prefix=True)),
    ("mov rax, qword ptr fs:[0x28]", lambda: _iced("MOV_R64_RM64", Rg.RAX, dict(displ=0x28, displ_size=8, seg=Rg.FS))),
    ("mov rax, fs:0x28", lambda: _iced("MOV_R64_RM64", Rg.RAX, dict(displ=0x28, displ_size=8, seg=Rg.FS))),
    ("mov eax, dword ptr gs:[rax]", lambda: _iced("MOV_R32_RM32", Rg.EAX, dict(base=Rg.RAX, seg=Rg.GS))),
    ("ss mov eax, dword ptr [rax]", lambda: _iced("MOV_R32_RM32", Rg.EAX, dict(base=Rg.RAX, seg=Rg.SS))),
    ("mov eax, ds:[rbp]", lambda: _iced("MOV_R32_RM32", Rg.EAX, dict(base=Rg.RBP, displ_size=1, seg=Rg.DS))),
    ("cs nop word ptr [rax+rax*1]", lambda: _iced("NOP_RM16", dict(base=Rg.RAX, index=Rg.RAX, seg=Rg.CS))),
    ("vmovaps xmm0, xmmword ptr es:[rax]", lambda: _iced("VEX_VMOVAPS_XMM_XMMM128", Rg.XMM0, dict(base=Rg.RAX, seg=Rg.ES))),
    # a form's own 0x67 (a32: a 32-bit implicit address) before the rep word's F3, as iced-x86 and GNU as write it
    ("addr32 rep xstore", lambda: _iced("XSTORE_32", has_rep_prefix=True)),
]


@pytest.mark.parametrize("text, iced", ICED_CASES, ids=[c[0] for c in ICED_CASES])
def test_prefixed_text_like_iced(text, iced):
    assert x86gen.assemble(text).hex(" ") == iced().hex(" ")
    a = x86gen.Assembler()   # the program parser and the Assembler's listing
    a.emit("nop")
    x86gen.program_text.parse_program(text, asm=a)
    assert a.assemble()[1:] == iced()


def test_structured_api():
    assert x86gen.encode("lock add", mem("rax", size=32), R["eax"]) == bytes.fromhex("f00100")   # iced: ADD_RM32_R32 + lock
    assert x86gen.encode("mov", R["rax"], mem(disp=0x28, size=64, seg="fs")) == bytes.fromhex("64488b042528000000")
    a = x86gen.Assembler(listing=True)
    a.emit("lock inc", mem("rdi", size=64))
    a.mov(R["rax"], mem(disp=0x28, size=64, seg="fs"))
    a.emit("rep ret")
    assert a.assemble() == bytes.fromhex("f048ff07" "64488b042528000000" "f3c3")
    assert "lock inc qword ptr [rdi]" in a.listing() and "qword ptr fs:[0x28]" in a.listing()


def test_prefix_with_rip_label_is_patched():
    """lock/fs: with a [rip+label] operand: the disp32 is counted from the end of the whole instruction."""
    b = x86gen.assemble("lock inc dword ptr [rip+x]\nmov eax, dword ptr fs:[rip+x]\nx: nop")
    assert b.hex() == "f0ff05" + "07000000" + "648b05" + "00000000" + "90"


def test_bnd_branch_to_address_takes_rel32():
    """A target beyond rel8: jmp rel32 (iced-x86's bytes); bnd on jcc rel8 (GNU as 2.40 also relaxes bnd jmp to rel8)."""
    assert x86gen.assemble("bnd jmp 0x100") == _iced_branch("JMP_REL32_64", 0x100)
    assert x86gen.assemble("bnd je 0x10") == _iced_branch("JE_REL8_64", 0x10)


def _iced_branch(code, target):
    ins = I.Instruction.create_branch(getattr(I.Code, code), target)
    ins.has_repne_prefix = True
    e = I.Encoder(64)
    e.encode(ins, 0)
    return e.take_buffer()


REFUSED = [
    ("lock add eax, ecx", "memory destination"),
    ("lock mov dword ptr [rax], eax", "does not take the lock prefix"),
    ("lock cmp dword ptr [rax], eax", "does not take the lock prefix"),
    ("rep add dword ptr [rax], eax", "does not take the rep prefix"),
    ("xacquire add dword ptr [rax], 1", "needs lock"),
    ("xacquire lock cmpxchg16b xmmword ptr [rax]", "does not take the xacquire prefix"),
    ("lock lock add dword ptr [rax], 1", "same group"),
    ("rep xrelease lock add dword ptr [rax], 1", "same group"),
    ("{vex3} add eax, eax", "not VEX-encoded"),
    ("notrack jmp fs:[rax]", "notrack"),
    ("notrack call 0x10", "notrack"),
    ("bnd add eax, 1", "bnd"),
    ("fs add eax, ecx", "one memory operand"),
]


def test_bnd_branch_to_a_label_like_iced():
    """bnd on a branch to a label in a program (the Assembler relaxes it among the forms that take bnd: jcc and jmp rel8
    and rel32; iced-x86's OpCodeInfo gives no bnd to jmp rel8, but its encoder writes F2 EB as GNU as 2.40 does)."""
    def iced(code, target, ip):
        ins = I.Instruction.create_branch(getattr(I.Code, code), target)
        ins.has_repne_prefix = True
        e = I.Encoder(64)
        e.encode(ins, ip)
        return bytes(e.take_buffer())
    got = x86gen.assemble("lock add dword ptr [rip+x], 1\nx: bnd jmp x\nbnd jne x", ip=0x1000)
    assert got[8:] == iced("JMP_REL8_64", 0x1008, 0x1008) + iced("JNE_REL8_64", 0x1008, 0x100b)


@pytest.mark.parametrize("text, why", REFUSED, ids=[c[0] for c in REFUSED])
def test_refused_prefixes(text, why):
    with pytest.raises(PrefixError, match=why):
        x86gen.assemble(text)


def test_prefix_without_instruction():
    with pytest.raises(x86gen.EncodeError):
        x86gen.assemble("lock")
    with pytest.raises(x86gen.AsmSyntaxError, match="not supported"):
        x86gen.assemble("data32 mov eax, dword ptr [rax]")
    # addr32 chooses a form with a 32-bit implicit address (addr32 monitor); on a 64-bit address it would change the
    # address GNU as computes to [eax] without saying so: refused (write [eax])
    with pytest.raises(x86gen.PrefixError, match="32-bit implicit address"):
        x86gen.assemble("addr32 mov eax, dword ptr [rax]")


# the same text through GNU as 2.40: the same bytes, the legacy prefixes maybe in another order (GNU writes 66 F0 and
# F2 F0 where iced-x86 writes F0 66 and F0 F2), and no override of the segment the address uses anyway
GNU_LINES = [c[0] for c in ICED_CASES if not c[0].startswith("ss ")] + [   # (GNU as: "`ss' is not supported in 64-bit mode")
    "mov eax, dword ptr ss:[rax]", "mov eax, ss:[rbp]", "mov eax, ds:[rax]", "mov eax, ss:[rsp+8]", "mov eax, es:[rax]",
    "lock add dword ptr ds:[rax], eax", "{vex3} vaddps xmm0, xmm1, xmm2", "{vex3} vmovaps ymm1, ymm2",
    "{vex3} vpxor xmm0, xmm1, xmmword ptr [rax]", "fs lock add dword ptr [rax], eax", "repz ret", "xrelease lock xadd qword ptr [rdi], rax",
    "lock inc qword ptr gs:[rdi+rsi*8+0x10]", "lock bts dword ptr [rax], 3", "lock neg byte ptr [r12]",
    "vgatherdps ymm8, ss:[r9+ymm4*4+0x10], ymm11", "vgatherdpd xmm6, gs:[xmm0*8+0x10], xmm12",
]


def _legacy_split(b: bytes) -> tuple[list[int], bytes]:
    i = 0
    while i < len(b) and b[i] in (0xF0, 0xF2, 0xF3, 0x66, 0x67, 0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65): i += 1
    return sorted(b[:i]), b[i:]


@pytest.mark.skipif(not gnu_oracle.HAVE_GNU_AS, reason="GNU as not installed")
def test_prefixed_text_like_gnu_as():
    units = gnu_oracle.assemble_units(GNU_LINES)
    for line, gnu in zip(GNU_LINES, units):
        assert gnu.ok, (line, gnu.errors)
        assert _legacy_split(x86gen.assemble(line)) == _legacy_split(gnu.data), line


# objdump's `rex.W…` words (x86gen.selection.prefixed.encode_rex): the lines GNU as 2.40 also takes, with its bytes
REX_GNU = [("rex.W nop", "4890"), ("rex.W getsec", "480f37"), ("rex.W jmp fword ptr [rax]", "48ff28"),
           ("rex.W call fword ptr [r12+r13*8-0x80]", "4bff5cec80"), ("rex.W pextrw ecx, xmm6, 0x5a", "66480fc5ce5a"),
           ("rex.W lldt word ptr [r13]", "490f005500"), ("rex.W sysret", "480f07")]
# and the lines objdump prints for bytes x86gen encodes, where GNU as refuses the word beside a REX the operands need
# ("same type of prefix used twice"): the bytes are iced-x86's, checked below by decoding them to the form
REX_ICED = [("rex.WB lldt r15w", "490f00d7", "LLDT_R64M16"), ("rex.WRB pinsrw xmm15, r14d, 0xff", "664d0fc4feff", "PINSRW_XMM_R64M16_IMM8"),
            ("rex.WXB mov word ptr [r12+r13*8-0x80], ds", "4b8c5cec80", "MOV_R64M16_SREG"),
            ("rex.WR mov r8, rax", "4c8bc0", "MOV_R64_RM64"), ("rex.WB mov r8, rax", "4989c0", "MOV_RM64_R64")]
# what GNU as encodes as another instruction than written (or refuses): x86gen says why
REX_REFUSED = [("rex.W add eax, ecx", "no REX.W form of add"),      # GNU as: 48 01 C8, add rax, rcx
               ("rex.X add rax, rcx", "no REX bit"),                # GNU as: 4A 01 C8 (an X with no index)
               ("rex.B nop", "no REX byte"),                        # GNU as: 41 90, xchg r8d, eax
               ("rex mov eax, ecx", "no REX byte"),
               ("rex.W vaddps ymm0, ymm1, ymm2", "no REX.W form"),  # GNU as: REX prefix invalid with `vaddps'
               ("rex.W lock add qword ptr [rax], 1", "other prefix words"),
               ("rex.WRB mov r8, rax", "no REX bit")]


@pytest.mark.parametrize("text, want", REX_GNU, ids=[c[0] for c in REX_GNU])
def test_rex_words_like_gnu_as(text, want, tmp_path):
    assert x86gen.assemble(text).hex() == want
    if gnu_oracle.HAVE_GNU_AS:
        (unit,) = gnu_oracle.assemble_units([text])
        assert unit.ok and unit.data.hex() == want, (text, unit.errors)


def test_rex_words_structured():
    """The structured API takes the word as a prefix word of the mnemonic (lower case, as `x86gen.prefixes.REX_WORDS`)."""
    assert x86gen.encode("rex.w nop").hex() == "4890"                                        # GNU as 2.40
    assert x86gen.encode("rex.w lldt", mem(R["r13"], size=16)).hex() == "490f005500"          # GNU as 2.40
    with pytest.raises(PrefixError, match="no REX.W form of add"):
        x86gen.encode("rex.w add", R["eax"], R["ecx"])


@pytest.mark.parametrize("text, want, form", REX_ICED, ids=[c[0] for c in REX_ICED])
def test_rex_words_objdump_prints(text, want, form):
    assert x86gen.assemble(text).hex() == want
    assert decode_one(bytes.fromhex(want), 0).code == getattr(I.Code, form)


@pytest.mark.parametrize("text, why", REX_REFUSED, ids=[c[0] for c in REX_REFUSED])
def test_rex_words_refused(text, why):
    with pytest.raises(PrefixError, match=why):
        x86gen.assemble(text)


@pytest.mark.skipif(not gnu_oracle.HAVE_LLVM_MC, reason="llvm-mc not installed")
def test_prefixed_text_like_llvm_mc():
    """llvm-mc 14 as the second oracle: the same bytes up to the order of the legacy prefixes, except that llvm-mc (as
    iced-x86) keeps an override of the segment the address uses anyway (``ds:[rax]``: 3E), which x86gen and GNU as
    leave out. llvm-mc 14 does not know ``bnd``: those lines are left out."""
    lines = [ln for ln in GNU_LINES if not ln.startswith(("bnd", "notrack bnd"))]
    for line, o in zip(lines, gnu_oracle.assemble_units(lines, tool="llvm")):
        assert o.ok, (line, o.errors)
        mine, theirs = _legacy_split(x86gen.assemble(line)), _legacy_split(o.data)
        if mine != theirs and any(s in line for s in ("ds:", "ss:")):
            theirs = ([p for p in theirs[0] if p not in (0x3E, 0x36)], theirs[1])
        assert mine == theirs, line


def _every_form_instances(n: int):
    from test_second_oracle import Unbuildable, form_instances
    for form in ICED_FORMS:
        if form.is_branch: continue
        try: cases = form_instances(form, n)
        except Unbuildable: continue
        for ops, _rel in cases: yield form, ops


def test_segment_override_on_every_memory_form_like_iced():
    """fs:/gs:/es:/cs: on the memory operand of every form (two instances each, from test_second_oracle): x86gen's bytes
    are iced-x86's for the same instruction with `segment_prefix` set (the override first, before the 66/F2/F3 mandatory
    prefixes, REX and VEX)."""
    rng = random.Random(10)
    bad, n = [], 0
    for form, ops in _every_form_instances(2):
        # (a string instruction's es:[rdi] takes no override, SDM Vol.2 MOVS: its other operand, ds:[rsi], does)
        i = next((k for k, x in enumerate(ops) if isinstance(x, x86gen.Mem) and form.operands[k].loc != "esrdi"), None)
        if i is None: continue
        seg = rng.choice(["fs", "gs", "es", "cs"])
        plain = x86gen.encode(form.mnemonic, *ops)
        got = x86gen.encode(form.mnemonic, *ops[:i], ops[i].with_segment(seg), *ops[i + 1:])
        n += 1
        if got != _iced_with(plain, [], seg, decoder_options(form)): bad.append((form.id, seg, str(ops[i])))
    assert n > 800 and not bad, bad[:10]


def test_vex3_on_every_vex_form_like_iced():
    """``{vex3}`` on every VEX form (two instances each): iced-x86's bytes with `Encoder.prevent_vex2`."""
    bad, n = [], 0
    for form, ops in _every_form_instances(2):
        if form.encoding_kind != "vex": continue
        plain = x86gen.encode("{vex}" + form.mnemonic, *ops)   # (`{vex}`: vpdpbusd's plain text is EVEX, VEX_ON_REQUEST)
        def vex3_encoder():
            e = I.Encoder(64)
            e.prevent_vex2 = True
            return e
        n += 1
        if x86gen.encode("{vex3} " + form.mnemonic, *ops) != _rip_kept(decode_one(plain), len(plain), vex3_encoder):
            bad.append((form.id, ops))
    assert n > 800 and not bad, bad[:10]


# gcc writes `rep bsf` (tzcnt's bytes, which a CPU without BMI1 runs as bsf); GNU as 2.40 encodes the rep word as F3 before
# the form's bytes (66 first with a 16-bit operand); objdump prints them as tzcnt/lzcnt. Expected bytes: GNU as 2.40's.
@pytest.mark.parametrize("text, gnu", [
    ("rep bsf ax, cx", "66 f3 0f bc c1"),
    ("rep bsr eax, dword ptr [rdi]", "f3 0f bd 07"),
    ("repe bsf r8, [r9+4]", "f3 4d 0f bc 41 04"),
    ("repz bsr rax, rcx", "f3 48 0f bd c1"),
    ("rep bsf rax, rcx", "f3 48 0f bc c1"),
])
def test_rep_bsf_bsr_as_gnu_as(text, gnu):
    assert x86gen.assemble(text).hex(" ") == gnu
    mn = "tzcnt" if "bsf" in text else "lzcnt"   # the same bytes as the BMI1/LZCNT instruction's form
    if "ax, cx" not in text: assert x86gen.assemble(mn + text.split("bs", 1)[1][1:]) == x86gen.assemble(text)


def test_repne_bsf_is_refused():
    with pytest.raises(x86gen.PrefixError, match="does not take the repne prefix"):
        x86gen.assemble("repne bsf eax, ecx")
