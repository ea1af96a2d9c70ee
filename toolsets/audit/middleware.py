"""The audit middleware: a `tool_call` line when a call enters the pipeline, a `tool_result` line with its
outcome when it leaves (composed outermost in toolsets/profiles.py, so it sees every envelope).

The sink is the deployment's (`ctx.deps.audit`, see `Services`); without one this is a pass-through.
Calls refused before the pipeline (unknown tool, invalid arguments) are written by `audit_refusal`.
Auditing never fails a call: a problem here is logged and the call goes on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from functools import cache
from typing import Any

from toolsets.audit.notes import CallNotes, call_notes
from toolsets.audit.record import Entry
from toolsets.audit.writer import AuditSink
from toolsets.call import ToolCall, new_call_id
from toolsets.context import ToolContext
from toolsets.envelope import ToolErr, ToolInputRequired, ToolOk, ToolResult
from toolsets.errors import ErrorCode
from toolsets.middleware import CallNext

logger = logging.getLogger("truloop.audit")


def audit_sink(ctx: ToolContext[Any]) -> AuditSink | None:
    return getattr(ctx.deps, "audit", None)


@cache
def builtin_version() -> str:
    """The version of a built-in tool: the package's."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("truloop-mcp")
    except PackageNotFoundError:
        return "unknown"


async def audit(call: ToolCall, call_next: CallNext) -> ToolResult:
    sink = audit_sink(call.ctx)
    if sink is None:
        return await call_next(call)
    with call_notes() as notes:
        started = time.perf_counter()
        base = _emit_call(sink, call.tool.name, call.call_id, call.arguments, call.ctx, notes)
        outcome: ToolResult | None = None
        try:
            outcome = await call_next(call)
            return outcome
        finally:  # also when the surrounding task is cancelled (the client withdrew the request)
            if base is not None:
                _emit_result(sink, base, outcome, notes, (time.perf_counter() - started) * 1000, call.tool.deferred)


def audit_refusal(name: str, raw_args: Any, ctx: ToolContext[Any], refusal: ToolErr) -> None:
    """A call the dispatcher refused before it reached the pipeline: both lines, at once."""
    sink = audit_sink(ctx)
    if sink is None:
        return
    notes = CallNotes()
    arguments = raw_args if isinstance(raw_args, Mapping) or raw_args is None else str(raw_args)
    base = _emit_call(sink, name, new_call_id(), arguments, ctx, notes)
    if base is not None:
        _emit_result(sink, base, refusal, notes, 0.0, deferred=False)


def _emit_call(
    sink: AuditSink, name: str, call_id: str, arguments: Any, ctx: ToolContext[Any], notes: CallNotes
) -> Entry | None:
    try:
        request, caller = ctx.request, ctx.caller
        base: Entry = {
            "call_id": call_id,
            "request_id": request.request_id,
            "session_id": request.session_id,
            "transport": request.transport,
            "protocol_version": request.protocol_version,
            "user_id": caller.user_id,
            "role": caller.role,
            "profile": request.profile,
            "tool_name": name,
        }
        nested = not ctx.host_approves
        sink.emit(_entry("tool_call", base, notes, {"arguments": arguments, "nested": nested}))
        base["arguments"], base["nested"] = arguments, nested  # masked by the writer's thread
        return base
    except Exception:
        logger.exception("could not audit a call of %s", name)
        return None


def _emit_result(
    sink: AuditSink, base: Entry, outcome: ToolResult | None, notes: CallNotes, latency_ms: float, deferred: bool
) -> None:
    status, code = _status(outcome)
    try:
        details = {
            "arguments": base["arguments"],
            "status": status,
            "error_code": code,
            "latency_ms": round(latency_ms, 3),
            "deferred_route": (notes.deferred_route or "none") if deferred else None,
            "nested": base["nested"],
        }
        sink.emit(_entry("tool_result", base, notes, details))
    except Exception:
        logger.exception("could not audit the result of %s", base.get("tool_name"))


def _entry(event: str, base: Entry, notes: CallNotes, details: Entry) -> Entry:
    """The fields in the order a reader scans them: when, what, who, which tool, then the call's own."""
    return {
        "ts": time.time(),
        "event": event,
        **{key: base[key] for key in _WHO},
        "tool_version": notes.tool_version or builtin_version(),
        "route": notes.route,
        **details,
    }


_WHO = (
    "call_id",
    "request_id",
    "session_id",
    "transport",
    "protocol_version",
    "user_id",
    "role",
    "profile",
    "tool_name",
)


def _status(outcome: ToolResult | None) -> tuple[str, str | None]:
    if isinstance(outcome, ToolOk):
        return "ok", None
    if isinstance(outcome, ToolErr):
        return "error", outcome.code.value
    if isinstance(outcome, ToolInputRequired):
        return "input_required", None
    # ToolCancelled, or None: the request was withdrawn (the task cancelled) while the call ran
    return "cancelled", ErrorCode.CANCELLED.value
