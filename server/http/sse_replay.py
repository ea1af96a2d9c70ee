"""Resumable SSE streams: each session keeps its recent events for a client that reconnects with `Last-Event-ID`.

A client whose stream dropped gets what it missed (the SDK's resumability, SEP-1699).

Every POST's SSE stream (2025-11-25 and later) starts with a priming event (an id, empty data, and `retry`: how
many milliseconds a client waits before reconnecting), and every event carries an id. The events are kept per
session (`SessionEvents`, one store per session: request ids repeat across sessions, so one shared store could
hand one session's events to another), bounded: the newest `MAX_EVENTS` events and `MAX_BYTES` of them per session;
older ones are forgotten, and a reconnection after a forgotten event replays nothing. Event ids carry a random
token of the session's store, so an id seen in one session names nothing in another.
"""

from __future__ import annotations

import itertools
import secrets
from collections import OrderedDict
from typing import Any

from mcp.server.streamable_http import EventCallback, EventMessage, EventStore

MAX_EVENTS = 256  # per session
MAX_BYTES = 4 * 1024 * 1024  # per session: the JSON of the events kept
RETRY_MS = 1000  # the `retry` of priming events: a client reconnects after a second


class SessionEvents(EventStore):
    """One session's SSE events, newest `MAX_EVENTS` (and `MAX_BYTES`) kept for replay."""

    def __init__(self) -> None:
        self._token = secrets.token_hex(8)
        self._numbers = itertools.count(1)
        # event id -> (stream id, the message's JSON or None for a priming event)
        self._events: OrderedDict[str, tuple[Any, bytes | None]] = OrderedDict()
        self._bytes = 0

    async def store_event(self, stream_id: Any, message: Any) -> str:
        data = None if message is None else message.model_dump_json(by_alias=True, exclude_unset=True).encode()
        return self.keep(stream_id, data)

    def keep(self, stream_id: Any, data: bytes | None) -> str:
        """Keep one event's JSON (None: a priming event) and return its id."""
        event_id = f"{self._token}-{next(self._numbers)}"
        self._events[event_id] = (stream_id, data)
        self._bytes += len(data or b"")
        while self._events and (len(self._events) > MAX_EVENTS or self._bytes > MAX_BYTES):
            _, (_, dropped) = self._events.popitem(last=False)
            self._bytes -= len(dropped or b"")
        return event_id

    async def replay_events_after(self, last_event_id: str, send_callback: EventCallback) -> Any:
        """Send the events of `last_event_id`'s stream kept after it; its stream id, or None when it is unknown."""
        from mcp_types import JSONRPCMessage
        from pydantic import TypeAdapter

        found = self._events.get(last_event_id)
        if found is None:
            return None
        stream_id = found[0]
        adapter: TypeAdapter[Any] = TypeAdapter(JSONRPCMessage)
        after = False
        for event_id, (stream, data) in list(self._events.items()):
            if event_id == last_event_id:
                after = True
            elif after and stream == stream_id and data is not None:
                await send_callback(EventMessage(adapter.validate_json(data), event_id))
        return stream_id


_EVENT_HEAD = b"event: message\r\ndata: "
_EVENT_TAIL = b"\r\n\r\n"


def sse_frame(data: bytes | None, event_id: str | None = None, retry_ms: int | None = None) -> bytes:
    """One SSE event as sse-starlette frames it (the SDK's transport sends it so): `id`, `event: message` and the
    message's JSON on one `data` line; a priming event (`data` None): `id`, empty data and `retry`."""
    head = b"" if event_id is None else b"id: " + event_id.encode() + b"\r\n"
    if data is not None:
        return head + _EVENT_HEAD + data + _EVENT_TAIL
    retry = b"" if retry_ms is None else b"\r\nretry: %d" % retry_ms
    return head + b"data: " + retry + _EVENT_TAIL
