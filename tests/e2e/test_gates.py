"""Gates: requires, same_value and first, refused then allowed, in both eras; the gates file;
2026-07-28 conversations shared by two replicas through Redis."""

from __future__ import annotations

import contextlib
import secrets
import subprocess
from pathlib import Path

import pytest
from mcp import Client

from tests.people import directory
from tests.support import MODES, SECRET, TRULOOP, child_env, error_of, mcp_client, server_for, spawn_http_server, token
from toolsets.infra.store.events import NewEvent

NEXT = "2031-03-10T10:00:00+09:00"


async def an_event(services: object) -> str:
    import datetime as dt

    start = dt.datetime.fromisoformat(NEXT)
    new = NewEvent(title="Stand-up", start=start, end=start + dt.timedelta(hours=1), timezone="Asia/Seoul")
    record = await services.events.create("alice", new, [])  # type: ignore[attr-defined]
    return record.id


def gates_file(folder: Path, text: str) -> Path:
    path = folder / "gates.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.anyio
@MODES
async def test_same_value_stops_an_id_the_model_never_saw_and_changes_nothing(tmp_path: Path, mode: str) -> None:
    services = await directory(tmp_path)
    event_id = await an_event(services)
    async with Client(server_for(user="alice", services=services), mode=mode) as client:
        refused = error_of(await client.call_tool("update_event", {"event_id": event_id, "title": "Renamed"}))
        assert refused["code"] == "precondition" and refused["retryable"] is True
        assert event_id in refused["reason"] and "get_events" in refused["reason"]
        assert (await services.events.get(event_id)).title == "Stand-up"  # the tool did not run
        listed = await client.call_tool("get_events", {"start": "2031-03-01T00:00:00+09:00"})
        assert event_id in str(listed.structured_content)
        invented = error_of(await client.call_tool("update_event", {"event_id": "evt_invented", "title": "x"}))
        assert invented["code"] == "precondition"
        done = await client.call_tool("update_event", {"event_id": event_id, "title": "Renamed"})
        assert not done.is_error, done.content
    assert (await services.events.get(event_id)).title == "Renamed"


@pytest.mark.anyio
@MODES
async def test_requires_and_first_from_a_gates_file(tmp_path: Path, mode: str) -> None:
    services = await directory(tmp_path)
    path = gates_file(
        tmp_path,
        'builtin = false\n\n[[gate]]\nkind = "first"\ntool = "get_current_datetime"\n\n'
        '[[gate]]\nkind = "requires"\ntool = "save_memory"\nafter = ["search_memories"]\n',
    )
    async with Client(server_for(user="alice", services=services, gates=path), mode=mode) as client:
        first = error_of(await client.call_tool("get_day_of_week", {"date": "2026-03-10"}))
        assert first["code"] == "precondition" and "get_current_datetime" in first["reason"]
        assert not (await client.call_tool("get_current_datetime", {})).is_error
        assert not (await client.call_tool("get_day_of_week", {"date": "2026-03-10"})).is_error
        early = error_of(await client.call_tool("save_memory", {"content": "likes tea"}))
        assert early["code"] == "precondition" and "search_memories" in early["reason"]
        assert await services.memories.search("alice", "tea", 5) == []
        assert not (await client.call_tool("search_memories", {"query": "tea"})).is_error
        assert not (await client.call_tool("save_memory", {"content": "likes tea"})).is_error
    assert len(await services.memories.search("alice", "tea", 5)) == 1


@pytest.mark.anyio
async def test_progressive_handshake_hides_a_gated_tool_until_its_gate_opens(tmp_path: Path) -> None:
    services = await directory(tmp_path)
    changed: list[str] = []

    async def on_message(message: object) -> None:
        method = getattr(getattr(message, "root", message), "method", None)
        if method:
            changed.append(method)

    server = server_for(user="alice", services=services, exposure="progressive")
    async with Client(server, mode="legacy", message_handler=on_message) as c:
        await c.call_tool("load_toolset", {"name": "event"})
        before = {tool.name for tool in (await c.list_tools(cache_mode="refresh")).tools}
        assert "update_event" not in before and "get_events" in before
        await c.call_tool("get_events", {})
        after = {tool.name for tool in (await c.list_tools(cache_mode="refresh")).tools}
    assert {"update_event", "delete_event", "invite_to_event"} <= after
    assert changed.count("notifications/tools/list_changed") == 2  # the load, then the gate opening
    async with Client(server_for(user="alice", services=services), mode="legacy") as full:
        assert "update_event" in {tool.name for tool in (await full.list_tools()).tools}  # full: stable list


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            '[[gate]]\nkind = "requires"\ntool = "fly_to_moon"\nafter = ["get_events"]\n',
            "3: unknown tool 'fly_to_moon'",
        ),
        ('\n[[gate]]\nkind = "sometimes"\ntool = "get_events"\n', "2:"),
        (
            '[[gate]]\nkind = "requires"\ntool = "get_events"\nafter = ["create_event"]\n\n'
            '[[gate]]\nkind = "requires"\ntool = "create_event"\nafter = ["get_events"]\n',
            "a cycle",
        ),
        ('[[gate]]\nkind = "same_value"\ntool = "update_event"\nargument = "colour"\nafter = ["get_events"]\n', "4:"),
        ("this is = not toml [", "not valid TOML"),
    ],
)
def test_a_bad_gates_file_stops_the_server_with_one_line(tmp_path: Path, text: str, problem: str) -> None:
    path = gates_file(tmp_path, text)
    proc = subprocess.run(
        [TRULOOP, "--gates", str(path), "--data-dir", str(tmp_path / "data")],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30, env=child_env(),
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert str(path) in lines[0] and problem in lines[0], lines[0]


@pytest.mark.anyio
async def test_2026_conversations_are_shared_by_replicas(redis_url: str, redis_prefix: str, tmp_path: Path) -> None:
    path = gates_file(
        tmp_path,
        'builtin = false\n[[gate]]\nkind = "requires"\ntool = "get_day_of_week"\nafter = ["get_current_datetime"]\n',
    )
    env = child_env(TRULOOP_JWT_SECRET=SECRET, REDIS_URL=redis_url, TRULOOP_REDIS_PREFIX=redis_prefix)
    user = token("user-" + secrets.token_hex(4))
    with contextlib.ExitStack() as stack:
        a = stack.enter_context(spawn_http_server("--gates", str(path), "--data-dir", str(tmp_path / "a"), env=env))
        b = stack.enter_context(spawn_http_server("--gates", str(path), "--data-dir", str(tmp_path / "b"), env=env))
        async with mcp_client(a, user, "2026-07-28") as on_a, mcp_client(b, user, "2026-07-28") as on_b:
            refused = error_of(await on_b.call_tool("get_day_of_week", {"date": "2026-03-10"}))
            assert refused["code"] == "precondition"
            assert not (await on_a.call_tool("get_current_datetime", {})).is_error
            allowed = await on_b.call_tool("get_day_of_week", {"date": "2026-03-10"})
            assert not allowed.is_error and allowed.structured_content["day_of_week"] == "Tuesday"  # type: ignore[index]


def test_the_built_in_gates_fit_the_tools() -> None:
    from toolsets.pipeline.gates import BUILTIN_GATES, load_gates
    from toolsets.profiles import assistant_toolsets, tool_arguments

    assert load_gates(None, tool_arguments(assistant_toolsets().values())).gates == BUILTIN_GATES
