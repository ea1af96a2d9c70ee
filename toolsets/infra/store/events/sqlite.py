"""Events, their invitees, and the availability invitees submit, in the embedded SQLite store (`EventStore`)."""

from __future__ import annotations

import datetime as dt
import json
import secrets
import sqlite3
from collections.abc import Iterable

from toolsets.infra.clock import iso_utc, now_iso
from toolsets.infra.store.errors import EventMissing, InvitationMissing
from toolsets.infra.store.events.contract import EventChanges, EventRecord, NewEvent
from toolsets.infra.store.events.shared import event_record, invitation, new_row
from toolsets.infra.store.sqlite.database import Database

MIGRATIONS = [
    """
    CREATE TABLE events (
        id TEXT PRIMARY KEY,
        owner_id TEXT NOT NULL,
        title TEXT NOT NULL,
        start TEXT NOT NULL,
        end TEXT NOT NULL,
        start_utc TEXT NOT NULL,
        end_utc TEXT NOT NULL,
        timezone TEXT NOT NULL,
        location TEXT,
        description TEXT,
        availability_deadline TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX events_owner ON events(owner_id, start_utc);
    CREATE TABLE invitations (
        event_id TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
        user_id TEXT NOT NULL,
        invited_by TEXT NOT NULL,
        invited_at TEXT NOT NULL,
        available_dates TEXT,
        responded_at TEXT,
        PRIMARY KEY (event_id, user_id)
    );
    CREATE INDEX invitations_user ON invitations(user_id);
    """
]


class SqliteEventStore:
    """Events in the embedded store."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def _ready(self) -> None:
        await self.db.ensure_schema("events", MIGRATIONS)

    async def create(self, owner_id: str, new: NewEvent, invitee_ids: Iterable[str]) -> EventRecord:
        """Create an event and its invitations in one transaction."""
        await self._ready()
        event_id = "evt_" + secrets.token_hex(6)
        stamp = now_iso()
        invitees = [user_id for user_id in dict.fromkeys(invitee_ids) if user_id != owner_id]

        def apply(conn: sqlite3.Connection) -> EventRecord:
            conn.execute(
                "INSERT INTO events(id, owner_id, title, start, end, start_utc, end_utc, timezone, location, "
                "description, availability_deadline, created_at, updated_at) "
                "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                new_row(event_id, owner_id, new, stamp),
            )
            conn.executemany(
                "INSERT INTO invitations(event_id, user_id, invited_by, invited_at) VALUES(?, ?, ?, ?)",
                [(event_id, user_id, owner_id, stamp) for user_id in invitees],
            )
            return _load(conn, event_id)  # type: ignore[return-value]  # the row was just written, so it loads

        return await self.db.write(apply)

    async def get(self, event_id: str) -> EventRecord | None:
        await self._ready()
        return await self.db.read(lambda conn: _load(conn, event_id))

    async def list_for(
        self, user_id: str, start: dt.datetime, end: dt.datetime, *, owned: bool = True
    ) -> list[EventRecord]:
        """Events the user owns (when `owned`) or is invited to that overlap [start, end)."""
        await self._ready()
        ownership = "owner_id = ? OR " if owned else ""
        sql = (
            f"SELECT id FROM events WHERE ({ownership}id IN (SELECT event_id FROM invitations WHERE user_id = ?)) "
            "AND start_utc < ? AND end_utc > ? ORDER BY start_utc, id LIMIT 500"
        )
        args = ((user_id,) if owned else ()) + (user_id, iso_utc(end), iso_utc(start))

        def query(conn: sqlite3.Connection) -> list[EventRecord]:
            ids = [row["id"] for row in conn.execute(sql, args)]
            return [event for event in (_load(conn, event_id) for event_id in ids) if event is not None]

        return await self.db.read(query)

    async def invited_events(self, user_id: str) -> list[EventRecord]:
        await self._ready()

        def query(conn: sqlite3.Connection) -> list[EventRecord]:
            rows = conn.execute(
                "SELECT e.id FROM events e JOIN invitations i ON i.event_id = e.id WHERE i.user_id = ? "
                "ORDER BY e.start_utc, e.id LIMIT 500",
                (user_id,),
            )
            return [event for event in (_load(conn, row["id"]) for row in rows.fetchall()) if event is not None]

        return await self.db.read(query)

    async def update(self, event_id: str, changes: EventChanges) -> EventRecord:
        await self._ready()
        columns = {**changes.columns(), "updated_at": now_iso()}
        assignments = ", ".join(f"{column} = ?" for column in columns)

        def apply(conn: sqlite3.Connection) -> EventRecord:
            cursor = conn.execute(f"UPDATE events SET {assignments} WHERE id = ?", (*columns.values(), event_id))
            updated = _load(conn, event_id) if cursor.rowcount == 1 else None
            if updated is None:  # deleted since the tool looked it up
                raise EventMissing(event_id)
            return updated

        return await self.db.write(apply)

    async def invite(self, event_id: str, user_ids: Iterable[str], invited_by: str) -> tuple[list[str], list[str]]:
        """Invite users; returns (newly invited, already invited). Both lists keep the given order."""
        await self._ready()
        wanted = list(dict.fromkeys(user_ids))
        stamp = now_iso()

        def apply(conn: sqlite3.Connection) -> tuple[list[str], list[str]]:
            if conn.execute("UPDATE events SET updated_at = ? WHERE id = ?", (stamp, event_id)).rowcount != 1:
                raise EventMissing(event_id)  # deleted since the tool looked it up: invite nobody
            existing = {row["user_id"] for row in conn.execute(
                "SELECT user_id FROM invitations WHERE event_id = ?", (event_id,))}  # fmt: skip
            added = [user_id for user_id in wanted if user_id not in existing]
            conn.executemany(
                "INSERT INTO invitations(event_id, user_id, invited_by, invited_at) VALUES(?, ?, ?, ?)",
                [(event_id, user_id, invited_by, stamp) for user_id in added],
            )
            return added, [user_id for user_id in wanted if user_id in existing]

        return await self.db.write(apply)

    async def delete(self, event_id: str) -> bool:
        await self._ready()
        return await self.db.write(
            lambda conn: conn.execute("DELETE FROM events WHERE id = ?", (event_id,)).rowcount > 0
        )

    async def set_availability(self, event_id: str, user_id: str, dates: list[str]) -> str:
        await self._ready()
        stamp = now_iso()

        def apply(conn: sqlite3.Connection) -> str:
            cursor = conn.execute(
                "UPDATE invitations SET available_dates = ?, responded_at = ? WHERE event_id = ? AND user_id = ?",
                (json.dumps(dates), stamp, event_id, user_id),
            )
            if cursor.rowcount != 1:
                raise InvitationMissing(event_id, user_id)
            return stamp

        return await self.db.write(apply)


def _load(conn: sqlite3.Connection, event_id: str) -> EventRecord | None:
    row = conn.execute("SELECT * FROM events WHERE id = ?", (event_id,)).fetchone()
    if row is None:
        return None
    invitations = [
        invitation(inv)
        for inv in conn.execute(
            "SELECT * FROM invitations WHERE event_id = ? ORDER BY invited_at, user_id", (event_id,)
        )
    ]
    return event_record(row, invitations)
