"""`GET /metrics`: the deployment's metrics in Prometheus' text format (docs/metrics.md), and who may read them.

- With tokens (a JWT secret or an OAuth issuer), `/metrics` is guarded as part of the main resource: no token or a
  refused one gets the bearer middleware's 401, as on `/mcp`. A token issued for another surface (its `aud` is the
  `/sse` or notification-safe resource) gets the same 401 here: `/metrics` takes the main resource's tokens (and
  `--jwt-audience`'s). A verified token whose role is not `operator` (a member's, a guest's) gets 403 here.
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

from server.auth.bearer import www_authenticate
from server.auth.identity import is_operator
from server.auth.protected_resource import METRICS_PATH, Resources
from server.sdk_compat import open_sessions, open_sse_sessions

if TYPE_CHECKING:
    from mcp.server.sse import SseServerTransport

    from server.mcp.mcp_server import TruloopMCP
    from server.runtime.composition import Deployment
    from server.runtime.metrics import ServerMetrics

PROBE_SECONDS = 1.0
FORBIDDEN = {"error": "forbidden", "error_description": "reading /metrics needs a token with the operator role"}


def metrics_route(
    deployment: Deployment,
    endpoints: Mapping[str, TruloopMCP],
    sse: tuple[str, SseServerTransport],
    resources: Resources,
) -> Route:
    """The route, with the sessions of each streamable-HTTP endpoint in `endpoints` (path -> its server) and of the
    legacy SSE transport (`sse`: its path and transport) counted at each scrape; `resources` are the server's, whose
    main one `/metrics` belongs to."""
    metrics = deployment.metrics
    assert metrics is not None, "the HTTP app's deployment is metered"
    for path, server in endpoints.items():
        metrics.count_sessions(path, functools.partial(open_sessions, server.session_manager))
    sse_path, transport = sse
    metrics.count_sessions(sse_path, functools.partial(open_sse_sessions, transport))
    tokens = deployment.settings.auth_enabled
    others = {resource.url for resource in resources.all if resource is not resources.main}

    async def scrape(request: Request) -> Response:
        issued_for = getattr(getattr(request.scope.get("user"), "access_token", None), "resource", None)
        if tokens and issued_for in others:
            return wrong_surface(resources, issued_for)
        if tokens and not is_operator(claims_of(request)):
            return JSONResponse(FORBIDDEN, status_code=403, headers={"Cache-Control": "no-store"})
        await probe(deployment, metrics)
        from server.runtime.metrics import CONTENT_TYPE

        return Response(metrics.exposition(), headers={"Content-Type": CONTENT_TYPE, "Cache-Control": "no-store"})

    return Route(METRICS_PATH, scrape, methods=["GET"])


def wrong_surface(resources: Resources, issued_for: str) -> Response:
    """The 401 of a token issued for another surface than the main one."""
    refusal = f"this token is for {issued_for}; /metrics takes tokens for {resources.main.url}"
    body = {"error": "invalid_token", "error_description": refusal}
    headers = {"WWW-Authenticate": www_authenticate(resources.main, refusal), "Cache-Control": "no-store"}
    return JSONResponse(body, status_code=401, headers=headers)


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
