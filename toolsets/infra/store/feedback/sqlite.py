"""Feedback on plugin tool versions in the embedded SQLite store (`FeedbackStore`)."""

from __future__ import annotations

import sqlite3

from toolsets.infra.store.feedback.contract import MAX_FEEDBACK_PER_TOOL, FeedbackEntry
from toolsets.infra.store.sqlite.database import Database

MIGRATIONS = [
    """
    CREATE TABLE tool_feedback (
        id TEXT PRIMARY KEY,
        tool TEXT NOT NULL,
        at REAL NOT NULL,
        body TEXT NOT NULL
    );
    CREATE INDEX tool_feedback_tool ON tool_feedback(tool, at);
    """
]


class SqliteFeedback:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def _ready(self) -> None:
        await self.db.ensure_schema("feedback", MIGRATIONS)

    async def add(self, entry: FeedbackEntry) -> None:
        await self._ready()

        def apply(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT OR REPLACE INTO tool_feedback(id, tool, at, body) VALUES(?, ?, ?, ?)",
                (entry.id, entry.tool, entry.at, entry.model_dump_json()),
            )
            conn.execute(
                "DELETE FROM tool_feedback WHERE tool = ? AND id NOT IN ("
                "SELECT id FROM tool_feedback WHERE tool = ? ORDER BY at DESC, id DESC LIMIT ?)",
                (entry.tool, entry.tool, MAX_FEEDBACK_PER_TOOL),
            )

        await self.db.write(apply)

    async def recent(self, tool: str, limit: int = MAX_FEEDBACK_PER_TOOL) -> list[FeedbackEntry]:
        await self._ready()
        rows = await self.db.read(
            lambda conn: conn.execute(
                "SELECT body FROM tool_feedback WHERE tool = ? ORDER BY at DESC, id DESC LIMIT ?",
                (tool, max(0, min(limit, MAX_FEEDBACK_PER_TOOL))),
            ).fetchall()
        )
        return [FeedbackEntry.model_validate_json(row["body"]) for row in rows]
