"""One run of an MCP task's call: its ports to the client and to the device, made from the task's record.

A task's call may run again, on any replica, whenever something it waits for arrives (the client's answers, the
device's answer). So nothing it needs may live only in the request that made it:

- the client's answers of earlier rounds come from the record (`TaskRecord.answers`), which only the server writes;
  on 2026-07-28 a question not answered yet ends the run with the questions (the task becomes `input_required`);
  on a 2025-11-25 session that is still open the question goes out on that session, as in any call;
- a deferred tool's device call is sent once and the run ends (`Parked`); the device's answer, posted to any replica,
  is written to the record and the call runs again, finding it there (`TaskPorts.device_call`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp.types as types

from server.mcp.call_ports import CallPorts
from server.tasks.wire import RELATED_TASK
from toolsets.core.errors import InputRequired

if TYPE_CHECKING:
    from bridge.jsonrpc import RpcResponse
    from bridge.pending import PendingCall
    from bridge.service import DeviceBridge, Progress
    from toolsets.core.context import DeferredCall
    from toolsets.infra.store.tasks import TaskRecord


@dataclass(frozen=True, slots=True)
class Parked:
    """The `InputRequired` payload of a run that sent its device call and ends here; the answer runs it again."""

    call_id: str


class NoSession:
    """A run with nobody to ask inline (2026-07-28, or the session that made the task has gone)."""

    can_send_request = False


@dataclass(slots=True)
class TaskAskContext:
    """What `bridge.elicitation.McpAsker` reads of a request, for a task's run."""

    client_capabilities: types.ClientCapabilities | None
    session: Any
    request_id: Any = None
    request_state: str | None = None
    input_responses: Any = None


DeviceSent = Callable[["PendingCall"], Awaitable[None]]  # record the device call on the task (before it is sent)
Waiting = Callable[[bool], Awaitable[None]]  # the task waits for the client's answer (True) or not any more (False)


class TaskSession:
    """(2025-11-25) The session that made a task, as its run asks it: each request goes out on the connection's own
    channel (the request that made the task has been answered), carries the related-task `_meta`, and the task is
    `input_required` while the client answers."""

    def __init__(self, connection: Any, task_id: str, waiting: Waiting) -> None:
        self._connection = connection
        self._meta = {RELATED_TASK: {"taskId": task_id}}
        self._waiting = waiting

    @property
    def can_send_request(self) -> bool:
        return bool(getattr(self._connection, "has_standalone_channel", False))

    async def _ask(self, method: str, params: dict[str, Any]) -> Any:
        await self._waiting(True)
        try:
            return await self._connection.send_raw_request(method, {**params, "_meta": self._meta})
        finally:
            await self._waiting(False)

    async def elicit_form(self, message: str, schema: dict[str, Any], related_request_id: Any = None) -> Any:
        params = {"mode": "form", "message": message, "requestedSchema": schema}
        return types.ElicitResult.model_validate(await self._ask("elicitation/create", params), by_name=False)

    async def create_message(
        self, messages: Any, *, max_tokens: int, related_request_id: Any = None, **rest: Any
    ) -> Any:
        fields = {"messages": messages, "max_tokens": max_tokens, **{k: v for k, v in rest.items() if v is not None}}
        params = types.CreateMessageRequestParams.model_validate(fields)
        dumped = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        return types.CreateMessageResultWithTools.model_validate(
            await self._ask("sampling/createMessage", dumped), by_name=False
        )

    async def send_request(self, request: Any, result_type: Any, metadata: Any = None) -> Any:
        data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
        return result_type.model_validate(await self._ask(data["method"], data.get("params") or {}), by_name=False)


class TaskPorts(CallPorts):
    __slots__ = ("_record", "_sent", "_session")

    def __init__(
        self,
        record: TaskRecord,
        bridge: DeviceBridge | None,
        *,
        session: Any,
        device_sent: DeviceSent,
        timeout: float,
        stdio: bool,
    ) -> None:
        super().__init__(self._no_sdk_context, bridge, timeout=timeout, stdio=stdio)
        self._record = record
        self._session = session if session is not None else NoSession()
        self._sent = device_sent

    @staticmethod
    def _no_sdk_context() -> Any:
        raise RuntimeError("a task's run has no SDK context")  # every port below is overridden not to need one

    @property
    def asker(self) -> Any:
        if self._asker is None:
            from bridge.elicitation import McpAsker
            from server.tasks.client_flags import capabilities_of

            record = self._record
            caps = types.ClientCapabilities.model_validate(capabilities_of(record.client))
            context = TaskAskContext(client_capabilities=caps, session=self._session)
            self._asker = McpAsker(context, modern=record.modern, answers=record.answers)
        return self._asker

    def capabilities(self) -> dict[str, Any]:
        from server.tasks.client_flags import capabilities_of

        return capabilities_of(self._record.client)

    async def start_task(self) -> None:
        return None  # (already one)

    async def resolve(self, call: DeferredCall) -> Any:
        from bridge.deferred_router import DeferredRouter, from_device, note_route

        if self._record.device_answer is not None:  # (whether or not the device is still connected)
            from bridge.jsonrpc import RpcResponse

            note_route(call, "device")
            return from_device(call.tool, RpcResponse.model_validate(self._record.device_answer))

        router = DeferredRouter(
            self._bridge, self.asker, timeout=self._timeout, stdio=self._stdio, device_calls=self.device_call
        )
        return await router.resolve(call)

    async def device_call(self, call: PendingCall, *, give_up_after: float, progress: Progress) -> RpcResponse:
        """The call is sent (one call per task, however often it runs) and this run ends: its answer runs it again."""
        record = self._record
        assert self._bridge is not None
        pending = call.model_copy(
            update={
                "call_id": "task_" + record.task_id,  # the same call however often the task runs before the answer
                "task_id": record.task_id,
                "created_at": record.created_ms / 1000,
                "deadline": (record.created_ms + record.ttl_ms) / 1000,
            }
        )
        await self._sent(pending)
        await self._bridge.deliver(pending)
        raise InputRequired(Parked(pending.call_id))
