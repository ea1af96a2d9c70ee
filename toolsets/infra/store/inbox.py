"""Relayed messages: each recipient's inbox, and the per-sender rate limit that guards it."""

from __future__ import annotations

import datetime as dt
import secrets
import sqlite3
from dataclasses import dataclass

from pydantic import BaseModel

from toolsets.infra.clock import Precision, iso_utc, now_iso
from toolsets.infra.store.db import Database
from toolsets.infra.store.errors import RateLimited

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


class InboxMessage(BaseModel):
    id: str
    recipient_id: str
    sender_id: str
    text: str
    original: str
    composed_by: str
    created_at: str
    delivered_at: str | None = None
    read_at: str | None = None


@dataclass(frozen=True, slots=True)
class RateLimit:
    per_minute: int = 5
    per_day: int = 100

    def windows(self) -> tuple[tuple[dt.timedelta, int], ...]:
        """Each window and how many messages a sender may send within it."""
        return (dt.timedelta(minutes=1), self.per_minute), (dt.timedelta(days=1), self.per_day)


def _refuse_if_full(sent: list[str], allowed: int, window: dt.timedelta, now: dt.datetime) -> None:
    """`RateLimited` when `sent` (the stamps of a sender's messages within `window` before `now`, oldest
    first) already holds `allowed`; the wait lasts until the oldest of the last `allowed` leaves the window."""
    if len(sent) >= allowed:
        oldest = dt.datetime.fromisoformat(sent[len(sent) - allowed])
        raise RateLimited(max(1, int((oldest + window - now).total_seconds()) + 1))


__all__ = ["Inbox", "InboxMessage", "RateLimit", "RateLimited"]
# Microseconds: the rate limit orders a sender's messages by their stamps, several may share a second.
PRECISION: Precision = "microseconds"


class Inbox:
    def __init__(self, db: Database, limit: RateLimit | None = None) -> None:
        self.db = db
        self.limit = limit or RateLimit()

    async def _ready(self) -> None:
        await self.db.ensure_schema("inbox", MIGRATIONS)

    async def send(
        self, *, sender_id: str, recipient_id: str, text: str, original: str, composed_by: str
    ) -> InboxMessage:
        """Store a message unless the sender is over the rate limit (checked and written atomically)."""
        await self._ready()
        now = dt.datetime.now(dt.UTC)
        message = InboxMessage(
            id="msg_" + secrets.token_hex(8), recipient_id=recipient_id, sender_id=sender_id, text=text,
            original=original, composed_by=composed_by, created_at=iso_utc(now, PRECISION),
        )  # fmt: skip

        def apply(conn: sqlite3.Connection) -> InboxMessage:
            for window, allowed in self.limit.windows():
                rows = conn.execute(
                    "SELECT created_at FROM inbox WHERE sender_id = ? AND created_at > ? ORDER BY created_at",
                    (sender_id, iso_utc(now - window, PRECISION)),
                ).fetchall()
                _refuse_if_full([row["created_at"] for row in rows], allowed, window, now)
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
