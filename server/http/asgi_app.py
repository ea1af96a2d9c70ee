"""The HTTP application: streamable HTTP at /mcp, legacy SSE at /sse + /messages/,
the notification-safe profile at /notification-safe/mcp, /healthz, /metrics, and with tokens each surface's
sign-in metadata (RFC 9728, `/.well-known/oauth-protected-resource/...`).

The SDK's apps, mounted side by side; with `fast_paths` a plain `tools/call` POST is answered before it reaches
the SDK's transport (`speed.lean_http_middleware`)."""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Mount, Route

from bridge.routes import DeviceCaller, shim_routes
from server.auth.protected_resource import Resources, metadata_routes, public_base
from server.http.host_guard import HostOriginGuard
from server.http.legacy_sse import legacy_sse
from server.http.metrics_route import metrics_route
from server.http.rpc_peek import RpcPeek
from server.http.session_caps import SessionCaps
from server.http.unread_backlog import UnreadBacklog
from server.runtime.audit_log import audit_health
from server.runtime.composition import Deployment
from server.sdk_compat import (
    end_session,
    has_live_session,
    release_last_message,
    session_reader_of,
    sse_reader_of,
)
from server.settings import Settings, is_loopback
from toolsets.core.roles import tool_role

if TYPE_CHECKING:
    from server.mcp.mcp_server import TruloopMCP

logger = logging.getLogger("truloop.http")


SSE_PATH, MESSAGE_PATH = "/sse", "/messages/"
MAX_BODY = DEFAULT_MAX_REQUEST_BODY_SIZE  # the SDK transports' own limit on a POST's body

LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
LOOPBACK_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")


def host_guard(settings: Settings) -> list[Middleware]:
    """The one DNS-rebinding check, for every route (the SDK's per-transport copy is switched off)."""
    # Loopback Host names stay allowed next to a real hostname: a rebound page arrives with its own
    # name in Host, never 127.0.0.1, and local probes (/healthz) keep working.
    if settings.allowed_hosts or settings.allowed_origins:
        hosts, origins = (*settings.allowed_hosts, *LOOPBACK_HOSTS), settings.allowed_origins
    elif is_loopback(settings.host):
        hosts, origins = LOOPBACK_HOSTS, LOOPBACK_ORIGINS
    else:
        logger.warning(
            "DNS-rebinding protection is off for %s: pass --allowed-host (and --allowed-origin) with the public "
            "hostname to turn it on",
            settings.host,
        )
        return []
    return [Middleware(HostOriginGuard, allowed_hosts=hosts, allowed_origins=origins)]


def ender(server: TruloopMCP) -> Callable[[str], Awaitable[bool]]:
    """How a streamable-HTTP session of `server` is ended from outside (as by DELETE)."""
    return functools.partial(end_session, server.session_manager)


def reader(server: TruloopMCP) -> Callable[[str], Any]:
    """A streamable-HTTP session's read-stream writer, by id."""
    return functools.partial(session_reader_of, server.session_manager)


def shared_store(settings: Settings) -> bool:
    """Whether this server shares its store with others (PostgreSQL or Redis): a replica, most likely."""
    return settings.database_url is not None or settings.redis_url is not None


def http_deployment(settings: Settings) -> Deployment:
    """The deployment an HTTP app serves: both its surfaces share it, and /metrics reads its registry."""
    return Deployment(settings, metered=True)


