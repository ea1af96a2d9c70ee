"""What clients hear as `notifications/message`: tool errors, gate refusals, deferred waits and plugin reloads.

Levels (RFC 5424, as MCP names them):

- `error`: a tool crashed, or a store, an upstream or the device route failed (`handler_error`,
  `store_unavailable`, `upstream_*`, `no_route`, `bridge_unavailable`, `timeout`, `device_error`);
- `warning`: a gate refused a call (`precondition`), or the tool refused it (`validation`, `not_found`, ...);
- `info`: a deferred tool waits for the user's device or client; the tool list changed (plugins reloaded); a call
  was cancelled;
- `debug`: a call answered.

Who hears what: a handshake-era session (2025-06-18, 2025-11-25) hears the levels at and above what it set with
`logging/setLevel`, and, until it sets one, `error` and above (`DEFAULT_LEVEL`). A 2026-07-28 request hears what
its `_meta` asked for (`io.modelcontextprotocol/logLevel`), nothing otherwise (the SDK's rule for that era); a
2026-07-28 client has no session, so it hears no plugin reloads (it has `subscriptions/listen` for the tool list).
A plugin's own messages (`context.log`) follow the same rules, except that a handshake-era session that never set a
level hears them from `info` up (`PLUGIN_LEVEL`): the plugin chose to tell the client. A message about a call rides
that call's response stream. Every text is masked as audit lines are
(`toolsets.pipeline.audit.masking`): no token, key, e-mail address or phone number reaches a client's log.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import mcp.types as types
from mcp.server.connection import allowed_log_levels

from server.mcp.call_ports import CallPorts
from server.mcp.log_events import (
    DEFAULT_LEVEL,
    LOGGER_NAME,
    TOOLS_CHANGED,
    at_least,
    message_params,
    outcome_data,
    outcome_level,
)
from server.mcp.protocol_era import is_modern
from server.sdk_compat import connection_of

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from server.stdio.session import StdioSession
    from toolsets.core.context import DeferredCall
    from toolsets.core.envelope import ToolResult
    from toolsets.pipeline.audit.masking import Masker

logger = logging.getLogger("truloop.server")


class LogBridge:
    """One server's `notifications/message`: each handshake-era session's level, and what is said at which."""

    def __init__(self, known_secrets: Iterable[str] = (), stdio_session: StdioSession | None = None) -> None:
        self._secrets = tuple(known_secrets)
        # a stdio process's one handshake-era session, shared with its lean front: its level lives there, and the
        # front tells it what happens outside its requests
        self._stdio_session = stdio_session
        self._made: Masker | None = None
        self._levels: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self._connections: weakref.WeakSet[Any] = weakref.WeakSet()

    # -- logging/setLevel ---------------------------------------------------------------------------------------

    async def set_level(self, ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams) -> Any:
        connection = connection_of(ctx.session)
        if self._stdio_session is not None and not is_modern(ctx.protocol_version):
            self._stdio_session.set_log_level(params.level)
        elif connection is not None and not is_modern(ctx.protocol_version):
            self._levels[connection] = params.level
            self._connections.add(connection)
        return types.EmptyResult()

    @property
    def _masker(self) -> Masker:
        """The audit log's masking, with the server's own secrets (made on first use: not before `initialize`)."""
        if self._made is None:
            from toolsets.pipeline.audit.masking import Masker

            self._made = Masker(self._secrets)
        return self._made

    def masked(self, data: Any) -> Any:
        """`data` masked as audit lines are (tokens, keys, e-mail addresses, phone numbers, secret-named fields)."""
        return self._masker.value(data)

    def level_of(self, connection: Any, default: str = DEFAULT_LEVEL) -> str:
        """The level `connection` asked for, or `default` when it never set one."""
        if self._stdio_session is not None:
            return self._stdio_session.log_level if self._stdio_session.level_set else default
        return self._levels.get(connection, default)

    # -- what is said ------------------------------------------------------------------------------------------

    async def tool_outcome(
        self, request: ServerRequestContext[Any, Any], name: str, outcome: ToolResult, started: float
    ) -> None:
        level = outcome_level(outcome)  # None: input required: the client is being asked, not told
        if level is None or not self.hears(request, level):  # (the masking made only for what is said)
            return
        await self.send(request, level, outcome_data(self._masker, name, outcome, started))

    async def deferred_wait(self, request: ServerRequestContext[Any, Any], call: DeferredCall) -> None:
        method = call.tool.device.method if call.tool.device is not None else None
        data = {
            "event": "deferred_wait",
            "tool": call.tool_name,
            "message": f"{call.tool_name} runs on your side; waiting for your device or client to answer",
        }
        if method:
            data["method"] = method
        await self.send(request, "info", data)

    async def tools_changed(self) -> None:
        """The tool list changed (plugins reloaded): every handshake-era session that listens at `info`."""
        await self.broadcast("info", dict(TOOLS_CHANGED))

    # -- delivery ----------------------------------------------------------------------------------------------

    def remember(self, request: ServerRequestContext[Any, Any]) -> None:
        """A handshake-era session to tell about what happens outside its requests (plugin reloads)."""
        if self._stdio_session is not None:
            self._stdio_session.heard_of()
        elif not is_modern(request.protocol_version):
            connection = connection_of(request.session)
            if connection is not None:
                self._connections.add(connection)

    def hears(self, request: ServerRequestContext[Any, Any], level: str, default: str = DEFAULT_LEVEL) -> bool:
        """Whether a message at `level` reaches `request`'s client (its session's level, or the request's own)."""
        if is_modern(request.protocol_version):
            return level in allowed_log_levels(request.protocol_version, request.meta)
        return at_least(level, self.level_of(connection_of(request.session), default))

    async def send(
        self,
        request: ServerRequestContext[Any, Any],
        level: str,
        data: Any,
        *,
        logger_name: str = LOGGER_NAME,
        default: str = DEFAULT_LEVEL,
    ) -> None:
        """`data` as a `notifications/message` on `request`'s stream, if its session or the request asks for `level`
        (`default`: what a handshake-era session that never set a level hears)."""
        if not self.hears(request, level, default):
            return
        message = types.LoggingMessageNotification(
            params=types.LoggingMessageNotificationParams(level=level, data=data, logger=logger_name)
        )
        try:
            await request.session.send_notification(message, related_request_id=request.request_id)
        except Exception:
            logger.debug("could not send a log message to the client", exc_info=True)

    async def broadcast(self, level: str, data: dict[str, Any]) -> None:
        params = message_params(level, data)
        for connection in list(self._connections):
            if at_least(level, self.level_of(connection)):
                try:
                    await connection.notify("notifications/message", params)
                except Exception:
                    logger.debug("could not send a log message to a connection", exc_info=True)
                    self._connections.discard(connection)


PLUGIN_LEVEL = "info"  # what a handshake-era session that never set a level hears of a plugin's own messages


class LoggedPorts(CallPorts):
    """A call's ports that tell the client (`info`) when a deferred tool starts waiting for the user's side, and
    carry a plugin's own log messages (`ClientPort.log`), masked like every message."""

    __slots__ = ("_log", "_request")

    def __init__(self, log: LogBridge, request: ServerRequestContext[Any, Any], *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._log = log
        self._request = request

    async def resolve(self, call: DeferredCall) -> Any:
        await self._log.deferred_wait(self._request, call)
        return await super().resolve(call)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        masked = self._log.masked(data)
        name = f"{LOGGER_NAME}.plugin.{logger}" if logger else LOGGER_NAME
        await self._log.send(self._request, level, masked, logger_name=name[:200], default=PLUGIN_LEVEL)
