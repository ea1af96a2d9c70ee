"""The MCP face of a deployment: an `MCPServer` whose tools come from the caller's profile.

`tools/list` and `tools/call` go through the deployment's front door (toolsets/front_door.py), like every
other front: the `Surface` says who calls and in which profile; this module adds only what MCP can reach
(the client as the confirmer, the composer and a route to the device; the session as the conversation of
a handshake-era client).
"""

from __future__ import annotations

import contextvars
import functools
import logging
import secrets
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import mcp.types as types
from mcp.server.context import CallNext, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.subscriptions import ToolsListChanged

from bridge.elicitation import is_modern
from bridge.service import DeviceBridge
from server.call_ports import CallPorts
from server.exposure import SessionConversations, connection_of
from server.identity import Surface
from server.lean_path import LeanPath
from toolsets.core.context import RequestInfo, ToolContext
from toolsets.pipeline.tracer_provider import provider_installed

if TYPE_CHECKING:
    from toolsets.core.envelope import ToolResult
    from toolsets.core.tool import Tool
    from toolsets.extensions.plugins.catalog import PluginCatalog
    from toolsets.front_door import FrontDoor
    from toolsets.services import Services

logger = logging.getLogger("truloop.server")

SERVER_NAME = "truloop-mcp"
INSTRUCTIONS = (
    "Tools of the truloop assistant. Dates are ISO 8601 (YYYY-MM-DD); times carry UTC offsets. "
    "A failed call explains what to change; a cancelled one means the user said no."
)


class Composed(Protocol):
    """What a server needs of its deployment (server/composition.py's `Deployment`)."""

    @property
    def front_door(self) -> FrontDoor: ...

    @property
    def services(self) -> Services: ...

    @property
    def plugins(self) -> PluginCatalog | None: ...


