"""What a tool call's outcome is told to the client as (`notifications/message`), and at which level: the rules of
`server.mcp.logging_bridge`, without the SDK (the stdio server's lean front tells its calls' outcomes the same way).

Levels are RFC 5424's as MCP names them, severity ascending; until a handshake-era session sets one with
`logging/setLevel` it hears `error` and above (`DEFAULT_LEVEL`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from toolsets.core.envelope import ToolCancelled, ToolErr, ToolOk
from toolsets.core.errors import ErrorCode

if TYPE_CHECKING:
    from toolsets.core.envelope import ToolResult
    from toolsets.pipeline.audit.masking import Masker

LEVELS: tuple[str, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
DEFAULT_LEVEL = "error"
LOGGER_NAME = "truloop"
TOOLS_CHANGED = {"event": "tools_changed", "message": "The tool list changed; list the tools again"}
FAILURES = frozenset({
    ErrorCode.HANDLER_ERROR, ErrorCode.STORE_UNAVAILABLE, ErrorCode.NO_ROUTE, ErrorCode.BRIDGE_UNAVAILABLE,
    ErrorCode.TIMEOUT, ErrorCode.DEVICE_ERROR, ErrorCode.UPSTREAM_AUTH, ErrorCode.UPSTREAM_RATE_LIMITED,
    ErrorCode.UPSTREAM_REJECTED, ErrorCode.UPSTREAM_UNAVAILABLE, ErrorCode.UPSTREAM_ERROR,
})  # fmt: skip


def at_least(level: str, threshold: str) -> bool:
    return LEVELS.index(level) >= LEVELS.index(threshold)


def outcome_level(outcome: ToolResult) -> str | None:
    """The level a call's outcome is told at; None for a call waiting on the client's input (the client is being
    asked, not told)."""
    if isinstance(outcome, ToolErr):
        if outcome.code in FAILURES:
            return "error"
        return "warning"
    if isinstance(outcome, ToolCancelled):
        return "info"
    if isinstance(outcome, ToolOk):
        return "debug"
    return None


def outcome_data(masker: Masker, name: str, outcome: ToolResult, started: float) -> dict[str, Any]:
    """What is told of a call of `name` that began at `started` (monotonic), at its `outcome_level`: asked only for
    an outcome that has one (a call waiting on the client's input is not told), and only when the client hears it."""
    tool = masker.text(name)
    if isinstance(outcome, ToolErr):
        if outcome.code in FAILURES:
            event = "tool_failed"
        elif outcome.code is ErrorCode.PRECONDITION:
            event = "gate_refused"
        else:
            event = "tool_refused"
        return {"event": event, "tool": tool, "code": outcome.code.value, "message": masker.text(outcome.reason)}
    if isinstance(outcome, ToolCancelled):
        return {"event": "tool_cancelled", "tool": tool, "message": masker.text(outcome.reason)}
    return {"event": "tool_answered", "tool": tool, "seconds": round(time.monotonic() - started, 3)}


def message_params(level: str, data: dict[str, Any]) -> dict[str, Any]:
    """The params of the `notifications/message` saying `data` at `level`."""
    return {"level": level, "data": data, "logger": LOGGER_NAME}
