"""MCP tasks driven as an attacker drove them, against installed servers on one Redis, with a destructive plugin that
charges once per run (a line in a file): junk argument keys and a huge `capabilities.experimental` are not kept in
the task's record, a record past 64 KiB is -32602 and kept nowhere, and with two replicas a confirmed run is never run
twice: not by a `tasks/update` with an unrelated key on the other replica, nor after its replica is killed (the other
replica then reports the task failed as interrupted)."""

from __future__ import annotations

import contextlib
import json
import secrets
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.plugin_files import plugin_source, write
from tests.support import (
    TASKS_EXTENSION,
    RpcError,
    eventually,
    http_server_process,
    modern_request,
    replica_env,
    rpc_answer,
    token,
)
from toolsets.infra.redis_client import redis_of

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

CHARGE = """
import time

def run(input_data, context):
    with open({log!r}, "a") as log:
        log.write("charged\\n")
    time.sleep(input_data.get("seconds", 0))
    return {{"charged": input_data["amount"]}}
"""
SCHEMA = {
    "type": "object",
    "properties": {"amount": {"type": "integer"}, "note": {"type": "string"}, "seconds": {"type": "number"}},
    "required": ["amount"],
    "additionalProperties": False,
}
CAPABILITIES = {"elicitation": {}, "extensions": {TASKS_EXTENSION: {}}}


class Setup:
    def __init__(self, tmp: Path, redis_url: str, redis_prefix: str, database_url: str) -> None:
        self.tmp, self.prefix = tmp, redis_prefix
        self.log = tmp / "charges.log"
        self.tools = tmp / "tools"
        self.tools.mkdir()
        body = CHARGE.format(log=str(self.log))
        spec = {"input_schema": SCHEMA, "annotations": {"destructiveHint": True}, "task_support": "optional"}
        write(self.tools / "charge.py", plugin_source("charge", body, **spec))
        self.env = replica_env(redis_url, redis_prefix, database_url)
        self.redis_url = redis_url

    @contextlib.contextmanager
    def replica(self, name: str) -> Iterator[tuple[str, Any]]:
        args = ("--data-dir", str(self.tmp / name), "--tools-dir", str(self.tools))
        with http_server_process(*args, env=self.env) as (base, proc, _):
            yield base, proc

    def charges(self) -> int:
        return len(self.log.read_text().splitlines()) if self.log.exists() else 0

    async def record(self, task_id: str) -> str:
        client = redis_of(self.redis_url)
        try:
            return str(await client.get(f"{self.prefix}task:{task_id}"))
        finally:
            await client.aclose()

    async def kept(self, user: str) -> int:
        client = redis_of(self.redis_url)
        try:
            return int(await client.zcard(f"{self.prefix}user-tasks:{user}"))
        finally:
            await client.aclose()


@pytest.fixture
def setup(tmp_path: Path, redis_url: str, redis_prefix: str, database_url: str) -> Setup:
    return Setup(tmp_path, redis_url, redis_prefix, database_url)


async def modern(base: str, bearer: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=30) as client:
        return await modern_request(client, base, bearer, method, params, CAPABILITIES)


async def status_of(base: str, bearer: str, task_id: str, *wanted: str, seconds: float = 15) -> dict[str, Any]:
    with anyio.fail_after(seconds):
        while True:
            task = await modern(base, bearer, "tasks/get", {"taskId": task_id})
            if task["status"] in wanted:
                return task
            await anyio.sleep(0.1)


