"""iced-x86 as the test oracle: decode bytes, turn iced instructions into x86gen operands, re-encode
them with iced's own Encoder, and format them as Intel-syntax text.

Nothing here uses x86gen to compute an expected value: registers, addresses, immediates and branch
targets come from iced's decoder, expected bytes from iced's encoder. Only `to_x86gen` builds x86gen
operand objects (so that tests can hand iced's view of an instruction to x86gen).

Also holds `REPORT`, lines that the test modules add and conftest prints in the terminal summary.
"""
from __future__ import annotations

import iced_x86 as I
from oracles import forms_checked_by

import x86gen
from x86gen.diagnostics import SEVERAL_FORMS

# The forms iced-x86 checks: those the spec gives no other oracle (`oracles.forms_checked_by`; the forms iced does not
# know are tests/test_fuzz_llvm.py's). Every test that asks iced about a form by its id takes its forms from here.
# A form the spec gives iced that iced has no Code for (a new form without `oracle: llvm-mc-22`) is left out here, so it
# breaks no other form's checks: tests/test_coverage.py names it and says what to write.
ICED_FORMS = [f for f in forms_checked_by("iced") if hasattr(I.Code, f.id)]

# --- iced enum names -----------------------------------------------------------------------------


def _names(enum_module) -> dict[int, str]:
    return {getattr(enum_module, n): n for n in dir(enum_module) if n.isupper() and isinstance(getattr(enum_module, n), int)}


CODE_NAMES = _names(I.Code)
REGISTER_NAMES = _names(I.Register)
OPKIND_NAMES = _names(I.OpKind)
MNEMONIC_NAMES = _names(I.Mnemonic)
OPCODE_OPERAND_KIND_NAMES = _names(I.OpCodeOperandKind)

# iced spells the low bytes of r8..r15 "R8L".."R15L"; x86gen (like GNU as) r8b..r15b.
_REG_RENAME = {f"r{i}l": f"r{i}b" for i in range(8, 16)}


def reg_name(reg: int) -> str:
    """x86gen name of an iced `Register` value, e.g. ``Register.R8L`` → ``"r8b"``."""
    n = REGISTER_NAMES[reg].lower()
    return _REG_RENAME.get(n, n)


def code_of(form_id: str) -> int:
    """iced `Code` value of an x86gen form id (raises AttributeError if iced has no such Code)."""
    return getattr(I.Code, form_id)


# --- decoding and re-encoding --------------------------------------------------------------------


def decoder_options(form) -> int:
    """iced `DecoderOptions` to decode ``form``'s bytes with: ``AMD`` for a 16-bit near branch (o16 jmp/jcc/call/loop/
    jrcxz/jecxz: ``form.opsize16`` and a rel operand, not xbegin) and a 16-bit near indirect call/jmp or return (o16
    call/jmp r/m16, ret: CALL_RM16, JMP_RM16, RETNW, RETNW_IMM16; not the far ones, m16:16), else ``NONE``.

    In 64-bit mode Intel CPUs ignore 0x66 on near branches (SDM Vol.2 JMP/Jcc/CALL/RET: "In 64-bit mode the operand size is
    fixed at 64 bits"), so iced's default (Intel) decoder reads 66 E9/E8/0F 8x as INVALID and 66 EB/7x/E2/E3, 66 FF /2,
    66 FF /4, 66 C3 and 66 C2 as the 64-bit forms; AMD CPUs honour it (AMD APM Vol.3 JMP/Jcc: IP = (next IP + rel) AND
    0FFFFh), and with DecoderOptions.AMD iced reads them as JMP_REL16, JE_REL8_16, CALL_RM16, RETNW … with a 16-bit target.
    xbegin's rel16 decodes either way (no 16-bit IP). AMD's XOP forms (8F with XOP.mmmmm 8, 9 or 0Ah; AMD APM Vol.3
    1.8) decode with ``NONE``: iced reads 8F as XOP whenever its ModRM.reg would not be 0 (POP r/m64 is 8F /0), with no
    option for it. ``MPX`` for an MPX form (bndmk, bndcl … bndstx: F3/F2/66/NP 0F 1A/1B, which iced's default decoder
    reads as the reserved NOPs)."""
    rel = any(o.kind.startswith("rel") for o in form.operands)
    near = form.mnemonic in ("call", "jmp", "ret") and not any(":" in o.kind for o in form.operands)
    amd = form.opsize16 and form.mnemonic != "xbegin" and (rel or near)
    if form.cpuid == "MPX": return I.DecoderOptions.MPX   # 0F 1A/1B: hint NOPs to iced's default decoder
    return I.DecoderOptions.AMD if amd else I.DecoderOptions.NONE


