"""Choosing, per call, who answers a deferred tool: the user's device (agent-rpc), the MCP client
by elicitation, or nobody (a clear error naming the missing route).

Whichever route answered, the outcome reads the same to the model: a device's -32001/-32002/-32010
and an elicitation's decline/cancel become the same tool errors.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any, Protocol

from pydantic import ValidationError

from bridge.elicitation import CannotAsk, McpAsker
from bridge.jsonrpc import RpcResponse
from bridge.pending import PendingCall
from bridge.service import DeviceBridge, DeviceTimeout, DeviceUnreachable, PendingLost, Progress, no_progress
from toolsets.core.call_notes import DeferredRoute
from toolsets.core.context import DeferredCall
from toolsets.core.deferred import DeviceMethod, device_result
from toolsets.core.device_answer import DeviceError, canceled, denied, device_answer
from toolsets.core.errors import CallCancelled, ErrorCode, InputRequired, ToolError
from toolsets.core.tool import Tool
from toolsets.words.catalog import caller_locale

logger = logging.getLogger("truloop.deferred")


def from_device(tool: Tool, response: RpcResponse) -> dict[str, Any]:
    error = response.error
    found = None if error is None else DeviceError(error.code, error.message, error.data)
    return device_answer(tool, response.result, found)


class DeviceCalls(Protocol):
    """How a call reaches the device and comes back with its answer: `DeviceBridge.call_device` waits for it; an MCP
    task's (server/tasks/ports.py) sends it and leaves the answer to finish the task."""

    async def __call__(self, call: PendingCall, *, give_up_after: float, progress: Progress) -> RpcResponse: ...


class DeferredRouter:
    """The `DeferredResolver` port for one MCP tool call."""

    def __init__(
        self,
        bridge: DeviceBridge | None,
        asker: McpAsker | None,
        *,
        timeout: float,
        progress: Progress = no_progress,
        stdio: bool = False,
        device_calls: DeviceCalls | None = None,
    ) -> None:
        """`stdio`: the server runs over stdio, so it has no socket a device could connect to. `device_calls`: how a
        call reaches the device (default: the bridge's, waiting for the answer)."""
        self._stdio = stdio
        self._device_calls = device_calls
        self._bridge = bridge
        self._asker = asker
        self._timeout = timeout
        self._progress = progress

    async def resolve(self, call: DeferredCall) -> Any:
        device = call.tool.device
        if device is None:
            raise ToolError(f"{call.tool_name} declares no device method.", code=ErrorCode.NO_ROUTE)
        bridge_problem = None
        if self._bridge is not None:
            try:
                if await self._bridge.reachable(call.caller.user_id):
                    return await self._via_device(device, call)
            except (ToolError, InputRequired, CallCancelled):  # (an MCP task's call, sent: InputRequired)
                raise
            except DeviceUnreachable:
                logger.info("no channel took %s for %s; trying the MCP client", call.tool_name, call.caller.user_id)
            except Exception as exc:  # Redis (or another backend) is unreachable
                logger.warning("device bridge unavailable: %s", type(exc).__name__)
                bridge_problem = exc
        answer = await self._via_elicitation(device, call)
        if answer is not None:
            return answer
        note_route(call, "none")
        if bridge_problem is not None:
            raise ToolError(
                f"{call.tool_name} runs on the user's device, but the device bridge's shared store (Redis) is "
                "unreachable right now; try again shortly.",
                code=ErrorCode.BRIDGE_UNAVAILABLE,
                retryable=True,
            )
        raise ToolError(self._no_route(device, call), code=ErrorCode.NO_ROUTE)

    def _no_route(self, device: DeviceMethod, call: DeferredCall) -> str:
        """What is missing, and what the user can do about it where this server runs."""
        can_ask = device.form is not None
        missing = f"{call.tool_name} runs on the user's device, and no route to it is available: "
        if self._stdio:
            return (
                missing
                + "this server runs over stdio, so no device can connect to it; "
                + (
                    "use an MCP client that supports elicitation (for confirm_interaction / get_permission_status), or "
                    if can_ask
                    else ""
                )
                + "serve over HTTP instead (`truloop-mcp --transport http`, with your MCP host pointed at its /mcp "
                "URL) and connect the app or `python -m bridge.device` to it."
            )
        return (
            missing
            + f"no device of user {call.caller.user_id!r} is connected to GET /api/v1/agent/rpc-stream"
            + (
                ", and this MCP client did not declare elicitation. Connect the app (or `python -m bridge.device`), "
                "or use a client that supports elicitation."
                if can_ask
                else ". Connect the app (or `python -m bridge.device`) and try again."
            )
        )

    async def _via_device(self, device: DeviceMethod, call: DeferredCall) -> dict[str, Any]:
        assert self._bridge is not None
        note_route(call, "device")
        pending = PendingCall(
            call_id="call_" + secrets.token_urlsafe(12),
            tool_name=call.tool_name,
            method=device.method,
            params=device.wire_params(call.arguments),
            notification_message=call.notification_message,
            user_id=call.caller.user_id,
            locale=caller_locale(call.caller),
            channel="sendbird" if self._bridge.extra_channel is not None else "rpc-stream",
        )
        try:
            calls = self._device_calls or self._bridge.call_device
            response = await calls(pending, give_up_after=self._timeout, progress=self._progress)
        except PendingLost:
            raise ToolError(
                f"The request for {call.tool_name} was lost: the device bridge's shared store (Redis) restarted "
                "while it waited. Nothing was answered; try again.",
                code=ErrorCode.BRIDGE_UNAVAILABLE,
                retryable=True,
            ) from None
        except DeviceTimeout:
            raise ToolError(
                f"The user's device did not answer {call.tool_name} within {self._timeout:g} s; the request was "
                "withdrawn. Try again when the user has the app open.",
                code=ErrorCode.TIMEOUT,
                retryable=True,
            ) from None
        return from_device(call.tool, response)

    async def _via_elicitation(self, device: DeviceMethod, call: DeferredCall) -> dict[str, Any] | None:
        if device.form is None or self._asker is None:
            return None
        form = device.form(call.arguments, caller_locale(call.caller))
        note_route(call, "elicitation")
        try:
            answer = await self._asker.ask(f"truloop/deferred/{call.tool_name}", form.message, form.schema)
        except CannotAsk:
            return None
        if answer.action == "decline":
            raise denied(call.tool_name, "in the form their MCP host showed")
        if answer.action == "cancel":
            raise canceled(call.tool_name)
        try:
            return device_result(call.tool, answer.content or {}).model_dump(mode="json")
        except ValidationError:
            raise ToolError(
                f"The answer to {call.tool_name} was not understood; ask again.", code=ErrorCode.VALIDATION
            ) from None


def note_route(call: DeferredCall, route: DeferredRoute) -> None:
    """Who answered, on the call's notes (its audit line and span say so)."""
    if call.notes is not None:
        call.notes.deferred_route = route
