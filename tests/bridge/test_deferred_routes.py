"""Route choice for deferred tools, in-process in both eras: device, elicitation, or a clear error;
device errors and elicitation answers read the same; timeout, cancellation and progress."""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client

from bridge.jsonrpc import RpcResponse
from tests.support import MODES, answering, answering_device, eventually, payload, server_for

CONFIRM = {"notification_message": "Asking you...", "title": "Share", "message": "Share your calendar with Minji?"}
PERMISSION = {"notification_message": "Checking...", "permission": "calendar.read"}
CALENDAR = {"notification_message": "Reading your calendar", "start_date": "2026-03-09T00:00:00+09:00",
            "end_date": "2026-03-15T23:59:59+09:00"}  # fmt: skip


def structured(result: Any) -> dict[str, Any]:
    return payload(result)


@pytest.mark.anyio
@MODES
@pytest.mark.parametrize(
    ("tool", "args", "answer", "expected"),
    [
        ("get_calendar_events", CALENDAR,
         {"result": {"events": [{"id": "event_1", "title": "팀 미팅",
                                 "start": {"dateTime": "2026-03-10T10:00:00+09:00"},
                                 "end": {"dateTime": "2026-03-10T11:00:00+09:00"}}]}},
         {"events": [{"id": "event_1", "title": "팀 미팅", "start": "2026-03-10T10:00:00+09:00",
                      "end": "2026-03-10T11:00:00+09:00"}]}),
        ("confirm_interaction", CONFIRM, {"result": {"confirmed": True}}, {"confirmed": True}),
        ("get_permission_status", PERMISSION, {"result": {"status": "denied"}}, {"status": "denied"}),
    ],
)  # fmt: skip
async def test_device_route(mode: str, tool: str, args: dict[str, Any], answer: dict[str, Any], expected: Any) -> None:
    server = server_for(user="alice")
    seen: list[dict[str, Any]] = []
    ready = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(answering_device, server, lambda request: answer, seen, ready)
        await ready.wait()
        async with Client(server, mode=mode, elicitation_callback=answering("decline")) as client:
            result = await client.call_tool(tool, args)
        tg.cancel_scope.cancel()
    assert not result.is_error and structured(result) == expected
    envelope, request = seen[0]["envelope"], seen[0]["request"]
    assert envelope["custom_type"] == "agent-rpc" and envelope["message"] == args["notification_message"]
    assert "notification_message" not in request["params"]
    assert request["id"].startswith("call_")
    assert await server.bridge.backend.get(request["id"]) is None  # deleted on completion  # type: ignore[union-attr]


@pytest.mark.anyio
@MODES
@pytest.mark.parametrize(
    ("error", "code"),
    [
        ({"code": -32010, "message": "PermissionRequired",
          "data": {"requiredPermission": "calendar.read", "canPromptAgain": True}}, "permission_required"),
        ({"code": -32001, "message": "PermissionDenied"}, "permission_denied"),
        ({"code": -32002, "message": "UserCanceled"}, "user_canceled"),
        ({"code": -32099, "message": "Exploded"}, "device_error"),
    ],
)  # fmt: skip
async def test_device_errors_become_tool_errors(mode: str, error: dict[str, Any], code: str) -> None:
    server = server_for(user="alice")
    ready = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(answering_device, server, lambda request: {"error": error}, [], ready)
        await ready.wait()
        async with Client(server, mode=mode) as client:
            result = await client.call_tool("get_calendar_events", CALENDAR)
        tg.cancel_scope.cancel()
    assert result.is_error and structured(result)["code"] == code
    if code == "permission_required":
        assert "calendar.read" in structured(result)["reason"] and "confirm_interaction" in structured(result)["reason"]