def decode_all(data: bytes, ip: int = 0, options: int = 0) -> list[I.Instruction]:
    """Every instruction of ``data`` (64-bit mode), starting at ``ip`` (``options``: `decoder_options`)."""
    return list(I.Decoder(64, data, ip=ip, options=options))


# The x87 control forms with WAIT (finit = 9B DB E3, SDM Vol.2 FINIT/FNINIT): iced decodes WAIT, then the no-wait form
# (FNINIT), and encodes its Code FINIT as both. No-wait Code -> the WAIT form's Code.
WAIT_FORMS = {getattr(I.Code, n): getattr(I.Code, "F" + n[2:]) for n in CODE_NAMES.values()
              if n.startswith("FN") and hasattr(I.Code, "F" + n[2:])
              and I.OpCodeInfo(getattr(I.Code, "F" + n[2:])).op_code_string.startswith("9B ")}


def decode_one(data: bytes, ip: int = 0, options: int = 0) -> I.Instruction:
    """The first instruction of ``data``; `AssertionError` unless it is valid and uses all of ``data``. WAIT followed by
    a no-wait x87 control instruction (9B DB E3) is the WAIT form iced's encoder writes so (FINIT), as one instruction.
    ``options``: iced's DecoderOptions (`decoder_options`: AMD for the 16-bit branches)."""
    dec = I.Decoder(64, data, ip=ip, options=options)
    ins = dec.decode()
    if ins.code == I.Code.WAIT and len(data) > 1:
        nxt = dec.decode()
        if nxt.code in WAIT_FORMS and 1 + nxt.len == len(data):
            nxt.code, nxt.len, nxt.ip = WAIT_FORMS[nxt.code], len(data), ip
            return nxt
    assert ins.code != I.Code.INVALID, f"iced cannot decode {data.hex(' ')}"
    assert ins.len == len(data), f"iced decodes {data[:ins.len].hex(' ')} ({ins.len} bytes) from {data.hex(' ')}: bytes left over"
    return ins


def reencode(ins: I.Instruction, ip: int | None = None) -> bytes:
    """``ins`` encoded again by iced's Encoder (at ``ip``, default the instruction's own ip); a 3DNow! one by
    `reencode_3dnow`."""
    ip = ins.ip if ip is None else ip
    if ins.encoding == I.EncodingKind.D3NOW: return reencode_3dnow(ins, ip)
    enc = I.Encoder(64)
    enc.encode(ins, ip)
    return bytes(enc.take_buffer())


def reencode_3dnow(ins: I.Instruction, ip: int) -> bytes:
    """A 3DNow! instruction (0F 0F /r and its suffix byte, AMD APM Vol.3 1.2.7) encoded again by iced. iced-x86 1.21's
    Encoder writes no REX prefix for these (`pi2fw mm0, [r8]`, decoded from 41 0F 0F 00 0C, comes back as 0F 0F 00 0C,
    which is [rax]; GNU as and llvm-mc write the 41), so iced encodes the same operands as the MMX form with the same
    operand layout, paddw mm, mm/m64 (NP 0F FD /r): its REX, ModRM, SIB and displacement, with 0F for its opcode byte
    FD and the 3DNow! suffix after them. It is encoded 1 byte further on, so that a RIP-relative displacement counts from
    the end of the 1-byte-longer 3DNow! instruction."""
    mmx = ins.copy()
    mmx.code = I.Code.PADDW_MM_MMM64
    enc = I.Encoder(64)
    enc.encode(mmx, ip + 1)
    data = bytes(enc.take_buffer())
    at = data.index(b"\x0f\xfd")   # (no prefix before it but a REX)
    return data[:at] + b"\x0f\x0f" + data[at + 2:] + bytes([I.OpCodeInfo(ins.code).op_code])


def reencode_canonical(ins: I.Instruction, ip: int | None = None) -> bytes:
    """Like `reencode`, but with the shortest displacement: iced's Encoder keeps the displacement
    size it decoded (`[rsp+0x50]` written with a disp32 stays disp32), so the decoded size is reset:
    0 for a zero displacement (iced still writes disp8 0 for rbp/r13), else 1 (iced widens to disp32
    if it does not fit). RIP-relative and base-less operands always have a disp32 and are left alone."""
    if any(ins.op_kind(i) == I.OpKind.MEMORY for i in range(ins.op_count)) \
            and ins.memory_base not in (I.Register.NONE, I.Register.RIP, I.Register.EIP):
        ins = ins.copy()
        ins.memory_displ_size = 0 if ins.memory_displacement == 0 else 1
    return reencode(ins, ip)


