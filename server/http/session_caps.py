"""Per-user caps on long-lived HTTP resources, so one user cannot lock everyone else out.

- MCP sessions: a streamable-HTTP session opened at `/mcp` or `/notification-safe/mcp` lives until the
  client deletes it or it idles out; a legacy SSE session lives as long as its `GET /sse`. Past
  `max_sessions` for a user, that user's *new* session is refused with 429 and `Retry-After`; their open
  sessions, and every other user, are untouched. (Refusing the newcomer rather than closing the least
  recently used session means a runaway client cannot kick out the user's working host window.)
- Device streams (`GET /api/v1/agent/rpc-stream`): at most `max_device_streams` open per user, likewise.

The SDK's own global cap (10,000 sessions, then 503 for everyone) stays as the last line.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Collection

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger("truloop.http")

SESSION_HEADER = "mcp-session-id"
_SESSION_HEADER_RAW = SESSION_HEADER.encode()
RETRY_AFTER_SECONDS = 60


def principal(scope: Scope, default_user: str | None) -> str | None:
    """The authenticated user id, or `default_user` when the server runs without tokens."""
    user = scope.get("user")
    token = getattr(user, "access_token", None)
    subject = getattr(token, "subject", None)
    if subject:
        return str(subject)
    return default_user


def _has_header(scope: Scope, name: bytes) -> bool:
    return any(key == name for key, _ in scope["headers"])


class SessionCaps:
    def __init__(
        self,
        app: ASGIApp,
        *,
        max_sessions: int,
        max_device_streams: int,
        session_paths: Collection[str],
        sse_paths: Collection[str],
        device_stream_paths: Collection[str],
        is_live: Callable[[str], bool],
        default_user: str | None,
    ) -> None:
        self.app = app
        self.max_sessions = max_sessions
        self.max_device_streams = max_device_streams
        self.session_paths = frozenset(session_paths)
        self.sse_paths = frozenset(sse_paths)
        self.device_stream_paths = frozenset(device_stream_paths)
        self.is_live = is_live
        self.default_user = default_user
        self._sessions: dict[str, set[str]] = defaultdict(set)  # streamable-HTTP session ids per user
        self._opening: dict[str, int] = defaultdict(int)  # session-opening requests in progress
        self._sse: dict[str, int] = defaultdict(int)
        self._device: dict[str, int] = defaultdict(int)

    def open_sessions(self, user: str) -> int:
        live = {sid for sid in self._sessions.pop(user, ()) if self.is_live(sid)}
        if live:
            self._sessions[user] = live
        return len(live) + self._opening.get(user, 0) + self._sse.get(user, 0)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path, method = scope["path"], scope["method"]
        user = principal(scope, self.default_user)
        if user is None:  # unauthenticated: the route itself answers 401
            await self.app(scope, receive, send)
        elif path in self.session_paths and method == "POST" and not _has_header(scope, _SESSION_HEADER_RAW):
            await self._open_session(user, scope, receive, send)
        elif path in self.sse_paths and method == "GET":
            await self._held(self._sse, user, self.max_sessions, "MCP sessions", scope, receive, send)
        elif path in self.device_stream_paths and method == "GET":
            await self._held(self._device, user, self.max_device_streams, "device streams", scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _open_session(self, user: str, scope: Scope, receive: Receive, send: Send) -> None:
        if self.open_sessions(user) >= self.max_sessions:
            await self._refuse(user, self.max_sessions, "MCP sessions", scope, receive, send)
            return
        session_id: str | None = None

        async def note_session(message: Message) -> None:
            nonlocal session_id
            if message["type"] == "http.response.start" and message["status"] < 400:
                session_id = Headers(raw=message.get("headers", [])).get(SESSION_HEADER)
            await send(message)

        self._opening[user] += 1
        try:
            await self.app(scope, receive, note_session)
        finally:
            self._opening[user] -= 1
            if not self._opening[user]:
                del self._opening[user]
            if session_id:
                self._sessions[user].add(session_id)

    async def _held(
        self, counts: dict[str, int], user: str, cap: int, what: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        already = self.open_sessions(user) if counts is self._sse else counts.get(user, 0)
        if already >= cap:
            await self._refuse(user, cap, what, scope, receive, send)
            return
        counts[user] += 1
        try:
            await self.app(scope, receive, send)
        finally:
            counts[user] -= 1
            if not counts[user]:
                del counts[user]

    async def _refuse(self, user: str, cap: int, what: str, scope: Scope, receive: Receive, send: Send) -> None:
        logger.warning("refused a new connection: a user already holds %d %s", cap, what)
        hint = (
            "close one (DELETE /mcp with its Mcp-Session-Id) or wait for an idle one to expire"
            if what == "MCP sessions"
            else "close one of your other device connections"
        )
        body = {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32000, "message": f"Too many open {what} for this user (limit {cap}): {hint}"},
        }
        response = JSONResponse(body, status_code=429, headers={"Retry-After": str(RETRY_AFTER_SECONDS)})
        await response(scope, receive, send)