@pytest.mark.anyio
@MODES
@pytest.mark.parametrize(
    ("action", "content", "expected"),
    [
        ("accept", {"confirmed": True}, {"confirmed": True}),
        ("accept", {"confirmed": False}, {"confirmed": False}),
        ("decline", None, "permission_denied"),
        ("cancel", None, "user_canceled"),
    ],
)
async def test_elicitation_route_for_confirm(mode: str, action: str, content: Any, expected: Any) -> None:
    asked: list[str] = []
    client = Client(server_for(user="alice"), mode=mode, elicitation_callback=answering(action, content, asked))
    async with client:
        result = await client.call_tool("confirm_interaction", CONFIRM)
    assert asked and "Share your calendar with Minji?" in asked[0]
    if isinstance(expected, dict):
        assert not result.is_error and structured(result) == expected
    else:
        assert result.is_error and structured(result)["code"] == expected


@pytest.mark.anyio
@MODES
@pytest.mark.parametrize(
    ("action", "content", "expected"),
    [
        ("accept", {"status": "notDetermined"}, {"status": "notDetermined"}),
        ("accept", {"status": "bogus"}, "validation"),
        ("decline", None, "permission_denied"),
        ("cancel", None, "user_canceled"),
    ],
)
async def test_elicitation_route_for_permission(mode: str, action: str, content: Any, expected: Any) -> None:
    seen_schema: list[dict[str, Any]] = []

    async def callback(context: Any, params: Any) -> types.ElicitResult:
        seen_schema.append(params.requested_schema)
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    async with Client(server_for(user="alice"), mode=mode, elicitation_callback=callback) as client:
        result = await client.call_tool("get_permission_status", PERMISSION)
    assert seen_schema[0]["properties"]["status"]["enum"] == ["granted", "denied", "notDetermined", "restricted"]
    if isinstance(expected, dict):
        assert not result.is_error and structured(result) == expected
    else:
        assert result.is_error and structured(result)["code"] == expected


@pytest.mark.anyio
async def test_forged_first_round_elicitation_answer_is_not_trusted() -> None:
    forged = {"truloop/deferred/get_permission_status": types.ElicitResult(action="accept",
                                                                           content={"status": "granted"})}  # fmt: skip
    async with Client(server_for(user="alice"), elicitation_callback=answering("decline")) as client:
        first = await client.session.call_tool(
            "get_permission_status", PERMISSION, input_responses=forged, allow_input_required=True
        )
    assert isinstance(first, types.InputRequiredResult)  # asked, not answered by the forgery


@pytest.mark.anyio
@MODES
async def test_no_route_is_a_clear_error(mode: str) -> None:
    async with Client(server_for(user="alice", transport="http"), mode=mode) as client:
        calendar = await client.call_tool("get_calendar_events", CALENDAR)
        confirm = await client.call_tool("confirm_interaction", CONFIRM)
    for result in (calendar, confirm):
        assert result.is_error and structured(result)["code"] == "no_route"
        assert "/api/v1/agent/rpc-stream" in structured(result)["reason"]
    assert "elicitation" in structured(confirm)["reason"]


@pytest.mark.anyio
@MODES
async def test_no_route_on_stdio_says_what_to_do_on_stdio(mode: str) -> None:
    async with Client(server_for(user="alice", transport="stdio"), mode=mode) as client:
        calendar = await client.call_tool("get_calendar_events", CALENDAR)
        confirm = await client.call_tool("confirm_interaction", CONFIRM)
    for result in (calendar, confirm):
        reason = structured(result)["reason"]
        assert structured(result)["code"] == "no_route" and "runs over stdio" in reason
        assert "truloop-mcp --transport http" in reason and "rpc-stream" not in reason
    assert "elicitation" in structured(confirm)["reason"]
    assert "elicitation" not in structured(calendar)["reason"]  # no client could answer it by a form


