"""One tool call on its way through a toolset's wrappers, and turning its outcome into an envelope.

Every wrapper's `call_tool` returns a `ToolResult`; exceptions (a tool's `ToolError`, a port's
`InputRequired`, a bug) become envelopes in `settle`, which the innermost step, each middleware's
`call_next` and the dispatcher (outermost) all use, so whatever wraps a call sees an envelope.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from toolsets.core.call_notes import CallNotes
from toolsets.core.context import ToolContext
from toolsets.core.envelope import ToolCancelled, ToolErr, ToolInputRequired, ToolResult
from toolsets.core.errors import CallCancelled, ErrorCode, InputRequired, ToolError
from toolsets.core.tool import Tool
from toolsets.infra.store.errors import NotFound, StoreUnavailable

logger = logging.getLogger("truloop.dispatch")


_PROCESS = os.urandom(6).hex()  # unique per process, so ids from several replicas never collide
_NEXT = itertools.count(1)


def new_call_id() -> str:
    return f"tc_{_PROCESS}{next(_NEXT):x}"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call whose tool was found and whose arguments were validated (`tool.args_model`)."""

    tool: Tool
    arguments: BaseModel
    ctx: ToolContext[Any]
    call_id: str = field(default_factory=new_call_id)  # one id per call: its audit lines and its trace span
    notes: CallNotes = field(default_factory=CallNotes)  # kept by `replace`, so a wrapper's new call shares them


async def settle(tool_name: str, pending: Awaitable[ToolResult]) -> ToolResult:
    """The call's envelope, whatever happened below; cancellation of the surrounding task still propagates."""
    try:
        return await pending
    except Exception as exc:
        return envelope_of(tool_name, exc)


def envelope_of(tool_name: str, exc: Exception) -> ToolResult:
    """The envelope of an exception raised below a call (`settle`'s, for wrappers that catch it themselves)."""
    if isinstance(exc, InputRequired):
        return ToolInputRequired(exc.payload)
    if isinstance(exc, CallCancelled):
        return ToolCancelled(exc.reason)
    if isinstance(exc, ToolError):
        logger.info("tool %r refused: code=%s", tool_name, exc.code)
        return ToolErr(exc.code, exc.message, exc.retryable, exc.detail)
    if isinstance(exc, StoreUnavailable):
        return ToolErr(ErrorCode.STORE_UNAVAILABLE, f"The tool {tool_name} could not run: {exc}.", True)
    if isinstance(exc, NotFound):  # what the tool checked was deleted before it wrote (a race, not a crash)
        logger.info("tool %r: %s", tool_name, exc)
        return ToolErr(ErrorCode.NOT_FOUND, f"{exc}.")
    logger.error("tool %r raised an unexpected exception", tool_name, exc_info=exc)
    return ToolErr(
        ErrorCode.HANDLER_ERROR,
        f"The tool {tool_name} failed with an internal error ({type(exc).__name__}). "
        "Your arguments were valid; try again later, or tell the user the action did not complete.",
    )
