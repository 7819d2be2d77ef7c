"""Operand roles, implicit registers, rflags and CPUID features of every form, checked against iced-x86.

For every form of isa/x86_64.yaml, random instances (registers, and memory where the form allows it) are
encoded with x86gen and decoded by iced; iced's `InstructionInfo` must agree with the spec:

- operand access: role R/W/RW/CW/N ↔ OpAccess READ/WRITE/READ_WRITE/COND_WRITE/NO_MEM_ACCESS, operand by
  operand (immediates and branch targets are READ);
- memory: the explicit memory operand's access in `used_memory()` (none for lea's N operand); stack
  accesses (push/pop/call/ret) exactly when the form has rsp as an implicit register;
- implicit registers: iced's `used_registers()` minus the explicit register operands and the address
  registers must be the form's `imp=` registers. iced names what the CPU really writes, so the spec's
  registers are mapped to iced's view: a write of a 32-bit GPR is a write of the 64-bit register (the
  CPU zero-extends: `div r/m32` writes RAX and RDX but reads EAX and EDX), and a VEX write of an xmm/ymm
  register is a write of the ZMM register (VEX zeroes the bits above, up to the widest register), so
  RW:xmm0 (vzeroupper) is "reads XMM0, writes ZMM0", while a legacy SSE write (pcmpistrm's xmm0) leaves
  the upper bits alone and is a write of the xmm register (RW: a read-write of it, as aesencwide128kl's xmm0-7);
- rflags: read, written, cleared, set and undefined flags, each exactly;
- EVEX forms that allow a mask are also checked masked (merge and zeroing): the mask register is read, and
  merge-masking reads the destination (`x86gen.evex.operand_roles`; iced: READ_COND_WRITE for a zmm, READ_WRITE for
  an xmm/ymm whose upper bits are zeroed, COND_WRITE for a masked store);
- CPUID: the form's `cpuid` is iced's `CpuidFeature` name (INTEL8086, INTEL386, X64, CMOV, AVX2, …), or
  iced's names joined by `+` in iced's order where it gives several (AES+AVX for vaesenc).

Registers of one instance are all different, and different from the form's fixed and implicit registers
(else iced sees idioms such as `xor eax, eax`, which write without reading). Shift and rotate counts in
immediates are 2..7: the spec's imm8 and cl forms describe a count above 1 (the `1` forms count 1), and a
count of 0 changes no flag.
"""
from __future__ import annotations

import random

import iced_x86 as I
import pytest
from iced_oracle import ICED_FORMS, decode_one, decoder_options, operand_registers
from test_fuzz_iced import hint_nop_taken

from x86gen import forms as F
from x86gen.memory import Mem
from x86gen.registers import REGISTERS

ACCESS = {"r": I.OpAccess.READ, "w": I.OpAccess.WRITE, "rw": I.OpAccess.READ_WRITE, "cw": I.OpAccess.COND_WRITE,
          "rcw": I.OpAccess.READ_COND_WRITE, "cr": I.OpAccess.COND_READ, "n": I.OpAccess.NO_MEM_ACCESS}


# MPX bound checks, whose r/m64 is read as a register but, as memory, an address compared with the bounds and not read
# (SDM Vol.2 BNDCL: "This instruction does not cause any memory access"; iced: NO_MEM_ACCESS): the spec's role is R
BOUND_CHECKS = {"bndcl", "bndcu", "bndcn"}


def expected_access(o) -> int:
    """iced's OpAccess for an explicit operand of this role. N (not accessed) is NO_MEM_ACCESS for an
    address that is only computed (lea's m, prefetch's m8) and NONE for an operand the instruction
    ignores altogether (nop r/m32, ud1 r32, r/m32)."""
    if o.role == "n" and (o.reg is not None or o.imm is not None): return I.OpAccess.NONE
    return ACCESS[o.role]
