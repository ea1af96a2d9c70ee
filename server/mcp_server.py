"""The MCP face of the toolsets: an `MCPServer` whose tools come from a profile, per caller.

`tools/list` and `tools/call` are answered from the caller's profile (the `Surface` decides
which); every call goes through `toolsets.core.dispatch`, with the MCP client wired in as the
confirmation port. This is the SDK's way (its handlers, its `call_tool`); with `fast_paths` the
speed paths of `server.speed` are installed on top, answering the same.
"""

from __future__ import annotations

import logging
import secrets
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import mcp.types as types
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.subscriptions import ToolsListChanged

from bridge.elicitation import is_modern
from bridge.service import DeviceBridge
from server.call_ports import CallPorts
from server.exposure import ToolExposure
from server.identity import Surface
from server.sdk_compat import advertise_tools_changed, connection_of, lowlevel_of, subscriptions_of
from server.tool_lists import ToolLists
from toolsets.core.context import Caller, RequestInfo, ToolContext
from toolsets.core.conversation import ConversationState, MemoryConversation, MemoryConversations
from toolsets.extensions.plugins.changes import plugin_tool_changes

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
        fast_paths: bool = True,
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
        self.tool_lists = ToolLists()  # the published forms of the tools (kept, with the speed paths)
        # handshake-era connections, told `notifications/tools/list_changed` when plugins change
        self._connections: weakref.WeakSet[Any] = weakref.WeakSet()
        plugin_tool_changes.subscribe(self.announce_tools_changed)
        self._known_users: dict[str, str] = {}
        self.exposure = exposure or ToolExposure("full", _no_gates, MemoryConversations())
        low = lowlevel_of(self)
        low.add_request_handler("logging/setLevel", types.SetLevelRequestParams, _set_level)
        low.add_request_handler("tools/list", types.PaginatedRequestParams, self._tools_list)
        # MCPServer advertises tools.listChanged only on 2026-07-28; our handshake-era lists change too.
        advertise_tools_changed(self)
        if fast_paths:
            from server import speed

            speed.install(self)

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
        await subscriptions_of(self).publish(ToolsListChanged())

    async def list_tools(self) -> list[types.Tool]:
        """The caller's whole list (what 2026-07-28 sessions see)."""
        _, toolset = self.surface.resolve()
        visible = await self.exposure.visible(toolset, True, MemoryConversation(ConversationState()))
        return self.tool_lists.published(visible)

    async def _tools_list(self, ctx: Any, params: types.PaginatedRequestParams | None) -> dict[str, Any]:
        return self.tool_lists.wire(await self.visible_tools(ctx))

    async def visible_tools(self, request: ServerRequestContext[Any, Any]) -> list[Tool]:
        """The tools this request's caller sees, in its era and conversation."""
        caller, toolset = self.surface.resolve()
        modern = is_modern(request.protocol_version)
        if not modern:
            self._remember(request.session)
        conversation = self.exposure.conversation(request.session, caller, toolset.name, modern)
        return await self.exposure.visible(toolset, modern, conversation)

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
                from bridge.deferred import DeferredRouter

                ctx.deferred = DeferredRouter(self.bridge, None, timeout=self.deferred_timeout, stdio=self.stdio)
            await self._enter_directory(caller)
            return to_mcp_result(await dispatch(toolset, name, arguments, ctx))
        return to_mcp_result(await self._run(name, arguments, request, lambda: context))

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


def _no_gates() -> Any:
    from toolsets.pipeline.gates import GateSet

    return GateSet()


def _request_of(context: Context) -> ServerRequestContext[Any, Any] | None:
    try:
        return context.request_context
    except ValueError:  # a Context made outside a request
        return None
