"""event and guest toolsets through the MCP client, both eras: lifecycle, refusals and privacy."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.people import directory
from tests.support import MODES, answering, error_of, gates_off, server_for
from toolsets.infra.store.events import EventChanges

pytestmark = pytest.mark.usefixtures("store_backend")  # every test on SQLite, then on PostgreSQL

NEXT_YEAR = dt.date.today().year + 1
START = f"{NEXT_YEAR}-03-09T19:00:00+09:00"
END = f"{NEXT_YEAR}-03-13T21:00:00+09:00"
DEADLINE = f"{NEXT_YEAR}-03-01T00:00:00+09:00"


def code(result: Any) -> str:
    assert result.is_error, result.content
    return error_of(result)["code"]


async def make_event(client: Client, **extra: Any) -> dict[str, Any]:
    args = {"title": "Team dinner", "start": START, "end": END, "invitees": ["bob", "gus"],
            "availability_deadline": DEADLINE, **extra}  # fmt: skip
    result = await client.call_tool("create_event", args)
    assert not result.is_error, result.content
    return result.structured_content  # type: ignore[return-value]


@pytest.mark.anyio
@MODES
async def test_create_list_update_invite_delete(tmp_path: Path, mode: str) -> None:
    services = await directory(tmp_path)
    async with Client(server_for(user="alice", services=services), mode=mode) as alice:
        event = await make_event(alice, location="Gangnam")
        assert event["your_role"] == "owner" and event["candidate_date_range"] == {
            "first": f"{NEXT_YEAR}-03-09",
            "last": f"{NEXT_YEAR}-03-13",
        }
        assert [i["id"] for i in event["invitees"]] == ["bob", "gus"]
        listed = await alice.call_tool("get_events", {"start": f"{NEXT_YEAR}-03-01T00:00:00+09:00"})
        assert [e["id"] for e in listed.structured_content["events"]] == [event["id"]]  # type: ignore[index]
        updated = await alice.call_tool("update_event", {"event_id": event["id"], "title": "Team BBQ"})
        assert updated.structured_content["title"] == "Team BBQ"  # type: ignore[index]
        assert updated.structured_content["location"] == "Gangnam"  # type: ignore[index]  (untouched)
        invited = await alice.call_tool("invite_to_event", {"event_id": event["id"], "invitees": ["carol", "bob"]})
        assert invited.structured_content["invited"] == ["carol"]  # type: ignore[index]
        assert invited.structured_content["already_invited"] == ["bob"]  # type: ignore[index]
        again = await alice.call_tool("invite_to_event", {"event_id": event["id"], "invitees": ["carol"]})
        assert again.structured_content["invited"] == []  # type: ignore[index]
        assert len(again.structured_content["event"]["invitees"]) == 3  # type: ignore[index]
        deleted = await alice.call_tool("delete_event", {"event_id": event["id"]})
        assert deleted.structured_content == {"event_id": event["id"], "title": "Team BBQ", "invitees_affected": 3}
        assert code(await alice.call_tool("get_events", {"start": "x"})) == "validation"
        listed = await alice.call_tool("get_events", {"start": f"{NEXT_YEAR}-03-01T00:00:00+09:00"})
        assert listed.structured_content["events"] == []  # type: ignore[index]


@pytest.mark.anyio
@MODES
async def test_create_event_in_the_past_is_refused(tmp_path: Path, mode: str) -> None:
    services = await directory(tmp_path)
    async with Client(server_for(user="alice", services=services), mode=mode) as alice:
        past = await alice.call_tool(
            "create_event", {"title": "x", "start": "2020-03-09T19:00:00+09:00", "end": "2020-03-09T21:00:00+09:00"}
        )
        event = await make_event(alice)
        moved = await alice.call_tool(  # an existing event may still be moved into the past
            "update_event", {"event_id": event["id"], "start": "2020-03-09T19:00:00+09:00"}
        )
    reason = error_of(past)["reason"]
    assert code(past) == "validation" and "in the past" in reason and "future start" in reason
    assert not moved.is_error, moved.content


@pytest.mark.anyio
@MODES
async def test_create_event_refusals(tmp_path: Path, mode: str) -> None:
    services = await directory(tmp_path)
    async with Client(server_for(user="alice", services=services), mode=mode) as alice:
        backwards = await alice.call_tool("create_event", {"title": "x", "start": END, "end": START})
        past_deadline = await alice.call_tool(
            "create_event", {"title": "x", "start": START, "end": END, "availability_deadline": "2020-01-01T00:00:00Z"}
        )
        late_deadline = await alice.call_tool(
            "create_event", {"title": "x", "start": START, "end": END, "availability_deadline": f"{NEXT_YEAR}-04-01"}
        )
        bad_time = await alice.call_tool("create_event", {"title": "x", "start": "next tuesday", "end": END})
        bad_zone = await alice.call_tool(
            "create_event", {"title": "x", "start": START, "end": END, "timezone": "Nowhere"}
        )
        unknown = await alice.call_tool(
            "create_event", {"title": "x", "start": START, "end": END, "invitees": ["bob", "zed"]}
        )
        myself = await alice.call_tool(
            "create_event", {"title": "x", "start": START, "end": END, "invitees": ["alice"]}
        )
        naive = await alice.call_tool(
            "create_event", {"title": "Local", "start": f"{NEXT_YEAR}-05-01T10:00", "end": f"{NEXT_YEAR}-05-01T11:00",
                             "timezone": "Europe/Berlin"}
        )  # fmt: skip
        listed = await alice.call_tool(
            "get_events", {"start": f"{NEXT_YEAR}-01-01T00:00:00Z", "end": f"{NEXT_YEAR}-12-31T00:00:00Z"}
        )
    assert code(backwards) == "validation" and "after start" in error_of(backwards)["reason"]  # type: ignore[index]
    assert code(past_deadline) == "validation" and "past" in error_of(past_deadline)["reason"]  # type: ignore[index]
    assert code(late_deadline) == "validation"
    assert code(bad_time) == "validation" and "ISO 8601" in error_of(bad_time)["reason"]  # type: ignore[index]
    assert code(bad_zone) == "validation"
    assert code(unknown) == "not_found" and "'zed'" in error_of(unknown)["reason"]  # type: ignore[index]
    assert code(myself) == "validation"
    assert naive.structured_content["start"] == f"{NEXT_YEAR}-05-01T10:00:00+02:00"  # type: ignore[index]
    # nothing half-created by the refused calls: only the one good event exists
    assert [e["title"] for e in listed.structured_content["events"]] == ["Local"]  # type: ignore[index]


@pytest.mark.anyio
@MODES
async def test_only_the_owner_changes_an_event_and_strangers_cannot_see_it(tmp_path: Path, mode: str) -> None:
    services = await directory(tmp_path)
    async with Client(server_for(user="alice", services=services), mode=mode) as alice:
        event = await make_event(alice)
    async with Client(server_for(user="bob", services=services), mode=mode) as bob:
        seen = await bob.call_tool("get_events", {"start": f"{NEXT_YEAR}-03-01T00:00:00+09:00"})
        view = seen.structured_content["events"][0]  # type: ignore[index]
        assert view["your_role"] == "invitee" and view["availability_by_date"] is None
        assert code(await bob.call_tool("update_event", {"event_id": event["id"], "title": "mine"})) == "forbidden"
        assert (
            code(await bob.call_tool("invite_to_event", {"event_id": event["id"], "invitees": ["carol"]}))
            == "forbidden"
        )
        assert code(await bob.call_tool("delete_event", {"event_id": event["id"]})) == "forbidden"
    async with Client(server_for(user="carol", services=services), mode=mode) as carol:
        seen = await carol.call_tool("get_events", {"start": f"{NEXT_YEAR}-03-01T00:00:00+09:00"})
        assert seen.structured_content["events"] == []  # type: ignore[index]
        # an id carol never saw is stopped by the read-before-write gate before the tool runs
        gated = await carol.call_tool("update_event", {"event_id": event["id"], "title": "x"})
        assert code(gated) == "precondition" and "get_events" in error_of(gated)["reason"]
    # and with the gates off, the tool itself tells a stranger the event does not exist
    ungated = server_for(user="carol", services=services, gates=gates_off(tmp_path))
    async with Client(ungated, mode=mode) as carol:
        assert code(await carol.call_tool("update_event", {"event_id": event["id"], "title": "x"})) == "not_found"
        assert code(await carol.call_tool("delete_event", {"event_id": event["id"]})) == "not_found"
        missing = await carol.call_tool("delete_event", {"event_id": "evt_nope"})
        assert code(missing) == "not_found" and "get_events" in error_of(missing)["reason"]


@pytest.mark.anyio
@MODES
async def test_delete_event_asks_and_a_decline_keeps_it(tmp_path: Path, mode: str) -> None:
    services = await directory(tmp_path)
    async with Client(server_for(user="alice", services=services), mode=mode) as alice:
        event = await make_event(alice)
    client = Client(server_for(user="alice", services=services), mode=mode, elicitation_callback=answering("decline"))
    async with client:
        await client.call_tool("get_events", {"start": f"{NEXT_YEAR}-03-01T00:00:00+09:00"})  # read before write
        declined = await client.call_tool("delete_event", {"event_id": event["id"]})
        still = await client.call_tool("get_events", {"start": f"{NEXT_YEAR}-03-01T00:00:00+09:00"})
    assert declined.is_error and error_of(declined)["status"] == "cancelled"  # type: ignore[index]
    assert len(still.structured_content["events"]) == 1  # type: ignore[index]


@pytest.mark.anyio
@MODES
async def test_guest_availability_flow(tmp_path: Path, mode: str) -> None:
    services = await directory(tmp_path)
    async with Client(server_for(user="alice", services=services), mode=mode) as alice:
        event = await make_event(alice)
        other = await alice.call_tool("create_event", {"title": "Private", "start": START, "end": END})
    guest = server_for(profile="guest", user="gus", services=services)
    async with Client(guest, mode=mode) as gus:
        names = {tool.name for tool in (await gus.list_tools()).tools}
        assert names == {"list_invited_events", "get_event_details", "update_guest_availability", "search_tools"}
        invited = await gus.call_tool("list_invited_events", {})
        assert [e["id"] for e in invited.structured_content["events"]] == [event["id"]]  # type: ignore[index]
        details = await gus.call_tool("get_event_details", {"event_id": event["id"]})
        assert details.structured_content["availability_deadline"] == DEADLINE  # type: ignore[index]
        hidden = await gus.call_tool("get_event_details", {"event_id": other.structured_content["id"]})  # type: ignore[index]
        assert code(hidden) == "not_found"
        hint = error_of(hidden)["reason"]  # a guest is pointed at a tool it has
        assert "list_invited_events" in hint and "get_events" not in hint
        days = [f"{NEXT_YEAR}-03-11", f"{NEXT_YEAR}-03-10"]
        saved = await gus.call_tool("update_guest_availability", {"event_id": event["id"], "available_dates": days})
        assert saved.structured_content["available_dates"] == sorted(days)  # type: ignore[index]
        refusals = [
            [f"{NEXT_YEAR}-03-20"],  # outside the candidate dates
            [f"{NEXT_YEAR}-03-10", f"{NEXT_YEAR}-03-10"],  # duplicate
            [f"{NEXT_YEAR}-3-10"],  # not YYYY-MM-DD
            [f"{NEXT_YEAR}-02-30"],  # not a date
            [f"{NEXT_YEAR}-03-10"] * 63,  # too many
        ]
        for dates in refusals:
            refused = await gus.call_tool(
                "update_guest_availability", {"event_id": event["id"], "available_dates": dates}
            )
            assert code(refused) == "validation", dates
        outsider = await gus.call_tool(
            "update_guest_availability",
            {"event_id": other.structured_content["id"], "available_dates": []},  # type: ignore[index]
        )
        assert code(outsider) == "not_found"
        member_tool = await gus.call_tool("get_events", {})
        assert code(member_tool) == "unknown_tool"
    async with Client(server_for(user="alice", services=services), mode=mode) as alice:
        listed = await alice.call_tool("get_events", {"start": f"{NEXT_YEAR}-03-01T00:00:00+09:00"})
    mine = next(e for e in listed.structured_content["events"] if e["id"] == event["id"])  # type: ignore[index]
    assert mine["availability_by_date"] == {f"{NEXT_YEAR}-03-10": 1, f"{NEXT_YEAR}-03-11": 1}
    gus_view = next(i for i in mine["invitees"] if i["id"] == "gus")
    assert gus_view["responded"] and gus_view["available_dates"] == sorted(days)


@pytest.mark.anyio
async def test_availability_after_the_deadline_is_refused(tmp_path: Path) -> None:
    services = await directory(tmp_path)
    async with Client(server_for(user="alice", services=services)) as alice:
        event = await make_event(alice)
    past = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)
    await services.events.update(event["id"], EventChanges(availability_deadline=past))
    async with Client(server_for(profile="guest", user="gus", services=services)) as gus:
        late = await gus.call_tool(
            "update_guest_availability", {"event_id": event["id"], "available_dates": [f"{NEXT_YEAR}-03-10"]}
        )
    assert code(late) == "validation" and "deadline" in error_of(late)["reason"]  # type: ignore[index]


@pytest.mark.anyio
async def test_invitees_are_found_by_name_as_search_users_finds_them(tmp_path: Path) -> None:
    from toolsets.infra.store.users import UserRecord

    services = await directory(tmp_path)
    await services.users.import_users(
        [
            UserRecord(id="junho", username="junho", display_name="박준호"),
            UserRecord(id="minji.k", username="minjik", display_name="김민지"),
            UserRecord(id="minji.l", username="minjil", display_name="이민지"),
        ]
    )
    async with Client(server_for(user="alice", services=services)) as client:
        searched = await client.call_tool("search_users", {"query": "준호"})
        assert [u["id"] for u in searched.structured_content["users"]] == ["junho"]  # type: ignore[index]
        made = await make_event(client, invitees=["박준호"])
        assert [i["id"] for i in made["invitees"]] == ["junho"]
        ambiguous = await client.call_tool(
            "create_event", {"title": "x", "start": START, "end": END, "invitees": ["민지"]}
        )
        text = ambiguous.content[0].text  # type: ignore[union-attr]
        assert code(ambiguous) == "not_found" and "several users match" in text
        assert "김민지 = minji.k" in text and "이민지 = minji.l" in text  # the candidates, by name and id
