"""Events, their invitees, and the availability invitees submit."""

from __future__ import annotations

import datetime as dt
import json
import secrets
import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from toolsets.infra.clock import iso_utc, now_iso
from toolsets.infra.store.db import Database
from toolsets.infra.store.errors import InvitationMissing

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


class Invitation(BaseModel):
    user_id: str
    invited_by: str
    invited_at: str
    available_dates: list[str] | None = None
    responded_at: str | None = None


class EventRecord(BaseModel):
    id: str
    owner_id: str
    title: str
    start: str
    end: str
    timezone: str
    location: str | None = None
    description: str | None = None
    availability_deadline: str | None = None
    created_at: str
    updated_at: str
    invitations: list[Invitation] = Field(default_factory=list)

    def invitee_ids(self) -> list[str]:
        return [invitation.user_id for invitation in self.invitations]

    def involves(self, user_id: str) -> bool:
        return user_id == self.owner_id or user_id in self.invitee_ids()


class NewEvent(BaseModel):
    """What an event is created with. Times are aware: stored as given (with their offset) and in UTC."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    title: str
    start: AwareDatetime
    end: AwareDatetime
    timezone: str  # IANA name the event is shown in
    location: str | None = None
    description: str | None = None
    availability_deadline: AwareDatetime | None = None


class EventChanges(BaseModel):
    """The fields an update sets: only those given (`None` given clears a field, such as the deadline)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    title: str | None = None
    start: AwareDatetime | None = None
    end: AwareDatetime | None = None
    timezone: str | None = None
    location: str | None = None
    description: str | None = None
    availability_deadline: AwareDatetime | None = None

    @model_validator(mode="after")
    def _required_fields_stay(self) -> EventChanges:
        cleared = [name for name in ("title", "start", "end", "timezone") if name in self.model_fields_set
                   and getattr(self, name) is None]  # fmt: skip
        if cleared:
            raise ValueError(f"an event always has {', '.join(cleared)}; give a value or leave it out")
        return self

    def columns(self) -> dict[str, str | None]:
        """Column -> stored value of each field given (start and end also set their UTC columns)."""
        given = {name: getattr(self, name) for name in self.model_fields_set}
        columns = {name: _stored(value) for name, value in given.items()}
        for name in ("start", "end"):
            if given.get(name) is not None:
                columns[f"{name}_utc"] = iso_utc(given[name])
        return columns


def _stored(value: str | dt.datetime | None) -> str | None:
    return value.isoformat() if isinstance(value, dt.datetime) else value


def _new_row(event_id: str, owner_id: str, new: NewEvent, stamp: str) -> tuple[str | None, ...]:
    """A new event's columns, in the `events` table's order (id, owner_id, ..., created_at, updated_at)."""
    return (
        event_id, owner_id, new.title, new.start.isoformat(), new.end.isoformat(),
        iso_utc(new.start), iso_utc(new.end), new.timezone, new.location,
        new.description, _stored(new.availability_deadline), stamp, stamp,
    )  # fmt: skip


def _invitation(row: sqlite3.Row | Mapping[str, Any]) -> Invitation:
    return Invitation(
        user_id=row["user_id"],
        invited_by=row["invited_by"],
        invited_at=row["invited_at"],
        available_dates=json.loads(row["available_dates"]) if row["available_dates"] else None,
        responded_at=row["responded_at"],
    )


def _record(row: sqlite3.Row | Mapping[str, Any], invitations: list[Invitation]) -> EventRecord:
    """An `events` row as a record (its UTC columns are for queries only)."""
    fields = {key: row[key] for key in row.keys() if key not in ("start_utc", "end_utc")}  # noqa: SIM118
    return EventRecord(**fields, invitations=invitations)


class EventStore:
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
                _new_row(event_id, owner_id, new, stamp),
            )
            conn.executemany(
                "INSERT INTO invitations(event_id, user_id, invited_by, invited_at) VALUES(?, ?, ?, ?)",
                [(event_id, user_id, owner_id, stamp) for user_id in invitees],
            )
            return _load(conn, event_id)  # type: ignore[return-value]

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
            conn.execute(f"UPDATE events SET {assignments} WHERE id = ?", (*columns.values(), event_id))
            return _load(conn, event_id)  # type: ignore[return-value]

        return await self.db.write(apply)

    async def invite(self, event_id: str, user_ids: Iterable[str], invited_by: str) -> tuple[list[str], list[str]]:
        """Invite users; returns (newly invited, already invited). Both lists keep the given order."""
        await self._ready()
        wanted = list(dict.fromkeys(user_ids))
        stamp = now_iso()

        def apply(conn: sqlite3.Connection) -> tuple[list[str], list[str]]:
            existing = {row["user_id"] for row in conn.execute(
                "SELECT user_id FROM invitations WHERE event_id = ?", (event_id,))}  # fmt: skip
            added = [user_id for user_id in wanted if user_id not in existing]
            conn.executemany(
                "INSERT INTO invitations(event_id, user_id, invited_by, invited_at) VALUES(?, ?, ?, ?)",
                [(event_id, user_id, invited_by, stamp) for user_id in added],
            )
            conn.execute("UPDATE events SET updated_at = ? WHERE id = ?", (stamp, event_id))
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
        _invitation(inv)
        for inv in conn.execute(
            "SELECT * FROM invitations WHERE event_id = ? ORDER BY invited_at, user_id", (event_id,)
        )
    ]
    return _record(row, invitations)
