"""The MCP face of the toolsets: an `MCPServer` whose tools come from a profile, per caller.

`tools/list` and `tools/call` are answered from the caller's profile (the `Surface` decides
which); every call goes through `toolsets.core.dispatch`, with the MCP client wired in as the
confirmation port.
"""

from __future__ import annotations

import contextvars
import functools
import logging
import secrets
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import mcp.types as types
from mcp.server.context import CallNext, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.subscriptions import ToolsListChanged

from bridge.elicitation import is_modern
from bridge.service import DeviceBridge
from server.call_ports import CallPorts
from server.exposure import ToolExposure, connection_of
from server.identity import Surface
from server.lean_path import LeanPath
from toolsets.core.context import Caller, RequestInfo, ToolContext
from toolsets.core.conversation import ConversationState, MemoryConversation, MemoryConversations
from toolsets.extensions.plugins.changes import plugin_tool_changes
from toolsets.pipeline.tracer_provider import provider_installed

if TYPE_CHECKING:
    from toolsets.core.envelope import ToolResult
    from toolsets.core.tool import Tool

logger = logging.getLogger("truloop.server")

SERVER_NAME = "truloop-mcp"
INSTRUCTIONS = (
    "Tools of the truloop assistant. Dates are ISO 8601 (YYYY-MM-DD); times carry UTC offsets. "
    "A failed call explains what to change; a cancelled one means the user said no."
)


class TruloopMCP(MCPServer):
    def __init__(
        self,
        surface: Surface,
        *,
        confirm_policy: Any,
        services: Any = None,
        bridge: DeviceBridge | None = None,
        deferred_timeout: float = 300.0,
        stdio: bool = False,
        exposure: ToolExposure | None = None,
        **kwargs: Any,
    ) -> None:
        from server import __version__

        super().__init__(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, **kwargs)
        self.surface = surface
        self.confirm_policy = confirm_policy
        self.services = services
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
        plugin_tool_changes.subscribe(self.announce_tools_changed)
        self._known_users: dict[str, str] = {}
        self.exposure = exposure or ToolExposure("full", _no_gates, MemoryConversations())
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
        _, toolset = self.surface.resolve()
        return self._published(await self.exposure.visible(toolset, True, MemoryConversation(ConversationState())))

    async def _tools_list(self, ctx: Any, params: types.PaginatedRequestParams | None) -> dict[str, Any]:
        tools = _listing.get()
        if tools is None:
            tools = await self._visible_tools(ctx)
        return self._wire_list(tools)

    async def _visible_tools(self, request: ServerRequestContext[Any, Any]) -> list[Tool]:
        caller, toolset = self.surface.resolve()
        modern = is_modern(request.protocol_version)
        if not modern:
            self._remember(request.session)
        conversation = self.exposure.conversation(request.session, caller, toolset.name, modern)
        return await self.exposure.visible(toolset, modern, conversation)

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
        from toolsets.core.dispatch import dispatch

        request = None if context is None else _request_of(context)
        if context is None or request is None:
            caller, toolset = self.surface.resolve()
            ctx: ToolContext[Any] = ToolContext(caller=caller, deps=self.services, confirm_policy=self.confirm_policy)
            if self.bridge is not None:
                from bridge.deferred_router import DeferredRouter

                ctx.deferred = DeferredRouter(self.bridge, None, timeout=self.deferred_timeout, stdio=self.stdio)
            await self._enter_directory(caller)
            return to_mcp_result(await dispatch(toolset, name, arguments, ctx))
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
        from toolsets.core.dispatch import dispatch  # imported on the first call, not before `initialize` is answered

        caller, toolset = self.surface.resolve()
        ctx: ToolContext[Any] = ToolContext(caller=caller, deps=self.services, confirm_policy=self.confirm_policy)
        ctx.request = self._request_info(request, toolset.name)
        ctx.confirmer = ctx.composer = ctx.deferred = CallPorts(
            context, self.bridge, timeout=self.deferred_timeout, stdio=self.stdio
        )
        session = request.session
        ctx.report_progress = session.report_progress
        modern = is_modern(request.protocol_version)
        if not modern:
            self._remember(session)
        exposure = self.exposure
        conversation = ctx.conversation = exposure.conversation(session, caller, toolset.name, modern)
        ctx.gates = exposure.gates
        tool = toolset.get(name)
        if tool is not None and (refusal := await exposure.refusal(tool, modern, conversation)) is not None:
            return refusal
        watch = exposure.lists_can_change and not modern
        before = [t.name for t in await exposure.visible(toolset, modern, conversation)] if watch else None
        await self._enter_directory(caller)
        outcome = await dispatch(toolset, name, arguments, ctx)
        if before is not None and before != [t.name for t in await exposure.visible(toolset, modern, conversation)]:
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

    async def _enter_directory(self, caller: Caller) -> None:
        """Users enter the directory on first use, from their token's claims (or as `--user` on stdio)."""
        if self.services is None or self._known_users.get(caller.user_id) == caller.role:
            return
        from toolsets.assistant.directory import enter_directory

        try:
            await enter_directory(self.services.users, caller)
        except Exception:
            logger.warning("could not record user %s in the directory", caller.user_id, exc_info=True)
            return
        if len(self._known_users) > 10_000:
            self._known_users.clear()
        self._known_users[caller.user_id] = caller.role


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


def _no_gates() -> Any:
    from toolsets.pipeline.gates import GateSet

    return GateSet()


def _request_of(context: Context) -> ServerRequestContext[Any, Any] | None:
    try:
        return context.request_context
    except ValueError:  # a Context made outside a request
        return None


# The tools a `tools/list` handler answers with when server/lean_path.py already worked them out.
_listing: contextvars.ContextVar[list[Tool] | None] = contextvars.ContextVar("truloop_listing", default=None)
