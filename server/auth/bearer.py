"""Bearer authentication for every HTTP route, as one pure ASGI middleware, and the 401 of the MCP endpoints.

- `Authorization: Bearer <token>` (the first Authorization header; the scheme in any case) is checked by the
  verifier (`server.auth.identity.JwtVerifier`, which caches verified tokens). A verified, unexpired token gives
  `scope["user"] = AuthenticatedUser(access_token)` and `scope["auth"] = AuthCredentials(its scopes)` (what the
  SDK's per-session owner check, the session caps and the device routes read), and the context variable behind
  the SDK's `get_access_token()`, which the tools read, while the request is served.
- A token issued for the notification-safe surface (its `aud` is that resource) reaches nothing else.
- On an MCP endpoint (/mcp, /notification-safe/mcp, /sse, /messages/) and on /metrics (the main resource's)
  anything else is answered here with 401 and `WWW-Authenticate: Bearer ..., resource_metadata="<that surface's
  RFC 9728 metadata>"`: without a token no error code (RFC 6750 section 3.1), with a refused one
  `error="invalid_token"` and what was wrong (`token expired`, `wrong audience: ...`, `wrong issuer`, `bad
  signature`, `unknown signing key`, ...).
- Other routes get `UnauthenticatedUser()` and decide themselves (the device routes answer their own 401,
  /healthz and the metadata need no token).

Reading the header straight from the raw list, with no `HTTPConnection` or `Headers` object, keeps the check
cheap on a path every request takes.
"""

from __future__ import annotations

import json
import time

from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from starlette.authentication import AuthCredentials, UnauthenticatedUser
from starlette.types import ASGIApp, Receive, Scope, Send

from server.auth.identity import JwtVerifier, RefusedTokenError
from server.auth.protected_resource import ProtectedResource, Resources

_AUTHORIZATION = b"authorization"
NO_TOKEN = "Authentication required"


class BearerAuthentication:
    def __init__(self, app: ASGIApp, *, verifier: JwtVerifier, resources: Resources) -> None:
        self.app = app
        self.verifier = verifier
        self.resources = resources

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refusal: str | None = NO_TOKEN
        try:
            user = await self.authenticate(scope)
        except RefusedTokenError as refused:
            user, refusal = None, refused.description
        if user is None:
            guarded = self.resources.guarding(scope["path"])
            if guarded is not None and scope["type"] == "http":
                await challenge(send, guarded, None if refusal == NO_TOKEN else refusal)
                return
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
        """The token's user; None without a bearer token; RefusedTokenError for a token that is not accepted here."""
        header = next((value for name, value in scope["headers"] if name == _AUTHORIZATION), None)
        if header is None or header[:7].lower() != b"bearer ":
            return None
        access = await self.verifier.check(header[7:].decode("latin-1").strip())
        if access.expires_at is not None and access.expires_at < int(time.time()):
            raise RefusedTokenError("token expired")
        confined = self.resources.confinement(access.resource)
        if confined is not None and not scope["path"].startswith(confined):
            raise RefusedTokenError(f"this token is for {access.resource} only")
        return AuthenticatedUser(access)


def www_authenticate(resource: ProtectedResource, refusal: str | None) -> str:
    parts = [] if refusal is None else ['error="invalid_token"', f'error_description="{quoted(refusal)}"']
    parts.append(f'resource_metadata="{resource.metadata_url}"')
    return "Bearer " + ", ".join(parts)


def quoted(text: str) -> str:
    """Text safe inside an RFC 6750 quoted string (no quote, backslash or control character)."""
    return "".join(c for c in text if c >= " " and c not in '"\\')[:300]


async def challenge(send: Send, resource: ProtectedResource, refusal: str | None) -> None:
    body = json.dumps({"error": "invalid_token", "error_description": refusal or NO_TOKEN}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", www_authenticate(resource, refusal).encode()),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
