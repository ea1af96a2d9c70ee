"""The SDK's server loop behind the stdio lean front (`server.stdio.lean_front`): the messages the front does not
answer are put here, and the SDK's answers go to stdout as the own transport writes them (`Replies`).

On a connection whose handshake the front answered, the SDK's connection is first given the same `initialize` (with
an id of its own, whose answer is dropped) and `notifications/initialized` if the client sent it, so it serves the
session the client opened.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import anyio
import mcp.types as types
from mcp.shared.message import SessionMessage

from server.sdk_compat import lowlevel_of
from server.stdio.line_check import LineChecker
from server.stdio.own_transport import MessageStream, Replies
from server.stdio.pipes import Outbox

logger = logging.getLogger("truloop.stdio")

REPLAYED_ID = "truloop-replayed-initialize"


class SdkLink(MessageStream):
    """The `ReadStream` the SDK's loop reads (what the front puts), and its `WriteStream` (`ReplayedReplies`)."""

    def __init__(self, server: Any, outbox: Outbox, checker: LineChecker) -> None:
        self.server = server
        self._queue: asyncio.Queue[SessionMessage | None] = asyncio.Queue()
        self.replies = ReplayedReplies(outbox, checker)

    def put(self, message: Any) -> None:
        self._queue.put_nowait(SessionMessage(message))

    def replay(self, initialize: dict[str, Any], *, initialized: bool) -> None:
        request = {**initialize, "id": REPLAYED_ID}
        self.replies.expect_replay()
        self.put(types.jsonrpc_message_adapter.validate_python(request, by_name=False))
        if initialized:
            self.put(types.JSONRPCNotification(jsonrpc="2.0", method="notifications/initialized"))

    def close(self) -> None:
        """No more messages: the SDK's loop ends once it has answered what it has."""
        self._queue.put_nowait(None)

    async def run(self) -> None:
        low = lowlevel_of(self.server)
        # the link and its replies implement the stream methods the loop calls; their __aenter__ says its own type
        await low.run(self, self.replies, low.create_initialization_options())  # type: ignore[arg-type]

    async def receive(self) -> SessionMessage:
        item = await self._queue.get()
        if item is None:
            self._queue.put_nowait(None)  # whoever asks again hears the end too
            raise anyio.EndOfStream
        return item

    async def aclose(self) -> None:
        self.close()


class ReplayedReplies(Replies):
    """The SDK's answers, but for the one to the replayed `initialize`."""

    def __init__(self, outbox: Outbox, checker: LineChecker) -> None:
        super().__init__(outbox, checker)
        self._replay_pending = False

    def expect_replay(self) -> None:
        self._replay_pending = True

    async def send(self, item: SessionMessage, /) -> None:
        message = item.message
        replayed = isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id == REPLAYED_ID
        if self._replay_pending and replayed:
            self._replay_pending = False
            if isinstance(message, types.JSONRPCError):
                logger.warning("the SDK refused the session's initialize: %s", message.error.message)
            return
        await super().send(item)

    async def aclose(self) -> None:
        """The front owns stdout: it stays open when the SDK's loop ends."""
