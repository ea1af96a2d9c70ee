"""`CombinedToolset`: several toolsets published as one; each call goes to the member that owns the tool."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property

from toolsets.call import ToolCall
from toolsets.envelope import ToolResult
from toolsets.tool import Tool
from toolsets.toolset import AbstractToolset


class CombinedToolset(AbstractToolset):
    """A tool name may appear only once across the members."""

    def __init__(self, name: str, *members: AbstractToolset) -> None:
        self.name = name
        self.members = members

    @cached_property
    def _owners(self) -> dict[str, tuple[Tool, AbstractToolset]]:
        owners: dict[str, tuple[Tool, AbstractToolset]] = {}
        for member in self.members:
            for tool in member:
                if tool.name in owners:
                    raise ValueError(f"tool {tool.name!r} appears in more than one toolset of {self.name!r}")
                owners[tool.name] = (tool, member)
        return owners

    @cached_property
    def _tools(self) -> dict[str, Tool]:
        return {name: tool for name, (tool, _) in self._owners.items()}

    def tools(self) -> Mapping[str, Tool]:
        return self._tools

    async def call_tool(self, call: ToolCall) -> ToolResult:
        return await self._owners[call.tool.name][1].call_tool(call)
