"""The one route of every `tools/call` into the front door, whichever path brought it.

The SDK's handler (`TruloopMCP._run`), the speed paths (`server.speed.lean_path`, `server.speed.lean_http`, which
reaches the lean path, and the stdio lean front `server.stdio.lean_front`), a task's run (`server.tasks.engine`) and
a schedule's tick (`server.schedules.ticks`) all call `route_call`. What used to be decided on each path is decided
here, once:

- plainness (`plain_call`): which params a speed path may take without the SDK's checks, and the progress-token
  rule: a call with a `progressToken` is plain only on a path that can report progress;
- which tools a speed path that cannot talk back to the client may run itself (`lean_may_take`);
- the task-only refusal (`untasked`): a client's call of a tool that runs only as a task, made without asking for
  one;
- list-changed noting: a handshake-era session's call whose tools changed with it (progressive exposure) tells its
  client, through the path's own `list_changed`.

Imported by the stdio lean front before the SDK is loaded: the SDK is imported here only to refuse.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.shared.exceptions import MCPError

    from toolsets.admission.kinds import RequestKind
    from toolsets.core.context import ToolContext
    from toolsets.core.envelope import ToolResult
    from toolsets.core.tool import Tool
    from toolsets.front_door import FrontDoor

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"  # (server.tasks.wire.EXTENSION, without importing the SDK)

# -- plainness ---------------------------------------------------------------------------------------------------


def plain_call(params: Mapping[str, Any] | None, *, progress: bool) -> tuple[str, dict[str, Any]] | None:
    """(name, arguments) of `tools/call` params that need no more checking than this (`name`, `arguments` and a
    free-form `_meta`); None: let the SDK check. A `progressToken` is plain only when the path reports `progress`
    (and is then a string or an integer)."""
    if not isinstance(params, dict) or not params.keys() <= _CALL_KEYS:
        return None
    name, arguments = params.get("name"), params.get("arguments")
    if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
        return None
    if not _plain_meta(params, progress):
        return None
    return name, arguments or {}


_CALL_KEYS = frozenset({"name", "arguments", "_meta"})


def _plain_meta(params: dict[str, Any], progress: bool) -> bool:
    meta = params.get("_meta")
    if meta is None:
        return "_meta" not in params
    if not isinstance(meta, dict):
        return False
    if "progressToken" not in meta:  # other keys (a traceparent, a host's own) are free-form on these versions
        return True
    token = meta["progressToken"]
    return progress and (isinstance(token, str) or (isinstance(token, int) and not isinstance(token, bool)))


def lean_may_take(tool: Tool | None) -> bool:
    """Whether a speed path that cannot talk back to the client may run this tool's call itself: the tool needs
    nothing from the client while it runs (`Tool.reaches_client`) and does not run only as a task (the route refuses
    that, in the SDK's words). An unknown name is refused at once, asking nobody."""
    return tool is None or not (tool.reaches_client or tool.task_support == "required")


# -- the task-only refusal ---------------------------------------------------------------------------------------


def untasked(name: str, *, modern: bool) -> MCPError:
    """The refusal of a call of a tool that runs only as a task, made without asking for one."""
    from mcp.shared.exceptions import MCPError
    from mcp_types.jsonrpc import METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY

    if not modern:
        return MCPError(code=METHOD_NOT_FOUND, message=f"{name} runs only as a task: call it with `task`.")
    return MCPError(
        code=MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=(
            f"{name} runs only as a task: declare the {TASKS_EXTENSION} extension in the request's client capabilities."
        ),
        data={"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
    )


# -- the route ---------------------------------------------------------------------------------------------------


async def route_call(
    door: FrontDoor,
    ctx: ToolContext[Any],
    name: str,
    arguments: Any,
    *,
    fixed_list: bool = True,
    client: bool = True,
    kind: RequestKind | None = None,
    list_changed: Callable[[], Awaitable[None]] | None = None,
    asked_task: Callable[[], bool] | None = None,
) -> ToolResult:
    """Run one call through the door.

    `fixed_list`: the caller's list does not change with its calls (2026-07-28, a task's run, a tick); `client`: a
    client's call (a task-only tool is refused unless it asked for a task; its error says so in the era's words,
    2026-07-28 when `fixed_list`); `kind`: the admission kind when it is not a plain call's; `list_changed`: told when
    the caller's list changed with the call (a handshake-era session's); `asked_task`: whether the request asked for
    the task this call runs in until it starts (asked only of a task-only tool's call)."""
    if client:
        tool = door.toolset(ctx.request.profile or ctx.caller.role).get(name)
        if tool is not None and tool.task_support == "required" and not (asked_task is not None and asked_task()):
            raise untasked(name, modern=fixed_list)
    if list_changed is None or fixed_list:
        return await door.call(ctx, name, arguments, fixed_list=fixed_list, kind=kind)
    outcome, changed = await door.call_noting_list(ctx, name, arguments, fixed_list=False)
    if changed:
        await list_changed()
    return outcome