ACCESS_NAMES = {v: k for k, v in vars(I.OpAccess).items() if k.isupper()}
REG_NAMES = {v: k for k, v in vars(I.Register).items() if k.isupper() and isinstance(v, int)}
CPUID_NAMES = {v: k for k, v in vars(I.CpuidFeature).items() if k.isupper() and isinstance(v, int)}
FLAG_BITS = {"OF": I.RflagsBits.OF, "SF": I.RflagsBits.SF, "ZF": I.RflagsBits.ZF, "AF": I.RflagsBits.AF, "CF": I.RflagsBits.CF,
             "PF": I.RflagsBits.PF, "DF": I.RflagsBits.DF, "IF": I.RflagsBits.IF,
             "AC": I.RflagsBits.AC, "UIF": I.RflagsBits.UIF}
# iced's RflagsBits also has the x87 condition codes C0-C3: they live in the FPU status word, not in RFLAGS (SDM
# Vol.1 8.1.3), and the spec's flags are RFLAGS only, so they are left out of the comparison.
X87_CONDITION_CODES = I.RflagsBits.C0 | I.RflagsBits.C1 | I.RflagsBits.C2 | I.RflagsBits.C3
FLAG_FIELDS = (("read", "rflags_read"), ("written", "rflags_written"), ("cleared", "rflags_cleared"), ("set", "rflags_set"),
               ("undefined", "rflags_undefined"))
# Instructions that access memory through a register without a memory operand (besides the stack): the base
# registers iced reports (None: the instruction's register operand). leave loads rbp from [rbp] (SDM Vol.2 LEAVE);
# enter copies the outer frame pointers from [rbp-8*i] (SDM Vol.2 ENTER, nesting level > 0); umonitor's register
# is the address of the monitored range (SDM Vol.2 UMONITOR); rmpupdate reads its new entry from [rcx] (AMD APM
# Vol.3 RMPUPDATE); wrmsrlist/rdmsrlist walk the tables at [rsi] and [rdi] (SDM Vol.2 RDMSRLIST); pbndkb reads [rbx]
# and writes [rcx] (Intel TSE PBNDKB); llwpcb's register is the address of the LWP control block it reads (AMD APM
# Vol.3 LLWPCB). leavew/enterw are their 16-bit forms (o16: bp, [rbp] read as a word).
# VIA PadLock (VIA PadLock Programming Guide): the xcrypt* read the control word at [rdx], the key at [rbx], the
# source at [rsi], the IV at [rax] (not ECB) and write [rdi]; xsha*/ccs_hash hash [rsi] into [rdi]; xstore writes
# random bytes to [rdi]; montmul reads its parameter block at [rsi]. The undocumented F3 0F A6 F0/F8 access none.
# Their *_32 forms (a32: 0x67) address the same memory through the 32-bit registers ([esi], [edi]; `implicit_bases`).
_PADLOCK_MEMORY = {"montmul": {"rsi"},
    **{f"xcrypt{m}": {"rax", "rbx", "rdx", "rsi", "rdi"} for m in ("ecb", "cbc", "ctr", "cfb", "ofb")},
    "ccs_encrypt": {"rbx", "rdx", "rsi", "rdi"},
    **{m: {"rsi", "rdi"} for m in ("xsha1", "xsha256", "xsha512", "xsha512_alt", "ccs_hash")}, "xstore": {"rdi"}, "xstore_alt": {"rdi"}}
IMPLICIT_MEMORY: dict[str, set[str] | None] = {"leave": {"rbp"}, "enter": {"rbp"}, "leavew": {"rbp"}, "enterw": {"rbp"},
                                               "umonitor": None, "llwpcb": None, "rmpupdate": {"rcx"},
                                               "wrmsrlist": {"rsi", "rdi"}, "rdmsrlist": {"rsi", "rdi"}, "pbndkb": {"rbx", "rcx"},
                                               **_PADLOCK_MEMORY}
# the base register of an implicit memory operand, by its location (isa/README.md): its accesses are the operand's
IMPLICIT_BASE = {"rsi": "rsi", "rdi": "rdi", "esrdi": "rdi", "rbxal": "rbx"}
# ModRM.reg holds the address of a 64-byte write, es:[reg] (SDM Vol.2 MOVDIR64B, ENQCMD, ENQCMDS): iced reports it as a
# memory write beside the explicit m512 source
REG_ADDRESSED_WRITE = {"movdir64b", "enqcmd", "enqcmds"}
SHIFTS = {"rol", "ror", "rcl", "rcr", "shl", "sal", "shr", "sar", "shld", "shrd"}
GPR8 = ["al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil"] + [f"r{i}b" for i in range(8, 16)]
GPR_BY_NUM = {(r.kind, r.num): r for r in REGISTERS.values() if r.kind in ("r16", "r32", "r64")}
INSTANCES = 3   # per form and per kind (registers only / with memory)


