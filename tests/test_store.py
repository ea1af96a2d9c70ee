"""Store contract: concurrent writes lose nothing; a failure inside an operation leaves no half state;
migrations are versioned and refuse a newer schema."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import pytest

from tests.people import PEOPLE, directory
from toolsets.store.db import Database, StoreError
from toolsets.store.events import EventStore

FIELDS = {
    "title": "t",
    "start": "2030-01-01T10:00:00+09:00",
    "end": "2030-01-01T11:00:00+09:00",
    "timezone": "Asia/Seoul",
}


@pytest.mark.anyio
async def test_concurrent_writes_from_many_tasks_lose_nothing(tmp_path: Path) -> None:
    services = await directory(tmp_path)
    created: list[str] = []

    async def create(n: int) -> None:
        event = await services.events.create("alice", {**FIELDS, "title": f"e{n}"}, ["bob"])
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
    count = await services.db.read(lambda conn: conn.execute("SELECT COUNT(*) FROM events").fetchone()[0])
    invitations = await services.db.read(lambda conn: conn.execute("SELECT COUNT(*) FROM invitations").fetchone()[0])
    assert len(set(created)) == 150 and count == 150
    assert invitations == 150 + 50 * 3


@pytest.mark.anyio
async def test_a_failure_between_two_writes_leaves_no_half_state(tmp_path: Path) -> None:
    db = Database(tmp_path / "s.sqlite3")
    events = EventStore(db)
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
async def test_import_is_all_or_nothing(tmp_path: Path) -> None:
    services = await directory(tmp_path)
    clash = PEOPLE[1].model_copy(update={"id": "bob2"})  # same username as bob
    fresh = PEOPLE[2].model_copy(update={"id": "dave", "username": "dave"})
    with pytest.raises(sqlite3.IntegrityError):
        await services.users.import_users([fresh, clash])
    assert await services.users.get("dave") is None


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
