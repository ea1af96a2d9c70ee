"""The SSE answers of handshake-era POSTs, and the HTTP protocol that writes a response at once
(`server/speed/write_combining.py`).

Unit level: the headers a lean answer (`server/speed/lean_http.py`) sends are sse-starlette's, byte for byte
(`server/speed/sse_sender.py`). Over a real `truloop-mcp --transport http` on the 2025-11-25 era (SSE per POST):
inline elicitation, sampling and progress ride the POST's stream (the SDK's own, through sse-starlette's
response), a client that walks away from a stream leaves the session usable, and the standalone GET stream can
be reopened; each with the speed paths (`fast`) and without them on plain uvicorn (`plain`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import re
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import httpx
import pytest
from mcp import types
from sse_starlette import EventSourceResponse

from server.http.uvicorn_server import parser_name
from server.speed.sse_sender import sse_headers
from server.speed.write_combining import WriteCombiningTransport, http_protocol
from tests.support import (
    answering,
    device_online,
    device_ready_http_server,
    error_of,
    eventually,
    mcp_client,
    token,
)

pytestmark = pytest.mark.anyio

SDK_HEADERS = {
    "Cache-Control": "no-cache, no-transform",
    "Connection": "keep-alive",
    "Content-Type": "text/event-stream",
    "mcp-session-id": "0123abcd",
}


# -- the SSE headers of a lean answer ----------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [SDK_HEADERS, {k: v for k, v in SDK_HEADERS.items() if k != "mcp-session-id"}, None, {"connection": "close"}],
)
async def test_headers_are_sse_starlettes(headers: dict[str, str] | None) -> None:
    send, receive = anyio.create_memory_object_stream[Any](0)
    with send, receive:
        assert sse_headers(headers) == EventSourceResponse(content=receive, headers=headers).raw_headers


# -- write combining ------------------------------------------------------------------------------


class Recording(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closed

    def get_write_buffer_size(self) -> int:
        return 0

    def close(self) -> None:
        self.closed = True


async def test_writes_of_one_loop_turn_leave_in_one_write_and_close_flushes_first() -> None:
    raw = Recording()
    combined = WriteCombiningTransport(raw)
    combined.write(b"HTTP/1.1 200 OK\r\n\r\n")
    combined.write(b"5\r\nhello\r\n")
    combined.writelines([b"0\r\n", b"\r\n"])
    assert raw.writes == [] and combined.get_write_buffer_size() == 34
    await asyncio.sleep(0)
    assert raw.writes == [b"HTTP/1.1 200 OK\r\n\r\n5\r\nhello\r\n0\r\n\r\n"]
    combined.write(b"last")
    combined.close()
    assert raw.writes[-1] == b"last" and raw.closed
    await asyncio.sleep(0)
    assert len(raw.writes) == 2  # the scheduled flush found nothing left


def test_the_http_protocol_is_uvicorns_httptools_one() -> None:
    protocol = http_protocol()
    if importlib.util.find_spec("httptools") is None:
        pytest.skip("httptools is not installed (the `fast` extra)")
    assert not isinstance(protocol, str) and parser_name(protocol) == "httptools"


# -- over a real server, 2025-11-25 (an SSE stream per POST) ---------------------------------------


@pytest.fixture(scope="module", params=[True, False], ids=["fast", "plain"])
def fast_paths(request: pytest.FixtureRequest) -> bool:
    return request.param


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, fast_paths: bool) -> Iterator[str]:
    with device_ready_http_server(tmp_path_factory.mktemp("sse-data"), fast_paths) as base:
        yield base


CONFIRM = {"notification_message": "Asking you...", "title": "Share", "message": "Share your calendar with Minji?"}
CALENDAR = {
    "notification_message": "Reading your calendar",
    "start_date": "2026-03-10T00:00:00+09:00",
    "end_date": "2026-03-11T00:00:00+09:00",
}


@pytest.mark.parametrize(("action", "content"), [("accept", {"confirmed": True}), ("decline", None)])
async def test_inline_elicitation_rides_the_posts_stream(server: str, action: str, content: Any) -> None:
    asked: list[str] = []
    elicit = answering(action, content, asked)
    with anyio.fail_after(20):
        async with mcp_client(server, token(sub="eve"), "legacy", elicitation_callback=elicit) as client:
            result = await client.call_tool("confirm_interaction", CONFIRM)
    assert asked and "Share your calendar with Minji?" in asked[0]
    if action == "accept":
        assert not result.is_error and result.structured_content == {"confirmed": True}
    else:
        assert result.is_error and error_of(result)["code"] == "permission_denied"


async def test_sampling_rides_the_posts_stream(server: str) -> None:
    async with mcp_client(server, token(sub="sam-recipient")) as recipient:  # a first call enters the directory
        await recipient.call_tool("get_day_of_week", {"date": "2026-03-10"})
    asked: list[types.CreateMessageRequestParams] = []

    async def model(context: Any, params: types.CreateMessageRequestParams) -> Any:
        asked.append(params)
        return types.CreateMessageResult(
            role="assistant", model="m", content=types.TextContent(type="text", text="Dinner at 7, from Sam")
        )

    with anyio.fail_after(20):
        async with mcp_client(server, token(sub="sam"), "legacy", sampling_callback=model) as client:
            result = await client.call_tool("send_message_to_user", {"recipient": "sam-recipient", "message": "hi"})
    assert asked, "the client's model was never asked"
    assert not result.is_error and result.structured_content is not None
    assert result.structured_content["composed_by"] == "client-model"
    assert result.structured_content["text"] == "Dinner at 7, from Sam"


async def test_progress_rides_the_posts_stream(server: str) -> None:
    progress: list[str | None] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message)

    user = "pat"
    with anyio.fail_after(20):
        async with device_online(server, user), mcp_client(server, token(sub=user), "legacy") as client:
            result = await client.call_tool("get_calendar_events", CALENDAR, progress_callback=on_progress)
    assert not result.is_error, result.content
    assert progress and set(progress) == {"Reading your calendar"}


def raw_headers(bearer: str, session: str | None = None) -> dict[str, str]:
    headers = {
        "Authorization": f"Bearer {bearer}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-11-25",
    }
    if session:
        headers["Mcp-Session-Id"] = session
    return headers


def rpc(request_id: int | None, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        message["id"] = request_id
    if params is not None:
        message["params"] = params
    return message


@contextlib.asynccontextmanager
async def raw_session(base: str, bearer: str, capabilities: dict[str, Any]) -> AsyncIterator[tuple[Any, str]]:
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": capabilities,
        "clientInfo": {"name": "raw", "version": "1"},
    }
    async with httpx.AsyncClient(base_url=base, timeout=10) as http:
        opened = await http.post("/mcp", json=rpc(1, "initialize", init), headers=raw_headers(bearer))
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]
        ready = await http.post(
            "/mcp", json=rpc(None, "notifications/initialized"), headers=raw_headers(bearer, session)
        )
        assert ready.status_code == 202
        yield http, session


def data_of(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[5:]) for line in body.split(b"\r\n") if line.startswith(b"data:") and line[5:].strip()]


async def test_a_call_is_one_event_with_the_sdks_headers_on_a_reusable_connection(server: str) -> None:
    bearer = token(sub="raw-reader")
    async with raw_session(server, bearer, {}) as (http, session):
        for request_id in (2, 3):  # the second on the same keep-alive connection
            call = rpc(request_id, "tools/call", {"name": "get_day_of_week", "arguments": {"date": "2026-03-10"}})
            answered = await http.post("/mcp", json=call, headers=raw_headers(bearer, session))
            assert answered.status_code == 200
            assert answered.headers["content-type"] == "text/event-stream"
            assert answered.headers["cache-control"] == "no-cache, no-transform"
            assert answered.headers["x-accel-buffering"] == "no"
            assert answered.headers["mcp-session-id"] == session
            assert "server" not in answered.headers  # no banner
            # its priming event (an id, empty data, `retry`: the stream can be resumed), then the answer with its id
            priming, event = answered.content.split(b"\r\n\r\n")[:2]
            assert priming.startswith(b"id: ") and priming.endswith(b"\r\ndata: \r\nretry: 1000")
            assert event.startswith(b"id: ") and b"\r\nevent: message\r\ndata: " in event
            assert answered.content.endswith(b"\r\n\r\n")
            (message,) = data_of(answered.content)
            assert message["id"] == request_id and message["result"]["structuredContent"]["day_of_week"] == "Tuesday"


async def test_a_client_that_walks_away_from_a_call_leaves_the_session_usable(server: str) -> None:
    bearer = token(sub="walker")
    async with raw_session(server, bearer, {"elicitation": {"form": {}}}) as (http, session):
        call = rpc(2, "tools/call", {"name": "confirm_interaction", "arguments": CONFIRM})
        with anyio.fail_after(10):
            async with http.stream("POST", "/mcp", json=call, headers=raw_headers(bearer, session)) as stream:
                assert stream.status_code == 200
                async for line in stream.aiter_lines():
                    if line.startswith("data:") and line[5:].strip():  # (not the priming event)
                        asked = json.loads(line[5:])
                        assert asked["method"] == "elicitation/create"
                        break  # and leave without answering: the connection is closed under the stream
        day = rpc(3, "tools/call", {"name": "get_day_of_week", "arguments": {"date": "2026-03-10"}})
        answered = await http.post("/mcp", json=day, headers=raw_headers(bearer, session))
        assert data_of(answered.content)[0]["result"]["structuredContent"]["day_of_week"] == "Tuesday"
        # then the question is answered after all: the walked-away call ends, leaving the server nothing to wait for
        # when it stops (its SIGTERM would otherwise wait seconds for that call)
        declined = {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "decline"}}
        assert (await http.post("/mcp", json=declined, headers=raw_headers(bearer, session))).status_code == 202


async def test_the_standalone_stream_can_be_reopened_once_its_client_left(server: str) -> None:
    bearer = token(sub="listener")
    async with raw_session(server, bearer, {}) as (http, session):
        headers = {**raw_headers(bearer, session), "Accept": "text/event-stream"}
        async with http.stream("GET", "/mcp", headers=headers) as first:
            assert first.status_code == 200 and first.headers["content-type"] == "text/event-stream"
            async with httpx.AsyncClient(base_url=server, timeout=10) as other:
                second = await other.get("/mcp", headers=headers)
            assert second.status_code == 409  # one standalone stream per session while it is open

        async def reopened() -> bool:
            async with (
                httpx.AsyncClient(base_url=server, timeout=10) as again,
                again.stream("GET", "/mcp", headers=headers) as stream,
            ):
                return stream.status_code == 200

        await eventually(reopened)  # the server notices the first client left, and frees the slot


def test_a_raw_response_arrives_whole(server: str, fast_paths: bool) -> None:
    """A plain call's headers and event leave in one write (the speed paths: `lean_http` on the write-combining
    protocol): one recv on loopback reads the whole response. Plain uvicorn and sse-starlette (the SDK's own
    answers, such as `initialize`'s) send the same bytes in several writes."""
    bearer = token(sub="one-write")
    host, port = server.removeprefix("http://").rsplit(":", 1)
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}

    def request(message: dict[str, Any], session: str | None) -> bytes:
        body = json.dumps(message).encode()
        head = "".join(f"{k}: {v}\r\n" for k, v in raw_headers(bearer, session).items())
        return f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n{head}Content-Length: {len(body)}\r\n\r\n".encode() + body

    def response(sock: socket.socket, *, lean: bool = False) -> bytes:
        """One recv for a lean answer with the speed paths; otherwise as many as the response takes."""
        data = sock.recv(65536)
        while not (fast_paths and lean) and not complete(data):
            more = sock.recv(65536)
            assert more, data
            data += more
        return data

    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request(rpc(1, "initialize", init), None))
        opened = response(sock)
        session = next(
            line.split(b":", 1)[1].strip().decode()
            for line in opened.split(b"\r\n")
            if line.lower().startswith(b"mcp-session-id:")
        )
        sock.sendall(request(rpc(None, "notifications/initialized"), session))
        assert response(sock).startswith(b"HTTP/1.1 202")
        call = rpc(2, "tools/call", {"name": "get_day_of_week", "arguments": {"date": "2026-03-10"}})
        sock.sendall(request(call, session))
        whole = response(sock, lean=True)
    assert whole.startswith(b"HTTP/1.1 200 OK\r\n") and whole.endswith(b"\r\n0\r\n\r\n"), whole
    assert b'"day_of_week":"Tuesday"' in whole


def complete(data: bytes) -> bool:
    """`data` holds a whole HTTP/1.1 response: its headers, and its chunked or `Content-Length` body."""
    head, separator, body = data.partition(b"\r\n\r\n")
    if not separator:
        return False
    head = head.lower()
    if b"transfer-encoding: chunked" in head:
        return body.endswith(b"0\r\n\r\n")
    length = re.search(rb"content-length: *(\d+)", head)
    return length is None or len(body) >= int(length.group(1))
