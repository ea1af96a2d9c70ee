"""The knowledge index: the docs folder, chunked by heading, in an SQLite FTS5 table ranked by BM25.

Files (`.md`, `.markdown`, `.txt`, recursively; dot-entries skipped) are compared with what is
stored by mtime + size, and by a content hash when those differ, so a refresh re-chunks only new
and changed files. Each batch of files is replaced inside one transaction: a search sees a file's
old chunks or its new ones, never a mix. Symlinks are followed only when they stay inside the
folder, and symlinked directories are not descended (no cycles, no escape).

A Notion export names pages `Title <32 hex id>.md` (folders likewise): the id is kept as
`page_id` and stripped from the displayed title.

Search terms come from the shared analyzer (`toolsets.text`): the FTS table holds each chunk's
term strings (split on spaces only), the chunk table its text (for snippets). Each chunk records
the analyzer id it was analyzed with; after an analyzer change, the next refresh re-analyzes the
stored text in batches (no file is re-read) and reports progress like indexing does.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import sqlite3
import stat
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.to_thread
from pydantic import BaseModel, Field

from toolsets.errors import ToolInputError
from toolsets.store.db import Database
from toolsets.text import Analyzer, analyzer, match_any
from toolsets.text.snippet import snippet

logger = logging.getLogger("truloop.knowledge")

Progress = Callable[[float, float | None, str | None], Awaitable[None]]

SUFFIXES = (".md", ".markdown", ".txt")
MARKDOWN_SUFFIXES = (".md", ".markdown")
MAX_CHUNK_CHARS = 1200
MAX_FILE_BYTES = 8 * 1024 * 1024
BATCH_FILES = 64
BATCH_CHUNKS = 1000  # chunks re-analyzed per transaction after an analyzer change
DEBOUNCE_SECONDS = 2.0
# bm25() weights per FTS column: a hit in the page title or heading path outranks one in the body.
RANK = "bm25(4.0, 2.0, 1.0)"

MIGRATIONS = [
    """
    CREATE TABLE knowledge_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE knowledge_files (
        path TEXT PRIMARY KEY,
        mtime_ns INTEGER NOT NULL,
        size INTEGER NOT NULL,
        digest TEXT NOT NULL,
        title TEXT NOT NULL,
        page_id TEXT,
        chunks INTEGER NOT NULL
    );
    CREATE TABLE knowledge_chunks (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL REFERENCES knowledge_files(path) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        heading TEXT NOT NULL
    );
    CREATE INDEX knowledge_chunks_by_path ON knowledge_chunks(path);
    CREATE VIRTUAL TABLE knowledge_fts USING fts5(
        title, heading, body, tokenize = 'porter unicode61 remove_diacritics 2'
    );
    """,
    # 2: the app's analyzer computes the terms; FTS5 only splits them on spaces. Old chunks kept no text,
    # so the files are read again on the next refresh (which reports progress).
    """
    DROP TABLE knowledge_fts;
    DELETE FROM knowledge_chunks;
    DELETE FROM knowledge_files;
    ALTER TABLE knowledge_chunks ADD COLUMN body TEXT NOT NULL DEFAULT '';
    ALTER TABLE knowledge_chunks ADD COLUMN analyzer TEXT NOT NULL DEFAULT '';
    CREATE INDEX knowledge_chunks_by_analyzer ON knowledge_chunks(analyzer);
    CREATE VIRTUAL TABLE knowledge_fts USING fts5(title, heading, body, tokenize = 'ascii');
    """,
]

_NOTION_ID = re.compile(r"^(?P<name>.*\S)\s+(?P<id>[0-9a-fA-F]{32})$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


class KnowledgeHit(BaseModel):
    title: str = Field(description="Title of the document (for a Notion page, its title without the page id)")
    heading: str = Field(description="Heading path of the matching section, e.g. 'Onboarding > Laptop setup'")
    snippet: str = Field(description="Excerpt of the section around the match; matched words are in **bold**")
    source: str = Field(description="File of the document, relative to the knowledge-base folder")
    page_id: str | None = Field(description="Notion page id (32 hex digits) when the document is a Notion page")
    score: float = Field(description="BM25 relevance; higher is more relevant (comparable within one search only)")


@dataclass
class IndexStats:
    files_seen: int = 0
    files_indexed: int = 0  # new or changed content: re-chunked
    files_touched: int = 0  # mtime/size changed, same content: metadata only
    files_unchanged: int = 0
    files_removed: int = 0
    chunks_written: int = 0
    chunks_reanalyzed: int = 0  # stored chunks given the current analyzer's terms
    seconds: float = 0.0


class DocsFolderMissing(Exception):  # noqa: N818 - a state, reported by the tool as a ToolError
    def __init__(self, folder: Path) -> None:
        super().__init__(f"knowledge-base folder {folder} does not exist")
        self.folder = folder


@dataclass(frozen=True, slots=True)
class Chunk:
    heading: str
    body: str


@dataclass(slots=True)
class _Prepared:
    path: str
    mtime_ns: int
    size: int
    digest: str
    title: str = ""
    page_id: str | None = None
    chunks: list[Chunk] = field(default_factory=list)
    terms: list[tuple[str, str, str]] = field(default_factory=list)  # (title, heading, body) terms per chunk
    content_changed: bool = True


class KnowledgeIndex:
    def __init__(
        self, db: Database, docs_dir: Path, *, debounce: float = DEBOUNCE_SECONDS, text: Analyzer | None = None
    ) -> None:
        self.db = db
        self.docs_dir = Path(docs_dir)
        self.debounce = debounce
        self.analyzer = text or analyzer()
        self._last_scan: float | None = None
        self._lock: anyio.Lock | None = None

    async def search(self, query: str, limit: int = 5, *, progress: Progress | None = None) -> list[KnowledgeHit]:
        """The best chunks for `query`, after bringing the index up to date (debounced)."""
        terms = query_terms(query, self.analyzer)
        await self.ensure_fresh(progress)
        match = match_any(terms)
        text = self.analyzer

        def run(conn: sqlite3.Connection) -> list[KnowledgeHit]:
            return [
                KnowledgeHit(
                    title=row["title"],
                    heading=row["heading"],
                    snippet=snippet(row["body"], terms, text),
                    source=row["path"],
                    page_id=row["page_id"],
                    score=-row["rank"],
                )
                for row in conn.execute(_SEARCH_SQL, (match, limit))
            ]

        return await self.db.read(run)

    async def document_count(self) -> int:
        await self.db.ensure_schema("knowledge", MIGRATIONS)
        return await self.db.read(lambda conn: conn.execute("SELECT count(*) FROM knowledge_files").fetchone()[0])

    async def ensure_fresh(self, progress: Progress | None = None) -> IndexStats | None:
        """Refresh unless the folder was scanned less than `debounce` seconds ago."""
        if self._recently_scanned():
            return None
        async with self._refresh_lock():
            if self._recently_scanned():  # another caller refreshed while we waited
                return None
            return await self._refresh(progress)

    async def refresh(self, progress: Progress | None = None) -> IndexStats:
        """Scan the folder now and re-index what changed; `progress(done, total, message)` while indexing."""
        async with self._refresh_lock():
            return await self._refresh(progress)

    def _recently_scanned(self) -> bool:
        return self._last_scan is not None and time.monotonic() - self._last_scan < self.debounce

    def _refresh_lock(self) -> anyio.Lock:
        if self._lock is None:
            self._lock = anyio.Lock()
        return self._lock

    async def _refresh(self, progress: Progress | None) -> IndexStats:
        started = time.monotonic()
        await self.db.ensure_schema("knowledge", MIGRATIONS)
        root = await anyio.to_thread.run_sync(_resolve_root, self.docs_dir)
        scanned = await anyio.to_thread.run_sync(_scan, root)
        stored = await self.db.read(lambda conn: _stored_state(conn, str(root)))
        if stored is None:  # first scan, or the index was built over another folder
            await self.db.write(lambda conn: _reset(conn, str(root)))
            stored = {}

        stats = IndexStats(files_seen=len(scanned))
        stats.chunks_reanalyzed = await self._reanalyze(progress)
        removed = [path for path in stored if path not in scanned]
        candidates = [path for path, stat in scanned.items() if path not in stored or stored[path][:2] != stat]
        stats.files_unchanged = len(scanned) - len(candidates)
        if removed:
            await self.db.write(lambda conn: _delete_files(conn, removed))
            stats.files_removed = len(removed)

        total = len(candidates)
        if total:
            await _report(progress, 0, total, f"Indexing {total} document(s) in the knowledge base")
        for start in range(0, total, BATCH_FILES):
            batch = candidates[start : start + BATCH_FILES]
            known = {path: stored[path][2] for path in batch if path in stored}
            prepared, vanished = await anyio.to_thread.run_sync(_prepare_batch, root, batch, known, self.analyzer)
            await self.db.write(
                lambda conn, p=prepared, v=vanished, version=self.analyzer.id: _store_batch(conn, p, v, version)
            )
            for item in prepared:
                if item.content_changed:
                    stats.files_indexed += 1
                    stats.chunks_written += len(item.chunks)
                else:
                    stats.files_touched += 1
            stats.files_removed += sum(1 for path in vanished if path in stored)
            done = min(start + BATCH_FILES, total)
            await _report(progress, done, total, f"Indexed {done} of {total} document(s)")

        self._last_scan = started
        stats.seconds = time.monotonic() - started
        if candidates or removed or stats.chunks_reanalyzed:
            logger.info("knowledge index refreshed: %s", stats)
        return stats

    async def _reanalyze(self, progress: Progress | None) -> int:
        """Give stored chunks analyzed by another analyzer version the current terms, in batches."""
        version = self.analyzer.id
        stale = await self.db.read(lambda conn: _stale_chunks(conn, version))
        if stale is None:
            return 0
        if not stale:
            await self.db.write(lambda conn: _set_meta(conn, "analyzer", version))
            return 0
        logger.info("knowledge index: re-analyzing %d section(s) for analyzer %s", stale, version)
        await _report(progress, 0, stale, f"Updating the search index of {stale} section(s) for a new text analyzer")
        done = 0
        while True:
            rows = await self.db.read(
                lambda conn: conn.execute(
                    "SELECT c.id, f.title, c.heading, c.body FROM knowledge_chunks c "
                    "JOIN knowledge_files f ON f.path = c.path WHERE c.analyzer != ? LIMIT ?",
                    (version, BATCH_CHUNKS),
                ).fetchall()
            )
            if not rows:
                break
            terms = await anyio.to_thread.run_sync(
                lambda rows=rows, text=self.analyzer: [
                    (row[0], *chunk_terms(text, row[1], row[2], row[3])) for row in rows
                ]
            )
            await self.db.write(lambda conn, terms=terms: _store_terms(conn, terms, version))
            done += len(rows)
            await _report(progress, min(done, stale), stale, f"Updated {min(done, stale)} of {stale} section(s)")
        await self.db.write(lambda conn: _set_meta(conn, "analyzer", version))
        return done


async def _report(progress: Progress | None, done: int, total: int, message: str) -> None:
    if progress is None:
        return
    try:
        await progress(done, total, message)
    except Exception:  # a client that went away must not break indexing
        logger.debug("progress report failed", exc_info=True)


_SEARCH_SQL = f"""
    WITH best AS (
        SELECT rowid, rank
        FROM knowledge_fts
        WHERE knowledge_fts MATCH ? AND rank MATCH '{RANK}'
        ORDER BY rank
        LIMIT ?
    )
    SELECT f.title, c.heading, c.body, c.path, f.page_id, best.rank
    FROM best
    JOIN knowledge_chunks c ON c.id = best.rowid
    JOIN knowledge_files f ON f.path = c.path
    ORDER BY best.rank