def family(name: str) -> tuple[str, int]:
    """("gpr", n) or ("vec", n) for a register name in x86gen's or iced's spelling (R9L, EAX, ZMM3)."""
    n = name.lower()
    if n[:3] in ("xmm", "ymm", "zmm"): return ("vec", int(n[3:]))
    if n[:2] == "mm" and n[2:].isdigit(): return ("mm", int(n[2:]))   # MMX (aliases st(i)'s mantissa, not a GPR)
    if n[:1] == "k" and n[1:].isdigit(): return ("k", int(n[1:]))
    if n[:3] in ("tmm", "bnd"): return (n[:3], int(n[3:]))   # AMX tiles, MPX bounds
    if n[:2] in ("st", "cr", "dr") and n[2:].isdigit(): return (n[:2], int(n[2:]))   # x87 st(i), cr0.., dr0..
    if n in ("es", "cs", "ss", "ds", "fs", "gs"): return ("sreg", REGISTERS[n].num)
    if n.startswith("r") and n.endswith("l") and n[1:-1].isdigit(): n = n[:-1] + "b"   # iced R8L..R15L
    return ("gpr", REGISTERS[n].num)


def _flag_bits(names) -> int:
    bits = 0
    for n in names: bits |= FLAG_BITS[n]
    return bits


def implicit_bases(form) -> set[str] | None:
    """The base registers of the accesses `IMPLICIT_MEMORY` gives ``form``'s mnemonic (None: its register operand),
    as 32-bit registers for a form with a 32-bit implicit address (a32, 0x67: XSHA1_32 hashes [esi] into [edi];
    SDM Vol.2 3.6 address-size override)."""
    bases = IMPLICIT_MEMORY[form.mnemonic]
    if bases is None or not form.addrsize32: return bases
    return {GPR_BY_NUM["r32", REGISTERS[r].num].name for r in bases}


def expected_implicit(form) -> set[tuple[str, str]]:
    """The spec's implicit registers as iced reports them (see the module docstring)."""
    out: set[tuple[str, str]] = set()
    for role, reg in form.implicit:
        r = REGISTERS[reg]
        up = reg.upper()
        reads, writes = role in ("r", "rw", "cr", "rcw"), role in ("w", "rw", "cw", "rcw")
        read = "COND_READ" if role == "cr" else "READ"
        write = "COND_WRITE" if role in ("cw", "rcw") else "WRITE"
        if r.kind == "r32":
            if reads: out.add((up, read))
            if writes: out.add((GPR_BY_NUM["r64", r.num].name.upper(), write))
        elif r.kind in ("xmm", "ymm"):
            if form.encoding_kind == "legacy" and role == "rw":   # a legacy read-write (aesencwide128kl's xmm0-7)
                out.add((up, "READ_WRITE"))
                continue
            if reads: out.add((up, read))
            # a legacy SSE write leaves the bits above 127 alone: iced names the xmm register itself
            if writes: out.add((f"ZMM{r.num}" if form.encoding_kind != "legacy" else up, write))
        else:
            out.add((up, ACCESS_NAMES[ACCESS[role]]))
    return out


