"""The inbox's pure pieces, the same on every backend: the rate limit's windows and when it refuses."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from toolsets.infra.clock import Precision
from toolsets.infra.store.errors import RateLimited

# Microseconds: the rate limit orders a sender's messages by their stamps, several may share a second.
PRECISION: Precision = "microseconds"


@dataclass(frozen=True, slots=True)
class RateLimit:
    per_minute: int = 5
    per_day: int = 100

    def windows(self) -> tuple[tuple[dt.timedelta, int], ...]:
        """Each window and how many messages a sender may send within it."""
        return (dt.timedelta(minutes=1), self.per_minute), (dt.timedelta(days=1), self.per_day)


def refuse_if_full(sent: list[str], allowed: int, window: dt.timedelta, now: dt.datetime) -> None:
    """`RateLimited` when `sent` (the stamps of a sender's messages within `window` before `now`, oldest
    first) already holds `allowed`; the wait lasts until the oldest of the last `allowed` leaves the window."""
    if len(sent) >= allowed:
        oldest = dt.datetime.fromisoformat(sent[len(sent) - allowed])
        raise RateLimited(max(1, int((oldest + window - now).total_seconds()) + 1))
