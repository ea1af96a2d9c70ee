"""Prompts and completion over the real MCP front, in both protocol eras: every prompt gets with good arguments and
refuses bad ones with -32602 and a clear message; completion offers people (Korean and romanised), event ids and
document paths, scoped to the caller, at most 100 values with hasMore."""

from __future__ import annotations

from pathlib import Path

import mcp.types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.host_views_data import Store, host_store
from tests.support import MODES, server_for
from toolsets.infra.store.users import UserRecord

PROMPTS = {"plan_meeting", "summarise_inbox", "find_in_docs", "remember_this", "prepare_for_event"}


@pytest.fixture
async def store(tmp_path: Path) -> Store:
    return await host_store(tmp_path)


def valid(store: Store) -> dict[str, dict[str, str]]:
    return {
        "plan_meeting": {"people": "김민지, bob", "topic": "Roadmap", "duration_minutes": "45",
                         "earliest_date": "2026-03-09", "latest_date": "2026-03-13"},
        "summarise_inbox": {"unread_only": "false", "language": "ko"},
        "find_in_docs": {"question": "노트북 설정 laptop setup"},
        "remember_this": {"content": "Minji prefers window seats", "tags": "travel, minji"},
        "prepare_for_event": {"event_id": store.alice_event},
    }  # fmt: skip


BAD = [
    ("plan_meeting", {"topic": "Roadmap"}, "needs people"),
    ("plan_meeting", {"people": " , ", "topic": "x"}, "at least one person"),
    ("plan_meeting", {"people": "bob", "topic": "x", "duration_minutes": "5"}, "15 to 480"),
    ("plan_meeting", {"people": "bob", "topic": "x", "earliest_date": "2026-02-30"}, "YYYY-MM-DD"),
    ("plan_meeting", {"people": "bob", "topic": "x", "earliest_date": "2026-03-10", "latest_date": "2026-03-01"},
     "before earliest_date"),
    ("plan_meeting", {"people": "bob", "topic": "x", "room": "A"}, "no argument room"),
    ("summarise_inbox", {"language": "fr"}, "ko or en"),
    ("summarise_inbox", {"unread_only": "maybe"}, "true or false"),
    ("find_in_docs", {}, "needs question"),
    ("remember_this", {"content": "x" * 2001}, "too long"),
    ("prepare_for_event", {"event_id": "evt_nope"}, "No event 'evt_nope'"),
    ("no_such_prompt", {}, "Unknown prompt"),
]  # fmt: skip


@pytest.mark.anyio
@MODES
async def test_every_prompt_gets_with_good_arguments(store: Store, mode: str) -> None:
    async with Client(server_for("member", services=store.services, user="alice"), mode=mode) as client:
        listed = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}
        got = {name: await client.get_prompt(name, arguments) for name, arguments in valid(store).items()}
    assert set(listed) == PROMPTS
    for prompt in listed.values():
        assert prompt.title and " / " in prompt.title and " / " in (prompt.description or "")  # English / 한국어
        assert any("\uac00" <= char <= "\ud7a3" for char in prompt.description or "")
        assert all(argument.description for argument in prompt.arguments or [])
    assert [a.name for a in listed["plan_meeting"].arguments or [] if a.required] == ["people", "topic"]
    text = {name: result.messages[0].content.text for name, result in got.items()}  # type: ignore[union-attr]
    assert "search_users" in text["plan_meeting"] and "create_event" in text["plan_meeting"]
    assert "invite_to_event" in text["plan_meeting"] and "김민지, bob" in text["plan_meeting"]
    assert "truloop://inbox" in text["summarise_inbox"] and "Korean" in text["summarise_inbox"]
    assert "search_knowledge_base" in text["find_in_docs"] and "truloop://docs/" in text["find_in_docs"]
    assert "save_memory" in text["remember_this"] and "travel, minji" in text["remember_this"]
    assert f"truloop://events/{store.alice_event}" in text["prepare_for_event"]