def instance(form, rng: random.Random, use_mem: bool) -> tuple[list, Mem | None]:
    """Operands for one random instance of ``form`` (and its memory operand, if any)."""
    taken = {4}   # rsp: no explicit operand, no address register (stack forms use it implicitly)
    for o in form.operands:
        if o.loc == "fixed": taken.add(REGISTERS[o.reg].num)
    for _, reg in form.implicit:
        if REGISTERS[reg].kind.startswith("r"): taken.add(REGISTERS[reg].num)
    gprs = [n for n in range(16) if n not in taken]
    vecs = [n for n in range(16) if not any(reg.startswith(("xmm", "ymm")) and REGISTERS[reg].num == n for _, reg in form.implicit)]
    smalls = list(range(8))   # mm0-mm7, k0-k7, tmm0-tmm7
    rng.shuffle(gprs)
    rng.shuffle(vecs)
    rng.shuffle(smalls)
    m = None
    if use_mem or any(o.reg is None and o.mem is not None and o.loc not in IMPLICIT_BASE for o in form.operands):
        # (a form with a 32-bit address size, movdir64b/enqcmd r32, m512: a 32-bit address, SDM Vol.2 MOVDIR64B)
        size = "r32" if form.addrsize32 else "r64"
        base = GPR_BY_NUM[size, gprs.pop()]
        index = GPR_BY_NUM[size, gprs.pop()] if rng.random() < 0.7 else None
        disp = rng.choice([0, rng.randrange(-128, 128), rng.randrange(-(1 << 31), 1 << 31)])
        mib = any(o.kind == "mib" for o in form.operands)   # (bndldx/bndstx: the index unscaled, SDM Vol.2 BNDLDX)
        m = (base, index, rng.choice([1, 2, 4, 8]) if index is not None and not mib else 1, disp)
    ops: list = []
    mem_op = None
    for i, o in enumerate(form.operands):
        if o.loc == "fixed": ops.append(REGISTERS[o.reg])
        elif o.loc in IMPLICIT_BASE: ops.append(Mem(REGISTERS[IMPLICIT_BASE[o.loc]], size=o.mem))   # [rsi], es:[rdi]…
        elif o.kind == "1": ops.append(1)
        elif o.kind.startswith("rel"):
            lo, hi = form.imm_ranges(i)[0]
            target = rng.randint(lo, hi) + form.length   # target, with the instruction at ip 0
            # (a 16-bit branch's target is a 16-bit IP, iced_oracle.decoder_options: the same displacement modulo 2^16)
            ops.append(target & 0xFFFF if decoder_options(form) else target)
        elif o.imm is not None:
            if form.mnemonic in SHIFTS: ops.append(rng.randint(2, 7))
            # enterw's nesting level: 2..31 (mod 32) copies frame pointers from [rbp-2*i], the case its imp= describes
            # (rbp besides bp); with 0 or 1 iced reports bp alone (SDM Vol.2 ENTER)
            elif form.mnemonic == "enterw" and i == 1: ops.append(rng.randint(2, 31) + 32 * rng.randint(0, 7))
            else:
                lo, hi = rng.choice(form.imm_ranges(i))
                ops.append(rng.randint(lo, hi))
        elif o.loc == "moffs":   # a 64-bit absolute address (no registers), near or far
            mem_op = Mem(None, None, 1, rng.choice([0x10, 0x80000000, 0x123456789ABC, -0x80000001]), o.mem)
            ops.append(mem_op)
        elif o.kind.startswith("vm"):   # VSIB: an xmm/ymm index, distinct from the destination and the mask
            index = REGISTERS[f"{o.kind[-1]}mm{vecs.pop()}"]   # (vm32x: xmm, vm32y: ymm, vm64z: zmm)
            mem_op = Mem(m[0], index, rng.choice([1, 2, 4, 8]), m[3], size=o.mem)
            ops.append(mem_op)
        elif o.mem is not None and (o.reg is None or use_mem):
            mem_op = Mem(*m, size=o.mem or 0)
            ops.append(mem_op)
        elif o.reg.startswith("r"):
            bits, n = int(o.reg[1:]), gprs.pop()
            ops.append(REGISTERS[GPR8[n]] if bits == 8 else GPR_BY_NUM[o.reg, n])
        elif o.kind == "kp1":   # vp2intersectd/q's pair of mask registers: an even k (`operand_registers`), k(n & 6)
            ops.append(operand_registers(o.kind, form.encoding_kind == "evex")[smalls.pop() >> 1])
        elif o.reg in ("mm", "k", "tmm"):
            ops.append(REGISTERS[f"{o.reg}{smalls.pop()}"])
        elif o.reg == "bnd":   # bnd0-bnd3 (MPX)
            ops.append(REGISTERS[f"bnd{[n for n in smalls if n < 4].pop()}"])
            smalls.remove(int(ops[-1].name[3:]))
        elif o.reg in ("cr", "dr", "sreg"):   # (cs cannot be loaded: #UD)
            ops.append(rng.choice([r for r in REGISTERS.values()
                                   if r.kind == o.reg and not r.hi16 and not (r.name == "cs" and "w" in o.role)]))
        elif o.reg == "st":   # st(1)..st(7): apart from the st(0) of the fixed and implicit operands
            ops.append(REGISTERS[f"st{rng.choice([n for n in range(1, 8) if ('r', f'st{n}') not in form.implicit])}"])
        else:
            ops.append(REGISTERS[f"{o.reg}{vecs.pop()}"])
    return ops, mem_op


