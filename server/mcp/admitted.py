"""The admission step for the MCP requests that are not tool calls: resource reads, prompt gets, completions.

They pass the caller's bounds through the front door (`FrontDoor.admitted`), as tool calls do inside `FrontDoor.call`;
a request past a bound gets the JSON-RPC error `LIMITED` (-32000, a server error) whose message says how long to
wait, and whose data carries `{"code": "rate_limited", "retryAfter": seconds}`. The session stays usable.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from mcp.shared.exceptions import MCPError

from toolsets.admission.kinds import RequestKind
from toolsets.admission.limits import Refused, RequestRefusedError

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from server.mcp.mcp_server import TruloopMCP
    from toolsets.core.context import Caller

LIMITED = -32000


@contextlib.asynccontextmanager
async def admitted(
    server: TruloopMCP, request: ServerRequestContext[Any, Any], kind: RequestKind, target: str, arguments: Any = None
) -> AsyncIterator[tuple[Caller, str]]:
    """Admit the request; yields the caller and profile it resolved, for the request to run as (resolved once)."""
    caller, profile = await server.surface.resolve()
    info = server.request_info(request, profile)
    try:
        async with server.front_door.admitted(caller, info, kind, target, arguments):
            yield caller, profile
    except RequestRefusedError as refused:
        raise limited(refused.refused) from None


def limited(refused: Refused) -> MCPError:
    return MCPError(
        code=LIMITED,
        message=refused.reason,
        data={"code": "rate_limited", "limit": refused.limit, "retryAfter": refused.retry_after_s},
    )
