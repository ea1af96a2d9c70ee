"""The MCP face of a deployment: an `MCPServer` whose tools come from the caller's profile.

`tools/list` and `tools/call` go through the deployment's front door (toolsets/front_door.py), like every
other front: the `Surface` says who calls and in which profile; this module adds only what MCP can reach
(the client as the confirmer, the composer and a route to the device; the session as the conversation of
a handshake-era client). This is the SDK's way (its handlers, its `call_tool`); with `fast_paths` the speed
paths of `server.speed` are installed on top, answering the same.

Beside the tools (docs/hosts.md): resources and their subscriptions (`server.resources`), prompts
(`server.prompt_front`), completion (`server.completion_front`), `notifications/message`
(`server.logging_bridge`), and every list in pages (`server.pagination`).
"""

from __future__ import annotations

import logging
import secrets
import time
import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import mcp.types as types
from mcp.server.context import ServerRequestContext
from mcp.server.extension import Extension
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.subscriptions import ToolsListChanged

from bridge.service import DeviceBridge
from server.auth.identity import Surface
from server.mcp.call_route import route_call
from server.mcp.completion_front import CompletionFront
from server.mcp.handshake_capabilities import HandshakeCapabilities
from server.mcp.logging_bridge import LogBridge, LoggedPorts
from server.mcp.mcp_apps import AppFront
from server.mcp.pagination import DEFAULT_PAGE_SIZE, Pager
from server.mcp.prompt_front import PromptFront
from server.mcp.protocol_era import is_modern
from server.mcp.request_info import mcp_request_info
from server.mcp.resource_bus import ScopedBus
from server.mcp.resources import ResourceFront
from server.mcp.session_conversations import SessionConversations
from server.mcp.wire_errors import WireErrors
from server.mcp.wire_forms import INSTRUCTIONS, SERVER_NAME
from server.sdk_compat import CallerToolSchemas, connection_of, lowlevel_of, subscriptions_of
from server.speed.list_cache import ToolListCache
from toolsets.core.context import RequestInfo, ToolContext
from toolsets.views.changes import ResourceChanges
from toolsets.views.completion_values import Completions

if TYPE_CHECKING:
    from server.speed.lean_path import LeanPath, SessionWatch
    from server.stdio.session import StdioSession
    from server.tasks.engine import TaskEngine
    from server.tasks.front import TaskFront
    from toolsets.core.envelope import ToolResult
    from toolsets.core.tool import Tool
    from toolsets.extensions.plugins.catalog import PluginCatalog
    from toolsets.extensions.plugins.changes import PluginChange
    from toolsets.front_door import FrontDoor
    from toolsets.services import Services

logger = logging.getLogger("truloop.server")

ANNOUNCE_SECONDS = 2.0


class Composed(Protocol):
    """What a server needs of its deployment (server/runtime/composition.py's `Deployment`)."""

    @property
    def front_door(self) -> FrontDoor: ...

    @property
    def services(self) -> Services: ...

    @property
    def plugins(self) -> PluginCatalog | None: ...

    @property
    def tasks(self) -> TaskEngine | None: ...


