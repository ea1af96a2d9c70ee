"""The own stdio transport: this process's stdin and stdout as the SDK's public stream protocols.

`StdioChannel` is the `ReadStream` the SDK's server loop reads messages from, and `channel.replies`
the `WriteStream` it writes answers to; nothing sits between them and the pipes (no worker thread,
no memory stream). The bytes move as asyncio transports (`server.stdio.pipes`), every line is
checked (`server.stdio.line_check`: bad lines are answered here, the server sees only valid messages), and:

- no request is read while answers wait for the client to read them (`drain`), so a client that
  stops reading stops us reading, and memory stays bounded;
- at end of input, or on `stop()` (a signal), the requests already read are answered before the
  server stops (the SDK loop would cancel them), so `cat requests.jsonl | truloop-mcp` gets every answer.

The plain SDK way (`stdio_server`, worker threads and memory streams) is in `server.stdio.sdk_transport`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp.types as types
from mcp.shared.message import SessionMessage

from server.stdio.line_check import MAX_LINE_BYTES, LineChecker
from server.stdio.pipes import Inbox, Outbox, open_stdio


class Replies:
    """The `WriteStream` of answers: one JSON line each, written at once, waiting only when stdout is backed up."""

    def __init__(self, outbox: Outbox, checker: LineChecker) -> None:
        self._outbox = outbox
        self._checker = checker

    async def send(self, item: SessionMessage, /) -> None:
        message = item.message
        await self.write(message)
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None:
            self._checker.answered(message.id)

    async def write(self, message: Any) -> None:
        """Write a message without counting it as an answer (the refusal of a bad line)."""
        self._outbox.write(message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n")
        if self._outbox.backed_up:
            await self._outbox.drain()

    async def aclose(self) -> None:
        await self._outbox.close()

    async def __aenter__(self) -> Replies:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class MessageStream:
    """What makes a `receive()` / `aclose()` pair the SDK's `ReadStream`: iteration and the context manager."""

    async def receive(self) -> SessionMessage:
        raise NotImplementedError

    async def aclose(self) -> None:
        raise NotImplementedError

    def __aiter__(self) -> MessageStream:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> MessageStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class StdioChannel(MessageStream):
    """The `ReadStream` of checked messages from stdin; `replies` is its `WriteStream` partner."""

    def __init__(self, inbox: Inbox, outbox: Outbox, limit: int = MAX_LINE_BYTES) -> None:
        self._inbox = inbox
        self._outbox = outbox
        self._checker = LineChecker(limit)
        self.replies = Replies(outbox, self._checker)
        self._stopping = False

    def stop(self) -> None:
        """Read no more input; answer what was read (for a short while), then end."""
        self._stopping = True
        self._inbox.close_intake()
        self._checker.hurry()

    @contextlib.asynccontextmanager
    async def streams(self) -> AsyncIterator[tuple[StdioChannel, Replies]]:
        """The (read, write) streams the SDK's server loop runs on: this channel and its replies."""
        yield self, self.replies

    async def receive(self) -> SessionMessage:
        while not self._stopping:
            if self._outbox.backed_up:  # the client is not reading: neither are we
                await self._outbox.drain()
            await self._checker.room()
            line = await self._inbox.next_line()
            if line is None:
                break
            message, error = self._checker.check(line)
            if message is not None:
                return SessionMessage(message)
            if error is not None:
                await self.replies.write(error)
        await self._checker.drain(self._stopping)
        raise anyio.EndOfStream

    async def aclose(self) -> None:
        self._inbox.close_intake()


@contextlib.asynccontextmanager
async def fast_stdio_channel(limit: int, stdin_fd: int = 0, stdout_fd: int = 1) -> AsyncIterator[StdioChannel]:
    """This process's stdin/stdout (or the given descriptors) as a `StdioChannel`, while the context lasts."""
    async with open_stdio(limit, stdin_fd, stdout_fd) as (inbox, outbox):
        yield StdioChannel(inbox, outbox, limit)