# --- formatting ------------------------------------------------------------------------------------


def make_formatter() -> I.Formatter:
    """iced's Intel formatter in the dialect x86gen.assemble reads (and objdump -M intel prints):
    lower case, 0x hex, memory sizes always shown, ``[rip+disp]`` for RIP-relative operands,
    ``op, op`` separators, no ``short``/``near`` branch decorations."""
    f = I.Formatter(I.FormatterSyntax.INTEL)
    f.hex_prefix = "0x"
    f.hex_suffix = ""
    f.uppercase_hex = False
    f.uppercase_all = False
    f.memory_size_options = I.MemorySizeOptions.ALWAYS
    f.space_after_operand_separator = True
    f.rip_relative_addresses = True
    f.show_branch_size = False
    f.small_hex_numbers_in_decimal = False
    f.branch_leading_zeros = False
    f.leading_zeros = False
    f.displacement_leading_zeros = False
    f.signed_memory_displacements = True
    f.signed_immediate_operands = False
    f.use_pseudo_ops = True    # `vcmpltss xmm0, xmm1, xmm2` (as objdump prints it), not `vcmpss ..., 0x1`
    return f


FORMATTER = make_formatter()


# iced-x86 names the 16-bit operand-size forms of iret, pushf and popf without a suffix (`iret` for o16 CF, as the
# SDM's IRET/PUSHF/POPF), while GNU as and objdump (and x86gen's text, which follows GNU) read the bare name as the
# default operand size of 64-bit mode (CF iretd, 9C pushfq, 9D popfq) and write these forms iretw, pushfw, popfw.
# The text of these forms is GNU's name, so that the text checks stay about bytes, not about the two tools' names.
ICED_UNSUFFIXED_16 = {I.Code.IRETW: "iretw", I.Code.PUSHFW: "pushfw", I.Code.POPFW: "popfw"}


def intel(ins: I.Instruction) -> str:
    """Intel-syntax text of ``ins`` (see `make_formatter`; `ICED_UNSUFFIXED_16`)."""
    gnu = ICED_UNSUFFIXED_16.get(ins.code)
    if ins.code == I.Code.XBEGIN_REL16:   # iced writes no data16 (`xbegin 0x…`, the rel32 form's text): GNU as's spelling
        return "data16 " + FORMATTER.format(ins)
    if gnu is not None: return gnu
    text = FORMATTER.format(ins)
    if ins.memory_base == I.Register.NONE and ins.memory_index != I.Register.NONE and _mib(ins.code):
        # iced writes an MPX mib address without its scale, so an index alone (the pointer value; SDM Vol.2 BNDLDX) reads
        # as a base: `[rbx+0x10]` for [rbx*1+0x10]. Written with the *1, as objdump does
        index = reg_name(ins.memory_index)
        text = text.replace(f"[{index}", f"[{index}*1", 1)
    return text


def _mib(code: int) -> bool:
    """Does the iced form ``code`` have an MPX mib operand (bndldx, bndstx)?"""
    oc = I.OpCodeInfo(code)
    return any(oc.op_kind(i) == I.OpCodeOperandKind.MEM_MIB for i in range(oc.op_count))


# --- operands --------------------------------------------------------------------------------------

K = I.OpKind
IMM_KINDS = {  # iced immediate kind → (field bits, value bits after sign extension, sign-extended?)
    K.IMMEDIATE8: (8, 8, False), K.IMMEDIATE16: (16, 16, False), K.IMMEDIATE32: (32, 32, False),
    K.IMMEDIATE64: (64, 64, False), K.IMMEDIATE8TO16: (8, 16, True), K.IMMEDIATE8TO32: (8, 32, True),
    K.IMMEDIATE8TO64: (8, 64, True), K.IMMEDIATE32TO64: (32, 64, True),
    K.IMMEDIATE8_2ND: (8, 8, False),   # the second ib of extrq/insertq xmm, imm8, imm8 (and enter's imm8)
}
# The same, by OpCodeOperandKind (what an instruction *form* takes, from iced's OpCodeInfo).
OCK = I.OpCodeOperandKind
FORM_IMM_KINDS = {
    OCK.IMM8: (8, 8, False), OCK.IMM16: (16, 16, False), OCK.IMM32: (32, 32, False), OCK.IMM64: (64, 64, False),
    OCK.IMM8SEX16: (8, 16, True), OCK.IMM8SEX32: (8, 32, True), OCK.IMM8SEX64: (8, 64, True),
    OCK.IMM32SEX64: (32, 64, True), OCK.IMM4_M2Z: (4, 4, False),   # vpermil2ps's imm8[3:0]
}
# (xbegin's offsets too: a 64-bit fallback address with either width, SDM Vol.2 XBEGIN)
# and the 16-bit near branches (o16: a 16-bit IP as target, `decoder_options`)
FORM_BRANCH_KINDS = {OCK.BR64_1: 8, OCK.BR64_4: 32, OCK.XBEGIN_2: 16, OCK.XBEGIN_4: 32, OCK.BR16_1: 8, OCK.BR16_2: 16}


def signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def accepted_imm_ranges(field: int, size: int, sext: bool) -> list[tuple[int, int]]:
    """Integers an assembler (GNU as) accepts for an immediate operand, as closed intervals: any
    value that is the intended ``size``-bit operand read as signed or unsigned, and that the field
    can represent. A plain N-bit field: [-2^(N-1), 2^N - 1]. An N-bit field sign-extended by the CPU
    to S bits: the N-bit signed values, and their S-bit unsigned spelling."""
    if field == 4: return [(0, 15)]   # vpermil2ps's imm4: GNU as refuses negative values ("doesn't fit in 4 bits")
    if not sext:
        return [(-(1 << (field - 1)), (1 << field) - 1)]
    half = 1 << (field - 1)
    return [(-half, half - 1), ((1 << size) - half, (1 << size) - 1)]


def form_imm_ranges(code: int, i: int) -> list[tuple[int, int]] | None:
    """`accepted_imm_ranges` for operand ``i`` of iced Code ``code`` (None if it is no immediate)."""
    k = I.OpCodeInfo(code).op_kind(i)
    if k in FORM_IMM_KINDS: return accepted_imm_ranges(*FORM_IMM_KINDS[k])
    if k in FORM_BRANCH_KINDS:
        b = FORM_BRANCH_KINDS[k]
        return [(-(1 << (b - 1)), (1 << (b - 1)) - 1)]
    return None


def in_ranges(v: int, ranges) -> bool:
    return any(lo <= v <= hi for lo, hi in ranges)


def memory_bits(ins: I.Instruction) -> int:
    """Size in bits of the memory operand (0 if iced does not know it, as for lea)."""
    return I.MemorySizeInfo(ins.memory_size).size * 8


# the registers of a 32-bit address (the 0x67 prefix in 64-bit mode; SDM Vol.2 3.6): iced reports its displacement as
# a 32-bit value (`[eax-1]` has memory_displacement 0xffffffff) and an eip-relative one as the 32-bit target
_ADDR32_REGISTERS = {getattr(I.Register, n) for n in ("EAX", "ECX", "EDX", "EBX", "ESP", "EBP", "ESI", "EDI", "EIP",
                                                        *(f"R{i}D" for i in range(8, 16)))}


_ADDR32_STRING_KINDS = {I.OpKind.MEMORY_SEG_ESI, I.OpKind.MEMORY_SEG_EDI, I.OpKind.MEMORY_ESEDI}   # [esi], es:[edi]


def address32(ins: I.Instruction) -> bool:
    """Is the memory operand's address 32-bit (a 32-bit base or index register, or eip; a string instruction's [esi] or
    es:[edi])?"""
    return ins.memory_base in _ADDR32_REGISTERS or ins.memory_index in _ADDR32_REGISTERS \
        or any(ins.op_kind(i) in _ADDR32_STRING_KINDS for i in range(ins.op_count))


def memory_disp(ins: I.Instruction) -> int:
    """The displacement as written in the instruction: relative to the next instruction for
    RIP-relative operands (iced reports the absolute target), signed otherwise (in 32 bits for a 32-bit address)."""
    bits = 32 if address32(ins) else 64
    if ins.memory_base in (I.Register.RIP, I.Register.EIP):
        return signed(ins.memory_displacement - ins.next_ip, bits)
    return signed(ins.memory_displacement, bits)


def imm_value(ins: I.Instruction, i: int) -> int:
    """Immediate operand ``i`` as x86gen takes it: signed for sign-extended kinds (imm8 of ``83 /0``,
    imm32 of ``REX.W 81 /0``), unsigned for plain ones."""
    k = ins.op_kind(i)
    field, size, sext = IMM_KINDS[k]
    v = ins.immediate(i) & ((1 << size) - 1)
    return signed(v, size) if sext else v


# iced's operand kinds of the implicit memory operands (string instructions, maskmovdqu), by their base register; the
# segment is iced's `memory_segment` (ds or an override for [rsi]/[rdi], always es for es:[rdi])
IMPLICIT_MEMORY_KINDS = {K.MEMORY_SEG_RSI: "rsi", K.MEMORY_ESRDI: "rdi", K.MEMORY_SEG_RDI: "rdi",
                         K.MEMORY_SEG_ESI: "esi", K.MEMORY_ESEDI: "edi", K.MEMORY_SEG_EDI: "edi"}   # (0x67: [esi], es:[edi])


