"""A request body read ahead by a middleware, then given back to the app behind it as it was received."""

from __future__ import annotations

from starlette.types import Message, Receive


async def read_body(receive: Receive, limit: int) -> tuple[list[Message], bytes | None]:
    """The messages read and the whole body; no body when it is larger than `limit` or the client left (the
    messages read so far are still returned, for `Replay`)."""
    messages: list[Message] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages, None
        size += len(message.get("body", b""))
        if size > limit:
            return messages, None
        if not message.get("more_body", False):
            break
    if len(messages) == 1:
        return messages, messages[0].get("body", b"")
    return messages, b"".join(m.get("body", b"") for m in messages)


class Replay:
    """`receive` giving back the messages already read from it first (the app behind reads the body again)."""

    __slots__ = ("_messages", "_receive")

    def __init__(self, messages: list[Message], receive: Receive) -> None:
        self._messages = messages
        self._receive = receive

    async def __call__(self) -> Message:
        if self._messages:
            return self._messages.pop(0)
        return await self._receive()
