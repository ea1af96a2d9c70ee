"""The SSE bytes a lean answer sends as sse-starlette would: its headers, its keep-alive comment, its timings.

`server.speed.lean_http` answers a plain `tools/call` POST itself, with the headers the SDK's transport sends
through sse-starlette's `EventSourceResponse` (in the same order), a keep-alive comment every `PING_SECONDS`
while a call runs, and its headers held for at most `HOLD_HEADERS_SECONDS` so that headers, event and the end of
the body leave in one write. Every other SSE stream (a POST whose tool asks the client something, GET streams,
replays) is the SDK's own, through sse-starlette's response.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Mapping

PING_SECONDS = 15.0
HOLD_HEADERS_SECONDS = 1.0
SEP = "\r\n"


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