def to_x86gen(ins: I.Instruction) -> tuple[str, tuple]:
    """``(mnemonic, operands)`` of ``ins`` as x86gen objects: registers by name, `Mem` operands with
    base/index/scale/displacement and size, ints for immediates and absolute branch targets. The
    mnemonic is the x86gen form's (same id as iced's Code) if x86gen has it, else iced's."""
    ops = []
    for i in range(ins.op_count):
        k = ins.op_kind(i)
        if k == K.REGISTER:
            ops.append(x86gen.REGISTERS[reg_name(ins.op_register(i))])
        elif k in IMPLICIT_MEMORY_KINDS:   # a string instruction's [rsi] / es:[rdi], maskmovdqu's [rdi]
            ops.append(x86gen.Mem(x86gen.REGISTERS[IMPLICIT_MEMORY_KINDS[k]], size=memory_bits(ins)))
        elif k == K.MEMORY and ins.memory_index == I.Register.AL:   # xlat's [rbx+al]: x86gen writes it [rbx]
            ops.append(x86gen.Mem(x86gen.REGISTERS[reg_name(ins.memory_base)], size=memory_bits(ins)))
        elif k == K.MEMORY:
            base = None if ins.memory_base == I.Register.NONE else x86gen.REGISTERS[reg_name(ins.memory_base)]
            index = None if ins.memory_index == I.Register.NONE else x86gen.REGISTERS[reg_name(ins.memory_index)]
            scale = ins.memory_index_scale if index is not None else 1
            ops.append(x86gen.Mem(base, index, scale, memory_disp(ins), memory_bits(ins)))
        elif k in IMM_KINDS:
            ops.append(imm_value(ins, i))
        elif k == K.NEAR_BRANCH64:
            ops.append(ins.near_branch64)
        elif k == K.NEAR_BRANCH16:   # a 16-bit branch's target, a 16-bit IP (`decoder_options`)
            ops.append(ins.near_branch16)
        else:
            raise NotImplementedError(f"{intel(ins)}: iced operand kind {OPKIND_NAMES.get(k, k)} has no x86gen equivalent")
    code_name = CODE_NAMES[ins.code]
    try: mn = x86gen.get_form(code_name).mnemonic
    except x86gen.EncodeError: mn = MNEMONIC_NAMES[ins.mnemonic].lower()
    return mn, tuple(ops)


# vpextrb/vpextrw/vpinsrb/vpinsrw with VEX.W1 name a 64-bit GPR, but write it zero-extended from (or
# read only the low bits of) the 32-bit one, exactly as VEX.W0 does: objdump and iced print `eax` for
# both, and GNU as encodes `vpextrb rax, xmm0, 1` as W0. Their GPR operand is compared by number.
# The same holds for the legacy forms with REX.W (`pextrw r64, xmm, imm8`, `pinsrb xmm, r64/m8, imm8`,
# `extractps r64/m32, xmm, imm8`) and for the mask moves (`movmskps r64, xmm`, `pmovmskb r64, xmm`):
# iced prints `eax` for the REX.W/W1 form too, and the result is the same zero-extended value.
_GPR_WIDTH_IMMATERIAL = {I.Mnemonic.VPEXTRB, I.Mnemonic.VPEXTRW, I.Mnemonic.VPINSRB, I.Mnemonic.VPINSRW,
                         I.Mnemonic.PEXTRB, I.Mnemonic.PEXTRW, I.Mnemonic.PINSRB, I.Mnemonic.PINSRW, I.Mnemonic.EXTRACTPS,
                         I.Mnemonic.VEXTRACTPS, I.Mnemonic.MOVMSKPS, I.Mnemonic.MOVMSKPD, I.Mnemonic.PMOVMSKB,
                         I.Mnemonic.VMOVMSKPS, I.Mnemonic.VMOVMSKPD, I.Mnemonic.VPMOVMSKB,
                         # tpause/umwait read bits 31:0 of their register (SDM Vol.2 TPAUSE, UMWAIT); iced prints
                         # `eax` for the REX.W form (TPAUSE_R64) too
                         I.Mnemonic.TPAUSE, I.Mnemonic.UMWAIT,
                         # vmovw moves 16 bits, EVEX.W is ignored (SDM Vol.2 VMOVW); iced prints `eax` for the W1 form
                         I.Mnemonic.VMOVW,
                         # sldt/str r64 write the selector zero-extended, as r32 does (SDM Vol.2 SLDT, STR; GNU as encodes
                         # `sldt rax` as 0F 00 /0)
                         I.Mnemonic.SLDT, I.Mnemonic.STR}
