"""The README stays a page or two, and every relative link in it and in docs/ leads to a file and a heading that
exist; the docs cite nothing the repository does not ship."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").glob("*.md"))
DOCUMENTS = [README, *PAGES]

LINK = re.compile(r"(?<!!)\[(?:[^\]]|\][^(])*?\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
# The project's own planning notes and tracker are not shipped, so no page may cite them.
UNSHIPPED = re.compile(r"anchors\.md|\bseed(?:'s|\s+\d+)|\bthe seed\b|\bissue\s+#?\d+|\bthe issue was filed\b", re.I)


def prose(text: str) -> str:
    """The text outside code blocks and code spans: links and headings live there."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for heading in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8"))):
        base = slug(heading)
        name, n = base, 0
        while name in found:  # GitHub numbers repeated headings: name, name-1, name-2, ...
            n += 1
            name = f"{base}-{n}"
        found.add(name)
    return found


def relative_links(path: Path) -> list[str]:
    targets = LINK.findall(prose(path.read_text(encoding="utf-8")))
    return [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t, re.I)]  # no http:, mailto:, ...


def test_the_readme_fits_a_screen_or_two() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) < 250, f"README.md has {len(lines)} lines: move the detail to a page under docs/"


def test_the_readme_starts_with_the_two_commands_a_newcomer_needs() -> None:
    text = README.read_text(encoding="utf-8")
    first_screen = "\n".join(text.splitlines()[:40])
    assert "pip install -e . && .venv/bin/truloop-mcp --demo" in first_screen
    assert ".venv/bin/python -m pytest -q" in first_screen
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ".venv/bin/python -m pytest -q\n" in ci  # the README's test command is the one CI runs


def test_the_readme_links_every_docs_page() -> None:
    linked = {(README.parent / t.split("#", 1)[0]).resolve() for t in relative_links(README)}
    missing = [p.name for p in PAGES if p.resolve() not in linked]
    assert not missing, f"README.md links no line to: {missing}"


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path: Path) -> None:
    broken = []
    for target in relative_links(path):
        file_part, _, anchor = target.partition("#")
        resolved = (path.parent / file_part).resolve() if file_part else path
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif not resolved.is_relative_to(ROOT):
            broken.append(f"{target}: outside the repository")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading #{anchor} in {resolved.relative_to(ROOT)}")
    assert not broken, f"{path.relative_to(ROOT)}: " + "; ".join(broken)


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_cites_documents_the_repository_does_not_ship(path: Path) -> None:
    cited = [m.group(0) for m in UNSHIPPED.finditer(path.read_text(encoding="utf-8"))]
    assert not cited, f"{path.relative_to(ROOT)} cites {cited}: say it as a plain statement"


def test_the_anchor_rule_reads_headings_as_github_does() -> None:
    assert slug("The device's routes and their refusals") == "the-devices-routes-and-their-refusals"
    assert slug("Shell pipe: `truloop-mcp call`") == "shell-pipe-truloop-mcp-call"
    assert slug("LangGraph / LangChain") == "langgraph--langchain"
