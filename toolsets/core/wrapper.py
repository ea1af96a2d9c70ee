"""`WrapperToolset`: the base of every policy wrapper; it passes everything through to `wrapped`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolsets.core.call import ToolCall
from toolsets.core.context import ToolContext
from toolsets.core.envelope import ToolErr, ToolResult
from toolsets.core.tool import Tool
from toolsets.core.toolset import AbstractToolset


class WrapperToolset(AbstractToolset):
    """Override `tools` to change what is published, `call_tool` to change how a call runs."""

    def __init__(self, wrapped: AbstractToolset, *, name: str | None = None) -> None:
        self.wrapped = wrapped
        self.name = name or wrapped.name

    def tools(self) -> Mapping[str, Tool]:
        return self.wrapped.tools()

    def revision(self) -> int:
        return self.wrapped.revision()

    def can_change(self) -> bool:
        return type(self).revision is not WrapperToolset.revision or self.wrapped.can_change()

    async def call_tool(self, call: ToolCall) -> ToolResult:
        return await self.wrapped.call_tool(call)

    def refuse(self, name: str, raw_args: Any, ctx: ToolContext[Any], refusal: ToolErr) -> None:
        self.wrapped.refuse(name, raw_args, ctx, refusal)
