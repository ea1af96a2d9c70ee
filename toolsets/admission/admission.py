"""`Admission`: the caller's bounds, checked once per request before it runs (the front door holds one).

`enter` returns a `Ticket` to give back with `leave` when the request ends, or a `Refused` saying which bound was
reached and how long to wait. A refusal is counted by the deployment's `RefusalCounter` (by kind and limit, never by
user). With no limits set it costs one comparison.
"""

from __future__ import annotations

from typing import Protocol

from toolsets.admission.kinds import RequestKind
from toolsets.admission.limits import Limiter, Limits, Refused
from toolsets.admission.redis_limiter import new_slot


class RefusalCounter(Protocol):
    def limited(self, kind: str, limit: str) -> None:
        """One request of `kind` refused for its `limit` (`rate` or `concurrency`)."""
        ...


class Ticket:
    __slots__ = ("_limiter", "_slot", "_user")

    def __init__(self, limiter: Limiter | None = None, user_id: str = "", slot: str | None = None) -> None:
        self._limiter = limiter
        self._user = user_id
        self._slot = slot

    @property
    def holds(self) -> bool:
        return self._slot is not None

    async def leave(self) -> None:
        """Give the slot back, also while the request's task is being cancelled (a slot never leaks with it)."""
        slot, self._slot = self._slot, None
        if slot is not None and self._limiter is not None:
            import anyio

            with anyio.CancelScope(shield=True):
                await self._limiter.release(self._user, slot)


FREE = Ticket()  # what a request that holds nothing gets (a ticket whose `leave` does nothing)


class Admission:
    __slots__ = ("_counter", "_limiter", "limits")

    def __init__(self, limiter: Limiter | None, limits: Limits, *, refusals: RefusalCounter | None = None) -> None:
        self.limits = limits
        self._limiter = None if limits.off else limiter
        self._counter = refusals

    async def enter(self, user_id: str, kind: RequestKind) -> Ticket | Refused:
        limiter = self._limiter
        if limiter is None:
            return FREE
        slot = new_slot() if kind.holds_slot and self.limits.concurrent > 0 else None
        count = kind.counted and self.limits.per_minute > 0
        if slot is None and not count:
            return FREE
        refused = await limiter.acquire(user_id, count=count, slot=slot)
        if refused is not None:
            if self._counter is not None:
                self._counter.limited(kind.value, refused.limit)
            return refused
        return Ticket(limiter, user_id, slot) if slot is not None else FREE


def unlimited() -> Admission:
    """An admission step that bounds nothing (a door assembled for a test or a single in-process user)."""
    return Admission(None, Limits())
