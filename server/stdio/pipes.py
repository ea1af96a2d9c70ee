"""stdin and stdout as asyncio transports: no threads, lines split as bytes arrive, answers written
with backpressure (`drain`).

A pipe, a socket or a terminal gets asyncio's pipe transports. Pipes and terminals are reopened
through `/proc/self/fd` first, so the non-blocking mode asyncio needs is set on a file description of
our own: a stderr that shares stdout's pipe (`2>&1`), or the terminal a shell is still using, keeps
its blocking mode. A regular file or `/dev/null` (which cannot be polled, and never blocks) is read
and written directly on the event loop, a chunk at a time.

While serving, fds 0 and 1 are diverted (`server.stdio.diverted_fds`); both are restored afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio

from server.stdio.diverted_fds import Claim
from server.stdio.line_check import Line, LineSplitter, line_size

logger = logging.getLogger("truloop.stdio")

CHUNK = 256 * 1024
# Lines read ahead of the server: past either bound, reading pauses until the server catches up.
QUEUED_LINES = 256
QUEUED_BYTES = 1024 * 1024
FLUSH_SECONDS = 5.0  # at close, how long unsent answers may wait for a reader


class Inbox(asyncio.Protocol):
    """Lines of stdin as they arrive, read ahead at most `QUEUED_LINES` / `QUEUED_BYTES`."""

    def __init__(self, limit: int) -> None:
        self._splitter = LineSplitter(limit)
        self._lines: deque[Line] = deque()
        self._queued_bytes = 0
        self._eof = False
        self._waiter: asyncio.Future[None] | None = None
        self._offer: Callable[[Line], bool] | None = None  # while a reader waits: who may take a line as it arrives
        self._transport: Any = None  # anything with pause_reading() / resume_reading()
        self._paused = False

    def connection_made(self, transport: Any) -> None:
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        if self._eof:
            return
        self._splitter.feed(data, self._push)
        if not self._paused and self._transport is not None and self._full():
            self._paused = True
            self._transport.pause_reading()
        if self._lines:  # (every line taken by the offer: the reader waits on)
            self._wake()

    def eof_received(self) -> None:
        self._end()

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None:
            logger.warning("stdin could not be read: %s", getattr(exc, "strerror", None) or type(exc).__name__)
        self._end()

    def close_intake(self) -> None:
        """Read nothing more: lines not yet taken are dropped, `next_line` says end of input."""
        self._eof = True
        self._lines.clear()
        self._queued_bytes = 0
        self._wake()

    async def next_line(self, offer: Callable[[Line], bool] | None = None) -> Line | None:
        """The next line; None at end of input. `offer`: while this waits, each line that arrives is offered to it
        first, as it is read, and one it takes (True) is not returned: the reader learns of it a turn of the event
        loop sooner than a wake-up would let it. Only while nothing is queued, so lines are taken in order."""
        while not self._lines:
            if self._eof:
                return None
            self._waiter = asyncio.get_running_loop().create_future()
            self._offer = offer
            try:
                await self._waiter
            finally:
                self._waiter = None
                self._offer = None
        line = self._lines.popleft()
        self._queued_bytes -= line_size(line)
        if self._paused and not self._eof and len(self._lines) <= QUEUED_LINES // 2:
            self._paused = False
            self._transport.resume_reading()
        return line

    def _push(self, line: Line) -> None:
        offer = self._offer
        if offer is not None and not self._lines and offer(line):
            return
        self._lines.append(line)
        self._queued_bytes += line_size(line)

    def _full(self) -> bool:
        return len(self._lines) >= QUEUED_LINES or self._queued_bytes >= QUEUED_BYTES

    def _end(self) -> None:
        if not self._eof:
            self._splitter.finish(self._push)
            self._eof = True
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


class Outbox(asyncio.Protocol):
    """stdout; `write` never blocks, `drain` waits while asyncio's buffer is above its high-water mark."""

    def __init__(self) -> None:
        self._transport: asyncio.WriteTransport | None = None
        self._writable = asyncio.Event()
        self._writable.set()
        self._gone = asyncio.Event()
        self._lost = False

    def connection_made(self, transport: Any) -> None:
        self._transport = transport

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        self._writable.set()
        self._gone.set()

    @property
    def backed_up(self) -> bool:
        return not self._writable.is_set()

    def write(self, data: bytes) -> None:
        if self._lost or self._transport is None or self._transport.is_closing():
            raise anyio.BrokenResourceError("stdout is closed")
        try:
            self._transport.write(data)
        except OSError as exc:  # a direct write (FileWriter) that failed: a full disk, say
            logger.warning("stdout could not be written: %s", exc.strerror or type(exc).__name__)
            self.connection_lost(exc)
            raise anyio.BrokenResourceError("stdout failed") from None

    async def drain(self) -> None:
        await self._writable.wait()

    async def close(self) -> None:
        """Send what is buffered (for at most `FLUSH_SECONDS`; not at all when cancelled), then close."""
        if self._transport is None or self._lost:
            return
        self._transport.close()  # asyncio keeps writing what is buffered, then closes
        try:
            with anyio.move_on_after(FLUSH_SECONDS):
                await self._gone.wait()
        finally:
            if not self._lost:
                logger.warning("stdout: answers left unsent (nobody read them in time)")
                self._transport.abort()


