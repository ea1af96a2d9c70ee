"""What the documentation names in the repository exists: every `folder/.../file` path under one of the repository's
folders, in docs/*.md and the README, and every function or class docs/architecture.md calls by name, so a moved
or deleted module cannot stay named in the docs."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
FOLDERS = ("server", "bridge", "toolsets", "tests", "bench", "scripts", "examples", "deploy", "docs", ".ci")
# a file (with its extension) or a folder (with its slash): `server/discover` is a method, not a path
PATH = re.compile(
    r"(?<![\w./-])((?:" + "|".join(re.escape(f) for f in FOLDERS) + r")/(?:[\w.-]+/)*(?:[\w-]+\.\w+)?)(?![\w/-])"
)
# named on purpose although they do not exist: a file the page shows how to write
NOT_FILES = {"toolsets/pipeline/no_bulk_forget.py"}
CALLED = re.compile(r"`(?:[\w.]+\.)?([A-Za-z_]\w*)\((?:\.\.\.)?\)`")
# called by name in docs/architecture.md, defined elsewhere: LangGraph's, and code mode's tool proxy
NOT_OURS = {"interrupt", "NAME"}


def named_paths(page: Path) -> list[tuple[int, str]]:
    found = []
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        for match in PATH.finditer(line):
            path = match.group(1).rstrip(".")
            if "<" in path or "NAME" in path or path in NOT_FILES:
                continue  # a placeholder (`server/cli/<name>_command.py`, `tools/NAME.py`) or an example to write
            found.append((number, path))
    return found


def test_every_path_the_docs_name_exists() -> None:
    missing = [
        f"{page.relative_to(ROOT)}:{number}: {path}"
        for page in PAGES
        for number, path in named_paths(page)
        if not (ROOT / path).exists()
    ]
    assert not missing, "named in the docs, not in the repository:\n" + "\n".join(missing)


def test_the_paths_are_found() -> None:
    """The pattern finds paths where the docs write them: in backticks, in links, in headings, inside prose."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert "server/runtime/composition.py" in page
    paths = {path for _, path in named_paths(ROOT / "docs" / "architecture.md")}
    assert {"server/runtime/composition.py", "toolsets/profiles.py", "tests/server/test_composition.py"} <= paths


def test_every_function_the_architecture_page_calls_is_defined() -> None:
    defined: set[str] = set()
    for package in ("server", "bridge", "toolsets"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    defined.add(node.name)
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    called = {match.group(1) for match in CALLED.finditer(page)}
    assert called, "the pattern finds `name()` and `name(...)`"
    assert not called - defined - NOT_OURS, (
        f"docs/architecture.md calls what the code no longer defines: {called - defined - NOT_OURS}"
    )
