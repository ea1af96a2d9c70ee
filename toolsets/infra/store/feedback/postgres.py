"""Feedback on plugin tool versions in the shared PostgreSQL store (`FeedbackStore`), read by every replica."""

from __future__ import annotations

from toolsets.infra.store.feedback.contract import MAX_FEEDBACK_PER_TOOL, FeedbackEntry
from toolsets.infra.store.postgres.database import PgDatabase, PgMigration

MIGRATIONS: list[PgMigration] = [
    """
    CREATE TABLE tool_feedback (
        id TEXT PRIMARY KEY,
        tool TEXT NOT NULL,
        at DOUBLE PRECISION NOT NULL,
        body TEXT NOT NULL
    );
    CREATE INDEX tool_feedback_tool ON tool_feedback (tool, at);
    """
]


class PgFeedback:
    def __init__(self, db: PgDatabase) -> None:
        self.pg = db

    async def _ready(self) -> None:
        await self.pg.ensure_schema("feedback", MIGRATIONS)

    async def add(self, entry: FeedbackEntry) -> None:
        await self._ready()
        async with self.pg.transaction() as conn:
            await conn.execute(
                "INSERT INTO tool_feedback(id, tool, at, body) VALUES(%s, %s, %s, %s) "
                "ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body",
                (entry.id, entry.tool, entry.at, entry.model_dump_json()),
            )
            await conn.execute(
                "DELETE FROM tool_feedback WHERE tool = %s AND id NOT IN ("
                "SELECT id FROM tool_feedback WHERE tool = %s ORDER BY at DESC, id DESC LIMIT %s)",
                (entry.tool, entry.tool, MAX_FEEDBACK_PER_TOOL),
            )

    async def recent(self, tool: str, limit: int = MAX_FEEDBACK_PER_TOOL) -> list[FeedbackEntry]:
        await self._ready()
        async with self.pg.transaction() as conn:
            rows = await (
                await conn.execute(
                    "SELECT body FROM tool_feedback WHERE tool = %s ORDER BY at DESC, id DESC LIMIT %s",
                    (tool, max(0, min(limit, MAX_FEEDBACK_PER_TOOL))),
                )
            ).fetchall()
        return [FeedbackEntry.model_validate_json(row["body"]) for row in rows]
