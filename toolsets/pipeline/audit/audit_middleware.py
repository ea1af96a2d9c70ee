"""The audit middleware: a `tool_call` line when a call enters the pipeline, a `tool_result` line with its
outcome when it leaves (composed outermost but for the canary, which picks the version both lines carry).

`AuditMiddleware(sink)` is built once at composition with the deployment's sink (toolsets/pipeline/audit/writer);
a deployment without an audit log composes none. Calls refused before the pipeline (unknown tool, invalid
arguments) get both lines from `refused`. Auditing never fails a call: a problem here is logged and the call
goes on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from toolsets.core.call import ToolCall, new_call_id
from toolsets.core.call_notes import CallNotes
from toolsets.core.context import ToolContext
from toolsets.core.envelope import ToolErr, ToolResult
from toolsets.core.middleware import CallNext
from toolsets.pipeline.audit.record import Entry, opening, outcome_status
from toolsets.pipeline.audit.writer import AuditSink

logger = logging.getLogger("truloop.audit")


def builtin_version() -> str:
    """The version of a built-in tool: the package's (read from its metadata each time: callers keep it)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("truloop-mcp")
    except PackageNotFoundError:
        return "unknown"


class AuditMiddleware:
    __slots__ = ("sink", "version")

    def __init__(self, sink: AuditSink, version: str | None = None) -> None:
        self.sink = sink
        self.version = version  # of the built-in tools (`builtin_version`, read with the first call's lines)

    async def __call__(self, call: ToolCall, call_next: CallNext) -> ToolResult:
        notes = call.notes
        started = time.perf_counter()
        version = self.version or self._version()
        entry = _emit_call(self.sink, version, call.tool.name, call.call_id, call.arguments, call.ctx, notes)
        outcome: ToolResult | None = None
        try:
            outcome = await call_next(call)
            return outcome
        finally:  # also when the surrounding task is cancelled (the client withdrew the request)
            if entry is not None:
                latency = (time.perf_counter() - started) * 1000
                _emit_result(self.sink, version, entry, outcome, notes, latency, call.tool.deferred)

    def refused(self, name: str, raw_args: Any, ctx: ToolContext[Any], refusal: ToolErr) -> None:
        """A call the dispatcher refused before it reached the pipeline: both lines, at once."""
        notes = CallNotes()
        arguments = raw_args if isinstance(raw_args, Mapping) or raw_args is None else str(raw_args)
        version = self.version or self._version()
        entry = _emit_call(self.sink, version, name, new_call_id(), arguments, ctx, notes)
        if entry is not None:
            _emit_result(self.sink, version, entry, refusal, notes, 0.0, deferred=False)

    def _version(self) -> str:
        self.version = builtin_version()
        return self.version


def _emit_call(
    sink: AuditSink, version: str, name: str, call_id: str, arguments: Any, ctx: ToolContext[Any], notes: CallNotes
) -> Entry | None:
    """The `tool_call` entry (its fields in the order a reader scans them: when, what, who, which tool, then
    the call's own), emitted; the writer masks the arguments when it renders the line."""
    try:
        entry: Entry = {
            **opening("tool_call", call_id, ctx.request, ctx.caller),
            "tool_name": name,
            "tool_version": notes.tool_version or version,
            "route": notes.route,
            "arguments": arguments,
            "nested": not ctx.host_approves,
        }
        if ctx.program is not None:
            entry["program"] = ctx.program  # a call a code-mode program made (execute_code)
        sink.emit(entry)
        return entry
    except Exception:
        logger.exception("could not audit a call of %s", name)
        return None


def _emit_result(
    sink: AuditSink,
    version: str,
    call_entry: Entry,
    outcome: ToolResult | None,
    notes: CallNotes,
    latency_ms: float,
    deferred: bool,
) -> None:
    """The `tool_result` entry: the call's fields (with the version and route as they ended), then the outcome."""
    status, code = outcome_status(outcome)
    try:
        entry = call_entry.copy()
        nested = entry.pop("nested")
        program = entry.pop("program", None)
        entry["ts"] = time.time()
        entry["event"] = "tool_result"
        entry["tool_version"] = notes.tool_version or version
        entry["route"] = notes.route
        entry["status"] = status
        entry["error_code"] = code
        entry["latency_ms"] = round(latency_ms, 3)
        entry["deferred_route"] = (notes.deferred_route or "none") if deferred else None
        entry["nested"] = nested
        if program is not None:
            entry["program"] = program
        sink.emit(entry)
    except Exception:
        logger.exception("could not audit the result of %s", call_entry.get("tool_name"))
