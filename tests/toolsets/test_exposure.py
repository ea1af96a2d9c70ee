"""Progressive tool exposure: loader tools, per-session lists on the handshake era, a stable
list on 2026-07-28, and tool search."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.people import directory
from tests.support import MODES, SECRET, child_env, error_of, mcp_client, server_for, spawn_http_server, token

START_SET = {"get_day_of_week", "get_current_datetime", "list_toolsets", "load_toolset", "search_tools"}


class Notifications:
    def __init__(self) -> None:
        self.methods: list[str] = []

    async def __call__(self, message: Any) -> None:
        root = getattr(message, "root", message)
        method = getattr(root, "method", None)
        if method:
            self.methods.append(method)

    @property
    def list_changed(self) -> int:
        return self.methods.count("notifications/tools/list_changed")


async def names(client: Client) -> set[str]:
    return {tool.name for tool in (await client.list_tools(cache_mode="refresh")).tools}


@pytest.mark.anyio
async def test_handshake_session_starts_small_and_grows_as_it_loads(tmp_path: Path) -> None:
    services = await directory(tmp_path)
    seen = Notifications()
    server = server_for(user="alice", services=services, exposure="progressive")
    async with Client(server, mode="legacy", message_handler=seen) as client:
        caps = client.session.server_capabilities  # type: ignore[union-attr]
        assert caps is not None and caps.tools is not None and caps.tools.list_changed is True
        assert await names(client) == START_SET
        early = await client.call_tool("get_events", {})
        refusal = error_of(early)
        assert refusal["code"] == "precondition" and refusal["retryable"] is True
        assert "load_toolset" in refusal["reason"] and "'event'" in refusal["reason"]
        listed = (await client.call_tool("list_toolsets", {})).structured_content
        summary = {entry["name"]: entry for entry in listed["toolsets"]}  # type: ignore[index]
        assert "event" in summary and "get_events" in summary["event"]["tools"] and not summary["event"]["loaded"]
        assert "datetime" not in summary and "exposure" not in summary  # those are always there
        loaded = await client.call_tool("load_toolset", {"name": "event"})
        assert not loaded.is_error
        assert seen.list_changed == 1
        grown = await names(client)
        assert {"get_events", "create_event", "get_calendar_events"} <= grown
        assert "update_event" not in grown  # still behind its read-before-write gate
        assert not grown & {"search_memories", "send_message_to_user"}
        assert not (await client.call_tool("get_events", {})).is_error
        assert seen.list_changed == 2 and "update_event" in await names(client)  # the gate opened
        again = await client.call_tool("load_toolset", {"name": "event"})
        assert not again.is_error and seen.list_changed == 2  # nothing changed, nothing sent
        unknown = error_of(await client.call_tool("load_toolset", {"name": "nope"}))
        assert unknown["code"] == "not_found" and "memory" in unknown["reason"]


@pytest.mark.anyio
async def test_on_2026_07_28_the_list_is_stable_and_load_returns_schemas(tmp_path: Path) -> None:
    services = await directory(tmp_path)
    seen = Notifications()
    server = server_for(user="alice", services=services, exposure="progressive")
    async with Client(server, mode="auto", message_handler=seen) as client:
        assert client.protocol_version == "2026-07-28"
        before = (await client.list_tools(cache_mode="refresh")).tools
        assert {"get_events", "update_event", "list_toolsets", "load_toolset"} <= {tool.name for tool in before}
        loaded = (await client.call_tool("load_toolset", {"name": "memory"})).structured_content
        schemas = {tool["name"]: tool for tool in loaded["tools"]}  # type: ignore[index]
        assert set(schemas) == {"save_memory", "search_memories", "forget_memory"}
        assert schemas["save_memory"]["input_schema"]["properties"]["content"]["type"] == "string"
        after = (await client.list_tools(cache_mode="refresh")).tools
        assert [t.model_dump() for t in after] == [t.model_dump() for t in before]
        assert not (await client.call_tool("search_memories", {"query": "anything"})).is_error
    assert seen.list_changed == 0


@pytest.mark.anyio
@MODES
async def test_full_exposure_publishes_search_tools_but_not_the_loaders(tmp_path: Path, mode: str) -> None:
    async with Client(server_for(user="alice", services=await directory(tmp_path)), mode=mode) as client:
        listed = await names(client)
    assert "search_tools" in listed and not listed & {"list_toolsets", "load_toolset"}


@pytest.fixture
def progressive_server(tmp_path: Path) -> Any:
    env = child_env(TRULOOP_JWT_SECRET=SECRET, TRULOOP_EXPOSURE="progressive")
    with spawn_http_server("--data-dir", str(tmp_path / "data"), env=env) as base:
        yield base


@pytest.mark.anyio
async def test_over_http_only_the_loading_session_is_told(progressive_server: str) -> None:
    loading, other = Notifications(), Notifications()
    async with contextlib.AsyncExitStack() as stack:
        a = await stack.enter_async_context(
            mcp_client(progressive_server, token("alice"), "legacy", message_handler=loading)
        )
        b = await stack.enter_async_context(
            mcp_client(progressive_server, token("alice"), "legacy", message_handler=other)
        )
        assert await names(a) == START_SET == await names(b)
        assert not (await a.call_tool("load_toolset", {"name": "places"})).is_error
        assert "search_places" in await names(a)
        assert await names(b) == START_SET
        await b.call_tool("get_day_of_week", {"date": "2026-03-10"})  # B's stream carried nothing meanwhile
    assert loading.list_changed == 1 and other.list_changed == 0


SEARCHES = [
    ("일정 삭제해줘", "delete_event"),
    ("약속 잡아줘", "create_event"),
    ("근처 맛집 찾아줘", "search_places"),
    ("기억해줘", "save_memory"),
    ("내 기억 지워줘", "forget_memory"),
    ("초대하기", "invite_to_event"),
    ("휴대폰 캘린더 확인", "get_calendar_events"),
    ("위치 권한 확인", "get_permission_status"),
    ("노션 문서에서 찾아줘", "search_knowledge_base"),
    ("받은 메시지 확인", "get_inbox"),
    ("find a restaurant nearby", "search_places"),
    ("what day of the week is March 10", "get_day_of_week"),
    ("send a message to Bob", "send_message_to_user"),
    ("cancel my event", "delete_event"),
    ("what time is it now", "get_current_datetime"),
    ("search the knowledge base", "search_knowledge_base"),
]


@pytest.mark.anyio
@MODES
async def test_search_tools_ranks_the_right_tool_first(tmp_path: Path, mode: str) -> None:
    async with Client(server_for(user="alice", services=await directory(tmp_path)), mode=mode) as client:
        firsts = {}
        for query, _ in SEARCHES:
            found = (await client.call_tool("search_tools", {"query": query, "limit": 3})).structured_content
            firsts[query] = found["matches"][0]["name"] if found["matches"] else None  # type: ignore[index]
            assert all("input_schema" in match for match in found["matches"])  # type: ignore[index]
    assert firsts == dict(SEARCHES)
