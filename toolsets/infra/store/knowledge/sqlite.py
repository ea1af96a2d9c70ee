"""The knowledge index's tables in the embedded SQLite store (`KnowledgeTables`): an FTS5 table ranked by
BM25, its migrations, and its reads and writes, each run inside one store operation (`Database.read`/`write`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from toolsets.infra.store.knowledge.prepare import Prepared
from toolsets.infra.store.sqlite.database import Database
from toolsets.infra.text import Query, match_expression

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

# bm25() weights per FTS column: a hit in the page title or heading path outranks one in the body.
RANK = "bm25(4.0, 2.0, 1.0)"

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


# A query with other-language alternates: each chunk's rank is its BM25 for the own terms plus `weight` times
# its BM25 for the alternates (BM25 sums over terms, so this is BM25 with the alternates weighed lower).
_SEARCH_BOTH_SQL = f"""
    WITH scored AS (
        SELECT rowid, rank FROM knowledge_fts WHERE knowledge_fts MATCH ? AND rank MATCH '{RANK}'
        UNION ALL
        SELECT rowid, ? * rank FROM knowledge_fts WHERE knowledge_fts MATCH ? AND rank MATCH '{RANK}'
    ),
    best AS (SELECT rowid, sum(rank) AS rank FROM scored GROUP BY rowid ORDER BY rank, rowid LIMIT ?)
    SELECT f.title, c.heading, c.body, c.path, f.page_id, best.rank
    FROM best
    JOIN knowledge_chunks c ON c.id = best.rowid
    JOIN knowledge_files f ON f.path = c.path
    ORDER BY best.rank, best.rowid
"""


def best_chunks(
    conn: sqlite3.Connection, match: str, limit: int, alternates: tuple[str, float] | None = None
) -> list[sqlite3.Row]:
    """The `limit` chunks ranked best for a MATCH expression (title, heading, body, path, page_id, rank), and for
    the MATCH expression of the alternates weighed by a factor when there are any."""
    if alternates is None:
        return conn.execute(_SEARCH_SQL, (match, limit)).fetchall()
    other, weight = alternates
    return conn.execute(_SEARCH_BOTH_SQL, (match, weight, other, limit)).fetchall()


def document_count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM knowledge_files").fetchone()[0])


def stored_state(conn: sqlite3.Connection, root: str) -> dict[str, tuple[int, int, str]] | None:
    """What is indexed, by path; None when nothing was indexed for this folder."""
    row = conn.execute("SELECT value FROM knowledge_meta WHERE key = 'root'").fetchone()
    if row is None or row[0] != root:
        return None
    rows = conn.execute("SELECT path, mtime_ns, size, digest FROM knowledge_files")
    return {path: (mtime_ns, size, digest) for path, mtime_ns, size, digest in rows}


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO knowledge_meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def stale_chunks(conn: sqlite3.Connection, version: str) -> int | None:
    """None when every chunk is known to carry `version`'s terms, else how many do not."""
    row = conn.execute("SELECT value FROM knowledge_meta WHERE key = 'analyzer'").fetchone()
    if row is not None and row[0] == version:
        return None
    return int(conn.execute("SELECT count(*) FROM knowledge_chunks WHERE analyzer != ?", (version,)).fetchone()[0])


def stale_chunk_texts(conn: sqlite3.Connection, version: str, limit: int) -> list[sqlite3.Row]:
    """Up to `limit` chunks not analyzed by `version`: (id, title, heading, body)."""
    return conn.execute(
        "SELECT c.id, f.title, c.heading, c.body FROM knowledge_chunks c "
        "JOIN knowledge_files f ON f.path = c.path WHERE c.analyzer != ? LIMIT ?",
        (version, limit),
    ).fetchall()


def reset(conn: sqlite3.Connection, root: str) -> None:
    conn.execute("DELETE FROM knowledge_fts")
    conn.execute("DELETE FROM knowledge_chunks")
    conn.execute("DELETE FROM knowledge_files")
    set_meta(conn, "root", root)


