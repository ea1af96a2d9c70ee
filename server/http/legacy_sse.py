"""The legacy SSE surface (`GET /sse` and `POST /messages/`), built on the SDK's `SseServerTransport` here rather
than by `MCPServer.sse_app`, so the app holds the transport (`server.http.unread_backlog` reaches a session's read
stream through it). What the routes do is the SDK's: one session per stream, served by the server's loop; the
answers queued for the stream are counted (`server.http.unread_bytes.MeteredWrite`) when the backlog middleware asks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.routing import BaseRoute, Mount, Route
from starlette.types import Receive, Scope, Send

from server.http.unread_bytes import SCOPE_KEY, MeteredWrite
from server.sdk_compat import lowlevel_of

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.sse import SseServerTransport
    from mcp.server.transport_security import TransportSecuritySettings


class SseStream:
    """`GET /sse`: a session for as long as the stream is open."""

    def __init__(self, server: MCPServer, transport: SseServerTransport) -> None:
        self.server = server
        self.transport = transport

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        lowlevel = lowlevel_of(self.server)
        metered = scope.get(SCOPE_KEY)
        async with self.transport.connect_sse(scope, receive, send) as (read, write):
            out = write if metered is None else MeteredWrite(write, *metered)
            await lowlevel.run(read, out, lowlevel.create_initialization_options())


def legacy_sse(
    server: MCPServer, sse_path: str, message_path: str, security: TransportSecuritySettings
) -> tuple[list[BaseRoute], SseServerTransport]:
    """The two routes, and the transport behind them."""
    from mcp.server.sse import SseServerTransport

    transport = SseServerTransport(message_path, security_settings=security)
    routes: list[BaseRoute] = [
        Route(sse_path, endpoint=SseStream(server, transport), methods=["GET"]),
        Mount(message_path, app=transport.handle_post_message),
    ]
    return routes, transport
