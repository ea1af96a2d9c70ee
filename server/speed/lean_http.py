"""Handshake-era `tools/call` POSTs answered on the request's own task: no memory stream, no task per call.

The SDK's streamable-HTTP transport hands every POSTed request to the session's message loop and back: the
body is validated into a `JSONRPCRequest` model, sent through the session's read stream, dispatched by its
`JSONRPCDispatcher` in a task of its own, answered through the write stream, routed by the transport's message
router into a per-request memory stream, forwarded by a per-request SSE writer task into the SSE response's
stream, and dumped from a `JSONRPCResponse` model again. For a call that never talks back to the client, all
of that carries one result from one coroutine to another, and it cost more than the call itself.

`LeanHttpCalls` (the innermost middleware of the HTTP app, inside the Host/Origin guard, the bearer check and the
session caps) takes a POST to an MCP endpoint only when it is exactly that call, and leaves every other request
to the SDK, untouched (its body given back as it was read):

- the body is one JSON-RPC request (`jsonrpc`, an integer or string `id`, `method`, `params`, nothing else) for
  `tools/call` with plain params (`server.mcp.call_route.plain_call`, for a path that cannot report progress: no
  `progressToken`);
- on a live stateful session this server's session manager serves, presented with the credential that opened
  it, not terminated nor idled out, past its handshake on a handshake-era version (the `Mcp-Protocol-Version`
  header, if any, names one), with the `Accept` and `Content-Type` the SDK demands and a body within its limit;
- for a tool whose calls need nothing from the client while they run (`Tool.reaches_client` is false, as on the
  stdio lean front): elicitation and sampling need the SDK's response stream, which carries the client's requests
  and answers.

The call then runs as the SDK runs it, on the session's own state: the SDK's `ServerRunner` on the session's
`Connection` (the server middleware, and so `LeanPath` and `TruloopMCP._run`: the session's conversation, the
caller from the token, its log level, `tools/list_changed` on the session's standalone stream, the audit line with
transport `http` and the session id). What the SDK's transport and dispatcher add is done here the same way:

- a client's `notifications/cancelled` for the call cancels it through the dispatcher's own table of requests in
  flight, and the call is answered with the SDK's `-32800 Request cancelled`; a session that ends under a call
  ends its stream with no answer, as the SDK's does;
- a handler's exception becomes the JSON-RPC error every request answers (`server.mcp.wire_errors.wire_error`: its
  `MCPError` clipped, `-32602` for a validation error, `-32603 Internal error` otherwise, logged);
- the session cannot idle out while the call runs;
- `notifications/message` about the call rides its response, before the result;
- the answer is the SDK's: status 200, the SDK's SSE headers through `server.speed.sse_sender.sse_headers`, one
  `event: message` per message, held until it is ready and sent in one write with the end of the body; a call
  that takes longer than a second sends its headers then, and a keep-alive comment every 15 s.

Installed by `server.speed.lean_http_middleware` with `fast_paths` only; the private SDK state it reads (the
session manager's sessions, the transport's idle count, the dispatcher's in-flight table) is reached through
`server.sdk_compat`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio
import pydantic_core
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.context import ServerRequestContext
from mcp.server.request_state import RequestStateBoundary
from mcp.server.runner import ServerRunner
from mcp.server.session import ServerSession
from mcp.server.streamable_http import DEFAULT_NEGOTIATED_VERSION, REQUEST_CANCELLED, check_accept_headers
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import ErrorData, JSONRPCError, JSONRPCNotification
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, is_version_at_least
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from server.http.body_replay import Replay, read_body
from server.http.rpc_peek import PEEKED
from server.http.sse_replay import RETRY_MS, sse_frame
from server.mcp.call_route import lean_may_take, plain_call
from server.mcp.handshake_capabilities import HandshakeCapabilities
from server.mcp.protocol_era import is_modern
from server.mcp.wire_errors import WireErrors, wire_error
from server.sdk_compat import (
    connection_of,
    event_store_of,
    hold_session,
    live_session,
    loop_dispatcher,
    lowlevel_of,
    release_session,
    track_in_flight,
    untrack_in_flight,
)
from server.speed.lean_path import LeanPath
from server.speed.sse_sender import HOLD_HEADERS_SECONDS, PING_SECONDS, ping_comment, sse_headers
from server.tasks.front import TaskFront

if TYPE_CHECKING:
    from mcp.server.connection import Connection
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from server.mcp.mcp_server import TruloopMCP

logger = logging.getLogger("truloop.http")

_HANDSHAKE_VERSIONS = frozenset(version.encode("latin-1") for version in HANDSHAKE_PROTOCOL_VERSIONS)
# what the SDK's dispatcher builds for a message its streamable-HTTP transport framed with SSE responses on
_TRANSPORT = TransportContext(kind="jsonrpc", can_send_request=True)
_REMEMBERED = 64  # verdicts kept on Accept and Content-Type values (a host sends the same one or two)


class LeanSession:
    """A stateful session this path may serve: its connection, the loop's dispatcher, a runner on them."""

    __slots__ = ("_lean", "_middleware", "calls", "closed", "connection", "dispatcher", "headers", "runner")

    def __init__(
        self, connection: Connection, dispatcher: Any, runner: ServerRunner[Any], session_id: str, lean: LeanPath
    ) -> None:
        self.connection = connection
        self.dispatcher = dispatcher
        self.runner = runner
        self._lean = lean
        self._middleware = runner.server.middleware
        # the SDK's headers on a POST's SSE response (`StreamableHTTPServerTransport._handle_post_request`), as the
        # SSE response sends them (a copy per answer: a middleware may add to the list)
        self.headers = tuple(
            sse_headers(
                {
                    "Cache-Control": "no-cache, no-transform",
                    "Connection": "keep-alive",
                    "Content-Type": "text/event-stream",
                    "mcp-session-id": session_id,
                }
            )
        )
        self.calls: set[anyio.CancelScope] = set()
        self.closed = False

    @property
    def direct(self) -> LeanPath | None:
        """The lean path, when the server middleware it sits in is only the SDK's `RequestStateBoundary` and
        `WireErrors` before it (and the task front after it, which never takes a plain call): for a plain
        handshake-era `tools/call` the first passes the request and the answer through untouched (no `requestState`
        in, no `input_required` out), and the second's mapping is applied here to what the call raises, so the call
        may go straight to `LeanPath.tools_call`. Any other middleware (an OpenTelemetry span, a user's) keeps the
        runner's whole chain."""
        middleware = self._middleware
        if (
            len(middleware) in (4, 5)
            and type(middleware[0]) is RequestStateBoundary
            and type(middleware[1]) is WireErrors
            and middleware[2] is self._lean
            and type(middleware[3]) is HandshakeCapabilities  # (it changes only `initialize` answers)
            and (len(middleware) == 4 or type(middleware[4]) is TaskFront)  # (it never takes a plain call)
        ):
            return self._lean
        return None

    def close(self) -> None:
        """The session's loop ended: the calls still running here end too, as the loop's own handlers do."""
        self.closed = True
        for scope in list(self.calls):
            scope.cancel()


