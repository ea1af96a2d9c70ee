"""MCP tasks across two real server processes on one Redis and one PostgreSQL: a deferred tool's call made a task on
replica A, the device (the simulator) answering on replica B, the task read on B and on A after A restarted; in
both protocol eras. Plus: a cancelled task's late device answer is refused (409), another user cannot see the task,
and a client that does not ask for a task gets today's blocking answer."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from bridge.device import sample_calendar
from tests.support import (
    TASKS_EXTENSION as EXT,
)
from tests.support import (
    RpcError,
    device_online,
    eventually,
    http_server_process,
    modern_request,
    replica_env,
    rpc_answer,
    token,
)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

MODERN = "2026-07-28"
DAY = {"start_date": "2026-03-10T00:00:00+09:00", "end_date": "2026-03-11T00:00:00+09:00"}
CALENDAR = {"name": "get_calendar_events", "arguments": {"notification_message": "Reading your calendar", **DAY}}
EVENT_IDS = ["sim-20260310-1", "sim-20260310-2"]


class Replicas:
    """Two replicas sharing Redis and PostgreSQL; `restart_a` stops A and starts it again (a new port)."""

    def __init__(self, env: dict[str, str], tmp: Path, stack: contextlib.ExitStack) -> None:
        self._env, self._tmp, self._stack = env, tmp, stack
        self._a: contextlib.ExitStack | None = None
        self.a = self._start_a()
        self.b = stack.enter_context(self._server("b"))

    def _server(self, name: str) -> contextlib.AbstractContextManager[str]:
        @contextlib.contextmanager
        def serving() -> Iterator[str]:
            with http_server_process("--data-dir", str(self._tmp / name), env=self._env) as (base, _, _):
                yield base

        return serving()

    def _start_a(self) -> str:
        self._a = contextlib.ExitStack()
        self._stack.callback(self._a.close)
        return self._a.enter_context(self._server("a"))

    def restart_a(self) -> None:
        assert self._a is not None
        self._a.close()
        self.a = self._start_a()


@pytest.fixture
def replicas(redis_url: str, redis_prefix: str, database_url: str, tmp_path: Path) -> Iterator[Replicas]:
    env = replica_env(redis_url, redis_prefix, database_url)
    with contextlib.ExitStack() as stack:
        yield Replicas(env, tmp_path, stack)


def new_user() -> str:
    return "user-" + secrets.token_hex(4)


def held_calendar(gate: anyio.Event) -> dict[str, Any]:
    """A phone's answers: calendar requests, answered once `gate` is set."""

    async def calendar(params: dict[str, Any]) -> Any:
        await gate.wait()
        return sample_calendar(params)

    return {"calendar.getEvents": calendar}


async def modern(base: str, bearer: str, method: str, params: dict[str, Any], *, tasks: bool = True) -> dict[str, Any]:
    """One 2026-07-28 request, declaring tasks when `tasks`."""
    async with httpx.AsyncClient(timeout=15) as client:
        return await modern_request(client, base, bearer, method, params, {"extensions": {EXT: {}}} if tasks else {})


def _answer(response: httpx.Response, request_id: int) -> dict[str, Any]:
    return rpc_answer((response.status_code, response.headers.get("content-type", "")), response.text, request_id)


