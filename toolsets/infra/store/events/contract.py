"""Events' contract: what an event is, how one is created and changed, and the operations the tools use.

`sqlite.SqliteEventStore` (the embedded store) and `postgres.PgEventStore` (the shared store) both
fulfil `EventStore`; the backend of the deployment picks one (`toolsets.infra.store.backend`).
"""

import datetime as dt
from collections.abc import Iterable
from typing import Protocol

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from toolsets.infra.clock import iso_utc


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
    # a lambda, not `list`: pydantic reads a factory's signature, and reading a builtin's costs ~10 ms at start
    invitations: list[Invitation] = Field(default_factory=lambda: [])

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
    def _required_fields_stay(self) -> "EventChanges":
        cleared = [name for name in ("title", "start", "end", "timezone") if name in self.model_fields_set
                   and getattr(self, name) is None]  # fmt: skip
        if cleared:
            raise ValueError(f"an event always has {', '.join(cleared)}; give a value or leave it out")
        return self

    def columns(self) -> dict[str, str | None]:
        """Column -> stored value of each field given (start and end also set their UTC columns)."""
        given = {name: getattr(self, name) for name in self.model_fields_set}
        columns = {name: stored_value(value) for name, value in given.items()}
        for name in ("start", "end"):
            if given.get(name) is not None:
                columns[f"{name}_utc"] = iso_utc(given[name])
        return columns


def stored_value(value: str | dt.datetime | None) -> str | None:
    """A field as its column holds it: a time in ISO 8601 with its offset."""
    return value.isoformat() if isinstance(value, dt.datetime) else value


class EventStore(Protocol):
    """Events, their invitees, and the availability invitees submit."""

    async def create(self, owner_id: str, new: NewEvent, invitee_ids: Iterable[str]) -> EventRecord:
        """Create an event and its invitations in one transaction."""
        ...

    async def get(self, event_id: str) -> EventRecord | None: ...

    async def list_for(
        self, user_id: str, start: dt.datetime, end: dt.datetime, *, owned: bool = True
    ) -> list[EventRecord]:
        """Events the user owns (when `owned`) or is invited to that overlap [start, end)."""
        ...

    async def invited_events(self, user_id: str) -> list[EventRecord]: ...

    async def update(self, event_id: str, changes: EventChanges) -> EventRecord: ...

    async def invite(self, event_id: str, user_ids: Iterable[str], invited_by: str) -> tuple[list[str], list[str]]:
        """Invite users; returns (newly invited, already invited). Both lists keep the given order."""
        ...

    async def delete(self, event_id: str) -> bool: ...

    async def set_availability(self, event_id: str, user_id: str, dates: list[str]) -> str:
        """Record the dates an invitee can attend; when they answered. `InvitationMissing` when not invited."""
        ...
