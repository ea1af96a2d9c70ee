"""MCP tasks' records (`TaskStore`): in the process (`InMemoryTaskStore`) or in Redis (`RedisTaskStore`, every
replica's)."""

from toolsets.infra.store.tasks.contract import (
    MAX_RECORD_BYTES,
    MAX_TASKS_PER_USER,
    MAX_USER_BYTES,
    ClientFlags,
    TaskBudgetError,
    TaskLimitError,
    TaskRecord,
    TaskRefused,
    TaskStore,
    TaskSummary,
    TaskTooLargeError,
    now_ms,
)
from toolsets.infra.store.tasks.memory import InMemoryTaskStore

__all__ = [
    "MAX_RECORD_BYTES",
    "MAX_TASKS_PER_USER",
    "MAX_USER_BYTES",
    "ClientFlags",
    "InMemoryTaskStore",
    "TaskBudgetError",
    "TaskLimitError",
    "TaskRecord",
    "TaskRefused",
    "TaskStore",
    "TaskSummary",
    "TaskTooLargeError",
    "now_ms",
]
