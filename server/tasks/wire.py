"""A task record in each era's words.

2026-07-28 (the `io.modelcontextprotocol/tasks` extension): a flat task with `ttlMs` and `pollIntervalMs`; `tasks/get`
inlines the outcome (`result`, `error`) and the open questions (`inputRequests`); a tool's own error is `completed`.
2025-11-25: the task is `{task: ...}` when made, flat elsewhere, with `ttl` and `pollInterval`; the outcome comes from
`tasks/result`, carrying the related-task `_meta`; a tool's own error is `failed`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from server.mcp.wire_forms import HANDSHAKE_CAPABILITIES
from toolsets.infra.store.tasks import TaskRecord, TaskSummary

EXTENSION = "io.modelcontextprotocol/tasks"
RELATED_TASK = "io.modelcontextprotocol/related-task"
# what a 2025-11-25 server declares: tasks of `tools/call`, listed and cancelled
HANDSHAKE_TASKS: dict[str, Any] = HANDSHAKE_CAPABILITIES["tasks"]


def declares_tasks(capabilities: Any) -> bool:
    """Whether a client's capabilities (a request's own, on 2026-07-28) declare the tasks extension."""
    extensions = getattr(capabilities, "extensions", None)
    return isinstance(extensions, dict) and EXTENSION in extensions


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _legacy_status(record: TaskSummary) -> str:
    if record.tool_error:
        return "failed"  # 2025-11-25: a tool's error fails its task
    return record.status


def task_fields(task_or_summary: TaskRecord | TaskSummary, *, modern: bool) -> dict[str, Any]:
    """The task itself (no outcome): what every era's answers share."""
    record = task_or_summary.summary() if isinstance(task_or_summary, TaskRecord) else task_or_summary
    task: dict[str, Any] = {
        "taskId": record.task_id,
        "status": record.status if modern else _legacy_status(record),
        "createdAt": iso(record.created_ms),
        "lastUpdatedAt": iso(record.updated_ms),
    }
    if record.status_message:
        task["statusMessage"] = record.status_message
    if modern:
        task["ttlMs"] = record.ttl_ms
        task["pollIntervalMs"] = record.poll_interval_ms
    else:
        task["ttl"] = record.ttl_ms
        task["pollInterval"] = record.poll_interval_ms
    return task


def created(record: TaskRecord, *, modern: bool) -> dict[str, Any]:
    """The `tools/call` answer that made the task."""
    if modern:
        return {"resultType": "task", **task_fields(record, modern=True)}
    return {"task": task_fields(record, modern=False)}


def detailed(record: TaskRecord) -> dict[str, Any]:
    """2026-07-28 `tasks/get`: the task with its outcome or its open questions."""
    task = task_fields(record, modern=True)
    if record.status == "completed" and record.result is not None:
        task["result"] = record.result
    elif record.status == "failed":
        task["error"] = record.error or {"code": -32603, "message": record.status_message or "The task failed."}
    elif record.status == "input_required" and record.input_requests:
        task["inputRequests"] = record.input_requests
    return {"resultType": "complete", **task}


def outcome(record: TaskRecord) -> dict[str, Any]:
    """2025-11-25 `tasks/result` of a finished task: the call's own result, marked as the task's. (A failed task
    whose call had no result answers with its error: `error_of`.)"""
    result = dict(record.result or {})
    result["_meta"] = {**(result.get("_meta") or {}), RELATED_TASK: {"taskId": record.task_id}}
    return result


def error_of(record: TaskRecord) -> dict[str, Any] | None:
    """The JSON-RPC error a finished task's call ended with (None: it has a result)."""
    if record.status == "cancelled":
        return {"code": -32603, "message": "The task was cancelled."}
    if record.result is None:
        return record.error or {"code": -32603, "message": record.status_message or "The task failed."}
    return None
