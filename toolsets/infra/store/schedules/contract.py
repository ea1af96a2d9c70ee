"""The schedules' contract: a schedule (who made it, which tool with which arguments, when), a run of it, and the
store's operations. A run is claimed once per planned instant (`claim`): of two replicas or two deliveries of one
tick, one runs it."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

MAX_RUNS_KEPT = 20  # runs kept per schedule (older ones are dropped as new ones finish)
ENDED = ("cancelled", "done")  # statuses a schedule never leaves
# The tables, the same on SQLite and PostgreSQL: the schedule and each run are kept as their JSON (`body`), with
# the columns a query selects on beside it; a run's key is its tick, so a tick is claimed once.
SCHEMA = """
CREATE TABLE schedules (
    id TEXT PRIMARY KEY,
    owner_id TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX schedules_owner ON schedules (owner_id, status);
CREATE TABLE schedule_runs (
    schedule_id TEXT NOT NULL,
    planned_at TEXT NOT NULL,
    started_at TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (schedule_id, planned_at)
);
"""
Status = Literal["active", "paused", "cancelled", "done"]
RunStatus = Literal["running", "ok", "error", "skipped"]


class ScheduleCapReachedError(Exception):
    """The owner already has as many active schedules as allowed."""


class Schedule(BaseModel):
    id: str
    owner_id: str
    owner_role: str = "member"
    owner_groups: list[str] = Field(default_factory=list)
    timezone: str
    locale: str = "en"  # the language its owner reads (a BCP 47 tag): what their inbox is told in
    profile: str
    tool: str
    tool_ref: dict[str, Any]  # what a run loads: {"kind": "builtin"|"plugin", ...} or a custom_file reference
    arguments: dict[str, Any] = Field(default_factory=dict)
    when: str
    kind: Literal["cron", "interval", "once"]
    confirmed: bool = False  # a destructive tool the owner said yes to for every run, once, when scheduling
    confirmed_at: str | None = None  # when they said it (a row without it was stored by a version that did not ask)
    status: Status = "active"
    reason: str | None = None  # why it is paused, cancelled or done
    created_at: str
    next_run_at: str | None = None  # ISO 8601 UTC
    last_run_at: str | None = None
    runs: int = 0
    failures: int = 0


class ScheduleRun(BaseModel):
    schedule_id: str
    planned_at: str  # the tick, ISO 8601 UTC: one run per tick
    started_at: str
    finished_at: str | None = None
    status: RunStatus = "running"
    code: str | None = None  # the error code of a failed run
    summary: str = ""  # the result or the error, shortened
    attempts: int = 1
    replica: str = ""


class ScheduleStore(Protocol):
    async def create(self, schedule: Schedule, *, cap: int) -> Schedule:
        """Store a new schedule unless its owner has `cap` active ones (`ScheduleCapReachedError`)."""
        ...

    async def get(self, schedule_id: str) -> Schedule | None: ...

    async def listed(self, owner_id: str | None, *, include_ended: bool = False) -> list[Schedule]:
        """An owner's schedules (None: everyone's), newest first; ended ones (cancelled, done) only if asked."""
        ...

    async def set_status(self, schedule_id: str, status: Status, reason: str | None) -> Schedule | None:
        """Change the status; an ended schedule (cancelled, done) keeps its status. None: no such schedule."""
        ...

    async def planned(self, schedule_id: str, next_run_at: str | None) -> None:
        """Record the next tick (None: no more)."""
        ...

    async def claim(self, run: ScheduleRun) -> bool:
        """Record the start of the run of one tick; False when that tick was already claimed."""
        ...

    async def finish(self, run: ScheduleRun) -> None:
        """Record how the claimed run ended, count it on its schedule and keep the last `MAX_RUNS_KEPT` runs."""
        ...

    async def recent_runs(self, schedule_id: str, limit: int = MAX_RUNS_KEPT) -> list[ScheduleRun]:
        """Newest first."""
        ...
