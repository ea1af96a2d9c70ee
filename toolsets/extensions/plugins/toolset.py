"""`PluginToolset`: the plugins a profile offers, re-read from the catalog whenever it changes."""

from __future__ import annotations

from collections.abc import Mapping

from toolsets.core.call import ToolCall, settle
from toolsets.core.envelope import ToolErr, ToolResult
from toolsets.core.errors import ErrorCode
from toolsets.core.tool import Tool
from toolsets.core.toolset import AbstractToolset
from toolsets.extensions.plugins.catalog import PluginCatalog
from toolsets.extensions.plugins.tool import PLUGINS_TOOLSET, PluginTool, offered_to


class PluginToolset(AbstractToolset):
    def __init__(self, catalog: PluginCatalog, profile: str) -> None:
        self.name = PLUGINS_TOOLSET
        self.catalog = catalog
        self.profile = profile
        self._cache: tuple[int, dict[str, Tool]] = (-1, {})

    def revision(self) -> int:
        return self.catalog.revision

    def tools(self) -> Mapping[str, Tool]:
        revision, tools = self._cache
        if revision != self.catalog.revision:
            revision = self.catalog.revision
            published = self.catalog.versions().values()
            tools = {v.name: v.tool for v in published if offered_to(v.tool, self.profile)}
            self._cache = (revision, tools)
        return tools

    async def call_tool(self, call: ToolCall) -> ToolResult:
        if not isinstance(call.tool, PluginTool):
            return ToolErr(ErrorCode.UNKNOWN_TOOL, f"{call.tool.name} is not a plugin.")
        return await settle(call.tool.name, self.catalog.canary.run(call))  # the stable version, or its candidate
