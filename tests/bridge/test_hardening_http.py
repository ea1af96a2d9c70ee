"""Hostile HTTP input, over real HTTP on 127.0.0.1: rebinding on every route, deep or broken bodies,
loosely typed device answers, guest tokens on device routes, per-user caps, streams that outlive
their token, and a foreign Host on /sse."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from starlette.routing import Mount, Route

from bridge.pending import PendingCall
from server.http.asgi_app import build_http_app, http_deployment
from tests.support import SECRET, http_server_process, serve_in_process, settings, token

pytestmark = pytest.mark.anyio

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def walk(routes: list[Any], prefix: str = "") -> Iterator[str]:
    for route in routes:
        if isinstance(route, Mount):
            children = list(route.routes or [])
            if children:
                yield from walk(children, prefix + route.path)
            else:
                yield prefix + route.path + "/"
        elif isinstance(route, Route) or hasattr(route, "path"):
            yield prefix + route.path


async def test_every_route_refuses_a_foreign_host_and_origin(tmp_path: Path) -> None:
    app = build_http_app(settings(transport="http", data_dir=tmp_path / "data"))  # loopback, no secret
    paths = sorted(set(walk(list(app.routes))))
    assert {"/mcp", "/sse", "/messages/", "/notification-safe/mcp", "/healthz"} <= set(paths)
    assert {"/api/v1/agent/rpc-stream", "/api/v1/agent/tool-message"} <= set(paths)
    async with serve_in_process(app) as base, httpx.AsyncClient(timeout=5) as client:
        port = base.rsplit(":", 1)[1]
        for path in paths:
            for method in ("GET", "POST"):
                rebound = await client.request(method, f"{base}{path}", headers={"Host": f"evil.example:{port}"})
                assert rebound.status_code == 421, (method, path, rebound.status_code)
                foreign = await client.request(method, f"{base}{path}", headers={"Origin": "http://evil.example"})
                assert foreign.status_code == 403, (method, path, foreign.status_code)
        assert (await client.get(f"{base}/healthz")).status_code == 200  # a local Host still works


@pytest.fixture
async def shim(tmp_path: Path) -> AsyncIterator[tuple[str, Any]]:
    configured = settings(
        jwt_secret=SECRET, data_dir=tmp_path / "data", max_sessions_per_user=3, max_device_streams_per_user=2
    )
    deployment = http_deployment(configured)
    app = build_http_app(configured, deployment=deployment)
    async with serve_in_process(app) as base:
        yield base, deployment.bridge


def auth(sub: str = "alice", **claims: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {token(sub=sub, **claims)}"}


CALLS = {
    "interaction.confirm": ("confirm_interaction", {"title": "t", "message": "m"}),
    "calendar.getEvents": ("get_calendar_events", {"startDate": "2026-03-09", "endDate": "2026-03-15"}),
    "permissions.getStatus": ("get_permission_status", {"permission": "calendar.read"}),
}


async def pend(bridge: Any, method: str, call_id: str = "call_1", user: str = "alice") -> None:
    tool, params = CALLS[method]
    await bridge.backend.create(
        PendingCall(call_id=call_id, tool_name=tool, method=method, params=params, user_id=user)
    )


async def post(base: str, body: Any, headers: dict[str, str]) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    async with httpx.AsyncClient(timeout=10) as client:
        return await client.post(f"{base}/api/v1/agent/tool-message", content=content, headers=headers)


def answer(result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": "call_1", "result": result}


def event(start: str, end: str = "2026-03-10T11:00:00+09:00") -> dict[str, Any]:
    return {"events": [{"id": "e1", "title": "x", "start": {"dateTime": start}, "end": {"dateTime": end}}]}


@pytest.mark.parametrize(
    ("method", "body", "status", "code"),
    [
        ("interaction.confirm", b"[" * 1000, 400, -32700),
        ("interaction.confirm", b'{"a": ' * 20_000, 400, -32700),
        ("interaction.confirm", b'{"jsonrpc":"2.0","id":"call_1","result":{"confirmed":"\xff"}}', 400, -32700),
        ("interaction.confirm", {"jsonrpc": "2.0", "id": 1.0, "result": {"confirmed": True}}, 400, -32600),
        ("interaction.confirm", {"jsonrpc": "2.0", "id": True, "result": {"confirmed": True}}, 400, -32600),
        ("interaction.confirm", {"jsonrpc": "2.0", "id": "call_1", "result": {"confirmed": "yes"}}, 422, -32602),
        ("interaction.confirm", {"jsonrpc": "2.0", "id": "call_1", "result": {"confirmed": 1}}, 422, -32602),
        ("interaction.confirm", {"jsonrpc": "2.0", "id": "call_1", "result": {"confirmed": "on"}}, 422, -32602),
        ("calendar.getEvents", {"jsonrpc": "2.0", "id": "call_1", "result": event("not-a-date")}, 422, -32602),
        (
            "calendar.getEvents",
            answer(event("2026-02-30T10:00:00Z")),
            422,
            -32602,
        ),
        ("calendar.getEvents", {"jsonrpc": "2.0", "id": "call_1", "result": event("2026-03-10T10:00:00")}, 422, -32602),
        ("permissions.getStatus", {"jsonrpc": "2.0", "id": "call_1", "result": {"status": 1}}, 422, -32602),
    ],
)
async def test_malformed_or_loose_answers_are_refused_and_the_call_stays_pending(
    shim: tuple[str, Any], method: str, body: Any, status: int, code: int
) -> None:
    base, bridge = shim
    await pend(bridge, method)
    response = await post(base, body, auth())
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert await bridge.pending_call("call_1") is not None


async def test_real_answers_are_still_accepted(shim: tuple[str, Any]) -> None:
    base, bridge = shim
    await pend(bridge, "calendar.getEvents")
    whole_day = event("2026-03-10", "2026-03-11")
    accepted = await post(base, {"jsonrpc": "2.0", "id": "call_1", "result": whole_day}, auth())
    assert accepted.status_code == 200, accepted.text


async def test_device_routes_refuse_a_guest_token_for_a_members_sub(shim: tuple[str, Any]) -> None:
    base, bridge = shim
    await pend(bridge, "interaction.confirm")
    guest = {"Authorization": f"Bearer {token(sub='alice', role='guest')}"}
    no_role = {"Authorization": f"Bearer {token(sub='alice', role=None)}"}
    for headers in (guest, no_role):
        answered = await post(base, {"jsonrpc": "2.0", "id": "call_1", "result": {"confirmed": True}}, headers)
        assert answered.status_code == 403 and answered.json()["error"]["code"] == -32007
        async with httpx.AsyncClient(timeout=5) as client:
            stream = await client.get(f"{base}/api/v1/agent/rpc-stream", headers=headers)
        assert stream.status_code == 403
    assert await bridge.pending_call("call_1") is not None


async def open_session(client: httpx.AsyncClient, base: str, sub: str) -> httpx.Response:
    return await client.post(f"{base}/mcp", json=INIT, headers={**ACCEPT, **auth(sub)})


async def test_one_user_cannot_take_every_session(shim: tuple[str, Any]) -> None:
    base, _ = shim
    async with httpx.AsyncClient(timeout=10) as client:
        opened = [await open_session(client, base, "alice") for _ in range(3)]
        assert all(r.status_code == 200 for r in opened)
        refused = await open_session(client, base, "alice")
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) > 0
        assert "limit 3" in refused.json()["error"]["message"]
        assert (await open_session(client, base, "bob")).status_code == 200  # others are never refused
        # closing one of alice's sessions frees a slot
        sid = opened[0].headers["mcp-session-id"]
        closed = await client.delete(f"{base}/mcp", headers={**ACCEPT, **auth("alice"), "mcp-session-id": sid})
        assert closed.status_code in (200, 204)
        assert (await open_session(client, base, "alice")).status_code == 200


async def test_device_streams_are_capped_per_user(shim: tuple[str, Any]) -> None:
    base, _ = shim
    url = f"{base}/api/v1/agent/rpc-stream"
    async with (
        httpx.AsyncClient(timeout=10) as client,
        client.stream("GET", url, headers=auth()) as one,
        client.stream("GET", url, headers=auth()) as two,
    ):
        assert one.status_code == 200 and two.status_code == 200
        third = await client.get(url, headers=auth())
        assert third.status_code == 429 and "retry-after" in third.headers
        async with client.stream("GET", url, headers=auth("bob")) as bobs:
            assert bobs.status_code == 200


async def test_a_device_stream_closes_when_its_token_expires(shim: tuple[str, Any]) -> None:
    base, _ = shim
    headers = {"Authorization": f"Bearer {token(sub='alice', exp=int(time.time()) + 2)}"}
    lines: list[str] = []
    async with httpx.AsyncClient(timeout=10) as client:
        with anyio.fail_after(8):
            async with client.stream("GET", f"{base}/api/v1/agent/rpc-stream", headers=headers) as stream:
                assert stream.status_code == 200
                async for line in stream.aiter_lines():
                    lines.append(line)
    assert 'data: {"reason":"token_expired"}' in lines


def test_a_foreign_host_on_sse_is_refused_without_a_traceback(tmp_path: Path) -> None:
    with http_server_process("--log-level", "DEBUG", stderr_path=tmp_path / "stderr") as (base, _, log):
        refused = httpx.get(f"{base}/sse", headers={"Host": "evil.example"}, timeout=5)
        assert refused.status_code == 421
    assert "Traceback" not in log.read_text(errors="replace")
