"""`resources/read` and `prompts/get` of plugins: the request's context, and what went wrong as JSON-RPC errors.

The context holds the request's caller and profile, its MCP client (for the plugin's questions and log messages) and
its progress.

A question to a 2026-07-28 client comes back as the request's `InputRequiredResult` (the SDK seals its
`requestState`); arguments or a URI that do not fit are -32602; a client that did not declare what a question needs
is -32021; a plugin that fails is -32603 with no more than the tool envelope's text (never a stack trace).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

import mcp.types as types
from mcp.shared.exceptions import MCPError

from toolsets.core.call import envelope_of
from toolsets.core.envelope import ToolErr
from toolsets.core.errors import ErrorCode, InputRequired

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from server.mcp.mcp_server import TruloopMCP
    from toolsets.core.context import Caller, ToolContext

logger = logging.getLogger("truloop.plugins")

INVALID = (ErrorCode.VALIDATION, ErrorCode.NOT_FOUND, ErrorCode.UNKNOWN_TOOL)


class PluginRequests:
    def __init__(self, server: TruloopMCP) -> None:
        self._server = server

    async def context(
        self, request: ServerRequestContext[Any, Any], params: Any, who: tuple[Caller, str] | None = None
    ) -> ToolContext[Any]:
        """The context a plugin's resource or prompt runs in: this request's caller (`who`, when the request was
        admitted as them), client and progress."""
        server = self._server
        caller, profile = who if who is not None else await server.surface.resolve()

        ports = server.ports(request, lambda: server.sdk_context(request, params))
        return server.front_door.context_for(
            caller,
            profile,
            request=server.request_info(request, profile),
            client=ports,
            report_progress=request.session.report_progress,
        )

    async def answer(self, name: str, pending: Awaitable[Any]) -> Any:
        """The plugin's answer, the `InputRequiredResult` it is waiting on, or the JSON-RPC error of its failure."""
        try:
            return await pending
        except InputRequired as asked:
            return asked.payload
        except ValueError as invalid:  # arguments that do not fit the prompt
            raise MCPError(code=types.INVALID_PARAMS, message=str(invalid)) from None
        except Exception as exc:
            outcome = envelope_of(name, exc)
        raise json_rpc_error(outcome) from None


def json_rpc_error(outcome: Any) -> MCPError:
    if not isinstance(outcome, ToolErr):
        return MCPError(code=types.INTERNAL_ERROR, message="The request was cancelled.")
    if outcome.code is ErrorCode.CLIENT_CAPABILITY:
        needed = (outcome.detail or {}).get("capabilities") or []
        return MCPError(
            code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
            message=outcome.reason,
            data={"requiredCapabilities": {capability: {} for capability in needed}},
        )
    if outcome.code in INVALID:
        return MCPError(code=types.INVALID_PARAMS, message=outcome.reason)
    return MCPError(code=types.INTERNAL_ERROR, message=outcome.reason, data={"code": outcome.code.value})
