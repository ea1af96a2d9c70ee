"""Canary rollouts in Redis, so every replica routes by the same share and decides on the same samples.

Keys (under the prefix): `canary:state:{tool}` the rollout's state (JSON), written only over the revision it
was read at (a Lua check-and-set); `canary:tools` the tools with a state; `canary:samples:{key}` a version's
(or a candidate step's) samples, the newest `MAX_SAMPLES` kept, and `canary:count:{key}` how many were ever
recorded; scheduled runs under keys of their own (ending `@scheduled`: `CanaryState.scheduled_step_key`), never
read by the real-time windows. Samples expire a day after their last write.
"""

from __future__ import annotations

from typing import Any

from toolsets.infra.redis_client import redis_of
from toolsets.pipeline.canary.metrics import Sample
from toolsets.pipeline.canary.policy import MAX_SAMPLES
from toolsets.pipeline.canary.state import CanaryState

SAMPLES_TTL_S = 24 * 3600

# KEYS: state, tools set. ARGV: expected revision (-1: none stored), the new state's JSON, the tool.
_CHECK_AND_SET = """
local current = redis.call('GET', KEYS[1])
local expected = tonumber(ARGV[1])
if current then
  if cjson.decode(current)['revision'] ~= expected then return 0 end
elseif expected ~= -1 then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[3])
return 1
"""


class RedisCanaryStore:
    def __init__(self, client: Any, *, prefix: str = "truloop:") -> None:
        """`client`: the deployment's Redis client (toolsets/infra/redis_client.py), or a URL to open one on."""
        self._redis: Any = redis_of(client)
        self._prefix = f"{prefix}canary:"
        self._cas = self._redis.register_script(_CHECK_AND_SET)

    async def load(self, tool: str) -> CanaryState | None:
        raw = await self._redis.get(f"{self._prefix}state:{tool}")
        return None if raw is None else CanaryState.model_validate_json(raw)

    async def save(self, state: CanaryState, expected: int | None) -> bool:
        keys = [f"{self._prefix}state:{state.tool}", f"{self._prefix}tools"]
        revision = -1 if expected is None else expected
        written = await self._cas(keys=keys, args=[revision, state.model_dump_json(), state.tool])
        return bool(written)

    async def all(self) -> list[CanaryState]:
        tools = sorted(await self._redis.smembers(f"{self._prefix}tools"))
        if not tools:
            return []
        raws = await self._redis.mget([f"{self._prefix}state:{tool}" for tool in tools])
        return [CanaryState.model_validate_json(raw) for raw in raws if raw is not None]

    async def record(self, key: str, sample: Sample) -> int:
        samples, count = f"{self._prefix}samples:{key}", f"{self._prefix}count:{key}"
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.rpush(samples, sample.encode())
            pipe.ltrim(samples, -MAX_SAMPLES, -1)
            pipe.expire(samples, SAMPLES_TTL_S)
            pipe.incr(count)
            pipe.expire(count, SAMPLES_TTL_S)
            results = await pipe.execute()
        return int(results[3])

    async def samples(self, key: str) -> list[Sample]:
        return [Sample.decode(raw) for raw in await self._redis.lrange(f"{self._prefix}samples:{key}", 0, -1)]

    async def aclose(self) -> None:
        await self._redis.aclose()