"""


def query_terms(text: str, analyzer: Analyzer) -> list[str]:
    """The query's search terms; a query with no word or number in it is a validation error."""
    terms = analyzer.query_terms(text)
    if not terms:
        raise ToolInputError(
            "query must contain at least one word or number to search for, e.g. 'laptop setup' or 'expense policy'."
        )
    return terms


def chunk_terms(text_analyzer: Analyzer, title: str, heading: str, body: str) -> tuple[str, str, str]:
    """The term strings indexed for one chunk: its document title, heading path and body."""
    return text_analyzer.term_string(title), text_analyzer.term_string(heading), text_analyzer.term_string(body)


# -- folder scan (worker thread) ------------------------------------------------------------


def _resolve_root(docs_dir: Path) -> Path:
    if not docs_dir.is_dir():
        raise DocsFolderMissing(docs_dir)
    return docs_dir.resolve()


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _scan(root: Path) -> dict[str, tuple[int, int]]:
    """Relative path -> (mtime_ns, size) of every indexable file; stat only, no reads."""
    root_text = str(root)
    found: dict[str, tuple[int, int]] = {}
    pending = [root_text]
    while pending:
        directory = pending.pop()
        try:
            entries = os.scandir(directory)
        except OSError:
            continue
        with entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
                        continue
                    if not entry.name.lower().endswith(SUFFIXES):
                        continue
                    if entry.is_symlink():
                        target = os.path.realpath(entry.path)
                        if not _inside(target, root_text) or not os.path.isfile(target):
                            continue
                        info = os.stat(target)
                    elif entry.is_file(follow_symlinks=False):
                        info = entry.stat(follow_symlinks=False)
                    else:
                        continue
                except OSError:
                    continue
                if info.st_size > MAX_FILE_BYTES:
                    logger.warning("knowledge index: skipping %s (larger than %d bytes)", entry.path, MAX_FILE_BYTES)
                    continue
                relative = os.path.relpath(entry.path, root_text).replace(os.sep, "/")
                found[relative] = (info.st_mtime_ns, info.st_size)
    return found