async def test_junk_keys_and_large_records_are_never_kept(setup: Setup) -> None:
    user = "user-" + secrets.token_hex(4)
    bearer = token(sub=user)
    with setup.replica("a") as (base, _):
        junk = {f"junk{n}": "x" * 250_000 for n in range(4)}  # ~1 MB of keys the tool does not know
        made = await modern(base, bearer, "tools/call", {"name": "charge", "arguments": {"amount": 1, **junk}})
        assert made["resultType"] == "task"
        record = await setup.record(made["taskId"])
        assert len(record) < 4096 and "junk" not in record and json.loads(record)["arguments"] == {"amount": 1}

        with pytest.raises(RpcError) as too_large:
            await modern(
                base, bearer, "tools/call", {"name": "charge", "arguments": {"amount": 1, "note": "n" * 70_000}}
            )
        assert too_large.value.code == -32602 and "64 KiB" in too_large.value.error["message"]

        invalid = await modern(base, bearer, "tools/call", {"name": "charge", "arguments": {"amount": "lots", **junk}})
        assert invalid["isError"] is True and "Invalid arguments" in invalid["content"][0]["text"]
        assert await setup.kept(user) == 1  # neither the record too large nor the invalid call made a task
    assert setup.charges() == 0  # (each waits for its confirmation; nothing ran)


async def test_a_sessions_huge_capabilities_are_not_copied_into_its_tasks(setup: Setup) -> None:
    user = "user-" + secrets.token_hex(4)
    headers = {"Authorization": f"Bearer {token(sub=user)}", "Accept": "application/json, text/event-stream"}
    capabilities = {"elicitation": {}, "experimental": {"blob": {"data": "e" * 1_000_000}}}
    init = {"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}}
    with setup.replica("a") as (base, _):
        async with httpx.AsyncClient(timeout=30) as client:
            url = f"{base}/mcp"
            hello = await client.post(
                url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}, headers=headers
            )
            rpc_answer((hello.status_code, hello.headers.get("content-type", "")), hello.text, 1)
            headers |= {"Mcp-Session-Id": hello.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
            await client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
            task_ids = []
            for n in range(3):
                call = {"name": "charge", "arguments": {"amount": n}, "task": {"ttl": 60_000}}
                made = await client.post(
                    url, json={"jsonrpc": "2.0", "id": 2 + n, "method": "tools/call", "params": call}, headers=headers
                )
                answer = rpc_answer((made.status_code, made.headers.get("content-type", "")), made.text, 2 + n)
                task_ids.append(answer["task"]["taskId"])
        for task_id in task_ids:
            record = await setup.record(task_id)
            assert len(record) < 4096 and "blob" not in record
            assert json.loads(record)["client"]["elicit_form"] is True


@pytest.mark.timeout(150)
async def test_a_confirmed_run_runs_once_across_replicas_even_when_its_replica_is_killed(setup: Setup) -> None:
    user = "user-" + secrets.token_hex(4)
    bearer = token(sub=user)
    with setup.replica("a") as (a, proc_a), setup.replica("b") as (b, _):
        made = await modern(a, bearer, "tools/call", {"name": "charge", "arguments": {"amount": 5, "seconds": 60}})
        asking = await status_of(a, bearer, made["taskId"], "input_required")
        ((key, _),) = asking["inputRequests"].items()
        confirm = {key: {"action": "accept", "content": {"confirm": True}}}
        await modern(a, bearer, "tasks/update", {"taskId": made["taskId"], "inputResponses": confirm})
        await eventually(lambda: setup.charges() == 1, seconds=15)  # the run started on A
        await anyio.sleep(1)
        unrelated = {"taskId": made["taskId"], "inputResponses": {"unrelated": {"x": 1}}}
        await modern(b, bearer, "tasks/update", unrelated)
        await anyio.sleep(1)
        assert setup.charges() == 1  # the unrelated update on B started nothing

        proc_a.send_signal(signal.SIGKILL)
        proc_a.wait(timeout=10)
        failed = await status_of(b, bearer, made["taskId"], "failed", "completed", seconds=30)
        assert failed["status"] == "failed" and "interrupted" in failed["statusMessage"]
        await modern(b, bearer, "tasks/update", unrelated)
        await modern(b, bearer, "tasks/update", {"taskId": made["taskId"], "inputResponses": confirm})
        await anyio.sleep(1)
        assert (await modern(b, bearer, "tasks/get", {"taskId": made["taskId"]}))["status"] == "failed"
    assert setup.charges() == 1  # at most once
