"""Who is calling: bearer tokens on HTTP (a static HS256 secret, or an external OAuth authorization server's
signed tokens), `--user` on stdio, and the profile each may see."""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from pydantic import SecretStr

from toolsets.core.context import Caller
from toolsets.core.roles import OPERATOR, TOKEN_ROLES, tool_role
from toolsets.infra.locality import Locality, located

if TYPE_CHECKING:
    from server.auth.issuer_keys import IssuerKeys
    from server.settings import Settings

logger = logging.getLogger("truloop.auth")

SECRET_ALGORITHM = "HS256"
TIME_CLAIMS = ("exp", "nbf", "iat")


class RefusedTokenError(Exception):
    """A bearer token that is not accepted; `description` is what the 401's `error_description` says (it
    names what is wrong, never the token or the secret)."""

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description


@dataclass(frozen=True, slots=True)
class ClaimNames:
    """Where an issuer's tokens carry the role and the groups: a claim name, or a dotted path into nested
    claims (Keycloak: `realm_access.roles`)."""

    role: str = "role"
    groups: str = "groups"


class JwtVerifier:
    """`TokenVerifier` for the bearer tokens of HTTP.

    - With a static secret (TRULOOP_JWT_SECRET): HS256 tokens, `exp` required, `iss` checked when
      TRULOOP_JWT_ISSUER is set.
    - With an issuer (`--oauth-issuer`): tokens signed with one of the issuer's published keys (RS/PS/ES),
      `iss` = the issuer, `exp` required. Both may be configured: the token's algorithm picks the check.

    Every token must name this server in `aud` (one of `audiences`: the resource URLs, and `--jwt-audience`);
    a token without `aud` is refused, since it could be meant for any service that shares the key. `exp`,
    `nbf` and `iat` given as numeric strings are read as numbers (anything else is refused), so a token is
    never kept past its `exp`. Claims: `sub` (required), the role (`member` | `guest` | `operator`, a member who
    may also read /metrics; absent means `guest`), optional `zoneinfo` and `locale` (the user's IANA time zone
    and BCP 47 language, `located`).

    A token that verified is remembered by its SHA-256 (never the token itself) until its `exp`, and for at
    most `CACHE_SECONDS`, so a client's next requests skip the signature and the claim checks; `nbf` and
    `exp` are still checked on every hit. Only tokens that verified are kept, at most `CACHE_SIZE`; the cache
    belongs to this verifier, and so to its keys: rotating the secret (a new verifier) forgets every token
    signed with the old one.
    """

    CACHE_SIZE = 4096
    CACHE_SECONDS = 900.0

    def __init__(
        self,
        secret: SecretStr | None = None,
        *,
        audiences: Iterable[str] = (),
        issuer: str | None = None,
        issuer_keys: IssuerKeys | None = None,
        claim_names: ClaimNames = ClaimNames(),
        leeway: float = 30.0,
    ) -> None:
        self._secret = secret
        self._audiences = tuple(dict.fromkeys(audiences))
        self._issuer = issuer  # of HS256 tokens (TRULOOP_JWT_ISSUER)
        self._issuer_keys = issuer_keys
        self._claim_names = claim_names
        self._leeway = leeway
        self._verified: OrderedDict[bytes, tuple[float, float, AccessToken]] = OrderedDict()

    @property
    def audiences(self) -> tuple[str, ...]:
        return self._audiences

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            return await self.check(token)
        except RefusedTokenError:
            return None

    async def check(self, token: str) -> AccessToken:
        """The verified token, or RefusedTokenError saying why not."""
        key = hashlib.sha256(token.encode()).digest()
        now = time.time()
        hit = self._verified.get(key)
        if hit is not None:
            not_before, until, access = hit
            if not_before <= now < until:
                return access
            del self._verified[key]
        signing_key, algorithm, issued_by_issuer = await self._key_for(token)
        claims = self.decode(token, signing_key, algorithm, issued_by_issuer)
        access = self._access(token, claims)
        until = now + self.CACHE_SECONDS
        if "exp" in claims:
            until = min(until, claims["exp"])
        not_before = claims["nbf"] - self._leeway if "nbf" in claims else float("-inf")
        self._verified[key] = (not_before, until, access)
        if len(self._verified) > self.CACHE_SIZE:
            self._verified.popitem(last=False)
        return access

    async def _key_for(self, token: str) -> tuple[Any, str, bool]:
        """The key that must have signed `token`, its algorithm, and whether it is the issuer's."""
        import jwt  # PyJWT, already a dependency of mcp; imported only when HTTP auth is used

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise RefusedTokenError("malformed token") from None
        algorithm = header.get("alg")
        if algorithm == SECRET_ALGORITHM and self._secret is not None:
            return self._secret.get_secret_value(), algorithm, False
        from server.auth.issuer_keys import ALGORITHMS, KeysUnavailableError

        if self._issuer_keys is None or algorithm not in ALGORITHMS:
            raise RefusedTokenError(f"signature algorithm {str(algorithm)[:16]!r} is not accepted")
        kid = header.get("kid")
        try:
            public_key = await self._issuer_keys.key_for(kid if isinstance(kid, str) else None, algorithm)
        except KeysUnavailableError:
            raise RefusedTokenError("the authorization server's signing keys are unavailable") from None
        if public_key is None:
            raise RefusedTokenError("unknown signing key")
        return public_key, algorithm, True

    def decode(self, token: str, key: Any, algorithm: str, issued_by_issuer: bool) -> dict[str, Any]:
        """The checked claims of `token` signed with `key`, or RefusedTokenError."""
        import jwt

        required = ["sub", "aud", "exp", *(("iss",) if issued_by_issuer else ())]  # no token lives forever
        issuer = self._issuer_keys.issuer if issued_by_issuer and self._issuer_keys is not None else self._issuer
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                audience=list(self._audiences),
                issuer=issuer,
                leeway=self._leeway,
                options={"require": required},
            )
        except (jwt.PyJWTError, TypeError, ValueError) as exc:  # a key of another type: TypeError, ValueError
            description = refusal_of(exc, self._audiences, minted_here=not issued_by_issuer)
            logger.info("bearer token rejected: %s", description)
            raise RefusedTokenError(description) from None
        for name in TIME_CLAIMS:
            if name in claims:
                claims[name] = seconds(name, claims[name])
        if not isinstance(claims.get("sub"), str) or not claims["sub"]:
            raise RefusedTokenError("token has no subject (sub)")
        if issued_by_issuer:
            claims["role"], claims["groups"] = self._mapped_role_and_groups(claims)
        elif claims.setdefault("role", "guest") not in TOKEN_ROLES:
            raise RefusedTokenError("unknown role (member, guest or operator)")
        return claims

    def _mapped_role_and_groups(self, claims: Mapping[str, Any]) -> tuple[str, list[str]]:
        """The issuer's role claim (a string or a list) read as `operator` (when it holds `operator`), `member` or
        `guest`: no recognised role is `guest`, the least privilege; its groups claim as a list of names."""
        found = claim_at(claims, self._claim_names.role)
        values = [found] if isinstance(found, str) else found if isinstance(found, list) else []
        role = OPERATOR if OPERATOR in values else "member" if "member" in values else "guest"
        groups = claim_at(claims, self._claim_names.groups)
        if isinstance(groups, str):
            groups = [groups]
        return role, [group for group in groups if isinstance(group, str)] if isinstance(groups, list) else []

    def _access(self, token: str, claims: dict[str, Any]) -> AccessToken:
        audience = claims["aud"]
        named = [audience] if isinstance(audience, str) else audience
        scope = claims.get("scope")
        return AccessToken(
            token=token,
            client_id=str(claims.get("azp") or claims.get("client_id") or "truloop"),
            scopes=scope.split() if isinstance(scope, str) else [],
            expires_at=int(claims["exp"]) if "exp" in claims else None,
            resource=next((name for name in named if name in self._audiences), None),
            subject=claims["sub"],
            claims=claims,
        )


