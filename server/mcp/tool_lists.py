"""`tools/list` in MCP's terms: the caller's tools as `types.Tool`s and as the result's wire dict (one page of it:
`server.mcp.pagination` cuts the caller's list into pages).

`ToolLists` builds both from the tools each time; `server.speed.list_cache.ToolListCache`, the one `tools/list`
cache of every path, keeps them per list. Imported by the stdio lean front before the SDK is loaded: the SDK is
imported here only when a list is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mcp.types as types

    from toolsets.core.tool import Tool


class ToolLists:
    def published(self, tools: list[Tool]) -> list[types.Tool]:
        """The tools as MCP publishes them."""
        from server.mcp.wire_forms import to_mcp_tool

        return [to_mcp_tool(tool) for tool in tools]

    def wire(self, tools: list[Tool], next_cursor: str | None = None) -> dict[str, Any]:
        """The `tools/list` result (one page of it: `next_cursor` says where the next starts) in its wire form."""
        import mcp.types as types

        return types.ListToolsResult(tools=self.published(tools), next_cursor=next_cursor).model_dump(
            by_alias=True, mode="json", exclude_none=True
        )
