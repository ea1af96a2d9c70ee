"""The PostgreSQL store's own guarantees: migrations once under a lock and refusing a newer schema, one
transaction per operation, exact rate limits and duplicate-free invitations with several replicas'
connection pools writing at once, and a clear retryable error when the server cannot be reached."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import anyio
import pytest

from tests.people import PEOPLE
from tests.support import services_for
from toolsets.infra.store.errors import RateLimited, StoreError, StoreUnavailable
from toolsets.infra.store.events import NewEvent
from toolsets.infra.store.postgres.backend import PostgresBackend
from toolsets.infra.store.postgres.database import PgDatabase
from toolsets.services import Services

SEOUL = dt.timezone(dt.timedelta(hours=9))
FIELDS = NewEvent(
    title="t",
    start=dt.datetime(2030, 1, 1, 10, tzinfo=SEOUL),
    end=dt.datetime(2030, 1, 1, 11, tzinfo=SEOUL),
    timezone="Asia/Seoul",
)


def replica(data_dir: Path, url: str) -> Services:
    """One replica's services: its own folder and connection pool, the shared database."""
    return services_for(data_dir, database_url=url)


def pg(services: Services) -> PgDatabase:
    """The connection pool of a replica's shared store."""
    assert isinstance(services.backend, PostgresBackend)
    return services.backend.pg


@pytest.mark.anyio
async def test_replicas_starting_together_migrate_once_and_a_newer_schema_is_refused(database_url: str) -> None:
    replicas = [PostgresBackend(database_url) for _ in range(4)]
    async with anyio.create_task_group() as tg:
        for backend in replicas:
            tg.start_soon(backend.migrate)
    versions = await replicas[0].versions()
    assert versions.pop("users") == 2 and set(versions.values()) == {1}  # users: + zones and languages
    await replicas[0].pg.ensure_schema("demo", ["CREATE TABLE demo_a (x INTEGER)"])
    again = PostgresBackend(database_url).pg
    await again.ensure_schema("demo", ["CREATE TABLE demo_a (x INTEGER)", "ALTER TABLE demo_a ADD COLUMN y TEXT"])
    async with again.transaction() as conn:
        columns = await (
            await conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'demo_a' "
                "AND table_schema = current_schema() ORDER BY ordinal_position"
            )
        ).fetchall()
    assert [row["column_name"] for row in columns] == ["x", "y"]
    older = PostgresBackend(database_url).pg
    with pytest.raises(StoreError, match="newer"):
        await older.ensure_schema("demo", ["CREATE TABLE demo_a (x INTEGER)"])
    for pool in (*(backend.pg for backend in replicas), again, older):
        await pool.close()


@pytest.mark.anyio
async def test_a_failure_inside_an_operation_leaves_nothing(tmp_path: Path, database_url: str) -> None:
    services = replica(tmp_path, database_url)
    await services.events.create("alice", FIELDS, [])
    with pytest.raises(RuntimeError):
        async with pg(services).transaction() as conn:
            await conn.execute(
                'INSERT INTO events(id, owner_id, title, start, "end", start_utc, end_utc, timezone, created_at, '
                "updated_at) VALUES('evt_half', 'alice', 't', 'a', 'b', 'a', 'b', 'UTC', 'x', 'x')"
            )
            raise RuntimeError("the process dies here")
    assert await services.events.get("evt_half") is None
    assert await services.backend.count_rows("events") == 1
    await services.aclose()


@pytest.mark.anyio
async def test_exactly_five_of_thirty_concurrent_sends_over_two_replicas(tmp_path: Path, database_url: str) -> None:
    a, b = replica(tmp_path / "a", database_url), replica(tmp_path / "b", database_url)
    await a.users.import_users(PEOPLE)
    accepted: list[str] = []
    refused: list[int] = []

    async def send(services: Services, n: int) -> None:
        try:
            message = await services.inbox.send(
                sender_id="alice", recipient_id="bob", text=f"m{n}", original=f"m{n}", composed_by="template"
            )
            accepted.append(message.id)
        except RateLimited as limited:
            refused.append(limited.retry_after_seconds)

    async with anyio.create_task_group() as tg:
        for n in range(30):
            tg.start_soon(send, a if n % 2 else b, n)
    assert len(accepted) == 5 and len(refused) == 25
    assert all(1 <= wait <= 61 for wait in refused)
    assert len(await b.inbox.messages("bob", unread_only=True, limit=50, mark_read=False)) == 5
    await a.aclose()
    await b.aclose()


@pytest.mark.anyio
async def test_raced_invitations_over_two_replicas_are_added_once(tmp_path: Path, database_url: str) -> None:
    a, b = replica(tmp_path / "a", database_url), replica(tmp_path / "b", database_url)
    event = await a.events.create("alice", FIELDS, [])
    results: list[tuple[list[str], list[str]]] = []

    async def invite(services: Services) -> None:
        results.append(await services.events.invite(event.id, ["bob", "carol"], "alice"))

    async with anyio.create_task_group() as tg:
        for n in range(10):
            tg.start_soon(invite, a if n % 2 else b)
    added = sorted(user for new, _ in results for user in new)
    assert added == ["bob", "carol"]  # each reported new exactly once, whichever replica won
    assert (await b.events.get(event.id)).invitee_ids() == ["bob", "carol"]  # type: ignore[union-attr]
    await a.aclose()
    await b.aclose()


@pytest.mark.anyio
async def test_an_unreachable_database_is_a_retryable_store_error(tmp_path: Path) -> None:
    services = replica(tmp_path, "postgresql://nobody@127.0.0.1:1/none")
    pg(services).acquire_timeout = 1.0
    with anyio.fail_after(20), pytest.raises(StoreUnavailable, match="cannot be reached"):
        await services.events.get("evt_x")
    await services.aclose()