class Sessions:
    """One server's sessions, learned from their `initialize` (the server's `LeanPath` is built with this registry,
    its `SessionWatch`) and forgotten when the connection closes (`Connection.exit_stack`). Built by the HTTP app for
    each endpoint, and given to both that endpoint's server and `LeanHttpCalls`."""

    def __init__(self) -> None:
        self._open: dict[str, LeanSession] = {}

    def opened(self, ctx: ServerRequestContext[Any, Any], lean: LeanPath) -> None:
        connection = connection_of(ctx.session)
        session_id = getattr(connection, "session_id", None)
        dispatcher = loop_dispatcher(connection)
        if session_id is None or dispatcher is None or session_id in self._open:
            return  # stdio, a 2026-07-28 exchange, or a second initialize
        runner = ServerRunner(lowlevel_of(lean.server), connection, ctx.lifespan_context)
        session = self._open[session_id] = LeanSession(connection, dispatcher, runner, session_id, lean)
        connection.exit_stack.callback(self._closed, session_id, session)

    def _closed(self, session_id: str, session: LeanSession) -> None:
        session.close()
        if self._open.get(session_id) is session:
            del self._open[session_id]

    def get(self, session_id: str) -> LeanSession | None:
        return self._open.get(session_id)

    def __len__(self) -> int:
        return len(self._open)