def delete_files(conn: sqlite3.Connection, paths: Iterable[str]) -> None:
    for path in paths:
        conn.execute(
            "DELETE FROM knowledge_fts WHERE rowid IN (SELECT id FROM knowledge_chunks WHERE path = ?)", (path,)
        )
        conn.execute("DELETE FROM knowledge_chunks WHERE path = ?", (path,))
        conn.execute("DELETE FROM knowledge_files WHERE path = ?", (path,))


def store_terms(conn: sqlite3.Connection, terms: list[tuple[int, str, str, str]], version: str) -> None:
    """Replace the indexed terms of stored chunks: (chunk id, title, heading, body terms)."""
    for chunk_id, title, heading, body in terms:
        conn.execute("DELETE FROM knowledge_fts WHERE rowid = ?", (chunk_id,))
        conn.execute(
            "INSERT INTO knowledge_fts(rowid, title, heading, body) VALUES(?, ?, ?, ?)",
            (chunk_id, title, heading, body),
        )
        conn.execute("UPDATE knowledge_chunks SET analyzer = ? WHERE id = ?", (version, chunk_id))


def store_batch(conn: sqlite3.Connection, prepared: list[Prepared], vanished: list[str], version: str) -> None:
    """One batch of files replaced whole: a search sees a file's old chunks or its new ones, never a mix."""
    delete_files(conn, vanished)
    for item in prepared:
        if not item.content_changed:
            conn.execute(
                "UPDATE knowledge_files SET mtime_ns = ?, size = ? WHERE path = ?",
                (item.mtime_ns, item.size, item.path),
            )
            continue
        delete_files(conn, [item.path])
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


class SqliteKnowledgeTables:
    """The index's tables in the embedded store, as the async operations `KnowledgeIndex` runs (the
    PostgreSQL twin is `toolsets.infra.store.knowledge.postgres.PgKnowledgeTables`)."""

    shared = False  # the index belongs to this process's docs folder alone

    def __init__(self, db: Database) -> None:
        self.db = db

    async def ensure_schema(self) -> None:
        await self.db.ensure_schema("knowledge", MIGRATIONS)

    async def best_chunks(self, query: Query, limit: int) -> list[dict[str, Any]]:
        """The `limit` best chunks for any of the query's terms: title, heading, body, path, page_id, score (higher
        is better)."""
        match = match_expression(query.terms)
        if match is None:
            return []
        other = match_expression(query.alternates)
        alternates = None if other is None else (other, query.alternate_weight)
        rows = await self.db.read(lambda conn: best_chunks(conn, match, limit, alternates))
        return [{**dict(row), "score": -row["rank"]} for row in rows]

    async def document_count(self) -> int:
        return await self.db.read(document_count)

    async def chunk_count(self) -> int:
        return await self.db.read(lambda conn: int(conn.execute("SELECT count(*) FROM knowledge_fts").fetchone()[0]))

    async def stored_state(self, root: str) -> dict[str, tuple[int, int, str]] | None:
        return await self.db.read(lambda conn: stored_state(conn, root))

    async def reset(self, root: str) -> None:
        await self.db.write(lambda conn: reset(conn, root))

    async def delete_files(self, paths: list[str]) -> None:
        await self.db.write(lambda conn: delete_files(conn, paths))

    async def store_batch(self, prepared: list[Prepared], vanished: list[str], version: str) -> None:
        await self.db.write(lambda conn: store_batch(conn, prepared, vanished, version))

    async def stale_chunks(self, version: str) -> int | None:
        return await self.db.read(lambda conn: stale_chunks(conn, version))

    async def stale_chunk_texts(self, version: str, limit: int) -> list[tuple[int, str, str, str]]:
        rows = await self.db.read(lambda conn: stale_chunk_texts(conn, version, limit))
        return [(row[0], row[1], row[2], row[3]) for row in rows]

    async def store_terms(self, terms: list[tuple[int, str, str, str]], version: str) -> None:
        await self.db.write(lambda conn: store_terms(conn, terms, version))

    async def set_meta(self, key: str, value: str) -> None:
        await self.db.write(lambda conn: set_meta(conn, key, value))
