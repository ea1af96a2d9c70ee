"""Warm sandboxed interpreters for code mode: started ahead, each used for one program, then killed.

Starting bubblewrap and Python costs tens of milliseconds; a warm interpreter has already paid it and waits for
its program on the protocol pipe. A program takes one (a cold one when none is warm) and the pool's refiller, a
task of the serving deployment (`serving`), starts its replacement outside the call: spawning a process from a
large server blocks its event loop for a few milliseconds, which must not fall inside a running program's
exchange. Nothing is reused: an interpreter runs at most one program, whoever's, and
is killed when that program ends, so no state crosses from one program (or one user) to the next.

Bounded: at most `size` interpreters wait; one made on another event loop (a synchronous LangGraph run drives the
door from a loop of its own) is killed, never handed out.
"""

from __future__ import annotations

import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
import anyio.lowlevel
from anyio.abc import Process

logger = logging.getLogger("truloop.codemode")

Start = Callable[[], Awaitable[Process]]
REAP_S = 2.0  # how long a killed interpreter is waited for


@dataclass(eq=False)
class _Warm:
    process: Process
    loop: object  # the event loop whose pipes the process has


class InterpreterPool:
    def __init__(self, start: Start, size: int) -> None:
        self._start = start
        self.size = size
        self._warm: deque[_Warm] = deque()
        self._starting = 0
        self._wanted = anyio.Event()  # set when an interpreter was taken: the refiller starts another
        self._refilling = False  # a refiller runs (while the deployment serves); else every program starts cold
        self.cold_starts = 0  # programs that found no warm interpreter

    async def take(self) -> Process:
        """An interpreter for one program (warm when there is one); the caller kills it (`finish`)."""
        loop = anyio.lowlevel.current_token()
        while self._warm:
            warm = self._warm.popleft()
            if warm.loop == loop and warm.process.returncode is None:
                self._wanted.set()
                return warm.process
            await finish(warm.process)
        self.cold_starts += 1
        self._wanted.set()
        return await self._start()

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """While the deployment serves: the pool filled, kept full by a task of its own, and emptied at the end."""
        if self.size == 0:
            yield
            return
        async with anyio.create_task_group() as tg:
            await self.refill()
            self._refilling = True
            tg.start_soon(self._refiller)
            try:
                yield
            finally:
                self._refilling = False
                tg.cancel_scope.cancel()
                await self.aclose()

    async def _refiller(self) -> None:
        while True:
            await self._wanted.wait()
            self._wanted = anyio.Event()
            await self.refill()

    async def refill(self) -> None:
        """Start interpreters until `size` wait (only the start itself is awaited: Python warms up meanwhile)."""
        loop = anyio.lowlevel.current_token()
        while len(self._warm) + self._starting < self.size:
            self._starting += 1
            try:
                process = await self._start()
            except Exception:
                logger.warning("could not start a warm interpreter for code mode", exc_info=True)
                return
            finally:
                self._starting -= 1
            self._warm.append(_Warm(process, loop))

    async def aclose(self) -> None:
        """Kill every waiting interpreter (the server is stopping)."""
        while self._warm:
            await finish(self._warm.popleft().process)


async def finish(process: Process) -> None:
    """Kill an interpreter and everything in its sandbox (bwrap's PID namespace dies with it), and reap it."""
    with contextlib.suppress(ProcessLookupError):
        if process.returncode is None:
            process.kill()
    with anyio.CancelScope(shield=True), anyio.move_on_after(REAP_S):
        await process.wait()
    with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
        await process.aclose()