# lldt, ltr, verr, verw, lmsw, lkgs read a 16-bit selector or word with any operand size (SDM Vol.2 LLDT, LTR, LMSW:
# "The operand-size attribute has no effect on this instruction"; VERR/VERW, LKGS: r/m16): GNU as and llvm-mc encode
# `lldt ax` as 0F 00 /2 (the r32/m16 form) and iced-x86 prints ax for o16, plain and REX.W. Their GPR is compared as
# the 16-bit register.
_SELECTOR_READ = {I.Mnemonic.LLDT, I.Mnemonic.LTR, I.Mnemonic.VERR, I.Mnemonic.VERW, I.Mnemonic.LMSW, I.Mnemonic.LKGS}
_R16_OF = {r.num: r.name for r in x86gen.REGISTERS.values() if r.kind == "r16"}
_R32_OF = {r.num: r.name for r in x86gen.REGISTERS.values() if r.kind == "r32"}
# `mov r64, sreg` (REX.W 8C) and `mov r32, sreg` (8C) both write the selector zero-extended to the whole register
# (SDM Vol.2 MOV: with a 32-bit operand the upper bits are cleared, and 64-bit mode zero-extends a 32-bit write);
# GNU as encodes `mov rax, es` as 8C C0. `mov sreg, r/m` reads 16 bits with any operand size (o16 8E, 8E, REX.W 8E;
# iced prints `mov es, ax` for all three, GNU as encodes `mov es, ax` as 8E C0). The GPR is compared by number.
_SEGMENT_REGISTERS = {I.Register.ES, I.Register.CS, I.Register.SS, I.Register.DS, I.Register.FS, I.Register.GS}


def semantics(ins: I.Instruction) -> tuple:
    """What an instruction does, independent of which encoding was chosen: iced mnemonic and the
    operands (registers; memory base/index/scale/displacement (RIP-relative: as written)/size;
    immediates as the value the CPU uses after sign extension; absolute branch targets)."""
    ops = []
    for i in range(ins.op_count):
        k = ins.op_kind(i)
        if k == K.REGISTER:
            name = reg_name(ins.op_register(i))
            if ins.mnemonic in _GPR_WIDTH_IMMATERIAL and x86gen.REGISTERS[name].kind == "r64":
                name = _R32_OF[x86gen.REGISTERS[name].num]
            elif ins.mnemonic in _SELECTOR_READ and x86gen.REGISTERS[name].kind in ("r32", "r64"):
                name = _R16_OF[x86gen.REGISTERS[name].num]
            elif (ins.mnemonic == I.Mnemonic.MOV and ins.op_count == 2 and ins.op0_kind == ins.op1_kind == K.REGISTER
                  and ins.op_register(1 - i) in _SEGMENT_REGISTERS
                  and x86gen.REGISTERS[name].kind in (("r64",) if i == 0 else ("r16", "r64"))):   # store r16: 16 bits
                name = _R32_OF[x86gen.REGISTERS[name].num]
            ops.append(("reg", name))
        elif k == K.MEMORY:
            has_index = ins.memory_index != I.Register.NONE
            ops.append(("mem", REGISTER_NAMES[ins.memory_base].lower(), REGISTER_NAMES[ins.memory_index].lower(),
                        ins.memory_index_scale if has_index else 1, memory_disp(ins), memory_bits(ins)))
        elif k in IMPLICIT_MEMORY_KINDS:
            ops.append(("mem", IMPLICIT_MEMORY_KINDS[k], "none", 1, 0, memory_bits(ins)))
        elif k in IMM_KINDS:
            size = IMM_KINDS[k][1]
            ops.append(("imm", size, ins.immediate(i) & ((1 << size) - 1)))
        elif k == K.NEAR_BRANCH64: ops.append(("target", ins.near_branch64))
        elif k == K.NEAR_BRANCH16: ops.append(("target16", ins.near_branch16))   # IP = target (16 bits), not RIP
        else: ops.append(("?", OPKIND_NAMES.get(k, k)))
    mnemonic = MNEMONIC_NAMES[ins.mnemonic].lower()
    if mnemonic in _VPCMP_EQ and ops[-1][0] == "imm" and ops[-1][2] == 0:
        # vpcmpb k, x, y, 0 (predicate EQ) is vpcmpeqb k, x, y (SDM Vol.2 VPCMPB, its pseudo-op table): iced prints
        # the former as `vpcmpeqb`, which assembles to the EVEX 74 /r instruction, one byte shorter
        return (_VPCMP_EQ[mnemonic], tuple(ops[:-1]))
    # XCHG exchanges its two operands, so their order says nothing (SDM Vol.2 XCHG): `86 f7` (xchg r15b, r14b as
    # ModRM rm, reg) and llvm-mc's `86 fe` (the other way round) are one instruction
    if mnemonic == "xchg": ops.sort()
    # and a register exchanged with itself changes nothing, except a 32-bit one (the write clears bits 63:32): xchg ax, ax
    # (66 87 c0) is what 66 90 (NOPW, "xchg ax, ax" to iced and objdump) does, xchg rax, rax what 90 does (SDM Vol.2 NOP)
    if mnemonic == "xchg" and ops[0] == ops[1] and ops[0][0] == "reg" and x86gen.REGISTERS[ops[0][1]].kind != "r32":
        return ("nop", ())
    # a form whose implicit address is 32-bit (0x67: MONITORD, LOOP_REL8_64_ECX) is another operation than its 64-bit
    # twin with the same operands (monitor's address in eax, not rax): its address size is part of what it does
    if I.OpCodeInfo(ins.code).address_size == 32: ops.append(("address size", 32))
    # a near return with o16 (RETNW, RETNW_IMM16: 66 C3, read with DecoderOptions.AMD, `decoder_options`) pops a 16-bit IP,
    # another operation than ret (C3) with the same operands (none, or the imm16)
    if ins.mnemonic == I.Mnemonic.RET and I.OpCodeInfo(ins.code).operand_size == 16: ops.append(("operand size", 16))
    # SAL (/6) and SHL (/4) are one operation (SDM Vol.2 SAL/SAR/SHL/SHR); GNU as writes both `shl`
    return ("shl" if mnemonic == "sal" else mnemonic, tuple(ops))