def disagreements(form, ops: list, mem_op: Mem | None, mask: int = 0) -> list[str]:
    """What iced says differently about one instance (empty when it agrees); with ``mask`` the first operand masked by
    k``mask`` (a gather/scatter, which has no unmasked instance: its roles are the masked ones, its mask no implicit
    register)."""
    from x86gen.evex import masked
    data = form(*([masked(ops[0], REGISTERS[f"k{mask}"]), *ops[1:]] if mask else ops))
    ins = decode_one(data, 0, decoder_options(form))   # (finit, 9B DB E3: the WAIT form, as iced's encoder writes it)
    where = f"{form.id} {', '.join(map(str, ops))} ({data.hex(' ')})"
    if ins.code != getattr(I.Code, form.id) or ins.len != len(data):
        return [f"{where}: iced decodes {ins} ({ins.len} bytes, Code {ins.code})"]
    info = I.InstructionInfoFactory().info(ins)
    bad = []
    # operand access
    if ins.op_count != len(form.operands):
        bad.append(f"{where}: iced has {ins.op_count} operands, the spec {len(form.operands)}")
    else:
        for i, o in enumerate(form.operands):
            want = expected_access(o)
            if i == 0 and mem_op is not None and form.mem_role: want = ACCESS[form.mem_role]   # movss: RW, W with memory
            if ops[i] is mem_op and form.mnemonic in BOUND_CHECKS: want = I.OpAccess.NO_MEM_ACCESS
            if info.op_access(i) != want:
                bad.append(f"{where}: operand {i + 1} is {ACCESS_NAMES[info.op_access(i)]} for iced, expected {ACCESS_NAMES[want]}"
                           f" (role {o.role.upper()} in the spec{', memrole=' + form.mem_role.upper() if form.mem_role else ''})")
    # memory: the explicit operand, and the stack
    stack = any(reg == "rsp" for _, reg in form.implicit)
    used_mem = list(info.used_memory())
    explicit_mem = [u for u in used_mem if REG_NAMES[u.base] != "RSP"]
    stack_mem = [u for u in used_mem if REG_NAMES[u.base] == "RSP"]
    if form.mnemonic in REG_ADDRESSED_WRITE:
        dest = next(x for o, x in zip(form.operands, ops) if o.loc == "reg")
        writes = [u for u in explicit_mem if REG_NAMES[u.base].lower() == dest.name and ACCESS_NAMES[u.access] == "WRITE"]
        if len(writes) != 1: bad.append(f"{where}: iced's memory accesses {explicit_mem}, expected a write at [{dest}]")
        explicit_mem = [u for u in explicit_mem if u not in writes]
    implicit_mem = [o for o in form.operands if o.loc in IMPLICIT_BASE]
    if implicit_mem:   # a string instruction's [rsi] / es:[rdi], xlat's [rbx+al]: iced's accesses by base register
        got = sorted((REG_NAMES[u.base].lower(), ACCESS_NAMES[u.access]) for u in explicit_mem)
        want = sorted((IMPLICIT_BASE[o.loc], ACCESS_NAMES[ACCESS[o.role]]) for o in implicit_mem)
        if got != want: bad.append(f"{where}: iced's memory accesses {got}, the spec's {want}")
    elif mem_op is not None:
        role = next(o.role for o, x in zip(form.operands, ops) if x is mem_op)
        if ops[0] is mem_op and form.mem_role: role = form.mem_role
        if form.mnemonic in BOUND_CHECKS: role = "n"
        got = [ACCESS_NAMES[u.access] for u in explicit_mem]
        if got != ([] if role == "n" else [ACCESS_NAMES[ACCESS[role]]]):   # lea's address: no access at all
            bad.append(f"{where}: iced's memory accesses {got}, the spec's role {role.upper()}")
    elif form.mnemonic in IMPLICIT_MEMORY:
        bases = {REG_NAMES[u.base].lower() for u in explicit_mem}
        want = implicit_bases(form) or {x.name for x in ops if hasattr(x, "kind")}
        # (enter reads the outer frame pointers only for a nesting level of 2..31 mod 32)
        if (not explicit_mem and form.mnemonic not in ("enter", "enterw")) or not bases <= want:
            bad.append(f"{where}: iced's memory accesses based on {sorted(bases)}, expected some based on {sorted(want)}")
    elif explicit_mem:
        bad.append(f"{where}: iced accesses memory {[ACCESS_NAMES[u.access] for u in explicit_mem]} without a memory operand")
    if bool(stack_mem) != stack:
        bad.append(f"{where}: iced {'accesses' if stack_mem else 'does not access'} the stack; implicit rsp: {stack}")
    # implicit registers
    explicit = {family(x.name) for x in ops if hasattr(x, "kind") and x.kind != "rip" and not isinstance(x, Mem)}
    if mask: explicit.add(family(f"k{mask}"))
    address = {family(r.name) for r in (mem_op.base, mem_op.index) if r is not None} if mem_op is not None else set()
    got_imp = {(REG_NAMES[u.register], ACCESS_NAMES[u.access]) for u in info.used_registers()
               if family(REG_NAMES[u.register]) not in explicit | address}
    want_imp = expected_implicit(form)
    for o, x in zip(form.operands, ops):   # kp1 (vp2intersectd/q): k(2n+1), the pair's second register, written too
        if o.kind == "kp1": want_imp = want_imp | {(f"K{x.num + 1}", "WRITE")}
    if got_imp != want_imp:
        bad.append(f"{where}: implicit registers {sorted(got_imp)} for iced, {sorted(want_imp)} from the spec {form.implicit}")
    # rflags
    for field, attr in FLAG_FIELDS:
        got, want = getattr(ins, attr) & ~X87_CONDITION_CODES, _flag_bits(form.flags[field])
        if got != want:
            names = sorted(n for n, b in FLAG_BITS.items() if got & b)
            bad.append(f"{where}: flags {field} {names} for iced, {list(form.flags[field])} in the spec")
    # CPUID
    feats = [CPUID_NAMES[c] for c in ins.cpuid_features()]
    if "+".join(feats) != form.cpuid:   # one feature, or iced's several joined by + (AES+AVX)
        bad.append(f"{where}: CPUID {feats} for iced, {form.cpuid!r} in the spec")
    return bad


