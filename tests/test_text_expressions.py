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
