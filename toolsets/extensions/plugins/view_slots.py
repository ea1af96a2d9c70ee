"""How many plugin resource reads and prompt gets run at once: per plugin and per user, refused past it.

A read or get takes one slot of its plugin and one of its caller; past either bound it is refused at once with a
retryable `rate_limited` error (never queued), so one caller cannot hold every plugin thread, nor a hung plugin
every one of its callers. A plugin's slots also count its calls abandoned at their timeout whose code still runs
(`still_running`), so a plugin that hangs holds at most `per_plugin` threads however often it is asked.
Only the server's event loop takes and frees slots: a check and its take have no await between them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from toolsets.core.errors import ErrorCode, ToolError

PER_PLUGIN = 4
PER_USER = 4


class ViewSlots:
    def __init__(
        self,
        per_plugin: int = PER_PLUGIN,
        per_user: int = PER_USER,
        still_running: Callable[[str], int] = lambda plugin: 0,
    ) -> None:
        self.per_plugin = per_plugin
        self.per_user = per_user
        self._still_running = still_running
        self._plugins: Counter[str] = Counter()
        self._users: Counter[str] = Counter()

    def in_flight(self, plugin: str) -> int:
        return self._plugins[plugin] + self._still_running(plugin)

    @contextmanager
    def held(self, plugin: str, shown: str, user: str) -> Iterator[None]:
        """One slot of `plugin` (its key; `shown`: its name in errors) and one of `user`, for the block."""
        if self.in_flight(plugin) >= self.per_plugin:
            raise _busy(f"{shown} is busy: {self.per_plugin} requests of it are still running")
        if self._users[user] >= self.per_user:
            raise _busy(f"you already have {self.per_user} plugin resource reads or prompt gets running")
        self._plugins[plugin] += 1
        self._users[user] += 1
        try:
            yield
        finally:
            _release(self._plugins, plugin)
            _release(self._users, user)


def _release(counts: Counter[str], key: str) -> None:
    counts[key] -= 1
    if counts[key] <= 0:
        del counts[key]


def _busy(why: str) -> ToolError:
    return ToolError(f"Busy: {why}. Retry in a few seconds.", code=ErrorCode.RATE_LIMITED, retryable=True)
