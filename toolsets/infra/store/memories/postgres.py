"""Memories in the shared PostgreSQL store (`MemoryStore`), searched like the embedded store.

As on SQLite, every indexed term carries its owner's key (`owner_key`), so a search reads only the
caller's postings in the GIN index and the BM25 statistics are the caller's memories alone.
Rows analyzed by another analyzer are re-analyzed on first use, in batches.
"""

from __future__ import annotations

import json

from toolsets.infra.store.memories.contract import MemoryHit, MemoryRecord
from toolsets.infra.store.memories.shared import REANALYZE_BATCH, memory_record, memory_terms, new_memory, owner_key
from toolsets.infra.store.postgres.database import Conn, PgDatabase, PgMigration
from toolsets.infra.store.postgres.search import ranked_sql, search_params, tsvector_literal
from toolsets.infra.text import Analyzer, analyzer

MIGRATIONS: list[PgMigration] = [
    """
    CREATE TABLE memories (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        user_id TEXT NOT NULL,
        content TEXT NOT NULL,
        tags TEXT NOT NULL DEFAULT '[]',
        created_at TEXT NOT NULL,
        content_terms TEXT NOT NULL,
        tags_terms TEXT NOT NULL,
        analyzer TEXT NOT NULL,
        tsv TSVECTOR NOT NULL
    );
    CREATE INDEX memories_by_user ON memories (user_id, created_at);
    CREATE INDEX memories_by_analyzer ON memories (analyzer);
    CREATE INDEX memories_tsv ON memories USING GIN (tsv);
    """,
]

# ts_rank weights {D, C, B, A}: content is A (1.0), tags B (0.5), as bm25() weighs them on SQLite.
WEIGHTS = "{0, 0, 0.5, 1}"
_SEARCH = ranked_sql(
    "memories", weights=WEIGHTS, scope="t.user_id = %(user)s", columns="t.id, t.content, t.tags, t.created_at"
)


def memory_tsv(user_id: str, content_terms: str, tags_terms: str) -> str:
    return tsvector_literal([(content_terms, "A"), (tags_terms, "B")], prefix=owner_key(user_id))


async def insert_memory(conn: Conn, user_id: str, record: MemoryRecord, text: Analyzer) -> None:
    content_terms, tags_terms = memory_terms(text, record.content, record.tags)
    await conn.execute(
        "INSERT INTO memories(id, user_id, content, tags, created_at, content_terms, tags_terms, analyzer, tsv) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s::tsvector)",
        (
            record.id, user_id, record.content, json.dumps(record.tags, ensure_ascii=False), record.created_at,
            content_terms, tags_terms, text.id, memory_tsv(user_id, content_terms, tags_terms),
        ),
    )  # fmt: skip


class PgMemories:
    """Memories in the shared store, ranked with the BM25-like weighting of `postgres.search`."""

    def __init__(self, db: PgDatabase, text: Analyzer | None = None) -> None:
        self.pg = db
        self.analyzer = text or analyzer()
        self._current = False

    async def _ready(self) -> None:
        await self.pg.ensure_schema("memory", MIGRATIONS)
        if not self._current:
            while await self._reanalyze_batch() == REANALYZE_BATCH:
                pass
            self._current = True

    async def _reanalyze_batch(self) -> int:
        async with self.pg.transaction() as conn:
            rows = await (
                await conn.execute(
                    "SELECT seq, user_id, content, tags FROM memories WHERE analyzer <> %s "
                    "LIMIT %s FOR UPDATE SKIP LOCKED",
                    (self.analyzer.id, REANALYZE_BATCH),
                )
            ).fetchall()
            for row in rows:
                content_terms, tags_terms = memory_terms(self.analyzer, row["content"], json.loads(row["tags"]))
                await conn.execute(
                    "UPDATE memories SET content_terms = %s, tags_terms = %s, analyzer = %s, tsv = %s::tsvector "
                    "WHERE seq = %s",
                    (content_terms, tags_terms, self.analyzer.id,
                     memory_tsv(row["user_id"], content_terms, tags_terms), row["seq"]),
                )  # fmt: skip
        return len(rows)

    async def save(self, user_id: str, content: str, tags: list[str]) -> MemoryRecord:
        await self._ready()
        record = new_memory(content, tags)
        async with self.pg.transaction() as conn:
            await insert_memory(conn, user_id, record, self.analyzer)
        return record

    async def search(self, user_id: str, query: str, limit: int) -> list[MemoryHit]:
        params = search_params(self.analyzer.query(query), prefix=owner_key(user_id))
        if not params:
            return []
        await self._ready()
        async with self.pg.transaction() as conn:
            rows = await (await conn.execute(_SEARCH, {**params, "limit": limit, "user": user_id})).fetchall()
        return [MemoryHit(record=memory_record(row), score=float(row["score"] or 0.0)) for row in rows]

    async def exists(self, user_id: str, memory_id: str) -> bool | None:
        await self._ready()
        async with self.pg.transaction() as conn:
            found = await conn.execute("SELECT 1 FROM memories WHERE id = %s AND user_id = %s", (memory_id, user_id))
            return await found.fetchone() is not None

    async def text_of(self, user_id: str, memory_id: str) -> str | None:
        await self._ready()
        async with self.pg.transaction() as conn:
            found = await conn.execute(
                "SELECT content FROM memories WHERE id = %s AND user_id = %s", (memory_id, user_id)
            )
            row = await found.fetchone()
            return None if row is None else str(row["content"])

    async def forget(self, user_id: str, memory_id: str) -> bool:
        await self._ready()
        async with self.pg.transaction() as conn:
            cursor = await conn.execute("DELETE FROM memories WHERE id = %s AND user_id = %s", (memory_id, user_id))
            return cursor.rowcount > 0

    async def count(self, user_id: str) -> int:
        await self._ready()
        async with self.pg.transaction() as conn:
            row = await (
                await conn.execute("SELECT count(*) AS n FROM memories WHERE user_id = %s", (user_id,))
            ).fetchone()
        return int(row["n"]) if row else 0