@pytest.mark.anyio
@MODES
async def test_bad_or_missing_arguments_are_invalid_params_with_a_clear_message(store: Store, mode: str) -> None:
    async with Client(server_for("member", services=store.services, user="alice"), mode=mode) as client:
        for name, arguments, says in BAD:
            with pytest.raises(MCPError) as caught:
                await client.get_prompt(name, arguments)
            assert caught.value.error.code == types.INVALID_PARAMS, (name, arguments)
            assert says in caught.value.error.message, caught.value.error.message
        with pytest.raises(MCPError) as hidden:  # bob's event: alice cannot prepare for it
            await client.get_prompt("prepare_for_event", {"event_id": store.bob_event})
    assert hidden.value.error.code == types.INVALID_PARAMS


@pytest.mark.anyio
@MODES
async def test_a_guest_gets_only_the_prompts_their_tools_serve(store: Store, mode: str) -> None:
    async with Client(server_for("guest", services=store.services, user="gus"), mode=mode) as client:
        names = {prompt.name for prompt in (await client.list_prompts()).prompts}
        guest = await client.get_prompt("prepare_for_event", {"event_id": store.gus_event})
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("plan_meeting", {"people": "bob", "topic": "x"})
    assert names == {"prepare_for_event"}
    assert "get_event_details" in guest.messages[0].content.text  # type: ignore[union-attr]
    assert caught.value.error.code == types.INVALID_PARAMS


async def complete(client: Client, ref: types.PromptReference | types.ResourceTemplateReference, name: str,
                   value: str) -> types.Completion:  # fmt: skip
    return (await client.complete(ref, {"name": name, "value": value})).completion


@pytest.mark.anyio
@MODES
async def test_completion_of_people_events_and_documents(store: Store, mode: str) -> None:
    meeting = types.PromptReference(type="ref/prompt", name="plan_meeting")
    async with Client(server_for("member", services=store.services, user="alice"), mode=mode) as client:
        minji = await complete(client, meeting, "people", "민")
        listed = await complete(client, meeting, "people", "bob, 민지")
        latin = await complete(client, meeting, "people", "minji")
        nobody = await complete(client, meeting, "people", "zzz")
        events = await complete(client, types.PromptReference(type="ref/prompt", name="prepare_for_event"),
                                "event_id", "")  # fmt: skip
        by_title = await complete(client, types.ResourceTemplateReference(type="ref/resource",
                                  uri="truloop://events/{event_id}"), "event_id", "design")  # fmt: skip
        docs = await complete(client, types.ResourceTemplateReference(type="ref/resource",
                              uri="truloop://docs/{path}"), "path", "pol")  # fmt: skip
        language = await complete(client, types.PromptReference(type="ref/prompt", name="summarise_inbox"),
                                  "language", "")  # fmt: skip
        unknown = await complete(client, meeting, "topic", "Ro")
    assert minji.values == ["김민지", "Kim Minji"] and not minji.has_more
    assert listed.values == ["bob, 김민지", "bob, Kim Minji"]
    assert "김민지" in latin.values and "Kim Minji" in latin.values
    assert nobody.values == []
    assert set(events.values) == {store.alice_event}  # alice's own; never bob's
    assert by_title.values == [store.alice_event]
    assert docs.values == ["policies/expenses.md"]
    assert language.values == ["ko", "en"]
    assert unknown.values == []


@pytest.mark.anyio
@MODES
async def test_completion_is_scoped_to_the_caller(store: Store, mode: str) -> None:
    event = types.ResourceTemplateReference(type="ref/resource", uri="truloop://events/{event_id}")
    doc = types.ResourceTemplateReference(type="ref/resource", uri="truloop://docs/{path}")
    async with Client(server_for("guest", services=store.services, user="gus"), mode=mode) as client:
        events = await complete(client, event, "event_id", "")
        docs = await complete(client, doc, "path", "")
    assert set(events.values) == {store.alice_event, store.gus_event}  # the guest's invitations only
    assert docs.values == []  # a guest has no knowledge tool, so no documents


@pytest.mark.anyio
@MODES
async def test_completion_stops_at_100_values_and_says_there_are_more(store: Store, mode: str) -> None:
    await store.services.users.import_users(
        [UserRecord(id=f"m{i:03}", username=f"minsu{i:03}", display_name=f"김민수 {i:03}") for i in range(120)]
    )
    meeting = types.PromptReference(type="ref/prompt", name="plan_meeting")
    async with Client(server_for("member", services=store.services, user="alice"), mode=mode) as client:
        many = await complete(client, meeting, "people", "민수")
    assert 0 < len(many.values) <= 100 and many.has_more is True
