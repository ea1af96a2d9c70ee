"""Long-term memories per user: the backend protocol and its embedded SQLite + FTS5 implementation.

Every read and write is scoped to one user id; asking about another user's memory id looks
exactly like asking about an id that never existed.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sqlite3
import unicodedata
import uuid
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, Field

from toolsets.store.db import Database

if TYPE_CHECKING:
    from toolsets.services import Services

MAX_QUERY_TERMS = 32  # bounds the cost of one MATCH; longer queries add little to ranking

# Letters and digits, as FTS5's unicode61 tokenizer keeps them; everything else (quotes, parentheses,
# `*`, `:` ...) only separates terms, so nothing the user types reaches MATCH as syntax.
_TERM = re.compile(r"[^\W_]+")


class MemoryRecord(BaseModel):
    id: str = Field(description="The memory's id; pass it to forget_memory to delete the memory")
    content: str = Field(description="What was remembered, as saved")
    tags: list[str] = Field(default_factory=list, description="Labels given when the memory was saved")
    created_at: str = Field(description="When the memory was saved, ISO 8601 with UTC offset")


class MemoryHit(BaseModel):
    record: MemoryRecord = Field(description="The matching memory")
    score: float = Field(
        description="Relevance to the query; higher is more relevant (only comparable within one search)"
    )


class MemoryBackend(Protocol):
    async def save(self, user_id: str, content: str, tags: list[str]) -> MemoryRecord: ...

    async def search(self, user_id: str, query: str, limit: int) -> list[MemoryHit]:
        """The user's memories that match `query`, most relevant first."""
        ...

    async def forget(self, user_id: str, memory_id: str) -> bool:
        """True when the user's memory was deleted; False when the user has no memory with that id."""
        ...


def query_terms(text: str) -> list[str]:
    """The distinct words of a free-text query, in order, lower-cased; punctuation is dropped."""
    seen: dict[str, None] = {}
    for term in _TERM.findall(unicodedata.normalize("NFC", text).lower()):
        seen.setdefault(term, None)
    return list(seen)[:MAX_QUERY_TERMS]


def fts_match_expression(text: str) -> str | None:
    """A MATCH expression that any user text is safe in: each word quoted, any word may match."""
    terms = query_terms(text)
    if not terms:
        return None
    return " OR ".join(f'"{term}"' for term in terms)


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


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
    """
]

# Column weights for bm25(): a word in the text counts more than the same word in a tag.
_CONTENT_WEIGHT, _TAGS_WEIGHT = 1.0, 0.5


def insert_memory(conn: sqlite3.Connection, user_id: str, record: MemoryRecord) -> None:
    """One memory row; the FTS triggers index it in the same transaction."""
    conn.execute(
        "INSERT INTO memories(id, user_id, content, tags, created_at) VALUES (?, ?, ?, ?, ?)",
        (record.id, user_id, record.content, json.dumps(record.tags, ensure_ascii=False), record.created_at),
    )


def _record(row: sqlite3.Row) -> MemoryRecord:
    return MemoryRecord(
        id=row["id"], content=row["content"], tags=json.loads(row["tags"]), created_at=row["created_at"]
    )


class SqliteMemories:
    """Memories in the embedded store, ranked with FTS5's BM25."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def _ready(self) -> None:
        await self.db.ensure_schema("memory", MIGRATIONS)

    async def save(self, user_id: str, content: str, tags: list[str]) -> MemoryRecord:
        await self._ready()
        record = MemoryRecord(id=f"mem_{uuid.uuid4().hex}", content=content, tags=list(tags), created_at=now_iso())
        await self.db.write(lambda conn: insert_memory(conn, user_id, record))
        return record

    async def search(self, user_id: str, query: str, limit: int) -> list[MemoryHit]:
        expression = fts_match_expression(query)
        if expression is None:
            return []
        await self._ready()

        def run(conn: sqlite3.Connection) -> list[MemoryHit]:
            rows = conn.execute(
                "SELECT m.id, m.content, m.tags, m.created_at, bm25(memories_fts, ?, ?) AS rank "
                "FROM memories_fts JOIN memories AS m ON m.seq = memories_fts.rowid "
                "WHERE memories_fts MATCH ? AND m.user_id = ? "
                "ORDER BY rank, m.seq DESC LIMIT ?",
                (_CONTENT_WEIGHT, _TAGS_WEIGHT, expression, user_id, limit),
            ).fetchall()
            # bm25() is lower-is-better and negative; publish higher-is-better.
            return [MemoryHit(record=_record(row), score=-row["rank"]) for row in rows]

        return await self.db.read(run)

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


def memory_backend(services: Services) -> MemoryBackend:
    """Supermemory when SUPERMEMORY_API_KEY is set, else the embedded store."""
    api_key = services.secret("SUPERMEMORY_API_KEY")
    if api_key:
        from toolsets.upstream.supermemory import SupermemoryMemories

        return SupermemoryMemories(services, api_key)
    return SqliteMemories(services.db)
