"""Bytes of answers handed on towards a client that has not taken them yet, as `server.http.unread_backlog` counts them.

uvicorn writes a body chunk to the connection at once and makes the next `send` wait while the connection's
buffer is full (its flow control), so once a `send` returns the chunks before it have left (within the buffer's
64 KiB high-water mark). A response's unread bytes are therefore:

- the chunks whose `send` has not returned (held by the task sending them),
- and, while the response is not complete, the last chunk sent (it may still sit in the connection's buffer).

A legacy SSE session also counts the messages its server queued for its stream and the SDK has not yet taken
(`MeteredWrite`): behind a stream the client does not read, each answer waits in its handler's task, whole.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any

from starlette.types import Message, Send

Check = Callable[[], Awaitable[None]]  # closes what went past a bound (it may cancel the caller)


class Unread:
    """One response's (or one legacy SSE stream's) unread bytes."""

    __slots__ = ("complete", "in_send", "last", "queued", "started")

    def __init__(self) -> None:
        self.started = False  # the response's head went out
        self.in_send = 0  # chunks whose `send` has not returned
        self.last = 0  # the last chunk whose `send` returned
        self.complete = False  # the response's last chunk went out
        self.queued = 0  # legacy SSE: messages queued for the stream, not yet taken by the SDK

    @property
    def bytes(self) -> int:
        return self.queued + self.in_send + (0 if self.complete else self.last)


def metered_send(send: Send, unread: Unread, check: Check) -> Send:
    """`send`, counting each body chunk in `unread` and calling `check` before handing it on."""

    async def metered(message: Message) -> None:
        if message["type"] != "http.response.body":
            await send(message)
            unread.started = True
            return
        size = len(message.get("body", b""))
        unread.in_send += size
        try:
            if size:
                await check()
            await send(message)
        finally:
            unread.in_send -= size
        unread.last = size
        if not message.get("more_body", False):
            unread.complete = True

    return metered


class MeteredWrite:
    """A session's write stream (the SDK's `WriteStream` protocol) counting each message's JSON in `unread.queued`
    until the stream takes it. The JSON is dumped here once more to be measured: legacy SSE only."""

    def __init__(self, write: Any, unread: Unread, check: Check) -> None:
        self._write = write
        self._unread = unread
        self._check = check

    async def send(self, item: Any, /) -> None:
        size = len(item.message.model_dump_json(by_alias=True, exclude_unset=True))
        self._unread.queued += size
        try:
            await self._check()
            await self._write.send(item)
        finally:
            self._unread.queued -= size

    async def aclose(self) -> None:
        await self._write.aclose()

    async def __aenter__(self) -> MeteredWrite:
        await self._write.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> bool | None:
        result: bool | None = await self._write.__aexit__(exc_type, exc_val, exc_tb)
        return result


SCOPE_KEY = "truloop.unread"  # in a `GET /sse` scope: the stream's (Unread, Check), for its `MeteredWrite`