class FileReader:
    """Reads a regular file (or `/dev/null`) into an `Inbox` on the event loop: such a read never blocks."""

    def __init__(self, file: Any, inbox: Inbox) -> None:
        self._file = file
        self._fd = file.fileno()
        self._inbox = inbox
        self._resumed = asyncio.Event()
        self._resumed.set()
        self._closed = False
        inbox.connection_made(self)

    def pause_reading(self) -> None:
        self._resumed.clear()

    def resume_reading(self) -> None:
        self._resumed.set()

    async def pump(self) -> None:
        try:
            while not self._closed:
                await self._resumed.wait()
                try:
                    chunk = os.read(self._fd, CHUNK)
                except OSError as exc:
                    self._inbox.connection_lost(exc)
                    return
                if not chunk:
                    break
                self._inbox.data_received(chunk)
                await asyncio.sleep(0)  # let the server run between chunks
            self._inbox.eof_received()
        finally:
            self.close()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._file.close()


class FileWriter(asyncio.WriteTransport):
    """Writes to a regular file (or `/dev/null`) directly: such a write never blocks."""

    def __init__(self, file: Any, outbox: Outbox) -> None:
        super().__init__()
        self._file = file
        self._fd = file.fileno()
        self._outbox = outbox
        self._closed = False
        outbox.connection_made(self)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def is_closing(self) -> bool:
        return self._closed

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._file.close()
            self._outbox.connection_lost(None)

    def abort(self) -> None:
        self.close()


def _pollable(mode: int) -> bool:
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _private_fd(fd: int, flags: int) -> tuple[int, bool]:
    """A descriptor of our own for `fd`'s file, and whether asyncio's pipe transports can serve it."""
    mode = os.fstat(fd).st_mode
    is_tty = stat.S_ISCHR(mode) and os.isatty(fd)
    if stat.S_ISFIFO(mode) or is_tty:
        with contextlib.suppress(OSError):  # Linux: a new file description of the same pipe or terminal
            return os.open(f"/proc/self/fd/{fd}", flags | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY), True
    return os.dup(fd), _pollable(mode) or is_tty


@contextlib.asynccontextmanager
async def open_stdio(limit: int, stdin_fd: int = 0, stdout_fd: int = 1) -> AsyncIterator[tuple[Inbox, Outbox]]:
    """stdin and stdout as an `Inbox` and an `Outbox`, for as long as the context lasts. On fds 0 and 1
    the process's own descriptors are diverted meanwhile (see the module's docstring)."""
    loop = asyncio.get_running_loop()
    inbox, outbox = Inbox(limit), Outbox()
    claim = Claim()
    closers: list[Any] = []
    pump: asyncio.Task[None] | None = None
    try:
        in_fd, in_pollable = _private_fd(stdin_fd, os.O_RDONLY)
        closers.append(os.fdopen(in_fd, "rb", buffering=0))
        out_fd, out_pollable = _private_fd(stdout_fd, os.O_WRONLY)
        closers.append(os.fdopen(out_fd, "wb", buffering=0))
        if (stdin_fd, stdout_fd) == (0, 1):
            claim.divert_to_null(0)
            claim.divert(1, 2)
        if in_pollable:
            reader, _ = await loop.connect_read_pipe(lambda: inbox, closers[0])
            closers[0] = reader
        else:
            file_reader = FileReader(closers[0], inbox)
            closers[0] = file_reader
            pump = asyncio.ensure_future(file_reader.pump())
        if out_pollable:
            await loop.connect_write_pipe(lambda: outbox, closers[1])
        else:
            FileWriter(closers[1], outbox)
        yield inbox, outbox
    finally:
        try:
            await outbox.close()
        finally:
            if pump is not None:
                pump.cancel()
            for closer in closers:
                with contextlib.suppress(OSError):
                    closer.close()
            claim.restore()
