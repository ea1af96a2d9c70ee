"""MCP tasks' records in Redis (contract.py has the record and the bounds; memory.py one process's store).

Keys (under a prefix, `truloop:` by default), each user's kept together and expiring with their last task:

- `task:{id}`: the record, expiring with the task's TTL (counted from its creation);
- `user-tasks:{user}`: a sorted set of the user's task ids by creation time (what `list` pages);
- `task-summaries:{user}`: a hash of each task's `TaskSummary` (what `list` reads, and what a record's size and
  status were when last written);
- `task-expiry:{user}`: a sorted set of the ids by expiry time, so the expired ones are found without reading records;
- `task-totals:{user}`: a hash of the user's unfinished tasks (`open`) and record bytes (`bytes`).

A create and a change are each one Lua script: a change is a compare-and-set against the record as it was read, so
two replicas changing one task never both win, and the totals move with the record they count.
"""

from __future__ import annotations

from typing import Any

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

_EXPIRED = """
local function prune(summaries, totals, index, expiry, now)
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', expiry, '-inf', now)) do
    local raw = redis.call('HGET', summaries, id)
    if raw then
      local summary = cjson.decode(raw)
      redis.call('HINCRBY', totals, 'bytes', -summary.bytes)
      if summary.status == 'working' or summary.status == 'input_required' then
        redis.call('HINCRBY', totals, 'open', -1)
      end
      redis.call('HDEL', summaries, id)
    end
    redis.call('ZREM', expiry, id)
    redis.call('ZREM', index, id)
  end
end
"""

# KEYS: task, index, summaries, expiry, totals. ARGV: id, record, summary, created, expires, now, bytes, max open,
# max bytes. 0 made; 1 too many unfinished; 2 too many bytes.
CREATE = (
    _EXPIRED
    + """
prune(KEYS[3], KEYS[5], KEYS[2], KEYS[4], ARGV[6])
if tonumber(redis.call('HGET', KEYS[5], 'open') or '0') >= tonumber(ARGV[8]) then return 1 end
if tonumber(redis.call('HGET', KEYS[5], 'bytes') or '0') + tonumber(ARGV[7]) > tonumber(ARGV[9]) then return 2 end
redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[5])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[4], ARGV[5], ARGV[1])
redis.call('HINCRBY', KEYS[5], 'open', 1)
redis.call('HINCRBY', KEYS[5], 'bytes', tonumber(ARGV[7]))
local ttl = tonumber(ARGV[5]) - tonumber(ARGV[6])
for i = 2, 5 do
  if redis.call('PTTL', KEYS[i]) < ttl then redis.call('PEXPIRE', KEYS[i], ttl) end
end
return 0
"""
)

# KEYS: task, summaries, totals. ARGV: id, the record as read, the record now, its summary, expires, bytes delta,
# unfinished delta, max bytes. 0 changed; 1 changed meanwhile (read it again); 2 too many bytes.
CHANGE = """
if redis.call('GET', KEYS[1]) ~= ARGV[2] then return 1 end
local delta = tonumber(ARGV[6])
if delta > 0 and tonumber(redis.call('HGET', KEYS[3], 'bytes') or '0') + delta > tonumber(ARGV[8]) then return 2 end
redis.call('SET', KEYS[1], ARGV[3], 'PXAT', ARGV[5])
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[4])
  redis.call('HINCRBY', KEYS[3], 'bytes', delta)
  redis.call('HINCRBY', KEYS[3], 'open', tonumber(ARGV[7]))
end
return 0
"""

MAX_TRIES = 50


class RedisTaskStore:
    def __init__(
        self,
        client: Any,
        *,
        prefix: str = "truloop:",
        max_unfinished: int = MAX_TASKS_PER_USER,
        max_user_bytes: int = MAX_USER_BYTES,
    ) -> None:
        """`client`: the deployment's Redis client (toolsets/infra/redis_client.py), or a URL to open one on."""
        from toolsets.infra.redis_client import redis_of

        self._redis = redis_of(client)
        self._prefix = prefix
        self._max_unfinished = max_unfinished
        self._max_bytes = max_user_bytes
        self._create = self._redis.register_script(CREATE)
        self._change = self._redis.register_script(CHANGE)

    def _task(self, task_id: str) -> str:
        return f"{self._prefix}task:{task_id}"

    def _user(self, kind: str, owner: str) -> str:
        return f"{self._prefix}{kind}:{owner}"

    async def create(self, record: TaskRecord) -> TaskRecord:
        raw, size = sized(record)
        if size > MAX_RECORD_BYTES:
            raise TaskTooLargeError(size)
        owner = record.owner
        keys = [
            self._task(record.task_id),
            self._user("user-tasks", owner),
            self._user("task-summaries", owner),
            self._user("task-expiry", owner),
            self._user("task-totals", owner),
        ]
        summary = record.summary(size).model_dump_json()
        args = [record.task_id, raw, summary, record.created_ms, record.expires_ms, now_ms(), size]
        refused = await self._create(keys=keys, args=[*args, self._max_unfinished, self._max_bytes])
        if refused == 1:
            raise TaskLimitError(owner)
        if refused == 2:
            raise TaskBudgetError()
        return record

    async def get(self, owner: str, task_id: str) -> TaskRecord | None:
        raw = await self._redis.get(self._task(task_id))
        if raw is None:
            return None
        record = TaskRecord.model_validate_json(raw)
        return record if record.owner == owner else None

    async def change(self, owner: str, task_id: str, change: Change) -> TaskRecord | None:
        keys = [self._task(task_id), self._user("task-summaries", owner), self._user("task-totals", owner)]
        for _ in range(MAX_TRIES):  # optimistic: another replica changing it meanwhile makes us read it again
            raw = await self._redis.get(keys[0])
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
            changed, new_raw, size = fitted(changed.model_copy(update={"updated_ms": now_ms()}))
            for _budget in range(2):
                outcome = await self._change(
                    keys=keys,
                    args=[
                        task_id,
                        raw,
                        new_raw,
                        changed.summary(size).model_dump_json(),
                        record.expires_ms,
                        size - _size(raw),
                        -1 if changed.terminal else 0,
                        self._max_bytes,
                    ],
                )
                if outcome != 2:
                    break
                changed, new_raw, size = over_budget(changed, size)
            if outcome == 0:
                return changed
        raise RuntimeError(f"task {task_id} kept changing under us")

    async def list(self, owner: str, cursor: str | None, limit: int) -> tuple[list[TaskSummary], str | None]:
        start = cursor_start(cursor)
        index = self._user("user-tasks", owner)
        ids = await self._redis.zrange(index, start, start + limit - 1)
        total = await self._redis.zcard(index)
        page: list[TaskSummary] = []
        if ids:
            now = now_ms()
            for raw in await self._redis.hmget(self._user("task-summaries", owner), ids):
                if raw is not None and (summary := TaskSummary.model_validate_json(raw)).expires_ms > now:
                    page.append(summary)
        return page, next_cursor(start, limit, total)


def _size(raw: str | bytes) -> int:
    return len(raw.encode() if isinstance(raw, str) else raw)
