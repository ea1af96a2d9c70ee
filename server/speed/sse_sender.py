"""A lean Server-Sent Events response for the SDK's streamable-HTTP transport.

For every handshake-era POST that carries a request, the SDK answers with an SSE stream (the channel that
inline elicitation, sampling and progress ride on) built from sse-starlette's `EventSourceResponse`. That
response is general-purpose: five tasks per stream (writer, ping, shutdown watcher, the SDK's data sender,
disconnect listener), a lock and a cancel scope around every send, a ping timer per stream, an empty chunk
to end the body, and a task's repr formatted each time it cancels its task group. For a call answered in a
millisecond, that was ~0.5 ms of server CPU, a third of the call.

`LeanEventSourceResponse` keeps the behaviour the SDK relies on and drops the rest:

- the same status line and headers, in the same order (the SDK's, plus `Connection: keep-alive` and
  `X-Accel-Buffering: no`), and the same `id:`/`event:`/`data:` framing of each event;
- the SDK's `data_sender_callable` runs beside the stream, as before;
- a client that disconnects ends the stream and cancels the data sender (which frees the request's streams
  in the SDK), and a keep-alive comment goes out every `ping` seconds (15), as before: one task does both;
- a POST's headers wait for its first event (at most `hold_headers`, 1 s), and an event the SDK follows at
  once by closing its end carries the end of the body: the usual call, one response event ready a
  millisecond later, is a single status-line-headers-and-body answer with no task beside the data sender.
  Only a stream with more to come (elicitation, sampling, progress) starts the listener, and that task ends
  by itself when the body is complete. GET streams send their headers at once.

`server.speed.install_http()` puts it in the SDK's transport (`server.sdk_compat.install_sse_sender`).

sse-starlette's shutdown watcher is left out: it waits for uvicorn's SIGTERM handler to run, and the
server handles the signals itself (`server.serving`; uvicorn's handler is never installed), so it never
fires here (measured with either response: an open GET stream ends at uvicorn's 5 s graceful timeout).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import anyio
from anyio.abc import CancelScope
from starlette.types import Receive, Scope, Send

PING_SECONDS = 15.0
HOLD_HEADERS_SECONDS = 1.0
SEP = "\r\n"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_PENDING: Any = object()  # no event yet
_END: Any = object()  # the stream ended


def encode_event(event: Any) -> bytes:
    """One SSE event as bytes, framed as sse-starlette frames it (`id`, `event`, `data` lines, `retry`)."""
    if isinstance(event, bytes | memoryview):
        return bytes(event)
    if not isinstance(event, Mapping):
        event = {"data": event}
    lines: list[str] = []
    comment = event.get("comment")
    if comment is not None:
        lines += [f": {chunk}" for chunk in _LINE_BREAK.split(str(comment))]
    if event.get("id") is not None:
        lines.append("id: " + _LINE_BREAK.sub("", str(event["id"])))
    if event.get("event") is not None:
        lines.append("event: " + _LINE_BREAK.sub("", str(event["event"])))
    data = event.get("data")
    if data is not None:
        text = str(data)
        if "\r" in text or "\n" in text:
            lines += [f"data: {chunk}" for chunk in _LINE_BREAK.split(text)]
        else:  # JSON from the SDK: one line
            lines.append(f"data: {text}")
    retry = event.get("retry")
    if retry is not None:
        if not isinstance(retry, int):
            raise TypeError("retry argument must be int")
        lines.append(f"retry: {retry}")
    lines.append(SEP)
    return SEP.join(lines).encode()


def sse_headers(headers: Mapping[str, str] | None) -> list[tuple[bytes, bytes]]:
    """The raw headers sse-starlette sends with `headers`, in its order: `Cache-Control: no-store` unless
    given, `Connection: keep-alive`, `X-Accel-Buffering: no` (buffering proxies pass events on at once),
    and a `text/event-stream` content type unless given. A new list each time (a middleware may add to it)."""
    return list(_sse_headers(tuple((headers or {}).items())))


@functools.lru_cache(maxsize=1024)  # the SDK sends the same few per session (its id is one of them)
def _sse_headers(headers: tuple[tuple[str, str], ...]) -> tuple[tuple[bytes, bytes], ...]:
    raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    if not any(name == b"cache-control" for name, _ in raw):
        raw.append((b"cache-control", b"no-store"))
    for name, value in ((b"connection", b"keep-alive"), (b"x-accel-buffering", b"no")):
        at = next((i for i, (n, _) in enumerate(raw) if n == name), None)
        if at is None:
            raw.append((name, value))
        else:  # replaced where it stood, any repeat dropped
            raw = [*raw[:at], (name, value), *((n, v) for n, v in raw[at + 1 :] if n != name)]
    if not any(name == b"content-type" for name, _ in raw):
        raw.append((b"content-type", b"text/event-stream; charset=utf-8"))
    return tuple(raw)


def ping_comment() -> bytes:
    """The keep-alive comment a stream sends while it waits (sse-starlette's, with the time)."""
    return f": ping - {dt.datetime.now(dt.UTC)}{SEP}{SEP}".encode()


class LeanEventSourceResponse:
    """An ASGI SSE response with the constructor the SDK's streamable-HTTP transport calls
    (`content`, `headers`, `data_sender_callable`)."""

    media_type = "text/event-stream"

    def __init__(
        self,
        content: AsyncIterable[Any],
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        *,
        data_sender_callable: Callable[[], Awaitable[None]] | None = None,
        ping: float = PING_SECONDS,
        hold_headers: float = HOLD_HEADERS_SECONDS,
    ) -> None:
        self.content = content
        self.status_code = status_code
        self.data_sender_callable = data_sender_callable
        self.ping = ping
        self.hold_headers = hold_headers
        self.raw_headers = sse_headers(headers)
        self._started = False  # the status line and headers went out
        self._sending = False
        self._done = False  # the end of the body went out

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") == "HEAD":  # headers only: a stream answering HEAD would never end
            await self._start(send)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        events = aiter(self.content)
        try:
            async with anyio.create_task_group() as tg:
                if self.data_sender_callable is not None:
                    tg.start_soon(self.data_sender_callable)
                if scope.get("method") == "POST" and await self._answered_at_once(send, events):
                    return
                await self._start(send)
                tg.start_soon(self._watch, receive, send, tg.cancel_scope)
                await self._stream(send, events)
        except BaseExceptionGroup as group:  # a lone failure surfaces as itself, as sse-starlette's does
            exc: BaseException = group
            while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
                exc = exc.exceptions[0]
            raise exc from None

    async def _answered_at_once(self, send: Send, events: AsyncIterator[Any]) -> bool:
        """A POST's stream usually carries one event, its response, ready a millisecond later. Hold the
        headers for it (at most `hold_headers` seconds), so that headers, event and the end of the body
        leave in one write, with no task beside it. True when the stream was answered whole that way."""
        first: Any = _PENDING
        with anyio.move_on_after(self.hold_headers):
            try:
                first = await anext(events)
            except StopAsyncIteration:
                first = _END
        if first is _END:
            await self._send(send, b"", more_body=False)
            return True
        return first is not _PENDING and await self._emit(send, first)

    async def _stream(self, send: Send, events: AsyncIterator[Any]) -> None:
        async for event in events:
            if await self._emit(send, event):
                return
        await self._send(send, b"", more_body=False)

    async def _emit(self, send: Send, event: Any) -> bool:
        """Send `event`; True when it was the last one (then the body ended with it)."""
        receive_nowait = getattr(self.content, "receive_nowait", None)
        pending: Any = _PENDING
        if receive_nowait is not None:  # the SDK's memory stream: is this event also the last one?
            try:
                pending = receive_nowait()
            except anyio.EndOfStream:
                await self._send(send, encode_event(event), more_body=False)
                return True
            except anyio.WouldBlock:
                pass
        await self._send(send, encode_event(event), more_body=True)
        if pending is not _PENDING:
            return await self._emit(send, pending)
        return False

    async def _start(self, send: Send) -> None:
        if not self._started:
            self._started = True
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})

    async def _send(self, send: Send, body: bytes, *, more_body: bool) -> None:
        self._sending = True
        try:
            await self._start(send)
            await send({"type": "http.response.body", "body": body, "more_body": more_body})
        finally:
            self._sending = False
            self._done = not more_body

    async def _watch(self, receive: Receive, send: Send, stream: CancelScope) -> None:
        """Until the stream ends: end it when the client disconnects, and send a keep-alive comment every
        `ping` seconds (a proxy would otherwise close a stream that waits long for its next event).

        Once the end of the body is sent, `receive` answers `http.disconnect` (the ASGI spec), so this
        task ends by itself: nothing is cancelled on the way out of a stream that completed."""
        while True:
            with anyio.move_on_after(self.ping) as waited:
                message = await receive()
            if waited.cancelled_caught:
                if not self._sending and not self._done:
                    await self._send(send, ping_comment(), more_body=True)
            elif message["type"] == "http.disconnect":
                if not self._done:
                    stream.cancel()
                return
