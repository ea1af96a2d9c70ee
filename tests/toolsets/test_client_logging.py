"""`notifications/message`: per-session `logging/setLevel` (handshake era), the per-request opt-in (2026-07-28),
the level of each kind of event, and masking of what a message says."""

from __future__ import annotations

from pathlib import Path

import mcp.types as types
import pytest
from mcp import Client

from tests.host_views_data import Store, host_store
from tests.support import server_for

# logging/setLevel is the handshake era's (the SDK client warns that 2026-07-28 deprecated it)
pytestmark = pytest.mark.filterwarnings("ignore:The logging capability is deprecated")

DATE_ERROR = ("get_day_of_week", {"date": "2026-02-30"})  # a validation refusal: warning
ADDRESS = "nobody.here@example.com"


@pytest.fixture
async def store(tmp_path: Path) -> Store:
    return await host_store(tmp_path)


class Logs:
    def __init__(self) -> None:
        self.messages: list[types.LoggingMessageNotificationParams] = []

    async def __call__(self, params: types.LoggingMessageNotificationParams) -> None:
        self.messages.append(params)

    def events(self) -> list[tuple[str, str]]:
        return [(m.level, m.data["event"]) for m in self.messages]


@pytest.mark.anyio
async def test_set_level_then_a_failing_call_is_a_log_message_for_that_session_only(store: Store) -> None:
    server = server_for("member", services=store.services, user="alice")
    logs, quiet = Logs(), Logs()
    async with (
        Client(server, mode="legacy", logging_callback=logs) as client,
        Client(server, mode="legacy", logging_callback=quiet) as other,
    ):
        await client.call_tool(*DATE_ERROR)  # before setLevel: below the default (error), nothing
        assert logs.messages == []
        await client.set_logging_level("warning")
        await client.call_tool(*DATE_ERROR)
        await client.call_tool("send_message_to_user", {"recipient": ADDRESS, "message": "hi"})
        await client.call_tool("get_day_of_week", {"date": "2026-03-10"})  # debug: below warning
        await other.call_tool(*DATE_ERROR)  # the other session set no level
        await client.set_logging_level("debug")
        await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
    assert logs.events() == [("warning", "tool_refused"), ("warning", "tool_refused"), ("debug", "tool_answered")]
    first, relay = logs.messages[0], logs.messages[1]
    assert first.logger == "truloop" and first.data["tool"] == "get_day_of_week" and first.data["code"] == "validation"
    assert "2026-02-30" in first.data["message"]
    assert relay.data["code"] == "not_found" and ADDRESS not in str(relay.data) and "[email]" in relay.data["message"]
    assert quiet.messages == []


@pytest.mark.anyio
async def test_a_2026_request_hears_what_its_meta_asks_for(store: Store) -> None:
    server = server_for("member", services=store.services, user="alice")
    asked, silent = Logs(), Logs()
    async with Client(server, log_level="warning", logging_callback=asked) as client:
        await client.call_tool(*DATE_ERROR)
        await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
    async with Client(server, logging_callback=silent) as client:
        await client.call_tool(*DATE_ERROR)
    assert asked.events() == [("warning", "tool_refused")]
    assert silent.messages == []


@pytest.mark.anyio
async def test_gate_refusals_deferred_waits_and_plugin_reloads_at_their_levels(store: Store) -> None:
    server = server_for("member", services=store.services, user="alice", exposure="progressive")
    logs = Logs()
    async with Client(server, mode="legacy", logging_callback=logs) as client:
        await client.set_logging_level("info")
        await client.call_tool("get_events", {})  # not loaded yet: the exposure gate refuses
        await client.call_tool("load_toolset", {"name": "permission"})
        asked = {"permission": "calendar.read", "notification_message": "Checking calendar access"}
        await client.call_tool("get_permission_status", asked)  # runs on the user's side
        await server.announce_tools_changed()
        await client.list_tools()
    events = logs.events()
    assert events[0] == ("warning", "gate_refused")
    assert ("info", "deferred_wait") in events
    assert events[-1] == ("info", "tools_changed")
    assert all(level != "debug" for level, _ in events)
