#!/usr/bin/env python3
"""The runtime's layers: the declared order of x86gen's modules, its import graph, and the modules a call passes.

    python tools/layers.py            the import graph of src/x86gen against `LAYERS`: modules, imports, upward
                                      imports, cycles, undeclared modules (exit 1 if any rule is broken)
    python tools/layers.py --trace    also the modules a first, second and steady `encode` and a 10-line
                                      `assemble` pass through (in a fresh interpreter each)

Every ``import`` of a module under src/x86gen is read with `ast`, at module level and inside functions, and so
are ``importlib.import_module`` / ``__import__`` calls (whose target must be a constant, or the call is itself
an error: a dynamic import hides an edge). A module may import only modules declared before it in `LAYERS`:
the layers are listed bottom up and, within a layer, in the order the modules may import one another. The
package ``x86gen/__init__.py`` (the public facade, last) may import anything; no module imports from it.
tests/test_architecture.py runs the same checks.
"""
from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
from collections.abc import Iterable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
PACKAGE = "x86gen"

# Bottom up. A module may import the modules listed before it (an earlier layer, or earlier in its own layer).
# A name ending in ".*" stands for every module of that package not listed otherwise (generated shape modules).
LAYERS: list[tuple[str, list[str]]] = [
    ("base", ["x86gen._version", "x86gen.errors", "x86gen.jit", "x86gen.elf"]),
    ("operands", ["x86gen.registers", "x86gen.memory", "x86gen.evex"]),
    ("table", ["x86gen._gen", "x86gen._gen.schema", "x86gen._gen.table.*", "x86gen._gen.table", "x86gen.table"]),
    ("diagnostics", ["x86gen.diagnostics"]),
    ("encoding", ["x86gen.encoding", "x86gen.encoding.runtime", "x86gen._gen.encoders", "x86gen._gen.encoders.*",
                  "x86gen.encoding.operands", "x86gen.encoding.legacy", "x86gen.encoding.vex", "x86gen.encoding.evex",
                  "x86gen.encoding.xop", "x86gen.encoding.rex2",
                  "x86gen.encoding.writer", "x86gen._gen.prefixes", "x86gen.prefixes", "x86gen.encoding.decorated"]),
    ("forms", ["x86gen.forms"]),
    ("selection", ["x86gen.selection", "x86gen.selection.request", "x86gen.selection.candidates", "x86gen.selection.plans",
                   "x86gen.selection.pseudo", "x86gen.selection.prefixed"]),
    ("encoder", ["x86gen.encoder"]),
    ("syntax", ["x86gen.syntax"]),
    ("assembler", ["x86gen._gen.asm_methods", "x86gen.assembler"]),
    ("text", ["x86gen.program_text", "x86gen.text", "x86gen.objfile"]),
    ("users", ["x86gen.instruction", "x86gen._gen.reference", "x86gen._gen.groups", "x86gen.groups", "x86gen.reference",
               "x86gen._gen.isel", "x86gen.isel", "x86gen._gen.ops", "x86gen.integrations", "x86gen.integrations.*",
               "x86gen.__main__"]),
    ("facade", ["x86gen"]),
]


def module_files(src: str = SRC) -> dict[str, str]:
    """Every module of the package: dotted name -> file path."""
    out = {}
    top = os.path.join(src, PACKAGE)
    for d, dirs, names in os.walk(top):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for n in sorted(names):
            if not n.endswith(".py"): continue
            rel = os.path.relpath(os.path.join(d, n), src)[:-3].replace(os.sep, ".")
            out[rel[:-len(".__init__")] if rel.endswith(".__init__") else rel] = os.path.join(d, n)
    return out


class Import:
    """One edge: ``module`` imports ``target`` at ``line`` (``where``: "module", "function" or "dynamic")."""
    __slots__ = ("module", "target", "line", "where")

    def __init__(self, module: str, target: str, line: int, where: str):
        self.module, self.target, self.line, self.where = module, target, line, where

    def __repr__(self) -> str: return f"{self.module}:{self.line} -> {self.target} ({self.where})"


