"""The lean path: `tools/list` and handshake-era `tools/call` answered by the server middleware itself.

The SDK's way through a request validates its params twice (against the protocol surface, then into the
handler's model), wraps the request in an `MCPServer` `Context`, and turns the handler's result models
into a dict, validates that dict against the surface and dumps it again. For the two messages a host
sends most, that was most of the server's own work per message (docs/performance.md). This middleware
(the SDK's public `Server.middleware` tier, which may answer without `call_next`) takes them when they
are plain, and hands everything else to the SDK unchanged:

- `tools/call` on a handshake-era connection (2025-06-18, 2025-11-25) whose params are exactly `name`,
  `arguments` and an optional `_meta` whose `progressToken`, if any, is a string or an integer
  (`server.call_route.plain_call`, for a path that reports progress): checked once, run by `TruloopMCP._run` (what
  its `call_tool` runs too, into `server.call_route.route_call`), answered as the wire dict
  `server.wire_forms.call_result` builds (what the SDK's serializer would have made of the same outcome).
  2026-07-28 calls keep the SDK's path: their results carry the envelope fields (`resultType`, the `serverInfo`
  stamp) and may be `input_required`.
- `tools/list` in either era, once its params passed the SDK's own check: the SDK's answer for a given
  page of tools is kept and given again while the caller's page is the same (`LeanPath.tools_list`); on a miss
  the SDK's handler (`LeanPath.tools_list_handler`) answers from the page worked out here (`server.pagination`;
  a bogus cursor is refused here, as the SDK's path refuses it). The answers are kept in the server's one
  `tools/list` cache (`server.speed.list_cache.ToolListCache`), given at construction.

Either way only on a connection whose handshake the SDK accepted, so the pre-`initialize` refusal stays
the SDK's. Over streamable HTTP the same path also runs behind `server.speed.lean_http`, which learns each
session's connection here, from its `initialize` (`SessionWatch.opened`, the watch the server is built with).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import mcp.types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context
from mcp_types.methods import validate_client_request

from server.mcp.call_route import plain_call
from server.mcp.protocol_era import is_modern
from server.sdk_compat import connection_of

if TYPE_CHECKING:
    from server.mcp.mcp_server import TruloopMCP
    from server.speed.list_cache import ToolListCache
    from toolsets.core.tool import Tool


class SessionWatch(Protocol):
    """Told of every `initialize` request a lean path sees (its context, and the lean path), before the SDK answers
    it: the sessions `server.speed.lean_http` serves (its `Sessions`)."""

    def opened(self, ctx: ServerRequestContext[Any, Any], lean: LeanPath) -> None: ...


class LeanPath:
    """A `ServerMiddleware`: the innermost of `Server.middleware` (after the SDK's OpenTelemetry one, if any)."""

    def __init__(self, server: TruloopMCP, lists: ToolListCache, sessions: SessionWatch | None = None) -> None:
        """`sessions`: told of each session's `initialize` (the HTTP app's, for `server.speed.lean_http`)."""
        self._server = server
        self._lists = lists  # the one `tools/list` cache (its `sdk` form: the SDK's whole answer, per protocol version)
        # `tools/list` requests on their way through the SDK: the page worked out here (and its next cursor)
        self._handed: dict[int, tuple[list[Tool], str | None]] = {}
        self._sessions = sessions

    @property
    def server(self) -> TruloopMCP:
        return self._server

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        method = ctx.method
        if method == "tools/call":
            call = plain_call(ctx.params, progress=True)
            if call is not None and not is_modern(ctx.protocol_version) and _accepted(ctx):
                return await self.tools_call(ctx, *call)
        elif method == "tools/list" and _accepted(ctx) and valid_request(ctx):
            return await self.tools_list(ctx, call_next)
        elif method == "initialize" and self._sessions is not None:
            self._sessions.opened(ctx, self)
        return await call_next(ctx)

    async def tools_call(
        self, request: ServerRequestContext[Any, Any], name: str, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        """A handshake-era `tools/call` whose params were checked here, answered in its wire form."""
        server = self._server

        def context() -> Context:
            return server.sdk_context(
                request, types.CallToolRequestParams.model_validate(request.params, by_name=False)
            )

        from server.mcp.wire_forms import call_result

        return call_result(await server._run(name, arguments, request, context))

    async def tools_list(self, request: ServerRequestContext[Any, Any], call_next: CallNext) -> dict[str, Any]:
        """`tools/list`: the SDK's answer for this page of tools, made once per page and protocol version."""
        server = self._server
        page, next_cursor = server.pager.page(await server.visible_tools(request), request.params, "tools")
        era, apps = request.protocol_version, server.apps.negotiated(request)
        answer = self._lists.get("sdk", page, era=era, cursor=next_cursor, apps=apps)
        if answer is None:
            self._handed[id(request)] = (page, next_cursor)
            try:
                made = await call_next(request)
            finally:
                del self._handed[id(request)]
            if not isinstance(made, dict):
                return made  # type: ignore[return-value]  # a middleware's own answer passes through as it is
            self._lists.put("sdk", page, made, era=era, cursor=next_cursor, apps=apps)
            answer = made
        return dict(answer)

    async def tools_list_handler(self, ctx: ServerRequestContext[Any, Any], params: Any) -> dict[str, Any]:
        """The `tools/list` handler: the page `tools_list` worked out for this request (the SDK hands the handler
        the request object it was given), else the caller's page."""
        server = self._server
        handed = self._handed.get(id(ctx))
        if handed is None:
            handed = server.pager.page(await server.visible_tools(ctx), params, "tools")
        return server.tools_wire(ctx, *handed)


def valid_request(ctx: ServerRequestContext[Any, Any]) -> bool:
    """The request passes the SDK's own check of its params for its protocol version (else the SDK refuses it)."""
    try:
        validate_client_request(ctx.method, ctx.protocol_version, ctx.params)
    except Exception:
        return False
    return True


def _accepted(ctx: ServerRequestContext[Any, Any]) -> bool:
    """The SDK let this connection past its handshake gate (else its own refusal answers)."""
    connection = connection_of(ctx.session)
    return connection is not None and connection.initialize_accepted
