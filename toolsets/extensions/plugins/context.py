"""`PluginContext`: all a plugin is given about the server (never its internals).

context.tool_name      the plugin's tool name (TOOL_SPEC["name"])
context.version        this version's content hash (the first 12 hex digits of the file's SHA-256)
context.caller_id      who is calling (None in create())
context.role           "member" or "guest" (None in create())
context.request_id     the MCP request's id, for your logs (None in create())
context.logger         a `logging.Logger` named truloop.plugin.<name> (the server's stderr)
context.data_dir       a folder of this plugin's own, kept across versions and restarts
context.report_progress(progress, total=None, message=None)
                       MCP progress for this call; works in sync and async code, with or without `await`
context.call_tool(name, arguments=None)
                       another tool of the assistant, called as this call's caller (their profile, the gates,
                       confirmation and the audit log apply as to the model's own calls): its result (a dict).
                       From sync code it returns the result; from async code, `await` it. A failure raises
                       `ToolCallError` (`.code`, `.reason`, `.retryable`). Not available in create().
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ProgressSink = Callable[[float, float | None, str | None], None]
# Sends one nested call (tool name, arguments) and returns a future of its JSON envelope (nested.py's shape).
NestedSink = Callable[[str, dict[str, Any]], "concurrent.futures.Future[dict[str, Any]]"]


class ToolCallError(Exception):
    """A tool called through `context.call_tool` failed, was cancelled or was refused; `code` is the assistant's
    error code (validation, not_found, forbidden, cancelled, ...), `reason` what the model would have read."""

    def __init__(self, code: str, reason: str, retryable: bool = False) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason
        self.retryable = retryable


def _no_nested(name: str, arguments: dict[str, Any]) -> concurrent.futures.Future[dict[str, Any]]:
    future: concurrent.futures.Future[dict[str, Any]] = concurrent.futures.Future()
    future.set_result(
        {"ok": False, "code": "not_configured", "reason": "context.call_tool is not available here (in create)"}
    )
    return future


def _no_progress(progress: float, total: float | None, message: str | None) -> None:
    return None


class _Done:
    """What `report_progress` returns: awaiting it is allowed and returns at once."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield


@dataclass(frozen=True, slots=True)
class PluginContext:
    tool_name: str
    version: str
    data_dir: Path
    logger: logging.Logger
    caller_id: str | None = None
    role: str | None = None
    request_id: str | None = None
    _progress: ProgressSink = field(default=_no_progress, repr=False)
    _nested: NestedSink = field(default=_no_nested, repr=False)

    def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> _Done:
        """Never blocks and never fails the call: progress is a hint for the user's host."""
        try:
            self._progress(float(progress), None if total is None else float(total), message)
        except Exception:
            self.logger.debug("progress not sent", exc_info=True)
        return _Done()

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """Another tool's result, as this call's caller. Returns it from sync code; returns an awaitable on an
        event loop (async code). Raises `ToolCallError` when the call fails."""
        if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
            raise TypeError("call_tool(name: str, arguments: dict | None)")
        future = self._nested(name, dict(arguments or {}))
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return _unwrapped(future.result())
        return _awaited(future)


async def _awaited(future: concurrent.futures.Future[dict[str, Any]]) -> Any:
    return _unwrapped(await asyncio.wrap_future(future))


def _unwrapped(envelope: dict[str, Any]) -> Any:
    if envelope.get("ok"):
        return envelope.get("value")
    raise ToolCallError(
        str(envelope.get("code") or "handler_error"), str(envelope.get("reason") or ""), bool(envelope.get("retryable"))
    )


def plugin_logger(tool_name: str) -> logging.Logger:
    return logging.getLogger(f"truloop.plugin.{tool_name}")