class Handshake:
    """A 2025-11-25 session over streamable HTTP, its requests sent as raw JSON-RPC."""

    def __init__(self, client: httpx.AsyncClient, base: str, bearer: str) -> None:
        self._client, self._url = client, f"{base}/mcp"
        self._headers = {"Authorization": f"Bearer {bearer}", "Accept": "application/json, text/event-stream"}
        self._next = 0

    async def open(self) -> Handshake:
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        response = await self._client.post(self._url, json=self._body("initialize", params), headers=self._headers)
        result = _answer(response, self._next)
        assert result["capabilities"]["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        assert "extensions" not in result["capabilities"]
        self._headers |= {"Mcp-Session-Id": response.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await self._client.post(self._url, json=note, headers=self._headers)).status_code == 202
        return self

    def _body(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next += 1
        return {"jsonrpc": "2.0", "id": self._next, "method": method, "params": params}

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = self._body(method, params)
        return _answer(await self._client.post(self._url, json=body, headers=self._headers), body["id"])


@contextlib.asynccontextmanager
async def handshake(base: str, bearer: str) -> AsyncIterator[Handshake]:
    async with httpx.AsyncClient(timeout=15) as client:
        yield await Handshake(client, base, bearer).open()


async def until_status(read: Any, *statuses: str) -> dict[str, Any]:
    with anyio.fail_after(15):
        while True:
            task = await read()
            if task["status"] in statuses:
                return task
            await anyio.sleep(0.05)


def event_ids(result: dict[str, Any]) -> list[str]:
    return [event["id"] for event in result["structuredContent"]["events"]]


async def test_a_2026_task_made_on_a_is_answered_on_b_and_read_after_a_restarts(replicas: Replicas) -> None:
    user = new_user()
    bearer = token(sub=user)
    gate = anyio.Event()
    async with device_online(replicas.b, user, held_calendar(gate)) as device:
        made = await modern(replicas.a, bearer, "tools/call", CALENDAR)
        assert made["resultType"] == "task" and made["status"] == "working"
        assert made["ttlMs"] == 3_600_000 and made["pollIntervalMs"] > 0
        task_id = made["taskId"]
        waiting = await modern(replicas.a, bearer, "tasks/get", {"taskId": task_id})
        assert waiting["status"] == "working" and "result" not in waiting
        gate.set()  # the phone, connected to B, answers there
        await eventually(lambda: bool(device.answered))
        assert device.answered[0]["status"] == 200

    done = await until_status(lambda: modern(replicas.b, bearer, "tasks/get", {"taskId": task_id}), "completed")
    assert done["resultType"] == "complete" and not done["result"]["isError"]
    assert event_ids(done["result"]) == EVENT_IDS
    assert "io.modelcontextprotocol/related-task" not in (done["result"].get("_meta") or {})

    replicas.restart_a()
    again = await modern(replicas.a, bearer, "tasks/get", {"taskId": task_id})
    assert again["status"] == "completed" and event_ids(again["result"]) == EVENT_IDS

    with pytest.raises(RpcError) as foreign:  # another user's get: as if there were no such task
        await modern(replicas.a, token(sub=new_user()), "tasks/get", {"taskId": task_id})
    assert foreign.value.code == -32602
    with pytest.raises(RpcError) as undeclared:
        await modern(replicas.a, bearer, "tasks/get", {"taskId": task_id}, tasks=False)
    assert undeclared.value.code == -32021


async def test_a_2025_task_made_on_a_is_answered_on_b_and_read_after_a_restarts(replicas: Replicas) -> None:
    user = new_user()
    bearer = token(sub=user)
    async with handshake(replicas.a, bearer) as on_a:
        listed = await on_a.request("tools/list", {})
        support = {tool["name"]: tool.get("execution", {}).get("taskSupport") for tool in listed["tools"]}
        assert support["get_calendar_events"] == "optional" and support["get_current_datetime"] is None
        gate = anyio.Event()
        async with device_online(replicas.b, user, held_calendar(gate)) as device:
            made = await on_a.request("tools/call", {**CALENDAR, "task": {"ttl": 600_000}})
            task = made["task"]
            assert task["status"] == "working" and task["ttl"] == 600_000 and "resultType" not in made
            gate.set()
            await eventually(lambda: bool(device.answered))

    async with handshake(replicas.b, bearer) as on_b:
        done = await until_status(lambda: on_b.request("tasks/get", {"taskId": task["taskId"]}), "completed")
        assert "result" not in done
        result = await on_b.request("tasks/result", {"taskId": task["taskId"]})
        assert event_ids(result) == EVENT_IDS
        assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
        listed_tasks = await on_b.request("tasks/list", {})
        assert [t["taskId"] for t in listed_tasks["tasks"]] == [task["taskId"]]
        with pytest.raises(RpcError) as finished:
            await on_b.request("tasks/cancel", {"taskId": task["taskId"]})
        assert finished.value.code == -32602

    replicas.restart_a()
    async with handshake(replicas.a, bearer) as on_a:
        again = await on_a.request("tasks/result", {"taskId": task["taskId"]})
        assert event_ids(again) == EVENT_IDS
    async with handshake(replicas.a, token(sub=new_user())) as stranger:
        with pytest.raises(RpcError) as foreign:
            await stranger.request("tasks/get", {"taskId": task["taskId"]})
        assert foreign.value.code == -32602
        assert (await stranger.request("tasks/list", {}))["tasks"] == []


async def test_a_cancelled_tasks_late_device_answer_is_refused(replicas: Replicas) -> None:
    user = new_user()
    bearer = token(sub=user)
    gate = anyio.Event()
    async with device_online(replicas.b, user, held_calendar(gate)) as device:
        made = await modern(replicas.a, bearer, "tools/call", CALENDAR)
        await eventually(lambda: bool(device.received))  # the request reached the phone
        ack = await modern(replicas.b, bearer, "tasks/cancel", {"taskId": made["taskId"]})
        assert set(ack) <= {"resultType", "_meta"} and ack["resultType"] == "complete"
        gate.set()  # the phone answers now: too late
        await eventually(lambda: bool(device.answered))
    assert device.answered[0]["status"] == 409
    task = await modern(replicas.a, bearer, "tasks/get", {"taskId": made["taskId"]})
    assert task["status"] == "cancelled" and "result" not in task


async def test_a_client_that_does_not_ask_for_a_task_waits_for_the_answer(replicas: Replicas) -> None:
    user = new_user()
    bearer = token(sub=user)
    async with device_online(replicas.b, user):
        result = await modern(replicas.a, bearer, "tools/call", CALENDAR, tasks=False)
        assert result["resultType"] == "complete" and "taskId" not in result
        assert event_ids(result) == EVENT_IDS
        async with handshake(replicas.a, bearer) as session:
            plain = await session.request("tools/call", CALENDAR)
            assert "task" not in plain and event_ids(plain) == EVENT_IDS
