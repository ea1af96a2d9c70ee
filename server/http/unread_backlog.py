"""Requests whose answers a client has not read, bounded per MCP session and per user.

A request is *unanswered* from the moment this server takes it until its answer is handed to the client's
connection:

- streamable HTTP: a POST to a live session of an MCP endpoint, until its response is complete;
- legacy SSE: a POST to `/messages/` carrying a request, until the answer's event is written on the session's
  `GET /sse` stream (the POST itself is answered 202 at once).

A client that stops reading leaves its requests unanswered, and each holds its request and its answer in memory.
The answers' bytes the client has not taken are counted too (`server.http.unread_bytes`): a streamable HTTP POST's
response until it is complete, a legacy SSE stream's events and the answers queued for it.

Past `max_requests` on one session, past `max_bytes` of request bodies across one user's sessions, past
`max_unread` bytes of answers unread in one session or past `max_unread_per_user` across a user's sessions, a
session is closed with one log line: the one that went past a per-session bound, or the user's session holding the
most bytes. A legacy SSE session's stream is ended; a streamable HTTP session is ended as by DELETE, and its POSTs
still in flight are ended with it (their answers let go). A request that finds its own session closed this way is
answered 503 with a JSON-RPC error saying why, and nothing of it runs.

A response that ends with more than `COLLECT_AT` bytes of its answer untaken (its session closed here, or its client
gone) has the garbage collector run once, at most every `COLLECT_EVERY` seconds: the answer ends up in reference
cycles (the cancelled tasks' frames and exceptions) that the collector's oldest generation, run rarely, would
otherwise hold for minutes.

After a POST of more than `RELEASE_AT` bytes, the session's message loop is handed an empty notification, so it
lets go of the request it would otherwise keep until the next one (`server.sdk_compat.release_last_message`).
"""

from __future__ import annotations

import gc
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from server.http.rpc_peek import PEEKED, Peeked
from server.http.session_caps import SESSION_HEADER, principal
from server.http.unread_bytes import SCOPE_KEY, Unread, metered_send

logger = logging.getLogger("truloop.http")

RELEASE_AT = 64 * 1024
COLLECT_AT = 1024 * 1024
COLLECT_EVERY = 1.0
CLOSED_KEPT = 1024  # sessions closed here whose later requests are refused here, without the SDK's log line each
_ENDPOINT = re.compile(rb"session_id=([0-9a-f]{32})")
_ANSWER = b'data: {"jsonrpc":"2.0","id":'  # how the SDK's legacy SSE transport writes a message's event
_ID_WINDOW = 512  # an id longer than this is never matched: its request is counted answered in turn instead
_DECODER = json.JSONDecoder()
_NOT_AN_ANSWER: Any = object()


@dataclass(eq=False)
class SessionBacklog:
    """One MCP session's unanswered requests (key -> body bytes, oldest first) and how to close the session."""

    user: str
    key: tuple[str, str]  # (the MCP path, the session id)
    close: Callable[[], Awaitable[Any]]
    pending: dict[Any, int] = field(default_factory=dict)
    bytes: int = 0
    closed: bool = False
    outputs: set[Unread] = field(default_factory=set)  # its responses (and SSE stream) under way
    posts: set[anyio.CancelScope] = field(default_factory=set)  # its streamable HTTP POSTs in flight

    @property
    def unread(self) -> int:
        """Bytes of its answers the client has not taken."""
        return sum(output.bytes for output in self.outputs)

    @property
    def name(self) -> str:
        return f"{self.key[0]} session {self.key[1][:8]}"

    def add(self, key: Any, size: int) -> None:
        self.bytes += size - self.pending.get(key, 0)
        self.pending[key] = size

    def answered(self, key: Any) -> None:
        """The answer to `key` went out; one the session never sent (a long id) stands for its oldest request."""
        if key not in self.pending:
            if not self.pending:
                return
            key = next(iter(self.pending))
        self.bytes -= self.pending.pop(key)


