"""The lean HTTP path (server/speed/lean_http.py) answers a plain handshake-era `tools/call` POST as the SDK answers
it, on the session's own state, and leaves every other request to the SDK.

Each case is sent, byte for byte the same, to this process's app with the speed paths (`fast`, served in-process so
that the calls the lean path took can be counted) and to a `truloop-mcp --transport http` with
`TRULOOP_FAST_PATHS=0` (`plain`); the answers must agree: status, headers (but the date and the session id) and
every SSE event's message. The lean path's answer must also be byte for byte what the fast server's own SDK path
answers for the same call (a `progressToken` sends a call there, and changes nothing else of a call that reports
no progress).
"""

from __future__ import annotations

import contextlib
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from server.http.asgi_app import build_http_app
from server.speed import lean_http
from tests.plugin_files import plugin_source
from tests.support import SECRET, eventually, http_server_process, paths_env, serve_in_process, settings, token

pytestmark = pytest.mark.anyio

VERSION = "2025-11-25"
MODERN = "2026-07-28"
SLOW = plugin_source(
    "slow_echo",
    "import time\n\ndef run(input_data, context):\n    time.sleep(input_data.get('sleep', 0))\n"
    "    return {'slept': input_data.get('sleep', 0)}\n",
    input_schema={"type": "object", "properties": {"sleep": {"type": "number"}}},
    annotations={"readOnlyHint": True},
)
DAY = {"name": "get_day_of_week", "arguments": {"date": "2026-03-10"}}


def tools_dir(root: Path) -> Path:
    folder = root / "tools"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "slow_echo.py").write_text(SLOW)
    return folder


SERVER_ARGS = (
    "--exposure",
    "progressive",
    "--deferred-timeout",
    "10",
    "--timezone",
    "Asia/Seoul",
)  # as settings() in-process


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("lean-http-plain")
    args = (*SERVER_ARGS, "--data-dir", str(root / "data"), "--tools-dir", str(tools_dir(root)))
    with http_server_process(*args, env=paths_env(False, TRULOOP_JWT_SECRET=SECRET)) as (base, _, _):
        yield base


class Counted:
    """The request ids of the calls the lean path answered, and of those it handed the lean call path straight
    (not through the server middleware chain); the `/mcp` server."""

    def __init__(self) -> None:
        self.ids: list[Any] = []
        self.direct: list[Any] = []
        self.server: Any = None


@pytest.fixture
async def fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[str, Counted]]:
    counted = Counted()
    run = lean_http._run

    async def counting(session: Any, request_id: Any, *rest: Any) -> None:
        counted.ids.append(request_id)
        await run(session, request_id, *rest)

    direct = lean_http._direct

    async def counting_direct(session: Any, request_id: Any, *rest: Any) -> Any:
        counted.direct.append(request_id)
        return await direct(session, request_id, *rest)

    monkeypatch.setattr(lean_http, "_run", counting)
    monkeypatch.setattr(lean_http, "_direct", counting_direct)
    configured = settings(
        transport="http",
        jwt_secret=SECRET,
        data_dir=tmp_path / "data",
        tools_dir=tools_dir(tmp_path),
        exposure="progressive",
        deferred_timeout=10,
    )
    app = build_http_app(configured)
    (lean,) = [m for m in app.user_middleware if m.cls is lean_http.LeanHttpCalls]
    counted.server = lean.kwargs["endpoints"]["/mcp"]
    async with serve_in_process(app) as base:
        yield base, counted