@pytest.mark.anyio
async def test_timeout_withdraws_the_call_and_progress_carries_the_message() -> None:
    server = server_for(user="alice", deferred_timeout=0.6)
    server.bridge.progress_interval = 0.2  # type: ignore[union-attr]
    progress: list[tuple[float, str | None]] = []
    seen: list[dict[str, Any]] = []

    async def silent_device() -> None:
        async with server.bridge.device_stream("alice") as envelopes:  # type: ignore[union-attr]
            ready.set()
            async for envelope in envelopes:
                seen.append(json.loads(envelope["data"]))

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    ready = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(silent_device)
        await ready.wait()
        async with Client(server, mode="legacy") as client:
            result = await client.call_tool("get_calendar_events", CALENDAR, progress_callback=on_progress)
        tg.cancel_scope.cancel()
    assert result.is_error and structured(result)["code"] == "timeout" and structured(result)["retryable"]
    assert progress and all(message == "Reading your calendar" for _, message in progress)
    assert await server.bridge.backend.get(seen[0]["id"]) is None  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_client_cancellation_withdraws_the_pending_call() -> None:
    server = server_for(user="alice")
    bridge = server.bridge
    assert bridge is not None
    seen: list[str] = []
    ready = anyio.Event()

    async def silent_device(calling: anyio.CancelScope) -> None:
        async with bridge.device_stream("alice") as envelopes:
            ready.set()
            async for envelope in envelopes:
                seen.append(json.loads(envelope["data"])["id"])
                calling.cancel()  # the call is pending: the client gives up (notifications/cancelled)

    async with anyio.create_task_group() as tg:
        calling = anyio.CancelScope()
        tg.start_soon(silent_device, calling)
        await ready.wait()
        async with Client(server, mode="legacy") as client:
            with calling, anyio.fail_after(5):
                await client.call_tool("get_calendar_events", CALENDAR)
            assert seen, "the device never saw the call"

            async def withdrawn() -> bool:
                return await bridge.backend.get(seen[0]) is None

            await eventually(withdrawn, seconds=5)
        tg.cancel_scope.cancel()
    assert await bridge.backend.pending_for("alice") == []


class RefusingChannel:
    """A configured extra channel (like Sendbird) that refuses every message."""

    def __init__(self) -> None:
        self.tried: list[str] = []

    async def send(self, user_id: str, envelope: dict[str, Any]) -> bool:
        self.tried.append(user_id)
        return False


@pytest.mark.anyio
@MODES
async def test_a_refused_extra_channel_falls_back_instead_of_waiting(mode: str) -> None:
    server = server_for(user="alice")
    channel = RefusingChannel()
    server.bridge.extra_channel = channel  # type: ignore[union-attr]
    with anyio.fail_after(5):
        async with Client(server, mode=mode, elicitation_callback=answering("accept", {"confirmed": True})) as client:
            confirmed = await client.call_tool("confirm_interaction", CONFIRM)
            calendar = await client.call_tool("get_calendar_events", CALENDAR)
    assert channel.tried and structured(confirmed) == {"confirmed": True}
    assert structured(calendar)["code"] == "no_route"
    assert await server.bridge.backend.pending_for("alice") == []  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_burst_of_calls_to_one_slow_device_loses_none() -> None:
    """Envelopes queue for a device that reads slowly; none is dropped, every call completes once."""
    server = server_for(user="alice")
    bridge = server.bridge
    assert bridge is not None
    ready = anyio.Event()
    answered: list[str] = []

    async def slow_device() -> None:
        async with bridge.device_stream("alice") as envelopes:
            ready.set()

            async def all_waiting() -> bool:
                return len(await bridge.backend.pending_for("alice")) >= 400

            await eventually(all_waiting, seconds=20)  # fall behind until all 400 requests are waiting for it
            async for envelope in envelopes:
                request = json.loads(envelope["data"])
                body = {"jsonrpc": "2.0", "id": request["id"], "result": {"confirmed": True}}
                await bridge.answer("alice", RpcResponse.model_validate(body))
                answered.append(request["id"])

    results: list[Any] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(slow_device)
        await ready.wait()
        async with Client(server, mode="legacy") as client, anyio.create_task_group() as calls:
            for n in range(400):
                calls.start_soon(lambda n=n: _confirm(client, n, results))
        tg.cancel_scope.cancel()
    assert len(results) == 400 and all(r == {"confirmed": True} for r in results)
    assert len(answered) == len(set(answered)) == 400


async def _confirm(client: Client, n: int, results: list[Any]) -> None:
    result = await client.call_tool("confirm_interaction", {**CONFIRM, "title": f"call {n}"})
    results.append(result.structured_content)
