"""Where this server is reachable, and what it tells an MCP host about signing in: one OAuth 2.0 protected
resource (RFC 9728) per MCP surface.

A surface's resource URL is the public base (`--public-url`, else the address the socket is bound to, so the
real port after `--port 0`) plus its path: `<base>/mcp`, `<base>/notification-safe/mcp`, `<base>/sse`. It is
what a host's 401 names (`resource_metadata=`), what the metadata says (`resource`), what a host asks its
authorization server for (RFC 8707 `resource`) and so the `aud` a token must carry.

The metadata names `--oauth-issuer` in `authorization_servers`. With only a static secret there is no
authorization server, so the field is left out (it is optional in RFC 9728): naming one that does not exist
sends a host to 404s; a host then needs the token in its configuration (`truloop-mcp token`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from starlette.routing import Route

    from server.settings import Settings

WELL_KNOWN = "/.well-known/oauth-protected-resource"
MAIN_PATH = "/mcp"
SAFE_PREFIX = "/notification-safe"
SSE_PATH = "/sse"
MESSAGES_PREFIX = "/messages/"
METRICS_PATH = "/metrics"  # guarded with the main resource: its tokens, with the operator role, read it
RESOURCE_NAME = "truloop-mcp"


def origin(host: str, port: int) -> str:
    """`http://host:port`, an IPv6 address in brackets."""
    host = host.strip("[]")
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


def public_base(settings: Settings, address: tuple[str, int] | None = None) -> str:
    """The URL hosts reach this server at, without a trailing slash: `--public-url`, else `address` (the bound
    socket's) or the configured host and port."""
    if settings.public_url:
        return settings.public_url
    host, port = address or (settings.host, settings.port)
    return origin(host, port)


@dataclass(frozen=True, slots=True)
class ProtectedResource:
    """One MCP surface as an OAuth protected resource."""

    url: str  # the resource identifier: base + path
    metadata_url: str  # RFC 9728 section 3.1: the well-known prefix between the origin and the resource's path
    metadata_paths: tuple[str, ...]  # where this server answers it (also behind a proxy's path prefix)
    guards: tuple[str, ...]  # request paths it covers: exact, or a prefix when ending in "/"
    confined_to: str | None  # a token issued for this resource reaches only paths under this prefix

    def covers(self, path: str) -> bool:
        return any(path == guard or (guard.endswith("/") and path.startswith(guard)) for guard in self.guards)


def protected_resource(base: str, path: str, guards: Sequence[str], confined_to: str | None) -> ProtectedResource:
    parts = urlsplit(base)
    prefix = parts.path.rstrip("/")
    metadata_url = f"{parts.scheme}://{parts.netloc}{WELL_KNOWN}{prefix}{path}"
    paths = tuple(dict.fromkeys((f"{WELL_KNOWN}{path}", f"{WELL_KNOWN}{prefix}{path}")))
    return ProtectedResource(f"{base}{path}", metadata_url, paths, tuple(guards), confined_to)


@dataclass(frozen=True, slots=True)
class Resources:
    """The server's protected resources: streamable HTTP at /mcp (members' tools), the notification-safe
    surface (its tokens reach nothing else), and legacy SSE (/sse and its /messages/)."""

    base: str
    main: ProtectedResource
    safe: ProtectedResource
    sse: ProtectedResource

    @classmethod
    def at(cls, base: str) -> Resources:
        base = base.rstrip("/")
        safe_path = f"{SAFE_PREFIX}{MAIN_PATH}"
        return cls(
            base,
            main=protected_resource(base, MAIN_PATH, (MAIN_PATH, METRICS_PATH), None),
            safe=protected_resource(base, safe_path, (safe_path,), f"{SAFE_PREFIX}/"),
            sse=protected_resource(base, SSE_PATH, (SSE_PATH, MESSAGES_PREFIX), None),
        )

    @property
    def all(self) -> tuple[ProtectedResource, ...]:
        return (self.main, self.safe, self.sse)

    @property
    def urls(self) -> tuple[str, ...]:
        return tuple(resource.url for resource in self.all)

    def guarding(self, path: str) -> ProtectedResource | None:
        """The resource whose tokens `path` needs, or None for a path that is neither an MCP endpoint nor /metrics."""
        for resource in self.all:
            if resource.covers(path):
                return resource
        return None

    def confinement(self, resource_url: str | None) -> str | None:
        """The path prefix a token issued for `resource_url` is confined to, if any."""
        for resource in self.all:
            if resource.url == resource_url:
                return resource.confined_to
        return None


def metadata_document(resource: ProtectedResource, issuer: str | None) -> dict[str, Any]:
    document: dict[str, Any] = {"resource": resource.url}
    if issuer is not None:
        document["authorization_servers"] = [issuer]
    document["bearer_methods_supported"] = ["header"]
    document["resource_name"] = RESOURCE_NAME
    return document


def metadata_routes(resources: Resources, issuer: str | None) -> list[Route]:
    """GET (and a CORS preflight) on each surface's well-known metadata path; no token needed."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    cors = {
        "Access-Control-Allow-Origin": "*",
        "Access-Control-Allow-Methods": "GET, OPTIONS",
        "Access-Control-Allow-Headers": "mcp-protocol-version",
    }

    def endpoint(document: dict[str, Any]) -> Any:
        async def answer(request: Request) -> Response:
            if request.method == "OPTIONS":
                return Response(status_code=204, headers=cors)
            return JSONResponse(document, headers={**cors, "Cache-Control": "public, max-age=3600"})

        return answer

    routes = []
    for resource in resources.all:
        answer = endpoint(metadata_document(resource, issuer))
        routes += [Route(path, answer, methods=["GET", "OPTIONS"]) for path in resource.metadata_paths]
    return routes
