"""Which tools a conversation sees and may call: the exposure mode (`full` or `progressive`) and the gates.

Two kinds of conversation: one whose tool list may change while it runs (an MCP session of the handshake
era, which hears `notifications/tools/list_changed`), and one whose list is fixed (2026-07-28 requests, the
pipe, LangGraph, in-process runners). With `progressive`, a changing list grows as the conversation loads
toolsets and as `requires` gates open; a fixed list is the whole profile, the loaders return the tools'
schemas, and gates answer when a tool is called. With `full`, every list is the whole profile. With `code`, a
profile that has `execute_code` lists only it and the discovery tools (`search_tools`, `list_toolsets`,
`load_toolset`); its other tools are still there to call, from a program or directly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from toolsets.core.conversation import Conversation
    from toolsets.core.envelope import ToolErr
    from toolsets.core.tool import Tool
    from toolsets.core.toolset import AbstractToolset
    from toolsets.pipeline.gates.spec import GateSet

from toolsets.extensions.codemode import CODE_TOOL

CODE_LISTED = frozenset({CODE_TOOL, "search_tools", "list_toolsets", "load_toolset"})  # what `code` lists

Exposure = Literal["full", "progressive", "code"]


class ToolExposure:
    def __init__(self, mode: Exposure, gates: GateSet) -> None:
        self.mode = mode
        self.gates = gates

    @property
    def lists_can_change(self) -> bool:
        """Only in progressive mode: hosts without list_changed (Claude Desktop, Cursor) never refresh a list,
        so in `full` mode a gated tool stays listed and its gate answers when it is called."""
        return self.mode == "progressive"

    def _progressive(self, toolset: AbstractToolset, fixed_list: bool) -> bool:
        """Progressive for a changing list of a toolset that can load (notification-safe has no loaders)."""
        return self.mode == "progressive" and not fixed_list and toolset.get("load_toolset") is not None

    async def visible(self, toolset: AbstractToolset, fixed_list: bool, conversation: Conversation) -> list[Tool]:
        if self.mode == "code" and toolset.get(CODE_TOOL) is not None:
            return [tool for tool in toolset if tool.name in CODE_LISTED]
        if not self._progressive(toolset, fixed_list):
            return list(toolset)
        from toolsets.extensions.exposure.tools import ALWAYS_ON

        loaded = await conversation.loaded()
        shown = [tool for tool in toolset if tool.toolset in ALWAYS_ON or tool.toolset in loaded]
        return [tool for tool in shown if not await self._gated(tool, conversation)]

    async def _gated(self, tool: Tool, conversation: Conversation) -> bool:
        for gate in self.gates.by_tool.get(tool.name, ()):
            if not await conversation.succeeded(gate.after):
                return True
        return False

    async def refusal(
        self, toolset: AbstractToolset, tool: Tool, fixed_list: bool, conversation: Conversation
    ) -> ToolErr | None:
        """A call of a tool this (changing-list) conversation has not loaded: say how to load it."""
        if not self._progressive(toolset, fixed_list):
            return None
        from toolsets.core.envelope import ToolErr
        from toolsets.core.errors import ErrorCode
        from toolsets.extensions.exposure.tools import ALWAYS_ON

        if tool.toolset in ALWAYS_ON or tool.toolset in await conversation.loaded():
            return None
        return ToolErr(
            ErrorCode.PRECONDITION,
            f"{tool.name} is in the {tool.toolset!r} toolset, which this conversation has not loaded: call "
            f"load_toolset with name={tool.toolset!r} first, then call {tool.name} again.",
            retryable=True,
        )
