"""The SDK's public stream protocols over this process's stdout: what the stdio lean front's SDK link
(`server.speed.sdk_link`) hands the SDK's server loop for the messages the front does not answer itself.

`Replies` is the `WriteStream` the loop writes answers to: one JSON line each, straight to the stdout pipe
(`server.stdio.pipes`), waiting only when the client stops reading. `MessageStream` is what makes a
`receive()` / `aclose()` pair the loop's `ReadStream`. The plain SDK way (`stdio_server`, worker threads and
memory streams) is in `server.stdio.sdk_transport`.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp.types as types
from mcp.shared.message import SessionMessage

from server.stdio.line_check import LineChecker
from server.stdio.pipes import Outbox


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
