"""Valid text that x86gen refused (issue 24, items 1-3), one test per rule: the `mmword` size keyword, expressions as
GNU as evaluates them, the current location `.`, and symbols (`.set`, `.equ`, `.equiv`, `X = 5`).

Expected bytes come from GNU as 2.40 (`as --64 -msyntax=intel -mnaked-reg`, then `objcopy -O binary -j .text`),
marked `# GNU as 2.40`; where GNU as is on the machine, `check` also runs it to check the hard-coded bytes.
"""
from __future__ import annotations

import pytest
from test_text_rules import check

import x86gen

# ---- mmword: GNU as's other name of qword ---------------------------------------------------------------

@pytest.mark.parametrize("src, expect", [
    ("psubusw mm3, mmword ptr [r14+0x65]", "410fd95e65"),      # GNU as 2.40 (iced-x86 prints MMX operands so)
    ("movq mm0, mmword ptr [rax]", "0f6f00"),                  # GNU as 2.40
    ("pmaddwd mm1, mmword ptr [rip+0x10]", "0ff50d10000000"),  # GNU as 2.40
    ("movq mm0, MMWORD PTR [rax+rbx*4+8]", "0f6f449808"),      # GNU as 2.40
    ("movq mm0, mmword ptr fs:[rax]", "640f6f00"),             # GNU as 2.40
    ("movq xmm0, mmword ptr [rax]", "f30f7e00"),               # GNU as 2.40: any m64, not only MMX's
    ("movq mmword ptr [rax], xmm0", "660fd600"),               # GNU as 2.40
    ("cvtpi2ps xmm0, mmword ptr [rax]", "0f2a00"),             # GNU as 2.40
    ("vpmovzxbw xmm0, mmword ptr [rax]", "c4e2793000"),        # GNU as 2.40
    ("mov rax, mmword ptr [rax]", "488b00"),                   # GNU as 2.40: mmword is qword everywhere
    ("fld mmword ptr [rax]", "dd00"),                          # GNU as 2.40
    ("cmpxchg8b mmword ptr [rax]", "0fc708"),                  # GNU as 2.40
    ("push mmword ptr [rax]", "ff30"),                         # GNU as 2.40
    ("jmp mmword ptr [rax]", "ff20"),                          # GNU as 2.40
    ("vaddpd zmm0, zmm1, mmword ptr [rax]{1to8}", "62f1f5585800"),   # GNU as 2.40
    ("L: movq mm0, mmword ptr [rip+L]", "0f6f05f9ffffff"),     # GNU as 2.40
])
def test_mmword_is_qword(src, expect, tmp_path):
    check(src, expect, tmp_path)


@pytest.mark.parametrize("src", ["pinsrw mm0, mmword ptr [rax], 1", "movd eax, mmword ptr [rax]"])
def test_mmword_where_qword_is_refused(src):
    # GNU as 2.40: operand type mismatch (as with qword ptr)
    with pytest.raises(x86gen.OperandError):
        x86gen.assemble(src)


def test_mmword_is_a_size_name_of_the_api():
    from x86gen.memory import size_named
    assert size_named("mmword") == size_named("MMWORD") == 64


# ---- expressions: GNU as's operators and precedence, 64-bit values -----------------------------------------

