"""`FeedbackMiddleware(recorder, trials)`: each plugin call's outcome, heard where every call passes.

The innermost of the standard middleware: once a plugin call has run (its version and route on `call.notes`), what
it gave back goes to those who follow plugin calls, never failing the call: the feedback recorder
(toolsets/extensions/plugins/feedback.py) keeps a version's failures for the model that wrote it, and the authoring
trials (toolsets/extensions/authoring/) count a new tool's first calls. A version serving on trial is marked so
before either hears it (its failures are kept with the route `trial`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from toolsets.core.call import ToolCall
from toolsets.core.envelope import ToolResult
from toolsets.core.middleware import CallNext
from toolsets.extensions.plugins.outcome import PluginOutcome

if TYPE_CHECKING:
    from toolsets.extensions.plugins.feedback import FeedbackRecorder

logger = logging.getLogger("truloop.plugins")


class PluginTrials(Protocol):
    """What the authoring tools follow of plugin calls (`ToolAuthoring`)."""

    def on_trial(self, name: str, tool_version: str) -> bool: ...

    async def on_outcome(self, heard: PluginOutcome) -> None: ...


class FeedbackMiddleware:
    __slots__ = ("recorder", "trials")

    def __init__(self, recorder: FeedbackRecorder | None, trials: PluginTrials | None = None) -> None:
        self.recorder = recorder
        self.trials = trials

    async def __call__(self, call: ToolCall, call_next: CallNext) -> ToolResult:
        from toolsets.extensions.plugins.tool import PluginTool

        outcome = await call_next(call)
        if not isinstance(call.tool, PluginTool):
            return outcome
        name, version = call.tool.name, call.notes.tool_version or call.tool.version.version
        trial = self.trials is not None and self.trials.on_trial(name, version)
        heard = PluginOutcome(name, version, call.notes.route, call.arguments, outcome, call.ctx.caller.user_id, trial)
        for listener in (self.recorder, self.trials):
            if listener is None:
                continue
            try:
                await listener.on_outcome(heard)
            except Exception:
                logger.exception("a plugin outcome listener failed")
        return outcome
