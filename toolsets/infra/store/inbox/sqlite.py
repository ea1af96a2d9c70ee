"""Relayed messages in the embedded SQLite store (`InboxStore`), and the per-sender rate limit that guards them."""

from __future__ import annotations

import datetime as dt
import secrets
import sqlite3

from toolsets.infra.clock import iso_utc, now_iso
from toolsets.infra.store.inbox.contract import InboxMessage
from toolsets.infra.store.inbox.shared import PRECISION, RateLimit, refuse_if_full
from toolsets.infra.store.sqlite.database import Database

MIGRATIONS = [
    """
    CREATE TABLE inbox (
        id TEXT PRIMARY KEY,
        recipient_id TEXT NOT NULL,
        sender_id TEXT NOT NULL,
        text TEXT NOT NULL,
        original TEXT NOT NULL,
        composed_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        delivered_at TEXT,
        read_at TEXT
    );
    CREATE INDEX inbox_recipient ON inbox(recipient_id, created_at);
    CREATE INDEX inbox_sender ON inbox(sender_id, created_at);
    """
]


class SqliteInbox:
    """The inbox in the embedded store."""

    def __init__(self, db: Database, limit: RateLimit | None = None) -> None:
        self.db = db
        self.limit = limit or RateLimit()

    async def _ready(self) -> None:
        await self.db.ensure_schema("inbox", MIGRATIONS)

    async def send(
        self,
        *,
        sender_id: str,
        recipient_id: str,
        text: str,
        original: str,
        composed_by: str,
        rate_limited: bool = True,
    ) -> InboxMessage:
        """Store a message unless the sender is over the rate limit (checked and written atomically)."""
        await self._ready()
        now = dt.datetime.now(dt.UTC)
        message = InboxMessage(
            id="msg_" + secrets.token_hex(8), recipient_id=recipient_id, sender_id=sender_id, text=text,
            original=original, composed_by=composed_by, created_at=iso_utc(now, PRECISION),
        )  # fmt: skip

        def apply(conn: sqlite3.Connection) -> InboxMessage:
            for window, allowed in self.limit.windows() if rate_limited else ():
                rows = conn.execute(
                    "SELECT created_at FROM inbox WHERE sender_id = ? AND created_at > ? ORDER BY created_at",
                    (sender_id, iso_utc(now - window, PRECISION)),
                ).fetchall()
                refuse_if_full([row["created_at"] for row in rows], allowed, window, now)
            conn.execute(
                "INSERT INTO inbox(id, recipient_id, sender_id, text, original, composed_by, created_at) "
                "VALUES(?, ?, ?, ?, ?, ?, ?)",
                (message.id, recipient_id, sender_id, text, original, composed_by, message.created_at),
            )
            return message

        return await self.db.write(apply)

    async def mark_delivered(self, message_id: str) -> None:
        await self.db.write(
            lambda conn: conn.execute(
                "UPDATE inbox SET delivered_at = ? WHERE id = ?", (now_iso(PRECISION), message_id)
            )
        )

    async def messages(
        self, recipient_id: str, *, unread_only: bool, limit: int, mark_read: bool
    ) -> list[InboxMessage]:
        await self._ready()

        def apply(conn: sqlite3.Connection) -> list[InboxMessage]:
            where = "recipient_id = ?" + (" AND read_at IS NULL" if unread_only else "")
            rows = conn.execute(
                f"SELECT * FROM inbox WHERE {where} ORDER BY created_at DESC LIMIT ?", (recipient_id, limit)
            ).fetchall()
            found = [InboxMessage(**dict(row)) for row in rows]
            if mark_read and found:
                stamp = now_iso(PRECISION)
                conn.executemany(
                    "UPDATE inbox SET read_at = COALESCE(read_at, ?) WHERE id = ?", [(stamp, m.id) for m in found]
                )
            return found

        return await self.db.write(apply)