def evex_disagreements(form, ops: list, mem_op: Mem | None, mask: int, zero: bool) -> list[str]:
    """What iced says differently about a masked instance of an EVEX form: the operands' access against
    `x86gen.evex.operand_roles` (merge-masking reads the destination), the mask register read, the memory access."""
    from x86gen.evex import masked, operand_roles
    dops = [masked(ops[0], REGISTERS[f"k{mask}"], zero), *ops[1:]]
    roles, k = operand_roles(form, tuple(dops))
    data = form(*dops)
    ins = I.Decoder(64, data).decode()
    where = f"{form.id} {', '.join(map(str, dops))} ({data.hex(' ')})"
    if ins.code != getattr(I.Code, form.id) or ins.len != len(data) or ins.op_mask != getattr(I.Register, f"K{mask}"):
        return [f"{where}: iced decodes {ins} ({ins.len} bytes, Code {ins.code})"]
    info = I.InstructionInfoFactory().info(ins)
    bad = []
    for i, role in enumerate(roles):
        if info.op_access(i) != ACCESS[role]:
            bad.append(f"{where}: operand {i + 1} is {ACCESS_NAMES[info.op_access(i)]} for iced, role {role.upper()} from operand_roles")
    regs = {(REG_NAMES[u.register], ACCESS_NAMES[u.access]) for u in info.used_registers()}
    # a gather/scatter also writes its mask (it clears each element's bit, SDM Vol.2 VPGATHERDD: `Form.evex_mask_required`)
    # (the AVX512PF prefetches, role N, only read it)
    written = form.evex_mask_required and all(o.role != "n" for o in form.operands)
    if k is not REGISTERS[f"k{mask}"] or (f"K{mask}", "READ_WRITE" if written else "READ") not in regs:
        bad.append(f"{where}: mask {k} from operand_roles; iced's registers {sorted(regs)}")
    if mem_op is not None:
        i = next(i for i, x in enumerate(ops) if x is mem_op)
        got = [ACCESS_NAMES[u.access] for u in info.used_memory()]
        want = [] if roles[i] == "n" else [ACCESS_NAMES[ACCESS[roles[i]]]]   # (a prefetch's VSIB: no access)
        if got != want: bad.append(f"{where}: iced's memory accesses {got}, role {roles[i].upper()}")
    return bad


