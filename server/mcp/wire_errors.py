"""What a failed request answers on the wire, for every request of every front.

- An `MCPError` keeps its code; its message and a text `data` repeat at most a short prefix of what the client
  sent (`toolsets.core.echo`): the SDK's `Method not found` carries the whole method name as `data`, and an
  answer must never grow with the request (nor a slow reader's backlog with it).
- Any other exception is a fault of this server: logged here with its traceback, answered `-32603 Internal
  error` with nothing of the exception in it (the SDK's dispatcher would answer code 0 with its text).
- A pydantic `ValidationError` passes through: the dispatcher answers it `-32602` with no pydantic text.

- A request before the handshake (and without a 2026-07-28 envelope) says to initialize first, where the SDK's gate
  says only "Invalid request parameters".

`WireErrors` is a server middleware (outside the lean path, so the speed paths answer the same);
`wire_error` is the same mapping for the fronts that answer without the SDK's dispatcher.
"""

from __future__ import annotations

import logging
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, ErrorData
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
            if exc.error.code == INVALID_PARAMS and not_initialized(ctx):  # the SDK's gate says no more than -32602
                data = {"method": echo(ctx.method)}
                raise MCPError(code=INVALID_PARAMS, message=NOT_INITIALIZED, data=data) from None
            error = clipped(exc.error)
            if error is exc.error:
                raise
            raise MCPError.from_error_data(error) from None
        except ValidationError:
            raise
        except Exception as exc:
            raise MCPError.from_error_data(wire_error(exc, ctx.method)) from None


NOT_INITIALIZED = (
    "Not initialized: send `initialize` first (then `notifications/initialized`), or, speaking 2026-07-28, put the "
    "request envelope in params._meta (io.modelcontextprotocol/protocolVersion and /clientCapabilities)."
)


def not_initialized(ctx: ServerRequestContext[Any, Any]) -> bool:
    """A request on a connection whose handshake has not happened, that carries no 2026-07-28 envelope either."""
    from server.sdk_compat import connection_of

    connection = connection_of(ctx.session)
    if ctx.method == "initialize" or connection is None or connection.initialize_accepted:
        return False
    params = ctx.params if isinstance(ctx.params, dict) else {}
    meta = params.get("_meta")
    return not (isinstance(meta, dict) and "io.modelcontextprotocol/protocolVersion" in meta)