@pytest.mark.parametrize("src, expect", [
    ("mov eax, 1<<20", "b800001000"),              # GNU as 2.40
    ("and eax, ~15", "83e0f0"),                    # GNU as 2.40
    ("mov eax, (11+2)", "b80d000000"),             # GNU as 2.40
    ("mov eax, -(3)", "b8fdffffff"),               # GNU as 2.40
    ("mov eax, 0x10|1", "b811000000"),             # GNU as 2.40
    ("mov eax, -7/2", "b8fdffffff"),               # GNU as 2.40: / truncates toward zero
    ("mov eax, -7%2", "b8ffffffff"),               # GNU as 2.40
    ("mov rax, -16>>2", "48b8fcffffffffffff3f"),   # GNU as 2.40: >> is a logical shift of 64 bits
    ("mov eax, 1 shl 3", "b808000000"),            # GNU as 2.40: Intel syntax's word operators
    ("mov eax, not 0", "b8ffffffff"),              # GNU as 2.40
    ("mov eax, 1<2", "b8ffffffff"),                # GNU as 2.40: true is -1
    ("mov eax, 1!2", "b8fdffffff"),                # GNU as 2.40: binary ! is or-not
    ("push 2*3", "6a06"),                          # GNU as 2.40
    (".zero 2+3", "0000000000"),                   # GNU as 2.40
    (".byte 1+2, 3*4", "030c"),                    # GNU as 2.40
    (".long -1<<31", "00000080"),                  # GNU as 2.40
    (".byte 1|2-1", "02"),                         # GNU as 2.40: | binds tighter than -
    (".byte 3|4&1", "01"),                         # GNU as 2.40: | & ^ are one level, left to right
    (".byte 2+3<<1", "08"),                        # GNU as 2.40: << binds tighter than +
    (".byte 16>>1*2", "10"),                       # GNU as 2.40: * and >> are one level
    (".byte 1&&0||1", "01"),                       # GNU as 2.40
    (".byte 1 shl 2 + 1", "05"),                   # GNU as 2.40
    (".byte 10 and 3 or 4", "06"),                 # GNU as 2.40
    (".byte 5>=3, 5<=3, 1<>2", "ff00ff"),          # GNU as 2.40
    (".byte 1==1, 1!=2, 2 eq 2, 2 ne 2", "ffffff00"),   # GNU as 2.40: a directive takes == != (an operand eq ne)
    ("mov eax, 2 eq 2", "b8ffffffff"),             # GNU as 2.40
    ("mov eax, 1 ge 2", "b800000000"),             # GNU as 2.40
    (".quad 0xffffffffffffffff/2", "0000000000000000"),   # GNU as 2.40: / of signed 64-bit values
    (".quad 0x8000000000000000>>1", "0000000000000040"),  # GNU as 2.40
    (".balign 2*2\n.byte 1", "01"),                # GNU as 2.40
])
def test_expressions_as_gnu_as_evaluates_them(src, expect, tmp_path):
    check(src, expect, tmp_path)


@pytest.mark.parametrize("src, expect", [
    ("mov eax, [rsp+8*3]", "8b442418"),                        # GNU as 2.40
    ("mov eax, [rax + rbx*(1+1) + (1<<4)]", "8b445810"),       # GNU as 2.40
    ("mov eax, [8*3+rsp]", "8b442418"),                        # GNU as 2.40
    ("mov eax, [rax+2*rbx-4*2]", "8b4458f8"),                  # GNU as 2.40
    ("mov eax, [rax-(-8)]", "8b4008"),                         # GNU as 2.40
    ("mov eax, dword ptr ds:8*3", "8b042518000000"),           # GNU as 2.40
    ("lea rax, [rip+8*2]", "488d0510000000"),                  # GNU as 2.40
    ("vgatherdps xmm0, [rax+xmm1*2*2], xmm2", "c4e269920488"),  # GNU as 2.40
])
def test_expressions_in_memory_operands(src, expect, tmp_path):
    check(src, expect, tmp_path)


@pytest.mark.parametrize("src, err, match", [
    ("mov eax, 1<<40", x86gen.ImmediateRangeError, ""),             # GNU as 2.40: shortened to 0, with a warning
    (".long 1<<32", x86gen.ImmediateRangeError, "32 bits"),         # GNU as 2.40: truncated to 0, with a warning
    (".quad (1<<63)*2", x86gen.ImmediateRangeError, "64 bits"),     # GNU as 2.40: 0, silently
    (".quad 0xffffffffffffffff*0xffffffffffffffff", x86gen.ImmediateRangeError, "64 bits"),   # GNU as 2.40: 1
    ("mov eax, 1<<64", x86gen.ImmediateRangeError, "shift count"),  # GNU as 2.40: a warning, 0
    ("mov eax, 5/0", x86gen.ImmediateRangeError, "division by zero"),   # GNU as 2.40: a warning, 5
    (".byte 5%0", x86gen.ImmediateRangeError, "division by zero"),      # GNU as 2.40: a warning, 0
    ("mov eax, 1==1", x86gen.AsmSyntaxError, "write eq, ne"),       # GNU as 2.40: invalid character '='
    ("mov eax, 1 != 1", x86gen.AsmSyntaxError, "write eq, ne"),     # GNU as 2.40: invalid character '='
    ("mov eax, 1 <= 2", x86gen.AsmSyntaxError, "write eq, ne"),     # GNU as 2.40: invalid character '='
    ("mov eax, (1", x86gen.AsmSyntaxError, r"missing '\)'"),        # GNU as 2.40: missing ')'
    ("mov eax, [rax+riz*1+2*4]", x86gen.AsmSyntaxError, "riz in a memory operand with an expr"),   # GNU as 2.40: [rax+0]
])
def test_expression_values_gnu_as_would_wrap_or_warn_about_are_errors(src, err, match):
    with pytest.raises(err, match=match):
        x86gen.assemble(src)


