"""The knowledge index's tables in the shared PostgreSQL store, shared by every replica (`KnowledgeTables`).

Writers take one advisory lock per transaction, so two replicas refreshing the same folder at once
replace a file's chunks one after the other. The folder's absolute path is not part of the shared
index's identity (replicas mount the same docs at different paths): files are keyed by their path
inside the folder.
"""

from __future__ import annotations

from typing import Any

from toolsets.infra.store.knowledge.prepare import Prepared
from toolsets.infra.store.postgres.database import KNOWLEDGE_LOCK, PgDatabase, PgMigration
from toolsets.infra.store.postgres.search import ranked_sql, search_params, tsvector_literal
from toolsets.infra.text import Query

MIGRATIONS: list[PgMigration] = [
    """
    CREATE TABLE knowledge_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE knowledge_files (
        path TEXT PRIMARY KEY,
        mtime_ns BIGINT NOT NULL,
        size BIGINT NOT NULL,
        digest TEXT NOT NULL,
        title TEXT NOT NULL,
        page_id TEXT,
        chunks INTEGER NOT NULL
    );
    CREATE TABLE knowledge_chunks (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        path TEXT NOT NULL REFERENCES knowledge_files(path) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        heading TEXT NOT NULL,
        body TEXT NOT NULL,
        analyzer TEXT NOT NULL,
        tsv TSVECTOR NOT NULL
    );
    CREATE INDEX knowledge_chunks_by_path ON knowledge_chunks (path);
    CREATE INDEX knowledge_chunks_by_analyzer ON knowledge_chunks (analyzer);
    CREATE INDEX knowledge_chunks_tsv ON knowledge_chunks USING GIN (tsv);
    """,
]

# ts_rank weights {D, C, B, A}: title A (1.0), heading B (0.5), body D (0.25): bm25(4, 2, 1) on SQLite.
WEIGHTS = "{0.25, 0, 0.5, 1}"
_SEARCH = f"""
    WITH best AS ({ranked_sql("knowledge_chunks", weights=WEIGHTS, columns="t.seq, t.path, t.heading, t.body")})
    SELECT f.title, best.heading, best.body, best.path, f.page_id, best.score
    FROM best JOIN knowledge_files f ON f.path = best.path
    ORDER BY best.score DESC, best.seq DESC
"""


def chunk_tsv(title: str, heading: str, body: str) -> str:
    return tsvector_literal([(title, "A"), (heading, "B"), (body, "D")])


class PgKnowledgeTables:
    """The index's tables in the shared store, as the async operations `KnowledgeIndex` runs."""

    shared = True

    def __init__(self, db: PgDatabase) -> None:
        self.pg = db

    async def ensure_schema(self) -> None:
        await self.pg.ensure_schema("knowledge", MIGRATIONS)

    async def _one(self, sql: str, args: Any = ()) -> Any:
        async with self.pg.transaction() as conn:
            row = await (await conn.execute(sql, args)).fetchone()
        return None if row is None else next(iter(row.values()))

    async def best_chunks(self, query: Query, limit: int) -> list[dict[str, Any]]:
        params = search_params(query)
        if not params:
            return []
        async with self.pg.transaction() as conn:
            rows = await (await conn.execute(_SEARCH, {**params, "limit": limit})).fetchall()
        return [{**row, "score": float(row["score"] or 0.0)} for row in rows]

    async def document_count(self) -> int:
        return int(await self._one("SELECT count(*) FROM knowledge_files"))

    async def chunk_count(self) -> int:
        return int(await self._one("SELECT count(*) FROM knowledge_chunks"))

    async def stored_state(self, root: str) -> dict[str, tuple[int, int, str]] | None:
        async with self.pg.transaction() as conn:
            rows = await (await conn.execute("SELECT path, mtime_ns, size, digest FROM knowledge_files")).fetchall()
        return {row["path"]: (row["mtime_ns"], row["size"], row["digest"]) for row in rows}

    async def reset(self, root: str) -> None:
        await self.set_meta("root", root)

    async def delete_files(self, paths: list[str]) -> None:
        async with self.pg.transaction() as conn:
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (KNOWLEDGE_LOCK,))
            await conn.execute("DELETE FROM knowledge_files WHERE path = ANY(%s)", (paths,))

    async def store_batch(self, prepared: list[Prepared], vanished: list[str], version: str) -> None:
        """One batch of files replaced whole: a search sees a file's old chunks or its new ones, never a mix."""
        async with self.pg.transaction() as conn:
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (KNOWLEDGE_LOCK,))
            await conn.execute("DELETE FROM knowledge_files WHERE path = ANY(%s)", (vanished,))
            for item in prepared:
                if not item.content_changed:
                    await conn.execute(
                        "UPDATE knowledge_files SET mtime_ns = %s, size = %s WHERE path = %s",
                        (item.mtime_ns, item.size, item.path),
                    )
                    continue
                await conn.execute("DELETE FROM knowledge_files WHERE path = %s", (item.path,))
                await conn.execute(
                    "INSERT INTO knowledge_files(path, mtime_ns, size, digest, title, page_id, chunks) "
                    "VALUES(%s, %s, %s, %s, %s, %s, %s)",
                    (item.path, item.mtime_ns, item.size, item.digest, item.title, item.page_id, len(item.chunks)),
                )
                async with conn.cursor() as cursor:
                    await cursor.executemany(
                        "INSERT INTO knowledge_chunks(path, ordinal, heading, body, analyzer, tsv) "
                        "VALUES(%s, %s, %s, %s, %s, %s::tsvector)",
                        [
                            (item.path, ordinal, chunk.heading, chunk.body, version, chunk_tsv(*terms))
                            for ordinal, (chunk, terms) in enumerate(zip(item.chunks, item.terms, strict=True))
                        ],
                    )

    async def stale_chunks(self, version: str) -> int | None:
        if await self._one("SELECT value FROM knowledge_meta WHERE key = 'analyzer'") == version:
            return None
        return int(await self._one("SELECT count(*) FROM knowledge_chunks WHERE analyzer <> %s", (version,)))

    async def stale_chunk_texts(self, version: str, limit: int) -> list[tuple[int, str, str, str]]:
        async with self.pg.transaction() as conn:
            rows = await (
                await conn.execute(
                    "SELECT c.seq, f.title, c.heading, c.body FROM knowledge_chunks c "
                    "JOIN knowledge_files f ON f.path = c.path WHERE c.analyzer <> %s LIMIT %s",
                    (version, limit),
                )
            ).fetchall()
        return [(row["seq"], row["title"], row["heading"], row["body"]) for row in rows]

    async def store_terms(self, terms: list[tuple[int, str, str, str]], version: str) -> None:
        async with self.pg.transaction() as conn, conn.cursor() as cursor:
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (KNOWLEDGE_LOCK,))
            await cursor.executemany(
                "UPDATE knowledge_chunks SET tsv = %s::tsvector, analyzer = %s WHERE seq = %s",
                [(chunk_tsv(title, heading, body), version, seq) for seq, title, heading, body in terms],
            )

    async def set_meta(self, key: str, value: str) -> None:
        async with self.pg.transaction() as conn:
            await conn.execute(
                "INSERT INTO knowledge_meta(key, value) VALUES(%s, %s) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )
