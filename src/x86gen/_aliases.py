"""Other names of mnemonics that `x86gen._choose.canonical` maps to the table's (loaded on the first name the table
lacks: GNU as's AT&T names, condition-code synonyms, objdump's and iced-x86's spellings)."""
from __future__ import annotations

MNEMONIC_ALIASES = {
    "jz": "je", "jnz": "jne", "jc": "jb", "jnae": "jb", "jnc": "jae", "jnb": "jae", "jna": "jbe", "jnbe": "ja",
    "jnge": "jl", "jnl": "jge", "jng": "jle", "jnle": "jg", "jpe": "jp", "jpo": "jnp",
    "sal": "shl", "retq": "ret", "movabs": "mov", "movsxd": "movsxd",
    # GNU as's AT&T names of the sign extensions, which its Intel mode accepts too. An alias whose target
    # the table lacks (cdqe, cwde, cbw today) is an unknown mnemonic under its own name (`canonical`).
    "cltq": "cdqe", "cqto": "cqo", "cwtl": "cwde", "cltd": "cdq", "cwtd": "cwd", "cbtw": "cbw",
    # the REX.W / VEX.W1 string compares as GNU as and objdump spell them (iced: pcmpestri64, …)
    # GNU as's other names of the 64-bit-mode defaults (SDM PUSHF/POPF, LEAVE, ENTER: 64-bit operand size)
    "fwait": "wait", "pushfq": "pushf", "popfq": "popf", "leaveq": "leave", "enterq": "enter",
    # VIA PadLock: GNU as's and llvm-mc's other name of xstore (0F A7 C0), and objdump's spellings
    "xstorerng": "xstore", "xstore-rng": "xstore", "xcrypt-ecb": "xcryptecb", "xcrypt-cbc": "xcryptcbc",
    "xcrypt-ctr": "xcryptctr", "xcrypt-cfb": "xcryptcfb", "xcrypt-ofb": "xcryptofb",
    "xlatb": "xlat",   # (SDM Vol.2 XLAT/XLATB: the operand-less name)
    # far returns, iret and sysret as GNU as (and objdump, llvm-mc) also name them: retf/lret is the 32-bit operand size
    # (CB, GNU as's default, with a warning; objdump prints `retf`), lretw/lretq the 16/64-bit ones; `iret` is iretd for
    # GNU as and objdump (CF; llvm-mc and iced-x86 read it as the 16-bit form, which x86gen spells iretw only);
    # `sysret` is sysretd (0F 07) for llvm-mc and iced-x86 (GNU as: "ambiguous operand size")
    "retf": "retfd", "lret": "retfd", "lretw": "retfw", "lretq": "retfq", "iret": "iretd", "sysret": "sysretd",
    "pcmpestriq": "pcmpestri64", "pcmpestrmq": "pcmpestrm64", "vpcmpestriq": "vpcmpestri64", "vpcmpestrmq": "vpcmpestrm64",
    # iced-x86's Intel names of AMD's 0F 0D /0 and of the reserved hints 0F 0D /4-/7, which it decodes as the same
    # PREFETCH (AMD APM Vol.3 PREFETCH/PREFETCHW: the reserved ModRM.reg values are aliases of PREFETCH); GNU as and
    # objdump write `prefetch`, which is 0F 0D /0
    "prefetch_exclusive": "prefetch", "prefetch_reserved": "prefetch",
}
for _p in ("set", "cmov"):
    for _a, _b in {"z": "e", "nz": "ne", "c": "b", "nae": "b", "nc": "ae", "nb": "ae", "na": "be", "nbe": "a",
                   "nge": "l", "nl": "ge", "ng": "le", "nle": "g", "pe": "p", "po": "np"}.items():
        MNEMONIC_ALIASES[_p + _a] = _p + _b
# CMPccXADD: the spec's mnemonics are iced's Code names (cmpnbxadd, cmpzxadd, …); iced's formatter and the
# SDM's table also spell them with the other condition names (cmpaexadd, cmpexadd, …).
for _a, _b in {"ae": "nb", "a": "nbe", "ge": "nl", "g": "nle", "ne": "nz", "e": "z"}.items():
    MNEMONIC_ALIASES[f"cmp{_a}xadd"] = f"cmp{_b}xadd"
