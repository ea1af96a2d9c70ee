"""The questions a person confirms the workspace's destructive calls with, in their language."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolsets.core.context import ToolContext
from toolsets.words.catalog import caller_locale, tr
from toolsets.words.values import clip


async def write_question(ctx: ToolContext[Any], values: Mapping[str, Any]) -> str:
    locale = caller_locale(ctx.caller)
    path, text = clip(str(values.get("path", ""))), clip(str(values.get("content", "")))
    if values.get("append"):
        asked = tr(locale, "Add this text to the end of the file '{path}' in the workspace?", path=path)
    else:
        asked = tr(locale, "Write the file '{path}' in the workspace, replacing what it holds?", path=path)
    return f"{asked} {tr(locale, 'This cannot be undone.')}\n“{text}”"


async def shell_question(ctx: ToolContext[Any], values: Mapping[str, Any]) -> str:
    locale = caller_locale(ctx.caller)
    command = clip(str(values.get("command", "")), 120)
    return tr(locale, "Run the command '{command}' in the workspace? This cannot be undone.", command=command)
