"""What the handshake's `initialize` answer advertises beyond `MCPServer`'s own: lists that change, and tasks."""

from __future__ import annotations

from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext


class HandshakeCapabilities:
    """The server middleware that completes the handshake's `initialize` answer with what `MCPServer` has no
    parameter for: `listChanged` on tools, prompts and resources (plugins change all three; `MCPServer` advertises
    it only on 2026-07-28), and the handshake's `capabilities.tasks` when tasks are served (2026-07-28's
    `server/discover` names the tasks extension instead)."""

    def __init__(self, *, tasks: bool) -> None:
        self._tasks = tasks

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        answer = await call_next(ctx)
        if ctx.method != "initialize" or not isinstance(answer, dict):
            return answer
        capabilities = dict(answer.get("capabilities") or {})
        for listed in ("tools", "prompts", "resources"):
            if isinstance(capabilities.get(listed), dict):
                capabilities[listed] = {**capabilities[listed], "listChanged": True}
        if self._tasks:
            from server.tasks.wire import HANDSHAKE_TASKS

            capabilities["tasks"] = HANDSHAKE_TASKS
        return {**answer, "capabilities": capabilities}
