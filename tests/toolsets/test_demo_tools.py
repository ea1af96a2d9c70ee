"""Every member and guest tool once, through the MCP client in both eras, on the `--demo` data set."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from tests.support import MODES, server_for, services_for
from toolsets.assistant.demo import seed_demo


@pytest.mark.anyio
@MODES
async def test_every_tool_works_on_demo_data(tmp_path: Path, mode: str) -> None:
    services = services_for(tmp_path / "demo")
    assert await seed_demo(services, "me", "Asia/Seoul")
    assert not await seed_demo(services, "me", "Asia/Seoul")  # only an empty store is seeded
    async with Client(server_for(user="me", services=services), mode=mode) as me:
        calls = {
            "get_day_of_week": {"date": "2026-03-10"},
            "get_current_datetime": {},
            "get_user_profile": {"user_id": "minji"},
            "search_users": {"query": "truloop-team", "by": "group"},
            "get_user_eids": {"identifiers": ["minji", "junho@demo.truloop.app"]},
            "search_knowledge_base": {"query": "meeting rooms"},
            "search_memories": {"query": "team dinner food"},
            "save_memory": {"content": "Sora prefers mornings", "tags": ["people"]},
            "get_events": {},
            "send_message_to_user": {"recipient": "minji", "message": "See you at the design review"},
        }
        results = {name: await me.call_tool(name, args) for name, args in calls.items()}
        failed = {name: r.content for name, r in results.items() if r.is_error}
        assert not failed
        events = results["get_events"].structured_content["events"]  # type: ignore[index]
        dinner = next(e for e in events if e["title"] == "Team dinner")
        assert results["search_knowledge_base"].structured_content["hits"][0]["title"] == "Office Guide"  # type: ignore[index]
        invited = await me.call_tool("invite_to_event", {"event_id": dinner["id"], "invitees": ["sora"]})
        assert invited.structured_content["invited"] == ["sora"]  # type: ignore[index]
    async with Client(server_for(profile="guest", user="guest-hana", services=services), mode=mode) as hana:
        listed = await hana.call_tool("list_invited_events", {})
        assert [e["title"] for e in listed.structured_content["events"]] == ["Team dinner"]  # type: ignore[index]
        first = dinner["candidate_date_range"]["first"]
        saved = await hana.call_tool(
            "update_guest_availability", {"event_id": dinner["id"], "available_dates": [first]}
        )
        assert not saved.is_error, saved.content
    async with Client(server_for(user="minji", services=services), mode=mode) as minji:
        inbox = await minji.call_tool("get_inbox", {})
        text = inbox.structured_content["messages"][0]["text"]  # type: ignore[index]
        assert text == "Message from Alex Demo: See you at the design review"
