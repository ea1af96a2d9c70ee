"""DNS-rebinding protection for every route of the HTTP app, in one place.

A web page rebound to 127.0.0.1 reaches the server with its own `Host` (and `Origin`); such a request
is refused before any route, authentication or body read: 421 for a foreign Host, 403 for a foreign
Origin. Patterns are exact values or `name:*` (any port).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

logger = logging.getLogger("truloop.http")


def _matches(value: str, patterns: Sequence[str]) -> bool:
    for pattern in patterns:
        if value == pattern:
            return True
        if pattern.endswith(":*"):
            base = pattern[:-1]  # "name:"
            port = value[len(base) :]
            if value.startswith(base) and port.isdigit():
                return True
    return False


class HostOriginGuard:
    def __init__(self, app: ASGIApp, *, allowed_hosts: Sequence[str], allowed_origins: Sequence[str]) -> None:
        self.app = app
        self.allowed_hosts = tuple(allowed_hosts)
        self.allowed_origins = tuple(allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        origin = headers.get("origin")
        if not _matches(host, self.allowed_hosts):
            logger.info("refused a request with a foreign Host header")
            await _refuse(421, "Misdirected request: this server does not answer for that Host")(scope, receive, send)
            return
        if origin is not None and not _matches(origin, self.allowed_origins):
            logger.info("refused a request with a foreign Origin header")
            await _refuse(403, "Forbidden: requests from that Origin are not accepted")(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _refuse(status: int, message: str) -> JSONResponse:
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": message}}, status)
