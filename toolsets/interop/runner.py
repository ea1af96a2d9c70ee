"""Answer any framework's tool calls in-process: each goes through `dispatch` with a profile, exactly as an
MCP call does (lookup, validation, middleware, confirmation policy, deferred resolution), and comes back
as a reply in its own shape. Nothing here raises for a bad call: every failure is a reply.

    runner = runner_for(services, Caller("alice", timezone="Asia/Seoul"), "member")
    replies = await runner.reply(ai_message)   # a call, a list of calls, or an assistant message

Confirmation: nobody can be asked in-process, so `--confirm` decides as for an MCP client without
elicitation: `auto` runs a destructive tool (the calling framework is the host that approved the call),
`strict` cancels it, `off` never asks.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from toolsets.core.context import Caller, ConfirmPolicy, DeferredCall, DeferredResolver, RequestInfo, ToolContext
from toolsets.core.dispatch import dispatch
from toolsets.core.envelope import ToolErr, ToolResult
from toolsets.core.errors import ErrorCode, ToolError
from toolsets.core.toolset import AbstractToolset
from toolsets.interop.replies import frame, not_a_call, reply
from toolsets.interop.shapes import Item, ParsedCall, parse_document

if TYPE_CHECKING:
    from toolsets.services import Services

logger = logging.getLogger("truloop.interop")

ContextFactory = Callable[[ParsedCall], ToolContext[Any]]

IN_PROCESS_NO_ROUTE = (
    "nothing in this process can reach the device or ask the user. Pass a resolver (`deferred=`) that reaches "
    "the device, or use the LangGraph adapter (toolsets.interop.langgraph_tools), whose interrupt() lets the graph's "
    "owner ask the device and resume."
)


class NoDeviceRoute:
    """The `DeferredResolver` of a front that cannot reach the user's device: a `no_route` error saying so."""

    def __init__(self, why: str = IN_PROCESS_NO_ROUTE) -> None:
        self.why = why

    async def resolve(self, call: DeferredCall) -> Any:
        raise ToolError(
            f"{call.tool_name} runs on the user's device, and no route to it is available: {self.why}",
            code=ErrorCode.NO_ROUTE,
        )


class InteropRunner:
    """Runs the calls of one document concurrently (at most `concurrency` at once); replies keep their order."""

    def __init__(
        self,
        toolset: AbstractToolset,
        context: ContextFactory,
        *,
        concurrency: int = 32,
        before_first_call: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.toolset = toolset
        self.context = context
        self.concurrency = concurrency
        self._before_first_call = before_first_call
        self._prepared = before_first_call is None

    async def reply(self, document: Any) -> Any:
        """Replies to a call (one reply), a list of calls (a list) or an assistant message (its replies)."""
        parsed = parse_document(document)
        return frame(parsed, await self.reply_all(parsed.items))

    async def reply_all(self, items: Sequence[Item]) -> list[dict[str, Any]]:
        if len(items) == 1:  # the common case, without a task group or a limiter (each costs a loop iteration)
            return [await self._reply(items[0])]
        replies: list[dict[str, Any]] = [{}] * len(items)
        limiter = anyio.CapacityLimiter(self.concurrency) if len(items) > self.concurrency else None

        async def one(index: int, item: Item) -> None:
            if limiter is None:
                replies[index] = await self._reply(item)
                return
            async with limiter:
                replies[index] = await self._reply(item)

        async with anyio.create_task_group() as tg:
            for index, item in enumerate(items):
                tg.start_soon(one, index, item)
        return replies

    async def _reply(self, item: Item) -> dict[str, Any]:
        if not isinstance(item, ParsedCall):
            return not_a_call(item)
        return reply(item, await self.outcome(item))

    async def outcome(self, call: ParsedCall) -> ToolResult:
        """The envelope of one call (never raises, but for the cancellation of the surrounding task)."""
        if not self._prepared:
            await self._prepare()
        if call.bad_json is not None and self.toolset.get(call.name) is not None:
            return ToolErr(
                ErrorCode.VALIDATION,
                f"Invalid arguments for {call.name}: the arguments are not valid JSON ({call.bad_json}). "
                "Send them as a JSON object.",
            )
        arguments = {} if call.bad_json is not None else call.arguments
        return await dispatch(self.toolset, call.name, arguments, self.context(call))

    async def _prepare(self) -> None:
        # No lock: the runner may serve several event loops (a sync LangGraph runs each tool call in a loop of its
        # own), and the step is idempotent, so calls that start together may each run it.
        if self._before_first_call is not None:
            try:
                await self._before_first_call()
            except Exception:
                logger.warning("preparing the interop runner failed", exc_info=True)
        self._prepared = True


def runner_for(
    services: Services,
    caller: Caller | str,
    profile: str = "member",
    *,
    confirm_policy: ConfirmPolicy = ConfirmPolicy.AUTO,
    deferred: DeferredResolver | None = None,
    transport: str = "in-process",
    concurrency: int = 32,
) -> InteropRunner:
    """A runner for `caller` over a profile of `toolsets.profiles` (member, notification-safe, guest).

    `deferred` answers deferred tools (a resolver that reaches the device); without one they reply `no_route`.
    The caller enters the user directory on the first call, as on an MCP server.
    """
    from toolsets.assistant.directory import enter_directory
    from toolsets.profiles import profile as named_profile

    who = Caller(user_id=caller) if isinstance(caller, str) else caller
    toolset = named_profile(profile)
    resolver = deferred or NoDeviceRoute()

    def context(call: ParsedCall) -> ToolContext[Any]:
        request = RequestInfo(request_id=call.call_id, transport=transport, profile=toolset.name)
        return ToolContext(caller=who, deps=services, request=request, confirm_policy=confirm_policy, deferred=resolver)

    async def before_first_call() -> None:
        await enter_directory(services.users, who)

    return InteropRunner(toolset, context, concurrency=concurrency, before_first_call=before_first_call)
