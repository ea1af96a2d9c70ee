"""The question a person confirms a destructive call with, in their language (`ctx.caller.locale`).

A tool that knows its object words its own question (`Tool.question`: an event's title and local time, a memory's
text); every other tool, plugins included, gets the generic one: the tool's name and its arguments as labelled
values. A tool's own question that fails (its store unreachable) falls back to the generic one: a person is still
asked, in words.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from toolsets.core.context import ToolContext
from toolsets.core.tool import Tool
from toolsets.words.catalog import caller_locale, tr
from toolsets.words.values import as_lines, humanised, labelled

logger = logging.getLogger("truloop.approval")


def tool_title(tool: Tool) -> str:
    """The tool as a person reads its name ("Write file"), as `tools/list` titles it."""
    return humanised(tool.name)


def fields(tool: Tool, shown: Mapping[str, Any], locale: str | None) -> tuple[tuple[str, str], ...]:
    """The call's arguments as labelled values (what a confirmation card lists)."""
    return tuple(labelled(tool.input_schema, shown, locale))


def generic_question(tool: Tool, shown: Mapping[str, Any], locale: str | None) -> str:
    rows = fields(tool, shown, locale)
    if not rows:
        return tr(locale, "Run '{tool}'? This cannot be undone.", tool=tool_title(tool))
    asked = tr(locale, "Run '{tool}' with these values? This cannot be undone.", tool=tool_title(tool))
    return f"{asked}\n{as_lines(list(rows))}"


async def question_for(ctx: ToolContext[Any], tool: Tool, shown: Mapping[str, Any]) -> str:
    """The question for this call, in the caller's language."""
    if tool.question is not None:
        try:
            own = await tool.question(ctx, shown)
        except Exception:
            logger.warning("%s: its own question failed; asking the generic one", tool.name, exc_info=True)
            own = None
        if own:
            return own
    return generic_question(tool, shown, caller_locale(ctx.caller))
