"""Who is calling: HS256 bearer tokens on HTTP, `--user` on stdio, and the profile each may see."""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from pydantic import SecretStr

from toolsets.core.context import Caller
from toolsets.core.roles import ROLES

logger = logging.getLogger("truloop.auth")


class JwtVerifier:
    """`TokenVerifier` for HS256 JWTs signed with TRULOOP_JWT_SECRET.

    Claims: `sub` (user id, required), `role` (`member` | `guest`; absent means `guest`, the least
    privilege), optional `exp`/`nbf`/`iat`, `iss` when an issuer is configured, and `zoneinfo`
    (the user's IANA time zone).

    A token that verified is remembered by its SHA-256 (never the token itself) until its `exp`, and for
    at most `CACHE_SECONDS`, so a client's next requests skip the HMAC and the claim checks; `exp` and
    `nbf` are still checked on every hit. Only tokens that verified are kept, at most
    `CACHE_SIZE`; the cache belongs to this verifier, and so to its secret: rotating the secret (a new
    verifier) forgets every token signed with the old one.
    """

    CACHE_SIZE = 4096
    CACHE_SECONDS = 900.0

    def __init__(self, secret: SecretStr, *, issuer: str | None = None, leeway: float = 30.0) -> None:
        self._secret = secret
        self._issuer = issuer
        self._leeway = leeway
        self._verified: OrderedDict[bytes, tuple[float, float, AccessToken]] = OrderedDict()

    def decode(self, token: str) -> dict[str, Any] | None:
        import jwt  # PyJWT, already a dependency of mcp; imported only when HTTP auth is used

        try:
            claims = jwt.decode(
                token,
                self._secret.get_secret_value(),
                algorithms=["HS256"],
                issuer=self._issuer,
                leeway=self._leeway,
                options={"require": ["sub"], "verify_aud": False},
            )
        except jwt.PyJWTError as exc:
            logger.info("bearer token rejected: %s", type(exc).__name__)
            return None
        if not isinstance(claims.get("sub"), str) or not claims["sub"]:
            return None
        if claims.setdefault("role", "guest") not in ROLES:
            logger.info("bearer token rejected: unknown role")
            return None
        return claims

    async def verify_token(self, token: str) -> AccessToken | None:
        key = hashlib.sha256(token.encode()).digest()
        now = time.time()
        hit = self._verified.get(key)
        if hit is not None:
            not_before, until, access = hit
            if not_before <= now < until:
                return access
            del self._verified[key]
        claims = self.decode(token)
        if claims is None:
            return None
        exp = claims.get("exp")
        nbf = claims.get("nbf")
        access = AccessToken(
            token=token,
            client_id=str(claims.get("azp") or claims.get("client_id") or "truloop"),
            scopes=[],
            expires_at=int(exp) if isinstance(exp, int | float) else None,
            subject=claims["sub"],
            claims=claims,
        )
        until = now + self.CACHE_SECONDS
        if isinstance(exp, int | float):
            until = min(until, float(exp) + self._leeway)  # what jwt.decode would still accept
        not_before = float(nbf) - self._leeway if isinstance(nbf, int | float) else float("-inf")
        self._verified[key] = (not_before, until, access)
        if len(self._verified) > self.CACHE_SIZE:
            self._verified.popitem(last=False)
        return access


def caller_from_claims(claims: Mapping[str, Any], default_timezone: str) -> Caller:
    zone = claims.get("zoneinfo")
    return Caller(
        user_id=str(claims["sub"]),
        role=claims.get("role", "guest"),
        timezone=zone if isinstance(zone, str) and zone else default_timezone,
        claims=dict(claims),
    )


@dataclass(frozen=True, slots=True)
class Surface:
    """One MCP endpoint: which profile a caller gets there.

    `member_profile` is what members get (`member` at /mcp, `notification-safe` at
    /notification-safe/mcp, or `--profile` on stdio); guests always get `guest`.
    Without a token (stdio, or loopback HTTP without a secret) the caller is `default_caller`.
    """

    member_profile: str
    default_caller: Caller
    default_profile: str

    def resolve(self) -> tuple[Caller, str]:
        """The caller of the current request and the name of the profile they get."""
        token = get_access_token()
        if token is None or token.claims is None:
            return self.default_caller, self.default_profile
        caller = caller_from_claims(token.claims, self.default_caller.timezone)
        return caller, self.member_profile if caller.role == "member" else "guest"
