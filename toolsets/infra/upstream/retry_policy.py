"""How an upstream client resends: bounded sends, exponential backoff, Retry-After up to a cap.

Kept apart from `retry.py` (the httpx transport) so a client can declare its policy at import
time without importing httpx.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

Sleep = Callable[[float], Awaitable[None]]

TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
RETRY_SAFE = "truloop.retry_safe"  # request extension: True marks a POST that only reads, False forbids resends
ATTEMPTS = "truloop.attempts"  # response extension: how many sends the answer took


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    attempts: int = 3  # sends in all, the first included
    statuses: frozenset[int] = TRANSIENT_STATUSES  # answers worth sending again
    base_delay: float = 0.5  # seconds before the first resend; doubles each time
    max_delay: float = 8.0
    max_retry_after: float = 30.0  # a longer Retry-After is returned to the caller instead of waited

    def backoff(self, resent: int) -> float:
        """The wait before resend number `resent` (1-based) when the server named none."""
        return min(self.base_delay * 2 ** (resent - 1), self.max_delay)

    def wait_for(self, retry_after: str | None, resent: int) -> float | None:
        """The wait before resend number `resent` after an answer carrying `retry_after` (its
        Retry-After header, if any); None when the server asks for longer than the cap."""
        told = retry_after_seconds(retry_after)
        if told is None:
            return self.backoff(resent)
        return told if told <= self.max_retry_after else None


def retry_after_seconds(header: str | None) -> float | None:
    """A Retry-After header as seconds (a number or an HTTP date); None when absent or unreadable."""
    value = (header or "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(seconds, 0.0) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max((when - dt.datetime.now(dt.UTC)).total_seconds(), 0.0)
