"""Bearer authentication for every HTTP route, as one pure ASGI middleware.

It does what Starlette's `AuthenticationMiddleware` with the SDK's `BearerAuthBackend`, then the SDK's
`AuthContextMiddleware`, did: it sets the same scope keys, which the SDK's `RequireAuthMiddleware` on /mcp
(401 with `WWW-Authenticate`), its per-session owner check and the device routes read, and the context
variable behind the SDK's `get_access_token()`, which the tools read:

- `Authorization: Bearer <token>` (the first Authorization header; the scheme in any case) is verified by
  the token verifier (`server.identity.JwtVerifier`, which caches verified tokens); a verified, unexpired
  token gives `scope["user"] = AuthenticatedUser(access_token)` and `scope["auth"] =
  AuthCredentials(its scopes)`, and `get_access_token()` returns it while the request is served;
- anything else gives `UnauthenticatedUser()` and empty credentials, and the route decides (401).

Reading the header straight from the raw list, with no `HTTPConnection` or `Headers` object, and one
middleware instead of two, keeps the check cheap on a path every request takes.
"""

from __future__ import annotations

import time

from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import TokenVerifier
from starlette.authentication import AuthCredentials, UnauthenticatedUser
from starlette.types import ASGIApp, Receive, Scope, Send

_AUTHORIZATION = b"authorization"


class BearerAuthentication:
    def __init__(self, app: ASGIApp, *, verifier: TokenVerifier) -> None:
        self.app = app
        self.verifier = verifier

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        user = await self.authenticate(scope)
        if user is None:
            scope["auth"], scope["user"] = AuthCredentials(), UnauthenticatedUser()
            await self.app(scope, receive, send)
            return
        scope["auth"], scope["user"] = AuthCredentials(user.scopes), user
        reset = auth_context_var.set(user)
        try:
            await self.app(scope, receive, send)
        finally:
            auth_context_var.reset(reset)

    async def authenticate(self, scope: Scope) -> AuthenticatedUser | None:
        header = next((value for name, value in scope["headers"] if name == _AUTHORIZATION), None)
        if header is None or header[:7].lower() != b"bearer ":
            return None
        access = await self.verifier.verify_token(header[7:].decode("latin-1"))
        if access is None or (access.expires_at and access.expires_at < int(time.time())):
            return None
        return AuthenticatedUser(access)
