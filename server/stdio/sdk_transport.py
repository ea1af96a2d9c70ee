"""The stdio transport: the SDK's `stdio_server`, fed only lines that passed `server.stdio.line_check`.

The SDK's own stdin reader decodes with replacement characters, reads a whole line before any size check
and drops what it cannot parse without an answer. Here stdin is read as bytes by a daemon thread (a
Ctrl-C never waits on a blocked read), split into lines of at most `--max-line-bytes`, and checked: a bad
line gets its one JSON-RPC error, and only valid messages reach the SDK, which runs the server loop and
writes every answer to stdout. At end of input, or on `stop()` (a signal), the requests already read are
answered before the server stops (the SDK loop would cancel them), so `cat requests.jsonl | truloop-mcp`
gets every answer. While serving, fd 0 reads the null device (and the SDK points fd 1 at stderr).

This is the stdio path of `TRULOOP_FAST_PATHS=0`; with the speed paths on, the lean front serves stdio
(`server.stdio.lean_front`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

import anyio
import anyio.from_thread
import anyio.lowlevel
import mcp.types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from server.sdk_compat import lowlevel_of
from server.stdio.diverted_fds import Claim
from server.stdio.line_check import MAX_LINE_BYTES, Line, LineChecker, LineSplitter

logger = logging.getLogger("truloop.stdio")

READ_AHEAD_LINES = 64
CHUNK = 64 * 1024


class Channel(Protocol):
    """What the server loop runs on (`streams()`), and how a signal ends it (`stop()`)."""

    def stop(self) -> None: ...

    def streams(self) -> contextlib.AbstractAsyncContextManager[tuple[Any, Any]]: ...


class CheckedStdin:
    """The `stdin` handed to the SDK's `stdio_server`: it iterates the checked messages, one JSON text each;
    everything else is answered here."""

    def __init__(self, fd: int, limit: int = MAX_LINE_BYTES, stdout_fd: int = 1) -> None:
        self._fd = fd
        self._stdout_fd = stdout_fd
        self._limit = limit
        self._checker = LineChecker(limit)
        self._send, self._incoming = anyio.create_memory_object_stream[Line | None](READ_AHEAD_LINES)
        self._refusals: Any = None  # the SDK's write stream: where the errors of bad lines go
        self._bound = anyio.Event()
        self._stopping = False
        self._receiving: anyio.CancelScope | None = None
        self.reader: threading.Thread | None = None

    def start_reading(self) -> None:
        token = anyio.lowlevel.current_token()

        def emit(item: Line | None) -> None:
            try:
                anyio.from_thread.run(self._send.send, item, token=token)
            except Exception:  # the loop has stopped or nobody reads any more: nothing left to feed
                raise SystemExit from None

        self.reader = threading.Thread(
            target=read_lines, args=(self._fd, self._limit, emit), name="truloop-stdin", daemon=True
        )
        self.reader.start()

    def stop(self) -> None:
        """Read no more input; answer what was read (for a short while), then end."""
        self._stopping = True
        if self._receiving is not None:
            self._receiving.cancel()
        self._checker.hurry()

    @contextlib.asynccontextmanager
    async def streams(self) -> AsyncIterator[tuple[Any, Any]]:
        """The SDK's stdio streams over these lines: (read, write) for the server loop."""
        stdout = None
        if self._stdout_fd != 1:  # not a blocking open: a descriptor already open is wrapped
            stdout = anyio.wrap_file(open(self._stdout_fd, "w", encoding="utf-8", closefd=False))  # noqa: ASYNC230, SIM115
        async with stdio_server(stdin=self, stdout=stdout) as (read_stream, write_stream):  # type: ignore[arg-type]  # an async file with the methods stdio_server reads
            self._refusals = write_stream
            self._bound.set()
            yield read_stream, AnswerTracker(write_stream, self._checker)

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        await self._bound.wait()
        while not self._stopping:
            await self._checker.room()
            line = await self._next_line()
            if line is None:
                break
            message, error = self._checker.check(line)
            if message is not None:
                yield message.model_dump_json(by_alias=True, exclude_unset=True)
            elif error is not None:
                await self._refusals.send(SessionMessage(error))
        await self._checker.drain(self._stopping)

    async def _next_line(self) -> Line | None:
        with anyio.CancelScope() as scope:
            self._receiving = scope
            try:
                return await self._incoming.receive()
            except anyio.EndOfStream:
                return None
            finally:
                self._receiving = None
        return None  # stopped


class AnswerTracker:
    """The SDK's write stream, noting which requests have been answered."""

    def __init__(self, inner: Any, checker: LineChecker) -> None:
        self._inner = inner
        self._checker = checker

    async def send(self, item: SessionMessage, /) -> None:
        await self._inner.send(item)
        message = item.message
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None:
            self._checker.answered(message.id)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> AnswerTracker:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self._inner.__aexit__(*exc_info)


def read_lines(fd: int, limit: int, emit: Callable[[Line | None], None]) -> None:
    """Blocking: split `fd` into lines of at most `limit` bytes; `emit(None)` at end of input."""
    splitter = LineSplitter(limit)
    try:
        while chunk := os.read(fd, CHUNK):
            splitter.feed(chunk, emit)
        splitter.finish(emit)
    except OSError as exc:
        logger.warning("stdin could not be read: %s", exc.strerror or type(exc).__name__)
    finally:
        emit(None)


@contextlib.asynccontextmanager
async def stdio_channel(limit: int = MAX_LINE_BYTES, stdin_fd: int = 0, stdout_fd: int = 1) -> AsyncIterator[Channel]:
    """stdin (or `stdin_fd`) read on a thread into a `CheckedStdin`, while the context lasts."""
    claim = Claim()
    private = os.dup(stdin_fd)
    channel = CheckedStdin(private, limit, stdout_fd)
    try:
        if stdin_fd == 0:
            claim.divert_to_null(0)
        channel.start_reading()
        yield channel
    finally:
        claim.restore()
        if channel.reader is None or not channel.reader.is_alive():  # never close an fd a thread still reads
            os.close(private)


async def serve_stdio(server: Any, channel: Channel) -> None:
    """Serve `server` (an MCPServer) on `channel` until input ends or `channel.stop()`."""
    low = lowlevel_of(server)
    async with channel.streams() as (read_stream, write_stream):
        await low.run(read_stream, write_stream, low.create_initialization_options())