class TruloopMCP(MCPServer):
    def __init__(
        self,
        surface: Surface,
        deployment: Composed,
        *,
        bridge: DeviceBridge | None = None,
        deferred_timeout: float = 300.0,
        stdio: bool = False,
        **kwargs: Any,
    ) -> None:
        from server import __version__

        super().__init__(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, **kwargs)
        self.surface = surface
        self.deployment = deployment
        self.bridge = bridge
        self.deferred_timeout = deferred_timeout
        self.stdio = stdio  # served over stdio: no device can connect to this process
        self._process_session = "stdio-" + secrets.token_hex(8)  # stdio: one session per process
        # by id(tool), holding the tool so its id is not reused while cached (plugin tools come and go)
        self._published_cache: dict[int, tuple[Tool, types.Tool]] = {}
        self._wire_lists = _PerToolList()  # the `tools/list` result, per list
        self._answered_lists = _PerToolList()  # the SDK's whole answer, per list and protocol version
        # handshake-era connections, told `notifications/tools/list_changed` when plugins change
        self._connections: weakref.WeakSet[Any] = weakref.WeakSet()
        self._sessions = SessionConversations()  # handshake-era conversations, one per connection
        if deployment.plugins is not None:
            deployment.plugins.changes.subscribe(self.announce_tools_changed)
        low = self._lowlevel_server
        if not provider_installed():  # the SDK's span per message costs every call, even with no exporter
            low.middleware[:] = [m for m in low.middleware if type(m).__name__ != "OpenTelemetryMiddleware"]
        low.middleware.append(LeanPath(self))
        low.add_request_handler("logging/setLevel", types.SetLevelRequestParams, _set_level)
        low.add_request_handler("tools/list", types.PaginatedRequestParams, self._tools_list)
        # MCPServer advertises tools.listChanged only on 2026-07-28; our handshake-era lists change too.
        low.create_initialization_options = functools.partial(  # type: ignore[method-assign]
            type(low).create_initialization_options, low, NotificationOptions(tools_changed=True)
        )

    @property
    def services(self) -> Services:
        return self.deployment.services

    @property
    def front_door(self) -> FrontDoor:
        return self.deployment.front_door

    def _published(self, tools: list[Tool]) -> list[types.Tool]:
        cache = self._published_cache
        if len(cache) > 4 * len(tools) + 256:  # replaced plugin versions: let them go
            cache.clear()
        published = []
        for tool in tools:
            found = cache.get(id(tool))
            if found is None or found[0] is not tool:
                from server.results import to_mcp_tool

                found = cache[id(tool)] = (tool, to_mcp_tool(tool))
            published.append(found[1])
        return published

    def _remember(self, session: Any) -> None:
        """A handshake-era connection, to tell when plugins change the tools (it has listed or called tools)."""
        connection = connection_of(session)
        if connection is not None:
            self._connections.add(connection)

    async def announce_tools_changed(self) -> None:
        """The published tools changed (plugins reloaded): tell handshake-era sessions and 2026-07-28 listeners."""
        for connection in list(self._connections):
            try:
                await connection.send_tool_list_changed()
            except Exception:
                logger.debug("could not send tools/list_changed to a connection", exc_info=True)
                self._connections.discard(connection)
        await self._subscriptions.publish(ToolsListChanged())

    async def list_tools(self) -> list[types.Tool]:
        """The caller's whole list (what 2026-07-28 sessions see)."""
        caller, profile = self.surface.resolve()
        door = self.front_door
        return self._published(await door.visible(door.context_for(caller, profile)))

    async def _tools_list(self, ctx: Any, params: types.PaginatedRequestParams | None) -> dict[str, Any]:
        tools = _listing.get()
        if tools is None:
            tools = await self._visible_tools(ctx)
        return self._wire_list(tools)

    async def _visible_tools(self, request: ServerRequestContext[Any, Any]) -> list[Tool]:
        caller, profile = self.surface.resolve()
        modern = is_modern(request.protocol_version)
        if not modern:
            self._remember(request.session)
        door = self.front_door
        ctx = door.context_for(caller, profile, conversation=self._conversation(request.session, modern))
        return await door.visible(ctx, fixed_list=modern)

    def _conversation(self, session: Any, modern: bool) -> Any:
        """A handshake-era session is its own conversation; a 2026-07-28 caller's is the front door's default."""
        return None if modern else self._sessions.get(session)

    async def lean_list(self, request: ServerRequestContext[Any, Any], call_next: CallNext) -> dict[str, Any]:
        """`tools/list` (server/lean_path.py): the SDK's answer for this list of tools, made once per list and
        protocol version; the handler gets the same list through `_listing`."""
        tools = await self._visible_tools(request)
        answer = self._answered_lists.get(tools, request.protocol_version)
        if answer is None:
            token = _listing.set(tools)
            try:
                answer = await call_next(request)
            finally:
                _listing.reset(token)
            if not isinstance(answer, dict):
                return answer  # type: ignore[return-value]
            self._answered_lists.put(tools, answer, request.protocol_version)
        return dict(answer)

    def _wire_list(self, tools: list[Tool]) -> dict[str, Any]:
        """The `tools/list` result in its wire form, built once per distinct list (the SDK copies the top level)."""
        wire = self._wire_lists.get(tools)
        if wire is None:
            wire = types.ListToolsResult(tools=self._published(tools)).model_dump(
                by_alias=True, mode="json", exclude_none=True
            )
            self._wire_lists.put(tools, wire)
        return wire

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> types.CallToolResult | types.InputRequiredResult:
        from server.results import to_mcp_result

        request = None if context is None else _request_of(context)
        if context is None or request is None:  # called in-process, outside any MCP request
            caller, profile = self.surface.resolve()
            door = self.front_door
            deferred = None
            if self.bridge is not None:
                from bridge.deferred_router import DeferredRouter

                deferred = DeferredRouter(self.bridge, None, timeout=self.deferred_timeout, stdio=self.stdio)
            ctx = door.context_for(caller, profile, request=RequestInfo(transport="in-process"), deferred=deferred)
            return to_mcp_result(await door.call(ctx, name, arguments))
        return to_mcp_result(await self._run(name, arguments, request, lambda: context))

    async def lean_call(
        self, request: ServerRequestContext[Any, Any], name: str, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        """A handshake-era `tools/call` whose params server/lean_path.py checked, answered in its wire form."""

        def context() -> Context:
            params = types.CallToolRequestParams.model_validate(request.params, by_name=False)
            return Context(
                request_context=request, mcp_server=self, input_params=params, subscriptions=self._subscriptions
            )

        from server.results import to_wire_result

        return to_wire_result(await self._run(name, arguments, request, context))

    async def _run(
        self,
        name: str,
        arguments: dict[str, Any],
        request: ServerRequestContext[Any, Any],
        context: Callable[[], Context],
    ) -> ToolResult:
        caller, profile = self.surface.resolve()
        door = self.front_door
        session = request.session
        modern = is_modern(request.protocol_version)
        if not modern:
            self._remember(session)
        ports = CallPorts(context, self.bridge, timeout=self.deferred_timeout, stdio=self.stdio)
        ctx: ToolContext[Any] = door.context_for(
            caller,
            profile,
            request=self._request_info(request, profile),
            conversation=self._conversation(session, modern),
            confirmer=ports,
            deferred=ports,
            composer=ports,
            report_progress=session.report_progress,
        )
        if not (door.exposure.lists_can_change and not modern):
            return await door.call(ctx, name, arguments, fixed_list=modern)
        before = [t.name for t in await door.visible(ctx, fixed_list=False)]
        outcome = await door.call(ctx, name, arguments, fixed_list=False)
        if before != [t.name for t in await door.visible(ctx, fixed_list=False)]:
            await session.send_tool_list_changed()
        return outcome

    def _request_info(self, request: ServerRequestContext[Any, Any], profile: str) -> RequestInfo:
        headers = getattr(request.request, "headers", None) or {}
        return RequestInfo(
            request_id=str(request.request_id),
            session_id=headers.get("mcp-session-id") or (self._process_session if self.stdio else None),
            transport="stdio" if self.stdio else "http",
            protocol_version=request.protocol_version,
            profile=profile,
        )


async def _set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
    # Accepted for handshake-era clients; tool calls emit no protocol log messages today.
    logger.debug("client asked for log level %s", params.level)
    return types.EmptyResult()


class _PerToolList:
    """Answers kept per distinct list of tool objects (and a protocol version, where given), at most 256. A list
    is known by its tools' identities; holding the tools keeps their ids from being reused while kept."""

    def __init__(self) -> None:
        self._kept: dict[tuple[Any, ...], tuple[tuple[Tool, ...], dict[str, Any]]] = {}

    def get(self, tools: list[Tool], version: str | None = None) -> dict[str, Any] | None:
        kept = self._kept.get((version, *map(id, tools)))
        if kept is None or any(a is not b for a, b in zip(kept[0], tools, strict=True)):
            return None
        return kept[1]

    def put(self, tools: list[Tool], answer: dict[str, Any], version: str | None = None) -> None:
        if len(self._kept) > 256:
            self._kept.clear()
        self._kept[(version, *map(id, tools))] = (tuple(tools), answer)


def _request_of(context: Context) -> ServerRequestContext[Any, Any] | None:
    try:
        return context.request_context
    except ValueError:  # a Context made outside a request
        return None


# The tools a `tools/list` handler answers with when server/lean_path.py already worked them out.
_listing: contextvars.ContextVar[list[Tool] | None] = contextvars.ContextVar("truloop_listing", default=None)
