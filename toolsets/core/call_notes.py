"""What a call learns about itself on its way down (which version served it, who answered a deferred tool),
carried on the call itself (`ToolCall.notes`, `DeferredCall.notes`) for its audit line and its span."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Route = Literal["stable", "canary", "scheduled"]  # scheduled: a scheduled run of a tool under canary rollout
DeferredRoute = Literal["device", "elicitation", "none"]


@dataclass(slots=True)
class CallNotes:
    tool_version: str | None = None  # None: the package's version (a built-in tool)
    route: Route = "stable"
    deferred_route: DeferredRoute | None = None  # who answered a deferred tool
    # the version a router picked to serve this call (the canary's choice); read by the toolset that runs it
    pinned: Any = None

    def pin(self, tool_version: str, route: Route, choice: Any = None) -> None:
        self.tool_version, self.route, self.pinned = tool_version, route, choice
