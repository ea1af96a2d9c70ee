"""Long-term memories per user in the embedded SQLite store (`MemoryStore`), searched with FTS5.

Every read and write is scoped to one user id; asking about another user's memory id looks
exactly like asking about an id that never existed.

Search terms come from the shared analyzer (`toolsets.infra.text`) and are stored beside the text (the
same term strings a server database would keep). The FTS5 index (split on spaces only) holds them
scoped to their owner: each term is prefixed with a key derived from the user id, so a search reads
only the caller's postings and BM25 (including its document counts) runs over the caller's
memories alone: the cost follows one user's memories, not the whole store. Rows analyzed by an older
analyzer are re-analyzed on first use, in batches.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time

from toolsets.infra.store.memories.contract import MemoryHit, MemoryRecord
from toolsets.infra.store.memories.shared import REANALYZE_BATCH, memory_record, memory_terms, new_memory, owner_key
from toolsets.infra.store.sqlite.database import Database
from toolsets.infra.text import Analyzer, analyzer
from toolsets.infra.text import match_expression as fts_match

logger = logging.getLogger("truloop.memory")


def match_expression(user_id: str, query: str, text: Analyzer | None = None) -> str | None:
    """The MATCH expression of one user's search (its own terms), safe for any user text: each term quoted
    and scoped to that user's postings, any term may match; None when the query has no term."""
    return fts_match((text or analyzer()).query(query).terms, prefix=owner_key(user_id))


def _scoped(key: str, terms: str) -> str:
    return " ".join(key + term for term in terms.split())


def _index(conn: sqlite3.Connection, seq: int, user_id: str, content_terms: str, tags_terms: str) -> None:
    key = owner_key(user_id)
    conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
    conn.execute(
        "INSERT INTO memories_fts(rowid, content, tags) VALUES (?, ?, ?)",
        (seq, _scoped(key, content_terms), _scoped(key, tags_terms)),
    )


MIGRATIONS = [
    """
    CREATE TABLE memories (
        seq INTEGER PRIMARY KEY,  -- stable rowid for the FTS index (VACUUM may renumber implicit rowids)
        id TEXT NOT NULL UNIQUE,
        user_id TEXT NOT NULL,
        content TEXT NOT NULL,
        tags TEXT NOT NULL DEFAULT '[]',  -- JSON array; indexed as text, so tag words are searchable
        created_at TEXT NOT NULL
    );
    CREATE INDEX memories_by_user ON memories(user_id, created_at);
    CREATE VIRTUAL TABLE memories_fts USING fts5(
        content, tags, content='memories', content_rowid='seq', tokenize='porter unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts(rowid, content, tags) VALUES (new.seq, new.content, new.tags);
    END;
    CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, content, tags) VALUES ('delete', old.seq, old.content, old.tags);
    END;
    CREATE TRIGGER memories_fts_update AFTER UPDATE ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, content, tags) VALUES ('delete', old.seq, old.content, old.tags);
        INSERT INTO memories_fts(rowid, content, tags) VALUES (new.seq, new.content, new.tags);
    END;
    """,
    # 2: terms from the app's analyzer, kept in the row; the FTS table (split on spaces only) indexes
    # them scoped to their owner and is written by the store (insert_memory / re-analysis). Existing
    # rows get their terms on first use (analyzer '' is stale).
    """
    DROP TRIGGER memories_fts_insert;
    DROP TRIGGER memories_fts_delete;
    DROP TRIGGER memories_fts_update;
    DROP TABLE memories_fts;
    ALTER TABLE memories ADD COLUMN content_terms TEXT NOT NULL DEFAULT '';
    ALTER TABLE memories ADD COLUMN tags_terms TEXT NOT NULL DEFAULT '';
    ALTER TABLE memories ADD COLUMN analyzer TEXT NOT NULL DEFAULT '';
    CREATE TABLE memory_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE VIRTUAL TABLE memories_fts USING fts5(content, tags, tokenize = 'ascii');
    CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
        DELETE FROM memories_fts WHERE rowid = old.seq;
    END;
    """,
]

# Column weights for bm25(): a word in the text counts more than the same word in a tag.
_WEIGHTS = (1.0, 0.5)
_SEARCH = (
    "SELECT m.id, m.content, m.tags, m.created_at, bm25(memories_fts, ?, ?) AS rank "
    "FROM memories_fts JOIN memories AS m ON m.seq = memories_fts.rowid "
    "WHERE memories_fts MATCH ? AND m.user_id = ? "
    "ORDER BY rank, m.seq DESC LIMIT ?"
)
# With other-language alternates: BM25 of the own terms plus the weight times BM25 of the alternates.
_SEARCH_BOTH = (
    "SELECT m.id, m.content, m.tags, m.created_at, sum(s.rank) AS rank FROM ("
    " SELECT rowid, bm25(memories_fts, ?, ?) AS rank FROM memories_fts WHERE memories_fts MATCH ?"
    " UNION ALL"
    " SELECT rowid, ? * bm25(memories_fts, ?, ?) FROM memories_fts WHERE memories_fts MATCH ?"
    ") AS s JOIN memories AS m ON m.seq = s.rowid WHERE m.user_id = ? "
    "GROUP BY m.seq ORDER BY rank, m.seq DESC LIMIT ?"
)


