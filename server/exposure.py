"""Which tools a conversation sees and may call: `--exposure` and the gates, in MCP's two eras.

Handshake era (2025-06-18, 2025-11-25): the conversation is the MCP connection. With
`--exposure progressive` its tool list grows as it loads toolsets and as `requires` gates open,
and only that session gets `notifications/tools/list_changed`; with `full` the list never changes.
2026-07-28: lists must not change as a side effect of requests (SEP-2567), so the list is the
whole profile; the conversation is the caller, kept with
a sliding TTL in `conversations` (Redis when configured, so replicas agree), and gates are
enforced when a tool is called.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, Protocol

from server.sdk_compat import connection_of
from toolsets.core.conversation import Conversation, ConversationState, MemoryConversation

if TYPE_CHECKING:
    from toolsets.core.context import Caller
    from toolsets.core.envelope import ToolErr
    from toolsets.core.tool import Tool
    from toolsets.core.toolset import AbstractToolset
    from toolsets.pipeline.gates import GateSet

LOADERS = frozenset({"list_toolsets", "load_toolset"})

Exposure = Literal["full", "progressive"]


class Conversations(Protocol):
    def get(self, key: str) -> Conversation: ...


class ToolExposure:
    """`gates` may be a function that builds them: it runs on first use (the first tool list or call), so
    nothing of the gates is loaded to answer `initialize`."""

    def __init__(
        self, exposure: Exposure, gates: GateSet | Callable[[], GateSet], conversations: Conversations
    ) -> None:
        self.exposure = exposure
        self._gates = gates
        self._conversations = conversations  # 2026-07-28: by caller
        self._sessions: weakref.WeakKeyDictionary[Any, ConversationState] = weakref.WeakKeyDictionary()

    @cached_property
    def gates(self) -> GateSet:
        return self._gates() if callable(self._gates) else self._gates

    @property
    def lists_can_change(self) -> bool:
        """Only in progressive mode: hosts without list_changed (Claude Desktop, Cursor) never refresh a list,
        so in `full` mode a gated tool stays listed and its gate answers when it is called."""
        return self.exposure == "progressive"

    def conversation(self, session: Any, caller: Caller, profile: str, modern: bool) -> Conversation:
        if modern:
            return self._conversations.get(f"{caller.user_id}:{profile}")
        connection = connection_of(session) or session
        state = self._sessions.get(connection)
        if state is None:
            state = self._sessions[connection] = ConversationState()
        return MemoryConversation(state)

    async def visible(self, toolset: AbstractToolset, modern: bool, conversation: Conversation) -> list[Tool]:
        if self.exposure == "full":
            return [tool for tool in toolset if tool.name not in LOADERS]
        if modern:
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

    async def refusal(self, tool: Tool, modern: bool, conversation: Conversation) -> ToolErr | None:
        """A call of a tool this handshake-era session has not loaded: say how to load it."""
        if self.exposure != "progressive" or modern:
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
