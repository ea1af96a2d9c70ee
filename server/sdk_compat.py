"""Every place the server reaches past the public surface of the MCP SDK or uvicorn.

Each touch is one small function named for what it does; nothing else in the product names a private
attribute of a third-party object or rebinds one of their names. `tests/server/test_sdk_compat.py` pins the
versions these touches were checked against (`CHECKED_AGAINST`) and checks that each private name is still
there with the shape used here: on an upgrade of any of them, that test says which touch to re-check.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import anyio
    from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
    from mcp.server.lowlevel.server import Server
    from mcp.server.mcpserver import MCPServer
    from mcp.server.sse import SseServerTransport
    from mcp.server.streamable_http import StreamableHTTPServerTransport
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.subscriptions import SubscriptionBus
    from mcp.shared.dispatcher import DispatchContext

    from server.http.connection_guard import ConnectionLimits

# distribution -> the version every touch below was read against
CHECKED_AGAINST = {"mcp": "2.3.0", "uvicorn": "0.54.0"}


# -- the MCP SDK ---------------------------------------------------------------------------------------------


def lowlevel_of(server: MCPServer) -> Server[Any]:
    """The low-level `Server` behind an `MCPServer` (`_lowlevel_server`): its `run`, its request handlers and its
    initialization options have no public handle on `MCPServer`."""
    return server._lowlevel_server


def subscriptions_of(server: MCPServer) -> SubscriptionBus:
    """The `MCPServer`'s subscription bus (`_subscriptions`): what a `Context` built outside the SDK's handlers
    needs, and where 2026-07-28 `subscriptions/listen` streams hear `ToolsListChanged`."""
    return server._subscriptions


def connection_of(session: Any) -> Any:
    """The client connection behind a request's session (`ServerSession._connection`): the identity of a
    handshake-era session (one per stdio process, one per HTTP session id), and whether the SDK let it past its
    handshake gate. None when the session has none."""
    return getattr(session, "_connection", None)


class CallerToolSchemas:
    """Mixin for an `MCPServer` subclass: the input schema the low-level server checks 2026-07-28 `Mcp-Param-*`
    headers against is the one `tool_input_schema(name)` gives (the caller's tool), not one from the SDK's tool
    manager. `MCPServer.__init__` hands the low-level `Server` its own `_tool_input_schema` as
    `get_tool_input_schema`, and offers no parameter for another: overriding that method is the one hook
    (docs/upstream-sdk-tiers.md)."""

    def tool_input_schema(self, name: str) -> dict[str, Any] | None:
        raise NotImplementedError

    def _tool_input_schema(self, name: str) -> dict[str, Any] | None:
        return self.tool_input_schema(name)


def drop_sdk_tracing(server: MCPServer) -> None:
    """Take the SDK's OpenTelemetry middleware (known by its class name) out of the server's middleware list."""
    server.middleware[:] = [m for m in server.middleware if type(m).__name__ != "OpenTelemetryMiddleware"]


def has_live_session(manager: StreamableHTTPSessionManager, session_id: str) -> bool:
    """Whether the streamable-HTTP session manager still serves `session_id` (`_server_instances`: the SDK keeps
    no public registry of open sessions)."""
    return session_id in manager._server_instances


def open_sessions(manager: StreamableHTTPSessionManager) -> int:
    """How many stateful sessions the streamable-HTTP session manager serves now (`_server_instances`, as
    `has_live_session` reads it)."""
    return len(manager._server_instances)


def live_session(
    manager: StreamableHTTPSessionManager, session_id: str
) -> tuple[StreamableHTTPServerTransport, AuthorizationContext | None] | None:
    """The transport serving stateful session `session_id` and the credential that opened it (None: opened without
    one), or None when the manager serves no such session: what its `_handle_stateful_request` reads from
    `_server_instances` and `_session_owners` before it lets a request reach the session."""
    transport = manager._server_instances.get(session_id)
    if transport is None:
        return None
    return transport, manager._session_owners.get(session_id)


def hold_session(transport: StreamableHTTPServerTransport) -> bool:
    """A request on the session starts being served outside `StreamableHTTPServerTransport.handle_request`: do what
    that method does first, so the session cannot idle out under it (`_requests_in_flight`, `_idle_timeout`, the
    public `idle_scope`). False when the session's idle period already ran out (the SDK answers it as ended).
    Every True is followed by one `release_session`."""
    idle = transport.idle_scope
    if idle is None or transport._idle_timeout is None:
        return True
    if idle.cancel_called:
        return False
    transport._requests_in_flight += 1
    if idle.deadline != math.inf:  # (re-setting it reschedules the scope's timer for nothing)
        idle.deadline = math.inf
    return True


def release_session(transport: StreamableHTTPServerTransport) -> None:
    """The request `hold_session` counted is done: the idle countdown restarts once none is left (what the end of
    `StreamableHTTPServerTransport.handle_request` does)."""
    idle, timeout = transport.idle_scope, transport._idle_timeout
    if idle is None or timeout is None:
        return
    transport._requests_in_flight -= 1
    if not transport._requests_in_flight:  # the loop's clock: what `anyio.current_time()` reads, for less
        idle.deadline = asyncio.get_running_loop().time() + timeout


async def end_session(manager: StreamableHTTPSessionManager, session_id: str) -> bool:
    """End stateful session `session_id` as a client's DELETE does (`StreamableHTTPServerTransport.terminate`: its
    streams closed, its requests unanswered, the id refused from then on). False when no such session is live."""
    transport = manager._server_instances.get(session_id)
    if transport is None or transport.is_terminated:
        return False
    await transport.terminate()
    return True


# What a session's loop is handed so that it lets go of the message before (see `release_last_message`): a
# notification no handler serves, which the SDK's runner drops with a debug line.
_RELEASE_METHOD = "notifications/truloop/release"


async def release_last_message(writer: Any, deadline: float = 1.0) -> None:
    """The SDK's message loop (`JSONRPCDispatcher.run`) keeps the last message it received, with its HTTP request
    and body, until the next one arrives: an idle session pins a 4 MiB request for as long as it lives. Hand the
    loop an empty notification through `writer` (the session's read-stream writer) so it lets go of it; at most
    `deadline` seconds, nothing if the session has ended."""
    import anyio
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCNotification

    with anyio.move_on_after(deadline), contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        await writer.send(SessionMessage(JSONRPCNotification(jsonrpc="2.0", method=_RELEASE_METHOD)))


def session_reader_of(manager: StreamableHTTPSessionManager, session_id: str) -> Any:
    """The writer of stateful session `session_id`'s read stream (what its POSTs are handed to), or None."""
    transport = manager._server_instances.get(session_id)
    return None if transport is None else transport._read_stream_writer


def sse_reader_of(transport: SseServerTransport, session_id: str) -> Any:
    """The writer of legacy SSE session `session_id`'s read stream (`session_id` as the client sends it), or None."""
    from uuid import UUID

    try:
        return transport._read_stream_writers.get(UUID(hex=session_id))
    except ValueError:
        return None


def open_sse_sessions(transport: SseServerTransport) -> int:
    """How many legacy SSE sessions the transport serves now (`_read_stream_writers`, as `sse_reader_of` reads it)."""
    return len(transport._read_stream_writers)


def loop_dispatcher(connection: Any) -> Any:
    """The `JSONRPCDispatcher` serving a handshake-era connection's message loop (the `outbound` that
    `serve_loop` builds the connection with), or None when it is served another way."""
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

    outbound = getattr(connection, "outbound", None)
    return outbound if isinstance(outbound, JSONRPCDispatcher) else None


def track_in_flight(dispatcher: Any, request_id: Any, scope: anyio.CancelScope, dctx: DispatchContext[Any]) -> Any:
    """Enter a request served beside `dispatcher`'s loop in its table of requests in flight (`_in_flight`, keyed by
    `coerce_request_id`, entries `_InFlight(scope, dctx)`), as `JSONRPCDispatcher._dispatch_request` enters its
    own: the client's `notifications/cancelled` for it then sets `dctx.cancel_requested` and cancels `scope`, the
    SDK's own way. Returns what `untrack_in_flight` takes."""
    coerce, in_flight = _in_flight_names()
    key, entry = coerce(request_id), in_flight(scope=scope, dctx=dctx)
    dispatcher._in_flight[key] = entry
    return key, entry


def untrack_in_flight(dispatcher: Any, tracked: Any) -> None:
    """Take a request `track_in_flight` entered out of the table again, unless a later request with the same id
    replaced it (the dispatcher's own identity guard)."""
    key, entry = tracked
    if dispatcher._in_flight.get(key) is entry:
        del dispatcher._in_flight[key]


@functools.cache
def _in_flight_names() -> tuple[Callable[[Any], Any], Any]:
    """`coerce_request_id` and `_InFlight`, imported on first use (a stdio server may never load them); the SDK's
    own function and class, the same on every call."""
    from mcp.shared.dispatcher import coerce_request_id
    from mcp.shared.jsonrpc_dispatcher import _InFlight

    return coerce_request_id, _InFlight


# -- uvicorn -------------------------------------------------------------------------------------------------


def httptools_protocol_on(
    wrap: Callable[[asyncio.Transport], asyncio.Transport] | None, limits: ConnectionLimits | None = None
) -> type[asyncio.Protocol] | None:
    """uvicorn's httptools HTTP protocol (`uvicorn.protocols.http.httptools_impl.HttpToolsProtocol`, a class for
    `uvicorn.Config(http=...)`) held to `limits` (server/http/connection_guard.py), writing through `wrap(transport)`
    when `wrap` is given; None when httptools is not installed.

    The touches: the protocol keeps the transport `connection_made` gives it and does all its I/O through that
    object; `connections` is the server's set of open connections; the httptools callbacks `on_message_begin`
    and `on_headers_complete` see each request's first byte and its complete head (`url`, `headers`, `parser`);
    an exception in a callback leaves `parser.feed_data` as `HttpParserCallbackError`, a `HttpParserError`, which
    `data_received` answers with 400 and a closed connection."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:
        return None
    from server.http.connection_guard import (
        BadRequestError,
        ConnectionLimits,
        HeaderTimer,
        check_request_head,
        logger,
        refuse_busy,
    )

    held = limits or ConnectionLimits()

    class GuardedHttpToolsProtocol(HttpToolsProtocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # uvicorn types the transport as a BaseTransport
            already_open = len(self.connections)
            super().connection_made(wrap(transport) if wrap is not None else transport)
            self.header_timer = HeaderTimer(held.header_timeout, transport.close)
            if already_open >= held.max_connections:
                refuse_busy(transport, already_open)
            else:
                self.header_timer.start()

        def connection_lost(self, exc: Exception | None) -> None:
            self.header_timer.stop()
            super().connection_lost(exc)

        def on_message_begin(self) -> None:
            self.header_timer.start()
            super().on_message_begin()

        def on_header(self, name: bytes, value: bytes) -> None:
            # RFC 9110 §5.5: a field's value excludes the whitespace around it; llhttp keeps what trails it
            super().on_header(name, value.strip(b" \t"))

        def on_headers_complete(self) -> None:
            self.header_timer.stop()
            try:
                check_request_head(self.url, self.parser.get_http_version(), self.headers)
            except BadRequestError as exc:
                logger.info("refused a request: %s", exc)
                raise  # out of feed_data as HttpParserCallbackError: uvicorn answers 400 and closes
            super().on_headers_complete()

    return GuardedHttpToolsProtocol


def h11_protocol_with(limits: ConnectionLimits | None = None) -> type[asyncio.Protocol]:
    """uvicorn's h11 HTTP protocol (`uvicorn.protocols.http.h11_impl.H11Protocol`) held to `limits`, with every
    received byte read by `RequestFraming` (server/http/request_framing.py) before h11 reads it.

    The touches: `connections` is the server's set of open connections; `conn` is the request's `h11.Connection`
    (its public `our_state` says whether a response may still start); `send_400_response` answers 400 and
    closes, as uvicorn does when h11 itself refuses; `transport` is the connection's transport."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    from server.http.connection_guard import (
        INVALID,
        BadRequestError,
        ConnectionLimits,
        HeaderTimer,
        logger,
        refuse_busy,
    )
    from server.http.request_framing import RequestFraming

    held = limits or ConnectionLimits()

    class GuardedH11Protocol(H11Protocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # uvicorn types the transport as a BaseTransport
            already_open = len(self.connections)
            super().connection_made(transport)
            self.header_timer = HeaderTimer(held.header_timeout, transport.close)
            self.framing = RequestFraming(self.header_timer.start, self.header_timer.stop)
            if already_open >= held.max_connections:
                refuse_busy(transport, already_open)
            else:
                self.header_timer.start()

        def connection_lost(self, exc: Exception | None) -> None:
            self.header_timer.stop()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            try:
                self.framing.feed(data)
            except BadRequestError as exc:
                logger.info("refused a request: %s", exc)
                self.header_timer.stop()
                if self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                    self.send_400_response(INVALID)
                else:  # a response is under way: no second one can start
                    self.transport.close()
                return
            super().data_received(data)

    return GuardedH11Protocol


def guarded_http_protocol(limits: ConnectionLimits) -> type[asyncio.Protocol]:
    """uvicorn's own choice of HTTP protocol (httptools when installed, else h11), held to `limits`."""
    return httptools_protocol_on(None, limits) or h11_protocol_with(limits)


def own_event_stores(manager: StreamableHTTPSessionManager, store: Callable[[], Any]) -> None:
    """Give each stateful session a resumability event store of its own (`store()`, server/http/sse_replay.py). The SDK
    passes one store to every session's transport, where request ids (its stream ids) repeat across sessions; the
    transports it makes in `_admit_session` get theirs here, on this manager instance only."""
    admit = manager._admit_session

    def admitted(requestor: Any) -> Any:
        transport = admit(requestor)
        if transport is not None:
            transport._event_store = store()
        return transport

    manager._admit_session = admitted  # type: ignore[method-assign]  # this manager's instance only


def event_store_of(transport: Any) -> Any:
    """The session's own event store (`own_event_stores`), or None."""
    return getattr(transport, "_event_store", None)
