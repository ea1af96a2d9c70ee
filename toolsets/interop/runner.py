"""Answer any framework's tool calls in-process: each goes through the deployment's front door
(toolsets/front_door.py), exactly as an MCP call does (exposure, gates, audit, canary, validation,
confirmation policy, deferred resolution), and comes back as a reply in its own shape. Nothing here raises
for a bad call: every failure is a reply.

    runner = runner_for(assemble(services), Caller("alice", timezone="Asia/Seoul"), "member")
    replies = await runner.reply(ai_message)   # a call, a list of calls, or an assistant message

The runner's calls are one conversation (gates remember what it did). Confirmation: nobody can be asked
in-process unless a `confirmer` is given, so the policy decides as for an MCP client without elicitation:
`auto` runs a destructive tool (the calling framework is the host that approved the call), `strict`
cancels it, `off` never asks.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from toolsets.core.context import (
    Caller,
    Confirmer,
    ConfirmPolicy,
    DeferredCall,
    DeferredResolver,
    RequestInfo,
    ToolContext,
)
from toolsets.core.envelope import ToolErr, ToolResult
from toolsets.core.errors import ErrorCode, ToolError
from toolsets.core.toolset import AbstractToolset
from toolsets.interop.replies import frame, not_a_call, reply
from toolsets.interop.shapes import Item, ParsedCall, parse_document

if TYPE_CHECKING:
    from toolsets.front_door import FrontDoor
    from toolsets.services import Services

logger = logging.getLogger("truloop.interop")

# A call's context; the second argument names another conversation than the runner's (e.g. a graph thread), the
# third another resolver of its deferred tools than the runner's.
ContextFactory = Callable[[ParsedCall, str | None, DeferredResolver | None], ToolContext[Any]]

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

    def __init__(self, door: FrontDoor, profile: str, context: ContextFactory, *, concurrency: int = 32) -> None:
        self.door = door
        self.toolset: AbstractToolset = door.toolset(profile)  # what a framework binds: the list MCP publishes
        self.context = context
        self.concurrency = concurrency

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

    async def outcome(
        self, call: ParsedCall, *, conversation: str | None = None, deferred: DeferredResolver | None = None
    ) -> ToolResult:
        """The envelope of one call (never raises, but for the cancellation of the surrounding task);
        `conversation` names the conversation it belongs to, if not the runner's; `deferred` answers its deferred
        tools, if not the runner's resolver."""
        if call.bad_json is not None and self.toolset.get(call.name) is not None:
            return ToolErr(
                ErrorCode.VALIDATION,
                f"Invalid arguments for {call.name}: the arguments are not valid JSON ({call.bad_json}). "
                "Send them as a JSON object.",
            )
        arguments = {} if call.bad_json is not None else call.arguments
        ctx = self.context(call, conversation, deferred)
        return await self.door.call(ctx, call.name, arguments)


def runner_for(
    door: FrontDoor | Services,
    caller: Caller | str,
    profile: str = "member",
    *,
    confirm_policy: ConfirmPolicy | None = None,
    confirmer: Confirmer | None = None,
    deferred: DeferredResolver | None = None,
    transport: str = "in-process",
    conversation: str | None = None,
    concurrency: int = 32,
    unasked: str | None = None,
) -> InteropRunner:
    """A runner for `caller` over a profile (member, notification-safe, guest) of a deployment's front door
    (`toolsets.assembly.assemble(services)` makes one; given `Services`, one is assembled here).

    `deferred` answers deferred tools (a resolver that reaches the device); without one they reply `no_route`.
    `confirmer` asks the user to confirm destructive tools; `confirm_policy` defaults to the door's.
    `conversation` names the conversation gates remember (default: one for this runner). `unasked`: on a front
    where nobody can ever be asked, why, and what the operator can do (quoted when a confirmation is refused).
    """
    from toolsets.front_door import FrontDoor

    if not isinstance(door, FrontDoor):
        from toolsets.assembly import assemble

        door = assemble(door, confirm_policy=confirm_policy or ConfirmPolicy.AUTO)
    who = Caller(user_id=caller) if isinstance(caller, str) else caller
    door.toolset(profile)  # an unknown profile fails here, not at the first call
    resolver = deferred or NoDeviceRoute()
    talk = door.conversation(conversation or f"{transport}:{who.user_id}:{profile}:{secrets.token_hex(6)}")

    def context(call: ParsedCall, conversation: str | None, deferred: DeferredResolver | None) -> ToolContext[Any]:
        named = talk if conversation is None else door.conversation(f"{conversation}:{who.user_id}:{profile}")
        return door.context_for(
            who,
            profile,
            request=RequestInfo(request_id=call.call_id, transport=transport, profile=profile),
            conversation=named,
            confirm_policy=confirm_policy,
            confirmer=confirmer,
            deferred=deferred or resolver,
            unasked=unasked,
        )

    return InteropRunner(door, profile, context, concurrency=concurrency)