def _read_regular_file(path: str, limit: int) -> tuple[os.stat_result, bytes] | None:
    """Read at most `limit` bytes of `path` if the file *opened* is a regular file, else None.

    O_NONBLOCK: a FIFO (or a device) swapped in after the scan would block `open()` forever and hold a
    worker thread; it opens at once and is then refused by the check on the opened descriptor.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            logger.warning("knowledge index: skipping %s (not a regular file)", path)
            return None
        with os.fdopen(fd, "rb", closefd=True) as handle:
            fd = -1
            return info, handle.read(limit)
    finally:
        if fd >= 0:
            os.close(fd)


def _prepare_batch(
    root: Path, paths: list[str], known_digests: dict[str, str], text_analyzer: Analyzer
) -> tuple[list[_Prepared], list[str]]:
    """Read, hash, chunk and analyze files; returns (prepared, vanished paths)."""
    prepared: list[_Prepared] = []
    vanished: list[str] = []
    root_text = str(root)
    for relative in paths:
        target = os.path.realpath(os.path.join(root_text, relative))
        if not _inside(target, root_text):
            vanished.append(relative)
            continue
        try:
            read = _read_regular_file(target, MAX_FILE_BYTES + 1)
        except OSError:
            read = None
        if read is None:
            vanished.append(relative)
            continue
        info, data = read
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        item = _Prepared(relative, info.st_mtime_ns, info.st_size, digest)
        if known_digests.get(relative) == digest:
            item.content_changed = False
        else:
            text = data[:MAX_FILE_BYTES].decode("utf-8-sig", errors="replace")
            item.title, item.page_id, item.chunks = parse_document(relative, text)
            title_terms = text_analyzer.term_string(item.title)
            item.terms = [
                (title_terms, text_analyzer.term_string(chunk.heading), text_analyzer.term_string(chunk.body))
                for chunk in item.chunks
            ]
        prepared.append(item)
    return prepared, vanished


# -- store (inside db transactions) ---------------------------------------------------------


def _stored_state(conn: sqlite3.Connection, root: str) -> dict[str, tuple[int, int, str]] | None:
    """What is indexed, by path; None when nothing was indexed for this folder."""
    row = conn.execute("SELECT value FROM knowledge_meta WHERE key = 'root'").fetchone()
    if row is None or row[0] != root:
        return None
    rows = conn.execute("SELECT path, mtime_ns, size, digest FROM knowledge_files")
    return {path: (mtime_ns, size, digest) for path, mtime_ns, size, digest in rows}


def _set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO knowledge_meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def _stale_chunks(conn: sqlite3.Connection, version: str) -> int | None:
    """None when every chunk is known to carry `version`'s terms, else how many do not."""
    row = conn.execute("SELECT value FROM knowledge_meta WHERE key = 'analyzer'").fetchone()
    if row is not None and row[0] == version:
        return None
    return int(conn.execute("SELECT count(*) FROM knowledge_chunks WHERE analyzer != ?", (version,)).fetchone()[0])