def check_form(form, seed: int) -> list[str]:
    rng = random.Random(seed)
    kinds = [False] + ([True] if any(o.mem is not None and o.reg is not None for o in form.operands) else [])
    bad: list[str] = []
    for use_mem in kinds:
        for _ in range(INSTANCES):
            for _draw in range(32):   # a reserved NOP's ModRM.reg values that are another instruction: draw again
                ops, mem_op = instance(form, rng, use_mem)
                if not (form.id.startswith("RESERVEDNOP_")
                        and hint_nop_taken(getattr(I.Code, form.id), ops[1].num & 7, mem_op is not None)): break
            else:
                continue   # (0F 0D with memory: every value is a prefetch, the form takes registers only)
            bad += disagreements(form, ops, mem_op, rng.randint(1, 7) if form.evex_mask_required else 0)   # (k0 is #UD for those)
            if form.evex_mask:   # and masked: merge (and zeroing where allowed, not on a memory destination)
                zero = form.evex_mask == "k1z" and not isinstance(ops[0], Mem) and rng.random() < 0.5
                bad += evex_disagreements(form, ops, mem_op, rng.randint(1, 7), zero)
                if form.evex_mask == "k1z" and not isinstance(ops[0], Mem):
                    bad += evex_disagreements(form, ops, mem_op, rng.randint(1, 7), not zero)
    return bad


FORMS = ICED_FORMS


@pytest.fixture(scope="module")
def results() -> dict[str, list[str]]:
    return {f.id: check_form(f, seed=i) for i, f in enumerate(FORMS)}


@pytest.mark.parametrize("fid", [f.id for f in FORMS])
def test_form_agrees_with_iced(results, fid):
    assert not results[fid], "\n".join(results[fid])


def test_roles_summary(results):
    bad = sum(1 for v in results.values() if v)
    line = f"roles: {len(results)} forms checked against iced-x86, {bad} disagreements"
    try:
        from iced_oracle import REPORT  # the shared test report, where present (tests/iced_oracle.py)
        REPORT["roles"] = line
    except ImportError:
        pass
    print(line)
    assert len(results) == len(FORMS) and bad == 0, line


def test_expected_implicit_mapping():
    """The spec-to-iced register mapping on the cases the docstring names."""
    assert expected_implicit(F.get_form("DIV_RM32")) == {("EAX", "READ"), ("EDX", "READ"), ("RAX", "WRITE"), ("RDX", "WRITE")}
    assert expected_implicit(F.get_form("DIV_RM64")) == {("RAX", "READ_WRITE"), ("RDX", "READ_WRITE")}
    assert expected_implicit(F.get_form("CDQ")) == {("EAX", "READ"), ("RDX", "WRITE")}
    assert ("XMM0", "READ") in expected_implicit(F.get_form("VEX_VZEROUPPER"))
    assert ("ZMM15", "WRITE") in expected_implicit(F.get_form("VEX_VZEROUPPER"))
