"""One file's text as (title, Notion page id, chunks): Markdown split by heading, every chunk bounded.

A Notion export names pages `Title <32 hex id>.md` (folders likewise): the id is kept as `page_id`
and stripped from the displayed title.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

MARKDOWN_SUFFIXES = (".md", ".markdown")
MAX_CHUNK_CHARS = 1200

_NOTION_ID = re.compile(r"^(?P<name>.*\S)\s+(?P<id>[0-9a-fA-F]{32})$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


@dataclass(frozen=True, slots=True)
class Chunk:
    heading: str
    body: str


def split_notion_id(name: str) -> tuple[str, str | None]:
    """'Team Handbook 3f2a...e9' -> ('Team Handbook', '3f2a...e9'); other names pass unchanged."""
    found = _NOTION_ID.match(name)
    if found is None:
        return name, None
    return found["name"], found["id"].lower()


def parse_document(relative_path: str, text: str) -> tuple[str, str | None, list[Chunk]]:
    """(title, page_id, chunks) of one file."""
    stem = relative_path.rsplit("/", 1)[-1]
    stem = stem[: stem.rfind(".")] if "." in stem else stem
    title, page_id = split_notion_id(stem)
    if relative_path.lower().endswith(MARKDOWN_SUFFIXES):
        sections = _markdown_sections(text)
        first = next((line for line in text.splitlines() if line.strip()), "")
        heading = _HEADING.match(first)
        if heading and len(heading[1]) == 1 and heading[2].strip():
            title = heading[2].strip()
    else:
        sections = [("", text)]
    chunks = [Chunk(path, piece) for path, body in sections for piece in _bounded(body)]
    return title, page_id, chunks


def _markdown_sections(text: str) -> list[tuple[str, str]]:
    """(heading path, body) per section; `#` lines inside fenced code are not headings."""
    sections: list[tuple[str, str]] = []
    stack: list[tuple[int, str]] = []
    lines: list[str] = []
    fence: str | None = None

    def close() -> None:
        sections.append((" > ".join(name for _, name in stack), "\n".join(lines)))
        lines.clear()

    for line in text.splitlines():
        marker = _FENCE.match(line)
        if marker:
            if fence is None:
                fence = marker[1][0] * 3
            elif marker[1].startswith(fence):
                fence = None
        heading = None if fence is not None or marker else _HEADING.match(line)
        if heading is None:
            lines.append(line)
            continue
        close()
        level = len(heading[1])
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading[2].strip() or "(untitled)"))
    close()
    return sections


def _bounded(body: str) -> list[str]:
    """Split a section's body at paragraph breaks into pieces of at most MAX_CHUNK_CHARS."""
    paragraphs = (paragraph.strip() for paragraph in _PARAGRAPH_BREAK.split(body.strip()))
    return _pack((part for paragraph in paragraphs if paragraph for part in _words_bounded(paragraph)), "\n\n")


def _words_bounded(paragraph: str) -> list[str]:
    if len(paragraph) <= MAX_CHUNK_CHARS:
        return [paragraph]
    words: list[str] = []
    for word in paragraph.split():
        # one unbroken run longer than a chunk (e.g. a base64 blob) is cut into chunk-sized pieces
        words.extend(word[i : i + MAX_CHUNK_CHARS] for i in range(0, len(word), MAX_CHUNK_CHARS))
    return _pack(words, " ")


def _pack(parts: Iterable[str], separator: str) -> list[str]:
    """Join consecutive parts (each at most MAX_CHUNK_CHARS) greedily into pieces of at most MAX_CHUNK_CHARS."""
    pieces: list[str] = []
    current = ""
    for part in parts:
        if current and len(current) + len(separator) + len(part) > MAX_CHUNK_CHARS:
            pieces.append(current)
            current = part
        else:
            current = f"{current}{separator}{part}" if current else part
    if current:
        pieces.append(current)
    return pieces