def headers(bearer: str, session: str | None = None, version: str | None = VERSION) -> dict[str, str]:
    sent = {
        "Authorization": f"Bearer {bearer}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    if version is not None:
        sent["MCP-Protocol-Version"] = version
    if session is not None:
        sent["Mcp-Session-Id"] = session
    return sent


def rpc(request_id: int | str | None, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0"}
    if request_id is not None:
        message["id"] = request_id
    message["method"] = method
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


class Answer:
    def __init__(self, response: httpx.Response, session: str | None) -> None:
        self.status = response.status_code
        self.raw = response.content
        self.headers = [
            (name, "<session>" if name == "mcp-session-id" and value == session else value)
            for name, value in response.headers.multi_items()
            if name not in ("date", "server")  # the clock, and the banner of the in-process uvicorn
        ]
        self.messages = (
            messages_of(response.content) if "event-stream" in response.headers.get("content-type", "") else []
        )

    def same_as(self, other: Answer) -> None:
        assert (self.status, self.headers) == (other.status, other.headers)
        if self.messages or other.messages:
            assert self.messages == other.messages
        else:
            assert unnumbered(self.raw) == unnumbered(other.raw)


def unnumbered(body: bytes) -> bytes:
    """An SSE body with its event ids (each session's own, counting up) made alike."""
    import re

    return re.sub(rb"(?m)^id: [0-9a-f]+-[0-9]+", b"id: <id>", body)


def messages_of(body: bytes) -> list[dict[str, Any]]:
    """The messages of an SSE body, each event framed as the SDK frames it: a priming event first (an id, empty
    data, `retry`), then `id`, `event: message` and `data` per message (the ids differ between two answers)."""
    found: list[dict[str, Any]] = []
    events = [event for event in body.split(b"\r\n\r\n") if event]
    if events and b"\r\ndata: \r\n" in events[0] + b"\r\n":  # a priming event (2025-11-25 and later)
        assert [line.split(b":")[0] for line in events[0].split(b"\r\n")] == [b"id", b"data", b"retry"], body
        events = events[1:]
    for event in events:
        lines = event.split(b"\r\n")
        assert lines[0].startswith(b"id: ") and lines[1] == b"event: message" and len(lines) == 3, body
        assert lines[2].startswith(b"data: "), body
        found.append(json.loads(lines[2][6:]))
    return found


class Session:
    """A raw handshake-era session on one server."""

    def __init__(self, http: httpx.AsyncClient, bearer: str, session: str) -> None:
        self.http, self.bearer, self.id = http, bearer, session

    async def post(self, body: bytes, **options: Any) -> Answer:
        sent = headers(self.bearer, self.id, **options)
        return Answer(await self.http.post("/mcp", content=body, headers=sent), self.id)


@contextlib.asynccontextmanager
async def session(base: str, bearer: str, capabilities: dict[str, Any] | None = None) -> AsyncIterator[Session]:
    init = {
        "protocolVersion": VERSION,
        "capabilities": capabilities or {},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    async with httpx.AsyncClient(base_url=base, timeout=20) as http:
        opened = await http.post("/mcp", content=rpc(1, "initialize", init), headers=headers(bearer, version=None))
        assert opened.status_code == 200, opened.text
        sid = opened.headers["mcp-session-id"]
        ready = await http.post("/mcp", content=rpc(None, "notifications/initialized"), headers=headers(bearer, sid))
        assert ready.status_code == 202
        yield Session(http, bearer, sid)


@contextlib.asynccontextmanager
async def both(
    fast: tuple[str, Counted], plain: str, user: str, capabilities: dict[str, Any] | None = None
) -> AsyncIterator[tuple[Session, Session]]:
    bearer = token(sub=user)
    async with session(fast[0], bearer, capabilities) as on_fast, session(plain, bearer, capabilities) as on_plain:
        yield on_fast, on_plain


CALLS = {
    "ok": DAY,
    "tool_error": {"name": "get_day_of_week", "arguments": {"date": "2026-02-30"}},
    "invalid_arguments": {"name": "get_day_of_week", "arguments": {}},
    "unknown_tool": {"name": "no_such_tool", "arguments": {}},
    "gate_refusal": {"name": "update_event", "arguments": {"event_id": "evt_invented", "title": "x"}},
    "plugin": {"name": "slow_echo", "arguments": {"sleep": 0}},
    "string_id_and_meta": {"name": "get_day_of_week", "arguments": {"date": "2026-03-10"}, "_meta": {"x": 1}},
}


@pytest.mark.parametrize("params", CALLS.values(), ids=CALLS.keys())
async def test_a_plain_call_is_answered_here_as_the_sdk_answers_it(
    fast: tuple[str, Counted], plain: str, params: dict[str, Any]
) -> None:
    request_id: int | str = "call-7" if "_meta" in params else 7
    async with both(fast, plain, "lena") as (on_fast, on_plain):
        if params["name"] == "update_event":  # loaded into the progressive session first (a lean call too)
            loaded = rpc(3, "tools/call", {"name": "load_toolset", "arguments": {"name": "event"}})
            (await on_fast.post(loaded)).same_as(await on_plain.post(loaded))
        here = await on_fast.post(rpc(request_id, "tools/call", params))
        here.same_as(await on_plain.post(rpc(request_id, "tools/call", params)))
        assert request_id in fast[1].ids
        assert (request_id in fast[1].direct) is ("_meta" not in params)  # a `_meta` takes the runner's chain
        assert here.status == 200 and len(here.messages) == 1 and here.messages[0]["id"] == request_id
        # the same call through the fast server's own SDK path: the same bytes
        meta = {**params.get("_meta", {}), "progressToken": "p"}
        sdk = await on_fast.post(rpc(request_id, "tools/call", {**params, "_meta": meta}))
        assert fast[1].ids.count(request_id) == 1
        assert (sdk.status, sdk.headers, unnumbered(sdk.raw)) == (here.status, here.headers, unnumbered(here.raw))


async def test_log_messages_about_a_call_ride_its_answer_first(fast: tuple[str, Counted], plain: str) -> None:
    async with both(fast, plain, "logan") as (on_fast, on_plain):
        level = rpc(2, "logging/setLevel", {"level": "debug"})
        (await on_fast.post(level)).same_as(await on_plain.post(level))
        for request_id, params in ((3, CALLS["tool_error"]), (4, DAY)):
            call = rpc(request_id, "tools/call", params)
            here = await on_fast.post(call)
            there = await on_plain.post(call)
            for answer in (here, there):  # `seconds` is how long the call took
                answer.messages[0]["params"]["data"].pop("seconds", None)
            here.same_as(there)
            assert [m.get("method") for m in here.messages] == ["notifications/message", None]
            assert here.messages[1]["id"] == request_id
        assert fast[1].ids == [3, 4]


# (params, headers, taken here): an older handshake version, or none, is still this path's; the rest the SDK's
CASES = {
    "no_version_header": (DAY, {"version": None}, True),
    "older_version_header": (DAY, {"version": "2025-06-18"}, True),
    "progress_token": (DAY | {"_meta": {"progressToken": 5}}, {}, False),
    "meta_null": (DAY | {"_meta": None}, {}, False),
    "task": (DAY | {"task": {"ttl": 1000}}, {}, False),
    "unknown_version_header": (DAY, {"version": "2024-01-01"}, False),
    "device_tool": ({"name": "get_permission_status", "arguments": {"permission": "calendar.read"}}, {}, False),
    "destructive_tool": ({"name": "forget_memory", "arguments": {"memory_id": "mem_none"}}, {}, False),
    "composing_tool": ({"name": "send_message_to_user", "arguments": {"recipient": "x", "message": "y"}}, {}, False),
}


@pytest.mark.parametrize(("params", "options", "here"), CASES.values(), ids=CASES.keys())
async def test_which_calls_are_taken_here(
    fast: tuple[str, Counted], plain: str, params: dict[str, Any], options: dict[str, Any], here: bool
) -> None:
    async with both(fast, plain, "sid") as (on_fast, on_plain):
        call = rpc(9, "tools/call", params)
        (await on_fast.post(call, **options)).same_as(await on_plain.post(call, **options))
    assert fast[1].ids == ([9] if here else [])


BAD = {
    "not_json": (b'{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": ', {}),
    "a_batch": (b"[" + rpc(4, "tools/call", DAY) + b"]", {}),
    "bool_id": (rpc(True, "tools/call", DAY), {}),  # type: ignore[arg-type]
    "float_id": (json.dumps({"jsonrpc": "2.0", "id": 4.0, "method": "tools/call", "params": DAY}).encode(), {}),
    "extra_key": (json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": DAY, "x": 1}).encode(), {}),
    "no_params": (rpc(4, "tools/call"), {}),
    "json_only_accept": (rpc(4, "tools/call", DAY), {"Accept": "application/json"}),
    "text_content_type": (rpc(4, "tools/call", DAY), {"Content-Type": "text/plain"}),
    "content_type_case": (rpc(4, "tools/call", DAY), {"Content-Type": "Application/JSON"}),
    "too_large": (rpc(4, "tools/call", {**DAY, "_meta": {"pad": "x" * (4 * 1024 * 1024)}}), {}),
}


@pytest.mark.parametrize(("body", "changed"), BAD.values(), ids=BAD.keys())
async def test_odd_posts_get_the_sdks_answer(
    fast: tuple[str, Counted], plain: str, body: bytes, changed: dict[str, str]
) -> None:
    async with both(fast, plain, "odd") as (on_fast, on_plain):
        answers = []
        for side in (on_fast, on_plain):
            sent = {**headers(side.bearer, side.id), **changed}
            answers.append(Answer(await side.http.post("/mcp", content=body, headers=sent), side.id))
        assert (answers[0].status, answers[0].headers) == (answers[1].status, answers[1].headers)
        assert answers[0].messages == answers[1].messages
    assert fast[1].ids == []


def without_ids(answer: Answer) -> tuple[Any, ...]:
    return answer.status, [h for h in answer.headers if h[0] != "mcp-session-id"], answer.raw


async def test_strangers_and_stale_sessions_get_the_sdks_404(fast: tuple[str, Counted], plain: str) -> None:
    async with both(fast, plain, "owner") as (on_fast, on_plain):
        call = rpc(2, "tools/call", DAY)
        stranger = token(sub="stranger")
        answers = []
        for base, sid in ((fast[0], on_fast.id), (plain, on_plain.id)):
            async with httpx.AsyncClient(base_url=base, timeout=10) as http:
                theirs = Answer(await http.post("/mcp", content=call, headers=headers(stranger, sid)), sid)
                stale = secrets.token_hex(16)
                gone = Answer(await http.post("/mcp", content=call, headers=headers(stranger, stale)), stale)
                answers.append((without_ids(theirs), without_ids(gone)))
        assert answers[0] == answers[1]
        assert answers[0][0][0] == 404 and answers[0][1][0] == 404
    assert fast[1].ids == []


async def test_a_2026_request_is_the_sdks(fast: tuple[str, Counted], plain: str) -> None:
    envelope = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    }
    call = rpc(3, "tools/call", DAY | {"_meta": envelope})
    bearer = token(sub="modern")
    answers = []
    for base in (fast[0], plain):
        async with httpx.AsyncClient(base_url=base, timeout=10) as http:
            sent = headers(bearer, version=MODERN) | {"Mcp-Method": "tools/call", "Mcp-Name": "get_day_of_week"}
            answers.append(Answer(await http.post("/mcp", content=call, headers=sent), None))
    answers[0].same_as(answers[1])
    modern = answers[0].messages[0] if answers[0].messages else json.loads(answers[0].raw)
    assert answers[0].status == 200 and modern["result"]["structuredContent"]["day_of_week"] == "Tuesday"
    assert fast[1].ids == []


async def stream_call(
    http: httpx.AsyncClient, bearer: str, sid: str, body: bytes, answer: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """POST `body` and read its stream to the end; a server request on it gets `answer` POSTed back."""
    seen: list[dict[str, Any]] = []
    async with http.stream("POST", "/mcp", content=body, headers=headers(bearer, sid)) as stream:
        assert stream.status_code == 200
        async for line in stream.aiter_lines():
            if not line.startswith("data: ") or not line[6:].strip():  # (a priming event has empty data)
                continue
            message = json.loads(line[6:])
            seen.append(message)
            if "method" in message and "id" in message:
                reply = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": answer}).encode()
                assert (await http.post("/mcp", content=reply, headers=headers(bearer, sid))).status_code == 202
    return seen


async def test_a_destructive_call_is_the_sdks_and_asks_the_user(fast: tuple[str, Counted], plain: str) -> None:
    asked = {"elicitation": {"form": {}}}
    async with both(fast, plain, "forgetful", asked) as (on_fast, on_plain):
        results = []
        for side in (on_fast, on_plain):
            load = rpc(2, "tools/call", {"name": "load_toolset", "arguments": {"name": "memory"}})
            assert (await side.post(load)).status == 200
            saved = await side.post(rpc(3, "tools/call", {"name": "save_memory", "arguments": {"content": "tea"}}))
            memory = saved.messages[0]["result"]["structuredContent"]["id"]
            forget = rpc(4, "tools/call", {"name": "forget_memory", "arguments": {"memory_id": memory}})
            seen = await stream_call(side.http, side.bearer, side.id, forget, {"action": "decline"})
            assert [m.get("method") for m in seen] == ["elicitation/create", None]
            seen[0].pop("id")
            seen[0]["params"]["message"] = seen[0]["params"]["message"].replace(memory, "<memory>")
            seen[1]["result"]["content"][0]["text"] = seen[1]["result"]["content"][0]["text"].replace(memory, "<m>")
            results.append(seen)
        assert results[0] == results[1]
        assert results[0][1]["result"]["isError"] is True
    assert fast[1].ids == [2, 3]  # not the destructive call


async def cancelled_call(base: str, bearer: str, sid: str) -> tuple[float, list[dict[str, Any]]]:
    """A slow call cancelled by the client half a second in: how long its headers took, and its messages."""
    call = rpc(11, "tools/call", {"name": "slow_echo", "arguments": {"sleep": 3}})
    async with httpx.AsyncClient(base_url=base, timeout=20) as http:
        started = time.monotonic()
        async with (
            http.stream("POST", "/mcp", content=call, headers=headers(bearer, sid)) as stream,
            anyio.create_task_group() as tg,
        ):
            headers_after = time.monotonic() - started

            async def cancel() -> None:
                await anyio.sleep(max(0.0, 1.5 - headers_after))
                note = rpc(None, "notifications/cancelled", {"requestId": 11, "reason": "changed my mind"})
                async with httpx.AsyncClient(base_url=base, timeout=10) as other:
                    assert (await other.post("/mcp", content=note, headers=headers(bearer, sid))).status_code == 202

            tg.start_soon(cancel)
            body = await stream.aread()
    return headers_after, messages_of(body.replace(b": ping", b""))


async def test_a_call_the_client_cancels_is_answered_as_the_sdk_answers_it(
    fast: tuple[str, Counted], plain: str
) -> None:
    async with both(fast, plain, "canceller") as (on_fast, on_plain):
        load = rpc(2, "tools/call", {"name": "load_toolset", "arguments": {"name": "plugins"}})
        (await on_fast.post(load)).same_as(await on_plain.post(load))
        here_took, here = await cancelled_call(fast[0], on_fast.bearer, on_fast.id)
        _, there = await cancelled_call(plain, on_plain.bearer, on_plain.id)
        assert (
            here == there == [{"jsonrpc": "2.0", "id": 11, "error": {"code": -32800, "message": "Request cancelled"}}]
        )
        assert 0.9 < here_took < 1.4  # a slow call's headers leave after a second, as the SSE response's do
        after = await on_fast.post(rpc(12, "tools/call", DAY))  # the session goes on
        assert after.messages[0]["result"]["structuredContent"]["day_of_week"] == "Tuesday"
    assert fast[1].ids == [2, 11, 12]


async def test_the_session_ending_under_a_call_ends_its_stream(fast: tuple[str, Counted], plain: str) -> None:
    bodies = []
    async with both(fast, plain, "leaver") as (on_fast, on_plain):
        for side in (on_fast, on_plain):
            load = rpc(2, "tools/call", {"name": "load_toolset", "arguments": {"name": "plugins"}})
            assert (await side.post(load)).status == 200
            call = rpc(3, "tools/call", {"name": "slow_echo", "arguments": {"sleep": 3}})
            async with anyio.create_task_group() as tg:

                async def end_session(side: Session = side) -> None:
                    await anyio.sleep(0.5)
                    ended = await side.http.delete("/mcp", headers=headers(side.bearer, side.id))
                    assert ended.status_code == 200

                tg.start_soon(end_session)
                with anyio.fail_after(10):
                    answered = await side.http.post("/mcp", content=call, headers=headers(side.bearer, side.id))
            bodies.append((answered.status_code, unnumbered(answered.content.replace(b": ping", b""))))
    assert bodies[0] == bodies[1] == (200, b"id: <id>\r\ndata: \r\nretry: 1000\r\n\r\n")  # its priming event alone
    assert fast[1].ids == [2, 3]


async def test_a_list_change_reaches_the_sessions_standalone_stream(fast: tuple[str, Counted], plain: str) -> None:
    heard = []
    async with both(fast, plain, "explorer") as (on_fast, on_plain):
        for side in (on_fast, on_plain):
            sent = {**headers(side.bearer, side.id), "Accept": "text/event-stream"}
            async with side.http.stream("GET", "/mcp", headers=sent) as listening:
                assert listening.status_code == 200
                load = rpc(2, "tools/call", {"name": "load_toolset", "arguments": {"name": "memory"}})
                assert (await side.post(load)).messages[0]["result"]["isError"] is False
                with anyio.fail_after(10):
                    async for line in listening.aiter_lines():
                        if line.startswith("data: ") and line[6:].strip():  # (not the priming event)
                            heard.append(json.loads(line[6:]))
                            break
    assert heard == [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}] * 2
    assert fast[1].ids == [2]


async def test_the_audit_line_names_the_http_session(tmp_path: Path, fast: tuple[str, Counted]) -> None:
    async with session(fast[0], token(sub="audited")) as on_fast:
        assert (await on_fast.post(rpc(5, "tools/call", DAY))).status == 200
        log = tmp_path / "data" / "audit" / "tool-calls.jsonl"
        lines: list[dict[str, Any]] = []

        def written() -> bool:
            lines[:] = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
            return any(line.get("request_id") == "5" and line.get("event") == "tool_result" for line in lines)

        await eventually(written)
    entry = next(line for line in lines if line.get("request_id") == "5")
    assert entry["transport"] == "http" and entry["session_id"] == on_fast.id and entry["user_id"] == "audited"
    assert fast[1].ids == [5]


def test_which_tools_reach_the_client() -> None:
    """`Tool.reaches_client` sends a tool's calls to the SDK: a destructive tool (the user confirms it), a device tool
    and a tool that asks the client's model; every other tool's calls may be answered here."""
    from toolsets.assistant.datetime_tools import datetime_toolset
    from toolsets.assistant.event_tools import event_toolset
    from toolsets.assistant.memory_tools import memory_toolset
    from toolsets.assistant.relay_tools import relay_toolset

    def reaches(toolset: Any, name: str) -> bool:
        tool = toolset.get(name)
        assert tool is not None, name
        return tool.reaches_client

    assert not reaches(datetime_toolset, "get_day_of_week") and not reaches(memory_toolset, "save_memory")
    assert reaches(memory_toolset, "forget_memory")  # confirmed by the user
    assert reaches(event_toolset, "get_calendar_events")  # runs on the device
    assert reaches(relay_toolset, "send_message_to_user")  # composes through sampling


def test_a_tool_that_asks_the_client_says_so() -> None:
    """`Tool.asks_client` is what tells `reaches_client` about sampling: every tool whose function reaches for
    `ctx.composer` declares it (and only those)."""
    import inspect

    from toolsets.profiles import assistant_toolsets

    tools = {tool.name: tool for toolset in assistant_toolsets().values() for tool in toolset}
    uses = {name for name, tool in tools.items() if "composer" in inspect.getsource(tool.function)}
    assert uses == {name for name, tool in tools.items() if tool.asks_client} == {"send_message_to_user"}


async def test_other_server_middleware_sees_the_calls_taken_here(fast: tuple[str, Counted], plain: str) -> None:
    """With a middleware of its own in the server's chain (an OpenTelemetry span, say), a call answered here still
    goes through the whole chain, as the SDK's runner runs it."""
    seen: list[str] = []

    async def watching(ctx: Any, call_next: Any) -> Any:
        seen.append(ctx.method)
        return await call_next(ctx)

    fast[1].server.middleware.insert(0, watching)
    async with both(fast, plain, "watched") as (on_fast, on_plain):
        call = rpc(4, "tools/call", DAY)
        (await on_fast.post(call)).same_as(await on_plain.post(call))
    assert fast[1].ids == [4] and fast[1].direct == [] and seen.count("tools/call") == 1


async def test_a_client_that_walks_away_from_a_slow_call_leaves_the_session_usable(
    fast: tuple[str, Counted], plain: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    async with both(fast, plain, "walker") as (on_fast, on_plain):
        for side in (on_fast, on_plain):
            load = rpc(2, "tools/call", {"name": "load_toolset", "arguments": {"name": "plugins"}})
            assert (await side.post(load)).status == 200
            slow = rpc(3, "tools/call", {"name": "slow_echo", "arguments": {"sleep": 1.5}})
            async with httpx.AsyncClient(base_url=str(side.http.base_url), timeout=10) as leaving:
                with anyio.move_on_after(0.3):  # gone before the answer: the connection is closed under the call
                    await leaving.post("/mcp", content=slow, headers=headers(side.bearer, side.id))
            await anyio.sleep(1.6)  # the abandoned call ends meanwhile, its answer written to nobody
            after = await side.post(rpc(4, "tools/call", DAY))
            assert after.messages[0]["result"]["structuredContent"]["day_of_week"] == "Tuesday"
    assert fast[1].ids == [2, 3, 4]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text  # this process: the fast app


async def replayed(side: Session, last_event_id: str) -> list[dict[str, Any]]:
    """The messages a GET with `Last-Event-ID` replays (read until the first one, or a second)."""
    sent = {**headers(side.bearer, side.id), "Accept": "text/event-stream", "Last-Event-ID": last_event_id}
    found: list[dict[str, Any]] = []
    with anyio.move_on_after(2):
        async with side.http.stream("GET", "/mcp", headers=sent) as stream:
            assert stream.status_code == 200
            async for line in stream.aiter_lines():
                if line.startswith("data: ") and line[6:].strip():
                    found.append(json.loads(line[6:]))
                    break
    return found


@pytest.mark.parametrize("tool", [DAY, {"name": "slow_echo", "arguments": {"sleep": 0}}], ids=["builtin", "plugin"])
async def test_a_reconnecting_client_gets_what_its_stream_missed(
    fast: tuple[str, Counted], plain: str, tool: dict[str, Any]
) -> None:
    """Every POST stream starts with a priming event (an id, `retry`); a GET with `Last-Event-ID` replays the events
    after it, on the lean path and the SDK's alike, and an id from another session replays nothing."""
    call = rpc(41, "tools/call", tool)
    async with both(fast, plain, "alice") as sides, session(fast[0], token(sub="alice")) as other:
        for side in sides:
            answer = await side.post(call)
            priming = answer.raw.split(b"\r\n\r\n")[0].decode()
            assert priming.startswith("id: ") and priming.endswith("retry: 1000"), answer.raw
            event_id = priming.split("\r\n")[0][4:]
            again = await replayed(side, event_id)
            assert [m.get("id") for m in again] == [41] and again[0]["result"] == answer.messages[0]["result"]
        assert await replayed(other, event_id) == []
    assert fast[1].ids.count(41) == 1  # the lean path answered (and kept) the call on the fast server
