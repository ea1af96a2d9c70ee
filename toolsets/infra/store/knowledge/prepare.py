"""Files turned into what the index stores (worker thread): read, hashed, chunked and analyzed."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from toolsets.infra.store.knowledge.document import Chunk, parse_document
from toolsets.infra.store.knowledge.files import MAX_FILE_BYTES, read_inside
from toolsets.infra.text import Analyzer


@dataclass(slots=True)
class Prepared:
    path: str
    mtime_ns: int
    size: int
    digest: str
    title: str = ""
    page_id: str | None = None
    chunks: list[Chunk] = field(default_factory=list)
    terms: list[tuple[str, str, str]] = field(default_factory=list)  # (title, heading, body) terms per chunk
    content_changed: bool = True


def chunk_terms(text_analyzer: Analyzer, title: str, heading: str, body: str) -> tuple[str, str, str]:
    """The term strings indexed for one chunk: its document title, heading path and body."""
    return text_analyzer.term_string(title), text_analyzer.term_string(heading), text_analyzer.term_string(body)


def prepare_batch(
    root: Path, paths: list[str], known_digests: dict[str, str], text_analyzer: Analyzer
) -> tuple[list[Prepared], list[str]]:
    """Read, hash, chunk and analyze files; returns (prepared, vanished paths). A file whose digest is
    already known is only re-stamped (its mtime or size changed, its content did not)."""
    prepared: list[Prepared] = []
    vanished: list[str] = []
    root_text = str(root)
    for relative in paths:
        try:  # opened the way the scan checked it: inside the folder, no symlink followed on the way
            read = read_inside(root_text, relative, MAX_FILE_BYTES + 1)
        except OSError:
            read = None
        if read is None:
            vanished.append(relative)
            continue
        info, data = read
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        item = Prepared(relative, info.st_mtime_ns, info.st_size, digest)
        if known_digests.get(relative) == digest:
            item.content_changed = False
        else:
            # bytes that are not text, NUL among them (PostgreSQL cannot store it), read as U+FFFD on every backend
            text = data[:MAX_FILE_BYTES].decode("utf-8-sig", errors="replace").replace("\x00", "\ufffd")
            item.title, item.page_id, item.chunks = parse_document(relative, text)
            item.terms = [chunk_terms(text_analyzer, item.title, chunk.heading, chunk.body) for chunk in item.chunks]
        prepared.append(item)
    return prepared, vanished
