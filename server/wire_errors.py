"""What a failed request answers on the wire, for every request of every front.

- An `MCPError` keeps its code; its message and a text `data` repeat at most a short prefix of what the client
  sent (`toolsets.core.echo`): the SDK's `Method not found` carries the whole method name as `data`, and an
  answer must never grow with the request (nor a slow reader's backlog with it).
- Any other exception is a fault of this server: logged here with its traceback, answered `-32603 Internal
  error` with nothing of the exception in it (the SDK's dispatcher would answer code 0 with its text).
- A pydantic `ValidationError` passes through: the dispatcher answers it `-32602` with no pydantic text.

`WireErrors` is a server middleware (outside the lean path, so the speed paths answer the same);
`wire_error` is the same mapping for the fronts that answer without the SDK's dispatcher.
"""

from __future__ import annotations

import logging
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, ErrorData
from pydantic import ValidationError

from toolsets.core.echo import echo

logger = logging.getLogger("truloop.server")

MESSAGE_LIMIT = 400  # an error's own message (ours are shorter), clipped with what it quotes


def clipped(error: ErrorData) -> ErrorData:
    """`error` with its message and a text `data` cut to a short prefix (itself when both are short)."""
    message = echo(error.message, MESSAGE_LIMIT)
    data = echo(error.data) if isinstance(error.data, str) else error.data
    if message is error.message and data is error.data:
        return error
    return error.model_copy(update={"message": message, "data": data})


def wire_error(exc: Exception, method: str) -> ErrorData:
    """The answer to a request whose handler raised `exc` (logged when it is not an `MCPError`)."""
    if isinstance(exc, MCPError):
        return clipped(exc.error)
    if isinstance(exc, ValidationError):
        return ErrorData(code=-32602, message="Invalid request parameters", data="")
    logger.error("%s failed", echo(method), exc_info=exc)
    return ErrorData(code=INTERNAL_ERROR, message="Internal error")


class WireErrors:
    """The server middleware that applies `wire_error` to every request the SDK's runner serves."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        try:
            return await call_next(ctx)
        except MCPError as exc:
            error = clipped(exc.error)
            if error is exc.error:
                raise
            raise MCPError.from_error_data(error) from None
        except ValidationError:
            raise
        except Exception as exc:
            raise MCPError.from_error_data(wire_error(exc, ctx.method)) from None
