"""`GET /metrics`: the deployment's metrics in Prometheus' text format (docs/metrics.md), and who may read them.

- With tokens (a JWT secret or an OAuth issuer), `/metrics` is guarded as part of the main resource: no token or a
  refused one gets the bearer middleware's 401, as on `/mcp`. A verified token whose role is not `operator` (a
  member's, a guest's) gets 403 here.
- Without tokens the server binds loopback only and every caller is `--user`: `/metrics` is served to them.

At each scrape the store and Redis are pinged concurrently, each given `PROBE_SECONDS`: a slow or unreachable one
reads 0 and the scrape still answers.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server.identity import is_operator
from server.resource_metadata import METRICS_PATH
from server.sdk_compat import open_sessions, open_sse_sessions

if TYPE_CHECKING:
    from mcp.server.sse import SseServerTransport

    from server.composition import Deployment
    from server.mcp_server import TruloopMCP
    from server.metrics import ServerMetrics

PROBE_SECONDS = 1.0
FORBIDDEN = {"error": "forbidden", "error_description": "reading /metrics needs a token with the operator role"}


def metrics_route(
    deployment: Deployment, endpoints: Mapping[str, TruloopMCP], sse: tuple[str, SseServerTransport]
) -> Route:
    """The route, with the sessions of each streamable-HTTP endpoint in `endpoints` (path -> its server) and of the
    legacy SSE transport (`sse`: its path and transport) counted at each scrape."""
    metrics = deployment.metrics
    assert metrics is not None, "the HTTP app's deployment is metered"
    for path, server in endpoints.items():
        metrics.count_sessions(path, functools.partial(open_sessions, server.session_manager))
    sse_path, transport = sse
    metrics.count_sessions(sse_path, functools.partial(open_sse_sessions, transport))
    tokens = deployment.settings.auth_enabled

    async def scrape(request: Request) -> Response:
        if tokens and not is_operator(claims_of(request)):
            return JSONResponse(FORBIDDEN, status_code=403, headers={"Cache-Control": "no-store"})
        await probe(deployment, metrics)
        from server.metrics import CONTENT_TYPE

        return Response(metrics.exposition(), headers={"Content-Type": CONTENT_TYPE, "Cache-Control": "no-store"})

    return Route(METRICS_PATH, scrape, methods=["GET"])


def claims_of(request: Request) -> Mapping[str, Any] | None:
    """The claims of the request's verified token (None without one)."""
    token = getattr(request.scope.get("user"), "access_token", None)
    return getattr(token, "claims", None)


async def probe(deployment: Deployment, metrics: ServerMetrics) -> None:
    """`truloop_store_up` and `truloop_redis_up` as the store and Redis answer now."""

    async def store() -> None:
        metrics.store_up.set(await answers(deployment.services.ping_store))

    async def redis() -> None:
        if metrics.redis_up is not None:
            metrics.redis_up.set(await answers(deployment.bridge.backend.ping))

    async with anyio.create_task_group() as tg:
        tg.start_soon(store)
        tg.start_soon(redis)


async def answers(ping: Callable[[], Awaitable[None]]) -> bool:
    """Whether `ping` returned within `PROBE_SECONDS`."""
    with anyio.move_on_after(PROBE_SECONDS):
        try:
            await ping()
        except Exception:
            return False
        return True
    return False