_VPCMP_EQ = {f"vpcmp{t}": f"vpcmpeq{t}" for t in "bwdq"}


def describe(data: bytes, ip: int = 0, options: int = 0) -> str:
    """``"48 01 c8  add rax, rcx (ADD_RM64_R64)"`` for messages (``options``: `decoder_options`)."""
    try:
        ins = I.Decoder(64, data, ip=ip, options=options).decode()
        return f"{data.hex(' ')}  {intel(ins)} ({CODE_NAMES[ins.code]}, {ins.len} bytes)"
    except Exception as ex:  # pragma: no cover - diagnostics only
        return f"{data.hex(' ')}  <{ex}>"


# --- REX rules, from iced's opcode tables -----------------------------------------------------------


def needs_rex_w(code: int) -> bool:
    """Does this legacy form need REX.W (iced: ``o64`` operand size that is not the 64-bit default)?"""
    oc = I.OpCodeInfo(code)
    return (oc.encoding == I.EncodingKind.LEGACY and "o64" in oc.op_code_string.split()
            and not oc.default_op_size64 and not oc.force_op_size64)


# --- report lines for the terminal summary --------------------------------------------------------

REPORT: dict[str, str] = {}
FUZZ_STATS: dict[str, dict[str, int]] = {}   # form id -> counters
FUZZ_FAILED: set[str] = set()


# --- AVX-512 decorations (SDM Vol.2 2.7): what iced-x86 says a form allows, and iced's bytes with them ---------

ROUNDING_CONTROL = {0: I.RoundingControl.ROUND_TO_NEAREST, 1: I.RoundingControl.ROUND_DOWN, 2: I.RoundingControl.ROUND_UP,
                    3: I.RoundingControl.ROUND_TOWARD_ZERO}   # x86gen.RN_SAE … RZ_SAE (EVEX.L'L, SDM Vol.2 Table 2-36)
SAE = 4   # x86gen.SAE


# iced-x86 prints one name for forms whose bytes differ (`prefetch_reserved`: 0F 0D /4../7), which x86gen refuses: the
# text cannot say which form (issue 24; tests/test_text_rules.py). Their forms are reached by id.
ICED_AMBIGUOUS = frozenset(i for ids in SEVERAL_FORMS.values() for i in ids)


# Conversions from 32-bit integers, exact in the wider type, whose rounding iced-x86's OpCodeInfo allows (EVEX.b) but
# the SDM does not (Vol.2 VCVTDQ2PD, VCVTUDQ2PD, VCVTSI2SD and VCVTUSI2SD with r/m32: no {er}); GNU as and llvm-mc
# refuse it, and so does x86gen (issue 24). iced's Code names keep the _ER.
SDM_NO_ROUNDING = frozenset(getattr(I.Code, n) for n in (
    "EVEX_VCVTDQ2PD_ZMM_K1Z_YMMM256B32_ER", "EVEX_VCVTUDQ2PD_ZMM_K1Z_YMMM256B32_ER",
    "EVEX_VCVTSI2SD_XMM_XMM_RM32_ER", "EVEX_VCVTUSI2SD_XMM_XMM_RM32_ER"))


