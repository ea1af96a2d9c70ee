"""Middleware: functions around a call that may look at (or replace) its arguments before the tool runs,
and answer for it (a corrective result) without running it (seed 004, "middleware gating").

    class Middleware(Protocol):
        async def __call__(self, call: ToolCall, call_next: CallNext) -> ToolResult: ...

Ordering: a `MiddlewareToolset` runs its list in order, the first listed outermost (it sees the call
first and the result last). It runs after the tool is found and its arguments are validated, and it
wraps whatever the profile put inside it (in profiles.py, confirmation), so a gate refuses a call
before the user is asked about it. A middleware that replaces the arguments passes a model validated
by `call.tool.args_model`. `call_next` never raises: what happens below arrives as an envelope.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Protocol

from toolsets.call import ToolCall, settle
from toolsets.envelope import ToolResult
from toolsets.toolset import AbstractToolset
from toolsets.wrapper import WrapperToolset

CallNext = Callable[[ToolCall], Awaitable[ToolResult]]


class Middleware(Protocol):
    async def __call__(self, call: ToolCall, call_next: CallNext) -> ToolResult: ...


class MiddlewareToolset(WrapperToolset):
    def __init__(self, wrapped: AbstractToolset, middleware: Sequence[Middleware], **kwargs: object) -> None:
        super().__init__(wrapped, **kwargs)  # type: ignore[arg-type]
        self.middleware = tuple(middleware)

    async def call_tool(self, call: ToolCall) -> ToolResult:
        return await self._step(0, call)

    async def _step(self, index: int, call: ToolCall) -> ToolResult:
        if index == len(self.middleware):
            return await settle(call.tool.name, self.wrapped.call_tool(call))
        return await settle(call.tool.name, self.middleware[index](call, partial(self._step, index + 1)))
