"""The docs folder as resources: its files listed by stat (no file is read to list them) and one file read safely.

The folder is the knowledge base's (`--docs`): the same files `search_knowledge_base` searches, found by the same
rules (`toolsets.infra.store.knowledge.files`: `.md`, `.markdown`, `.txt`; dot-entries skipped; symlinks only when
they stay inside). A path is the file's path relative to the folder, `/`-separated.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread

from toolsets.infra.store.knowledge.document import split_notion_id
from toolsets.infra.store.knowledge.files import MAX_FILE_BYTES, SUFFIXES, inside, read_regular_file, scan

MARKDOWN = ("text/markdown", (".md", ".markdown"))


@dataclass(frozen=True, slots=True)
class DocEntry:
    path: str
    title: str
    mime_type: str
    size: int


class DocNotFoundError(LookupError):
    """No readable document at that path (or a path that leaves the folder)."""


def mime_type(path: str) -> str:
    return MARKDOWN[0] if path.lower().endswith(MARKDOWN[1]) else "text/plain"


def title_of(path: str) -> str:
    """The file's name without its suffix and without a Notion page id (`Team Handbook 3f2a...e9.md` -> `Team
    Handbook`), so that listing needs no read."""
    stem = path.rsplit("/", 1)[-1]
    stem = stem[: stem.rfind(".")] if "." in stem else stem
    return split_notion_id(stem)[0]


async def list_documents(docs_dir: Path) -> list[DocEntry]:
    """Every document, by path; [] when the folder does not exist."""

    def run() -> list[DocEntry]:
        if not docs_dir.is_dir():
            return []
        found = scan(docs_dir.resolve())
        return [DocEntry(path, title_of(path), mime_type(path), found[path][1]) for path in sorted(found)]

    return await anyio.to_thread.run_sync(run)


async def find_document(docs_dir: Path, path: str) -> DocEntry | None:
    """Whether `path` names a document (its entry), without reading it."""
    return await anyio.to_thread.run_sync(_entry, docs_dir, path)


async def document_text(docs_dir: Path, path: str) -> tuple[DocEntry, str]:
    """The document at `path` and its text (UTF-8, undecodable bytes replaced); `DocNotFoundError` otherwise."""

    def run() -> tuple[DocEntry, str]:
        entry = _entry(docs_dir, path)
        if entry is None:
            raise DocNotFoundError(path)
        read = read_regular_file(str(_located(docs_dir, path)), MAX_FILE_BYTES)
        if read is None:
            raise DocNotFoundError(path)
        return entry, read[1].decode("utf-8", errors="replace")

    return await anyio.to_thread.run_sync(run)


def _located(docs_dir: Path, path: str) -> Path:
    return docs_dir.resolve() / path


def _entry(docs_dir: Path, path: str) -> DocEntry | None:
    parts = path.split("/")
    if not path or any(part in ("", ".", "..") or part.startswith(".") for part in parts) or "\\" in path:
        return None
    if not path.lower().endswith(SUFFIXES) or not docs_dir.is_dir():
        return None
    root = str(docs_dir.resolve())
    target = os.path.realpath(os.path.join(root, *parts))
    if not inside(target, root) or not os.path.isfile(target):
        return None
    for depth in range(1, len(parts)):  # no symlinked directory on the way (the index does not descend them)
        if os.path.islink(os.path.join(root, *parts[:depth])):
            return None
    size = os.stat(target).st_size
    if size > MAX_FILE_BYTES:
        return None
    return DocEntry(path, title_of(path), mime_type(path), size)
