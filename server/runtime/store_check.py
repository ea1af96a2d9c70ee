"""Before serving: the PostgreSQL (`--database-url`) and Redis (`--redis-url`) the settings name answer, or the
server does not start.

A server whose store is unreachable would otherwise start, then make every call wait for the pool and answer
`store_unavailable`. Each store gets one connection attempt of a few seconds; with `--wait-for-store SECONDS`
the attempts repeat, a second apart, until that long has passed (a container started beside its database). The
error names the URL with its password masked.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable
from urllib.parse import SplitResult, urlsplit

import anyio

from server.settings import Settings

logger = logging.getLogger("truloop.start")

ATTEMPT_SECONDS = 3.0  # one connection attempt, DNS and handshake included
RETRY_PAUSE = 1.0
_QUERY_SECRET = re.compile(r"(?i)((?:^|[?&;\s])(?:password|passwd|pass)=)[^&;\s]*")
_REASON_CHARS = 300


class StoreUnreachableError(Exception):
    """A store the settings name did not answer in time; the message says which, where and why."""


def masked_url(url: str) -> str:
    """`url` with its password (in the authority or a `password=` parameter) shown as `***`."""
    try:
        parts = urlsplit(url)
        if parts.password is not None:
            host = parts.netloc.rsplit("@", 1)[1]
            parts = SplitResult(parts.scheme, f"{parts.username or ''}:***@{host}", parts.path, parts.query, "")
            url = parts.geturl()
    except ValueError:  # not a URL (a libpq key=value string): only the parameter form is masked
        pass
    return _QUERY_SECRET.sub(r"\1***", url)


async def ping_postgres(url: str) -> None:
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, connect_timeout=int(ATTEMPT_SECONDS)) as conn:
        await conn.execute("SELECT 1")


async def ping_redis(url: str) -> None:
    import redis.asyncio as redis

    client = redis.Redis.from_url(url, socket_connect_timeout=ATTEMPT_SECONDS, socket_timeout=ATTEMPT_SECONDS)
    try:
        await client.ping()
    finally:
        await client.aclose()


async def check_stores(settings: Settings) -> None:
    """Raises `StoreUnreachableError` unless every configured store answers within `settings.wait_for_store` seconds
    (one attempt when 0)."""
    checks: list[tuple[str, str, str, Callable[[str], Awaitable[None]]]] = []
    if settings.database_url is not None:
        checks.append(("PostgreSQL", "--database-url", settings.database_url.get_secret_value(), ping_postgres))
    if settings.redis_url is not None:
        checks.append(("Redis", "--redis-url", settings.redis_url.get_secret_value(), ping_redis))
    deadline = time.monotonic() + settings.wait_for_store
    for name, flag, url, ping in checks:
        await _until_answered(name, flag, url, ping, deadline, settings.wait_for_store)


async def _until_answered(
    name: str, flag: str, url: str, ping: Callable[[str], Awaitable[None]], deadline: float, wait: float
) -> None:
    said = False
    while True:
        try:
            with anyio.fail_after(ATTEMPT_SECONDS + 1):
                await ping(url)
            return
        except Exception as exc:
            reason = _reason(exc, url)
        if time.monotonic() >= deadline:
            waited = f" after waiting {wait:g} s" if wait else ""
            raise StoreUnreachableError(
                f"cannot reach {name} at {masked_url(url)}{waited}: {reason}. Start it or fix {flag}; "
                "--wait-for-store SECONDS waits for it to come up"
            )
        if not said:
            logger.warning("waiting for %s at %s: %s", name, masked_url(url), reason)
            said = True
        await anyio.sleep(min(RETRY_PAUSE, max(0.0, deadline - time.monotonic())))  # the last try at the deadline


def _reason(exc: BaseException, url: str) -> str:
    """The driver's one-line reason, never with the URL's password in it."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, TimeoutError):
        text = f"no answer within {ATTEMPT_SECONDS:g} s"
    try:
        password = urlsplit(url).password
    except ValueError:
        password = None
    if password:
        text = text.replace(password, "***")
    return masked_url(text)[:_REASON_CHARS].rstrip(". ?")
