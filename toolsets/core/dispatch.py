"""The one entry every call takes, from any front.

lookup -> argument validation (no NUL in any text, `text_rule`; then the schema) -> the toolset's
`call_tool` (the wrappers a profile composed: middleware, confirmation, ... down to the tool) -> envelope.
`dispatch` never raises (cancellation of the surrounding task still propagates, as it must).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from toolsets.core.call import ToolCall, settle
from toolsets.core.context import ToolContext
from toolsets.core.echo import echo
from toolsets.core.envelope import ToolErr, ToolResult
from toolsets.core.errors import ErrorCode, ToolInputError
from toolsets.core.problems import problems
from toolsets.core.text_rule import NUL_REFUSED, nul_in
from toolsets.core.tool import Tool
from toolsets.core.toolset import AbstractToolset

logger = logging.getLogger("truloop.dispatch")


async def dispatch(toolset: AbstractToolset, name: str, raw_args: Any, ctx: ToolContext[Any]) -> ToolResult:
    tool = toolset.get(name)
    if tool is None:
        logger.warning("unknown tool %r requested by %s", echo(name), ctx.caller.user_id)
        available = ", ".join(sorted(toolset.names())) or "none"
        unknown = ToolErr(ErrorCode.UNKNOWN_TOOL, f"Unknown tool '{echo(name)}'. Tools available to you: {available}.")
        toolset.refuse(name, raw_args, ctx, unknown)
        return unknown
    arguments = _validate(tool, raw_args)
    if isinstance(arguments, ToolErr):
        toolset.refuse(name, raw_args, ctx, arguments)
        return arguments
    return await settle(name, toolset.call_tool(ToolCall(tool, arguments, ctx)))


def validate(tool: Tool, raw_args: Any) -> BaseModel | ToolErr:
    """The call's arguments as `tool` takes them, or the refusal a call with them gets (before anything runs)."""
    return _validate(tool, raw_args)


def _validate(tool: Tool, raw_args: Any) -> BaseModel | ToolErr:
    if raw_args is None:
        raw_args = {}
    if not isinstance(raw_args, Mapping):
        return ToolErr(ErrorCode.VALIDATION, f"Invalid arguments for {tool.name}: arguments must be a JSON object.")
    ignored = tool.unknown_keys(raw_args)
    if ignored:
        logger.info("tool %r: ignored unknown argument keys %s", tool.name, [echo(key) for key in ignored[:8]])
    with_nul = nul_in(raw_args, (key for key in raw_args if key not in ignored))
    if with_nul is not None:
        logger.info("tool %r rejected arguments: %s holds NUL", tool.name, echo(with_nul))
        return ToolErr(ErrorCode.VALIDATION, f"Invalid arguments for {tool.name}: {echo(with_nul)}: {NUL_REFUSED}.")
    try:
        return tool.parse_arguments(raw_args)
    except ToolInputError as exc:
        logger.info("tool %r rejected arguments: %s", tool.name, echo(exc.message, 400))
        return ToolErr(ErrorCode.VALIDATION, f"Invalid arguments for {tool.name}: {echo(exc.message, 400)}.")
    except ValidationError as exc:
        found = problems(exc)
        logger.info("tool %r rejected arguments: %s", tool.name, [field for field, _ in found])
        described = "; ".join(f"{field}: {message}" for field, message in found)
        return ToolErr(ErrorCode.VALIDATION, f"Invalid arguments for {tool.name}: {described}.")
