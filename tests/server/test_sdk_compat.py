"""Every private touch of server/sdk_compat.py still finds what it was written against.

The first test pins the installed versions of the MCP SDK and uvicorn to the ones the touches were
checked against; the others check each private name and its shape, live where they can. A failure names the
touch to re-check; after re-checking it, update `CHECKED_AGAINST` in server/sdk_compat.py.
"""

from __future__ import annotations

import inspect
from importlib.metadata import version
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from server import sdk_compat
from server.sdk_compat import CHECKED_AGAINST


def recheck(touch: str, what: str) -> str:
    return f"re-check server/sdk_compat.py:{touch}: {what}"


@pytest.mark.parametrize("distribution", sorted(CHECKED_AGAINST))
def test_the_installed_versions_are_the_checked_ones(distribution: str) -> None:
    installed = version(distribution)
    assert installed == CHECKED_AGAINST[distribution], (
        f"{distribution} {installed} is installed, the private touches in server/sdk_compat.py were checked "
        f"against {CHECKED_AGAINST[distribution]}: re-check every touch of {distribution} there (this file's other "
        "tests say which still hold), then update CHECKED_AGAINST"
    )


def test_lowlevel_of_and_subscriptions_of() -> None:
    from mcp.server.lowlevel.server import Server

    server = MCPServer("compat")
    assert isinstance(sdk_compat.lowlevel_of(server), Server), recheck("lowlevel_of", "MCPServer._lowlevel_server")
    low = sdk_compat.lowlevel_of(server)
    for method in ("run", "add_request_handler", "create_initialization_options"):
        assert callable(getattr(low, method, None)), recheck("lowlevel_of", f"Server.{method}")
    bus = sdk_compat.subscriptions_of(server)
    assert callable(getattr(bus, "publish", None)), recheck("subscriptions_of", "MCPServer._subscriptions.publish")


@pytest.mark.anyio
async def test_connection_of_a_request_session() -> None:
    """Live: the connection behind a handshake-era request's session, accepted past the handshake gate, one per
    connection, able to send `tools/list_changed`."""
    seen: list[Any] = []

    async def capture(ctx: Any, call_next: Any) -> Any:
        if ctx.method == "tools/list":
            seen.append(sdk_compat.connection_of(ctx.session))
        return await call_next(ctx)

    server = MCPServer("compat", middleware=[capture])
    async with Client(server, mode="legacy") as client:
        await client.list_tools()
        await client.list_tools()
    touch = "connection_of"
    assert len(seen) == 2 and seen[0] is not None, recheck(touch, "ServerSession._connection")
    assert seen[0] is seen[1], recheck(touch, "one connection per client session")
    assert seen[0].initialize_accepted is True, recheck(touch, "Connection.initialize_accepted")
    assert callable(getattr(seen[0], "send_tool_list_changed", None)), recheck(
        touch, "Connection.send_tool_list_changed"
    )
    assert sdk_compat.connection_of(object()) is None


def test_caller_tool_schemas() -> None:
    """`MCPServer.__init__` hands the low-level server its own `_tool_input_schema`: a subclass's override is what the
    2026-07-28 `Mcp-Param-*` header check asks."""
    touch = "CallerToolSchemas"
    source = inspect.getsource(MCPServer.__init__)
    assert "get_tool_input_schema=self._tool_input_schema" in source, recheck(touch, "MCPServer.__init__")

    class Schemas(sdk_compat.CallerToolSchemas, MCPServer):
        def tool_input_schema(self, name: str) -> dict[str, Any] | None:
            return {"type": "object", "title": name}

    low = sdk_compat.lowlevel_of(Schemas("compat"))
    assert low.get_tool_input_schema is not None, recheck(touch, "Server.get_tool_input_schema")
    assert low.get_tool_input_schema("t") == {"type": "object", "title": "t"}, recheck(touch, "the override")


def test_drop_sdk_tracing() -> None:
    server = MCPServer("compat")
    names = [type(m).__name__ for m in server.middleware]
    assert "OpenTelemetryMiddleware" in names, recheck("drop_sdk_tracing", "the SDK's middleware class name")
    sdk_compat.drop_sdk_tracing(server)
    assert "OpenTelemetryMiddleware" not in [type(m).__name__ for m in server.middleware]
    assert server.middleware is sdk_compat.lowlevel_of(server).middleware, recheck(
        "drop_sdk_tracing", "MCPServer.middleware is the low-level server's list"
    )


