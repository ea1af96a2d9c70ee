"""The one handshake-era session of a stdio process, as both of its paths see it.

A stdio server answers its plain messages itself (`server.stdio.lean_front`) and hands the rest to the SDK, loaded
when first needed. Both paths serve the same session, so what it is lives here, once: its conversation (gates and
exposure), the level it asked to hear `notifications/message` at, and whether it is to be told when the tool list
changes (it listed or called tools) or hears broadcast log messages (it called a tool or set a level).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from server.mcp.log_events import DEFAULT_LEVEL, TOOLS_CHANGED, at_least, message_params
from toolsets.core.conversation import ConversationState, MemoryConversation


class StdioSession:
    def __init__(self, write: Callable[[dict[str, Any]], None]) -> None:
        self.id = "stdio-" + secrets.token_hex(8)
        self.conversation = MemoryConversation(ConversationState())
        self.log_level = DEFAULT_LEVEL
        self.level_set = False  # the client sent logging/setLevel
        self.tools_seen = False  # told `notifications/tools/list_changed`
        self.hears_log = False  # told broadcast `notifications/message`s (plugin reloads)
        self._write = write

    def set_log_level(self, level: str) -> None:
        self.log_level = level
        self.level_set = True
        self.hears_log = True

    def saw_tools(self) -> None:
        self.tools_seen = True

    def heard_of(self) -> None:
        self.hears_log = True

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._write(message)

    def hears(self, level: str) -> bool:
        """Whether a `notifications/message` at `level` reaches this session."""
        return at_least(level, self.log_level)

    def log(self, level: str, data: dict[str, Any]) -> None:
        if self.hears(level):
            self.notify("notifications/message", message_params(level, data))

    def tools_changed(self) -> None:
        """The published tools changed (plugins reloaded): what the session is to be told of it."""
        self.plugins_changed(tools=True)

    def plugins_changed(self, tools: bool = False, resources: bool = False, prompts: bool = False) -> None:
        """What plugins publish changed: the lists the session is to be told of (the resources and prompts lists
        whether or not it listed them: a host shows them without asking again)."""
        if tools and self.tools_seen:
            self.notify("notifications/tools/list_changed")
        if resources:
            self.notify("notifications/resources/list_changed")
        if prompts:
            self.notify("notifications/prompts/list_changed")
        if tools and self.hears_log:
            self.log("info", dict(TOOLS_CHANGED))
