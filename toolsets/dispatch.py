"""The one dispatch path every call takes, from any front (seed 002: `ToolDispatcher.dispatch`).

lookup -> argument validation -> confirmation gate for destructive tools -> handler
(deferred tools go to the context's resolver) -> envelope. `dispatch` never raises
(cancellation of the surrounding task still propagates, as it must).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from toolsets.context import ConfirmPolicy, ConfirmRequest, Decision, DeferredCall, ToolContext
from toolsets.envelope import ToolCancelled, ToolErr, ToolInputRequired, ToolOk, ToolResult
from toolsets.errors import CallDeferred, InputRequired, ToolError
from toolsets.toolset import AbstractToolset, Tool

logger = logging.getLogger("truloop.dispatch")


async def dispatch(toolset: AbstractToolset, name: str, raw_args: Any, ctx: ToolContext) -> ToolResult:
    tool = toolset.get(name)
    if tool is None:
        logger.warning("unknown tool %r requested by %s", name, ctx.caller.user_id)
        available = ", ".join(sorted(toolset.names())) or "none"
        return ToolErr("unknown_tool", f"Unknown tool '{name}'. Tools available to you: {available}.")
    try:
        arguments = _validate(tool, raw_args)
    except _InvalidArguments as exc:
        logger.info("tool %r rejected arguments: %s", name, exc.fields)
        return ToolErr("validation", exc.reason)
    try:
        refusal = await _confirm(tool, arguments, ctx)
        if refusal is not None:
            return refusal
        return ToolOk(await _run(tool, arguments, ctx))
    except InputRequired as signal:
        return ToolInputRequired(signal.payload)
    except ToolError as exc:
        logger.info("tool %r refused: code=%s", name, exc.code)
        return ToolErr(exc.code, exc.message, exc.retryable)
    except Exception as exc:
        logger.exception("tool %r raised an unexpected exception", name)
        return ToolErr(
            "handler_error",
            f"The tool {name} failed with an internal error ({type(exc).__name__}). "
            "Your arguments were valid; try again later, or tell the user the action did not complete.",
        )


class _InvalidArguments(Exception):  # noqa: N818
    def __init__(self, reason: str, fields: list[str]) -> None:
        super().__init__(reason)
        self.reason = reason
        self.fields = fields


def _validate(tool: Tool, raw_args: Any) -> BaseModel:
    if raw_args is None:
        raw_args = {}
    if not isinstance(raw_args, Mapping):
        raise _InvalidArguments(f"Invalid arguments for {tool.name}: arguments must be a JSON object.", [])
    ignored = tool.unknown_keys(raw_args)
    if ignored:
        logger.info("tool %r: ignored unknown argument keys %s", tool.name, ignored)
    try:
        return tool.args_model.model_validate(raw_args)
    except ValidationError as exc:
        problems = []
        fields = []
        for error in exc.errors(include_input=False, include_url=False):
            field = ".".join(str(part) for part in error["loc"]) or "arguments"
            fields.append(field)
            problems.append(f"{field}: {error['msg']}")
        described = "; ".join(problems)
        raise _InvalidArguments(f"Invalid arguments for {tool.name}: {described}.", fields) from None


async def _confirm(tool: Tool, arguments: BaseModel, ctx: ToolContext) -> ToolCancelled | None:
    if not tool.hints.destructive or ctx.confirm_policy is ConfirmPolicy.OFF:
        return None
    decision = Decision.UNAVAILABLE
    if ctx.confirmer is not None:
        shown = arguments.model_dump(mode="json", exclude_none=True)
        request = ConfirmRequest(tool.name, shown, _confirm_message(tool, shown))
        decision = await ctx.confirmer.confirm(request)
    if decision is Decision.ACCEPTED:
        return None
    if decision is Decision.DECLINED:
        return ToolCancelled(f"The user declined {tool.name}; nothing was changed. Do not retry unless the user asks.")
    if decision is Decision.CANCELLED:
        return ToolCancelled(f"The user dismissed the confirmation for {tool.name}; nothing was changed.")
    if ctx.confirm_policy is ConfirmPolicy.STRICT:
        return ToolCancelled(
            f"{tool.name} needs the user's confirmation, but this client cannot ask for it (no elicitation "
            "support) and the server runs with --confirm strict; nothing was changed. Use a client that supports "
            "elicitation, or ask the operator to run with --confirm auto."
        )
    return None  # auto: the host's own approval of destructiveHint tools stands in


def _confirm_message(tool: Tool, shown: Mapping[str, Any]) -> str:
    rendered = ", ".join(f"{key}={value!r}" for key, value in shown.items())
    return f"Allow {tool.name}({rendered})? This cannot be undone."


async def _run(tool: Tool, arguments: BaseModel, ctx: ToolContext) -> BaseModel:
    try:
        result: Any = await tool.run(ctx, arguments)
    except CallDeferred as deferred:
        if ctx.deferred is None:
            raise ToolError(
                f"{tool.name} runs on the user's device, and no route to the device is available in this "
                "session: connect a device to the agent-rpc stream, or use a client that supports elicitation.",
                code="no_route",
            ) from None
        call_args = deferred.arguments or arguments.model_dump(mode="json")
        call = DeferredCall(tool.name, call_args, deferred.notification_message, ctx.caller)
        result = await ctx.deferred.resolve(call)
    if isinstance(result, tool.result_model):
        return result
    return tool.result_model.model_validate(result)