class LeanRequest:
    """The `DispatchContext` of a call served here: what the SDK's dispatcher hands its handler, with the messages
    for this call's response stream kept in `events` (SSE-framed, in order) instead of sent through the session."""

    __slots__ = ("_cancel", "_closed", "events", "message_metadata", "request_id")

    transport = _TRANSPORT

    def __init__(self, request_id: int | str, request: Request) -> None:
        self.request_id = request_id
        self.events: list[bytes] = []
        # the hook holds the events, not this object: no reference cycle for the collector to find per call
        unanswered = _Unanswered(request_id, self.events)
        self.message_metadata = ServerMessageMetadata(request_context=request, on_request_unanswered=unanswered)
        self._cancel: anyio.Event | None = None
        self._closed = False

    @property
    def can_send_request(self) -> bool:
        return not self._closed

    @property
    def cancel_requested(self) -> anyio.Event:
        if self._cancel is None:
            self._cancel = anyio.Event()
        return self._cancel

    def cancelled(self) -> bool:
        return self._cancel is not None and self._cancel.is_set()

    def close(self) -> None:
        self._closed = True

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: Any = None) -> None:
        if self._closed:
            logger.debug("dropped %s: dispatch context closed", method)
            return
        if params is not None:
            message = JSONRPCNotification(jsonrpc="2.0", method=method, params=dict(params))
        else:
            message = JSONRPCNotification(jsonrpc="2.0", method=method)
        self.events.append(message.model_dump_json(by_alias=True, exclude_unset=True).encode())

    async def send_raw_request(self, method: str, params: Mapping[str, Any] | None, opts: Any = None) -> Any:
        if self._closed:
            raise NoBackChannelError(method)
        # never reached: a call of a tool that can ask the client anything (`Tool.reaches_client`) is the SDK's
        raise RuntimeError(
            f"a tools/call answered by server/speed/lean_http.py sent the client a {method!r} request: "
            "Tool.reaches_client must be true for its tool"
        )

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        return None  # calls with a progressToken are the SDK's


class _Unanswered:
    """The SDK transport's answer to a request that settled without one (it was cancelled): its
    `on_request_unanswered` hook."""

    __slots__ = ("_events", "_request_id")

    def __init__(self, request_id: int | str, events: list[bytes]) -> None:
        self._request_id = request_id
        self._events = events

    async def __call__(self) -> None:
        error = ErrorData(code=REQUEST_CANCELLED, message="Request cancelled")
        message = JSONRPCError(jsonrpc="2.0", id=self._request_id, error=error)
        self._events.append(message.model_dump_json(by_alias=True, exclude_unset=True).encode())


class _Reply:
    """One POST's SSE answer: sent whole once its events are ready, or, for a call still running after
    `HOLD_HEADERS_SECONDS`, headers first and a keep-alive comment every `PING_SECONDS` until they are."""

    __slots__ = ("_headers", "_send", "_started", "_task", "finished")

    def __init__(self, send: Send, headers: list[tuple[bytes, bytes]]) -> None:
        self._send = send
        self._headers = headers
        self._started = False
        self._task: asyncio.Task[None] | None = None
        self.finished = False

    def keep_alive(self) -> None:
        """The call is slow (a loop timer): from now on a task of its own keeps the stream alive."""
        if not self.finished:
            self._task = asyncio.ensure_future(self._keep_alive())

    async def _keep_alive(self) -> None:
        await self._start()
        while True:
            await asyncio.sleep(PING_SECONDS)
            if self.finished:
                return
            await self._send({"type": "http.response.body", "body": ping_comment(), "more_body": True})

    async def _start(self) -> None:
        if not self._started:
            self._started = True
            await self._send({"type": "http.response.start", "status": 200, "headers": self._headers})

    def stop(self) -> None:
        """The call is over (answered or not): no more keep-alives."""
        self.finished = True
        if self._task is not None:
            self._task.cancel()

    async def finish(self, events: list[bytes]) -> None:
        self.stop()
        if self._task is not None:
            await asyncio.wait([self._task])
            if not self._task.cancelled() and self._task.exception() is not None:
                logger.debug("a keep-alive failed", exc_info=self._task.exception())
        await self._start()
        body = events[0] if len(events) == 1 else b"".join(events)
        await self._send({"type": "http.response.body", "body": body, "more_body": False})