def test_has_live_session() -> None:
    server = MCPServer("compat")
    server.streamable_http_app()
    manager = server.session_manager
    assert isinstance(getattr(manager, "_server_instances", None), dict), recheck(
        "has_live_session", "StreamableHTTPSessionManager._server_instances"
    )
    assert not sdk_compat.has_live_session(manager, "no-such-session")
    assert sdk_compat.open_sessions(manager) == 0
    source = inspect.getsource(type(manager))
    assert "self._server_instances[session_id] = " in source and "self._server_instances.pop(" in source, recheck(
        "has_live_session", "sessions enter and leave _server_instances by id"
    )


def test_reporting_server_owns_the_signals() -> None:
    """`ReportingServer(own_signals=True)` overrides `capture_signals`, what `uvicorn.Server.serve` enters."""
    import uvicorn

    from server.http.uvicorn_server import ReportingServer

    source = inspect.getsource(uvicorn.Server.serve)
    assert "self.capture_signals()" in source, "uvicorn.Server.serve no longer enters capture_signals()"
    server = ReportingServer(uvicorn.Config(app=None), lambda address: None, own_signals=True)  # type: ignore[arg-type]
    import signal

    before = signal.getsignal(signal.SIGINT)
    with server.capture_signals():
        assert signal.getsignal(signal.SIGINT) is before, "no handler was installed"


def test_httptools_protocol_on() -> None:
    pytest.importorskip("httptools", reason="the `fast` extra is not installed")
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    source = inspect.getsource(HttpToolsProtocol.connection_made)
    assert "self.transport = transport" in source, recheck(
        "httptools_protocol_on", "HttpToolsProtocol.connection_made keeps the transport it is given"
    )
    protocol = sdk_compat.httptools_protocol_on(lambda transport: transport)
    assert protocol is not None and issubclass(protocol, HttpToolsProtocol)  # served over a real server: test_http_sse


def test_httptools_protocol_on_holds_connections_to_their_limits() -> None:
    """The guarded httptools protocol's touches (live over a real server: tests/e2e/test_http_parsing.py)."""
    httptools = pytest.importorskip("httptools", reason="the `fast` extra is not installed")
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    touch = "httptools_protocol_on"
    init = inspect.getsource(HttpToolsProtocol.__init__)
    assert "self.connections = server_state.connections" in init, recheck(touch, "HttpToolsProtocol.connections")
    assert "self.parser = httptools.HttpRequestParser(self)" in init, recheck(touch, "HttpToolsProtocol.parser")
    begin = inspect.getsource(HttpToolsProtocol.on_message_begin)
    assert 'self.url = b""' in begin and "self.headers = []" in begin, recheck(touch, "url and headers per request")
    assert "self.headers.append((name, value))" in inspect.getsource(HttpToolsProtocol.on_header), recheck(
        touch, "HttpToolsProtocol.on_header collects the (lower-cased) headers"
    )
    received = inspect.getsource(HttpToolsProtocol.data_received)
    assert "except httptools.HttpParserError:" in received and "self.send_400_response(" in received, recheck(
        touch, "a parser error (a callback's exception among them) is answered 400"
    )
    assert issubclass(httptools.HttpParserCallbackError, httptools.HttpParserError), recheck(
        touch, "httptools raises a callback's exception as HttpParserCallbackError"
    )

    class Raising:
        def on_headers_complete(self) -> None:
            raise ValueError("refused")

    with pytest.raises(httptools.HttpParserError):
        httptools.HttpRequestParser(Raising()).feed_data(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
    protocol = sdk_compat.httptools_protocol_on(None)
    assert protocol is not None and issubclass(protocol, HttpToolsProtocol)


def test_h11_protocol_with() -> None:
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    touch = "h11_protocol_with"
    init = inspect.getsource(H11Protocol.__init__)
    assert "self.connections = server_state.connections" in init, recheck(touch, "H11Protocol.connections")
    assert "self.conn = h11.Connection(" in init, recheck(touch, "H11Protocol.conn")
    assert "self.conn.receive_data(data)" in inspect.getsource(H11Protocol.data_received), recheck(
        touch, "H11Protocol.data_received hands every byte to h11"
    )
    refuse = inspect.getsource(H11Protocol.send_400_response)
    assert "self.transport.close()" in refuse and "h11.Response(status_code=400" in refuse, recheck(
        touch, "H11Protocol.send_400_response answers 400 through h11 and closes"
    )
    server = h11.Connection(h11.SERVER)
    assert server.our_state is h11.IDLE  # a 400 may still start: h11 lets a server answer before any request
    server.send(h11.Response(status_code=400, headers=[("connection", "close")]))
    assert issubclass(sdk_compat.h11_protocol_with(), H11Protocol)
    assert issubclass(sdk_compat.guarded_http_protocol(sdk_compat_limits()), (H11Protocol, *_httptools_protocol()))


def sdk_compat_limits() -> Any:
    from server.http.connection_guard import ConnectionLimits

    return ConnectionLimits(header_timeout=1.0, max_connections=2)


def _httptools_protocol() -> tuple[type, ...]:
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:
        return ()
    return (HttpToolsProtocol,)


HTTP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
OPEN = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "compat", "version": "1"}},
}


