"""MCP tasks' state: one record per task, visible only to the caller who made it, kept until its TTL runs out.

`InMemoryTaskStore` serves one process (stdio); `RedisTaskStore` lets every replica read and finish a task another
replica made, and keeps it across restarts. Keys (under a prefix, `truloop:` by default): `task:{id}` the record
(expiring with the task's TTL, counted from its creation) and `user-tasks:{user}` a sorted set of the user's task ids
by creation time (an id whose record expired is dropped when met). A terminal status (completed, failed,
cancelled) is final: a change of a finished task is refused, so a late device answer cannot revive a cancelled task.

Bounds: at most `MAX_TASKS_PER_USER` live tasks per user (a new one past it is refused), `MAX_RECORD_BYTES` per
record (a result larger than that fails the task instead of being kept).
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})
MAX_TASKS_PER_USER = 1000
MAX_RECORD_BYTES = 4 * 1024 * 1024
DEFAULT_POLL_MS = 1000


class TaskRecord(BaseModel):
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
    claims: dict[str, Any] = Field(default_factory=dict)
    arguments: dict[str, Any] = Field(default_factory=dict)
    modern: bool = True  # made by a 2026-07-28 request (else a 2025-11-25 session's)
    client_capabilities: dict[str, Any] = Field(default_factory=dict)
    answers: dict[str, Any] = Field(default_factory=dict)  # the client's answers so far, by question key
    device_answer: dict[str, Any] | None = None  # the device's JSON-RPC response to `pending_call_id`

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def expired(self, now_ms: int) -> bool:
        return now_ms >= self.created_ms + self.ttl_ms


class TaskLimitError(Exception):
    """The caller already has `MAX_TASKS_PER_USER` live tasks."""


Change = Callable[[TaskRecord], TaskRecord | None]  # the record as it should become, or None to leave it


class TaskStore(Protocol):
    async def create(self, record: TaskRecord) -> TaskRecord: ...

    async def get(self, owner: str, task_id: str) -> TaskRecord | None:
        """The task if it exists, has not expired and is `owner`'s (else None: the three are not told apart)."""
        ...

    async def change(self, owner: str, task_id: str, change: Change) -> TaskRecord | None:
        """Apply `change` to a live, unfinished task of `owner`'s, atomically; the record as it is afterwards (None:
        no such task)."""
        ...

    async def list(self, owner: str, cursor: str | None, limit: int) -> tuple[list[TaskRecord], str | None]:
        """`owner`'s live tasks, oldest first, a page at a time (the cursor is the next task's place)."""
        ...


def _now_ms() -> int:
    return int(time.time() * 1000)


def _checked(record: TaskRecord) -> TaskRecord:
    if len(record.model_dump_json()) > MAX_RECORD_BYTES:
        return record.model_copy(
            update={"result": None, "status": "failed", "status_message": "The result was too large to keep."}
        )
    return record


class InMemoryTaskStore:
    def __init__(self) -> None:
        self._tasks: dict[str, TaskRecord] = {}

    def _live(self, owner: str, task_id: str) -> TaskRecord | None:
        record = self._tasks.get(task_id)
        if record is None or record.expired(_now_ms()):
            self._tasks.pop(task_id, None)
            return None
        return record if record.owner == owner else None

    async def create(self, record: TaskRecord) -> TaskRecord:
        now = _now_ms()
        for task_id in [k for k, v in self._tasks.items() if v.expired(now)]:
            del self._tasks[task_id]
        if sum(1 for task in self._tasks.values() if task.owner == record.owner) >= MAX_TASKS_PER_USER:
            raise TaskLimitError(record.owner)
        self._tasks[record.task_id] = record = _checked(record)
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
        if changed is not None:
            self._tasks[task_id] = record = _checked(changed.model_copy(update={"updated_ms": _now_ms()}))
        return record

    async def list(self, owner: str, cursor: str | None, limit: int) -> tuple[list[TaskRecord], str | None]:
        mine = sorted(
            (t for t in self._tasks.values() if t.owner == owner and not t.expired(_now_ms())),
            key=lambda t: (t.created_ms, t.task_id),
        )
        return _page(mine, cursor, limit)


