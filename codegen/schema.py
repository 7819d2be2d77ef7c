"""The form schema: the fields of a row of the generated form table, named once.

`codegen.spec.Form` has an attribute of each name (`codegen.render.row` reads them in this order),
`_gen/table.py` stores each row as a JSON array in this order, and `_gen/schema.py`, rendered from
these lists, names them for the runtime (`x86gen.table.FormRow` / `OperandRow`, named tuples). Adding a
field is one entry here plus the attribute that `codegen.spec` computes for it (as the EVEX fields
tuple_type … evex_rc are).
"""
from __future__ import annotations

# (name, what it holds)
FORM_FIELDS: tuple[tuple[str, str], ...] = (
    ("id", "form id: iced-x86's Code name, e.g. ADD_RM32_R32"),
    ("mnemonic", "lower-case mnemonic"),
    ("operands", "the explicit operands, each an OperandRow"),
    ("encoding_kind", "legacy | d3now | vex | evex | xop | rex2 (d3now: AMD 3DNow!, legacy bytes and a suffix opcode byte;"
                      " rex2: APX's REX2 form of a legacy map 0/1 form, derived by codegen/spec.py)"),
    ("opcode", "the opcode byte"),
    ("opcode_map", "0 one-byte, 1 0F, 2 0F38, 3 0F3A, 5 MAP5 (VEX, EVEX), 6 MAP6 (EVEX), 7 MAP7 (VEX), 8 9 10 (XOP maps 08 09 0A)"),
    ("mandatory_prefix", "0 none, 1 66, 2 F3, 3 F2 (legacy mandatory prefix / VEX.pp; XOP.pp is 0)"),
    ("opsize16", "0x66 operand-size prefix (legacy 16-bit forms)"),
    ("addrsize32", "0x67 address-size prefix (`a32`): the form's implicit address is 32-bit (monitor's [eax], loop's ecx),"
                   " or its memory operand is a 32-bit address (enqcmd r32, m512: an A32Mem)"),
    ("w", "REX.W / VEX.W / XOP.W: 0, 1, or None = ignored (encoded as 0)"),
    ("vex_l", "VEX.L / EVEX.L'L / XOP.L: 0, 1, 2, or None = ignored (encoded as 0)"),
    ("modrm", "'r' (/r), '0'..'7' (/digit), a fixed ModRM byte 'E8' (two hex digits), or None"),
    ("reg_in_opcode", "a register in the opcode's low 3 bits (+rb/+rw/+rd/+ro)"),
    ("imm_widths", "immediate field widths in bits, in order"),
    ("is4", "a register in imm8[7:4] (/is4)"),
    ("operand_size", "operand size in bits that an immediate is sign-extended to"),
    ("cpuid", "CPUID feature"),
    ("flags", "flag names (read, written, undefined, cleared, set)"),
    ("implicit", "implicit register operands, each (role, register)"),
    ("encoding", "the encoding as written in the spec (SDM syntax)"),
    ("line", "line of the form in isa/x86_64.yaml"),
    ("tuple_type", "EVEX tuple type of the memory operand for disp8*N (SDM Vol.2 2.7.5): FV, FVM, …; None outside EVEX"),
    ("disp8_n", "EVEX: N, the scale of a compressed disp8 (bytes) for a memory operand without broadcast; 0 outside EVEX"),
    ("disp8_n_bcst", "EVEX: N with broadcast (EVEX.b = 1), the broadcast element's size in bytes; 0 if the form does not broadcast"),
    ("evex_mask", "EVEX masking the form allows: '' none, 'k1' ({k1}), 'k1z' ({k1}{z}); x86gen.encoding.decorated sets aaa/z"),
    ("evex_bcst", "EVEX embedded broadcast: the element size in bits (32, 64) or 0 (x86gen.encoding.decorated sets b)"),
    ("evex_rc", "EVEX register-only static rounding 'er' or suppress-all-exceptions 'sae', or '' (x86gen.encoding.decorated sets b, L'L)"),
    ("mem_role", "the first operand's role when the ModRM.rm operand is memory, where it differs from its role with a register"
                 " (movss xmm, xmm/m32: RW merges into a register, W with memory; SDM Vol.2 MOVSS), else ''"),
    ("fwait", "9B (WAIT) before the instruction: the x87 control forms finit = 9B DB E3 (two instructions to a decoder)"),
    ("taken_reg", "bitmask of the ModRM.reg values (bit n: reg field n) that make another instruction with a register in ModRM.rm"
                  " (the hint-NOP space: 0F 1F /0 is nop r/m32); the form refuses them"),
    ("taken_mem", "the same with a memory operand in ModRM.rm (0F 18 /0-/3 are the prefetches)"),
    ("suffix", "3DNow!: the opcode byte after ModRM, SIB and displacement (0F 0F /r 9E is pfadd; AMD APM Vol.3 1.2.7), else 0"
               " (no 3DNow! operation is 00)"),
    ("length", "length in bytes with no memory operand, a 2-byte VEX where legal and no optional REX: what `x86gen.encode`"
               " orders a mnemonic's forms by (shortest first, then file order), as GNU as chooses"),
    ("shape", "index of its encoder's shape (codegen/shapes.py) in _gen/encoders, -1 if none yet (EVEX)"),
    ("shape_args", "the constants that function binds for this form (bytes as lists of ints)"),
)

OPERAND_FIELDS: tuple[tuple[str, str], ...] = (
    ("kind", "as written, r/m32 normalised to r32/m32"),
    ("loc", "reg rm vvvv opc is4 imm fixed moffs"),
    ("role", "r w rw cw rcw cr n"),
    ("reg", "register class (r32, xmm, ...) or a fixed register name, None if no register"),
    ("mem", "memory size in bits, 0 for `m` (any), None if no memory"),
    ("imm", "immediate width in bits, None if no immediate"),
    ("sext", "the immediate is sign-extended to the operand size (simm8/simm32)"),
)

FORM_FIELD_NAMES = tuple(n for n, _ in FORM_FIELDS)
OPERAND_FIELD_NAMES = tuple(n for n, _ in OPERAND_FIELDS)
