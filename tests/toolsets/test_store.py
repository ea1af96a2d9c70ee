"""Store contract: concurrent writes lose nothing; a failure inside an operation leaves no half state;
migrations are versioned and refuse a newer schema."""

from __future__ import annotations

import ast
import datetime as dt
import sqlite3
from pathlib import Path

import anyio
import pytest
from pydantic import ValidationError

import toolsets.infra.store
from tests.people import PEOPLE, directory
from toolsets.infra.store.errors import Conflict, InvitationMissing, StoreError
from toolsets.infra.store.events import EventChanges, NewEvent
from toolsets.infra.store.events.sqlite import SqliteEventStore
from toolsets.infra.store.sqlite.database import Database

SEOUL = dt.timezone(dt.timedelta(hours=9))
FIELDS = NewEvent(
    title="t",
    start=dt.datetime(2030, 1, 1, 10, tzinfo=SEOUL),
    end=dt.datetime(2030, 1, 1, 11, tzinfo=SEOUL),
    timezone="Asia/Seoul",
)


@pytest.mark.anyio
@pytest.mark.usefixtures("store_backend")
async def test_concurrent_writes_from_many_tasks_lose_nothing(tmp_path: Path) -> None:
    services = await directory(tmp_path)
    created: list[str] = []

    async def create(n: int) -> None:
        event = await services.events.create("alice", FIELDS.model_copy(update={"title": f"e{n}"}), ["bob"])
        created.append(event.id)

    async def invite_many(event_id: str) -> None:
        await services.events.invite(event_id, ["carol", "gus", "gwen"], "alice")

    async with anyio.create_task_group() as tg:
        for n in range(150):
            tg.start_soon(create, n)
    async with anyio.create_task_group() as tg:
        for event_id in created[:50]:
            for _ in range(3):  # the same invitation raced three times: no duplicates
                tg.start_soon(invite_many, event_id)
    count = await services.backend.count_rows("events")
    invitations = await services.backend.count_rows("invitations")
    assert len(set(created)) == 150 and count == 150
    assert invitations == 150 + 50 * 3
    await services.aclose()


@pytest.mark.anyio
async def test_a_failure_between_two_writes_leaves_no_half_state(tmp_path: Path) -> None:
    db = Database(tmp_path / "s.sqlite3")
    events = SqliteEventStore(db)
    await events.create("alice", FIELDS, [])

    def half(conn: sqlite3.Connection) -> None:
        conn.execute(
            "INSERT INTO events(id, owner_id, title, start, end, start_utc, end_utc, timezone, created_at, updated_at) "
            "VALUES('evt_half', 'alice', 't', 'a', 'b', 'a', 'b', 'UTC', 'x', 'x')"
        )
        raise RuntimeError("the process dies here")

    with pytest.raises(RuntimeError):
        await db.write(half)
    assert await events.get("evt_half") is None
    # a statement that violates a constraint (an invitation to no event) aborts its transaction
    with pytest.raises(sqlite3.IntegrityError):
        await db.write(lambda conn: conn.execute("INSERT INTO invitations VALUES('nope', 'u', 'a', 'x', NULL, NULL)"))
    assert await db.read(lambda conn: conn.execute("SELECT COUNT(*) FROM events").fetchone()[0]) == 1


@pytest.mark.anyio
@pytest.mark.usefixtures("store_backend")
async def test_import_is_all_or_nothing(tmp_path: Path) -> None:
    services = await directory(tmp_path)
    clash = PEOPLE[1].model_copy(update={"id": "bob2"})  # same username as bob
    fresh = PEOPLE[2].model_copy(update={"id": "dave", "username": "dave"})
    with pytest.raises(Conflict):
        await services.users.import_users([fresh, clash])
    assert await services.users.get("dave") is None
    await services.aclose()


@pytest.mark.anyio
async def test_migrations_are_versioned_and_refuse_a_newer_schema(tmp_path: Path) -> None:
    db = Database(tmp_path / "m.sqlite3")
    await db.ensure_schema("demo", ["CREATE TABLE a (x INTEGER);"])
    db.close()
    again = Database(tmp_path / "m.sqlite3")
    await again.ensure_schema("demo", ["CREATE TABLE a (x INTEGER);", "ALTER TABLE a ADD COLUMN y TEXT;"])
    columns = await again.read(lambda conn: [row[1] for row in conn.execute("PRAGMA table_info(a)")])
    assert columns == ["x", "y"]
    assert await again.read(lambda conn: conn.execute("PRAGMA journal_mode").fetchone()[0]) == "wal"
    again.close()
    older = Database(tmp_path / "m.sqlite3")
    with pytest.raises(StoreError, match="newer"):
        await older.ensure_schema("demo", ["CREATE TABLE a (x INTEGER);"])


@pytest.mark.anyio
async def test_event_inputs_are_typed_with_aware_times(tmp_path: Path) -> None:
    events = SqliteEventStore(Database(tmp_path / "e.sqlite3"))
    with pytest.raises(ValidationError):  # a naive time has no place on the timeline
        NewEvent(title="t", start=dt.datetime(2030, 1, 1, 10), end=FIELDS.end, timezone="UTC")
    with pytest.raises(ValidationError, match="always has title"):
        EventChanges(title=None)
    created = await events.create("alice", FIELDS.model_copy(update={"availability_deadline": FIELDS.start}), [])
    assert (created.start, created.availability_deadline) == ("2030-01-01T10:00:00+09:00", "2030-01-01T10:00:00+09:00")
    later = dt.datetime(2030, 1, 2, 1, tzinfo=dt.UTC)
    moved = await events.update(created.id, EventChanges(end=later, availability_deadline=None))
    assert (moved.title, moved.start, moved.end) == ("t", created.start, "2030-01-02T01:00:00+00:00")
    assert moved.availability_deadline is None  # given as None: cleared; fields left out: unchanged
    found = await events.list_for("alice", dt.datetime(2030, 1, 2, 0, 30, tzinfo=dt.UTC), later)
    assert [event.id for event in found] == [created.id]  # the UTC columns moved with the new end
    with pytest.raises(InvitationMissing):
        await events.set_availability(created.id, "bob", ["2030-01-01"])


def test_the_store_never_imports_the_tool_layer() -> None:
    """The store raises its own errors and knows no tool, service or upstream client."""
    above = ("toolsets.core.errors", "toolsets.assistant.validation", "toolsets.services", "toolsets.infra.upstream")
    offenders = []
    for path in sorted(Path(toolsets.infra.store.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            offenders += [f"{path.name}: {name}" for name in names if name.startswith(above)]
    assert offenders == []