def _reset(conn: sqlite3.Connection, root: str) -> None:
    conn.execute("DELETE FROM knowledge_fts")
    conn.execute("DELETE FROM knowledge_chunks")
    conn.execute("DELETE FROM knowledge_files")
    conn.execute(
        "INSERT INTO knowledge_meta(key, value) VALUES('root', ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (root,),
    )


def _delete_files(conn: sqlite3.Connection, paths: Iterable[str]) -> None:
    for path in paths:
        conn.execute(
            "DELETE FROM knowledge_fts WHERE rowid IN (SELECT id FROM knowledge_chunks WHERE path = ?)", (path,)
        )
        conn.execute("DELETE FROM knowledge_chunks WHERE path = ?", (path,))
        conn.execute("DELETE FROM knowledge_files WHERE path = ?", (path,))


def _store_terms(conn: sqlite3.Connection, terms: list[tuple[int, str, str, str]], version: str) -> None:
    for chunk_id, title, heading, body in terms:
        conn.execute("DELETE FROM knowledge_fts WHERE rowid = ?", (chunk_id,))
        conn.execute(
            "INSERT INTO knowledge_fts(rowid, title, heading, body) VALUES(?, ?, ?, ?)",
            (chunk_id, title, heading, body),
        )
        conn.execute("UPDATE knowledge_chunks SET analyzer = ? WHERE id = ?", (version, chunk_id))


