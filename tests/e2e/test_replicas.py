"""Two real server processes sharing one Redis: a call on A answered by a device connected to B,
and a 2026-07-28 elicitation round sealed by A accepted by B (shared TRULOOP_STATE_KEYS)."""

from __future__ import annotations

import contextlib
import functools
import secrets
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import mcp.types as types
import pytest

from bridge.device import DeviceSimulator
from tests.support import MODES, SECRET, answering, child_env, mcp_client, spawn_http_server, token

CALENDAR = {"notification_message": "Reading your calendar", "start_date": "2026-03-09T00:00:00+09:00",
            "end_date": "2026-03-15T23:59:59+09:00"}  # fmt: skip


@pytest.fixture
def replicas(redis_url: str, redis_prefix: str, tmp_path: Path) -> Iterator[tuple[str, str]]:
    env = child_env(
        TRULOOP_JWT_SECRET=SECRET,
        REDIS_URL=redis_url,
        TRULOOP_REDIS_PREFIX=redis_prefix,
        TRULOOP_STATE_KEYS="replica-shared-state-key-" + "k" * 24,
    )
    with contextlib.ExitStack() as stack:
        a = stack.enter_context(spawn_http_server("--data-dir", str(tmp_path / "a"), env=env))
        b = stack.enter_context(spawn_http_server("--data-dir", str(tmp_path / "b"), env=env))
        yield a, b


@pytest.mark.anyio
@MODES
async def test_call_on_a_device_on_b(replicas: tuple[str, str], mode: str) -> None:
    a, b = replicas
    user = "user-" + secrets.token_hex(4)
    async with httpx.AsyncClient() as http:
        assert (await http.get(f"{a}/healthz")).json()["redis"] == "ok"
    device = DeviceSimulator(b, token(sub=user))
    async with anyio.create_task_group() as tg:
        tg.start_soon(functools.partial(device.run, reconnect=False))
        with anyio.fail_after(5):
            await device.connected.wait()
        async with mcp_client(a, token(sub=user), mode=mode) as client:
            result = await client.call_tool("get_calendar_events", CALENDAR)
        tg.cancel_scope.cancel()
    assert not result.is_error, result.content
    events = result.structured_content["events"]  # type: ignore[index]
    assert events and {"id", "title", "start", "end"} <= set(events[0])
    requests = [r for r in device.received if r.get("method") == "calendar.getEvents"]
    assert len({r["id"] for r in requests}) == 1
    assert requests[0]["params"] == {"startDate": "2026-03-09T00:00:00+09:00", "endDate": "2026-03-15T23:59:59+09:00"}
    assert [a["status"] for a in device.answered] == [200]


@pytest.mark.anyio
async def test_elicitation_round_sealed_on_a_is_accepted_on_b(replicas: tuple[str, str]) -> None:
    a, b = replicas
    user = "user-" + secrets.token_hex(4)
    bearer = token(sub=user)
    args = {"notification_message": "Checking", "permission": "location"}
    declares = {"elicitation_callback": answering("accept", {"status": "granted"})}
    async with mcp_client(a, bearer, **declares) as on_a:
        first = await on_a.session.call_tool("get_permission_status", args, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult)
    key = next(iter(first.input_requests))
    answer = {key: types.ElicitResult(action="accept", content={"status": "restricted"})}
    async with mcp_client(b, bearer, **declares) as on_b:
        second = await on_b.session.call_tool(
            "get_permission_status", args, input_responses=answer, request_state=first.request_state,
            allow_input_required=True,
        )  # fmt: skip
        stranger = mcp_client(b, token(sub="someone-else"), **declares)
    assert isinstance(second, types.CallToolResult) and second.structured_content == {"status": "restricted"}
    async with stranger as other:  # the sealed state is bound to its principal
        with pytest.raises(Exception, match="requestState"):
            await other.session.call_tool(
                "get_permission_status", args, input_responses=answer, request_state=first.request_state,
                allow_input_required=True,
            )  # fmt: skip
