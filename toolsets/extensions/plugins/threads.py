"""`PluginThreads`: the threads a catalog runs plugins' sync code on (`--plugin-isolation inprocess`).

Daemon threads, on purpose: a plugin stuck in `time.sleep(100)` or a busy loop keeps its thread past its
call's timeout (Python cannot stop a thread), and a non-daemon thread would then hold the interpreter's exit,
so a stdio server whose input ended would stay. A daemon thread never holds the exit. At most `size` run at once
(further calls wait their turn, within their own timeout); idle threads are reused and end after a while.

Whatever the plugin raises, `BaseException`s included, comes back to the awaiting task as an `Exception`
(failures.contained): a plugin's `SystemExit` ends its call, never the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from toolsets.extensions.plugins.failures import contained

T = TypeVar("T")
DEFAULT_SIZE = 32
IDLE_SECONDS = 30.0


class _Job:
    __slots__ = ("abandoned", "function", "future", "loop")

    def __init__(self, function: Callable[[], Any], loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any]):
        self.function = function
        self.loop = loop
        self.future = future
        self.abandoned = False

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
    def __init__(self, size: int = DEFAULT_SIZE, idle_seconds: float = IDLE_SECONDS) -> None:
        self.size = size
        self._idle_seconds = idle_seconds
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0  # alive
        self._idle = 0  # alive and waiting for a job
        self._queued = 0  # submitted, not yet taken by a thread

    @property
    def alive(self) -> int:
        return self._threads

    async def run(self, function: Callable[[], T]) -> T:
        """`function()` on one of these threads; cancelling the caller abandons it (the thread runs on)."""
        loop = asyncio.get_running_loop()
        job = _Job(function, loop, loop.create_future())
        with self._lock:
            self._queued += 1
            if self._queued > self._idle and self._threads < self.size:
                self._threads += 1
                self._idle += 1
                threading.Thread(target=self._serve, name="plugin", daemon=True).start()
            self._jobs.put(job)
        try:
            return await job.future
        except asyncio.CancelledError:
            job.abandoned = True
            raise

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
            try:
                job.run()
            finally:
                with self._lock:
                    self._idle += 1