# ---- the current location `.` ----------------------------------------------------------------------------

@pytest.mark.parametrize("src, expect", [
    ("jmp .", "ebfe"),                                # GNU as 2.40
    ("nop\ncall .", "90e8fbffffff"),                  # GNU as 2.40
    ("L: nop\n.long .-L", "9001000000"),              # GNU as 2.40
    ("L: nop\n.long .-L, .-L", "900100000005000000"),  # GNU as 2.40: `.` is where each value goes
    ("L: .byte 1, .-L, .-L", "010102"),               # GNU as 2.40
    ("L: nop\n.quad L-.", "90ffffffffffffffff"),      # GNU as 2.40
    (".byte 1, 2\n.long .-2", "010200000000"),        # GNU as 2.40 (base 0)
    ("L1: jmp L2\n.long .-L1\nL2:", "eb0402000000"),   # GNU as 2.40: after relaxation
])
def test_current_location_dot(src, expect, tmp_path):
    check(src, expect, tmp_path)


@pytest.mark.parametrize("src, expect", [
    ("L: nop\njmp L+1", "90ebfe"),                       # GNU as 2.40: into the middle of itself
    ("jmp .+2", "eb00"),                                  # GNU as 2.40
    (".set X, 3\nL: nop\njz L+X", "907400"),              # GNU as 2.40
    ("jmp L+1\nL: nop\nnop", "eb019090"),                 # GNU as 2.40
    ("L: jmp L-1", "ebfd"),                               # GNU as 2.40
    ("call .+5", "e800000000"),                           # GNU as 2.40
    ("L: nop\njmp L+0x200\n.zero 0x200", "90e9fa010000" + "00" * 0x200),   # GNU as 2.40: rel32, relaxed as a label
])
def test_branch_to_a_label_plus_a_number(src, expect, tmp_path):
    check(src, expect, tmp_path)


def test_branch_to_a_label_plus_a_number_in_the_assembler():
    # GNU as 2.40: `top: nop / jne top+1` is 90 75 fe
    a = x86gen.Assembler()
    top = a.label("top")
    a.bind(top)
    a.nop()
    a.jne(top + 1)
    assert a.assemble().hex() == "9075fe"


@pytest.mark.parametrize("src", ["L: nop\njmp L-L", "L: nop\nM: jmp L+M"])
def test_branch_to_a_sum_of_labels_is_refused(src):
    with pytest.raises(x86gen.AsmSyntaxError, match="not a sum or difference of labels"):
        x86gen.assemble(src)


# ---- symbols: .set, .equ, .equiv, = ------------------------------------------------------------------------