def _resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute name of ``from <level dots><name> import …`` written in ``module``."""
    if level == 0: return name or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[:len(parts) - (level - 1)]
    return ".".join(parts + ([name] if name else []))


def imports_of(module: str, path: str, modules: Iterable[str]) -> tuple[list[Import], list[str]]:
    """The imports of x86gen modules written in ``module`` (file ``path``), and the dynamic imports whose target is
    not a constant (each an error: "module:line")."""
    known = set(modules)
    is_package = path.endswith("__init__.py")
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    out: list[Import] = []
    unresolved: list[str] = []

    def target_of(name: str) -> str | None:
        """The x86gen module ``name`` names (itself, or the nearest package/module above a name inside it)."""
        while name and name not in known: name = name.rpartition(".")[0]
        return name or None

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            w = "function" if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else where
            if isinstance(child, ast.Import):
                for a in child.names:
                    if a.name.split(".")[0] == PACKAGE:
                        t = target_of(a.name)
                        if t: out.append(Import(module, t, child.lineno, w))
            elif isinstance(child, ast.ImportFrom):
                base = _resolve(module, is_package, child.level, child.module)
                if base.split(".")[0] != PACKAGE: pass
                else:
                    for a in child.names:
                        full = f"{base}.{a.name}"
                        t = full if full in known else target_of(base)   # a submodule, or a name of a module
                        if t: out.append(Import(module, t, child.lineno, w))
            elif isinstance(child, ast.Call) and _is_dynamic_import(child.func):
                t = _constant_target(child, module, is_package)
                if t is None: unresolved.append(f"{module}:{child.lineno}")
                elif t.split(".")[0] == PACKAGE:
                    t2 = target_of(t)
                    if t2: out.append(Import(module, t2, child.lineno, "dynamic"))
            visit(child, w)
    visit(tree, "module")
    seen: set = set()   # one edge per statement and target (`from .m import a, b` is one import of m)
    out = [i for i in out if (i.target, i.line) not in seen and not seen.add((i.target, i.line))]
    # `from . import x` inside a package's own __init__ names the package's submodule; a module importing itself
    # (a name of its own package from within) is no edge
    return [i for i in out if i.target != module], unresolved


def _is_dynamic_import(f: ast.AST) -> bool:
    if isinstance(f, ast.Name): return f.id in ("__import__", "import_module")
    return isinstance(f, ast.Attribute) and f.attr == "import_module"


def _constant_target(call: ast.Call, module: str, is_package: bool) -> str | None:
    if not call.args or not isinstance(call.args[0], ast.Constant) or not isinstance(call.args[0].value, str): return None
    name = call.args[0].value
    if name.startswith("."):
        level = len(name) - len(name.lstrip("."))
        return _resolve(module, is_package, level, name.lstrip(".") or None)
    return name


def graph(src: str = SRC) -> tuple[dict[str, str], list[Import], list[str]]:
    """(modules, every import between them, dynamic imports without a constant target)."""
    mods = module_files(src)
    edges, unresolved = [], []
    for m, p in mods.items():
        e, u = imports_of(m, p, mods)
        edges += e
        unresolved += u
    return mods, edges, unresolved


def rank(layers=LAYERS) -> dict[str, tuple[int, int]]:
    """Declared module (or package pattern ``pkg.*``) -> (layer index, position in the layer)."""
    return {m: (i, j) for i, (_n, mods) in enumerate(layers) for j, m in enumerate(mods)}


def rank_of(module: str, ranks: dict[str, tuple[int, int]]) -> tuple[int, int] | None:
    if module in ranks: return ranks[module]
    parent = module.rpartition(".")[0]
    while parent:
        if parent + ".*" in ranks: return ranks[parent + ".*"]
        parent = parent.rpartition(".")[0]
    return None


def cycles(mods: Iterable[str], edges: list[Import]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    adj: dict[str, set[str]] = {m: set() for m in mods}
    for e in edges: adj.setdefault(e.module, set()).add(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        work = [(v, iter(sorted(adj.get(v, ()))))]
        index[v] = low[v] = counter[0]; counter[0] += 1
        stack.append(v); on.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1
                    stack.append(w); on.add(w)
                    work.append((w, iter(sorted(adj.get(w, ())))))
                    break
                if w in on: low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work: low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop(); on.discard(w); comp.append(w)
                        if w == node: break
                    if len(comp) > 1: out.append(sorted(comp))
    for v in sorted(adj):
        if v not in index: strong(v)
    return out


def depth(mods: Iterable[str], edges: list[Import]) -> int:
    """The number of layers the graph needs: the longest import chain, counting each cycle as one module."""
    comp_of = {}
    for k, c in enumerate(cycles(mods, edges)):
        for m in c: comp_of[m] = f"#cycle{k}"
    adj: dict[str, set[str]] = {}
    for e in edges:
        a, b = comp_of.get(e.module, e.module), comp_of.get(e.target, e.target)
        if a != b: adj.setdefault(a, set()).add(b)
    memo: dict[str, int] = {}

    def d(v: str) -> int:
        if v not in memo:
            memo[v] = 0
            memo[v] = 1 + max((d(w) for w in adj.get(v, ())), default=0)
        return memo[v]
    return max((d(comp_of.get(m, m)) for m in mods), default=0)


def check(src: str = SRC, layers=LAYERS) -> dict:
    """Every rule's findings: undeclared modules, upward imports, cycles, imports of the facade, unresolved dynamic
    imports, and the figures (modules, imports, depth)."""
    mods, edges, unresolved = graph(src)
    ranks = rank(layers)
    undeclared = sorted(m for m in mods if rank_of(m, ranks) is None)
    upward, facade = [], []
    for e in edges:
        if e.target == PACKAGE and e.module != PACKAGE: facade.append(e); continue
        a, b = rank_of(e.module, ranks), rank_of(e.target, ranks)
        if a is None or b is None: continue
        if e.module == PACKAGE: continue   # the facade may import anything
        if b >= a and not e.target.startswith(e.module + "."): upward.append(e)   # (a package may import its modules)
    own = [m for m in mods if not m.startswith(PACKAGE + "._gen")]
    own_edges = [e for e in edges if not e.module.startswith(PACKAGE + "._gen")]
    return {"modules": len(own), "imports": len(own_edges), "generated": len(mods) - len(own),
            "depth": depth(mods, edges), "cycles": cycles(mods, edges),
            "upward": upward, "facade": facade, "undeclared": undeclared, "unresolved": unresolved}


def report(found: dict, layers=LAYERS) -> list[str]:
    lines = [f"{found['modules']} modules (and {found['generated']} generated), {found['imports']} imports written in them,"
             f" {found['depth']} layers deep (the longest import chain);"
             f" {len(found['upward'])} upward imports, {len(found['cycles'])} cycles, {len(found['undeclared'])} undeclared"
             f" modules, {len(found['facade'])} imports of the package facade, {len(found['unresolved'])} dynamic imports"
             " without a constant target"]
    for c in found["cycles"]: lines.append("cycle: " + " <-> ".join(c))
    for e in found["upward"]: lines.append(f"upward: {e.module}:{e.line} imports {e.target} ({e.where})")
    for e in found["facade"]: lines.append(f"facade: {e.module}:{e.line} imports from the package x86gen ({e.where})")
    for m in found["undeclared"]: lines.append(f"undeclared: {m} (add it to LAYERS in tools/layers.py)")
    for u in found["unresolved"]: lines.append(f"dynamic import without a constant target: {u}")
    return lines


# ---- the modules a call passes through ------------------------------------------------------------------------------

TRACE = r"""
import sys, json
sys.path.insert(0, {src!r})
import x86gen
from x86gen import eax, ecx
entered = []
def prof(frame, event, arg):
    name = frame.f_code.co_name   # (a module's body and its comprehensions run when it is imported: not counted)
    if event == "call" and (name[:1] != "<" or name == "<lambda>"):
        m = frame.f_globals.get("__name__", "")
        if m.split(".")[0] == "x86gen": entered.append(m)
