"""The speed paths: where the server answers faster than the SDK's own paths would, with the same bytes.

Each is its own module, and all of them are switched by one setting, `Settings.fast_paths` (on by default;
`TRULOOP_FAST_PATHS=0` serves the plain SDK paths):

- `lean_path`: handshake-era `tools/call` and every `tools/list` answered by a server middleware, with the
  SDK's answers (`list_cache` is the one `tools/list` cache of every path);
- the stdio lean front (`server.stdio.lean_front`, on `server.stdio.pipes`): stdin and stdout as asyncio
  transports instead of the SDK's `stdio_server` (worker threads, memory streams);
- `sse_sender`: the SSE headers and keep-alive comment `lean_http` answers with, as sse-starlette sends them;
- `lean_http`: a plain handshake-era `tools/call` POST answered on its own task, without the SDK transport's
  streams and tasks, for a tool that needs nothing from the client while it runs (`Tool.reaches_client`);
- `write_combining`: uvicorn's httptools protocol writing a response in one system call;
- `frozen_start`: what was loaded frozen out of the collector's way, uvloop for HTTP.

`TruloopMCP` puts the lean path in its middleware when built with `fast_paths` (and `untraced` drops the SDK's span
per message); the transport
pieces are picked where the transports are made (`server.stdio.sdk_transport`, `server.http.asgi_app`,
`server.runtime.serving`), through the functions below. Nothing here touches a third-party object's private surface
itself: that is `server.sdk_compat`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from server.sdk_compat import drop_sdk_tracing

if TYPE_CHECKING:
    import asyncio

    from starlette.middleware import Middleware

    from server.http.connection_guard import ConnectionLimits
    from server.mcp.mcp_server import TruloopMCP
    from server.speed.lean_http import Sessions


def untraced(server: TruloopMCP) -> None:
    """No OpenTelemetry span per message when no tracer provider is installed (the SDK's middleware costs every call
    even with no exporter): the SDK's own way to opt out, dropping it from the middleware list."""
    from toolsets.pipeline.tracer_provider import provider_installed

    if not provider_installed():
        drop_sdk_tracing(server)


def lean_sessions() -> Sessions:
    """The sessions of one HTTP endpoint that `lean_http` may serve: given to its server (`TruloopMCP(lean_sessions=)`,
    whose lean path tells it of each `initialize`) and to `lean_http_middleware`."""
    from server.speed.lean_http import Sessions

    return Sessions()


def lean_http_middleware(endpoints: Mapping[str, TruloopMCP], sessions: Mapping[str, Sessions]) -> Middleware:
    """The HTTP app's innermost middleware: plain `tools/call` POSTs to `endpoints` (path -> server) answered without
    the SDK transport's streams and tasks (server/speed/lean_http.py), on the `sessions` (path -> `lean_sessions()`)
    each server was built with."""
    from starlette.middleware import Middleware

    from server.speed.lean_http import LeanHttpCalls

    return Middleware(LeanHttpCalls, endpoints=endpoints, sessions=sessions)


def http_protocol(limits: ConnectionLimits | None = None) -> type[asyncio.Protocol]:
    """uvicorn's `http=`: httptools writing each event-loop turn's output at once (h11 without httptools), held to
    `limits` (server/http/connection_guard.py)."""
    from server.speed.write_combining import http_protocol as combining

    return combining(limits)


def event_loop_options() -> dict[str, Any]:
    """`anyio.run` options for HTTP: uvloop when installed."""
    from server.speed.frozen_start import event_loop_options as options

    return options()


def freeze_loaded() -> None:
    """The server is built: keep what was loaded out of the collector's way."""
    from server.speed.frozen_start import freeze_loaded as freeze

    freeze()
