"""One process's tasks (a stdio server's): the same bounds as Redis's store, kept in the process."""

from __future__ import annotations

from toolsets.infra.store.tasks.contract import (
    MAX_RECORD_BYTES,
    MAX_TASKS_PER_USER,
    MAX_USER_BYTES,
    Change,
    TaskBudgetError,
    TaskLimitError,
    TaskRecord,
    TaskSummary,
    TaskTooLargeError,
    now_ms,
)
from toolsets.infra.store.tasks.shared import cursor_start, fitted, next_cursor, over_budget, sized


class InMemoryTaskStore:
    """One process's tasks: the same bounds as Redis, each user's ids in creation order (the list pages those)."""

    def __init__(self, *, max_unfinished: int = MAX_TASKS_PER_USER, max_user_bytes: int = MAX_USER_BYTES) -> None:
        self._max_unfinished = max_unfinished
        self._max_bytes = max_user_bytes
        self._tasks: dict[str, tuple[TaskRecord, int]] = {}  # id -> (record, its JSON's size)
        self._owned: dict[str, dict[str, None]] = {}  # owner -> their ids, oldest first

    def _live(self, owner: str, task_id: str) -> TaskRecord | None:
        held = self._tasks.get(task_id)
        if held is None or held[0].expired(now_ms()):
            self._drop(task_id)
            return None
        return held[0] if held[0].owner == owner else None

    def _drop(self, task_id: str) -> None:
        held = self._tasks.pop(task_id, None)
        if held is not None:
            ids = self._owned.get(held[0].owner, {})
            ids.pop(task_id, None)
            if not ids:
                self._owned.pop(held[0].owner, None)

    def _totals(self, owner: str) -> tuple[int, int]:
        """(unfinished tasks, bytes) of `owner`'s live records."""
        unfinished = size = 0
        for record, held in (self._tasks[task_id] for task_id in self._owned.get(owner, {})):
            unfinished += not record.terminal
            size += held
        return unfinished, size

    async def create(self, record: TaskRecord) -> TaskRecord:
        now = now_ms()
        for task_id in [k for k, (v, _) in self._tasks.items() if v.expired(now)]:
            self._drop(task_id)
        size = sized(record)[1]
        if size > MAX_RECORD_BYTES:
            raise TaskTooLargeError(size)
        unfinished, held = self._totals(record.owner)
        if unfinished >= self._max_unfinished:
            raise TaskLimitError(record.owner)
        if held + size > self._max_bytes:
            raise TaskBudgetError()
        self._tasks[record.task_id] = (record, size)
        self._owned.setdefault(record.owner, {})[record.task_id] = None
        return record

    async def get(self, owner: str, task_id: str) -> TaskRecord | None:
        return self._live(owner, task_id)

    async def change(self, owner: str, task_id: str, change: Change) -> TaskRecord | None:
        record = self._live(owner, task_id)
        if record is None:
            return None
        if record.terminal:
            return record
        changed = change(record)
        if changed is None:
            return record
        changed, _, size = fitted(changed.model_copy(update={"updated_ms": now_ms()}))
        before = self._tasks[task_id][1]
        if size > before and self._totals(owner)[1] - before + size > self._max_bytes:
            changed, _, size = over_budget(changed, size)
        self._tasks[task_id] = (changed, size)
        return changed

    async def list(self, owner: str, cursor: str | None, limit: int) -> tuple[list[TaskSummary], str | None]:
        start = cursor_start(cursor)
        ids = list(self._owned.get(owner, {}))
        page = []
        for task_id in ids[start : start + limit]:
            record = self._live(owner, task_id)
            if record is not None:
                page.append(record.summary(self._tasks[task_id][1]))
        return page, next_cursor(start, limit, len(ids))
