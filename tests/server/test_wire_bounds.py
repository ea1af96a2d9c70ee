"""What a request can make the server hold or say, checked in-process:

- HTTP ids: `null`, `1.5`, `true` and objects are refused `-32600` with status 400 on every MCP endpoint (as stdio
  refuses them), before any session or tool sees them;
- errors quote a short prefix of what the client sent (an unknown method or tool name of 1 MB) and a stray
  exception is `-32603 Internal error` with nothing of it on the wire;
- `UnreadBacklog`: the per-session count and the per-user byte bound close the right session, and later requests
  on it are refused at once;
- a device stream that is not read is closed after `DEVICE_BACKLOG` envelopes, and its device gets them again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from bridge.pending import InMemoryBridgeBackend
from bridge.service import DEVICE_BACKLOG, DeviceBridge
from server.http.asgi_app import build_http_app
from server.http.rpc_peek import PEEKED, Peeked
from server.http.unread_backlog import UnreadBacklog
from server.mcp.wire_errors import WireErrors, clipped
from tests.support import serve_in_process, server_for, settings
from toolsets.core.echo import ECHO_LIMIT

pytestmark = pytest.mark.anyio

ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
BAD_IDS = [None, 1.5, True, {"n": 1}, [1]]


@pytest.fixture
async def http(tmp_path: Path) -> Any:
    app = build_http_app(settings(data_dir=tmp_path / "data"))
    async with serve_in_process(app) as base, httpx.AsyncClient(base_url=base, timeout=10) as client:
        yield client


async def open_session(http: httpx.AsyncClient) -> dict[str, str]:
    opened = await http.post("/mcp", json=INIT, headers=ACCEPT)
    headers = {**ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
    ready = await http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    assert ready.status_code == 202
    return headers


def sse_data(response: httpx.Response) -> dict[str, Any]:
    (line,) = [line for line in response.text.splitlines() if line.startswith("data: ") and line[6:].strip()]
    return dict(json.loads(line.removeprefix("data: ")))


@pytest.mark.parametrize("bad", BAD_IDS)
async def test_invalid_ids_are_refused_on_http_as_on_stdio(http: httpx.AsyncClient, bad: Any) -> None:
    headers = await open_session(http)
    for message in (
        {"jsonrpc": "2.0", "id": bad, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": bad, "method": "tools/call", "params": {"name": "get_day_of_week", "arguments": {}}},
    ):
        for where in (headers, ACCEPT):  # on a session, and opening one
            answer = await http.post("/mcp", json=message, headers=where)
            assert answer.status_code == 400, answer.text
            assert answer.json() == {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32600, "message": "Invalid Request: expected an id that is a string or an integer"},
            }
    # the session is untouched
    listed = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 7, "method": "tools/list"}, headers=headers)
    assert sse_data(listed)["id"] == 7


async def test_invalid_ids_are_refused_on_the_legacy_message_endpoint(http: httpx.AsyncClient) -> None:
    answer = await http.post("/messages/?session_id=" + "0" * 32, json={"jsonrpc": "2.0", "id": 1.5, "method": "x"})
    assert answer.status_code == 400 and answer.json()["error"]["code"] == -32600


async def test_an_unknown_method_is_named_by_a_short_prefix(http: httpx.AsyncClient) -> None:
    headers = await open_session(http)
    long_name = "x" * 1_000_000
    answer = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 3, "method": long_name}, headers=headers)
    assert len(answer.content) < 1024
    error = sse_data(answer)["error"]
    assert error["code"] == -32601
    assert error["data"].startswith("x" * ECHO_LIMIT) and "1,000,000 characters" in error["data"]


async def test_an_unknown_tool_and_argument_key_are_named_by_a_short_prefix(tmp_path: Path) -> None:
    server = server_for(data_dir=tmp_path / "data")
    async with Client(server) as client:
        unknown = await client.call_tool("y" * 1_000_000, {})
        assert unknown.is_error
        text = unknown.content[0].text  # type: ignore[union-attr]
        assert len(text) < 4096 and "1,000,000 characters" in text
        odd_key = await client.call_tool("get_day_of_week", {"date": "2026-11-26", "k" * 500_000: 1})
        assert len(json.dumps(odd_key.model_dump(mode="json"))) < 8192


async def test_a_stray_exception_is_internal_error_with_nothing_of_it_on_the_wire() -> None:
    class Ctx:
        method = "resources/read"

    async def raising(ctx: Any) -> Any:
        raise RuntimeError("/secret/path/in/a/traceback")

    with pytest.raises(MCPError) as raised:
        await WireErrors()(Ctx(), raising)  # type: ignore[arg-type]
    assert raised.value.error.code == -32603
    assert raised.value.error.message == "Internal error" and raised.value.error.data is None

    async def long_data(ctx: Any) -> Any:
        raise MCPError(code=-32601, message="Method not found", data="z" * 100_000)

    with pytest.raises(MCPError) as raised:
        await WireErrors()(Ctx(), long_data)  # type: ignore[arg-type]
    assert raised.value.error.code == -32601 and len(raised.value.error.data) < 200

    short = MCPError(code=-32602, message="Invalid params", data="short").error
    assert clipped(short) is short


class Stalled:
    """An ASGI app whose answers wait until `released` (a client that does not read, as the app sees it)."""

    def __init__(self) -> None:
        self.released = anyio.Event()
        self.served = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.served += 1
        await self.released.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def backlog_for(app: Stalled, closed: list[str], *, max_requests: int = 3, max_bytes: int = 1000) -> UnreadBacklog:
    async def end(session: str) -> bool:
        closed.append(session)
        app.released.set()
        return True

    async def release(writer: Any) -> None:
        pass

    return UnreadBacklog(
        app,
        max_requests=max_requests,
        max_bytes=max_bytes,
        max_unread=32 * 1024 * 1024,
        max_unread_per_user=64 * 1024 * 1024,
        endpoints={"/mcp": end},
        sse_path="/sse",
        message_path="/messages/",
        releases={"/mcp": lambda session: None},
        release=release,
        default_user="alice",
    )


def post(session: str, size: int = 10, request_id: int = 1) -> dict[str, Any]:
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}
    return {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(b"mcp-session-id", session.encode())],
        "query_string": b"",
        PEEKED: Peeked(size, message, True, request_id),
    }


async def answer_of(app: UnreadBacklog, scope: dict[str, Any]) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


async def test_past_the_count_the_session_is_closed_and_its_next_requests_refused() -> None:
    inner, closed = Stalled(), []
    app = backlog_for(inner, closed)
    async with anyio.create_task_group() as tg:
        for i in range(3):
            tg.start_soon(answer_of, app, post("s1", request_id=i))
        await anyio.sleep(0.05)
        assert inner.served == 3 and not closed
        refused = await answer_of(app, post("s1", request_id=9))
        assert closed == ["s1"]
        assert refused[0]["status"] == 503
        assert b"too many requests unread" in refused[1]["body"]
    assert (await answer_of(app, post("s1")))[0]["status"] == 503  # closed: refused here at once
    assert inner.served == 3


async def test_past_the_users_bytes_their_biggest_session_is_closed() -> None:
    inner, closed = Stalled(), []
    app = backlog_for(inner, closed, max_requests=100, max_bytes=1000)
    async with anyio.create_task_group() as tg:
        tg.start_soon(answer_of, app, post("big", size=700))
        await anyio.sleep(0.02)
        tg.start_soon(answer_of, app, post("small", size=200))
        await anyio.sleep(0.02)
        assert not closed
        answered = await answer_of(app, post("small", size=200, request_id=2))  # 1,100 bytes: "big" goes
        assert closed == ["big"]
        assert answered[0]["status"] == 200


async def test_a_device_stream_nobody_reads_is_closed_and_nothing_is_lost() -> None:
    bridge = DeviceBridge(InMemoryBridgeBackend, heartbeat=3600)
    async with bridge.device_stream("alice") as stream:
        for n in range(DEVICE_BACKLOG + 1):
            bridge.envelope_arrived("alice", {"n": n})
        received = [envelope async for envelope in stream]  # the stream ended: the device reconnects
    assert len(received) == DEVICE_BACKLOG