@pytest.mark.anyio
async def test_live_session_loop_dispatcher_and_track_in_flight() -> None:
    """Live, over streamable HTTP: a session's transport and owner, the loop's dispatcher behind its connection, and a
    request entered in the dispatcher's in-flight table is cancelled by the client's `notifications/cancelled`."""
    import anyio
    import httpx
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

    from tests.support import serve_in_process

    connections: list[Any] = []

    async def capture(ctx: Any, call_next: Any) -> Any:
        if ctx.method == "tools/list":
            connections.append(sdk_compat.connection_of(ctx.session))
        return await call_next(ctx)

    server = MCPServer("compat", middleware=[capture])
    app = server.streamable_http_app()
    manager = server.session_manager
    async with serve_in_process(app) as base, httpx.AsyncClient(base_url=base, timeout=10) as http:
        opened = await http.post("/mcp", json=OPEN, headers=HTTP_HEADERS)
        session = opened.headers["mcp-session-id"]
        on_session = {**HTTP_HEADERS, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await http.post("/mcp", json=ready, headers=on_session)).status_code == 202
        assert await http.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=on_session)

        found = sdk_compat.live_session(manager, session)
        assert found is not None and found[0].mcp_session_id == session, recheck("live_session", "_server_instances")
        assert found[1] is None, recheck("live_session", "_session_owners (no credential: no owner)")
        assert sdk_compat.live_session(manager, "no-such-session") is None

        (connection,) = connections
        dispatcher = sdk_compat.loop_dispatcher(connection)
        assert isinstance(dispatcher, JSONRPCDispatcher), recheck("loop_dispatcher", "Connection.outbound")
        assert connection.session_id == session
        assert sdk_compat.loop_dispatcher(object()) is None

        class Request:  # what the dispatcher touches of a request in flight
            cancel_requested = anyio.Event()

        scope = anyio.CancelScope()
        tracked = sdk_compat.track_in_flight(dispatcher, "42", scope, Request())  # type: ignore[arg-type]
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 42}}
        assert (await http.post("/mcp", json=cancel, headers=on_session)).status_code == 202
        with anyio.fail_after(5):
            await Request.cancel_requested.wait()
        assert scope.cancel_called, recheck("track_in_flight", "_InFlight(scope, dctx), keyed by coerce_request_id")
        sdk_compat.untrack_in_flight(dispatcher, tracked)
        assert not dispatcher._in_flight, recheck("untrack_in_flight", "JSONRPCDispatcher._in_flight")

    source = inspect.getsource(type(manager)._handle_stateful_request)
    assert "requestor != self._session_owners.get(" in source, recheck("live_session", "the owner check")


