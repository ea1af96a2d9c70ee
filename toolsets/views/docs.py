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
from toolsets.infra.store.knowledge.files import MAX_FILE_BYTES, SUFFIXES, open_inside, scan

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

    def run() -> DocEntry | None:
        fd = _open(docs_dir, path)
        if fd is None:
            return None
        try:
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        return None if size > MAX_FILE_BYTES else DocEntry(path, title_of(path), mime_type(path), size)

    return await anyio.to_thread.run_sync(run)


async def document_text(docs_dir: Path, path: str) -> tuple[DocEntry, str]:
    """The document at `path` and its text (UTF-8, undecodable bytes replaced); `DocNotFoundError` otherwise.

    The file read is the one checked: opened from the folder's descriptor with no symlink followed
    (`toolsets.infra.store.knowledge.files.open_inside`), its size taken from that descriptor.
    """

    def run() -> tuple[DocEntry, str]:
        fd = _open(docs_dir, path)
        if fd is None:
            raise DocNotFoundError(path)
        with os.fdopen(fd, "rb", closefd=True) as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_FILE_BYTES:
                raise DocNotFoundError(path)
            data = handle.read(MAX_FILE_BYTES)
        return DocEntry(path, title_of(path), mime_type(path), size), data.decode("utf-8", errors="replace")

    return await anyio.to_thread.run_sync(run)


def _open(docs_dir: Path, path: str) -> int | None:
    """A descriptor of the document at `path` (a regular file inside the folder, reached by no symlinked
    directory), or None; the same names as the index: no dot-entry, a document's suffix."""
    parts = path.split("/")
    if (
        not path
        or "\x00" in path
        or "\\" in path
        or any(part in ("", ".", "..") or part.startswith(".") for part in parts)
    ):
        return None
    if not path.lower().endswith(SUFFIXES):
        return None
    try:
        if not docs_dir.is_dir():
            return None
        return open_inside(str(docs_dir.resolve()), path)
    except (OSError, ValueError):
        return None