@pytest.mark.parametrize("src, expect", [
    (".set X, 5\nmov eax, X", "b805000000"),                  # GNU as 2.40
    (".equ X, 5\nmov eax, X", "b805000000"),                  # GNU as 2.40
    ("X = 5\nmov eax, X", "b805000000"),                      # GNU as 2.40
    ("X=5\nmov eax, X+1", "b806000000"),                      # GNU as 2.40
    (".set X, 5\nadd eax, X", "83c005"),                      # GNU as 2.40
    (".set X, 5\npush X", "6a05"),                            # GNU as 2.40
    (".set X, 5\nmov eax, [rax+X]", "8b4005"),                # GNU as 2.40
    (".set X, 5\nmov eax, [rax+X*2]", "8b400a"),              # GNU as 2.40
    (".set X, 2\nmov eax, [rax+rbx*X]", "8b0458"),            # GNU as 2.40
    (".set X, 0x100\nmov eax, dword ptr [X]", "8b042500010000"),   # GNU as 2.40
    (".set X, 5\nlea rax, [rip+X]", "488d0505000000"),        # GNU as 2.40
    (".set X, 5\n.long X+1", "06000000"),                     # GNU as 2.40
    (".set X, 5\n.set Y, X*2\n.byte Y", "0a"),                # GNU as 2.40
    (".set N, 3\n.zero N\n.balign N+1", "00000090"),          # GNU as 2.40
    (".set X, 1 < 2\n.byte X", "ff"),                         # GNU as 2.40
    ("L: .set X, 5\nL2: .long L2-L+X", "05000000"),           # GNU as 2.40
])
def test_symbols_are_absolute_values(src, expect, tmp_path):
    check(src, expect, tmp_path)


def test_symbol_as_a_branch_target_is_that_address():
    # GNU as 2.40 leaves a relocation against the absolute address (e9 00 00 00 00); x86gen branches to it, as to `jmp 5`
    assert x86gen.assemble(".set X, 5\njmp X") == x86gen.assemble("jmp 5")
    assert x86gen.assemble(".set X, 5\njne X\n.set X, 9\njne X") == x86gen.assemble("jne 5\njne 9")


@pytest.mark.parametrize("src, expect", [
    (".set X, 5\n.set X, 6\nmov eax, X", "b806000000"),       # GNU as 2.40
    (".equ X, 5\n.equ X, 6\nmov eax, X", "b806000000"),       # GNU as 2.40
    ("X = 5\nX = 6\n.byte X", "06"),                          # GNU as 2.40
    (".set X, 5\n.set X, X+1\n.set X, X+1\nmov eax, X", "b807000000"),   # GNU as 2.40
    (".set X, 5\nmov eax, X\n.set X, 6\nmov eax, X", "b805000000b806000000"),   # GNU as 2.40: the value at each use
])
def test_set_may_redefine_a_symbol(src, expect, tmp_path):
    check(src, expect, tmp_path)


@pytest.mark.parametrize("src", [".equiv X, 5\n.equiv X, 6", ".set X, 5\n.equiv X, 6", ".equiv X, 5\n.set X, 6",
                                 "X: nop\n.set X, 5", ".set X, 5\nX:"])
def test_equiv_and_labels_do_not_redefine(src):
    # GNU as 2.40: symbol `X' is already defined (for `.set X, 5` then `X:` it takes the label; x86gen refuses)
    with pytest.raises(x86gen.AsmSyntaxError, match="already defined"):
        x86gen.assemble(src)


@pytest.mark.parametrize("src, match", [
    (".set eax, 5", "eax is a register"),        # GNU as 2.40 takes it, then `invalid use of register` where it is used
    (".set EAX, 5", "EAX is a register"),
    (".set xmm3, 5", "is a register"),
    (".set ptr, 5", "keyword"),
    (".set byte, 5", "keyword"),
])
def test_symbol_named_as_a_register_or_keyword_is_refused(src, match):
    with pytest.raises(x86gen.AsmSyntaxError, match=match):
        x86gen.assemble(src)


@pytest.mark.parametrize("src, match", [
    ("mov eax, X\n.set X, 5", "after its use on line 1"),   # GNU as 2.40: a memory operand at X's later value
    (".long X\n.set X, 5", "after its use on line 1"),       # GNU as 2.40: 5 (resolved at the end)
    ("L: .set X, L", "names a label"),                       # GNU as 2.40: an alias of L
    (". = 5", "location counter"),                           # GNU as 2.40: five zero bytes
    (".eqv X, 5", "write .set"),                               # GNU as 2.40: X evaluated where it is used
])
def test_symbols_x86gen_cannot_honour_are_refused(src, match):
    with pytest.raises(x86gen.AsmSyntaxError, match=match):
        x86gen.assemble(src)
