"""`ToolsetSlot`: a member of a profile whose toolset the deployment plugs in at start (the workspace).

Profiles are composed once (toolsets/profiles.py); what a deployment adds depends on its settings, so
the composition holds a slot, empty until the deployment plugs a toolset into it.
"""

from __future__ import annotations

from collections.abc import Mapping

from toolsets.core.call import ToolCall
from toolsets.core.envelope import ToolErr, ToolResult
from toolsets.core.errors import ErrorCode
from toolsets.core.tool import Tool
from toolsets.core.toolset import AbstractToolset


class ToolsetSlot(AbstractToolset):
    def __init__(self, name: str) -> None:
        self.name = name
        self._toolset: AbstractToolset | None = None
        self._base = 0  # makes `revision` grow at every plug, whatever the plugged toolset's own revision

    @property
    def plugged(self) -> AbstractToolset | None:
        return self._toolset

    def plug(self, toolset: AbstractToolset | None) -> None:
        if toolset is self._toolset:
            return
        before = self.revision()
        self._toolset = toolset
        self._base = before + 1 - (toolset.revision() if toolset is not None else 0)

    def revision(self) -> int:
        return self._base + (self._toolset.revision() if self._toolset is not None else 0)

    def tools(self) -> Mapping[str, Tool]:
        return self._toolset.tools() if self._toolset is not None else {}

    async def call_tool(self, call: ToolCall) -> ToolResult:
        if self._toolset is None:
            return ToolErr(ErrorCode.UNKNOWN_TOOL, f"The tool {call.tool.name} is no longer served here.")
        return await self._toolset.call_tool(call)
