"""Two real server processes on one PostgreSQL (--database-url) and one Redis: what each tool writes
through replica A is read through replica B (users, events, guest availability, memories, inbox, and
the knowledge index built by A from its docs folder, found by B, which has none)."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import mcp_client, payload, replica_env, spawn_http_server, token

NEXT_YEAR = dt.date.today().year + 1
EVENT = {
    "title": "Team dinner",
    "start": f"{NEXT_YEAR}-03-09T19:00:00+09:00",
    "end": f"{NEXT_YEAR}-03-13T21:00:00+09:00",
    "availability_deadline": f"{NEXT_YEAR}-03-01T00:00:00+09:00",
}


@pytest.fixture
def replicas(redis_url: str, redis_prefix: str, database_url: str, tmp_path: Path) -> Iterator[tuple[str, str]]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "travel.md").write_text("# Travel policy\n\n## KTX 예약\n\n출장 KTX는 회사 카드로 예약합니다.\n")
    env = replica_env(redis_url, redis_prefix, database_url)
    with contextlib.ExitStack() as stack:
        a = stack.enter_context(spawn_http_server("--data-dir", str(tmp_path / "a"), "--docs", str(docs), env=env))
        b = stack.enter_context(spawn_http_server("--data-dir", str(tmp_path / "b"), env=env))
        yield a, b


async def call(base: str, bearer: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async with mcp_client(base, bearer) as client:
        result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return payload(result)


@pytest.mark.anyio
async def test_every_write_through_a_is_read_through_b(replicas: tuple[str, str]) -> None:
    a, b = replicas
    alice = token(sub="alice", preferred_username="alice", name="Alice Kim", email="alice@example.com")
    bob = token(sub="bob", preferred_username="bobby", name="Bob Lee", email="bob@example.com")
    gus = token(sub="gus", role="guest", preferred_username="gus", name="Gus Guest")

    # users: bob and gus enter the directory through B; alice finds them through A
    await call(b, bob, "get_user_profile", {})
    await call(b, gus, "list_invited_events", {})
    found = await call(a, alice, "search_users", {"query": "bobby", "by": "username"})
    assert [user["id"] for user in found["users"]] == ["bob"]

    # events and guest availability
    event = await call(a, alice, "create_event", {**EVENT, "invitees": ["bobby", "gus"]})
    seen_by_bob = await call(b, bob, "get_events", {"start": f"{NEXT_YEAR}-03-01T00:00:00+09:00"})
    assert [e["id"] for e in seen_by_bob["events"]] == [event["id"]]
    days = [f"{NEXT_YEAR}-03-10", f"{NEXT_YEAR}-03-11"]
    await call(b, gus, "update_guest_availability", {"event_id": event["id"], "available_dates": days})
    owner_view = await call(a, alice, "get_events", {"start": f"{NEXT_YEAR}-03-01T00:00:00+09:00"})
    invitees = {i["id"]: i for i in owner_view["events"][0]["invitees"]}
    assert invitees["gus"]["available_dates"] == days

    # memories
    saved = await call(a, alice, "save_memory", {"content": "Bob prefers window seats on the KTX", "tags": ["travel"]})
    hits = await call(b, alice, "search_memories", {"query": "window seat"})
    assert [hit["record"]["id"] for hit in hits["memories"]] == [saved["id"]]

    # inbox
    await call(a, alice, "send_message_to_user", {"recipient": "bobby", "message": "Dinner at 7?"})
    inbox = await call(b, bob, "get_inbox", {})
    assert [m["sender_id"] for m in inbox["messages"]] == ["alice"]

    # knowledge: A indexes its docs folder; B has no folder and serves the shared index
    on_a = await call(a, alice, "search_knowledge_base", {"query": "KTX 예약"})
    on_b = await call(b, alice, "search_knowledge_base", {"query": "KTX 예약"})
    assert [hit["source"] for hit in on_a["hits"]] == ["travel.md"]
    assert [hit["source"] for hit in on_b["hits"]] == ["travel.md"]
