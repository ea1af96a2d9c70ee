"""`RetryTransport`: an httpx transport that resends what is safe to resend, with bounded backoff.

Used by every upstream client (Google Places, Supermemory, Notion) under its own `RetryPolicy`.
A request is safe to resend when its method is idempotent (GET, HEAD, OPTIONS, PUT, DELETE) or
the caller marked it with `extensions={RETRY_SAFE: True}` (a read sent as POST, such as a search);
a connection that never opened is resent whatever the method, since nothing reached the server.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import httpx

from toolsets.infra.upstream.retry_policy import ATTEMPTS, RETRY_SAFE, RetryPolicy, Sleep

logger = logging.getLogger("truloop.upstream")

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
_NEVER_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
_TRANSIENT_FAILURES = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


def may_resend(request: httpx.Request) -> bool:
    marked = request.extensions.get(RETRY_SAFE)
    if marked is not None:
        return bool(marked)
    return request.method in IDEMPOTENT_METHODS


class RetryTransport(httpx.AsyncBaseTransport):
    """Wraps another transport; resends transient failures of safe requests, at most `policy.attempts` sends."""

    def __init__(
        self, inner: httpx.AsyncBaseTransport, policy: RetryPolicy | None = None, *, sleep: Sleep | None = None
    ) -> None:
        self._inner = inner
        self.policy = policy or RetryPolicy()
        self._sleep: Sleep = sleep or anyio.sleep

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        # only a body held in memory can be sent twice (httpx keeps `json=`/`content=` bodies that way)
        resendable_body = isinstance(request.stream, httpx.ByteStream)
        sent = 0
        while True:
            sent += 1
            last = sent >= self.policy.attempts or not resendable_body
            try:
                response = await self._inner.handle_async_request(request)
            except _TRANSIENT_FAILURES as exc:
                if last or not (isinstance(exc, _NEVER_SENT) or may_resend(request)):
                    raise
                wait = self.policy.backoff(sent)
                logger.info("%s %s failed (%s); resending in %.2fs", request.method, _where(request), _name(exc), wait)
            else:
                wait_or_none = None
                if not last and response.status_code in self.policy.statuses and may_resend(request):
                    wait_or_none = self.policy.wait_for(response.headers.get("Retry-After"), sent)
                if wait_or_none is None:
                    response.extensions[ATTEMPTS] = sent
                    return response
                wait = wait_or_none
                await response.aclose()
                logger.info(
                    "%s %s answered HTTP %d; resending in %.2fs",
                    request.method,
                    _where(request),
                    response.status_code,
                    wait,
                )
            await self._sleep(wait)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _where(request: httpx.Request) -> str:
    return f"{request.url.host}{request.url.path}"  # never the query: it may carry a key


def _name(exc: Exception) -> str:
    return type(exc).__name__


def retrying_client(
    transport: httpx.AsyncBaseTransport | None,
    policy: RetryPolicy,
    *,
    sleep: Sleep | None = None,
    timeout: float | httpx.Timeout,
    **kwargs: Any,
) -> httpx.AsyncClient:
    """An AsyncClient whose requests go through `RetryTransport(transport or the real network, policy)`."""
    inner = transport if transport is not None else httpx.AsyncHTTPTransport()
    return httpx.AsyncClient(transport=RetryTransport(inner, policy, sleep=sleep), timeout=timeout, **kwargs)
