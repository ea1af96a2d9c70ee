"""The tasks' contract: one record per MCP task, visible only to the caller who made it, kept until its TTL runs out,
its summary, the bounds, the refusals, and the store's operations (memory.py: one process's; redis.py: every
replica's).

A terminal status (completed, failed, cancelled) is final: a change of a finished task is refused, so a late device
answer cannot revive a cancelled task.

Bounds, so that what a caller sends cannot grow the server's memory (docs/security.md#tasks):

- a record is at most `MAX_RECORD_BYTES` (64 KiB) of JSON: a new task past it is refused (`TaskTooLargeError`, nothing
  stored), and a change past it too, except a result or a device answer, which fails the task instead of being kept;
  the record holds the arguments as the tool's input model validated them (the front drops unknown keys first) and a
  few flags of the client's capabilities (`ClientFlags`), never the client's own capabilities object;
- a user's live records (finished or not, until they expire) hold at most `MAX_USER_BYTES` (16 MiB) together: a new
  task past it is refused (`TaskBudgetError`), and a result that would pass it fails its task;
- at most `MAX_TASKS_PER_USER` unfinished tasks per user (`TaskLimitError`); finished ones do not count. The counts and
  the bytes are kept as running totals, so a refused create reads no record.

`list` pages the ids first and reads each one's small `TaskSummary`, never the full records. A running task holds a
lease on its record (`lease_owner`, `lease_expires_ms`): the server's task engine takes, renews and reads it.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})
MAX_TASKS_PER_USER = 1000
MAX_RECORD_BYTES = 64 * 1024
MAX_USER_BYTES = 16 * 1024 * 1024
DEFAULT_POLL_MS = 1000
TOO_LARGE = "The task's result was too large to keep (a task holds at most 64 KiB, and a user's tasks 16 MiB)."


class ClientFlags(BaseModel):
    """What a task's run needs of the capabilities of the client that made it (server/tasks/client_flags.py): whether
    it can be asked (elicitation in form or URL mode), sampled (with tools, with context), asked for roots, shown apps,
    and whether it declared tasks."""

    elicit_form: bool = False
    elicit_url: bool = False
    sampling: bool = False
    sampling_tools: bool = False
    sampling_context: bool = False
    roots: bool = False
    apps: bool = False
    tasks: bool = False


class _Lifetime(BaseModel):
    """What a task's record and its summary both say of its life: whether it is over, and when it expires."""

    status: TaskStatus
    created_ms: int
    ttl_ms: int

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def expires_ms(self) -> int:
        return self.created_ms + self.ttl_ms


class TaskRecord(_Lifetime):
    task_id: str = Field(default_factory=lambda: secrets.token_urlsafe(18))
    owner: str  # the caller's user id (the token's `sub`): nobody else sees the task
    tool: str
    status: TaskStatus = "working"
    status_message: str | None = None
    created_ms: int = Field(default_factory=lambda: int(time.time() * 1000))
    updated_ms: int = Field(default_factory=lambda: int(time.time() * 1000))
    ttl_ms: int
    poll_interval_ms: int = DEFAULT_POLL_MS
    pending_call_id: str | None = None  # the device call whose answer finishes it
    result: dict[str, Any] | None = None  # the request's result (a CallToolResult as JSON) once completed or failed
    error: dict[str, Any] | None = None  # a JSON-RPC error, when the request itself failed
    input_requests: dict[str, Any] | None = None  # what the client must answer (status input_required)
    # what running the call again needs, on any replica: who asked, in which profile and era, with what
    profile: str = "member"
    role: str = "member"
    timezone: str = "UTC"
    locale: str = "en"  # the caller's language, kept as their zone is (records from before it read as English)
    claims: dict[str, Any] = Field(default_factory=dict)
    arguments: dict[str, Any] = Field(default_factory=dict)
    modern: bool = True  # made by a 2026-07-28 request (else a 2025-11-25 session's)
    client: ClientFlags = Field(default_factory=ClientFlags)
    answers: dict[str, Any] = Field(default_factory=dict)  # the client's answers so far, by question key
    device_answer: dict[str, Any] | None = None  # the device's JSON-RPC response to `pending_call_id`
    lease_owner: str | None = None  # the engine running the call now (server/tasks/engine.py)
    lease_expires_ms: int | None = None  # past it without a renewal, that run was interrupted

    def expired(self, now_ms: int) -> bool:
        return now_ms >= self.expires_ms

    def summary(self, size: int = 0) -> TaskSummary:
        return TaskSummary(
            task_id=self.task_id,
            tool=self.tool,
            profile=self.profile,
            status=self.status,
            status_message=self.status_message,
            created_ms=self.created_ms,
            updated_ms=self.updated_ms,
            ttl_ms=self.ttl_ms,
            poll_interval_ms=self.poll_interval_ms,
            tool_error=self.status == "completed" and (self.result or {}).get("isError") is True,
            bytes=size,
        )


class TaskSummary(_Lifetime):
    """What `tasks/list` shows of a task, kept beside its record (a few hundred bytes whatever the record holds)."""

    task_id: str
    tool: str
    profile: str
    status: TaskStatus
    status_message: str | None = None
    created_ms: int
    updated_ms: int
    ttl_ms: int
    poll_interval_ms: int
    tool_error: bool = False  # completed with the tool's own error (2025-11-25 calls that failed)
    bytes: int = 0  # the size of its record's JSON


class TaskRefused(Exception):  # noqa: N818 - the base of the three refusals
    """A task (or a change of one) the bounds refuse; `message` says which and what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class TaskLimitError(TaskRefused):
    """The caller already has `MAX_TASKS_PER_USER` unfinished tasks."""

    def __init__(self, owner: str = "") -> None:
        super().__init__("Too many unfinished tasks: wait for some to finish, or cancel them, and try again.")


class TaskBudgetError(TaskRefused):
    """The caller's live task records would hold more than `MAX_USER_BYTES`."""

    def __init__(self) -> None:
        super().__init__(
            "Your tasks already hold 16 MiB, the most a user's tasks may hold: wait for finished ones to expire "
            "(each within its TTL), or cancel unfinished ones, and try again."
        )


class TaskTooLargeError(TaskRefused):
    """A record (or a change of one) would be more than `MAX_RECORD_BYTES` of JSON."""

    def __init__(self, size: int) -> None:
        super().__init__(
            f"The task would hold {size} bytes; a task holds at most {MAX_RECORD_BYTES} bytes (64 KiB) of arguments "
            "and answers. Send smaller arguments or answers."
        )


Change = Callable[[TaskRecord], TaskRecord | None]  # the record as it should become, or None to leave it


class TaskStore(Protocol):
    async def create(self, record: TaskRecord) -> TaskRecord:
        """Keep a new task (raises `TaskTooLargeError`, `TaskLimitError`, `TaskBudgetError`: nothing kept)."""
        ...

    async def get(self, owner: str, task_id: str) -> TaskRecord | None:
        """The task if it exists, has not expired and is `owner`'s (else None: the three are not told apart)."""
        ...

    async def change(self, owner: str, task_id: str, change: Change) -> TaskRecord | None:
        """Apply `change` to a live, unfinished task of `owner`'s, atomically; the record as it is afterwards (None:
        no such task). A change too large for the bounds raises `TaskRefused` and changes nothing (a result or a
        device answer too large fails the task instead)."""
        ...

    async def list(self, owner: str, cursor: str | None, limit: int) -> tuple[list[TaskSummary], str | None]:
        """`owner`'s live tasks, oldest first, a page at a time (the cursor is the next task's place)."""
        ...


def now_ms() -> int:
    return int(time.time() * 1000)
