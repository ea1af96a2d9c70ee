"""Events, invitations and availability in the shared PostgreSQL store (`EventStore`).

Safe with many writers on many replicas: an invitation is a primary key (`ON CONFLICT DO NOTHING
RETURNING` says which were new, so a raced invitation is added once and reported once), and an
availability update is one conditional `UPDATE`. A write to an event first updates (and so locks) its
row: an event deleted meanwhile is `EventMissing`, and a delete waits for the write, then takes the
new invitations with it (none is ever left pointing at a deleted event).
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
from collections.abc import Iterable
from typing import Any

from toolsets.infra.clock import iso_utc, now_iso
from toolsets.infra.store.errors import EventMissing, InvitationMissing
from toolsets.infra.store.events.contract import EventChanges, EventRecord, Invitation, NewEvent
from toolsets.infra.store.events.shared import event_record, invitation, new_row
from toolsets.infra.store.postgres.database import Conn, PgDatabase, PgMigration

MIGRATIONS: list[PgMigration] = [
    """
    CREATE TABLE events (
        id TEXT PRIMARY KEY,
        owner_id TEXT NOT NULL,
        title TEXT NOT NULL,
        start TEXT NOT NULL,
        "end" TEXT NOT NULL,
        start_utc TEXT NOT NULL,
        end_utc TEXT NOT NULL,
        timezone TEXT NOT NULL,
        location TEXT,
        description TEXT,
        availability_deadline TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX events_owner ON events (owner_id, start_utc);
    CREATE TABLE invitations (
        event_id TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
        user_id TEXT NOT NULL,
        invited_by TEXT NOT NULL,
        invited_at TEXT NOT NULL,
        available_dates TEXT,
        responded_at TEXT,
        PRIMARY KEY (event_id, user_id)
    );
    CREATE INDEX invitations_user ON invitations (user_id);
    """
]

_COLUMNS = (
    'id, owner_id, title, start, "end", start_utc, end_utc, timezone, location, description, '
    "availability_deadline, created_at, updated_at"
)


async def load(conn: Conn, event_ids: list[str]) -> list[EventRecord]:
    """The events with these ids, in the order given (ids that do not exist are left out)."""
    if not event_ids:
        return []
    rows = await (await conn.execute("SELECT * FROM events WHERE id = ANY(%s)", (event_ids,))).fetchall()
    invitations: dict[str, list[Invitation]] = {}
    for inv in await (
        await conn.execute(
            "SELECT * FROM invitations WHERE event_id = ANY(%s) ORDER BY invited_at, user_id", (event_ids,)
        )
    ).fetchall():
        invitations.setdefault(inv["event_id"], []).append(invitation(inv))
    by_id = {row["id"]: event_record(row, invitations.get(row["id"], [])) for row in rows}
    return [by_id[event_id] for event_id in event_ids if event_id in by_id]


class PgEventStore:
    """Events in the shared store."""

    def __init__(self, db: PgDatabase) -> None:
        self.pg = db

    async def _ready(self) -> None:
        await self.pg.ensure_schema("events", MIGRATIONS)

    async def _ids(self, sql: str, args: Any) -> list[EventRecord]:
        await self._ready()
        async with self.pg.transaction() as conn:
            ids = [row["id"] for row in await (await conn.execute(sql, args)).fetchall()]
            return await load(conn, ids)

    async def create(self, owner_id: str, new: NewEvent, invitee_ids: Iterable[str]) -> EventRecord:
        await self._ready()
        event_id = "evt_" + secrets.token_hex(6)
        stamp = now_iso()
        invitees = [user_id for user_id in dict.fromkeys(invitee_ids) if user_id != owner_id]
        async with self.pg.transaction() as conn:
            await conn.execute(
                f"INSERT INTO events({_COLUMNS}) VALUES(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                new_row(event_id, owner_id, new, stamp),
            )
            async with conn.cursor() as cursor:
                await cursor.executemany(
                    "INSERT INTO invitations(event_id, user_id, invited_by, invited_at) VALUES(%s, %s, %s, %s)",
                    [(event_id, user_id, owner_id, stamp) for user_id in invitees],
                )
            return (await load(conn, [event_id]))[0]

    async def get(self, event_id: str) -> EventRecord | None:
        found = await self._ids("SELECT id FROM events WHERE id = %s", (event_id,))
        return found[0] if found else None

    async def list_for(
        self, user_id: str, start: dt.datetime, end: dt.datetime, *, owned: bool = True
    ) -> list[EventRecord]:
        ownership = "owner_id = %(user)s OR " if owned else ""
        sql = (
            f"SELECT id FROM events WHERE ({ownership}"
            "id IN (SELECT event_id FROM invitations WHERE user_id = %(user)s)) "
            "AND start_utc < %(end)s AND end_utc > %(start)s ORDER BY start_utc, id LIMIT 500"
        )
        return await self._ids(sql, {"user": user_id, "end": iso_utc(end), "start": iso_utc(start)})

    async def invited_events(self, user_id: str) -> list[EventRecord]:
        return await self._ids(
            "SELECT e.id FROM events e JOIN invitations i ON i.event_id = e.id WHERE i.user_id = %s "
            "ORDER BY e.start_utc, e.id LIMIT 500",
            (user_id,),
        )

    async def update(self, event_id: str, changes: EventChanges) -> EventRecord:
        await self._ready()
        columns = {**changes.columns(), "updated_at": now_iso()}
        assignments = ", ".join(f'"{column}" = %s' for column in columns)
        async with self.pg.transaction() as conn:
            cursor = await conn.execute(f"UPDATE events SET {assignments} WHERE id = %s", (*columns.values(), event_id))
            if cursor.rowcount != 1:
                raise EventMissing(event_id)
            return (await load(conn, [event_id]))[0]

    async def invite(self, event_id: str, user_ids: Iterable[str], invited_by: str) -> tuple[list[str], list[str]]:
        await self._ready()
        wanted = list(dict.fromkeys(user_ids))
        stamp = now_iso()
        async with self.pg.transaction() as conn:
            touched = await conn.execute("UPDATE events SET updated_at = %s WHERE id = %s", (stamp, event_id))
            if touched.rowcount != 1:  # deleted meanwhile; the row lock keeps a delete out until this commits
                raise EventMissing(event_id)
            rows = await (
                await conn.execute(
                    "INSERT INTO invitations(event_id, user_id, invited_by, invited_at) "
                    "SELECT %s, u, %s, %s FROM unnest(%s::text[]) AS u "
                    "ON CONFLICT (event_id, user_id) DO NOTHING RETURNING user_id",
                    (event_id, invited_by, stamp, wanted),
                )
            ).fetchall()
        added = {row["user_id"] for row in rows}
        return [u for u in wanted if u in added], [u for u in wanted if u not in added]

    async def delete(self, event_id: str) -> bool:
        await self._ready()
        async with self.pg.transaction() as conn:
            return (await conn.execute("DELETE FROM events WHERE id = %s", (event_id,))).rowcount > 0

    async def set_availability(self, event_id: str, user_id: str, dates: list[str]) -> str:
        await self._ready()
        stamp = now_iso()
        async with self.pg.transaction() as conn:
            cursor = await conn.execute(
                "UPDATE invitations SET available_dates = %s, responded_at = %s WHERE event_id = %s AND user_id = %s",
                (json.dumps(dates), stamp, event_id, user_id),
            )
            if cursor.rowcount != 1:
                raise InvitationMissing(event_id, user_id)
        return stamp
