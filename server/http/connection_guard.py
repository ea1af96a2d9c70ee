"""What every HTTP connection is held to, whichever parser reads it (httptools or h11): a bound on the time to
receive each request's head, a bound on the number of open connections, and the checks on a request's head that
keep a proxy in front and this server from disagreeing about what a request is (docs/http.md).

The protocol classes that apply these live in server/sdk_compat.py (they subclass uvicorn's); the byte-level
framing the h11 stack needs on top is server/http/request_framing.py.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

logger = logging.getLogger("truloop.http")

DEFAULT_HEADER_TIMEOUT = 10.0
MAX_CONNECTIONS_CAP = 4096  # the derived default never goes past this
INVALID = "Invalid HTTP request received."  # uvicorn's own 400 text, so both stacks answer alike
BUSY_RESPONSE = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"content-length: 19\r\n"
    b"connection: close\r\n"
    b"\r\n"
    b"Service Unavailable"
)


class BadRequestError(ValueError):
    """A request this server refuses with 400 and a closed connection; the message says why (logged, not sent)."""


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """`header_timeout`: seconds from accepting a connection (or from the first byte of a later request on it) to
    the end of the request's head; past it the connection is closed. `max_connections`: open connections; past it
    a new one is answered 503 and closed at once."""

    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    max_connections: int = 512

    @classmethod
    def of(cls, header_timeout: float, max_connections: int) -> ConnectionLimits:
        """The settings' limits; a `max_connections` of 0 is `default_max_connections()`."""
        return cls(header_timeout, max_connections or default_max_connections())


def default_max_connections() -> int:
    """Half of this process's open-file limit (the rest is for the store, Redis, plugins, logs), at most
    `MAX_CONNECTIONS_CAP`: 512 under the common limit of 1024."""
    try:
        import resource
    except ImportError:  # not a Unix
        return 512
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS_CAP
    return max(16, min(MAX_CONNECTIONS_CAP, soft // 2))


class HeaderTimer:
    """Closes a connection whose request head takes longer than `seconds`. `start` when a head is awaited (the
    connection is accepted, or a later request's first byte arrives; a running timer keeps its deadline), `stop`
    when the head is complete. No timer runs between requests (uvicorn's keep-alive timeout covers idle time) or
    while a response streams."""

    __slots__ = ("_close", "_handle", "_loop", "_seconds")

    def __init__(self, seconds: float, close: Callable[[], None]) -> None:
        self._seconds = seconds
        self._close = close
        self._loop = asyncio.get_running_loop()
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        if self._handle is None:
            self._handle = self._loop.call_later(self._seconds, self._expired)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _expired(self) -> None:
        self._handle = None
        logger.info("closed a connection whose request head took longer than %g s", self._seconds)
        self._close()


def refuse_busy(transport: asyncio.BaseTransport, open_connections: int) -> None:
    """Answer a connection past `max_connections` with 503 and close it at once, before reading anything: its file
    descriptor is free again now, not after a request that may never come (the client may see a reset instead)."""
    logger.warning("refused a connection: %d are open (--max-connections)", open_connections)
    if isinstance(transport, asyncio.WriteTransport):
        transport.write(BUSY_RESPONSE)
    transport.close()


def check_request_head(target: bytes, http_version: str, headers: Iterable[tuple[bytes, bytes]]) -> None:
    """Raise `BadRequestError` unless a request head (its names lower-cased or not) is one every HTTP/1.1 parser reads
    alike (RFC 9112): exactly one `Host` (none is allowed on HTTP/1.0), an origin-form target (`/path`, or `*`;
    this server is no proxy, so an absolute-form `http://host/path` is refused whatever its authority), at most one
    `Content-Length` of digits, and `Transfer-Encoding` only as exactly `chunked`, only on HTTP/1.1, never with
    `Content-Length`."""
    if not (target.startswith(b"/") or target == b"*"):
        raise BadRequestError("the request target is not in origin form (absolute-form is for proxies)")
    hosts = lengths = codings = 0
    coding = b""
    for name, value in headers:
        name = name.lower()
        if name == b"host":
            hosts += 1
        elif name == b"content-length":
            lengths += 1
            digits = value.strip(b" \t")
            if not digits.isdigit() or len(digits.lstrip(b"0")) > 18:
                raise BadRequestError("a Content-Length that is not a number below 10**18")
        elif name == b"transfer-encoding":
            codings += 1
            coding = value.strip(b" \t").lower()
    if hosts > 1:
        raise BadRequestError("more than one Host header")
    if hosts == 0 and http_version != "1.0":
        raise BadRequestError("no Host header")
    if lengths > 1:
        raise BadRequestError("more than one Content-Length header")
    if codings:
        if lengths:
            raise BadRequestError("both Content-Length and Transfer-Encoding")
        if http_version == "1.0":
            raise BadRequestError("Transfer-Encoding on HTTP/1.0")
        if codings > 1 or coding != b"chunked":
            raise BadRequestError("a Transfer-Encoding other than chunked")
