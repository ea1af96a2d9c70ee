"""Events' pure pieces, the same on every backend: a new event's column values and rows as records."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolsets.infra.clock import iso_utc
from toolsets.infra.store.events.contract import EventRecord, Invitation, NewEvent, stored_value

if TYPE_CHECKING:
    import sqlite3


def new_row(event_id: str, owner_id: str, new: NewEvent, stamp: str) -> tuple[str | None, ...]:
    """A new event's columns, in the `events` table's order (id, owner_id, ..., created_at, updated_at)."""
    return (
        event_id, owner_id, new.title, new.start.isoformat(), new.end.isoformat(),
        iso_utc(new.start), iso_utc(new.end), new.timezone, new.location,
        new.description, stored_value(new.availability_deadline), stamp, stamp,
    )  # fmt: skip


def invitation(row: sqlite3.Row | Mapping[str, Any]) -> Invitation:
    return Invitation(
        user_id=row["user_id"],
        invited_by=row["invited_by"],
        invited_at=row["invited_at"],
        available_dates=json.loads(row["available_dates"]) if row["available_dates"] else None,
        responded_at=row["responded_at"],
    )


def event_record(row: sqlite3.Row | Mapping[str, Any], invitations: list[Invitation]) -> EventRecord:
    """An `events` row as a record (its UTC columns are for queries only)."""
    fields = {key: row[key] for key in row.keys() if key not in ("start_utc", "end_utc")}  # noqa: SIM118
    return EventRecord(**fields, invitations=invitations)
