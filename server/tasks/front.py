"""MCP tasks on the wire, in both eras: which `tools/call` becomes a task, and the `tasks/*` methods.

A call becomes a task when its tool allows it (`Tool.task_support`, published as `execution.taskSupport`) and the
client asks for one: on 2026-07-28 by declaring the `io.modelcontextprotocol/tasks` extension in the request's own
client capabilities; on a 2025-11-25 session by sending `params.task`. Any other call runs as it always did, except a
tool that runs only as a task: -32021 with the extension in `requiredCapabilities` (2026-07-28), -32601 (2025-11-25).

| method | 2026-07-28 | 2025-11-25 |
|---|---|---|
| `tasks/get` | the task with its result, error or questions | the task |
| `tasks/update` | the client's answers; `{}` | -32601 |
| `tasks/cancel` | `{}`, also for a finished task | the cancelled task; -32602 for a finished one |
| `tasks/result` | -32601 | waits until the task ends: the call's result, with the related-task `_meta` |
| `tasks/list` | -32601 | the caller's tasks, in pages |

A task keeps the arguments as the tool's input model validated them, unknown keys dropped (arguments the tool refuses
get the call's own validation refusal, and no task); a task too large to keep (64 KiB) is -32602, one past the
caller's bounds (unfinished tasks, 16 MiB of records) -32600, each saying so and nothing kept
(toolsets/infra/store/tasks/).

A task is its maker's: another caller's id, an unknown one and an expired one are all -32602. On 2026-07-28 a
`tasks/*` request from a client that did not declare the extension is -32021, and its `Mcp-Name` header, when sent,
must be the task id (-32020).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import mcp.types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import HEADER_MISMATCH, METHOD_NOT_FOUND
from pydantic import BaseModel, Field

from bridge.pending import CALL_TTL_SECONDS
from server.mcp.call_ports import TaskStartNow
from server.mcp.call_route import untasked
from server.mcp.protocol_era import is_modern
from server.sdk_compat import connection_of
from server.tasks.client_flags import flags_of
from server.tasks.engine import Live, TaskStart
from server.tasks.wire import (
    EXTENSION,
    created,
    declares_tasks,
    detailed,
    error_of,
    outcome,
    task_fields,
)
from toolsets.admission.kinds import RequestKind
from toolsets.infra.store.tasks import TaskRefused, TaskTooLargeError

if TYPE_CHECKING:
    from server.mcp.mcp_server import TruloopMCP
    from server.tasks.engine import TaskEngine
    from toolsets.core.tool import Tool
    from toolsets.infra.store.tasks import TaskRecord

logger = logging.getLogger("truloop.tasks")

MAX_TTL_MS = CALL_TTL_SECONDS * 1000  # a task lives as long as a device call may wait for its answer
MIN_TTL_MS = 1000
POLL_INTERVAL_MS = 500
HANDSHAKE_WITH_TASKS = "2025-11-25"


class TaskIdParams(types.RequestParams):
    task_id: str = Field(alias="taskId", min_length=1, max_length=200)


class TaskUpdateParams(TaskIdParams):
    input_responses: dict[str, Any] = Field(default_factory=dict, alias="inputResponses")


class TaskFront(Extension):
    """The tasks extension (`MCPServer(extensions=[...])`): the `tasks/*` methods, and the `tools/call` interceptor
    that makes tasks of calls (with the server middleware `__call__` for the handshake era's)."""

    identifier = EXTENSION  # advertised in 2026-07-28 `server/discover` (the handshake's answer drops it)

    def __init__(self, server: TruloopMCP, engine: TaskEngine) -> None:
        self._server = server
        self._engine = engine

    def methods(self) -> Sequence[MethodBinding]:
        return (
            MethodBinding("tasks/get", TaskIdParams, self.get),
            MethodBinding("tasks/update", TaskUpdateParams, self.update),
            MethodBinding("tasks/cancel", TaskIdParams, self.cancel),
            MethodBinding("tasks/result", TaskIdParams, self.result),
            MethodBinding("tasks/list", types.PaginatedRequestParams, self.list),
        )

    # -- tools/call ----------------------------------------------------------------------------------------------

    async def intercept_tool_call(
        self, call: types.CallToolRequestParams, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        return await self._call(ctx, call.name, call.arguments or {}, call_next)

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """(A server middleware too) A handshake-era `tools/call` that asks for a task: its answer, a
        `CreateTaskResult`, is not a `CallToolResult`, which the SDK's runner checks a handshake-era interceptor's
        answer against (docs/upstream-sdk-tiers.md); a middleware's own answer is sent as it is."""
        params = ctx.params
        if ctx.method == "tools/call" and isinstance(params, dict) and not is_modern(ctx.protocol_version):
            name, arguments = params.get("name"), params.get("arguments", {})
            if isinstance(name, str) and isinstance(arguments, dict) and _asks_task(ctx, params):
                return await self._call(ctx, name, arguments, call_next)
        return await call_next(ctx)

    async def _call(
        self, ctx: ServerRequestContext[Any, Any], name: str, arguments: dict[str, Any], call_next: CallNext
    ) -> HandlerResult:
        params = ctx.params if isinstance(ctx.params, dict) else {}
        tool = self._server.caller_tool(name)
        if tool is None:
            return await call_next(ctx)
        modern = is_modern(ctx.protocol_version)
        wanted = _declares_tasks(ctx) if modern else _asks_task(ctx, params)
        support = tool.task_support
        if not wanted:  # (a task-only tool is refused on the call route, server/mcp/call_route.py)
            return await call_next(ctx)
        if support == "forbidden":
            if modern:  # the server decides: this one answers at once
                return await call_next(ctx)
            raise MCPError(code=METHOD_NOT_FOUND, message=f"{name} does not run as a task; call it without `task`.")
        kept = _kept_arguments(tool, arguments)
        if kept is None:  # refused as any call with these arguments is (the dispatcher says why); no task is made
            return await call_next(ctx)
        if modern and tool.task_starts_in_run:  # it runs while the client waits until it says where the task starts
            try:  # (the call route asks `asked_in_request` whether this call is the task's)
                return await call_next(ctx)
            except TaskStartNow as now:
                return await self._start(ctx, name, kept, modern, params, now.answers)
        return await self._start(ctx, name, kept, modern, params)

    def asked_in_request(self, ctx: ServerRequestContext[Any, Any], name: str, arguments: Any) -> bool:
        """Whether this request's call runs in the client's request as the task it asked for, until it says where the
        task starts (the case `_call` passes on to the handler): then the call route does not refuse it as task-only."""
        if not is_modern(ctx.protocol_version) or not _declares_tasks(ctx) or not isinstance(arguments, dict):
            return False
        tool = self._server.caller_tool(name)
        return (
            tool is not None
            and tool.task_support != "forbidden"
            and tool.task_starts_in_run
            and _kept_arguments(tool, arguments) is not None
        )

    async def _start(
        self,
        ctx: ServerRequestContext[Any, Any],
        name: str,
        arguments: dict[str, Any],
        modern: bool,
        params: Any,
        answers: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        server = self._server
        caller, profile = await server.surface.resolve()
        limited = await server.front_door.admit_once(caller, RequestKind.TASK)
        if limited is not None:  # past the caller's bounds: the call's answer, as any refused call's; no task
            from server.mcp.wire_forms import to_mcp_result

            return to_mcp_result(limited).model_dump(mode="json", by_alias=True, exclude_none=True)
        start = TaskStart(
            caller=caller,
            profile=profile,
            tool=name,
            arguments=arguments,
            modern=modern,
            client=flags_of(ctx.session.client_capabilities),
            ttl_ms=MAX_TTL_MS if modern else _ttl(params.get("task")),
            poll_interval_ms=POLL_INTERVAL_MS,
            request=server.request_info(ctx, profile),
            live=Live() if modern else Live(connection_of(ctx.session), server.conversation_of(ctx.session)),
            answers=answers or {},
        )
        record = await self._stored(self._engine.start(start))
        return created(record, modern=modern)  # (stamped with `serverInfo` on 2026-07-28 by the SDK's runner)

    # -- tasks/* -------------------------------------------------------------------------------------------------

    async def get(self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams) -> dict[str, Any]:
        modern = self._checked(ctx, params.task_id)
        record = await self._find(params.task_id)
        return detailed(record) if modern else task_fields(record, modern=False)

    async def update(self, ctx: ServerRequestContext[Any, Any], params: TaskUpdateParams) -> dict[str, Any]:
        if not self._checked(ctx, params.task_id):
            raise _not_found_method("tasks/update")
        owner, profile = self._owner()
        record = await self._stored(self._engine.update(owner, profile, params.task_id, params.input_responses))
        if record is None:
            raise _no_task(params.task_id)
        return {}

    async def cancel(self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams) -> dict[str, Any]:
        modern = self._checked(ctx, params.task_id)
        owner, profile = self._owner()
        record, cancelled = await self._stored(self._engine.cancel(owner, profile, params.task_id))
        if record is None:
            raise _no_task(params.task_id)
        if modern:
            return {}
        task = task_fields(record, modern=False)
        if not cancelled:
            message = f"Cannot cancel task: it has already finished (status {task['status']})."
            raise MCPError(code=types.INVALID_PARAMS, message=message)
        return task

    async def result(self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams) -> dict[str, Any]:
        if is_modern(ctx.protocol_version):
            raise _not_found_method("tasks/result")
        owner, profile = self._owner()
        record = await self._stored(self._engine.wait(owner, profile, params.task_id))
        if record is None:
            raise _no_task(params.task_id)
        error = error_of(record)
        if error is not None:
            raise MCPError(code=int(error.get("code", types.INTERNAL_ERROR)), message=str(error.get("message", "")))
        return outcome(record)

    async def list(self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None) -> Any:
        if is_modern(ctx.protocol_version):
            raise _not_found_method("tasks/list")
        owner, profile = self._owner()
        cursor = params.cursor if params is not None else None
        try:
            records, next_cursor = await self._stored(
                self._engine.list(owner, profile, cursor, self._server.pager.page_size)
            )
        except ValueError as invalid:
            raise MCPError(code=types.INVALID_PARAMS, message=str(invalid)) from None
        answer: dict[str, Any] = {"tasks": [task_fields(r, modern=False) for r in records]}
        if next_cursor is not None:
            answer["nextCursor"] = next_cursor
        return answer

    # -- shared --------------------------------------------------------------------------------------------------

    def _checked(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> bool:
        """Whether the request is 2026-07-28's (after checking it declared the extension and named the task)."""
        if not is_modern(ctx.protocol_version):
            return False
        if not _declares_tasks(ctx):
            raise untasked("tasks/*", modern=True)
        from mcp.shared.inbound import MCP_NAME_HEADER, decode_header_value

        headers = getattr(ctx.request, "headers", None)
        named = headers.get(MCP_NAME_HEADER) if headers is not None else None
        if named is not None and decode_header_value(named.strip()) != task_id:
            raise MCPError(code=HEADER_MISMATCH, message="Header mismatch: Mcp-Name does not match params.taskId")
        return True

    def _owner(self) -> tuple[str, str]:
        return self._server.surface.owner()

    async def _find(self, task_id: str) -> TaskRecord:
        owner, profile = self._owner()
        record = await self._stored(self._engine.get(owner, profile, task_id))
        if record is None:
            raise _no_task(task_id)
        return record

    @staticmethod
    async def _stored(pending: Any) -> Any:
        try:
            return await pending
        except TaskRefused as refused:
            code = types.INVALID_PARAMS if isinstance(refused, TaskTooLargeError) else types.INVALID_REQUEST
            raise MCPError(code=code, message=refused.message) from None
        except (MCPError, ValueError):
            raise
        except Exception as exc:
            logger.warning("the task store could not be reached (%s)", type(exc).__name__)
            raise MCPError(
                code=types.INTERNAL_ERROR, message="The task store is unavailable; try again shortly."
            ) from None


def _kept_arguments(tool: Tool, arguments: dict[str, Any]) -> dict[str, Any] | None:
    """The arguments a task keeps: as sent, less the keys the tool's input model does not know (None: the tool refuses
    them; the call path then refuses them as it would any call's)."""
    from toolsets.core.dispatch import validate

    if not isinstance(validate(tool, arguments), BaseModel):
        return None
    unknown = set(tool.unknown_keys(arguments))
    return {key: value for key, value in arguments.items() if key not in unknown}


def _declares_tasks(ctx: ServerRequestContext[Any, Any]) -> bool:
    return declares_tasks(ctx.session.client_capabilities)


def _asks_task(ctx: ServerRequestContext[Any, Any], params: dict[str, Any]) -> bool:
    return ctx.protocol_version >= HANDSHAKE_WITH_TASKS and isinstance(params.get("task"), dict)


def _ttl(task: Any) -> int:
    asked = task.get("ttl") if isinstance(task, dict) else None
    if isinstance(asked, int) and not isinstance(asked, bool):
        return max(MIN_TTL_MS, min(asked, MAX_TTL_MS))
    return MAX_TTL_MS


def _no_task(task_id: str) -> MCPError:
    return MCPError(code=types.INVALID_PARAMS, message="No such task (it may have expired, or it is not yours).")


def _not_found_method(method: str) -> MCPError:
    return MCPError(code=METHOD_NOT_FOUND, message=f"Method not found: {method}", data=method)
