"""What a schedule may not be, over stdio as an attacker drives the installed server: a destructive tool scheduled by
a client that cannot ask (refused under the default `--confirm auto`, nothing stored), or without a person's yes
under any `--confirm`; `schedule_tool_run` told to hosts as destructive; an interval or date-time too far ahead
(refused, nothing stored); a stored schedule the worker cannot plan (paused with its reason, the other users'
schedules firing on); a gated tool (refused when scheduled, naming the gate); a run's `precondition` (not retried
within its tick)."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp import Client, StdioServerParameters

from server.mcp.wire_forms import ERROR_META_KEY
from tests.support import INIT, INITIALIZED, TRULOOP, child_env, error_of, eventually, services_for
from toolsets.infra.store.schedules import Schedule

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]
DAY = {"date": "2026-03-10"}


def _stdio(data: Path, *requests: dict[str, Any], flags: tuple[str, ...] = ()) -> dict[Any, dict[str, Any]]:
    """One stdio session of a client that declares no capabilities (no elicitation): each request's reply, by id."""
    calls = [
        {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": r}
        if "method" not in r
        else {"jsonrpc": "2.0", "id": n, **r}
        for n, r in enumerate(requests)
    ]
    payload = b"".join(json.dumps(m).encode() + b"\n" for m in (INIT, INITIALIZED, *calls))
    proc = subprocess.run(
        [TRULOOP, "--data-dir", str(data), "--user", "alice", *flags],
        input=payload, capture_output=True, timeout=60, env=child_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    replies = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    return {reply["id"]: reply for reply in replies if "id" in reply}


def _operator_list(data: Path) -> list[dict[str, Any]]:
    listed = subprocess.run(
        [TRULOOP, "schedules", "list", "--all", "--json", "--data-dir", str(data)],
        capture_output=True, text=True, timeout=30, env=child_env(),
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    rows: list[dict[str, Any]] = json.loads(listed.stdout)
    return rows


@asynccontextmanager
async def server(
    data: Path, *flags: str, user: str = "alice", answers: list[str] | None = None, asked: list[str] | None = None
) -> AsyncIterator[Client]:
    """A client with elicitation: each question gets the next of `answers` ("accept" or "decline")."""

    async def confirm(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        if asked is not None:
            asked.append(params.message)
        action = (answers or ["decline"]).pop(0)
        return types.ElicitResult(action="accept", content={"confirm": True}) if action == "accept" else (
            types.ElicitResult(action="decline")
        )  # fmt: skip

    args = ["--data-dir", str(data), "--user", user, "--schedule-min-interval", "1", *flags]
    params = StdioServerParameters(command=TRULOOP, args=args, env=child_env())
    async with Client(params, elicitation_callback=confirm, mode="legacy") as client:
        yield client


def data_of(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def text_of(result: types.CallToolResult) -> str:
    return result.content[0].text  # type: ignore[union-attr]


async def test_a_client_that_cannot_ask_schedules_no_destructive_tool_and_hosts_see_it_is_destructive(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    saved = _stdio(data, {"name": "save_memory", "arguments": {"content": "keep me"}})[0]
    memory_id = saved["result"]["structuredContent"]["id"]
    replies = _stdio(
        data,
        {"name": "schedule_tool_run", "arguments": {"tool": "forget_memory", "when": "PT1M",
                                                    "arguments": {"memory_id": memory_id}}},
        {"method": "tools/list", "params": {}},
        flags=("--confirm", "auto"),
    )  # fmt: skip
    refused = replies[0]["result"]
    envelope = refused["_meta"][ERROR_META_KEY]
    assert refused["isError"] and envelope["status"] == "cancelled", refused
    reason = envelope["reason"]
    assert "cannot ask" in reason and "nothing was scheduled" in reason, reason
    assert _operator_list(data) == []
    (tool,) = [t for t in replies[1]["result"]["tools"] if t["name"] == "schedule_tool_run"]
    assert tool["annotations"]["destructiveHint"] is True and tool["annotations"]["readOnlyHint"] is False
    assert "Destructive" in tool["description"]


@pytest.mark.parametrize("confirm", ["auto", "strict", "off"])
async def test_a_destructive_tool_is_scheduled_only_on_a_persons_yes_whatever_confirm_says(
    tmp_path: Path, confirm: str
) -> None:
    asked: list[str] = []
    async with server(tmp_path / "data", "--confirm", confirm, answers=["decline", "accept"], asked=asked) as client:
        saved = data_of(await client.call_tool("save_memory", {"content": "forget me later"}))
        request = {"tool": "forget_memory", "when": "PT1H", "arguments": {"memory_id": saved["id"]}}
        declined = await client.call_tool("schedule_tool_run", request)
        assert declined.is_error and error_of(declined)["status"] == "cancelled"  # type: ignore[index]
        assert data_of(await client.call_tool("list_schedules", {"include_ended": True}))["schedules"] == []
        made = data_of(await client.call_tool("schedule_tool_run", request))
        assert made["status"] == "active"
        assert len(asked) == 2 and all("each time without asking again" in question for question in asked)
        (kept,) = data_of(await client.call_tool("list_schedules", {}))["schedules"]
        assert kept["id"] == made["id"]


async def test_when_too_far_ahead_is_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    data = tmp_path / "data"
    later = (dt.date.today() + dt.timedelta(days=800)).isoformat() + "T09:00"
    cases = [("P3000000D", "366 days"), ("P367D", "366 days"), (later, "366 days"),
             ("9999-12-31T23:59:59-12:00", "calendar")]  # fmt: skip
    async with server(data) as client:
        for when, said in cases:
            result = await client.call_tool("schedule_tool_run", {"tool": "get_day_of_week", "when": when,
                                                                  "arguments": DAY})  # fmt: skip
            assert result.is_error and said in text_of(result), (when, result.content)
            assert error_of(result)["code"] == "validation", (when, result.content)  # type: ignore[index]
        assert data_of(await client.call_tool("list_schedules", {"include_ended": True}))["schedules"] == []
    assert _operator_list(data) == []


def _stored(number: int, owner: str, **fields: Any) -> Schedule:
    values: dict[str, Any] = {
        "id": f"sch_{number:04d}{owner}", "owner_id": owner, "timezone": "UTC", "profile": "member",
        "tool": "get_day_of_week", "tool_ref": {"kind": "builtin", "tool_name": "get_day_of_week"}, "arguments": DAY,
        "when": "PT1S", "kind": "interval", "created_at": f"2026-01-01T00:00:{number:02d}+00:00",
    }  # fmt: skip
    return Schedule(**(values | fields))


async def _insert(data: Path, *schedules: Schedule) -> None:
    """Rows as an older version (or a damaged store) left them."""
    services = services_for(data)
    try:
        for schedule in schedules:
            await services.schedules.create(schedule, cap=50)
    finally:
        await services.aclose()


async def _inbox(client: Client) -> list[str]:
    found = data_of(await client.call_tool("get_inbox", {"unread_only": False, "limit": 50}))
    return [m["text"] for m in found["messages"] if m["sender_id"] == "truloop-schedules"]


async def test_a_stored_schedule_that_cannot_be_planned_is_paused_and_the_others_fire_on(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with server(data, user="bob") as bob:
        made = data_of(await bob.call_tool("schedule_tool_run", {"tool": "get_day_of_week", "when": "PT1S",
                                                                  "arguments": DAY}))  # fmt: skip
    await _insert(
        data,
        _stored(1, "mallory", when="P3000000D"),  # what the older version stored before it failed to plan it
        _stored(2, "mallory", when="not a cron", kind="cron"),
        _stored(3, "mallory", timezone="Mars/Olympus_Mons"),
        _stored(4, "mallory", next_run_at="soon"),
    )
    async with server(data, user="bob") as bob:  # a restart: the worker restores every schedule
        before = len(await _inbox(bob))
        await eventually(lambda: _more(bob, before + 2), seconds=20)
    rows = {row["id"]: row for row in _operator_list(data)}
    assert rows[made["id"]]["status"] == "active"
    for number in (1, 2, 3, 4):
        row = rows[f"sch_{number:04d}mallory"]
        assert row["status"] == "paused" and "cannot be planned" in row["reason"], row
    assert "366 days" in rows["sch_0001mallory"]["reason"]
    async with server(data, user="mallory") as mallory:
        listed = data_of(await mallory.call_tool("list_schedules", {}))["schedules"]
        assert {s["status"] for s in listed} == {"paused"} and all(s["reason"] for s in listed)
        assert len([text for text in await _inbox(mallory) if "is paused" in text]) == 4


async def _more(client: Client, at_least: int) -> bool:
    return len(await _inbox(client)) >= at_least


async def test_a_tool_behind_a_gate_no_run_can_pass_is_refused_naming_the_gate(tmp_path: Path) -> None:
    asked: list[str] = []
    async with server(tmp_path / "data", answers=["accept"], asked=asked) as client:
        refused = await client.call_tool(
            "schedule_tool_run", {"tool": "delete_event", "when": "P1D", "arguments": {"event_id": "evt_1"}}
        )
        assert refused.is_error and error_of(refused)["code"] == "precondition"  # type: ignore[index]
        assert "read-before-write gate of delete_event" in text_of(refused) and "get_events" in text_of(refused)
        assert asked == []  # refused before anyone was asked
        assert data_of(await client.call_tool("list_schedules", {"include_ended": True}))["schedules"] == []


async def test_a_runs_precondition_is_not_retried_within_its_tick(tmp_path: Path) -> None:
    data = tmp_path / "data"
    at = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=3)).replace(microsecond=0)
    gated = _stored(
        1, "alice", tool="update_event", tool_ref={"kind": "builtin", "tool_name": "update_event"},
        arguments={"event_id": "evt_1", "title": "moved"}, when=at.isoformat(), kind="once",
        next_run_at=at.isoformat(timespec="milliseconds"),
    )  # fmt: skip
    await _insert(data, gated)
    async with server(data) as client:
        resource = f"truloop://schedules/{gated.id}"

        async def finished() -> bool:
            body = json.loads((await client.read_resource(resource)).contents[0].text)  # type: ignore[union-attr]
            runs = body["recent_runs"]
            return bool(runs) and runs[0]["status"] != "running"

        await eventually(finished, seconds=30)
        body = json.loads((await client.read_resource(resource)).contents[0].text)  # type: ignore[union-attr]
    (run,) = body["recent_runs"]
    assert run["code"] == "precondition" and run["attempts"] == 1, run