def evex_allows(code: int, mask: int, zero: bool, bcst_bits: int, rc: int | None, mem_dest: bool, has_mem: bool) -> bool:
    """Does iced-x86's OpCodeInfo for ``code`` allow these decorations: mask register number ``mask`` (0: none),
    zeroing, a broadcast of ``bcst_bits``-bit elements (0: none), rounding ``rc`` (0-3 static, 4 SAE, None)?
    Zeroing with a memory destination and rounding/SAE with a memory operand are #UD (SDM Vol.2 2.7.8, 2.8); the
    conversions of `SDM_NO_ROUNDING` take no rounding."""
    oc = I.OpCodeInfo(code)
    if mask and not oc.can_use_op_mask_register: return False
    if zero and (not oc.can_use_zeroing_masking or mem_dest): return False
    if bcst_bits and (not oc.can_broadcast or I.MemorySizeInfo(oc.broadcast_memory_size).size * 8 != bcst_bits): return False
    if rc is not None:
        if has_mem: return False
        if rc == SAE and not oc.can_suppress_all_exceptions: return False
        if rc != SAE and (not oc.can_use_rounding_control or code in SDM_NO_ROUNDING): return False
    return True


def decorated(ins: I.Instruction, mask: int, zero: bool, bcst: bool, rc: int | None) -> I.Instruction:
    """A copy of the (plain) instruction ``ins`` with iced's op_mask (k``mask``), zeroing_masking, is_broadcast,
    rounding_control / suppress_all_exceptions set: what `reencode_canonical` then encodes is iced's view of the
    decorated instruction (its EVEX.aaa/z/b/L'L and, with a broadcast, the disp8*N of the element size)."""
    ins = ins.copy()
    if mask: ins.op_mask = getattr(I.Register, f"K{mask}")
    ins.zeroing_masking = zero
    if bcst: ins.is_broadcast = True
    if rc is not None:
        if rc == SAE: ins.suppress_all_exceptions = True
        else: ins.rounding_control = ROUNDING_CONTROL[rc]
    return ins


def decorations(ins: I.Instruction) -> tuple:
    """(mask number, zeroing, broadcast, rounding as x86gen's int or None) of a decoded instruction."""
    rc = next((k for k, v in ROUNDING_CONTROL.items() if v == ins.rounding_control), None)
    if rc is None and ins.suppress_all_exceptions: rc = SAE
    mask = 0 if ins.op_mask == I.Register.NONE else ins.op_mask - I.Register.K0
    return mask, ins.zeroing_masking, ins.is_broadcast, rc


def request_mnemonic(form) -> str:
    """The mnemonic that asks `x86gen.encode` for this form's operation: ``addr32 monitor`` for a form whose implicit
    address is 32-bit (MONITORD; ``monitor`` alone is MONITORQ, another operation); ``data16 xbegin`` for a 16-bit branch
    and ``data16 ret`` for the 16-bit return (x86gen, like GNU as, never chooses one unasked; ``call ax``, CALL_RM16, is
    asked by its operand)."""
    # data16 xbegin: XBEGIN_REL16; data16 jmp: JMP_REL16; data16 ret: RETNW
    words = ["data16"] if form.opsize16 and (form.is_branch or form.mnemonic == "ret") else []
    if form.addrsize32: words.append("addr32")   # data16 addr32 loop: LOOP_REL8_16_ECX
    return " ".join([*words, form.mnemonic])


def operand_registers(kind: str, evex: bool = False) -> list:
    """The registers a form operand of ``kind`` (``xmm``, ``r32/m32``, ``k``, ``kp1`` …) may take, in the order of
    `x86gen.REGISTERS`: its register class, with registers 16-31 only in an EVEX form (``evex``: xmm16-31/ymm16-31,
    SDM Vol.2 2.7.1); for ``kp1``, vp2intersectd/q's pair of mask registers named by its even k (the CPU ignores
    ModRM.reg's low bit, SDM Vol.2 VP2INTERSECTD), the even k registers only: x86gen refuses an odd one."""
    cls = "k" if kind == "kp1" else kind.partition("/")[0]
    regs = [r for r in x86gen.REGISTERS.values() if r.kind == cls and ((evex and cls[0] != "r") or not r.hi16)]   # (no r16-r31)
    return [r for r in regs if r.num % 2 == 0] if kind == "kp1" else regs