class _Endpoint:
    """One MCP endpoint's server, its session manager and the sessions this path knows."""

    __slots__ = ("_manager", "server", "sessions")

    def __init__(self, server: TruloopMCP, sessions: Sessions) -> None:
        self.server = server
        self.sessions = sessions
        self._manager: StreamableHTTPSessionManager | None = None

    @property
    def manager(self) -> StreamableHTTPSessionManager | None:
        """The server's session manager, when its sessions are stateful ones answered with SSE streams."""
        if self._manager is None:
            manager = self.server.session_manager
            if manager.stateless or manager.json_response:
                return None
            self._manager = manager
        return self._manager

    def call(
        self, session_id: str, scope: Scope, body: bytes, manager: StreamableHTTPSessionManager
    ) -> tuple[int | str, dict[str, Any], tuple[str, dict[str, Any]], Any, LeanSession] | None:
        """(request id, params, (name, arguments), transport, session) of a call this path answers; None leaves it
        to the SDK."""
        peeked = scope.get(PEEKED)
        if peeked is not None:
            message = peeked.message
        else:
            try:
                message = pydantic_core.from_json(body)
            except ValueError:
                return None
        if type(message) is not dict or len(message) != 4 or message.get("jsonrpc") != "2.0":
            return None
        request_id, params = message.get("id"), message.get("params")
        if message.get("method") != "tools/call" or type(params) is not dict:
            return None
        if type(request_id) is not int and type(request_id) is not str:  # a bool or a float id is no request's
            return None
        plain = plain_call(params, progress=False)
        if plain is None:
            return None
        found = live_session(manager, session_id)
        if found is None:
            return None
        transport, owner = found
        user = scope.get("user")
        if (authorization_context(user) if isinstance(user, AuthenticatedUser) else None) != owner:
            return None
        session = self.sessions.get(session_id)
        if session is None or session.closed or transport.is_terminated:
            return None
        connection = session.connection
        if not connection.initialize_accepted or is_modern(connection.protocol_version):
            return None
        server = self.server
        try:
            tool = server.front_door.toolset(server.surface.profile()).get(plain[0])
        except Exception:  # the call will fail the same way: the SDK's dispatcher says how
            return None
        if not lean_may_take(tool):
            return None
        return request_id, params, plain, transport, session


