"""Two replicas (two deployments in one process, each with its own server and its own connections) on one
store, racing: delete_event through one against update_event, invite_to_event or update_guest_availability
through the other, 25 rounds each, on PostgreSQL and on one SQLite file. Every answer is `ok` or
`not_found` (an event deleted between a tool's check and its write is not an internal error), and no
invitation is left whose event is gone."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests import support
from tests.people import PEOPLE
from tests.support import error_of, gates_off, server_for, services_for

ROUNDS = 25
NEXT_YEAR = dt.date.today().year + 1
EVENT = {
    "title": "Race",
    "start": f"{NEXT_YEAR}-03-09T19:00:00+09:00",
    "end": f"{NEXT_YEAR}-03-13T21:00:00+09:00",
    "availability_deadline": f"{NEXT_YEAR}-03-01T00:00:00+09:00",
}
ORPHANS = "SELECT count(*) FROM invitations i WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = i.event_id)"


def outcome(result: Any) -> str:
    return error_of(result)["code"] if result.is_error else "ok"


async def orphan_invitations(store_backend: str, data_dir: Path) -> int:
    if store_backend == "sqlite":
        with sqlite3.connect(data_dir / "truloop.sqlite3") as conn:
            return int(conn.execute(ORPHANS).fetchone()[0])
    import psycopg

    assert support.STORE_URL is not None
    async with await psycopg.AsyncConnection.connect(support.STORE_URL) as conn:
        row = await (await conn.execute(ORPHANS)).fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.anyio
async def test_deleting_an_event_while_another_replica_writes_to_it_answers_ok_or_not_found(
    store_backend: str, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    seeding = services_for(data_dir)
    await seeding.users.import_users(PEOPLE)
    await seeding.aclose()
    gates = gates_off(tmp_path)
    replica_a = server_for(user="alice", data_dir=data_dir, gates=gates)
    replica_b = server_for(user="alice", data_dir=data_dir, gates=gates)
    guest_b = server_for(profile="guest", user="gus", data_dir=data_dir, gates=gates)
    answers: dict[str, list[str]] = {"update_event": [], "invite_to_event": [], "update_guest_availability": []}
    deletes: list[str] = []
    with anyio.fail_after(180):
        async with Client(replica_a) as a, Client(replica_b) as b, Client(guest_b) as gus:
            racers = {
                "update_event": (b, lambda event: {"event_id": event["id"], "title": "Renamed", "location": "Seoul"}),
                "invite_to_event": (b, lambda event: {"event_id": event["id"], "invitees": ["carol", "bob"]}),
                "update_guest_availability": (
                    gus,
                    lambda event: {"event_id": event["id"], "available_dates": [f"{NEXT_YEAR}-03-10"]},
                ),
            }
            for tool, (client, arguments) in racers.items():
                for _ in range(ROUNDS):
                    created = await a.call_tool("create_event", {**EVENT, "invitees": ["gus"]})
                    assert not created.is_error, created.content
                    event = created.structured_content
                    assert event is not None

                    async def delete(event: dict[str, Any] = event) -> None:
                        deletes.append(outcome(await a.call_tool("delete_event", {"event_id": event["id"]})))

                    async def write(
                        tool: str = tool, client: Client = client, arguments: Any = arguments, event: Any = event
                    ) -> None:
                        answers[tool].append(outcome(await client.call_tool(tool, arguments(event))))

                    async with anyio.create_task_group() as group:
                        group.start_soon(delete)
                        group.start_soon(write)
        left = await a_events(data_dir)
        orphans = await orphan_invitations(store_backend, data_dir)
    unexpected = {tool: sorted(set(found) - {"ok", "not_found"}) for tool, found in answers.items()}
    assert unexpected == {tool: [] for tool in answers}, (store_backend, answers)
    assert all(len(found) == ROUNDS for found in answers.values())
    assert deletes == ["ok"] * ROUNDS * len(answers)
    assert left == [] and orphans == 0


async def a_events(data_dir: Path) -> list[str]:
    """Ids of the events still stored (every one was deleted)."""
    services = services_for(data_dir)
    try:
        found = await services.events.list_for(
            "alice", dt.datetime(NEXT_YEAR, 1, 1, tzinfo=dt.UTC), dt.datetime(NEXT_YEAR, 12, 31, tzinfo=dt.UTC)
        )
    finally:
        await services.aclose()
    return [event.id for event in found]
