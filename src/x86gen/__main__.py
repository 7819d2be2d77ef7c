"""The ``x86gen`` command (also ``python -m x86gen``).

    x86gen asm "vaddps ymm0, ymm1, [rdi+8]"        hex of the bytes
    x86gen asm -f prog.s --listing                 address, bytes and Intel syntax per line
    x86gen asm -f prog.s -o prog.bin               raw bytes to a file
    x86gen asm -f prog.s -o prog.o                 an ELF64 relocatable object (sections, symbols, relocations)
    x86gen info vaddps                             every form: operands, encoding, flags, CPUID, groups
    x86gen gen [--check]                           regenerate src/x86gen/_gen (source checkout only)

Exit status: 0 on success, 1 when the input cannot be assembled or looked up (the message names the
line and what was expected) or is larger than `MAX_INPUT`, 2 for a wrong command line.
"""
from __future__ import annotations

import argparse
import os
import sys

from .errors import EncodeError, SizeLimitError

MAX_INPUT = 1 << 28   # bytes: the most `x86gen asm -f` reads (256 MiB; as output is capped, errors.MAX_OUTPUT)

LOCATIONS = {"reg": "ModRM.reg", "rm": "ModRM.rm", "vvvv": "VEX.vvvv", "opc": "opcode+r", "is4": "imm8[7:4]",
             "imm": "immediate", "fixed": "implicit"}
