"""One OpenTelemetry span per tool call, named and described as the GenAI semantic conventions say:
`execute_tool {tool}` with `gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.call.id`,
`gen_ai.tool.type` and, when the call did not succeed, `error.type` (the envelope's code).

Only `opentelemetry-api` is used: without an SDK its tracer makes non-recording spans, so this costs
next to nothing until an operator installs one (docs/audit.md, "Tracing"); until then it is not even imported
(`provider_installed`, toolsets/pipeline/tracer_provider.py). The span is a child of the
server's `tools/call` span when the MCP SDK made one, and its id is the call's audit `call_id`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolsets.core.call import ToolCall, new_call_id
from toolsets.core.call_notes import CallNotes
from toolsets.core.context import ToolContext
from toolsets.core.envelope import ToolErr, ToolResult
from toolsets.core.middleware import CallNext
from toolsets.pipeline.audit.record import outcome_status
from toolsets.pipeline.tracer_provider import provider_installed

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

TRACER_NAME = "truloop-mcp"


def tracer() -> Tracer:
    """The server's tracer: a proxy of the global provider's, so it follows a provider installed later."""
    from opentelemetry.trace import get_tracer

    from toolsets.pipeline.audit.audit_middleware import builtin_version

    return get_tracer(TRACER_NAME, builtin_version())


class TracingMiddleware:
    """A span per call, and per call the dispatcher refused before the pipeline (unknown tool, invalid
    arguments). Spans are made only once an SDK tracer provider is installed (checked per call); the tracer is
    this middleware's own, made with its first span."""

    __slots__ = ("_tracer",)

    def __init__(self) -> None:
        self._tracer: Tracer | None = None

    def tracer(self) -> Tracer:
        if self._tracer is None:
            self._tracer = tracer()
        return self._tracer

    async def __call__(self, call: ToolCall, call_next: CallNext) -> ToolResult:
        if not provider_installed():  # no SDK installed: its spans record nothing
            return await call_next(call)

        from opentelemetry.trace import SpanKind

        attributes = _attributes(call.tool.name, call.call_id, call.ctx)
        with self.tracer().start_as_current_span(
            f"execute_tool {call.tool.name}",
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            outcome = await call_next(call)
            _describe(span, outcome, call.notes)
            return outcome

    def refused(self, name: str, raw_args: Any, ctx: ToolContext[Any], refusal: ToolErr) -> None:
        if not provider_installed():
            return
        from opentelemetry.trace import SpanKind

        with self.tracer().start_as_current_span(
            f"execute_tool {name}", kind=SpanKind.INTERNAL, attributes=_attributes(name, new_call_id(), ctx)
        ) as span:
            _describe(span, refusal, None)


def _attributes(name: str, call_id: str, ctx: ToolContext[Any]) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.type": "function",
        "truloop.transport": ctx.request.transport,
    }
    if ctx.request.profile is not None:
        attributes["truloop.profile"] = ctx.request.profile
    if ctx.request.request_id is not None:
        attributes["jsonrpc.request.id"] = ctx.request.request_id
    return attributes


def _describe(span: Span, outcome: ToolResult, notes: CallNotes | None) -> None:
    if not span.is_recording():
        return
    if notes is not None and notes.deferred_route is not None:
        span.set_attribute("truloop.deferred.route", notes.deferred_route)
    status, code = outcome_status(outcome)  # as the call's audit line says it
    if code is not None:  # an error or a cancellation
        from opentelemetry.trace import StatusCode

        span.set_attribute("error.type", code)
        span.set_status(StatusCode.ERROR, code)
    elif status == "input_required":
        span.set_attribute("truloop.tool.status", "input_required")
