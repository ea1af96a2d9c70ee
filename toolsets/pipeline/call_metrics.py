"""Counting and timing every call for the deployment's metrics (docs/metrics.md): each call that enters the pipeline
is recorded with its tool, its outcome and how long the pipeline took; a call the dispatcher refused (unknown tool,
invalid arguments) is counted with no duration.

The middleware knows nothing of Prometheus: it hands each record to a `CallRecorder` (the server's is
`server.runtime.metrics.ServerMetrics`). Label values stay bounded: the tool is one of the profile's (a name the
caller made up is `UNKNOWN_TOOL`), the outcome `ok`, `input_required` or an `ErrorCode` value (`cancelled` for a
cancellation or a withdrawn request).
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from toolsets.core.call import ToolCall
from toolsets.core.context import ToolContext
from toolsets.core.envelope import ToolErr, ToolResult
from toolsets.core.errors import ErrorCode
from toolsets.core.middleware import CallNext
from toolsets.pipeline.audit.record import outcome_status

UNKNOWN_TOOL = "(unknown)"  # the tool label of calls of a name no profile of the caller's has


class CallRecorder(Protocol):
    def record(self, tool: str, outcome: str, seconds: float | None) -> None:
        """One call of `tool` ended with `outcome`, after `seconds` in the pipeline (None: refused before it)."""
        ...


def outcome_label(outcome: ToolResult | None) -> str:
    """`ok`, `input_required`, or the error code (`cancelled` also for a request withdrawn while the call ran)."""
    status, code = outcome_status(outcome)
    return code if code is not None else status


class MetricsMiddleware:
    """Outermost in the chain, so its duration covers the whole pipeline and it sees the gates' refusals."""

    __slots__ = ("recorder",)

    def __init__(self, recorder: CallRecorder) -> None:
        self.recorder = recorder

    async def __call__(self, call: ToolCall, call_next: CallNext) -> ToolResult:
        started = time.perf_counter()
        outcome: ToolResult | None = None
        try:
            outcome = await call_next(call)
            return outcome
        finally:  # also when the surrounding task is cancelled (the client withdrew the request)
            self.recorder.record(call.tool.name, outcome_label(outcome), time.perf_counter() - started)

    def refused(self, name: str, raw_args: Any, ctx: ToolContext[Any], refusal: ToolErr) -> None:
        tool = UNKNOWN_TOOL if refusal.code is ErrorCode.UNKNOWN_TOOL else name
        self.recorder.record(tool, outcome_label(refusal), None)
