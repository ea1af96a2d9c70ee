"""One audit line: its schema (`AuditRecord`), and how a call's entry becomes that line.

The call path only gathers references (`Entry`: cheap, no copying or formatting); the writer's thread
renders them: arguments dumped and masked, the time formatted, the JSON encoded.
"""

import functools
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict
from pydantic_core import to_json

from toolsets.core.call_notes import DeferredRoute, Route
from toolsets.core.envelope import ToolErr, ToolInputRequired, ToolOk, ToolResult
from toolsets.core.errors import ErrorCode

if TYPE_CHECKING:
    from toolsets.core.context import Caller, RequestInfo
    from toolsets.pipeline.audit.masking import Masker

Status = Literal["ok", "error", "cancelled", "input_required"]
Entry = dict[str, Any]  # an AuditRecord's fields, with `ts` as epoch seconds and `arguments` not yet masked


class AuditRecord(BaseModel):
    """A line of the audit log (`event` is `tool_call` or `tool_result`; later events may add fields)."""

    model_config = ConfigDict(extra="allow")

    ts: str  # RFC 3339, UTC, milliseconds
    event: str
    call_id: str
    request_id: str | None = None
    session_id: str | None = None
    transport: str
    protocol_version: str | None = None
    user_id: str
    role: str
    profile: str | None = None
    tool_name: str
    tool_version: str
    route: Route = "stable"
    arguments: Any = None
    status: Status | None = None  # tool_result only
    error_code: str | None = None
    latency_ms: float | None = None  # tool_result only
    deferred_route: DeferredRoute | None = None  # deferred tools' tool_result only
    nested: bool = False  # a call a model made inside another tool call (the relay's composing model)
    program: str | None = None  # the code-mode program that made the call (`execute_code`), absent otherwise


def opening(event: str, call_id: str, request: "RequestInfo", caller: "Caller") -> Entry:
    """The fields every line starts with, in the order a reader scans them: when, what, then who and from where."""
    return {
        "ts": time.time(),
        "event": event,
        "call_id": call_id,
        "request_id": request.request_id,
        "session_id": request.session_id,
        "transport": request.transport,
        "protocol_version": request.protocol_version,
        "user_id": caller.user_id,
        "role": caller.role,
        "profile": request.profile,
    }


def outcome_status(outcome: ToolResult | None) -> tuple[Status, str | None]:
    """A call's `status` and `error_code` (the span's `error.type` too) from its envelope."""
    if isinstance(outcome, ToolOk):
        return "ok", None
    if isinstance(outcome, ToolErr):
        return "error", outcome.code.value
    if isinstance(outcome, ToolInputRequired):
        return "input_required", None
    # ToolCancelled, or None: the request was withdrawn (the task cancelled) while the call ran
    return "cancelled", ErrorCode.CANCELLED.value


def rfc3339(epoch: float) -> str:
    """2026-03-10T00:00:00.000Z"""
    seconds = int(epoch)
    return _second(seconds) + f".{int((epoch - seconds) * 1000):03d}Z"


@functools.lru_cache(maxsize=4)
def _second(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))


def masked_arguments(arguments: Any, masker: "Masker") -> Any:
    if isinstance(arguments, BaseModel):
        arguments = arguments.model_dump(mode="json", exclude_none=True)
    if arguments is None:
        return None
    return masker.value(arguments if isinstance(arguments, Mapping | list) else str(arguments))


def render(entry: Entry, arguments: Any) -> str:
    """The JSON line of an entry (no newline) with its arguments already masked; `ts` first, so lines sort
    and read by time."""
    line = dict(entry)
    line["ts"] = rfc3339(entry["ts"])
    if "arguments" in line:
        line["arguments"] = arguments
    return to_json(line, fallback=str).decode()
