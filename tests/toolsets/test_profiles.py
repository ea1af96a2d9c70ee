"""tools/list per profile, in both protocol eras, and the quality of every published tool."""

from __future__ import annotations

import pytest
from mcp import Client

from tests.support import MODES, server_for

# DESIGN section 4: the fixed tool names of each toolset (filled as the toolsets land).
TOOLSET_TOOLS: dict[str, set[str]] = {
    "datetime": {"get_day_of_week", "get_current_datetime"},
    "user": {"get_user_profile", "search_users", "get_user_eids"},
    "knowledge": {"search_knowledge_base"},
    "memory": {"search_memories", "save_memory", "forget_memory"},
    "places": {"search_places"},
    "relay": {"send_message_to_user", "get_inbox"},
    "event": {"get_events", "create_event", "update_event", "invite_to_event", "delete_event", "get_calendar_events"},
    "interaction": {"confirm_interaction"},
    "permission": {"get_permission_status"},
    "guest": {"update_guest_availability", "get_event_details", "list_invited_events"},
    "schedule": {"schedule_tool_run", "list_schedules", "cancel_schedule"},
    "exposure": {"search_tools"},  # list_toolsets and load_toolset are published with --exposure progressive
}

PROFILE_TOOLSETS = {
    "member": [
        "datetime",
        "user",
        "knowledge",
        "memory",
        "places",
        "relay",
        "event",
        "interaction",
        "permission",
        "schedule",
        "exposure",
    ],
    "notification-safe": ["datetime", "knowledge", "interaction", "permission", "places", "memory"],
    "guest": ["guest", "exposure"],
}


def expected(profile: str) -> set[str]:
    return set().union(*(TOOLSET_TOOLS[name] for name in PROFILE_TOOLSETS[profile]))


def test_notification_safe_never_has_event_user_or_relay_tools() -> None:
    forbidden = TOOLSET_TOOLS["event"] | TOOLSET_TOOLS["user"] | TOOLSET_TOOLS["relay"] | TOOLSET_TOOLS["exposure"]
    assert not expected("notification-safe") & forbidden


@pytest.mark.anyio
@MODES
@pytest.mark.parametrize("profile", list(PROFILE_TOOLSETS))
async def test_tools_list_per_profile(mode: str, profile: str) -> None:
    async with Client(server_for(profile), mode=mode) as client:
        assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
        tools = (await client.list_tools()).tools
        assert {tool.name for tool in tools} == expected(profile)


@pytest.mark.anyio
@MODES
async def test_every_tool_is_described_typed_and_annotated(mode: str) -> None:
    async with Client(server_for("member"), mode=mode) as client:
        tools = (await client.list_tools()).tools
    assert tools
    for tool in tools:
        assert tool.description and len(tool.description) > 20, tool.name
        assert tool.input_schema["type"] == "object"
        for name, prop in tool.input_schema.get("properties", {}).items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
        assert tool.output_schema and tool.output_schema["type"] == "object", tool.name
        ann = tool.annotations
        assert ann is not None
        for hint in ("read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint"):
            assert isinstance(getattr(ann, hint), bool), f"{tool.name} lacks {hint}"
        assert not (ann.read_only_hint and ann.destructive_hint)


@pytest.mark.anyio
@MODES
async def test_datetime_annotations_are_truthful(mode: str) -> None:
    async with Client(server_for("member"), mode=mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    day = tools["get_day_of_week"].annotations
    assert day and day.read_only_hint and day.idempotent_hint and not day.open_world_hint
    now = tools["get_current_datetime"].annotations
    assert now and now.read_only_hint and not now.idempotent_hint  # the clock moves