@pytest.mark.anyio
async def test_hold_and_release_session() -> None:
    import math

    from mcp.server.streamable_http import StreamableHTTPServerTransport

    source = inspect.getsource(StreamableHTTPServerTransport.handle_request)
    for line in (
        "self._requests_in_flight += 1",
        "self.idle_scope.deadline = math.inf",
        "self._requests_in_flight -= 1",
        "self.idle_scope.deadline = anyio.current_time() + self._idle_timeout",
        "if self.idle_scope.cancel_called:",
    ):
        assert line in source, recheck("hold_session/release_session", line)
    transport = StreamableHTTPServerTransport(mcp_session_id="compat", idle_timeout=30)
    async with transport.connect():
        assert transport.idle_scope is not None
        assert sdk_compat.hold_session(transport) and sdk_compat.hold_session(transport)
        assert transport.idle_scope.deadline == math.inf and transport._requests_in_flight == 2
        sdk_compat.release_session(transport)
        assert transport.idle_scope.deadline == math.inf
        sdk_compat.release_session(transport)
        assert transport.idle_scope.deadline < math.inf and transport._requests_in_flight == 0
        transport.idle_scope.cancel()
        assert not sdk_compat.hold_session(transport)
    untimed = StreamableHTTPServerTransport(mcp_session_id="compat")
    assert sdk_compat.hold_session(untimed)
    sdk_compat.release_session(untimed)


@pytest.mark.anyio
async def test_release_last_message_and_end_session() -> None:
    """Live, over streamable HTTP: the loop keeps the last request it received (its HTTP request and body) until
    `release_last_message` hands it another; `end_session` ends the session as DELETE does."""
    import gc

    import anyio
    import httpx
    from starlette.requests import Request

    from tests.support import serve_in_process

    server = MCPServer("compat")
    app = server.streamable_http_app()
    manager = server.session_manager
    pad = "p" * 300_000

    def held() -> int:
        gc.collect()
        return sum(
            1 for o in gc.get_objects() if isinstance(o, Request) and pad.encode() in (o.__dict__.get("_body") or b"")
        )

    async with serve_in_process(app) as base, httpx.AsyncClient(base_url=base, timeout=10) as http:
        opened = await http.post("/mcp", json=OPEN, headers=HTTP_HEADERS)
        session = opened.headers["mcp-session-id"]
        on_session = {**HTTP_HEADERS, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        await http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=on_session)
        big = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": {"pad": pad}}}
        assert (await http.post("/mcp", json=big, headers=on_session)).status_code == 200
        assert held() == 1, recheck("release_last_message", "JSONRPCDispatcher.run no longer keeps its last item")

        writer = sdk_compat.session_reader_of(manager, session)
        assert writer is not None, recheck("session_reader_of", "StreamableHTTPServerTransport._read_stream_writer")
        await sdk_compat.release_last_message(writer)
        for _ in range(100):  # the loop takes the new item on its next turn
            if not held():
                break
            await anyio.sleep(0.02)
        assert held() == 0, recheck("release_last_message", "the loop lets go of its last item on the next one")
        assert sdk_compat.session_reader_of(manager, "no-such-session") is None

        assert await sdk_compat.end_session(manager, session)
        gone = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, headers=on_session)
        assert gone.status_code == 404, recheck("end_session", "StreamableHTTPServerTransport.terminate")
        assert not await sdk_compat.end_session(manager, session)


def test_sse_reader_of() -> None:
    from mcp.server.sse import SseServerTransport

    transport = SseServerTransport("/messages/")
    assert isinstance(getattr(transport, "_read_stream_writers", None), dict), recheck(
        "sse_reader_of", "SseServerTransport._read_stream_writers"
    )
    source = inspect.getsource(SseServerTransport.connect_sse)
    assert "self._read_stream_writers[session_id] = read_stream_writer" in source, recheck(
        "sse_reader_of", "sessions are keyed by their UUID"
    )
    assert sdk_compat.sse_reader_of(transport, "0" * 32) is None
    assert sdk_compat.open_sse_sessions(transport) == 0
    assert "self._read_stream_writers.pop(session_id" in inspect.getsource(SseServerTransport), recheck(
        "open_sse_sessions", "a session leaves _read_stream_writers when its stream ends"
    )
    assert sdk_compat.sse_reader_of(transport, "not-hex") is None
