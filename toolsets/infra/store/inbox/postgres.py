"""The inbox and its per-sender rate limit in the shared PostgreSQL store (`InboxStore`).

The limit is exact with many replicas: a send first upserts the sender's row in `inbox_senders`, which
locks that row until the transaction ends, so two sends by one sender (on any replica) are counted
one after the other, never both against the same count. Time is the database's clock, so replicas
whose clocks differ still agree on the windows.
"""

from __future__ import annotations

import datetime as dt
import secrets

from toolsets.infra.clock import iso_utc, now_iso
from toolsets.infra.store.inbox.contract import InboxMessage
from toolsets.infra.store.inbox.shared import PRECISION, RateLimit, refuse_if_full
from toolsets.infra.store.postgres.database import PgDatabase, PgMigration

MIGRATIONS: list[PgMigration] = [
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
    CREATE INDEX inbox_recipient ON inbox (recipient_id, created_at);
    CREATE INDEX inbox_sender ON inbox (sender_id, created_at);
    CREATE TABLE inbox_senders (sender_id TEXT PRIMARY KEY, last_sent_at TEXT NOT NULL);
    """
]


class PgInbox:
    """The inbox in the shared store."""

    def __init__(self, db: PgDatabase, limit: RateLimit | None = None) -> None:
        self.pg = db
        self.limit = limit or RateLimit()

    async def _ready(self) -> None:
        await self.pg.ensure_schema("inbox", MIGRATIONS)

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
        await self._ready()
        message_id = "msg_" + secrets.token_hex(8)
        async with self.pg.transaction() as conn:
            # the sender's row, locked until commit: sends by one sender are counted one at a time
            await conn.execute(
                "INSERT INTO inbox_senders(sender_id, last_sent_at) VALUES(%s, clock_timestamp()::text) "
                "ON CONFLICT(sender_id) DO UPDATE SET last_sent_at = excluded.last_sent_at",
                (sender_id,),
            )
            clock = await (await conn.execute("SELECT clock_timestamp() AS now")).fetchone()
            now: dt.datetime = clock["now"] if clock else dt.datetime.now(dt.UTC)
            for window, allowed in self.limit.windows() if rate_limited else ():
                rows = await (
                    await conn.execute(
                        "SELECT created_at FROM inbox WHERE sender_id = %s AND created_at > %s ORDER BY created_at",
                        (sender_id, iso_utc(now - window, PRECISION)),
                    )
                ).fetchall()
                refuse_if_full([row["created_at"] for row in rows], allowed, window, now)
            message = InboxMessage(
                id=message_id, recipient_id=recipient_id, sender_id=sender_id, text=text, original=original,
                composed_by=composed_by, created_at=iso_utc(now, PRECISION),
            )  # fmt: skip
            await conn.execute(
                "INSERT INTO inbox(id, recipient_id, sender_id, text, original, composed_by, created_at) "
                "VALUES(%s, %s, %s, %s, %s, %s, %s)",
                (message.id, recipient_id, sender_id, text, original, composed_by, message.created_at),
            )
        return message

    async def mark_delivered(self, message_id: str) -> None:
        await self._ready()
        async with self.pg.transaction() as conn:
            await conn.execute("UPDATE inbox SET delivered_at = %s WHERE id = %s", (now_iso(PRECISION), message_id))

    async def messages(
        self, recipient_id: str, *, unread_only: bool, limit: int, mark_read: bool
    ) -> list[InboxMessage]:
        await self._ready()
        where = "recipient_id = %s" + (" AND read_at IS NULL" if unread_only else "")
        async with self.pg.transaction() as conn:
            rows = await (
                await conn.execute(
                    f"SELECT * FROM inbox WHERE {where} ORDER BY created_at DESC LIMIT %s", (recipient_id, limit)
                )
            ).fetchall()
            found = [InboxMessage(**row) for row in rows]
            if mark_read and found:
                await conn.execute(
                    "UPDATE inbox SET read_at = COALESCE(read_at, %s) WHERE id = ANY(%s)",
                    (now_iso(PRECISION), [m.id for m in found]),
                )
        return found