class UnreadBacklog:
    """The middleware; `endpoints` maps each streamable-HTTP MCP path to the function ending a session there, and
    `releases` maps each path (streamable HTTP and `/messages/`) to the function giving a session's read-stream
    writer for `server.sdk_compat.release_last_message`."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_requests: int,
        max_bytes: int,
        max_unread: int,
        max_unread_per_user: int,
        endpoints: Mapping[str, Callable[[str], Awaitable[bool]]],
        sse_path: str,
        message_path: str,
        releases: Mapping[str, Callable[[str], Any]],
        release: Callable[[Any], Awaitable[None]],
        default_user: str | None,
    ) -> None:
        self.app = app
        self.max_requests = max_requests
        self.max_bytes = max_bytes
        self.max_unread = max_unread
        self.max_unread_per_user = max_unread_per_user
        self.endpoints = dict(endpoints)
        self.sse_path = sse_path
        self.message_path = message_path
        self.releases = dict(releases)
        self.release = release
        self.default_user = default_user
        self._sessions: dict[tuple[str, str], SessionBacklog] = {}  # (path, session id) -> its backlog
        self._users: dict[str, set[SessionBacklog]] = {}
        self._closed: dict[tuple[str, str], None] = {}  # the last CLOSED_KEPT sessions closed here, oldest first
        self._collected = 0.0  # when `_let_go` last ran the collector (monotonic)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path, method = scope["path"], scope["method"]
        user = principal(scope, self.default_user)
        if user is None:
            await self.app(scope, receive, send)
        elif method == "POST" and path in self.endpoints:
            await self._post(user, path, scope, receive, send)
        elif method == "POST" and path == self.message_path:
            await self._message(user, scope, receive, send)
        elif method == "GET" and path == self.sse_path:
            await self._sse_stream(user, scope, receive, send)
        else:
            await self.app(scope, receive, send)

    # -- streamable HTTP: a request is unanswered while its POST is ---------------------------------------------

    async def _post(self, user: str, path: str, scope: Scope, receive: Receive, send: Send) -> None:
        session_id = Headers(scope=scope).get(SESSION_HEADER)
        peeked: Peeked | None = scope.get(PEEKED)
        if session_id is None or peeked is None or not peeked.is_request:
            await self.app(scope, receive, send)
            return
        if (path, session_id) in self._closed:
            await self._refuse(scope, receive, send)
            return
        end = self.endpoints[path]
        known = self._sessions.get((path, session_id))
        if known is not None and known.user != user:  # not theirs: the SDK answers it as no such session
            await self.app(scope, receive, send)
            return
        backlog = self._backlog(user, (path, session_id), lambda: end(session_id))
        key, unread, post = object(), Unread(), anyio.CancelScope()
        backlog.add(key, peeked.size)
        backlog.outputs.add(unread)
        try:
            if await self._over(backlog):
                await self._refuse(scope, receive, send)
                return
            backlog.posts.add(post)
            with post:
                await self.app(scope, receive, metered_send(send, unread, lambda: self._over_unread(backlog)))
            if post.cancelled_caught:  # its session was closed here
                await self._end_cancelled(unread, scope, receive, send)
        finally:
            backlog.posts.discard(post)
            backlog.outputs.discard(unread)
            self._let_go(unread)
            backlog.answered(key)
            if not backlog.pending:
                self._forget(backlog)
        if peeked.size > RELEASE_AT and not backlog.closed:
            await self._release(path, session_id)

    # -- legacy SSE: a request is unanswered until its answer's event is written on the session's stream --------

    async def _message(self, user: str, scope: Scope, receive: Receive, send: Send) -> None:
        peeked: Peeked | None = scope.get(PEEKED)
        session_id = _query_session(scope)
        if (self.sse_path, session_id or "") in self._closed:  # answered here: the SDK would log each one
            await self._refuse(scope, receive, send)
            return
        backlog = self._sessions.get((self.sse_path, session_id or ""))
        if peeked is None or backlog is None or backlog.user != user:  # the SDK answers it (404, 400, ...)
            await self.app(scope, receive, send)
            return
        if peeked.is_request:
            backlog.add(peeked.request_id, peeked.size)
            if await self._over(backlog):
                await self._refuse(scope, receive, send)
                return
        await self.app(scope, receive, send)
        if peeked.size > RELEASE_AT and session_id is not None and not backlog.closed:
            await self._release(self.message_path, session_id)

    async def _sse_stream(self, user: str, scope: Scope, receive: Receive, send: Send) -> None:
        backlog: SessionBacklog | None = None
        unread = Unread()

        async def check() -> None:
            if backlog is not None:
                await self._over_unread(backlog)

        scope[SCOPE_KEY] = (unread, check)  # for the answers queued for the stream (server.http.legacy_sse)
        with anyio.CancelScope() as stream:

            async def close() -> None:
                stream.cancel()

            async def watched(message: Message) -> None:
                nonlocal backlog
                if message["type"] == "http.response.body":
                    body = message.get("body", b"")
                    if backlog is None:
                        found = _ENDPOINT.search(body, 0, 512)
                        if found is not None:
                            backlog = self._backlog(user, (self.sse_path, found.group(1).decode()), close)
                            backlog.outputs.add(unread)
                    else:
                        answered = _answer_id(body)
                        if answered is not _NOT_AN_ANSWER:
                            backlog.answered(answered)
                await send(message)

            try:
                await self.app(scope, receive, metered_send(watched, unread, check))
            finally:
                if backlog is not None:  # the stream ended: so did its session
                    self._forget(backlog)
                self._let_go(unread)
        if stream.cancelled_caught:  # closed here: end the body if the client takes it, else uvicorn drops it
            with anyio.move_on_after(0.5):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    # -- the bounds ---------------------------------------------------------------------------------------------

    def _backlog(self, user: str, key: tuple[str, str], close: Callable[[], Awaitable[Any]]) -> SessionBacklog:
        backlog = self._sessions.get(key)
        if backlog is None:
            backlog = SessionBacklog(user, key, close)
            self._sessions[key] = backlog
            self._users.setdefault(user, set()).add(backlog)
        return backlog

    def _forget(self, backlog: SessionBacklog) -> None:
        """No more accounting for `backlog`'s session (nothing of it waits, it ended, or it was closed)."""
        if self._sessions.get(backlog.key) is not backlog:
            return
        del self._sessions[backlog.key]
        sessions = self._users[backlog.user]
        sessions.discard(backlog)
        if not sessions:
            del self._users[backlog.user]

    async def _over(self, backlog: SessionBacklog) -> bool:
        """Close what went past a bound; True when `backlog`'s own session is closed (now or before)."""
        if not backlog.closed and len(backlog.pending) > self.max_requests:
            await self._close(backlog, f"the answers to {self.max_requests} requests unread")
        sessions = self._users.get(backlog.user, set())
        if not backlog.closed and sum(s.bytes for s in sessions) > self.max_bytes:
            biggest = max(sessions, key=lambda s: s.bytes)
            why = f"the answers to {self.max_bytes:,} bytes of requests across the user's sessions unread"
            await self._close(biggest, why)
        await self._over_unread(backlog)
        return backlog.closed

    async def _over_unread(self, backlog: SessionBacklog) -> None:
        """Close what went past a bound on answers' unread bytes."""
        if backlog.closed:
            return
        if backlog.unread > self.max_unread:
            await self._close(backlog, f"more than {self.max_unread:,} bytes of answers unread in one session")
            return
        sessions = self._users.get(backlog.user, set())
        if sum(s.unread for s in sessions) > self.max_unread_per_user:
            biggest = max(sessions, key=lambda s: s.unread)
            why = f"more than {self.max_unread_per_user:,} bytes of answers unread across the user's sessions"
            await self._close(biggest, why)

    async def _close(self, backlog: SessionBacklog, why: str) -> None:
        backlog.closed = True
        logger.warning(
            "closed %s of %s: its client left %s (%d requests, %s bytes of requests, %s bytes of answers)",
            backlog.name,
            backlog.user,
            why,
            len(backlog.pending),
            f"{backlog.bytes:,}",
            f"{backlog.unread:,}",
        )
        self._forget(backlog)
        self._closed[backlog.key] = None
        if len(self._closed) > CLOSED_KEPT:
            del self._closed[next(iter(self._closed))]
        with anyio.CancelScope(shield=True):  # (it may be called from a POST of the session, cancelled below)
            await backlog.close()
        for post in backlog.posts:  # their answers are let go, not left for a client that does not read
            post.cancel()

    async def _end_cancelled(self, unread: Unread, scope: Scope, receive: Receive, send: Send) -> None:
        """A POST of a session closed here: 503 if nothing of its answer went out, else the end of its body (if the
        client takes it; else uvicorn drops the connection)."""
        with anyio.move_on_after(0.5):
            if not unread.started:
                await self._refuse(scope, receive, send)
            elif not unread.complete:
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _let_go(self, unread: Unread) -> None:
        """A response ended: collect the cycles holding what the client left of it (see the module's doc)."""
        if unread.bytes < COLLECT_AT or time.monotonic() - self._collected < COLLECT_EVERY:
            return
        self._collected = time.monotonic()
        gc.collect()

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32000,
                "message": (
                    "This session was closed: its client left the answers to too many requests unread "
                    f"(at most {self.max_requests} per session, {self.max_bytes:,} bytes of requests per user, "
                    f"{self.max_unread:,} bytes of answers per session, {self.max_unread_per_user:,} per user). "
                    "Read each response (and the SSE stream) as it comes, then open a new session."
                ),
            },
        }
        await JSONResponse(body, status_code=503)(scope, receive, send)

    async def _release(self, path: str, session_id: str) -> None:
        writer = self.releases[path](session_id)
        if writer is not None:
            await self.release(writer)


def _query_session(scope: Scope) -> str | None:
    found = _ENDPOINT.search(scope.get("query_string", b""))
    return None if found is None else found.group(1).decode()


def _answer_id(chunk: bytes) -> Any:
    """The id of the response or error `chunk` (one SSE event) carries; `_NOT_AN_ANSWER` for anything else."""
    at = chunk.find(_ANSWER, 0, 64)
    if at < 0:
        return _NOT_AN_ANSWER
    start = at + len(_ANSWER)
    window = chunk[start : start + _ID_WINDOW].decode("utf-8", "replace")
    try:
        value, end = _DECODER.raw_decode(window)
    except ValueError:
        return None  # an id too long to read: stands for the oldest request
    if window.startswith((',"result"', ',"error"'), end):
        return value
    return _NOT_AN_ANSWER
