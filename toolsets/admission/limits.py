"""A user's bounds, what a refusal says, and the limiter's contract (`MemoryLimiter` here, `RedisLimiter` beside).

The rate is a GCRA (the generic cell rate algorithm, a token bucket kept as one timestamp per user): `per_minute`
requests spread evenly, with a burst of up to `per_minute` at once after a quiet minute. A refusal says how long
until the next request would pass, so a model can wait exactly that long.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Protocol

WINDOW_MS = 60_000
BUSY_RETRY_S = 1  # what a refusal for too many calls at once tells the caller to wait


@dataclass(frozen=True, slots=True)
class Limits:
    per_minute: int = 0  # requests counted per user and minute (0: no limit)
    concurrent: int = 0  # requests running at once per user (0: no limit)

    @property
    def off(self) -> bool:
        return self.per_minute <= 0 and self.concurrent <= 0

    @property
    def interval_us(self) -> int:
        """The time one counted request uses up of the window."""
        return WINDOW_MS * 1000 // self.per_minute if self.per_minute > 0 else 0


@dataclass(frozen=True, slots=True)
class Refused:
    limit: Literal["rate", "concurrency"]
    retry_after_s: int
    limits: Limits

    @classmethod
    def rate(cls, limits: Limits, wait_ms: float) -> Refused:
        return cls("rate", max(1, math.ceil(wait_ms / 1000)), limits)

    @classmethod
    def busy(cls, limits: Limits) -> Refused:
        return cls("concurrency", BUSY_RETRY_S, limits)

    @property
    def reason(self) -> str:
        """The text the caller reads (a model, for a tool call): what was reached and how long to wait."""
        if self.limit == "rate":
            return (
                f"Too many requests: at most {self.limits.per_minute} a minute per user. "
                f"Try again in {self.retry_after_s} s."
            )
        return (
            f"Too many requests at once: at most {self.limits.concurrent} running per user. "
            f"Try again in {self.retry_after_s} s, once one has finished."
        )


class Limiter(Protocol):
    async def acquire(self, user_id: str, *, count: bool, slot: str | None) -> Refused | None:
        """Count one request of `user_id` (when `count`) and take a slot named `slot` (when given), both or
        neither; None when admitted."""
        ...

    async def release(self, user_id: str, slot: str) -> None:
        """Give back the slot `acquire` took."""
        ...


class RequestRefusedError(Exception):
    """A request other than a tool call refused by its caller's bounds (a tool call gets a `rate_limited` result)."""

    def __init__(self, refused: Refused) -> None:
        super().__init__(refused.reason)
        self.refused = refused
