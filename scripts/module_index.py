"""Every module of the three packages with the first line of its docstring: the index docs/architecture.md carries
between its `module-index` markers (tests/project/test_architecture_index.py holds the page to this output).

    python3 scripts/module_index.py            # the block, as the page holds it
    python3 scripts/module_index.py --write    # rewrite the page's block
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("server", "bridge", "toolsets")
PAGE = ROOT / "docs" / "architecture.md"
BEGIN, END = "<!-- module-index:begin -->", "<!-- module-index:end -->"


def first_line(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    line = doc.strip().split("\n", 1)[0].strip()
    return line if line else "(no docstring)"


def index() -> str:
    rows = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            what = first_line(path).replace("|", r"\|")
            rows.append(f"| `{path.relative_to(ROOT).as_posix()}` | {what} |")
    return "\n".join([BEGIN, "| module | what it is |", "|---|---|", *rows, END])


def with_index(page: str) -> str:
    start, end = page.index(BEGIN), page.index(END) + len(END)
    return page[:start] + index() + page[end:]


if __name__ == "__main__":
    if "--write" in sys.argv:
        PAGE.write_text(with_index(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print(index())
