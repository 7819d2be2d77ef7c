"""The `x86gen` command line: `python -m x86gen` and `x86gen.__main__.main` (the console script's entry)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import x86gen
from x86gen.__main__ import main

ROOT = Path(__file__).resolve().parent.parent


def run(*args, stdin: str | None = None) -> subprocess.CompletedProcess:
    """`python -m x86gen ARGS` from the source tree (PYTHONPATH=src), as a user of a checkout runs it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "x86gen", *args], input=stdin, capture_output=True, text=True, env=env,
                          cwd=str(ROOT), timeout=120)


def test_asm_must_show():
    r = run("asm", "vfmadd213ps ymm0, ymm0, ymmword ptr [rdi+rbx*4+0x10]")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "c4e27da8449f10\n"


def test_asm_in_process(capsys):
    assert main(["asm", "vaddps ymm0, ymm1, [rdi+8]"]) == 0
    assert capsys.readouterr().out == "c5f458470 8\n".replace(" ", "")
    assert main(["asm", "xor eax, eax", "ret", "--spaced"]) == 0
    assert capsys.readouterr().out == "31 c0 c3\n"


def test_asm_file_listing_and_output(tmp_path, capsys):
    prog = tmp_path / "prog.s"
    prog.write_text(".intel_syntax noprefix\nsum:\n  xor eax, eax\n.L1:\n  add rax, rdi\n  dec rdi\n  jnz .L1\n  ret\n")
    assert main(["asm", "-f", str(prog)]) == 0
    assert capsys.readouterr().out.strip() == "31c04801f848ffcf75f8c3"
    assert main(["asm", "-f", str(prog), "--listing"]) == 0
    out = capsys.readouterr().out
    assert "sum:" in out and ".L1:" in out
    assert any(ln.split()[:3] == ["00000008", "75", "f8"] and ln.endswith("jne .L1") for ln in out.splitlines())
    binf = tmp_path / "out.bin"
    assert main(["asm", "-f", str(prog), "-o", str(binf)]) == 0
    assert binf.read_bytes().hex() == "31c04801f848ffcf75f8c3"
    assert "11 bytes" in capsys.readouterr().err
    assert main(["asm", "--listing", "nop"]) == 0
    assert "00000000  90" in capsys.readouterr().out


def test_asm_stdin_and_base():
    r = run("asm", "-f", "-", "--base", "0x1000", stdin="jmp 0x1000\ncall 0x2000\n")
    assert r.returncode == 0 and r.stdout.strip() == "ebfee8f90f0000"   # call at 0x1002, ends 0x1007


def test_asm_errors_exit_1_and_name_the_line(tmp_path):
    r = run("asm", "add eax, rcx")
    assert r.returncode == 1 and "no form of 'add'" in r.stderr and r.stdout == ""
    prog = tmp_path / "bad.s"
    prog.write_text("nop\nnop\njmp nowhere\n")
    r = run("asm", "-f", str(prog))
    assert r.returncode == 1 and "line 3: 'jmp nowhere': undefined label 'nowhere'" in r.stderr
    r = run("asm", "-f", str(tmp_path / "missing.s"))
    assert r.returncode == 1 and "missing.s" in r.stderr


def test_usage_errors_exit_2():
    assert run().returncode == 2
    assert run("frobnicate").returncode == 2
    assert run("asm").returncode == 2
    assert run("asm", "--base", "zz", "nop").returncode == 2
    assert run("asm", "-f", "x.s", "nop").returncode == 2
    assert run("info").returncode == 2


@pytest.mark.parametrize("cmd", [[], ["asm"], ["info"], ["gen"]])
def test_help(cmd):
    r = run(*cmd, "--help")
    assert r.returncode == 0 and "usage: x86gen" in r.stdout


def test_info_vaddps(capsys):
    assert main(["info", "vaddps"]) == 0
    out = capsys.readouterr().out
    assert "vaddps ymm, ymm, ymm/m256" in out
    assert "VEX.256.0F.WIG 58 /r" in out and "VEX.128.0F.WIG 58 /r" in out
    assert "W:ymm (ModRM.reg), R:ymm (VEX.vvvv), R:ymm/m256 (ModRM.rm)" in out
    assert f"cpuid     {x86gen.get_form('VEX_VADDPS_YMM_YMM_YMMM256').cpuid}" in out and "flags     none" in out
    try:
        from x86gen import groups
    except ImportError:
        assert "groups" not in out
    else:
        assert "groups" in out
        for g in groups.groups_of("VEX_VADDPS_YMM_YMM_YMMM256"): assert g in out


def test_info_flags_alias_form_id_json(capsys):
    assert main(["info", "jz", "ADD_RM32_IMM8"]) == 0
    out = capsys.readouterr().out
    assert "jz (alias of je)" in out and "reads ZF" in out
    assert "add r/m32, simm8" in out and "83 /0 ib" in out and "writes AF CF OF PF SF ZF" in out
    assert main(["info", "--json", "shl"]) == 0
    data = json.loads(capsys.readouterr().out)
    forms = data[0]["forms"]
    ids = [f["id"] for f in forms]   # the /4 forms, then the /6 ones (iced's SAL_*, reachable by id only), and the
    # REX2 twins of the /4 ones (APX: r16-r31)
    assert data[0]["mnemonic"] == "shl" and all(i.removeprefix("REX2_").startswith(("SHL_", "SAL_")) for i in ids)
    assert ids == sorted(ids, key=lambda i: i.startswith("SAL_")) and any(i.startswith("SHL_") for i in ids)
    cl = next(f for f in forms if f["id"] == "SHL_RM32_CL")
    assert cl["operands"] == [{"kind": "r/m32", "role": "RW", "location": "ModRM.rm"}, {"kind": "cl", "role": "R", "location": "implicit"}]
    assert cl["encoding"] == "D3 /4" and cl["cpuid"] == x86gen.get_form("SHL_RM32_CL").cpuid


def test_info_unknown_exit_1():
    r = run("info", "vaddpz")
    assert r.returncode == 1 and "unknown mnemonic 'vaddpz'" in r.stderr and "vaddps" in r.stderr


def test_gen_check():
    r = run("gen", "--check")
    assert r.returncode in (0, 1), r.stderr     # 1 only if someone left the generated files stale
    assert "generated files up to date" in r.stdout or "stale" in r.stdout


def test_console_script_entry_point():
    """pyproject declares `x86gen = "x86gen.__main__:main"`: main takes argv and returns the exit status."""
    import tomllib
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["scripts"]["x86gen"] == "x86gen.__main__:main"
    assert main(["asm", "ret"]) == 0