class LeanHttpCalls:
    """ASGI middleware: plain handshake-era `tools/call` POSTs to `endpoints` (path -> server) answered here, on the
    sessions each endpoint's server was built to tell of (`sessions`: path -> `Sessions`)."""

    def __init__(self, app: ASGIApp, *, endpoints: Mapping[str, TruloopMCP], sessions: Mapping[str, Sessions]) -> None:
        self.app = app
        self._endpoints: dict[str, _Endpoint] = {}
        for path, server in endpoints.items():
            lean = next((m for m in server.middleware if isinstance(m, LeanPath)), None)
            if lean is None:  # a server built without the speed paths: all of it is the SDK's
                continue
            self._endpoints[path] = _Endpoint(server, sessions[path])
        self._accepts: dict[bytes, bool] = {}
        self._content_types: dict[bytes, bool] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            endpoint = self._endpoints.get(scope["path"])
            if endpoint is not None:
                session_id, version = self._session_of(scope)
                manager = endpoint.manager if session_id is not None else None
                if session_id is not None and manager is not None:
                    await self._serve(endpoint, manager, session_id, version, scope, receive, send)
                    return
        await self.app(scope, receive, send)

    def _session_of(self, scope: Scope) -> tuple[str | None, str]:
        """The session id of a POST whose headers the SDK would take for a handshake-era request on a session (else
        None), and the request's `MCP-Protocol-Version` (the version the SDK's transport assumes without one)."""
        session = version = accept = content_type = None
        for name, value in scope["headers"]:  # the first of each, as the SDK reads them
            if name == b"mcp-session-id":
                if session is None:
                    session = value
            elif name == b"mcp-protocol-version":
                if version is None:
                    version = value
            elif name == b"accept":
                if accept is None:
                    accept = value
            elif name == b"content-type" and content_type is None:
                content_type = value
        if session is None or accept is None or content_type is None:
            return None, ""
        if version is not None and version not in _HANDSHAKE_VERSIONS:
            return None, ""
        if not self._accepts_both(accept) or not self._is_json(content_type):
            return None, ""
        return session.decode("latin-1"), DEFAULT_NEGOTIATED_VERSION if version is None else version.decode("latin-1")

    def _accepts_both(self, value: bytes) -> bool:
        """`Accept` names JSON and SSE (the SDK's own check, `check_accept_headers`)."""
        verdict = self._accepts.get(value)
        if verdict is None:
            has_json, has_sse = check_accept_headers(Request({"type": "http", "headers": [(b"accept", value)]}))
            verdict = has_json and has_sse
            if len(self._accepts) < _REMEMBERED:
                self._accepts[value] = verdict
        return verdict

    def _is_json(self, value: bytes) -> bool:
        """`Content-Type` passes both of the SDK transport's checks: it starts with `application/json` (any case),
        and one of its comma-separated types before any `;` is exactly `application/json`."""
        verdict = self._content_types.get(value)
        if verdict is None:
            text = value.decode("latin-1")
            parts = [part.strip() for part in text.split(";")[0].split(",")]
            verdict = text.lower().startswith("application/json") and "application/json" in parts
            if len(self._content_types) < _REMEMBERED:
                self._content_types[value] = verdict
        return verdict

    async def _serve(
        self,
        endpoint: _Endpoint,
        manager: StreamableHTTPSessionManager,
        session_id: str,
        version: str,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        messages, body = await read_body(receive, manager.max_request_body_size)
        replay = Replay(messages, receive)
        call = None if body is None else endpoint.call(session_id, scope, body, manager)
        if call is None:
            await self.app(scope, replay, send)
            return
        request_id, params, plain, transport, session = call
        if not hold_session(transport):  # idled out: the SDK answers that
            await self.app(scope, replay, send)
            return
        try:
            dctx = LeanRequest(request_id, Request(scope, replay))
            reply = _Reply(send, list(session.headers))
            timer = asyncio.get_running_loop().call_later(HOLD_HEADERS_SECONDS, reply.keep_alive)
            try:
                await _run(session, request_id, params, plain, dctx)
            finally:
                timer.cancel()
                reply.stop()
            await reply.finish(framed(dctx.events, request_id, transport, version))
        finally:
            release_session(transport)


def framed(events: list[bytes], request_id: int | str, transport: Any, version: str) -> list[bytes]:
    """The messages' JSON as the SDK's transport sends them: with an event store, an id on each event, each kept for
    a client that reconnects (server/http/sse_replay.py), after a priming event when the request's `version` header is
    2025-11-25 or later."""
    store = event_store_of(transport)
    if store is None:
        return [sse_frame(data) for data in events]
    frames = []
    if is_version_at_least(version, "2025-11-25"):
        frames.append(sse_frame(None, store.keep(request_id, None), RETRY_MS))
    frames += [sse_frame(data, store.keep(request_id, data)) for data in events]
    return frames


def _cancel_scope() -> anyio.CancelScope:
    """A new `anyio.CancelScope`, made by the running backend's class itself (what `anyio.CancelScope()` returns,
    without asking which backend runs on every call)."""
    scope: anyio.CancelScope = _asyncio_scope_class()()
    return scope


@functools.cache
def _asyncio_scope_class() -> type[anyio.CancelScope]:
    """anyio's `CancelScope` class on asyncio, the only backend this middleware runs on (it times with the loop's
    `call_later`): what `anyio.CancelScope()` makes there, looked up once, inside the loop, on first use."""
    return type(anyio.CancelScope())


Plain = tuple[str, dict[str, Any]]  # a call's tool name and arguments, as `plain_call` read them


async def _run(
    session: LeanSession, request_id: int | str, params: dict[str, Any], plain: Plain, dctx: LeanRequest
) -> None:
    """Run the call as the session's dispatcher runs a request (`JSONRPCDispatcher._handle_request`), its answer
    added to `dctx.events`."""
    dispatcher = session.dispatcher
    scope = _cancel_scope()
    tracked = track_in_flight(dispatcher, request_id, scope, dctx)
    session.calls.add(scope)
    answered = False
    try:
        with scope:
            try:
                if session.direct and "_meta" not in params:  # what the runner would do, without its detours
                    result = await _direct(session, request_id, params, plain, dctx)
                else:
                    result = await session.runner.on_request(dctx, "tools/call", params)
            finally:
                dctx.close()
                untrack_in_flight(dispatcher, tracked)
            if not dctx.cancelled() and not session.closed:
                answered = True
                answer = {"jsonrpc": "2.0", "id": request_id, "result": result}  # what `JSONRPCResponse` dumps
                dctx.events.append(pydantic_core.to_json(answer))
    except Exception as exc:
        error = wire_error(exc, "tools/call")
        if not dctx.cancelled() and not session.closed:
            answered = True
            message = JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
            dctx.events.append(message.model_dump_json(by_alias=True, exclude_unset=True).encode())
    finally:
        session.calls.discard(scope)
    if not answered and not session.closed:  # the client cancelled it: the transport's hook answers it
        hook = dctx.message_metadata.on_request_unanswered
        assert hook is not None
        await hook()


async def _direct(
    session: LeanSession, request_id: int | str, params: dict[str, Any], plain: tuple[str, dict[str, Any]], dctx: Any
) -> dict[str, Any]:
    """`ServerRunner.on_request` for a plain call without `_meta` whose server middleware is only the SDK's
    `RequestStateBoundary` and the lean path (`LeanSession.direct`): the request context the runner makes
    (`ServerRunner._make_context`), handed to `LeanPath.tools_call` as the lean path's own check would."""
    lean = session.direct
    assert lean is not None
    connection = session.connection
    ctx: ServerRequestContext[Any, Any] = ServerRequestContext(
        session=ServerSession(dctx, connection),
        lifespan_context=session.runner.lifespan_state,
        protocol_version=connection.protocol_version,
        method="tools/call",
        params=params,
        request_id=request_id,
        request=dctx.message_metadata.request_context,
    )
    return await lean.tools_call(ctx, *plain)
