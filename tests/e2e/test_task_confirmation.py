"""A destructive tool's call as an MCP task, confirmed by the user inside the task: by elicitation on the 2025-11-25
stdio session that made it (the request carries the related-task `_meta`, the task is `input_required` meanwhile),
and by `inputRequests` / `tasks/update` on 2026-07-28 over HTTP. The task store here is the process's own (no
Redis)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.support import (
    SECRET,
    TASKS_EXTENSION,
    TRULOOP,
    child_env,
    modern_request,
    paths_env,
    spawn_http_server,
    token,
)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

RELATED = "io.modelcontextprotocol/related-task"


class StdioPeer:
    """A raw JSON-RPC peer of a stdio server: what a host does, line by line."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self._proc = proc
        self._next = 0
        self.seen: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(message) + "\n")
        self._proc.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        assert line, "the server closed its stdout"
        message: dict[str, Any] = json.loads(line)
        self.seen.append(message)
        return message

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next += 1
        self.send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        return self.until(lambda m: m.get("id") == self._next and "method" not in m)

    def until(self, wanted: Any) -> dict[str, Any]:
        while True:
            message = self.read()
            if wanted(message):
                return message


@pytest.fixture
def stdio_peer(tmp_path: Path) -> Iterator[StdioPeer]:
    args = [TRULOOP, "--user", "alice", "--data-dir", str(tmp_path / "data")]
    proc = subprocess.Popen(
        args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=paths_env(True)
    )
    try:
        yield StdioPeer(proc)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_a_2025_task_is_confirmed_by_elicitation_on_its_session(stdio_peer: StdioPeer) -> None:
    peer = stdio_peer
    hello = peer.request(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "t", "version": "1"},
        },
    )
    assert hello["result"]["capabilities"]["tasks"]["requests"] == {"tools": {"call": {}}}
    peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    saved = peer.request("tools/call", {"name": "save_memory", "arguments": {"content": "회의실은 3층 A룸"}})
    memory_id = saved["result"]["structuredContent"]["id"]

    made = peer.request("tools/call", {"name": "forget_memory", "arguments": {"memory_id": memory_id}, "task": {}})
    task_id = made["result"]["task"]["taskId"]
    ask = peer.until(lambda m: m.get("method") == "elicitation/create")
    assert ask["params"]["_meta"][RELATED] == {"taskId": task_id}
    waiting = peer.request("tasks/get", {"taskId": task_id})
    assert waiting["result"]["status"] == "input_required"
    peer.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"confirm": True}}})

    done = peer.request("tasks/result", {"taskId": task_id})["result"]
    assert done["structuredContent"] == {"memory_id": memory_id, "forgotten": True}
    assert done["_meta"][RELATED] == {"taskId": task_id}
    statuses = [m["params"]["status"] for m in peer.seen if m.get("method") == "notifications/tasks/status"]
    assert "input_required" in statuses
    listed = peer.request("tasks/list", {})["result"]["tasks"]
    assert [(t["taskId"], t["status"]) for t in listed] == [(task_id, "completed")]
    unknown = peer.request("tasks/get", {"taskId": "no-such-task"})
    assert unknown["error"]["code"] == -32602


@pytest.fixture
def http_base(tmp_path: Path) -> Iterator[str]:
    with spawn_http_server("--data-dir", str(tmp_path / "data"), env=child_env(TRULOOP_JWT_SECRET=SECRET)) as base:
        yield base


async def modern(base: str, bearer: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    capabilities = {"elicitation": {}, "extensions": {TASKS_EXTENSION: {}}}
    async with httpx.AsyncClient(timeout=15) as client:
        return await modern_request(client, base, bearer, method, params, capabilities)


async def status_of(base: str, bearer: str, task_id: str, *wanted: str) -> dict[str, Any]:
    with anyio.fail_after(15):
        while True:
            task = await modern(base, bearer, "tasks/get", {"taskId": task_id})
            if task["status"] in wanted:
                return task
            await anyio.sleep(0.05)


@pytest.mark.parametrize("confirm", [True, False])
async def test_a_2026_task_asks_for_confirmation_in_its_input_requests(http_base: str, confirm: bool) -> None:
    bearer = token(sub="alice")
    saved = await modern(http_base, bearer, "tools/call", {"name": "save_memory", "arguments": {"content": "note"}})
    memory_id = saved["structuredContent"]["id"]
    made = await modern(
        http_base, bearer, "tools/call", {"name": "forget_memory", "arguments": {"memory_id": memory_id}}
    )
    assert made["resultType"] == "task"
    asking = await status_of(http_base, bearer, made["taskId"], "input_required")
    ((key, request),) = asking["inputRequests"].items()
    assert key.startswith("truloop/confirm/") and request["method"] == "elicitation/create"
    answer = {"action": "accept", "content": {"confirm": confirm}}
    ack = await modern(http_base, bearer, "tasks/update", {"taskId": made["taskId"], "inputResponses": {key: answer}})
    assert ack["resultType"] == "complete"
    done = await status_of(http_base, bearer, made["taskId"], "completed", "failed", "cancelled")
    assert done["status"] == "completed"
    if confirm:
        assert done["result"]["structuredContent"] == {"memory_id": memory_id, "forgotten": True}
    else:
        assert done["result"]["isError"] is True  # the user said no: the call was cancelled, nothing forgotten
        found = await modern(
            http_base, bearer, "tools/call", {"name": "search_memories", "arguments": {"query": "note"}}
        )
        assert [hit["record"]["id"] for hit in found["structuredContent"]["memories"]] == [memory_id]
