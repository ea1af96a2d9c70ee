"""The signing keys of an external OAuth authorization server (`--oauth-issuer`).

Where they are published is discovered from the issuer's metadata (RFC 8414
`/.well-known/oauth-authorization-server`, then OpenID Connect `/.well-known/openid-configuration`, in the
orders both specifications allow for an issuer with a path), whose `issuer` must be the configured one
(RFC 8414 section 3.3). The JWKS is fetched with httpx and kept for `MAX_AGE` seconds. A token whose `kid` is
not in it triggers one refetch, at most once per `REFETCH_COOLDOWN` seconds: a key rotation is picked up at
its first token, while tokens with made-up `kid`s cannot make this server hammer the issuer.

An issuer cannot hold sign-in up or fill memory: a fetch (discovery and JWKS together) has `DEADLINE` seconds
overall, however slowly the bytes trickle in, and each document is read as a stream and given up past
`MAX_BYTES` (a larger `Content-Length` is refused before its body is read). There is one fetch in flight per
issuer, a task of its own that every sign-in needing it waits for (a sign-in that gives up does not cancel it
for the others). A refresh that fails keeps the keys held, and a token whose key is held never waits for a
refresh: it is verified with that key while the refresh runs.

Keys are parsed by PyJWT (`PyJWK`, on `cryptography`); nothing here does cryptography by hand.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio

if TYPE_CHECKING:
    import httpx
    from jwt import PyJWK

logger = logging.getLogger("truloop.auth")

# Asymmetric signatures only: an issuer's tokens are never verified with a shared secret (nor `none`).
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512")
_FAMILY = {"RSA": ("RS", "PS"), "EC": ("ES",)}
_CURVE = {"ES256": "P-256", "ES384": "P-384", "ES512": "P-521"}


class KeysUnavailableError(Exception):
    """The issuer's metadata or key set could not be read (and no earlier copy is held)."""


