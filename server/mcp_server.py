"""The MCP face of the toolsets: an `MCPServer` whose tools come from a profile, per caller.

`tools/list` and `tools/call` are answered from the caller's profile (the `Surface` decides
which); every call goes through `toolsets.dispatch`, with the MCP client wired in as the
confirmation port.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

import mcp.types as types
from mcp.server.mcpserver import Context, MCPServer

from bridge.deferred import DeferredRouter
from bridge.elicitation import ElicitationConfirmer, McpAsker
from bridge.sampling import SamplingComposer
from bridge.service import DeviceBridge
from server.identity import Surface
from server.results import to_mcp_result, to_mcp_tool
from toolsets.context import Caller, RequestInfo, ToolContext
from toolsets.dispatch import dispatch
from toolsets.toolset import AbstractToolset

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
        self._published: dict[int, list[types.Tool]] = {}
        self._known_users: dict[str, str] = {}
        self._lowlevel_server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, _set_level)

    def _published_tools(self, toolset: AbstractToolset) -> list[types.Tool]:
        published = self._published.get(id(toolset))
        if published is None:
            published = self._published[id(toolset)] = [to_mcp_tool(tool) for tool in toolset]
        return published

    async def list_tools(self) -> list[types.Tool]:
        _, toolset = self.surface.resolve()
        return self._published_tools(toolset)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> types.CallToolResult | types.InputRequiredResult:
        caller, toolset = self.surface.resolve()
        ctx: ToolContext[Any] = ToolContext(caller=caller, deps=self.services, confirm_policy=self.confirm_policy)

        if context is not None and _in_request(context):
            ctx.request = self._request_info(context, toolset.name)
            asker = McpAsker(context)
            ctx.confirmer = ElicitationConfirmer(asker)
            ctx.composer = SamplingComposer(asker)
            ctx.report_progress = context.report_progress
            ctx.deferred = DeferredRouter(
                self.bridge, asker, timeout=self.deferred_timeout, progress=context.report_progress, stdio=self.stdio
            )
        elif self.bridge is not None:
            ctx.deferred = DeferredRouter(self.bridge, None, timeout=self.deferred_timeout, stdio=self.stdio)
        await self._enter_directory(caller)
        return to_mcp_result(await dispatch(toolset, name, arguments, ctx))

    def _request_info(self, context: Context, profile: str) -> RequestInfo:
        headers = context.headers or {}
        return RequestInfo(
            request_id=str(context.request_id),
            session_id=headers.get("mcp-session-id") or (self._process_session if self.stdio else None),
            transport="stdio" if self.stdio else "http",
            protocol_version=context.protocol_version,
            profile=profile,
        )

    async def _enter_directory(self, caller: Caller) -> None:
        """Users enter the directory on first use, from their token's claims (or as `--user` on stdio)."""
        if self.services is None or self._known_users.get(caller.user_id) == caller.role:
            return
        claims = dict(caller.claims) or {"sub": caller.user_id}
        try:
            await self.services.users.ensure_from_claims(claims, caller.role)
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


def _in_request(context: Context) -> bool:
    try:
        return context.request_context is not None
    except ValueError:
        return False
