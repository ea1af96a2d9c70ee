"""`CanaryMiddleware(catalog)`: picks the version of a plugin call whose tool has a candidate, before the audit
middleware writes the call's line, and pins it on the call's notes (`CanaryRouter.run` runs that version)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolsets.core.call import ToolCall
from toolsets.core.envelope import ToolResult
from toolsets.core.middleware import CallNext

if TYPE_CHECKING:
    from toolsets.extensions.plugins.catalog import PluginCatalog


class CanaryMiddleware:
    __slots__ = ("catalog",)

    def __init__(self, catalog: PluginCatalog) -> None:
        self.catalog = catalog

    async def __call__(self, call: ToolCall, call_next: CallNext) -> ToolResult:
        from toolsets.extensions.plugins.tool import PluginTool

        catalog = self.catalog
        if not isinstance(call.tool, PluginTool) or catalog.candidate(call.tool.name) is None:
            return await call_next(call)
        choice = await catalog.canary.choose(call)
        if choice is not None:
            call.notes.pin(choice.version.version, choice.route, choice)
        return await call_next(call)