def discovery_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be, in order: RFC 8414 (the well-known path inserted before the issuer's
    path), OpenID Connect with the same insertion, then OpenID Connect Discovery 1.0 (appended)."""
    parts = urlsplit(issuer)
    root = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    urls = [f"{root}/.well-known/oauth-authorization-server{path}", f"{root}/.well-known/openid-configuration{path}"]
    if path:
        urls.append(f"{root}{path}/.well-known/openid-configuration")
    return urls


class IssuerKeys:
    MAX_AGE = 3600.0  # a key set is refetched after this long, even when every kid is known
    REFETCH_COOLDOWN = 30.0  # at most one refetch for an unknown kid in this many seconds
    RETRY_AFTER_FAILURE = 10.0  # after a failed fetch, tokens are refused without asking again this long
    DEADLINE = 4.0  # one fetch (connect, discovery and JWKS, every byte of them) in all
    MAX_BYTES = 1024 * 1024  # a metadata document or key set larger than this is refused

    def __init__(
        self,
        issuer: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.issuer = issuer
        self._clock = clock
        self._transport = transport  # tests stand in for the network; None is the real one
        self._jwks_uri: str | None = None
        self._keys: dict[str | None, tuple[PyJWK, dict[str, Any]]] = {}
        self._loaded_at = -math.inf
        self._refetched_at = -math.inf
        self._failed_at = -math.inf
        self._inflight: asyncio.Task[KeysUnavailableError | None] | None = None

    async def key_for(self, kid: str | None, algorithm: str) -> Any | None:
        """The public key that verifies a token with this `kid` and `alg`, or None (an unknown key, or one
        that does not fit the algorithm). Raises KeysUnavailableError when no key set can be had."""
        stale = self._clock() - self._loaded_at >= self.MAX_AGE
        if stale and self._find(kid) is not None:
            self._refresh()  # in the background: the held key keeps verifying while the issuer answers (or not)
        elif stale:
            await self._load(keep_on_failure=bool(self._keys))
        found = self._find(kid)
        if found is None and not stale and self._clock() - self._refetched_at >= self.REFETCH_COOLDOWN:
            self._refetched_at = self._clock()
            logger.info("unknown signing key %r: fetching %s's key set again", kid, self.issuer)
            await self._load(keep_on_failure=True)
            found = self._find(kid)
        if found is None:
            return None
        jwk, raw = found
        if not _fits(raw, algorithm):
            return None
        return jwk.key

    def _find(self, kid: str | None) -> tuple[PyJWK, dict[str, Any]] | None:
        if kid is None and len(self._keys) == 1:  # a token without `kid` against a set of one key
            return next(iter(self._keys.values()))
        return self._keys.get(kid) if kid is not None else None

    async def _load(self, *, keep_on_failure: bool) -> None:
        """Wait for the fetch in flight (or a new one); KeysUnavailableError if it fails, unless told to keep
        what is held. Within `RETRY_AFTER_FAILURE` of a failure nothing is fetched."""
        fetch = self._refresh()
        if fetch is None:
            failure: KeysUnavailableError | None = KeysUnavailableError(f"{self.issuer}'s signing keys are unavailable")
        else:
            failure = await asyncio.shield(fetch)  # a waiter that gives up never cancels the fetch for the others
        if failure is not None and not keep_on_failure:
            raise KeysUnavailableError(str(failure))

    def _refresh(self) -> asyncio.Task[KeysUnavailableError | None] | None:
        """The fetch in flight, else a new one started; None within `RETRY_AFTER_FAILURE` of a failed one."""
        if self._inflight is None:
            if self._clock() - self._failed_at < self.RETRY_AFTER_FAILURE:
                return None
            self._inflight = asyncio.get_running_loop().create_task(self._fetch_bounded())
            self._inflight.add_done_callback(self._fetched)
        return self._inflight

    def _fetched(self, task: asyncio.Task[KeysUnavailableError | None]) -> None:
        self._inflight = None
        if not task.cancelled() and task.exception() is not None:  # a bug: logged, and the next token tries again
            logger.error("fetching %s's signing keys failed", self.issuer, exc_info=task.exception())

    async def _fetch_bounded(self) -> KeysUnavailableError | None:
        """Fetch the key set within `DEADLINE`; keep it, or note the failure (and return it) keeping the old."""
        try:
            with anyio.fail_after(self.DEADLINE):
                keys = await self._fetch()
        except TimeoutError:
            failure = KeysUnavailableError(f"{self.issuer} did not send its signing keys within {self.DEADLINE:g} s")
        except KeysUnavailableError as exc:
            failure = exc
        else:
            self._keys = keys
            self._loaded_at = self._clock()
            return None
        self._failed_at = self._clock()
        logger.warning("%s", failure)
        return failure

    async def _fetch(self) -> dict[str | None, tuple[PyJWK, dict[str, Any]]]:
        import httpx

        try:
            async with httpx.AsyncClient(
                timeout=self.DEADLINE, follow_redirects=True, transport=self._transport
            ) as client:
                if self._jwks_uri is None:
                    self._jwks_uri = await self._discover(client)
                status, document = await self._get(client, self._jwks_uri)
        except httpx.HTTPError as exc:
            failure = type(exc).__name__
            raise KeysUnavailableError(f"cannot reach {self.issuer} for its signing keys ({failure})") from None
        if status != 200:
            raise KeysUnavailableError(f"{self._jwks_uri} answered HTTP {status}")
        keys = _parse_key_set(document)
        if not keys:
            raise KeysUnavailableError(f"{self._jwks_uri} holds no usable signing key")
        return keys

    async def _get(self, client: httpx.AsyncClient, url: str) -> tuple[int, Any]:
        """The status and JSON document (None if not JSON) at `url`, read as a stream of at most `MAX_BYTES`
        (KeysUnavailableError past it). Compressed bodies are not asked for and not accepted: a small gzip
        body can inflate to far more than the cap in one read."""
        headers = {"Accept": "application/json", "Accept-Encoding": "identity"}
        async with client.stream("GET", url, headers=headers) as response:
            if response.status_code != 200:
                return response.status_code, None
            too_large = KeysUnavailableError(f"{url} sends more than {self.MAX_BYTES} bytes")
            declared = response.headers.get("content-length", "")
            if declared.strip().isdigit() and int(declared) > self.MAX_BYTES:
                raise too_large
            if response.headers.get("content-encoding", "identity").strip().lower() != "identity":
                raise KeysUnavailableError(f"{url} sends a compressed body (Content-Encoding), not asked for")
            body = bytearray()
            async for chunk in response.aiter_bytes():  # identity-encoded: as sent
                body += chunk
                if len(body) > self.MAX_BYTES:
                    raise too_large
        try:
            return 200, json.loads(body)
        except ValueError:
            return 200, None

    async def _discover(self, client: httpx.AsyncClient) -> str:
        for url in discovery_urls(self.issuer):
            status, metadata = await self._get(client, url)
            if status != 200 or not isinstance(metadata, dict):
                continue
            if metadata.get("issuer") != self.issuer:
                logger.warning("%s names issuer %r, not %r: ignored", url, metadata.get("issuer"), self.issuer)
                continue
            jwks_uri = metadata.get("jwks_uri")
            if isinstance(jwks_uri, str) and jwks_uri.startswith(("https://", "http://")):
                return jwks_uri
        raise KeysUnavailableError(
            f"no authorization server metadata with a jwks_uri for issuer {self.issuer} "
            "(tried /.well-known/oauth-authorization-server and /.well-known/openid-configuration)"
        )


def _parse_key_set(document: Any) -> dict[str | None, tuple[PyJWK, dict[str, Any]]]:
    from jwt import PyJWK, PyJWTError

    keys: dict[str | None, tuple[PyJWK, dict[str, Any]]] = {}
    entries = document.get("keys") if isinstance(document, dict) else None
    for raw in entries if isinstance(entries, list) else []:
        if not isinstance(raw, dict) or raw.get("use", "sig") != "sig" or raw.get("kty") not in _FAMILY:
            continue
        try:
            keys[raw.get("kid")] = (PyJWK(raw), raw)
        except PyJWTError:
            continue  # a key type or curve PyJWT cannot use
    return keys


def _fits(raw: dict[str, Any], algorithm: str) -> bool:
    """A key is used only with the algorithm it names, or, naming none, one of its type (and curve)."""
    if raw.get("alg") is not None:
        return bool(raw["alg"] == algorithm)
    if not algorithm.startswith(_FAMILY[raw["kty"]]):
        return False
    return raw["kty"] != "EC" or raw.get("crv") == _CURVE.get(algorithm)
