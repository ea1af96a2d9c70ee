"""Scheduled runs across two real replicas on one Redis and one PostgreSQL: a schedule every 2 seconds fires exactly
once per tick across both for 24 seconds (twelve ticks), keeps firing after the replica that created it is killed
halfway, puts each run's result in the owner's inbox and resource, and stops on both when cancelled."""

from __future__ import annotations

import json
import re
import secrets
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support import eventually, http_server_process, mcp_client, replica_env, token

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]
TICK = 2.0  # TRULOOP_SCHEDULE_MIN_INTERVAL=1 lets a schedule be this short
TOTAL_SECONDS = 24.0
KILL_AFTER = 12.0  # B's worker has long joined by then (each replica looks every LOOK_SECONDS, 5 s)
STAMP = re.compile(r"^Ran the scheduled task '[^']*' \((.+?)\): ")  # (its planned moment, to the second)


async def _call(base: str, bearer: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async with mcp_client(base, bearer) as client:
        result = await client.call_tool(name, arguments)
    assert not result.is_error and result.structured_content is not None, result.content
    return result.structured_content


async def _read(base: str, bearer: str, uri: str) -> dict[str, Any]:
    async with mcp_client(base, bearer) as client:
        found: dict[str, Any] = json.loads((await client.read_resource(uri)).contents[0].text)  # type: ignore[union-attr]
    return found


async def test_every_two_seconds_once_per_tick_across_two_replicas_and_after_one_dies(
    redis_url: str, redis_prefix: str, database_url: str, tmp_path: Path
) -> None:
    env = replica_env(redis_url, redis_prefix, database_url, TRULOOP_SCHEDULE_MIN_INTERVAL="1")
    user = "sched-" + secrets.token_hex(4)
    bearer = token(user)
    with (
        http_server_process("--data-dir", str(tmp_path / "a"), env=env) as (a, proc_a, _),
        http_server_process("--data-dir", str(tmp_path / "b"), env=env) as (b, _, _),
    ):
        schedule = {"tool": "get_day_of_week", "when": "PT2S", "arguments": {"date": "2026-03-10"}}
        made = await _call(a, bearer, "schedule_tool_run", schedule)
        began = time.monotonic()
        resource = made["resource"]
        await anyio.sleep(KILL_AFTER)
        async with mcp_client(b, bearer) as watcher:  # one open session: a tick is seen within milliseconds

            async def runs_now() -> int:
                return int(json.loads((await watcher.read_resource(resource)).contents[0].text)["schedule"]["runs"])  # type: ignore[union-attr]

            runs = await runs_now()

            async def ticked() -> bool:
                return await runs_now() != runs

            await eventually(ticked, seconds=TICK * 2)  # kill A just after a tick, not in the middle of one
            proc_a.kill()
        proc_a.wait()
        await anyio.sleep(TOTAL_SECONDS - (time.monotonic() - began))
        cancelled = await _call(b, bearer, "cancel_schedule", {"schedule_id": made["id"]})
        assert cancelled["status"] == "cancelled"
        counted = (await _read(b, bearer, resource))["schedule"]["runs"]
        await anyio.sleep(TICK * 2)
        body = await _read(b, bearer, resource)  # settled: no tick lands between it and the inbox
        inbox = await _call(b, bearer, "get_inbox", {"unread_only": False, "limit": 50})
    after = body["schedule"]
    ticks = sorted(STAMP.search(m["text"]).group(1) for m in inbox["messages"] if STAMP.search(m["text"]))  # type: ignore[union-attr]
    assert len(ticks) == len(set(ticks)) == after["runs"], (ticks, after)  # each tick once, whichever replica ran it
    assert TOTAL_SECONDS / TICK - 2 <= counted <= TOTAL_SECONDS / TICK + 1, counted  # none missed after the kill
    assert after["status"] == "cancelled" and after["runs"] in (counted, counted + 1)  # a run under way may finish
    assert all(run["status"] == "ok" for run in body["recent_runs"])
