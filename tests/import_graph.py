"""The import graph of the product's own modules (server/, bridge/, toolsets/), read from their source with `ast`.

Every import a reader would follow counts, at module level or inside a function: a lazy import for start-up
speed still ties two files together. `from pkg import name` is an import of the submodule `pkg.name` when
there is one. Imports under `if TYPE_CHECKING:` never run, so they are left out of the circles (the layering
rule counts them: an annotation naming a higher layer is still a dependency on it).

Used by tests/project/test_import_circles.py and scripts/import_circles.py.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

PACKAGES = ("server", "bridge", "toolsets")
ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True, slots=True)
class Import:
    module: str  # the absolute name imported: a submodule when `from pkg import sub` names one
    name: str  # what the line names (the module itself for `import a.b`)
    line: int
    type_checking: bool


Graph = Mapping[str, Mapping[str, set[str]]]  # module -> the own modules it imports -> the names it takes


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Each own module's dotted name (a package by its `__init__.py`) and its file."""
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports_in(module: str, path: Path, known: Mapping[str, Path]) -> Iterator[Import]:
    """The imports of one file, relative ones made absolute; `known` (the own modules) tells a submodule named
    by `from pkg import sub` from any other name."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    guarded = _type_checking_nodes(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(alias.name, alias.name, node.lineno, id(node) in guarded)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - (node.level - 1)] + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                target = sub if sub in known else base
                yield Import(target, alias.name, node.lineno, id(node) in guarded)


def build_graph(root: Path = ROOT) -> dict[str, dict[str, set[str]]]:
    """Own module -> own module it imports (TYPE_CHECKING imports left out) -> the names it takes from it."""
    known = module_files(root)
    graph: dict[str, dict[str, set[str]]] = {name: {} for name in known}
    for name, path in known.items():
        for found in imports_in(name, path, known):
            target = _own_module(found.module, known)
            if found.type_checking or target is None or target == name:
                continue
            graph[name].setdefault(target, set()).add(found.name)
    return graph


def circles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, {})))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def describe(found: list[list[str]], graph: Graph) -> str:
    """Each circle's modules and the imports that tie them, then the count."""
    lines = []
    for number, component in enumerate(found, start=1):
        lines.append(f"circle {number}: {len(component)} modules")
        members = set(component)
        for module in component:
            for target, names in sorted(graph[module].items()):
                if target in members:
                    lines.append(f"  {module} -> {target}: {', '.join(sorted(names))}")
    lines.append(f"import circles: {len(found)}")
    return "\n".join(lines)


def layering_violations(root: Path = ROOT) -> list[str]:
    """Imports across the layering `server -> bridge -> toolsets`, TYPE_CHECKING ones included: toolsets/
    never imports `mcp`, `server` or `bridge`, and bridge/ never imports `server`."""
    forbidden = {"toolsets": {"mcp", "server", "bridge"}, "bridge": {"server"}}
    known = module_files(root)
    problems = []
    for name, path in known.items():
        banned = forbidden.get(name.partition(".")[0], set())
        for found in imports_in(name, path, known):
            if found.module.partition(".")[0] in banned:
                problems.append(f"{path.relative_to(root)}:{found.line}: {name} imports {found.module}")
    return problems


def _own_module(name: str, known: Mapping[str, Path]) -> str | None:
    """The own module an import runs: the name itself, or its nearest package that is a module here."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """The ids of the import nodes under `if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`)."""
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _names_type_checking(node.test):
            for statement in node.body:
                guarded.update(id(inner) for inner in ast.walk(statement))
    return guarded


def _names_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )
