"""DNS-rebinding protection for every route of the HTTP app, in one place.

A web page rebound to 127.0.0.1 reaches the server with its own `Host` (and `Origin`); such a request
is refused before any route, authentication or body read: 421 for a foreign Host, 403 for a foreign
Origin. Patterns are exact values or `name:*` (any port).

Pure ASGI, and it reads the two headers straight from the scope's raw header list: it runs on every request.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

logger = logging.getLogger("truloop.http")


class Patterns:
    """Exact values, and `name:*` for `name:` followed by a port number. The verdicts on the first
    `REMEMBERED` values seen are kept (a server hears the same one or two `Host` values all day)."""

    REMEMBERED = 64

    def __init__(self, patterns: Sequence[str]) -> None:
        self.exact = frozenset(patterns)
        self.any_port = tuple(pattern[:-1] for pattern in patterns if pattern.endswith(":*"))  # "name:"
        self._verdicts: dict[str, bool] = {}

    def match(self, value: str) -> bool:
        verdict = self._verdicts.get(value)
        if verdict is None:
            verdict = value in self.exact or any(
                value.startswith(base) and value[len(base) :].isdigit() for base in self.any_port
            )
            if len(self._verdicts) < self.REMEMBERED:
                self._verdicts[value] = verdict
        return verdict


class HostOriginGuard:
    def __init__(self, app: ASGIApp, *, allowed_hosts: Sequence[str], allowed_origins: Sequence[str]) -> None:
        self.app = app
        self.allowed_hosts = Patterns(allowed_hosts)
        self.allowed_origins = Patterns(allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host: bytes | None = None
        origin: bytes | None = None
        for name, value in scope["headers"]:  # the first of each, as Starlette's `Headers.get` reads them
            if name == b"host":
                if host is None:
                    host = value
            elif name == b"origin" and origin is None:
                origin = value
        if not self.allowed_hosts.match(host.decode("latin-1") if host is not None else ""):
            logger.info("refused a request with a foreign Host header")
            await _refuse(421, "Misdirected request: this server does not answer for that Host")(scope, receive, send)
            return
        if origin is not None and not self.allowed_origins.match(origin.decode("latin-1")):
            logger.info("refused a request with a foreign Origin header")
            await _refuse(403, "Forbidden: requests from that Origin are not accepted")(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _refuse(status: int, message: str) -> JSONResponse:
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": message}}, status)