ROLES = {"r": "R", "w": "W", "rw": "RW", "cw": "CW", "rcw": "RCW", "cr": "CR", "n": "N"}
ROLE_WORDS = {"r": "read", "w": "written", "rw": "read and written", "cw": "conditionally written",
              "rcw": "read, conditionally written", "cr": "conditionally read", "n": "not accessed"}


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="x86gen", description="x86-64 assembler/encoder generated from isa/x86_64.yaml.",
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Run `x86gen COMMAND --help` for the options of a command.")
    from ._version import __version__
    ap.add_argument("--version", action="version", version=f"x86gen {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("asm", help="assemble Intel-syntax text to bytes",
                       description="Assemble Intel-syntax instructions or a whole program (labels, directives, comments). "
                                   "Prints the bytes as hex, a listing with --listing, or writes raw bytes with -o.",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog='examples:\n  x86gen asm "vfmadd213ps ymm0, ymm0, ymmword ptr [rdi+rbx*4+0x10]"\n'
                              '  x86gen asm "xor eax, eax" "ret"\n  x86gen asm -f prog.s --listing\n  x86gen asm -f - -o out.bin < prog.s')
    p.add_argument("text", nargs="*", help="instructions; several arguments are several lines")
    p.add_argument("-f", "--file", help="read the program from FILE ('-' for standard input)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("-l", "--listing", action="store_true", help="print address, bytes and Intel syntax per instruction")
    out.add_argument("-o", "--output", metavar="FILE", help="write the raw bytes to FILE")
    out.add_argument("--spaced", action="store_true", help="print hex bytes separated by spaces")
    p.add_argument("--base", default="0", help="address of the first byte (default 0); matters for absolute addresses")
    p.add_argument("--format", choices=("bin", "elf"), default=None,
                   help="what -o writes: raw bytes of .text (bin) or an ELF64 relocatable object (elf); default: elf when "
                        "the output's name ends in .o, else bin")
    p.set_defaults(func=cmd_asm)

    p = sub.add_parser("info", help="show every form of a mnemonic",
                       description="Show the forms of mnemonics (or form ids such as VEX_VADDPS_YMM_YMM_YMMM256): operands "
                                   "with roles and encoding slots, the SDM-style encoding, flags, CPUID feature and groups.")
    p.add_argument("names", nargs="+", metavar="MNEMONIC", help="mnemonic (vaddps, jz, ...) or form id")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("gen", help="regenerate src/x86gen/_gen from isa/x86_64.yaml (runs tools/gen.py)",
                       description="Run tools/gen.py of the source checkout this x86gen is imported from "
                                   "(needs the `gen` extra: pyyaml, jinja2).")
    p.add_argument("--check", action="store_true", help="only check that the generated files are up to date")
    p.set_defaults(func=cmd_gen)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except EncodeError as ex:
        print(f"x86gen: error: {ex}", file=sys.stderr)
        return 1
    except BrokenPipeError:   # `x86gen info add | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as ex:
        print(f"x86gen: error: {ex.filename or ''}{': ' if ex.filename else ''}{ex.strerror or ex}", file=sys.stderr)
        return 1


# ---- asm ------------------------------------------------------------------------------------------

def cmd_asm(args) -> int:
    from .program_text import parse_program
    from .syntax import parse_int
    if args.file is not None and args.text:
        print("x86gen asm: error: give the program as arguments or with -f, not both", file=sys.stderr)
        return 2
    if args.file is not None:
        name = "standard input" if args.file == "-" else args.file
        if args.file == "-": data = sys.stdin.buffer.read(MAX_INPUT + 1)
        else:
            with open(args.file, "rb") as fh: data = fh.read(MAX_INPUT + 1)   # (/dev/zero has no end)
        if len(data) > MAX_INPUT:
            raise SizeLimitError(f"{name}: more than {MAX_INPUT} bytes of input, the most x86gen asm reads"
                                 " (x86gen.__main__.MAX_INPUT)")
        source = _decode(data, name)
        if source is None: return 1
    elif args.text: source = "\n".join(args.text)
    else:
        print("x86gen asm: error: nothing to assemble (give instructions, or -f FILE)", file=sys.stderr)
        return 2
    try: base = parse_int(args.base)
    except ValueError:
        print(f"x86gen asm: error: --base: not a number: {args.base!r}", file=sys.stderr)
        return 2
    fmt = args.format or ("elf" if args.output and args.output.endswith(".o") else "bin")
    if fmt == "elf":
        if not args.output or base:
            print("x86gen asm: error: an ELF object (--format elf) is written with -o FILE and no --base", file=sys.stderr)
            return 2
        from .objfile import assemble_object
        obj = assemble_object(source)
        with open(args.output, "wb") as fh: fh.write(obj)
        print(f"{len(obj)} bytes of ELF object written to {args.output}", file=sys.stderr)
        return 0
    if not args.listing and "\n" not in source:
        from .text import assemble
        code = assemble(source, base)
        a = None
    else:
        a = parse_program(source, base)
        code = a.assemble()
    if args.output:
        with open(args.output, "wb") as fh: fh.write(code)
        print(f"{len(code)} bytes written to {args.output}", file=sys.stderr)
    elif args.listing:
        print(a.listing())
    else:
        print(code.hex(" ") if args.spaced else code.hex())
    return 0


def _decode(data: bytes, name: str) -> str | None:
    """The program's text (UTF-8), or None after printing where the first undecodable byte is."""
    try: return data.decode("utf-8")
    except UnicodeDecodeError as ex:
        line = data.count(b"\n", 0, ex.start) + 1
        print(f"x86gen: error: {name}: line {line}: not UTF-8 text (byte {data[ex.start]:#04x} at offset {ex.start})",
              file=sys.stderr)
        return None


# ---- info -----------------------------------------------------------------------------------------

def _groups_of(form) -> list[str]:
    """Names of the `x86gen.groups` groups that hold ``form``."""
    from .groups import groups_of
    return sorted(groups_of(form.id))


def _flags_text(form) -> str:
    parts = []
    for key, word in (("read", "reads"), ("written", "writes"), ("undefined", "undefined"), ("cleared", "cleared"), ("set", "set")):
        fl = form.flags.get(key) or ()
        if fl: parts.append(f"{word} {' '.join(fl)}")
    return "; ".join(parts) or "none"


def form_info(form) -> dict:
    """A JSON-able description of one form."""
    return {
        "id": form.id,
        "mnemonic": form.mnemonic,
        "syntax": form.syntax,
        # (an XOP form's vvvv is XOP.vvvv: AMD APM Vol.3 1.8)
        "operands": [{"kind": o.display, "role": ROLES[o.role], "location": "XOP.vvvv" if o.loc == "vvvv" and form.encoding_kind == "xop"
                      else LOCATIONS.get(o.loc, o.loc)} for o in form.operands],
        "implicit": [{"register": r, "role": ROLES.get(role, role)} for role, r in form.implicit],
        "encoding": form.encoding,
        "length": form.length,
        "cpuid": form.cpuid,
        "flags": {k: list(v) for k, v in form.flags.items() if v},
        "groups": _groups_of(form),
    }


def _resolve(name: str) -> tuple[str, list]:
    from .forms import forms_of, get_form
    from .selection.request import canonical
    form_id = name.isupper() or "_" in name        # ADD_RM32_R32, vex_vaddps_…: a form id first
    if form_id:
        try: return name, [get_form(name.upper())]
        except EncodeError as ex: form_error = ex
    mn = name.lower()
    canon = canonical(mn)                          # cqto → cqo; cltq stays cltq while the table has no cdqe
    try: return canon, forms_of(canon)
    except EncodeError:
        if "_" in name: raise form_error from None  # "no form with id 'VEX_NOPE'", not "unknown mnemonic"
        raise


def cmd_info(args) -> int:
    results = []
    for name in args.names:
        mn, forms = _resolve(name)
        results.append((name, mn, forms))
    if args.json:
        import json
        print(json.dumps([{"query": q, "mnemonic": mn, "forms": [form_info(f) for f in forms]} for q, mn, forms in results], indent=2))
        return 0
    blocks = []
    for q, mn, forms in results:
        cpuids = sorted({f.cpuid for f in forms})
        title = f"{q.lower()} (alias of {mn})" if q.lower() != mn and not q.isupper() else (q if q.isupper() else mn)
        lines = [f"{title}: {len(forms)} form{'s' if len(forms) != 1 else ''}, CPUID {', '.join(cpuids)}"]
        for f in forms:
            info = form_info(f)
            lines.append("")
            lines.append(f"  {f.syntax}")
            lines.append(f"    id        {f.id}")
            ops = ", ".join(f"{o['role']}:{o['kind']} ({o['location']})" for o in info["operands"]) or "none"
            lines.append(f"    operands  {ops}")
            if info["implicit"]:
                imp = ", ".join(f"{x['role']}:{x['register']}" for x in info["implicit"])
                lines.append(f"    implicit  {imp}")
            note = "with register operands" if any(o.mem is not None for o in f.operands) else "long"
            lines.append(f"    encoding  {f.encoding}   ({f.length} bytes {note})")
            lines.append(f"    flags     {_flags_text(f)}")
            lines.append(f"    cpuid     {f.cpuid}")
            if info["groups"] is not None:
                lines.append(f"    groups    {', '.join(info['groups']) or '-'}")
        blocks.append("\n".join(lines))
    print("\n\n".join(blocks))
    return 0


# ---- gen ------------------------------------------------------------------------------------------

def _gen_script() -> str | None:
    here = os.path.dirname(os.path.abspath(__file__))
    for root in (os.path.dirname(os.path.dirname(here)), os.getcwd()):
        path = os.path.join(root, "tools", "gen.py")
        if os.path.isfile(path) and os.path.isfile(os.path.join(root, "isa", "x86_64.yaml")): return path
    return None


def cmd_gen(args) -> int:
    path = _gen_script()
    if path is None:
        print("x86gen gen: error: tools/gen.py not found: `x86gen gen` works in a source checkout (run it from the repository)",
              file=sys.stderr)
        return 1
    import runpy
    ns = runpy.run_path(path, run_name="x86gen_gen")
    return int(ns["main"](["--check"] if args.check else []) or 0)


if __name__ == "__main__":
    sys.exit(main())