class RedisTaskStore:
    def __init__(self, client: Any, *, prefix: str = "truloop:") -> None:
        """`client`: the deployment's Redis client (toolsets/infra/redis_client.py), or a URL to open one on."""
        from toolsets.infra.redis_client import redis_of

        self._redis = redis_of(client)
        self._prefix = prefix

    def _task(self, task_id: str) -> str:
        return f"{self._prefix}task:{task_id}"

    def _user(self, owner: str) -> str:
        return f"{self._prefix}user-tasks:{owner}"

    async def create(self, record: TaskRecord) -> TaskRecord:
        record = _checked(record)
        index = self._user(record.owner)
        await self._redis.zremrangebyscore(index, "-inf", _now_ms() - 86_400_000 * 30)  # (ids long gone)
        if await self._redis.zcard(index) >= MAX_TASKS_PER_USER and not await self._prune(record.owner):
            raise TaskLimitError(record.owner)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.set(self._task(record.task_id), record.model_dump_json(), px=record.ttl_ms)
            pipe.zadd(index, {record.task_id: record.created_ms})
            pipe.pexpire(index, max(record.ttl_ms, 1000))
            await pipe.execute()
        return record

    async def _prune(self, owner: str) -> bool:
        """Drop the ids whose records expired; whether the user is under the limit now."""
        index = self._user(owner)
        ids = await self._redis.zrange(index, 0, -1)
        gone = [task_id for task_id in ids if not await self._redis.exists(self._task(_text(task_id)))]
        if gone:
            await self._redis.zrem(index, *gone)
        return len(ids) - len(gone) < MAX_TASKS_PER_USER

    async def get(self, owner: str, task_id: str) -> TaskRecord | None:
        raw = await self._redis.get(self._task(task_id))
        if raw is None:
            return None
        record = TaskRecord.model_validate_json(raw)
        return record if record.owner == owner else None

    async def change(self, owner: str, task_id: str, change: Change) -> TaskRecord | None:
        key = self._task(task_id)
        async with self._redis.pipeline(transaction=True) as pipe:
            for _ in range(50):  # optimistic: another replica changing it meanwhile makes us read it again
                try:
                    await pipe.watch(key)
                    raw = await pipe.get(key)
                    if raw is None:
                        return None
                    record = TaskRecord.model_validate_json(raw)
                    if record.owner != owner:
                        return None
                    if record.terminal:
                        return record
                    changed = change(record)
                    if changed is None:
                        return record
                    changed = _checked(changed.model_copy(update={"updated_ms": _now_ms()}))
                    pipe.multi()
                    pipe.set(key, changed.model_dump_json(), keepttl=True)
                    await pipe.execute()
                    return changed
                except _watch_error():
                    continue
                finally:
                    await pipe.reset()
        raise RuntimeError(f"task {task_id} kept changing under us")

    async def list(self, owner: str, cursor: str | None, limit: int) -> tuple[list[TaskRecord], str | None]:
        ids = [_text(task_id) for task_id in await self._redis.zrange(self._user(owner), 0, -1)]
        records = []
        for task_id in ids:
            record = await self.get(owner, task_id)
            if record is not None:
                records.append(record)
        return _page(records, cursor, limit)


def _page(records: list[TaskRecord], cursor: str | None, limit: int) -> tuple[list[TaskRecord], str | None]:
    start = 0
    if cursor:
        try:
            start = max(0, int(json.loads(cursor)))
        except (ValueError, TypeError):
            raise ValueError("Invalid cursor; start again without one.") from None
    page = records[start : start + limit]
    more = start + limit < len(records)
    return page, (json.dumps(start + limit) if more else None)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _watch_error() -> type[Exception]:
    from redis.exceptions import WatchError

    return WatchError
