"""What the task stores share: a record's JSON and size, a record fitted to the bounds, and the list's cursor."""

from __future__ import annotations

import json

from toolsets.infra.store.tasks.contract import (
    MAX_RECORD_BYTES,
    TOO_LARGE,
    TaskBudgetError,
    TaskRecord,
    TaskTooLargeError,
)


def sized(record: TaskRecord) -> tuple[str, int]:
    raw = record.model_dump_json()
    return raw, len(raw.encode())


def fitted(record: TaskRecord) -> tuple[TaskRecord, str, int]:
    """The record as it may be kept, its JSON and size: one too large keeps its request but fails without what the
    call or the device produced (raises `TaskTooLargeError` when even that is too large)."""
    raw, size = sized(record)
    if size <= MAX_RECORD_BYTES:
        return record, raw, size
    return _without_outcome(record, size)


def _without_outcome(record: TaskRecord, size: int) -> tuple[TaskRecord, str, int]:
    if record.result is None and record.device_answer is None and record.input_requests is None:
        raise TaskTooLargeError(size)
    failed = record.model_copy(
        update={
            "result": None,
            "device_answer": None,
            "input_requests": None,
            "status": "failed",
            "status_message": TOO_LARGE,
            "error": {"code": -32603, "message": TOO_LARGE},
            "lease_owner": None,
            "lease_expires_ms": None,
        }
    )
    raw, smaller = sized(failed)
    if smaller > MAX_RECORD_BYTES:
        raise TaskTooLargeError(smaller)
    return failed, raw, smaller


def over_budget(record: TaskRecord, size: int) -> tuple[TaskRecord, str, int]:
    """A change that would pass the user's bytes: its outcome dropped and the task failed, or `TaskBudgetError`."""
    if record.result is None and record.device_answer is None and record.input_requests is None:
        raise TaskBudgetError()
    return _without_outcome(record, size)


def cursor_start(cursor: str | None) -> int:
    if not cursor:
        return 0
    try:
        start = json.loads(cursor)
    except ValueError:
        start = None
    if not isinstance(start, int) or isinstance(start, bool) or start < 0:
        raise ValueError("Invalid cursor; start again without one.")
    return start


def next_cursor(start: int, limit: int, total: int) -> str | None:
    return json.dumps(start + limit) if start + limit < total else None