class TruloopMCP(CallerToolSchemas, MCPServer):
    def __init__(
        self,
        surface: Surface,
        deployment: Composed,
        *,
        bridge: DeviceBridge | None = None,
        deferred_timeout: float = 300.0,
        stdio: bool = False,
        fast_paths: bool = True,
        page_size: int = DEFAULT_PAGE_SIZE,
        known_secrets: Iterable[str] = (),
        stdio_session: StdioSession | None = None,
        tool_lists: ToolListCache | None = None,
        lean_sessions: SessionWatch | None = None,
        **kwargs: Any,
    ) -> None:
        from server import __version__

        bus = ScopedBus()  # 2026-07-28 listen streams hear only of resources their caller may see
        self.apps = AppFront(self)  # MCP Apps, for the clients that negotiate them (server/mcp/mcp_apps.py)
        # the whole server middleware (inside the SDK's own) and its extensions, given at construction
        middleware: list[Any] = [WireErrors()]  # outside the lean path: every request answers the same errors
        self.lean: LeanPath | None = None
        # the one `tools/list` cache (the deployment's, shared with every path), kept only with the speed paths
        self.tool_lists = tool_lists if tool_lists is not None else ToolListCache(keep=fast_paths)
        if fast_paths:
            from server.speed.lean_path import LeanPath

            self.lean = LeanPath(self, self.tool_lists, lean_sessions)  # (told of each session: HTTP's lean_http)
            middleware.append(self.lean)
        extensions: list[Extension] = [self.apps.extension]
        self.task_front: TaskFront | None = None
        tasks = deployment.tasks
        middleware.append(HandshakeCapabilities(tasks=tasks is not None))
        if tasks is not None:  # MCP tasks (server/tasks/): inside the lean path, which takes only plain calls
            from server.tasks.front import TaskFront

            task_front = self.task_front = TaskFront(self, tasks)
            extensions.append(task_front)
            middleware.append(task_front)  # (the handshake era's task-making calls)
        super().__init__(
            SERVER_NAME,
            version=__version__,
            instructions=INSTRUCTIONS,
            subscriptions=bus,
            middleware=middleware,
            extensions=extensions,
            **kwargs,
        )
        if fast_paths:
            from server import speed

            speed.untraced(self)
        self.surface = surface
        self.deployment = deployment
        self.bridge = bridge
        self.deferred_timeout = deferred_timeout
        self.stdio = stdio  # served over stdio: no device can connect to this process
        # stdio: one session per process; with `stdio_session` it is shared with the lean front that serves the same
        # session's plain messages (server/stdio/lean_front.py), which tells it what happens outside its requests
        self.stdio_session = stdio_session
        self._process_session = stdio_session.id if stdio_session is not None else "stdio-" + secrets.token_hex(8)
        # handshake-era connections, told `notifications/tools/list_changed` when plugins change
        self._connections: weakref.WeakSet[Any] = weakref.WeakSet()
        self._sessions = SessionConversations()  # handshake-era conversations, one per connection
        self.pager = Pager(page_size)  # tools, resources and prompts lists, in pages (server/mcp/pagination.py)
        self.log = LogBridge(known_secrets, stdio_session)  # notifications/message (server/mcp/logging_bridge.py)
        services = deployment.services
        changes = services.resource_changes if services is not None else None
        changes = changes if changes is not None else ResourceChanges()
        plugin_views = None
        if deployment.plugins is not None:
            from toolsets.extensions.plugins.served_views import PluginViews

            plugin_views = PluginViews(deployment.plugins)
        self.resources = ResourceFront(self, changes, bus, plugin_views)
        self.prompts = PromptFront(self, self.resources)
        self.completer = CompletionFront(self, self.resources, Completions(services))  # (`completion` is MCPServer's)
        if deployment.plugins is not None:
            deployment.plugins.changes.subscribe(self.announce_plugin_change)
        # the protocol's methods this server serves itself (MCPServer's own would list its tool manager's tools)
        low = lowlevel_of(self)
        tools_list = self._tools_list if self.lean is None else self.lean.tools_list_handler
        low.add_request_handler("logging/setLevel", types.SetLevelRequestParams, self.log.set_level)
        low.add_request_handler("tools/list", types.PaginatedRequestParams, tools_list)
        low.add_request_handler("resources/list", types.PaginatedRequestParams, self.resources.list)
        low.add_request_handler("resources/templates/list", types.PaginatedRequestParams, self.resources.templates)
        low.add_request_handler("resources/read", types.ReadResourceRequestParams, self.resources.read)
        low.add_request_handler("resources/subscribe", types.SubscribeRequestParams, self.resources.subscribe)
        low.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, self.resources.unsubscribe)
        low.add_request_handler("subscriptions/listen", types.SubscriptionsListenRequestParams, self.resources.listen)
        low.add_request_handler("prompts/list", types.PaginatedRequestParams, self.prompts.list)
        low.add_request_handler("prompts/get", types.GetPromptRequestParams, self.prompts.get)
        low.add_request_handler("completion/complete", types.CompleteRequestParams, self.completer.complete)

    @property
    def services(self) -> Services:
        return self.deployment.services

    @property
    def front_door(self) -> FrontDoor:
        return self.deployment.front_door

    def _remember(self, session: Any) -> None:
        """A handshake-era connection, to tell when plugins change the tools (it has listed or called tools)."""
        if self.stdio_session is not None:
            self.stdio_session.saw_tools()
            return
        connection = connection_of(session)
        if connection is not None:
            self._connections.add(connection)

    async def announce_plugin_change(self, change: PluginChange) -> None:
        """What plugins publish changed: tell handshake-era sessions and 2026-07-28 listeners of the lists that
        changed, and the sessions subscribed to a resource whose file changed."""
        if change.tools:
            await self.announce_tools_changed()
        if change.prompts and self.stdio_session is None:  # (a stdio session hears it from its lean front)
            await self.prompts.announce_changed()
        if change.resources or change.updated:
            await self.resources.plugins_changed(change.updated, listed=change.resources)

    async def announce_tools_changed(self) -> None:
        """The published tools changed (plugins reloaded): tell handshake-era sessions and 2026-07-28 listeners."""
        for connection in list(self._connections):
            try:
                with anyio.move_on_after(ANNOUNCE_SECONDS):  # a client that does not read holds up no one else
                    await connection.send_tool_list_changed()
            except Exception:
                logger.debug("could not send tools/list_changed to a connection", exc_info=True)
                self._connections.discard(connection)
        await subscriptions_of(self).publish(ToolsListChanged())
        await self.log.tools_changed()

    def tool_input_schema(self, name: str) -> dict[str, Any] | None:
        """The input schema of the caller's tool `name` (None: no such tool; the call itself says so)."""
        tool = self.caller_tool(name)
        return tool.input_schema if tool is not None else None

    def caller_tool(self, name: str) -> Tool | None:
        """The tool `name` of the current request's caller's profile (None: no such tool)."""
        try:
            return self.front_door.toolset(self.surface.profile()).get(name)
        except Exception:
            return None

    async def list_tools(self) -> list[types.Tool]:
        """The caller's whole list (what 2026-07-28 sessions see)."""
        caller, profile = await self.surface.resolve()
        door = self.front_door
        return self.tool_lists.published(await door.visible(door.context_for(caller, profile)))

    async def _tools_list(self, ctx: Any, params: types.PaginatedRequestParams | None) -> dict[str, Any]:
        page, next_cursor = self.pager.page(await self.visible_tools(ctx), params, "tools")
        return self.tools_wire(ctx, page, next_cursor)

    def tools_wire(self, request: Any, page: list[Tool], next_cursor: str | None) -> dict[str, Any]:
        """One page of `tools/list` in its wire form; with the apps' bindings for a client that negotiated apps."""
        wire = self.tool_lists.wire(page, next_cursor)
        return self.apps.tools(wire, page) if self.apps.negotiated(request) else wire

    async def visible_tools(self, request: ServerRequestContext[Any, Any]) -> list[Tool]:
        """The tools this request's caller sees, in its era and conversation."""
        caller, profile = await self.surface.resolve()
        modern = is_modern(request.protocol_version)
        if not modern:
            self._remember(request.session)
        door = self.front_door
        ctx = door.context_for(caller, profile, conversation=self._conversation(request.session, modern))
        return await door.visible(ctx, fixed_list=modern)

    def conversation_of(self, session: Any) -> Any:
        """A handshake-era session's conversation."""
        return self._conversation(session, False)

    def _conversation(self, session: Any, modern: bool) -> Any:
        """A handshake-era session is its own conversation; a 2026-07-28 caller's is the front door's default."""
        if modern:
            return None
        return self.stdio_session.conversation if self.stdio_session is not None else self._sessions.get(session)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> types.CallToolResult | types.InputRequiredResult:
        from server.mcp.wire_forms import to_mcp_result

        request = None if context is None else _request_of(context)
        if context is None or request is None:  # called in-process, outside any MCP request
            caller, profile = await self.surface.resolve()
            door = self.front_door
            deferred = None
            if self.bridge is not None:
                from bridge.deferred_router import DeferredRouter

                deferred = DeferredRouter(self.bridge, None, timeout=self.deferred_timeout, stdio=self.stdio)
            ctx = door.context_for(caller, profile, request=RequestInfo(transport="in-process"), deferred=deferred)
            return to_mcp_result(await route_call(door, ctx, name, arguments, client=False))
        outcome = await self._run(name, arguments, request, lambda: context)
        if is_modern(request.protocol_version):
            refuse_missing_capability(outcome)
            start_task_now(outcome)
        return to_mcp_result(outcome)

    async def _run(
        self,
        name: str,
        arguments: dict[str, Any],
        request: ServerRequestContext[Any, Any],
        context: Callable[[], Context],
    ) -> ToolResult:
        caller, profile = await self.surface.resolve()
        door = self.front_door
        session = request.session
        modern = is_modern(request.protocol_version)
        if not modern:
            self._remember(session)
            self.log.remember(request)
        started = time.monotonic()
        ports = self.ports(request, context)
        ctx: ToolContext[Any] = door.context_for(
            caller,
            profile,
            request=self.request_info(request, profile),
            conversation=self._conversation(session, modern),
            confirmer=ports,
            deferred=ports,
            composer=ports,
            client=ports,
            report_progress=session.report_progress,
        )
        tasks = self.task_front
        outcome = await route_call(
            door, ctx, name, arguments, fixed_list=modern, list_changed=session.send_tool_list_changed,
            asked_task=None if tasks is None else lambda: tasks.asked_in_request(request, name, arguments),
        )  # fmt: skip
        await self.log.tool_outcome(request, name, outcome, started)
        return outcome

    def ports(self, request: ServerRequestContext[Any, Any], context: Callable[[], Context]) -> LoggedPorts:
        """One request's ports to the client and the device (`context` makes the SDK's `Context` when first needed)."""
        return LoggedPorts(self.log, request, context, self.bridge, timeout=self.deferred_timeout, stdio=self.stdio)

    def sdk_context(self, request: ServerRequestContext[Any, Any], params: Any) -> Context:
        """The SDK's `Context` of one request (`params`: its validated params, which carry its 2026-07-28 answers)."""
        return Context(
            request_context=request, mcp_server=self, input_params=params, subscriptions=subscriptions_of(self)
        )

    def request_info(self, request: ServerRequestContext[Any, Any], profile: str) -> RequestInfo:
        headers = getattr(request.request, "headers", None) or {}
        session_id = headers.get("mcp-session-id") or (self._process_session if self.stdio else None)
        return mcp_request_info(
            request.request_id, session_id, stdio=self.stdio, protocol_version=request.protocol_version, profile=profile
        )


def refuse_missing_capability(outcome: ToolResult) -> None:
    """(2026-07-28) A call that needs a client capability the client did not declare is the protocol's error
    -32021, with the capabilities in `requiredCapabilities`, not a tool result."""
    from server.mcp.plugin_requests import json_rpc_error
    from toolsets.core.envelope import ToolErr
    from toolsets.core.errors import ErrorCode

    if isinstance(outcome, ToolErr) and outcome.code is ErrorCode.CLIENT_CAPABILITY:
        raise json_rpc_error(outcome)


def start_task_now(outcome: ToolResult) -> None:
    """(2026-07-28) A run that reached `start_task` on a request that asked for a task: the task front makes it."""
    from server.mcp.call_ports import StartTask, TaskStartNow
    from toolsets.core.envelope import ToolInputRequired

    if isinstance(outcome, ToolInputRequired) and isinstance(outcome.payload, StartTask):
        raise TaskStartNow(outcome.payload.answers)


def _request_of(context: Context) -> ServerRequestContext[Any, Any] | None:
    try:
        return context.request_context
    except ValueError:  # a Context made outside a request
        return None
