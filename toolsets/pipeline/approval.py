"""`ApprovalRequiredToolset`: calls to some tools (by default the destructive ones) need the user's yes.

The context says how (`--confirm`): `off` never asks; `auto` asks when the client can be asked and
otherwise relies on the host, which shows the user each call it makes (`ctx.host_approves`), but
not the calls a model makes inside another tool; `strict` asks, and cancels when nobody can be asked.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from toolsets.core.call import ToolCall
from toolsets.core.context import ConfirmPolicy, ConfirmRequest, Decision, ToolContext
from toolsets.core.envelope import ToolCancelled, ToolResult
from toolsets.core.tool import Tool
from toolsets.core.toolset import AbstractToolset
from toolsets.core.wrapper import WrapperToolset
from toolsets.pipeline.questions import fields, question_for
from toolsets.words.catalog import caller_locale


def is_destructive(tool: Tool) -> bool:
    """A destructive tool's call is confirmed here, unless the tool asks the user's yes itself (`asks_user`: asking
    twice for one call would tell the user nothing more)."""
    return tool.hints.destructive and not tool.asks_user


class ApprovalRequiredToolset(WrapperToolset):
    def __init__(
        self, wrapped: AbstractToolset, needs_approval: Callable[[Tool], bool] = is_destructive, **kwargs: Any
    ) -> None:
        super().__init__(wrapped, **kwargs)
        self.needs_approval = needs_approval

    async def call_tool(self, call: ToolCall) -> ToolResult:
        if self.needs_approval(call.tool) and call.ctx.confirm_policy is not ConfirmPolicy.OFF:
            if call.tool.precheck is not None:  # a call that cannot succeed is refused before anyone is asked
                await call.tool.precheck(call.ctx, call.arguments)
            refusal = await _refusal(call)
            if refusal is not None:
                return refusal
        return await self.wrapped.call_tool(call)


async def _refusal(call: ToolCall) -> ToolCancelled | None:
    shown = call.arguments.model_dump(mode="json", exclude_none=True)
    tool = call.tool
    message = await question_for(call.ctx, tool, shown)
    rows = fields(tool, shown, caller_locale(call.ctx.caller))
    return await refusal(call.ctx, tool.name, shown, message, question_key(tool.name, shown), rows)


async def _ask(
    ctx: ToolContext[Any], name: str, shown: dict[str, Any], message: str, key: str, rows: tuple[tuple[str, str], ...]
) -> Decision:
    """The person's answer, through the front's confirmer (`UNAVAILABLE` when this front has none, or cannot ask)."""
    if ctx.confirmer is None:
        return Decision.UNAVAILABLE
    request = ConfirmRequest(name, shown, message, key, locale=caller_locale(ctx.caller), fields=rows)
    return await ctx.confirmer.confirm(request)


async def refusal(
    ctx: ToolContext[Any],
    name: str,
    shown: dict[str, Any],
    message: str,
    key: str,
    rows: tuple[tuple[str, str], ...] = (),
) -> ToolCancelled | None:
    """Ask the user (`message`, in their language; `rows`: the arguments as labelled values) whether `name` may run
    with `shown`; the cancellation to return when they did not say yes, or None to go on (as `--confirm` says when
    nobody can be asked)."""
    decision = await _ask(ctx, name, shown, message, key, rows)
    if decision is not Decision.UNAVAILABLE:
        return _answered(name, decision)
    if ctx.confirm_policy is ConfirmPolicy.STRICT and ctx.unasked is not None:
        return ToolCancelled(f"{name} needs the user's confirmation, and {ctx.unasked}")
    if ctx.confirm_policy is ConfirmPolicy.STRICT:
        return ToolCancelled(
            f"{name} needs the user's confirmation, but this client cannot ask for it (no elicitation "
            "support) and the server runs with --confirm strict; nothing was changed. Use a client that supports "
            "elicitation, or ask the operator to run with --confirm auto."
        )
    if not ctx.host_approves:
        return ToolCancelled(
            f"{name} needs the user's confirmation, and this call was made inside another tool, where the user's "
            "MCP host cannot show it and the client cannot be asked (no elicitation); nothing was changed."
        )
    return None  # auto: the host's own approval of destructiveHint tools stands in


def _answered(name: str, decision: Decision) -> ToolCancelled | None:
    if decision is Decision.ACCEPTED:
        return None
    if decision is Decision.DECLINED:
        return ToolCancelled(f"The user declined {name}; nothing was changed. Do not retry unless the user asks.")
    return ToolCancelled(f"The user dismissed the confirmation for {name}; nothing was changed.")


async def person_refusal(
    ctx: ToolContext[Any],
    name: str,
    shown: dict[str, Any],
    message: str,
    key: str,
    rows: tuple[tuple[str, str], ...] = (),
) -> ToolCancelled | None:
    """Ask a person (`message`) whether `name` may run with `shown`, whatever `--confirm` says: None only on their
    yes. A client that cannot ask gets a cancellation that says so (neither the policy nor a host's approval of the
    call that asks stands in for it)."""
    decision = await _ask(ctx, name, shown, message, key, rows)
    if decision is not Decision.UNAVAILABLE:
        return _answered(name, decision)
    return ToolCancelled(
        f"{name} needs a person's yes, and this client cannot ask for it (no elicitation); nothing was changed. "
        "Use a client that supports elicitation."
    )


def question_key(name: str, shown: Mapping[str, Any]) -> str:
    """Names the question, so an answer is only ever reused for the same tool with the same arguments."""
    digest = hashlib.sha256(json.dumps(shown, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]
    return f"{name}/{digest}"
