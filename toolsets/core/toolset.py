"""Toolsets: small objects that hold tools; wrappers (toolsets/core/wrapper.py and its kin) compose them.

A toolset answers two questions: which tools does it publish (`tools()`), and how is a call to one of
them carried out (`call_tool`). A `Toolset` is a leaf: `@toolset.tool(hints=...)` registers functions,
and its `call_tool` runs the function (a deferred tool's answer comes from the context's resolver).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from toolsets.core.annotations import ToolHints
from toolsets.core.call import ToolCall, settle
from toolsets.core.context import ToolContext
from toolsets.core.deferred import DeviceMethod, resolve_deferred
from toolsets.core.envelope import ToolErr, ToolOk, ToolResult
from toolsets.core.errors import CallDeferred
from toolsets.core.tool import Precheck, Question, Tool, ToolFunction


class AbstractToolset:
    """A named, read-only mapping of tool name -> Tool, and the way a call to one of them runs."""

    name: str

    def tools(self) -> Mapping[str, Tool]:
        raise NotImplementedError

    async def call_tool(self, call: ToolCall) -> ToolResult:
        raise NotImplementedError

    def revision(self) -> int:
        """Grows whenever `tools()` may have changed (plugins reloaded); 0 forever for a fixed toolset."""
        return 0

    def can_change(self) -> bool:
        """Whether `revision()` may ever grow (a toolset that keeps the base `revision` never changes)."""
        return type(self).revision is not AbstractToolset.revision

    def refuse(self, name: str, raw_args: Any, ctx: ToolContext[Any], refusal: ToolErr) -> None:
        """A call of this toolset the dispatcher refused before running it (unknown tool, invalid arguments):
        wrappers that watch calls (the middleware's audit and tracing) hear of it here."""

    def get(self, tool_name: str) -> Tool | None:
        return self.tools().get(tool_name)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.tools().values())

    def __len__(self) -> int:
        return len(self.tools())

    def names(self) -> list[str]:
        return list(self.tools())


class Toolset(AbstractToolset):
    """A toolset created at module level; `@toolset.tool(hints=...)` registers a function."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._tools: dict[str, Tool] = {}

    def tools(self) -> Mapping[str, Tool]:
        return self._tools

    def tool(
        self,
        *,
        hints: ToolHints,
        name: str | None = None,
        device: DeviceMethod | None = None,
        precheck: Precheck | None = None,
        asks_client: bool = False,
        asks_user: bool = False,
        question: Question | None = None,
    ) -> Callable[[ToolFunction], ToolFunction]:
        """Register a tool; `device` declares that it runs on the user's device, through that method; `precheck`
        refuses a call before the user is asked to confirm it (a destructive tool's target that does not exist);
        `asks_client` declares that it may ask the client's model to write part of its answer (`ctx.composer`);
        `asks_user` that it may ask the user's yes itself (`ctx.confirmer`); `question` words the question its
        confirmation asks (toolsets/pipeline/questions.py: else the generic one)."""

        def register(function: ToolFunction) -> ToolFunction:
            tool_name = name or function.__name__
            if tool_name in self._tools:
                raise ValueError(f"tool {tool_name!r} is already registered in toolset {self.name!r}")
            self._tools[tool_name] = Tool(
                function,
                name=tool_name,
                toolset=self.name,
                hints=hints,
                device=device,
                precheck=precheck,
                asks_client=asks_client,
                asks_user=asks_user,
                question=question,
            )
            return function

        return register

    async def call_tool(self, call: ToolCall) -> ToolResult:
        return await settle(call.tool.name, _run(call))


async def _run(call: ToolCall) -> ToolResult:
    tool = call.tool
    try:
        result: Any = await tool.run(call.ctx, call.arguments)
    except CallDeferred as deferred:
        result = await resolve_deferred(call.tool, call.arguments, deferred, call.ctx, call.notes)
    if not isinstance(result, tool.result_model):
        result = tool.result_model.model_validate(result)
    return ToolOk(result)
