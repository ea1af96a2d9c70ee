"""POST /api/v1/agent/tool-message and GET /api/v1/agent/rpc-stream over real HTTP on 127.0.0.1:
every refusal is a 4xx with a JSON-RPC error body and leaves the pending call as it was."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bridge.pending import PendingCall
from server.http.asgi_app import build_http_app, http_deployment
from tests.support import SECRET, serve_in_process, settings, token

pytestmark = pytest.mark.anyio


@pytest.fixture
async def shim(tmp_path: Path) -> AsyncIterator[tuple[str, Any]]:
    configured = settings(jwt_secret=SECRET, data_dir=tmp_path / "data")
    deployment = http_deployment(configured)
    app = build_http_app(configured, deployment=deployment)
    bridge = deployment.bridge
    async with serve_in_process(app) as base:
        yield base, bridge


def pending(call_id: str = "call_1", user: str = "alice", **extra: Any) -> PendingCall:
    return PendingCall(call_id=call_id, tool_name="get_permission_status", method="permissions.getStatus",
                       params={"permission": "calendar.read"}, user_id=user, **extra)  # fmt: skip


def auth(sub: str = "alice") -> dict[str, str]:
    return {"Authorization": f"Bearer {token(sub=sub)}"}


GOOD = {"jsonrpc": "2.0", "id": "call_1", "result": {"status": "granted"}}


async def post(base: str, body: Any, headers: dict[str, str] | None = None) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    async with httpx.AsyncClient() as client:
        return await client.post(f"{base}/api/v1/agent/tool-message", content=content, headers=headers or {})


@pytest.mark.parametrize(
    ("case", "body", "headers", "status", "code"),
    [
        ("no token", GOOD, {}, 401, -32000),
        ("bad token", GOOD, {"Authorization": "Bearer nope"}, 401, -32000),
        ("stranger", GOOD, "bob", 404, -32003),
        ("unknown id", {**GOOD, "id": "call_unknown"}, "alice", 404, -32003),
        ("not json", b"{oops", "alice", 400, -32700),
        ("not a response", {"jsonrpc": "2.0", "id": "call_1", "method": "x"}, "alice", 400, -32600),
        ("both result and error", {**GOOD, "error": {"code": 1, "message": "m"}}, "alice", 400, -32600),
        ("fails validation", {**GOOD, "result": {"status": "sometimes"}}, "alice", 422, -32602),
        ("too large", {**GOOD, "result": {"status": "granted", "pad": "x" * 300_000}}, "alice", 413, -32005),
    ],
)
async def test_refusals_change_nothing(
    shim: tuple[str, Any], case: str, body: Any, headers: Any, status: int, code: int
) -> None:
    base, bridge = shim
    await bridge.backend.create(pending())
    response = await post(base, body, auth(headers) if isinstance(headers, str) else headers)
    assert response.status_code == status, (case, response.text)
    payload = response.json()
    assert payload["jsonrpc"] == "2.0" and payload["error"]["code"] == code
    assert "Traceback" not in response.text
    assert await bridge.pending_call("call_1") is not None  # the pending call is intact
    if status == 401:
        assert "www-authenticate" in response.headers


async def test_answer_once_then_second_answer_is_a_conflict(shim: tuple[str, Any]) -> None:
    base, bridge = shim
    await bridge.backend.create(pending())
    first = await post(base, GOOD, auth())
    second = await post(base, GOOD, auth())
    assert first.status_code == 200 and first.json() == {"jsonrpc": "2.0", "id": "call_1", "result": {"accepted": True}}
    assert second.status_code == 409 and second.json()["error"]["code"] == -32004
    assert await bridge.pending_call("call_1") is None
    assert await bridge.backend.take_result("call_1") == GOOD


async def test_device_errors_are_accepted_answers(shim: tuple[str, Any]) -> None:
    base, bridge = shim
    await bridge.backend.create(pending())
    body = {"jsonrpc": "2.0", "id": "call_1",
            "error": {"code": -32010, "message": "PermissionRequired",
                      "data": {"requiredPermission": "calendar.read", "canPromptAgain": True}}}  # fmt: skip
    assert (await post(base, body, auth())).status_code == 200


async def test_expired_call_is_unknown(shim: tuple[str, Any]) -> None:
    base, bridge = shim
    await bridge.backend.create(pending(created_at=time.time() - 3601))
    response = await post(base, GOOD, auth())
    assert response.status_code == 404


async def test_rpc_stream_needs_a_token_and_replays_pending_calls(shim: tuple[str, Any]) -> None:
    base, bridge = shim
    async with httpx.AsyncClient(timeout=10) as client:
        assert (await client.get(f"{base}/api/v1/agent/rpc-stream")).status_code == 401
        await bridge.backend.create(pending("call_waiting"))
        await bridge.backend.create(pending("call_bobs", user="bob"))
        async with client.stream("GET", f"{base}/api/v1/agent/rpc-stream", headers=auth()) as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            events = []
            async for line in stream.aiter_lines():
                if line.startswith("data: "):
                    events.append(json.loads(line[6:]))
                    break
            assert await bridge.backend.online("alice")
    envelope = events[0]
    assert envelope["custom_type"] == "agent-rpc"
    request = json.loads(envelope["data"])
    assert request == {"jsonrpc": "2.0", "id": "call_waiting", "method": "permissions.getStatus",
                       "params": {"permission": "calendar.read"}}  # fmt: skip
