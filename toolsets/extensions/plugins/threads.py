"""`PluginThreads`: the threads a catalog runs plugins' sync code on (`--plugin-isolation inprocess`).

Daemon threads, on purpose: a plugin stuck in `time.sleep(100)` or a busy loop keeps its thread past its
call's timeout (Python cannot stop a thread), and a non-daemon thread would then hold the interpreter's exit,
so a stdio server whose input ended would stay. A daemon thread never holds the exit. At most `size` run at once
(further calls wait their turn, within their own timeout); idle threads are reused and end after a while.

A thread whose call was abandoned at its timeout while it ran no longer counts toward `size`: the pool starts a
fresh one in its place (so a plugin that hangs cannot starve the others), and the abandoned thread ends when its
code returns. At most `max_abandoned` such threads may be left running; past that every new call is refused
(`rate_limited`, retryable) until some end. `abandoned_by(owner)` counts them per plugin (view_slots.py).

Whatever the plugin raises, `BaseException`s included, comes back to the awaiting task as an `Exception`
(failures.contained): a plugin's `SystemExit` ends its call, never the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any, TypeVar

from toolsets.core.errors import ErrorCode, ToolError
from toolsets.extensions.plugins.failures import contained

T = TypeVar("T")
DEFAULT_SIZE = 32
MAX_ABANDONED = 64
IDLE_SECONDS = 30.0


class _Job:
    __slots__ = ("abandoned", "function", "future", "loop", "orphaned", "owner", "running")

    def __init__(
        self, function: Callable[[], Any], loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], owner: str
    ):
        self.function = function
        self.loop = loop
        self.future = future
        self.owner = owner
        self.abandoned = False
        self.running = False  # a thread took it and runs it (under the pool's lock)
        self.orphaned = False  # abandoned while running: its thread was replaced and ends with it

    def run(self) -> None:
        if self.abandoned:
            return  # its caller gave up before a thread was free
        try:
            outcome: tuple[bool, Any] = (True, self.function())
        except BaseException as exc:
            outcome = (False, exc)
        with contextlib.suppress(RuntimeError):  # the loop is closed: the server stopped while this ran
            self.loop.call_soon_threadsafe(self._settle, *outcome)

    def _settle(self, ok: bool, value: Any) -> None:
        if self.future.done():
            return  # the call was abandoned at its timeout
        if ok:
            self.future.set_result(value)
        else:
            self.future.set_exception(contained(value))


class PluginThreads:
    def __init__(
        self, size: int = DEFAULT_SIZE, idle_seconds: float = IDLE_SECONDS, max_abandoned: int = MAX_ABANDONED
    ) -> None:
        self.size = size
        self.max_abandoned = max_abandoned
        self._idle_seconds = idle_seconds
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0  # alive
        self._idle = 0  # alive and waiting for a job
        self._queued = 0  # submitted, not yet taken by a thread
        self._abandoned: Counter[str] = Counter()  # threads still running an abandoned call, by owner

    @property
    def alive(self) -> int:
        """Threads of the pool (not those left running abandoned calls)."""
        return self._threads

    @property
    def abandoned(self) -> int:
        return self._abandoned.total()

    def abandoned_by(self, owner: str) -> int:
        return self._abandoned.get(owner, 0)

    async def run(self, function: Callable[[], T], owner: str = "") -> T:
        """`function()` on one of these threads; cancelling the caller abandons it (the thread runs on, replaced)."""
        loop = asyncio.get_running_loop()
        job = _Job(function, loop, loop.create_future(), owner)
        with self._lock:
            if self._abandoned.total() >= self.max_abandoned:
                raise ToolError(
                    f"Busy: {self.max_abandoned} plugin calls that timed out are still running; plugin calls are "
                    "refused until some of them end. Retry in a minute.",
                    code=ErrorCode.RATE_LIMITED,
                    retryable=True,
                )
            self._queued += 1
            self._jobs.put(job)
            self._grow()
        try:
            return await job.future
        except asyncio.CancelledError:
            with self._lock:
                job.abandoned = True
                if job.running:
                    job.orphaned = True  # its thread leaves the pool: a fresh one takes its place
                    self._threads -= 1
                    self._abandoned[job.owner] += 1
                    self._grow()
            raise

    def _grow(self) -> None:
        """Start a thread when jobs wait and none is idle (under the lock)."""
        if self._queued > self._idle and self._threads < self.size:
            self._threads += 1
            self._idle += 1
            threading.Thread(target=self._serve, name="plugin", daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=self._idle_seconds)
            except queue.Empty:
                with self._lock:
                    if self._jobs.empty():  # (a job put after our timeout is ours to take)
                        self._threads -= 1
                        self._idle -= 1
                        return
                continue
            with self._lock:
                self._queued -= 1
                self._idle -= 1
                job.running = not job.abandoned
            try:
                job.run()
            finally:
                with self._lock:
                    job.running = False
                    if job.orphaned:
                        self._abandoned[job.owner] -= 1
                        if self._abandoned[job.owner] <= 0:
                            del self._abandoned[job.owner]
                    else:
                        self._idle += 1
            if job.orphaned:
                return  # replaced when its call was abandoned
            del job  # an idle thread holds no call's result
