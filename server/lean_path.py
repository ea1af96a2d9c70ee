"""The lean path: `tools/list` and handshake-era `tools/call` answered by the server middleware itself.

The SDK's way through a request validates its params twice (against the protocol surface, then into the
handler's model), wraps the request in an `MCPServer` `Context`, and turns the handler's result models
into a dict, validates that dict against the surface and dumps it again. For the two messages a host
sends most, that was most of the server's own work per message (docs/performance.md). This middleware
(the SDK's public `Server.middleware` tier, which may answer without `call_next`) takes them when they
are plain, and hands everything else to the SDK unchanged:

- `tools/call` on a handshake-era connection (2025-06-18, 2025-11-25) whose params are exactly `name`,
  `arguments` and an optional `_meta` whose `progressToken`, if any, is a string or an integer: checked once, run by
  `TruloopMCP.lean_call`, answered as the wire dict `to_wire_result` builds (what the SDK's serializer
  would have made of the same outcome). 2026-07-28 calls keep the SDK's path: their results carry the
  envelope fields (`resultType`, the `serverInfo` stamp) and may be `input_required`.
- `tools/list` in either era, once its params passed the SDK's own check: the SDK's answer for a given
  list of tools is kept and given again while the caller's list is the same (`TruloopMCP.lean_list`).

Either way only on a connection whose handshake the SDK accepted, so the pre-`initialize` refusal stays
the SDK's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp_types.methods import validate_client_request

from bridge.elicitation import is_modern
from server.exposure import connection_of

if TYPE_CHECKING:
    from server.mcp_server import TruloopMCP


class LeanPath:
    """A `ServerMiddleware`: the innermost of `Server.middleware` (after the SDK's OpenTelemetry one, if any)."""

    def __init__(self, server: TruloopMCP) -> None:
        self._server = server

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        method = ctx.method
        if method == "tools/call":
            call = plain_call(ctx.params)
            if call is not None and not is_modern(ctx.protocol_version) and _accepted(ctx):
                return await self._server.lean_call(ctx, *call)
        elif method == "tools/list" and _accepted(ctx) and valid_request(ctx):
            return await self._server.lean_list(ctx, call_next)
        return await call_next(ctx)


def plain_call(params: Mapping[str, Any] | None) -> tuple[str, dict[str, Any]] | None:
    """(name, arguments) of `tools/call` params that need no more checking than this; None: let the SDK check."""
    if not isinstance(params, dict) or not params.keys() <= _CALL_KEYS:
        return None
    name, arguments = params.get("name"), params.get("arguments")
    if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)) or not _plain_meta(params):
        return None
    return name, arguments or {}


def valid_request(ctx: ServerRequestContext[Any, Any]) -> bool:
    """The request passes the SDK's own check of its params for its protocol version (else the SDK refuses it)."""
    try:
        validate_client_request(ctx.method, ctx.protocol_version, ctx.params)
    except Exception:
        return False
    return True


_CALL_KEYS = frozenset({"name", "arguments", "_meta"})


def _plain_meta(params: dict[str, Any]) -> bool:
    meta = params.get("_meta")
    if meta is None:
        return "_meta" not in params
    if not isinstance(meta, dict):
        return False
    if "progressToken" not in meta:  # other keys (a traceparent, a host's own) are free-form on these versions
        return True
    token = meta["progressToken"]
    return isinstance(token, str) or (isinstance(token, int) and not isinstance(token, bool))


def _accepted(ctx: ServerRequestContext[Any, Any]) -> bool:
    """The SDK let this connection past its handshake gate (else its own refusal answers)."""
    connection = connection_of(ctx.session)
    return connection is not None and connection.initialize_accepted
