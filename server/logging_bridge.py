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
A message about a call rides that call's response stream. Every text is masked as audit lines are
(`toolsets.pipeline.audit.masking`): no token, key, e-mail address or phone number reaches a client's log.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, get_args

import mcp.types as types
from mcp.server.connection import allowed_log_levels

from bridge.elicitation import is_modern
from server.call_ports import CallPorts
from server.sdk_compat import connection_of
from toolsets.core.envelope import ToolCancelled, ToolErr, ToolOk
from toolsets.core.errors import ErrorCode

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from toolsets.core.context import DeferredCall
    from toolsets.core.envelope import ToolResult
    from toolsets.pipeline.audit.masking import Masker

logger = logging.getLogger("truloop.server")

LEVELS: tuple[str, ...] = get_args(types.LoggingLevel)  # severity ascending: debug ... emergency
DEFAULT_LEVEL = "error"
LOGGER_NAME = "truloop"
FAILURES = frozenset({
    ErrorCode.HANDLER_ERROR, ErrorCode.STORE_UNAVAILABLE, ErrorCode.NO_ROUTE, ErrorCode.BRIDGE_UNAVAILABLE,
    ErrorCode.TIMEOUT, ErrorCode.DEVICE_ERROR, ErrorCode.UPSTREAM_AUTH, ErrorCode.UPSTREAM_RATE_LIMITED,
    ErrorCode.UPSTREAM_REJECTED, ErrorCode.UPSTREAM_UNAVAILABLE, ErrorCode.UPSTREAM_ERROR,
})  # fmt: skip


def at_least(level: str, threshold: str) -> bool:
    return LEVELS.index(level) >= LEVELS.index(threshold)


class LogBridge:
    """One server's `notifications/message`: each handshake-era session's level, and what is said at which."""

    def __init__(self, known_secrets: Iterable[str] = ()) -> None:
        self._secrets = tuple(known_secrets)
        self._made: Masker | None = None
        self._levels: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self._connections: weakref.WeakSet[Any] = weakref.WeakSet()

    # -- logging/setLevel ---------------------------------------------------------------------------------------

    async def set_level(self, ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams) -> Any:
        connection = connection_of(ctx.session)
        if connection is not None and not is_modern(ctx.protocol_version):
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

    def level_of(self, connection: Any) -> str:
        return self._levels.get(connection, DEFAULT_LEVEL)

    # -- what is said ------------------------------------------------------------------------------------------

    async def tool_outcome(
        self, request: ServerRequestContext[Any, Any], name: str, outcome: ToolResult, started: float
    ) -> None:
        seconds = round(time.monotonic() - started, 3)
        tool = self._masker.text(name)
        if isinstance(outcome, ToolErr):
            if outcome.code in FAILURES:
                level, event = "error", "tool_failed"
            elif outcome.code is ErrorCode.PRECONDITION:
                level, event = "warning", "gate_refused"
            else:
                level, event = "warning", "tool_refused"
            reason = self._masker.text(outcome.reason)
            data = {"event": event, "tool": tool, "code": outcome.code.value, "message": reason}
        elif isinstance(outcome, ToolCancelled):
            level = "info"
            data = {"event": "tool_cancelled", "tool": tool, "message": self._masker.text(outcome.reason)}
        elif isinstance(outcome, ToolOk):
            level, data = "debug", {"event": "tool_answered", "tool": tool, "seconds": seconds}
        else:
            return  # input required: the client is being asked, not told
        await self.send(request, level, data)

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
        message = "The tool list changed; list the tools again"
        await self.broadcast("info", {"event": "tools_changed", "message": message})

    # -- delivery ----------------------------------------------------------------------------------------------

    def remember(self, request: ServerRequestContext[Any, Any]) -> None:
        """A handshake-era session to tell about what happens outside its requests (plugin reloads)."""
        if not is_modern(request.protocol_version):
            connection = connection_of(request.session)
            if connection is not None:
                self._connections.add(connection)

    async def send(self, request: ServerRequestContext[Any, Any], level: str, data: dict[str, Any]) -> None:
        """`data` as a `notifications/message` on `request`'s stream, if its session or the request asks for `level`."""
        if is_modern(request.protocol_version):
            if level not in allowed_log_levels(request.protocol_version, request.meta):
                return
        elif not at_least(level, self.level_of(connection_of(request.session))):
            return
        message = types.LoggingMessageNotification(
            params=types.LoggingMessageNotificationParams(level=level, data=data, logger=LOGGER_NAME)  # type: ignore[arg-type]
        )
        try:
            await request.session.send_notification(message, related_request_id=request.request_id)
        except Exception:
            logger.debug("could not send a log message to the client", exc_info=True)

    async def broadcast(self, level: str, data: dict[str, Any]) -> None:
        params = {"level": level, "data": data, "logger": LOGGER_NAME}
        for connection in list(self._connections):
            if at_least(level, self.level_of(connection)):
                try:
                    await connection.notify("notifications/message", params)
                except Exception:
                    logger.debug("could not send a log message to a connection", exc_info=True)
                    self._connections.discard(connection)


class LoggedPorts(CallPorts):
    """A call's ports that tell the client (`info`) when a deferred tool starts waiting for the user's side."""

    __slots__ = ("_log", "_request")

    def __init__(self, log: LogBridge, request: ServerRequestContext[Any, Any], *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._log = log
        self._request = request

    async def resolve(self, call: DeferredCall) -> Any:
        await self._log.deferred_wait(self._request, call)
        return await super().resolve(call)
