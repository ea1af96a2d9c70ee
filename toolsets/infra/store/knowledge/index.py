"""`KnowledgeIndex`: keeps the index in step with the docs folder and answers searches.

A refresh compares the folder with what is stored by mtime + size, and by a content hash when those
differ, so only new and changed files are re-chunked; batches of files are written in one transaction
each. After an analyzer change the stored text is re-analyzed in batches (no file is re-read), with
progress reported like indexing.
"""

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from pydantic import BaseModel, Field

from toolsets.infra.store.errors import DocsFolderMissing
from toolsets.infra.store.knowledge.contract import KnowledgeTables
from toolsets.infra.store.knowledge.files import resolve_root, scan
from toolsets.infra.store.knowledge.prepare import chunk_terms, prepare_batch
from toolsets.infra.text import Analyzer, analyzer
from toolsets.infra.text.snippet import snippet

logger = logging.getLogger("truloop.knowledge")

Progress = Callable[[float, float | None, str | None], Awaitable[None]]
# told after a refresh: the documents re-indexed or gone, and whether documents came or went (`listed`)
DocumentsChanged = Callable[..., Awaitable[None]]

BATCH_FILES = 64
BATCH_CHUNKS = 1000  # chunks re-analyzed per transaction after an analyzer change
DEBOUNCE_SECONDS = 2.0


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


class KnowledgeIndex:
    def __init__(
        self,
        tables: KnowledgeTables,
        docs_dir: Path,
        *,
        debounce: float = DEBOUNCE_SECONDS,
        text: Analyzer | None = None,
        on_change: DocumentsChanged | None = None,
    ) -> None:
        self.tables = tables
        self.on_change = on_change
        self.docs_dir = Path(docs_dir)
        self.debounce = debounce
        self.analyzer = text or analyzer()
        self._last_scan: float | None = None
        self._lock: anyio.Lock | None = None

    async def search(self, query: str, limit: int = 5, *, progress: Progress | None = None) -> list[KnowledgeHit]:
        """The best chunks for `query`, after bringing the index up to date (debounced); [] when the query
        has no term to search for. On a shared index, a replica without the docs folder serves what
        the replicas that have it indexed."""
        terms = self.analyzer.query(query)
        if not terms.terms:
            return []
        try:
            await self.ensure_fresh(progress)
        except DocsFolderMissing:
            if not (self.tables.shared and await self.document_count()):
                raise
        return [
            KnowledgeHit(
                title=row["title"],
                heading=row["heading"],
                snippet=snippet(row["body"], terms.all_terms, self.analyzer),
                source=row["path"],
                page_id=row["page_id"],
                score=float(row["score"]),
            )
            for row in await self.tables.best_chunks(terms, limit)
        ]

    async def document_count(self) -> int:
        await self.tables.ensure_schema()
        return await self.tables.document_count()

    async def chunk_count(self) -> int:
        """How many chunks are indexed."""
        await self.tables.ensure_schema()
        return await self.tables.chunk_count()

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
        await self.tables.ensure_schema()
        root = await anyio.to_thread.run_sync(resolve_root, self.docs_dir)
        scanned = await anyio.to_thread.run_sync(scan, root)
        stored = await self.tables.stored_state(str(root))
        if stored is None:  # first scan, or the index was built over another folder
            await self.tables.reset(str(root))
            stored = {}

        stats = IndexStats(files_seen=len(scanned))
        stats.chunks_reanalyzed = await self._reanalyze(progress)
        removed = [path for path in stored if path not in scanned]
        candidates = [path for path, stat in scanned.items() if path not in stored or stored[path][:2] != stat]
        stats.files_unchanged = len(scanned) - len(candidates)
        if removed:
            await self.tables.delete_files(removed)
            stats.files_removed = len(removed)
        changed = list(removed)  # for `on_change`: documents re-indexed or gone
        listed = bool(removed) or any(path not in stored for path in candidates)

        total = len(candidates)
        if total:
            await _report(progress, 0, total, f"Indexing {total} document(s) in the knowledge base")
        for start in range(0, total, BATCH_FILES):
            batch = candidates[start : start + BATCH_FILES]
            known = {path: stored[path][2] for path in batch if path in stored}
            prepared, vanished = await anyio.to_thread.run_sync(prepare_batch, root, batch, known, self.analyzer)
            await self.tables.store_batch(prepared, vanished, self.analyzer.id)
            changed += vanished
            listed = listed or bool(vanished)
            for item in prepared:
                if item.content_changed:
                    changed.append(item.path)
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
        if changed and self.on_change is not None:
            await self.on_change(changed, listed=listed)
        return stats

    async def _reanalyze(self, progress: Progress | None) -> int:
        """Give stored chunks analyzed by another analyzer version the current terms, in batches."""
        version = self.analyzer.id
        stale = await self.tables.stale_chunks(version)
        if stale is None:
            return 0
        if not stale:
            await self.tables.set_meta("analyzer", version)
            return 0
        logger.info("knowledge index: re-analyzing %d section(s) for analyzer %s", stale, version)
        await _report(progress, 0, stale, f"Updating the search index of {stale} section(s) for a new text analyzer")
        done = 0
        while True:
            rows = await self.tables.stale_chunk_texts(version, BATCH_CHUNKS)
            if not rows:
                break
            terms = await anyio.to_thread.run_sync(_analyzed, rows, self.analyzer)
            await self.tables.store_terms(terms, version)
            done += len(rows)
            await _report(progress, min(done, stale), stale, f"Updated {min(done, stale)} of {stale} section(s)")
        await self.tables.set_meta("analyzer", version)
        return done


async def _report(progress: Progress | None, done: int, total: int, message: str) -> None:
    if progress is None:
        return
    try:
        await progress(done, total, message)
    except Exception:  # a client that went away must not break indexing
        logger.debug("progress report failed", exc_info=True)


def _analyzed(rows: Any, analyzer: Any) -> list[Any]:
    """Each stale chunk's id and terms, analyzed again (off the event loop)."""
    return [(row[0], *chunk_terms(analyzer, row[1], row[2], row[3])) for row in rows]
