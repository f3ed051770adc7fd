"""The layers, read from the source: core <- diagnostics <- cli/commands <- the Typer modules and renderers.

Every import counts (module level, under ``TYPE_CHECKING``, inside a
function); modules live in ``core/``, ``diagnostics/``, ``cli/`` and import
one another as ``mcmc.core...`` (the package-dir mapping of pyproject.toml).
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

ROOT = Path(__file__).parents[1]
#: Layer -> what its modules may not import (a name or a dotted prefix of one).
FORBIDDEN = {
    "mcmc.core": ("mcmc.diagnostics", "mcmc.cli"),
    "mcmc.diagnostics": ("mcmc.cli",),
    "mcmc.cli.commands": ("typer", "click", "rich", *(f"mcmc.cli.{m}" for m in ("app", "config", "console", "options",
                          "render", "speedups", "compare", "diagnose", "lda", "sample"))),
}  # fmt: skip
QUIET = ("mcmc.core", "mcmc.diagnostics", "mcmc.cli.commands")  # no print, no exit: the library never speaks
EXITS = {"print", "exit", "quit", "sys.exit", "os._exit"}


def sources() -> dict[str, str]:
    """Module name -> source of every module of the three packages."""
    files = {p: ["mcmc", *p.relative_to(ROOT).with_suffix("").parts] for d in ("core", "diagnostics", "cli")
             for p in (ROOT / d).rglob("*.py")}  # fmt: skip
    return {".".join(parts[:-1] if parts[-1] == "__init__" else parts): p.read_text() for p, parts in files.items()}


def under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def violations(modules: dict[str, str]) -> list[str]:
    found = []
    for module, text in modules.items():
        for node in ast.walk(ast.parse(text)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                base = module.rsplit(".", node.level)[0] + "." if node.level else ""
                names = [base + (node.module or "")] + [f"{base}{node.module or ''}.{a.name}" for a in node.names]
            for layer, banned in FORBIDDEN.items():
                if under(module, layer):
                    found += [f"{module} imports {n}" for n in names for b in banned if under(n, b)]
            if isinstance(node, ast.Call) and any(under(module, q) for q in QUIET) and ast.unparse(node.func) in EXITS:
                found.append(f"{module} calls {ast.unparse(node.func)} (line {node.lineno})")
    return sorted(set(found))


def test_each_layer_imports_only_the_layers_below_and_the_library_never_prints_or_exits() -> None:
    assert violations(sources()) == []


def test_a_deliberate_upward_import_is_caught() -> None:
    upward = {
        "mcmc.diagnostics.report.x": "def f():\n    from mcmc.cli.render import table\n",
        "mcmc.cli.commands.x": "import rich\nprint('done')\n", "mcmc.core.x": "import sys\nsys.exit(2)\n",
    }  # fmt: skip
    assert violations(upward) == [
        "mcmc.cli.commands.x calls print (line 2)", "mcmc.cli.commands.x imports rich",
        "mcmc.core.x calls sys.exit (line 2)", "mcmc.diagnostics.report.x imports mcmc.cli.render",
        "mcmc.diagnostics.report.x imports mcmc.cli.render.table",
    ]  # fmt: skip


def imports(module: str, text: str) -> list[tuple[ast.stmt, list[str]]]:
    """Each import statement of ``module`` with the names it imports (``pkg.name`` too for ``from pkg import name``)."""
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            out.append((node, [a.name for a in node.names]))
        elif isinstance(node, ast.ImportFrom):
            base = module.rsplit(".", node.level)[0] + "." if node.level else ""
            out.append((node, [base + (node.module or "")] + [f"{base}{node.module}.{a.name}" for a in node.names]))
    return out


def test_the_diagnostics_and_the_command_line_import_one_another_without_cycles() -> None:
    modules = {m: t for m, t in sources().items() if not under(m, "mcmc.core")}
    graph = {m: {n for _, names in imports(m, t) for n in names if n in modules and n != m} for m, t in modules.items()}
    graphlib.TopologicalSorter(graph).prepare()  # raises CycleError naming the cycle


def test_an_import_inside_a_function_says_it_is_for_start_up_speed() -> None:
    unexplained = set()
    for module, text in sources().items():
        if under(module, "mcmc.core"):
            continue  # core keeps its own rule, in its own test
        lines = text.splitlines()
        for fn in (n for n in ast.walk(ast.parse(text)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            for node in (n for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom))):
                at = node.lineno - 1  # the comment is on the line, or above it in the block of imports it heads
                while "# start-up:" not in lines[at] and lines[at - 1].strip().startswith(("#", "from ", "import ")):
                    at -= 1
                if "# start-up:" not in lines[at]:
                    unexplained.add(f"{module}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    assert sorted(unexplained) == []
