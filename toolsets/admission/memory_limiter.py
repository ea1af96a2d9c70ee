"""The limiter of one process (no Redis): a timestamp and a count per user, in memory.

Bounded: past `MAX_USERS` users with state, the users whose allowance is whole again (their timestamp has passed) are
forgotten, which changes nothing for them; if that frees nothing, all are, and every user starts from a full allowance.
"""

from __future__ import annotations

import time

from toolsets.admission.limits import WINDOW_MS, Limits, Refused

MAX_USERS = 100_000


class MemoryLimiter:
    __slots__ = ("_busy", "_limits", "_tat")

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._tat: dict[str, int] = {}  # user -> when (µs) their allowance is whole again
        self._busy: dict[str, int] = {}  # user -> slots held

    async def acquire(self, user_id: str, *, count: bool, slot: str | None) -> Refused | None:
        return self.acquire_now(user_id, count=count, slot=slot)

    def acquire_now(self, user_id: str, *, count: bool, slot: str | None) -> Refused | None:
        limits = self._limits
        if slot is not None and limits.concurrent > 0 and self._busy.get(user_id, 0) >= limits.concurrent:
            return Refused.busy(limits)
        if count and limits.per_minute > 0:
            now = time.monotonic_ns() // 1000
            tat = max(self._tat.get(user_id, now), now) + limits.interval_us
            if tat - now > WINDOW_MS * 1000:
                return Refused.rate(limits, (tat - now - WINDOW_MS * 1000) / 1000)
            if user_id not in self._tat and len(self._tat) >= MAX_USERS:
                self._forget(now)
            self._tat[user_id] = tat
        if slot is not None and limits.concurrent > 0:
            self._busy[user_id] = self._busy.get(user_id, 0) + 1
        return None

    async def release(self, user_id: str, slot: str) -> None:
        self.release_now(user_id)

    def release_now(self, user_id: str) -> None:
        held = self._busy.get(user_id, 0) - 1
        if held > 0:
            self._busy[user_id] = held
        else:
            self._busy.pop(user_id, None)

    def _forget(self, now: int) -> None:
        whole = [user for user, tat in self._tat.items() if tat <= now]
        for user in whole:
            del self._tat[user]
        if not whole:
            self._tat.clear()
