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
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ProgressSink = Callable[[float, float | None, str | None], None]


def _no_progress(progress: float, total: float | None, message: str | None) -> None:
    return None


class _Done:
    """What `report_progress` returns: awaiting it is allowed and returns at once."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        return iter(())


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

    def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> _Done:
        """Never blocks and never fails the call: progress is a hint for the user's host."""
        try:
            self._progress(float(progress), None if total is None else float(total), message)
        except Exception:
            self.logger.debug("progress not sent", exc_info=True)
        return _Done()


def plugin_logger(tool_name: str) -> logging.Logger:
    return logging.getLogger(f"truloop.plugin.{tool_name}")
