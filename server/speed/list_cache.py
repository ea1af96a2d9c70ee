"""`tools/list` kept, not rebuilt: each tool's MCP form, the wire result per distinct page of tools, and
(for `server.speed.lean_path`) the SDK's whole answer per page and protocol version.

A list is known by its tools' identities: plugins reloading or progressive exposure make new lists, hence
new entries. Holding the tools keeps their ids from being reused while an entry is kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from server.mcp.tool_lists import ToolLists
from server.speed.per_list import PerToolList

if TYPE_CHECKING:
    import mcp.types as types

    from toolsets.core.tool import Tool


class CachedToolLists(ToolLists):
    """`ToolLists` whose results are made once per tool (`published`) and once per list (`wire`). The SDK copies
    the top level of a handler's dict, never the parts below, so a kept result can be given again."""

    def __init__(self) -> None:
        # by id(tool), holding the tool so its id is not reused while cached (plugin tools come and go)
        self._published: dict[int, tuple[Tool, types.Tool]] = {}
        self._wire = PerToolList()

    def published(self, tools: list[Tool]) -> list[types.Tool]:
        cache = self._published
        if len(cache) > 4 * len(tools) + 256:  # replaced plugin versions: let them go
            cache.clear()
        published = []
        for tool in tools:
            found = cache.get(id(tool))
            if found is None or found[0] is not tool:
                (mcp_tool,) = super().published([tool])
                found = cache[id(tool)] = (tool, mcp_tool)
            published.append(found[1])
        return published

    def wire(self, tools: list[Tool], next_cursor: str | None = None) -> dict[str, Any]:
        wire = self._wire.get(tools, next_cursor)
        if wire is None:
            wire = super().wire(tools, next_cursor)
            self._wire.put(tools, wire, next_cursor)
        return wire