def _store_batch(conn: sqlite3.Connection, prepared: list[_Prepared], vanished: list[str], version: str) -> None:
    _delete_files(conn, vanished)
    for item in prepared:
        if not item.content_changed:
            conn.execute(
                "UPDATE knowledge_files SET mtime_ns = ?, size = ? WHERE path = ?",
                (item.mtime_ns, item.size, item.path),
            )
            continue
        _delete_files(conn, [item.path])
        conn.execute(
            "INSERT INTO knowledge_files(path, mtime_ns, size, digest, title, page_id, chunks) "
            "VALUES(?, ?, ?, ?, ?, ?, ?)",
            (item.path, item.mtime_ns, item.size, item.digest, item.title, item.page_id, len(item.chunks)),
        )
        for ordinal, (chunk, (title, heading, body)) in enumerate(zip(item.chunks, item.terms, strict=True)):
            cursor = conn.execute(
                "INSERT INTO knowledge_chunks(path, ordinal, heading, body, analyzer) VALUES(?, ?, ?, ?, ?)",
                (item.path, ordinal, chunk.heading, chunk.body, version),
            )
            conn.execute(
                "INSERT INTO knowledge_fts(rowid, title, heading, body) VALUES(?, ?, ?, ?)",
                (cursor.lastrowid, title, heading, body),
            )


# -- parsing --------------------------------------------------------------------------------


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
