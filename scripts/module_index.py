"""docs/architecture.md's generated parts, from the code: the house (every package and subpackage with the first line
of its `__init__` docstring, and the modules it holds) between the `house` markers, and every module of the three
packages with the first line of its docstring between the `module-index` markers
(tests/project/test_architecture_index.py holds the page to this output).

    python3 scripts/module_index.py            # both blocks, as the page holds them
    python3 scripts/module_index.py --write    # rewrite the page's blocks
"""

from __future__ import annotations

import ast
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("server", "bridge", "toolsets")
PAGE = ROOT / "docs" / "architecture.md"
BEGIN, END = "<!-- module-index:begin -->", "<!-- module-index:end -->"
HOUSE_BEGIN, HOUSE_END = "<!-- house:begin -->", "<!-- house:end -->"
# The repository's other folders, which are not packages: what each holds (the test checks this list against the
# folders git tracks, so a new folder needs its line here).
OTHER_FOLDERS = {
    "tests": "pytest + anyio (docs/development.md): server/, bridge/, toolsets/ mirror the packages; e2e/ starts "
    "real servers, hosts and subprocesses; project/ checks the repository itself (this page's generated parts)",
    "bench": "benchmark scripts, not timed tests (docs/development.md, docs/performance.md)",
    "scripts": "developer scripts: the conformance harness, the import-circle count, this page's generator",
    "examples": "clients in Python and TypeScript, a LangGraph agent, a plugin",
    "deploy": "container images, compose and Debian service files, the HAProxy balancer (docs/deployment.md)",
    "docs": "these pages",
    ".ci": "`run`: what CI runs (docs/development.md)",
}
HOUSE_DEPTH = 3  # server/ is 1, server/cli/ is 2, toolsets/infra/store/ is 3; deeper packages are counted
NAME_WIDTH = 29
WIDTH = 118
SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)\.(?=\s+[A-Z`(])")


def first_line(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    line = doc.strip().split("\n", 1)[0].strip()
    return line if line else "(no docstring)"


def summary(path: Path) -> str:
    """The first sentence of the docstring's first paragraph, on one line."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    paragraph = " ".join(doc.strip().split("\n\n", 1)[0].split())
    found = SENTENCE_END.search(paragraph)
    return (paragraph[: found.start() + 1] if found else paragraph) or "(no docstring)"


def modules(package: str) -> list[Path]:
    return sorted(path for path in (ROOT / package).rglob("*.py") if "__pycache__" not in path.parts)


def index() -> str:
    rows = []
    for package in PACKAGES:
        for path in modules(package):
            what = first_line(path).replace("|", r"\|")
            rows.append(f"| `{path.relative_to(ROOT).as_posix()}` | {what} |")
    return "\n".join([BEGIN, "| module | what it is |", "|---|---|", *rows, END])


def _entry(indent: int, name: str, what: str) -> list[str]:
    """`name` in its column, `what` wrapped beside it."""
    left = " " * indent + name
    column = max(NAME_WIDTH, len(left) + 1)
    lines = textwrap.wrap(what, WIDTH - column) or [""]
    return [f"{left.ljust(column)}{lines[0]}".rstrip(), *(" " * column + line for line in lines[1:])]


def _package(folder: Path, depth: int) -> list[str]:
    lines = _entry(2 * (depth - 1), f"{folder.name}/", summary(folder / "__init__.py"))
    children = sorted(path for path in folder.iterdir() if (path / "__init__.py").is_file())
    own = sorted(path.stem for path in folder.glob("*.py") if path.name != "__init__.py")
    if own:
        lines += _entry(2 * depth, f"{len(own)} module{'s' * (len(own) > 1)}:", ", ".join(own))
    if depth < HOUSE_DEPTH:
        for child in children:
            lines += _package(child, depth + 1)
    elif children:
        names = ", ".join(f"{child.name}/" for child in children)
        lines += _entry(2 * depth, f"{len(children)} package{'s' * (len(children) > 1)}:", names)
    return lines


def house() -> str:
    lines = []
    for package in PACKAGES:
        lines += _package(ROOT / package, 1)
    for folder, what in OTHER_FOLDERS.items():
        lines += _entry(0, f"{folder}/", what)
    return "\n".join([HOUSE_BEGIN, "```", *lines, "```", HOUSE_END])


def _replaced(page: str, begin: str, end: str, block: str) -> str:
    start, stop = page.index(begin), page.index(end) + len(end)
    return page[:start] + block + page[stop:]


def with_index(page: str) -> str:
    """The page with both generated blocks as the code is now."""
    return _replaced(_replaced(page, HOUSE_BEGIN, HOUSE_END, house()), BEGIN, END, index())


if __name__ == "__main__":
    if "--write" in sys.argv:
        PAGE.write_text(with_index(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print(house())
        print()
        print(index())
