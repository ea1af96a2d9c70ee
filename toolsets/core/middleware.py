"""Middleware: objects around a call that may look at (or replace) its arguments before the tool runs,
and answer for it (a corrective result) without running it.

    class Middleware(Protocol):
        async def __call__(self, call: ToolCall, call_next: CallNext) -> ToolResult: ...

A middleware is an instance configured once at composition with what it needs (`AuditMiddleware(sink)`,
`GateMiddleware(gates)`, ...); what it learns about a call goes on the call (`call.notes`). One that also
wants the calls the dispatcher refused before the pipeline (unknown tool, invalid arguments) defines
`refused(name, raw_args, ctx, refusal)`.

Ordering: a `MiddlewareToolset` runs its list in order, the first listed outermost (it sees the call
first and the result last). It runs after the tool is found and its arguments are validated, and it
wraps whatever the profile put inside it (in profiles.py, confirmation), so a gate refuses a call
before the user is asked about it. A middleware that replaces the arguments passes a model validated
by `call.tool.args_model`. `call_next` never raises: what happens below arrives as an envelope.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from toolsets.core.call import ToolCall, envelope_of
from toolsets.core.context import ToolContext
from toolsets.core.envelope import ToolErr, ToolResult
from toolsets.core.toolset import AbstractToolset
from toolsets.core.wrapper import WrapperToolset

logger = logging.getLogger("truloop.dispatch")

CallNext = Callable[[ToolCall], Awaitable[ToolResult]]


class Middleware(Protocol):
    async def __call__(self, call: ToolCall, call_next: CallNext) -> ToolResult: ...


class MiddlewareToolset(WrapperToolset):
    def __init__(self, wrapped: AbstractToolset, middleware: Sequence[Middleware], **kwargs: object) -> None:
        super().__init__(wrapped, **kwargs)  # type: ignore[arg-type]  # the wrapper forwards the toolset's own options
        self.middleware = tuple(middleware)
        # The chain is built once: each step runs one middleware with the next step as its `call_next`.
        step: CallNext = _Innermost(wrapped)
        for one in reversed(self.middleware):
            step = _Step(one, step)
        self._first = step

    async def call_tool(self, call: ToolCall) -> ToolResult:
        return await self._first(call)

    def refuse(self, name: str, raw_args: Any, ctx: ToolContext[Any], refusal: ToolErr) -> None:
        for one in self.middleware:
            hook = getattr(one, "refused", None)
            if hook is None:
                continue
            try:
                hook(name, raw_args, ctx, refusal)
            except Exception:
                logger.exception("middleware %s failed on a refused call of %s", type(one).__name__, name)
        self.wrapped.refuse(name, raw_args, ctx, refusal)


class _Step:
    __slots__ = ("_middleware", "_next")

    def __init__(self, middleware: Middleware, next_step: CallNext) -> None:
        self._middleware = middleware
        self._next = next_step

    async def __call__(self, call: ToolCall) -> ToolResult:
        try:
            return await self._middleware(call, self._next)
        except Exception as exc:  # what a middleware raised: an envelope, as `settle` makes it
            return envelope_of(call.tool.name, exc)


class _Innermost:
    __slots__ = ("_wrapped",)

    def __init__(self, wrapped: AbstractToolset) -> None:
        self._wrapped = wrapped

    async def __call__(self, call: ToolCall) -> ToolResult:
        try:
            return await self._wrapped.call_tool(call)
        except Exception as exc:
            return envelope_of(call.tool.name, exc)
