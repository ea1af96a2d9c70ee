"""One MCP call's ports (confirmer, composer, deferred resolver, the client), built only when a tool uses one.

Most calls ask nothing of the client; building an asker, a confirmer, a composer and a router for
each of them cost more than some tools themselves. Even the SDK's `Context` the asker needs is made
only when a port is first used (`context` is a function that makes it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError

from bridge.service import DeviceBridge
from server.mcp.protocol_era import is_modern
from toolsets.core.context import ComposeRequest, ConfirmRequest, Decision, DeferredCall, ToolContext
from toolsets.core.errors import ErrorCode, InputRequired, ToolError


@dataclass(frozen=True, slots=True)
class StartTask:
    """The `InputRequired` payload of a run that reached `start_task` on a request that asked for a task."""

    answers: dict[str, Any] = field(default_factory=dict)  # the client's answers so far, by question key


class TaskStartNow(MCPError):  # noqa: N818 - a control-flow signal, not an error
    """The call becomes a task here (server/tasks/front.py makes it; an `MCPError`, so the SDK lets it pass)."""

    def __init__(self, answers: dict[str, Any]) -> None:
        super().__init__(code=-32603, message="The call was to become a task, and no task could be made.")
        self.answers = answers


class CallPorts:
    __slots__ = ("_asker", "_bridge", "_context", "_made", "_stdio", "_timeout")

    def __init__(
        self, context: Callable[[], Context], bridge: DeviceBridge | None, *, timeout: float, stdio: bool
    ) -> None:
        self._context = context
        self._made: Context | None = None
        self._bridge = bridge
        self._timeout = timeout
        self._stdio = stdio
        self._asker: Any = None

    @property
    def context(self) -> Context:
        if self._made is None:
            self._made = self._context()
        return self._made

    @property
    def asker(self) -> Any:
        """The one `McpAsker` of this call: every question it asks shares one sealed state."""
        if self._asker is None:
            from bridge.elicitation import McpAsker

            self._asker = McpAsker(self.context, modern=is_modern(self.context.protocol_version))
        return self._asker

    async def confirm(self, request: ConfirmRequest) -> Decision:
        from bridge.elicitation import ElicitationConfirmer

        return await ElicitationConfirmer(self.asker).confirm(request)

    async def compose(self, request: ComposeRequest, ctx: ToolContext[Any]) -> str | None:
        from bridge.sampling import SamplingComposer

        return await SamplingComposer(self.asker).compose(request, ctx)

    async def resolve(self, call: DeferredCall) -> Any:
        from bridge.deferred_router import DeferredRouter

        router = DeferredRouter(
            self._bridge, self.asker, timeout=self._timeout, progress=self.context.report_progress, stdio=self._stdio
        )
        return await router.resolve(call)

    # -- the client (`ClientPort`): what a plugin asks of it ------------------------------------------------------

    def capabilities(self) -> Mapping[str, Any]:
        caps = self.context.client_capabilities
        return caps.model_dump(mode="json", by_alias=True, exclude_none=True) if caps is not None else {}

    async def ask(self, requests: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
        from bridge.elicitation import CannotAsk

        try:
            return await self.asker.ask_many({str(key): dict(value) for key, value in requests.items()})
        except CannotAsk as refused:
            needed = sorted(set(refused.args))
            raise ToolError(
                f"The client did not declare the {' and '.join(needed)} capability this needs (or refused the "
                "request); use a client that supports it.",
                code=ErrorCode.CLIENT_CAPABILITY,
                detail={"capabilities": needed},
            ) from None
        except ValueError as invalid:
            raise ToolError(f"Not a request the client can answer: {invalid}", code=ErrorCode.VALIDATION) from None

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        return None  # LoggedPorts, which knows the request, sends it

    async def start_task(self) -> None:
        from server.tasks.wire import declares_tasks

        context = self.context
        if is_modern(context.protocol_version) and declares_tasks(context.client_capabilities):
            raise InputRequired(StartTask(self.asker.answers()))
