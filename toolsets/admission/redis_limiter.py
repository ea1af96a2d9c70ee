"""The limiter every replica shares, on the deployment's Redis: one script call to be admitted, one to finish.

Keys (under the deployment's prefix): `limits:{user}:rate`, the user's GCRA timestamp in µs (expiring when it has
passed), and `limits:{user}:slots`, a sorted set of the slots held, scored by when their lease ends. A slot's lease
is `SLOT_LEASE_MS`: a replica that dies holding slots frees them within that, and a call running longer stops
counting then. Time is Redis's own (`TIME`), so replicas with skewed clocks count alike.

When Redis cannot be reached, the replica counts in its own memory (`MemoryLimiter`) until it can again, with one
warning: a bound that is briefly per replica is better than refusing every request while Redis is away.
"""

from __future__ import annotations

import logging
import secrets
import time
from typing import Any

from toolsets.admission.limits import WINDOW_MS, Limits, Refused
from toolsets.admission.memory_limiter import MemoryLimiter

logger = logging.getLogger("truloop.admission")

SLOT_LEASE_MS = 120_000
WARN_EVERY_S = 30.0

# KEYS: rate, slots. ARGV: interval µs (0: no rate), window µs, max slots (0: none), slot ('' : none), lease ms.
# Returns {0, 0} admitted, {1, wait ms} past the rate, {2, 0} too many at once.
ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local most = tonumber(ARGV[3])
local slot = ARGV[4]
if most > 0 and slot ~= '' then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', math.floor(now / 1000))
  if redis.call('ZCARD', KEYS[2]) >= most then return {2, 0} end
end
local interval = tonumber(ARGV[1])
if interval > 0 then
  local window = tonumber(ARGV[2])
  local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
  if tat < now then tat = now end
  tat = tat + interval
  if tat - now > window then return {1, math.ceil((tat - now - window) / 1000)} end
  redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000) + 1)
end
if most > 0 and slot ~= '' then
  local lease = tonumber(ARGV[5])
  redis.call('ZADD', KEYS[2], math.floor(now / 1000) + lease, slot)
  redis.call('PEXPIRE', KEYS[2], lease)
end
return {0, 0}
"""


class RedisLimiter:
    def __init__(self, client: Any, limits: Limits, *, prefix: str = "truloop:") -> None:
        """`client`: the deployment's Redis client (toolsets/infra/redis_client.py)."""
        self._redis = client
        self._limits = limits
        self._prefix = prefix
        self._script: Any = None
        self._fallback = MemoryLimiter(limits)
        self._local: set[str] = set()  # slots taken from the fallback while Redis was away
        self._warned = 0.0

    def _keys(self, user_id: str) -> list[str]:
        base = f"{self._prefix}limits:{user_id}"
        return [f"{base}:rate", f"{base}:slots"]

    async def acquire(self, user_id: str, *, count: bool, slot: str | None) -> Refused | None:
        limits = self._limits
        if self._script is None:
            self._script = self._redis.register_script(ACQUIRE)
        taken = slot if slot is not None and limits.concurrent > 0 else None
        args = [
            limits.interval_us if count else 0,
            WINDOW_MS * 1000,
            limits.concurrent if taken is not None else 0,
            taken or "",
            SLOT_LEASE_MS,
        ]
        try:
            verdict, wait_ms = await self._script(keys=self._keys(user_id), args=args)
        except Exception as exc:
            self._warn(exc)
            refused = self._fallback.acquire_now(user_id, count=count, slot=taken)
            if refused is None and taken is not None:
                self._local.add(taken)
            return refused
        if int(verdict) == 1:
            return Refused.rate(limits, float(wait_ms))
        if int(verdict) == 2:
            return Refused.busy(limits)
        return None

    async def release(self, user_id: str, slot: str) -> None:
        if slot in self._local:
            self._local.discard(slot)
            self._fallback.release_now(user_id)
            return
        try:
            await self._redis.zrem(self._keys(user_id)[1], slot)
        except Exception as exc:  # its lease frees it
            self._warn(exc)

    def _warn(self, exc: Exception) -> None:
        now = time.monotonic()
        if now - self._warned >= WARN_EVERY_S:
            self._warned = now
            logger.warning(
                "Redis is unreachable (%s): per-user limits are counted on this replica alone until it is back",
                type(exc).__name__,
            )


def new_slot() -> str:
    return secrets.token_hex(8)