def seconds(name: str, value: Any) -> int | float:
    """A time claim as a number: JSON numbers as they are, a numeric string (which PyJWT's checks accept) read
    as the integer PyJWT read; anything else is refused."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    raise RefusedTokenError(f"{name} is not a number")


def claim_at(claims: Mapping[str, Any], path: str) -> Any:
    """`claims[path]`, or for a dotted path the nested value (`realm_access.roles`); None when absent."""
    if path in claims:
        return claims[path]
    value: Any = claims
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def refusal_of(exc: Exception, audiences: Iterable[str], *, minted_here: bool = False) -> str:
    """The `error_description` of a PyJWT refusal (`minted_here`: a token of the static secret, which
    `truloop-mcp token` mints, so a wrong audience says how to mint the right one)."""
    import jwt

    if isinstance(exc, jwt.ExpiredSignatureError):
        return "token expired"
    if isinstance(exc, jwt.ImmatureSignatureError):
        return "token not yet valid"
    if isinstance(exc, jwt.MissingRequiredClaimError):
        if exc.claim == "aud":
            return "token has no audience (aud); mint one for this server (truloop-mcp token)"
        return f"token has no {exc.claim} claim"
    if isinstance(exc, jwt.InvalidAudienceError):
        first = next(iter(audiences), "")
        if not first:
            return "wrong audience"
        said = f"wrong audience: tokens for this server name {first}"
        return f"{said}; mint one with: truloop-mcp token --user ID --url {first}" if minted_here else said
    if isinstance(exc, jwt.InvalidIssuerError):
        return "wrong issuer"
    if isinstance(exc, jwt.InvalidSignatureError | TypeError | ValueError):
        return "bad signature"
    if isinstance(exc, jwt.InvalidAlgorithmError):
        return "signature algorithm not accepted"
    if isinstance(exc, jwt.InvalidIssuedAtError):
        return "iat is not a number"
    if isinstance(exc, jwt.DecodeError) and "must be an integer" in str(exc):
        return f"{'exp' if '(exp)' in str(exc) else 'nbf'} is not a number"
    return "malformed token"


def verifier_for(settings: Settings, audiences: Iterable[str]) -> JwtVerifier:
    """The verifier of an HTTP deployment: its secret and/or its issuer, accepting `audiences` (the resource
    URLs) and `--jwt-audience`."""
    issuer_keys = None
    if settings.oauth_issuer is not None:
        from server.auth.issuer_keys import IssuerKeys

        issuer_keys = IssuerKeys(settings.oauth_issuer)
    return JwtVerifier(
        settings.jwt_secret,
        audiences=(*audiences, *settings.jwt_audience),
        issuer=settings.jwt_issuer,
        issuer_keys=issuer_keys,
        claim_names=ClaimNames(role=settings.oauth_role_claim, groups=settings.oauth_groups_claim),
    )


def caller_from_claims(claims: Mapping[str, Any], default: Caller, listed: Locality | None = None) -> Caller:
    """The caller a verified token names (its claims already carry the role, mapped for an issuer's tokens; an
    operator is a member to the tools), in the zone and language `located` finds (`default`: the server's)."""
    caller = Caller(
        user_id=str(claims["sub"]),
        role=tool_role(claims.get("role", "guest")),
        timezone=default.timezone,
        locale=default.locale,
        claims=dict(claims),
    )
    return located(claims, listed or Locality(), caller)


class DirectoryLocalities(Protocol):
    async def of(self, user_id: str) -> Locality: ...


@dataclass(frozen=True, slots=True)
class Surface:
    """One MCP endpoint: which profile a caller gets there.

    `member_profile` is what members get (`member` at /mcp, `notification-safe` at
    /notification-safe/mcp, or `--profile` on stdio); guests always get `guest`.
    Without a token (stdio, or loopback HTTP without a secret) the caller is `default_caller`.
    `directory` says the zone and language the user directory holds for a user (None: no directory).
    """

    member_profile: str
    default_caller: Caller
    default_profile: str
    directory: DirectoryLocalities | None = None

    async def resolve(self) -> tuple[Caller, str]:
        """The caller of the current request, in their zone and language, and the name of the profile they get."""
        token = get_access_token()
        claims = token.claims if token is not None else None
        user_id = str(claims["sub"]) if claims is not None else self.default_caller.user_id
        listed = await self.directory.of(user_id) if self.directory is not None else Locality()
        if claims is None:
            return located({}, listed, self.default_caller), self.default_profile
        caller = caller_from_claims(claims, self.default_caller, listed)
        return caller, self._profile_of(caller.role)

    def owner(self) -> tuple[str, str]:
        """The current request's user id and the name of their profile (`resolve()`, without the zone and language)."""
        token = get_access_token()
        if token is None or token.claims is None:
            return self.default_caller.user_id, self.default_profile
        return str(token.claims["sub"]), self._profile_of(tool_role(token.claims.get("role", "guest")))

    def profile(self) -> str:
        """The name of the profile the current request's caller gets (`resolve()[1]`, without making the caller)."""
        token = get_access_token()
        if token is None or token.claims is None:
            return self.default_profile
        return self._profile_of(tool_role(token.claims.get("role", "guest")))

    def _profile_of(self, role: str) -> str:
        return self.member_profile if role == "member" else "guest"


def is_operator(claims: Mapping[str, Any] | None) -> bool:
    """Whether a verified token's claims name an operator (who may read /metrics)."""
    return claims is not None and claims.get("role") == OPERATOR
