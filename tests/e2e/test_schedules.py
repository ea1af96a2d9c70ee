"""Scheduled tool runs over stdio, on the embedded store: a schedule fires, its results reach the owner's inbox and
the resource truloop://schedules/{id}, and cancelling stops it; a one-off in Asia/Seoul fires at its instant; a
destructive tool's schedule asks once (declined: nothing is scheduled; accepted: runs without asking again); the
minimum interval is enforced; a guest has no schedule tools; another user can neither see nor cancel it; the
operator lists and cancels with `truloop-mcp schedules`; a schedule outlives the server's restart."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import anyio
import mcp.types as types
import pytest
from mcp import Client, StdioServerParameters

from tests.support import TRULOOP, child_env, error_of, eventually

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]
DAY = {"date": "2026-03-10"}


@asynccontextmanager
async def server(data: Path, *flags: str, user: str = "alice", asked: list[str] | None = None,
                 accept: bool = True, heard: list[str] | None = None) -> AsyncIterator[Client]:  # fmt: skip
    async def confirm(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        if asked is not None:
            asked.append(params.message)
        return (
            types.ElicitResult(action="accept", content={"confirm": True})
            if accept
            else types.ElicitResult(action="decline")
        )

    args = ["--data-dir", str(data), "--user", user, "--schedule-min-interval", "1", *flags]
    params = StdioServerParameters(command=TRULOOP, args=args, env=child_env())

    async def notified(message: Any) -> None:
        root = getattr(message, "root", message)
        if heard is not None and isinstance(root, types.ResourceUpdatedNotification):
            heard.append(str(root.params.uri))

    async with Client(params, elicitation_callback=confirm, mode="legacy", message_handler=notified) as client:
        yield client


def data_of(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def inbox(client: Client) -> list[str]:
    found = data_of(await client.call_tool("get_inbox", {"unread_only": False, "limit": 50}))
    return [m["text"] for m in found["messages"] if m["sender_id"] == "truloop-schedules"]


async def test_a_schedule_fires_tells_the_inbox_and_the_resource_and_stops_when_cancelled(tmp_path: Path) -> None:
    heard: list[str] = []
    async with server(tmp_path / "data", heard=heard) as client:
        made = data_of(await client.call_tool("schedule_tool_run", {"tool": "get_day_of_week", "when": "PT1S",
                                                                     "arguments": DAY}))  # fmt: skip
        assert made["status"] == "active" and made["resource"] == f"truloop://schedules/{made['id']}"
        await client.subscribe_resource(made["resource"])  # the host follows the schedule's runs
        await eventually(lambda: _count(client, 3), seconds=15)
        assert made["resource"] in heard
        texts = await inbox(client)
        said = "Ran the scheduled task 'Get day of week' ("
        assert all(text.startswith(said) and "Tuesday" in text for text in texts)
        body = json.loads((await client.read_resource(made["resource"])).contents[0].text)  # type: ignore[union-attr]
        assert body["schedule"]["runs"] >= 3 and body["arguments"] == DAY
        assert [run["status"] for run in body["recent_runs"]] == ["ok"] * len(body["recent_runs"])
        assert data_of(await client.call_tool("cancel_schedule", {"schedule_id": made["id"]}))["status"] == "cancelled"
        await anyio.sleep(0.5)
        settled = len(await inbox(client))
        await anyio.sleep(2.5)
        assert len(await inbox(client)) == settled  # nothing ran after the cancel
        listed = data_of(await client.call_tool("list_schedules", {}))
        assert listed["schedules"] == []


async def _count(client: Client, at_least: int) -> bool:
    return len(await inbox(client)) >= at_least


async def test_a_one_off_in_seoul_fires_at_its_instant(tmp_path: Path) -> None:
    seoul = ZoneInfo("Asia/Seoul")
    at = (dt.datetime.now(seoul) + dt.timedelta(seconds=3)).replace(microsecond=0)
    local_text = at.replace(tzinfo=None).isoformat()  # no offset: read in the caller's zone
    async with server(tmp_path / "data", "--timezone", "Asia/Seoul") as client:
        made = data_of(await client.call_tool("schedule_tool_run", {"tool": "get_day_of_week", "when": local_text,
                                                                     "arguments": DAY}))  # fmt: skip
        assert made["next_run_at"] == at.isoformat()  # shown in Seoul time
        await eventually(lambda: _count(client, 1), seconds=15)
        body = json.loads((await client.read_resource(made["resource"])).contents[0].text)  # type: ignore[union-attr]
    (run,) = body["recent_runs"]
    planned = dt.datetime.fromisoformat(run["planned_at"])
    started = dt.datetime.fromisoformat(run["started_at"])
    assert planned == at and dt.timedelta(0) <= started - planned < dt.timedelta(seconds=1), (planned, started)
    assert body["schedule"]["status"] == "done" and body["schedule"]["next_run_at"] is None


async def test_a_destructive_tool_is_asked_once_and_a_no_schedules_nothing(tmp_path: Path) -> None:
    asked: list[str] = []
    async with server(tmp_path / "data", asked=asked, accept=False) as client:
        saved = data_of(await client.call_tool("save_memory", {"content": "delete me later"}))
        refused = await client.call_tool(
            "schedule_tool_run", {"tool": "forget_memory", "when": "PT1S", "arguments": {"memory_id": saved["id"]}}
        )
        assert refused.is_error and error_of(refused)["status"] == "cancelled"  # type: ignore[index]
        assert len(asked) == 1 and "each time without asking again" in asked[0] and "every 1 second" in asked[0]
        assert "delete me later" not in asked[0] and "• Memory Id: mem_" in asked[0]  # its values, labelled
        assert data_of(await client.call_tool("list_schedules", {"include_ended": True}))["schedules"] == []

    asked.clear()
    async with server(tmp_path / "data", asked=asked, accept=True) as client:
        made = data_of(await client.call_tool(
            "schedule_tool_run", {"tool": "forget_memory", "when": "PT1S", "arguments": {"memory_id": saved["id"]}}
        ))  # fmt: skip
        await eventually(lambda: _count(client, 2), seconds=15)
        assert len(asked) == 1  # the runs asked nobody
        found = data_of(await client.call_tool("search_memories", {"query": "delete me later"}))
        assert found["count"] == 0
        await client.call_tool("cancel_schedule", {"schedule_id": made["id"]})


async def test_bad_schedules_are_refused_with_what_would_do(tmp_path: Path) -> None:
    async with server(tmp_path / "data", "--schedule-min-interval", "60") as client:
        cases = [
            ({"tool": "get_day_of_week", "when": "PT10S", "arguments": DAY}, "at most once every 60 s"),
            ({"tool": "get_day_of_week", "when": "* * * * * *", "arguments": DAY}, "at most once every 60 s"),
            ({"tool": "get_day_of_week", "when": "next tuesday", "arguments": DAY}, "cron expression"),
            ({"tool": "get_day_of_week", "when": "2020-01-01T09:00", "arguments": DAY}, "in the past"),
            ({"tool": "no_such_tool", "when": "P1D"}, "No tool 'no_such_tool'"),
            ({"tool": "schedule_tool_run", "when": "P1D"}, "No tool 'schedule_tool_run'"),
            (
                {"tool": "get_day_of_week", "when": "P1D", "arguments": {"date": ["x"]}},
                "do not fit get_day_of_week",
            ),
        ]
        for arguments, said in cases:
            result = await client.call_tool("schedule_tool_run", arguments)
            assert result.is_error and said in result.content[0].text, (arguments, result.content)  # type: ignore[union-attr]
        assert data_of(await client.call_tool("list_schedules", {"include_ended": True}))["schedules"] == []


async def test_a_guest_has_no_schedule_tools_and_others_cannot_see_or_cancel(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with server(data, "--profile", "guest", user="hana") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert not names & {"schedule_tool_run", "list_schedules", "cancel_schedule"}
    async with server(data) as alice:
        made = data_of(await alice.call_tool("schedule_tool_run", {"tool": "get_day_of_week", "when": "P1D",
                                                                    "arguments": DAY}))  # fmt: skip
    async with server(data, user="bob") as bob:
        assert data_of(await bob.call_tool("list_schedules", {}))["schedules"] == []
        refused = await bob.call_tool("cancel_schedule", {"schedule_id": made["id"]})
        assert refused.is_error and error_of(refused)["code"] == "not_found"  # type: ignore[index]
        with pytest.raises(Exception, match="No schedule"):
            await bob.read_resource(made["resource"])
    async with server(data) as alice:  # still there, still active, after a restart
        (kept,) = data_of(await alice.call_tool("list_schedules", {}))["schedules"]
        assert kept["id"] == made["id"] and kept["status"] == "active"


def _operator(*args: str, data: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TRULOOP, "schedules", *args, "--data-dir", str(data)], capture_output=True, text=True,
                          timeout=30, env=child_env())  # fmt: skip


async def test_the_operator_lists_and_cancels_and_a_restart_keeps_firing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with server(data) as client:
        made = data_of(await client.call_tool("schedule_tool_run", {"tool": "get_day_of_week", "when": "PT1S",
                                                                     "arguments": DAY}))  # fmt: skip
        await eventually(lambda: _count(client, 1), seconds=15)
    async with server(data) as client:  # a new process: the schedule comes back from the store and fires again
        before = len(await inbox(client))
        await eventually(lambda: _count(client, before + 2), seconds=15)
    listed = _operator("list", "--json", data=data)
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert row["id"] == made["id"] and row["owner_id"] == "alice" and row["runs"] >= 3
    assert made["id"] in _operator("list", data=data).stdout
    cancelled = _operator("cancel", made["id"], data=data)
    assert cancelled.returncode == 0 and "cancelled" in cancelled.stdout, cancelled.stderr
    missing = _operator("cancel", "sch_nope", data=data)
    assert missing.returncode == 2 and "no schedule 'sch_nope'" in missing.stderr
    async with server(data) as client:
        assert data_of(await client.call_tool("list_schedules", {}))["schedules"] == []
        assert any("cancelled by the operator" in text for text in await inbox(client))