def run(code):
    entered.clear()
    sys.setprofile(prof)
    exec(code, {{"x86gen": x86gen, "eax": eax, "ecx": ecx}})
    sys.setprofile(None)
    seq = [m for i, m in enumerate(entered) if i == 0 or entered[i - 1] != m]
    return sorted(set(entered)), len(seq) - 1
out = {{}}
out["first encode"] = run("x86gen.encode('add', eax, 1)")
out["second encode"] = run("x86gen.encode('add', eax, 1)")
for _ in range(300): x86gen.encode('add', eax, 1)
out["steady encode"] = run("x86gen.encode('add', eax, 1)")
PROGRAM = '''top:
    mov eax, dword ptr [rdi+8]
    add eax, ecx
    vaddps ymm0, ymm1, ymmword ptr [rsi]
    vmovups ymmword ptr [rdx+32], ymm0
    dec ecx
    jne top
    lea rax, [rip+top]
    xor ecx, ecx
    ret
'''
out["10-line assemble"] = run("x86gen.assemble(PROGRAM)".replace("PROGRAM", repr(PROGRAM)))
print(json.dumps(out))
"""


def trace(src: str = SRC) -> dict[str, tuple[list[str], int]]:
    """For each call of `TRACE`, in a fresh interpreter: (the x86gen modules whose functions it entered, how many times
    the call passed from one module's function to another's)."""
    import json
    r = subprocess.run([sys.executable, "-c", TRACE.format(src=src)], capture_output=True, text=True, timeout=120)
    if r.returncode: raise RuntimeError(r.stderr)
    return {k: (v[0], v[1]) for k, v in json.loads(r.stdout).items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", default=SRC, help="the src folder (default: this checkout's)")
    ap.add_argument("--trace", action="store_true", help="also the modules a few calls pass through")
    args = ap.parse_args(argv)
    found = check(args.src)
    for line in report(found): print(line)
    if args.trace:
        for what, (mods, hops) in trace(args.src).items():
            print(f"{what}: {len(mods)} modules, {hops} passes between them: {', '.join(mods)}")
    bad = found["upward"] or found["cycles"] or found["undeclared"] or found["facade"] or found["unresolved"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