def insert_memory(conn: sqlite3.Connection, user_id: str, record: MemoryRecord, text: Analyzer | None = None) -> None:
    """One memory row with its terms, indexed in the same transaction."""
    text = text or analyzer()
    content_terms, tags_terms = memory_terms(text, record.content, record.tags)
    cursor = conn.execute(
        "INSERT INTO memories(id, user_id, content, tags, created_at, content_terms, tags_terms, analyzer) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            record.id,
            user_id,
            record.content,
            json.dumps(record.tags, ensure_ascii=False),
            record.created_at,
            content_terms,
            tags_terms,
            text.id,
        ),
    )
    _index(conn, int(cursor.lastrowid or 0), user_id, content_terms, tags_terms)


def _reanalyze_batch(conn: sqlite3.Connection, text: Analyzer, limit: int) -> int:
    """Give up to `limit` rows analyzed by another analyzer the current terms; how many were updated."""
    rows = conn.execute(
        "SELECT seq, user_id, content, tags FROM memories WHERE analyzer != ? LIMIT ?", (text.id, limit)
    ).fetchall()
    for row in rows:
        content_terms, tags_terms = memory_terms(text, row["content"], json.loads(row["tags"]))
        conn.execute(
            "UPDATE memories SET content_terms = ?, tags_terms = ?, analyzer = ? WHERE seq = ?",
            (content_terms, tags_terms, text.id, row["seq"]),
        )
        _index(conn, row["seq"], row["user_id"], content_terms, tags_terms)
    return len(rows)


class SqliteMemories:
    """Memories in the embedded store, ranked with FTS5's BM25."""

    def __init__(self, db: Database, text: Analyzer | None = None) -> None:
        self.db = db
        self.analyzer = text or analyzer()
        self._current = False  # every row carries this analyzer's terms

    async def _ready(self) -> None:
        await self.db.ensure_schema("memory", MIGRATIONS)
        if not self._current:
            await self._reanalyze()
            self._current = True

    async def _reanalyze(self) -> None:
        version = self.analyzer.id
        row = await self.db.read(
            lambda conn: conn.execute("SELECT value FROM memory_meta WHERE key = 'analyzer'").fetchone()
        )
        if row is not None and row[0] == version:
            return
        started, total = time.monotonic(), 0
        while True:
            done = await self.db.write(lambda conn: _reanalyze_batch(conn, self.analyzer, REANALYZE_BATCH))
            total += done
            if done < REANALYZE_BATCH:
                break
        await self.db.write(
            lambda conn: conn.execute(
                "INSERT INTO memory_meta(key, value) VALUES('analyzer', ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (version,),
            )
        )
        if total:
            logger.info("re-analyzed %d memories for analyzer %s in %.2f s", total, version, time.monotonic() - started)

    async def save(self, user_id: str, content: str, tags: list[str]) -> MemoryRecord:
        await self._ready()
        record = new_memory(content, tags)
        await self.db.write(lambda conn: insert_memory(conn, user_id, record, self.analyzer))
        return record

    async def search(self, user_id: str, query: str, limit: int) -> list[MemoryHit]:
        terms = self.analyzer.query(query)
        key = owner_key(user_id)  # only the caller's postings are read
        expression = fts_match(terms.terms, prefix=key)
        if expression is None:
            return []
        other = fts_match(terms.alternates, prefix=key)
        await self._ready()

        def run(conn: sqlite3.Connection) -> list[MemoryHit]:
            if other is None:
                rows = conn.execute(_SEARCH, (*_WEIGHTS, expression, user_id, limit)).fetchall()
            else:
                args = (*_WEIGHTS, expression, terms.alternate_weight, *_WEIGHTS, other, user_id, limit)
                rows = conn.execute(_SEARCH_BOTH, args).fetchall()
            # bm25() is lower-is-better and negative; publish higher-is-better.
            return [MemoryHit(record=memory_record(row), score=-row["rank"]) for row in rows]

        return await self.db.read(run)

    async def exists(self, user_id: str, memory_id: str) -> bool | None:
        await self._ready()
        row = await self.db.read(
            lambda conn: conn.execute(
                "SELECT 1 FROM memories WHERE id = ? AND user_id = ?", (memory_id, user_id)
            ).fetchone()
        )
        return row is not None

    async def text_of(self, user_id: str, memory_id: str) -> str | None:
        await self._ready()
        row = await self.db.read(
            lambda conn: conn.execute(
                "SELECT content FROM memories WHERE id = ? AND user_id = ?", (memory_id, user_id)
            ).fetchone()
        )
        return None if row is None else str(row["content"])

    async def forget(self, user_id: str, memory_id: str) -> bool:
        await self._ready()

        def run(conn: sqlite3.Connection) -> bool:
            cursor = conn.execute("DELETE FROM memories WHERE id = ? AND user_id = ?", (memory_id, user_id))
            return cursor.rowcount > 0

        return await self.db.write(run)

    async def count(self, user_id: str) -> int:
        await self._ready()
        row = await self.db.read(
            lambda conn: conn.execute("SELECT count(*) FROM memories WHERE user_id = ?", (user_id,)).fetchone()
        )
        return int(row[0])
