"""`CombinedToolset`: several toolsets published as one; each call goes to the member that owns the tool.

The tool map is cached until a member's `revision()` changes (plugins reloaded), so a member whose
tools change at runtime is re-read, and a fixed composition costs one sum per lookup.
"""

from __future__ import annotations

from collections.abc import Mapping

from toolsets.core.call import ToolCall
from toolsets.core.envelope import ToolErr, ToolResult
from toolsets.core.errors import ErrorCode
from toolsets.core.tool import Tool
from toolsets.core.toolset import AbstractToolset

Owners = dict[str, tuple[Tool, AbstractToolset]]


class CombinedToolset(AbstractToolset):
    """A tool name may appear only once across the members."""

    def __init__(self, name: str, *members: AbstractToolset) -> None:
        self.name = name
        self.members = members
        # members that never change (a plain Toolset, or wrappers around one) need not be asked on every lookup
        self._changing = tuple(m for m in members if m.can_change())
        self._cache: tuple[int, Owners, dict[str, Tool]] | None = None

    def revision(self) -> int:
        return sum(member.revision() for member in self._changing)  # each only grows, so the sum changes with any

    def can_change(self) -> bool:
        return bool(self._changing)

    def _composed(self) -> tuple[Owners, dict[str, Tool]]:
        revision = self.revision()
        if self._cache is None or self._cache[0] != revision:
            owners: Owners = {}
            for member in self.members:
                for tool in member:
                    if tool.name in owners:
                        raise ValueError(f"tool {tool.name!r} appears in more than one toolset of {self.name!r}")
                    owners[tool.name] = (tool, member)
            self._cache = (revision, owners, {name: tool for name, (tool, _) in owners.items()})
        return self._cache[1], self._cache[2]

    def tools(self) -> Mapping[str, Tool]:
        return self._composed()[1]

    async def call_tool(self, call: ToolCall) -> ToolResult:
        found = self._composed()[0].get(call.tool.name)
        if found is not None:
            return await found[1].call_tool(call)
        # removed while the call was on its way (a deleted plugin): the toolset it came from still runs it
        member = next((m for m in self.members if m.name == call.tool.toolset), None)
        if member is None:
            return ToolErr(ErrorCode.UNKNOWN_TOOL, f"The tool {call.tool.name} is no longer available.")
        return await member.call_tool(call)