def build_http_app(
    settings: Settings, *, address: tuple[str, int] | None = None, deployment: Deployment | None = None
) -> Starlette:
    """The app over `deployment` (`http_deployment(settings)`, made here when not given; a caller that needs its
    services or bridge makes it and passes it in); `address` is where its socket is bound (the real port after
    `--port 0`), which names the resources in the sign-in metadata unless `--public-url` does. The app runs the
    deployment's lifecycle in its lifespan."""
    resources = Resources.at(public_base(settings, address))
    middleware: list[Middleware] = []
    sign_in: list[BaseRoute] = []
    if settings.auth_enabled:
        from server.auth.bearer import BearerAuthentication
        from server.auth.identity import verifier_for

        verifier = verifier_for(settings, resources.urls)
        middleware = [Middleware(BearerAuthentication, verifier=verifier, resources=resources)]
        sign_in = list(metadata_routes(resources, settings.oauth_issuer))
        if settings.public_url is None and not is_loopback(settings.host):
            logger.warning(
                "hosts are told to sign in for %s: pass --public-url with the URL they reach this server at%s",
                resources.main.url,
                " (the same on every replica, or they refuse each other's tokens)" if shared_store(settings) else "",
            )
        elif settings.public_url is None and not settings.jwt_audience and shared_store(settings):
            # a replica's default audience is its own address, so replicas would refuse each other's tokens
            logger.warning(
                "this server accepts only tokens for %s: behind a load balancer, give every replica the same "
                "--public-url (the URL clients reach them at)",
                resources.main.url,
            )
    else:
        logger.warning(
            "TRULOOP_JWT_SECRET is not set: every HTTP caller on %s is served as user %r with no authentication. "
            "Set TRULOOP_JWT_SECRET before exposing this server to anyone else.",
            settings.host,
            settings.user,
        )

    from mcp.server.transport_security import TransportSecuritySettings

    guarded_by_the_app = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    from server import speed

    if deployment is None:
        deployment = http_deployment(settings)
    bridge, services = deployment.bridge, deployment.services
    # the sessions of each endpoint the lean HTTP path serves, told of each `initialize` by the endpoint's server
    lean = {path: speed.lean_sessions() for path in ("/mcp", "/notification-safe/mcp")} if settings.fast_paths else {}
    # the bearer middleware guards the MCP endpoints (its 401 names each surface's metadata), not the SDK's
    main = deployment.mcp_server("member" if settings.auth_enabled else None, lean_sessions=lean.get("/mcp"))
    safe = deployment.mcp_server("notification-safe", lean_sessions=lean.get("/notification-safe/mcp"))
    from server.http.sse_replay import RETRY_MS, SessionEvents
    from server.sdk_compat import own_event_stores

    main_http = main.streamable_http_app(
        streamable_http_path="/mcp", transport_security=guarded_by_the_app, retry_interval=RETRY_MS
    )
    sse_routes, sse_transport = legacy_sse(main, SSE_PATH, MESSAGE_PATH, guarded_by_the_app)
    safe_http = safe.streamable_http_app(
        streamable_http_path="/mcp", transport_security=guarded_by_the_app, retry_interval=RETRY_MS
    )
    for surface in (main, safe):  # each session's SSE events kept for a client that reconnects (sse_replay.py)
        own_event_stores(surface.session_manager, SessionEvents)

    async def healthz(request: Request) -> JSONResponse:
        report: dict[str, object] = {"status": "ok", "store": "ok", "redis": "not configured"}
        try:
            await services.ping_store()
        except Exception:
            report.update(status="degraded", store="unavailable")
        if settings.redis_url is not None:
            try:
                with anyio.fail_after(2):
                    await bridge.backend.ping()
                report["redis"] = "ok"
            except Exception:
                report.update(status="degraded", redis="unreachable")
        report.update(audit_health(services.audit))
        return JSONResponse(report, status_code=200 if report["status"] == "ok" else 503)

    async def identify(request: Request) -> DeviceCaller | None:
        if not settings.auth_enabled:
            return DeviceCaller(settings.user, "member", None)
        user = request.scope.get("user")
        token = getattr(user, "access_token", None)
        if token is None or not token.subject:
            return None
        role = tool_role((token.claims or {}).get("role", "guest"))
        return DeviceCaller(token.subject, role, token.expires_at)

    # /mcp first: every route has its own path, so the order only decides how soon the busiest one is found
    routes: list[BaseRoute] = [*main_http.routes]
    routes.append(Route("/healthz", healthz, methods=["GET"]))
    surfaces = {"/mcp": main, "/notification-safe/mcp": safe}
    routes.append(metrics_route(deployment, surfaces, (SSE_PATH, sse_transport), resources))
    routes += sign_in
    routes += shim_routes(bridge, identify, deployment.profiles.device_tools, task_answers=deployment.tasks)
    routes += sse_routes
    routes.append(Mount("/notification-safe", routes=list(safe_http.routes)))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with (
            deployment,  # its one lifecycle (composition.py): the bridge, tasks, schedules, plugins, audit, store
            main.session_manager.run(),
            safe.session_manager.run(),
        ):
            await deployment.ready()  # before uvicorn listens: the first call costs what any other does
            yield

    def is_live(session_id: str) -> bool:
        return any(has_live_session(m.session_manager, session_id) for m in (main, safe))

    caps = Middleware(
        SessionCaps,
        max_sessions=settings.max_sessions_per_user,
        max_device_streams=settings.max_device_streams_per_user,
        session_paths=("/mcp", "/notification-safe/mcp"),
        sse_paths=(SSE_PATH,),
        device_stream_paths=("/api/v1/agent/rpc-stream", "/assistant/api/v1/agent/rpc-stream"),
        is_live=is_live,
        default_user=None if settings.auth_enabled else settings.user,
    )
    backlog = Middleware(
        UnreadBacklog,
        max_requests=settings.max_unanswered_requests,
        max_bytes=settings.max_unanswered_bytes,
        max_unread=settings.max_unread_answer_bytes,
        max_unread_per_user=settings.max_unread_answer_bytes_per_user,
        endpoints={"/mcp": ender(main), "/notification-safe/mcp": ender(safe)},
        sse_path=SSE_PATH,
        message_path=MESSAGE_PATH,
        releases={
            "/mcp": reader(main),
            "/notification-safe/mcp": reader(safe),
            MESSAGE_PATH: functools.partial(sse_reader_of, sse_transport),
        },
        release=release_last_message,
        default_user=None if settings.auth_enabled else settings.user,
    )
    peek = Middleware(RpcPeek, paths=("/mcp", "/notification-safe/mcp", MESSAGE_PATH), max_body=MAX_BODY)
    # outermost first: a rebound page is refused before its token or body is looked at
    stack = [*host_guard(settings), *middleware, caps, peek, backlog]
    if settings.fast_paths:  # innermost: only a request every check above let through
        stack.append(speed.lean_http_middleware({"/mcp": main, "/notification-safe/mcp": safe}, lean))
    return Starlette(routes=routes, middleware=stack, lifespan=lifespan)
