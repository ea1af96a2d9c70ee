"""exposure toolset: loaders for progressive tool exposure and tool search.

`list_toolsets` and `load_toolset` are published in `--exposure progressive`; `search_tools` in both
modes. On handshake-era sessions a loaded toolset joins that session's tool list; on 2026-07-28 the
list is the whole profile, and `load_toolset` returns the tools' schemas so a model can call them.
"""

import sys
from typing import Annotated, Any

from pydantic import BaseModel, Field

from toolsets.core.annotations import READ_ONLY, ToolHints
from toolsets.core.context import ToolContext
from toolsets.core.errors import ErrorCode, ToolError
from toolsets.core.tool import Tool
from toolsets.core.toolset import AbstractToolset, Toolset

exposure_toolset = Toolset("exposure")

ALWAYS_ON = frozenset({"datetime", "exposure"})  # toolsets a progressive session starts with
LOADERS = frozenset({"list_toolsets", "load_toolset"})  # published in progressive mode only


class ToolsetSummary(BaseModel):
    name: str = Field(description="Toolset name, for load_toolset")
    description: str = Field(description="What its tools do, in one line")
    tools: list[str] = Field(description="Its tool names")
    loaded: bool = Field(description="Whether its tools are already available in this conversation")


class ToolsetList(BaseModel):
    toolsets: list[ToolsetSummary] = Field(description="The toolsets you may load")


class ToolSchema(BaseModel):
    name: str = Field(description="Tool name")
    description: str = Field(description="What it does and when to use it")
    input_schema: dict[str, Any] = Field(description="JSON Schema of its arguments")


class LoadedToolset(BaseModel):
    toolset: str = Field(description="The toolset loaded")
    tools: list[ToolSchema] = Field(description="Its tools, now callable")


class ToolMatchResult(BaseModel):
    name: str = Field(description="Tool name")
    toolset: str = Field(description="The toolset it belongs to (load_toolset it first when exposure is progressive)")
    description: str = Field(description="What it does")
    score: float = Field(description="Relevance, higher is better")
    input_schema: dict[str, Any] = Field(description="JSON Schema of its arguments")


class ToolSearchResult(BaseModel):
    matches: list[ToolMatchResult] = Field(description="Best first")


def exposure_for(mode: str) -> AbstractToolset:
    """The exposure toolset of a deployment: with its loaders in progressive mode, only `search_tools` in full."""
    if mode in ("progressive", "code"):  # in `code`, load_toolset is how a model gets the schemas it programs with
        return exposure_toolset
    from toolsets.core.filtered import FilteredToolset

    return FilteredToolset(exposure_toolset, lambda tool: tool.name not in LOADERS, name=exposure_toolset.name)


def _profile(ctx: ToolContext[Any]) -> AbstractToolset:
    """The toolset this call was made in (the caller's profile, from the deployment's profiles)."""
    name = ctx.request.profile or ctx.caller.role
    found = ctx.profiles.get(name)
    if found is None:
        raise ToolError(f"This front did not say which profile the call runs in ({name!r} is unknown).")
    return found


def _groups(toolset: AbstractToolset) -> dict[str, list[Tool]]:
    groups: dict[str, list[Tool]] = {}
    for tool in toolset:
        if tool.toolset not in ALWAYS_ON:
            groups.setdefault(tool.toolset, []).append(tool)
    return groups


def _one_line(tools: list[Tool]) -> str:
    doc = (sys.modules[tools[0].function.__module__].__doc__ or "").strip().splitlines()
    line = doc[0] if doc else ""
    return line.split(": ", 1)[-1].rstrip(".") or ", ".join(tool.name for tool in tools)


def _schema(tool: Tool) -> ToolSchema:
    return ToolSchema(name=tool.name, description=tool.description, input_schema=tool.input_schema)


@exposure_toolset.tool(hints=READ_ONLY)
async def list_toolsets(ctx: ToolContext[Any]) -> ToolsetList:
    """List the toolsets you can load (name, what they do, their tools). Load one with load_toolset before using
    its tools."""
    loaded = await ctx.conversation.loaded() if ctx.conversation is not None else frozenset()
    return ToolsetList(
        toolsets=[
            ToolsetSummary(
                name=name, description=_one_line(tools), tools=[t.name for t in tools], loaded=name in loaded
            )
            for name, tools in _groups(_profile(ctx)).items()
        ]
    )


@exposure_toolset.tool(hints=ToolHints(idempotent=True))
async def load_toolset(
    ctx: ToolContext[Any],
    name: Annotated[str, Field(description="A toolset name from list_toolsets, e.g. events", max_length=100)],
) -> LoadedToolset:
    """Make the tools of one toolset available in this conversation, and return their schemas."""
    groups = _groups(_profile(ctx))
    tools = groups.get(name.strip())
    if tools is None:
        choices = ", ".join(sorted(groups)) or "none"
        raise ToolError(f"No toolset {name!r} to load. Toolsets you may load: {choices}.", code=ErrorCode.NOT_FOUND)
    if ctx.conversation is not None:
        await ctx.conversation.load(name.strip())
    return LoadedToolset(toolset=name.strip(), tools=[_schema(tool) for tool in tools])


@exposure_toolset.tool(hints=READ_ONLY)
async def search_tools(
    ctx: ToolContext[Any],
    query: Annotated[
        str,
        Field(description="What you want to do, in any language, e.g. 'cancel my event'", min_length=1, max_length=500),
    ],
    limit: Annotated[int, Field(description="How many matches at most (1-20)", ge=1, le=20)] = 5,
) -> ToolSearchResult:
    """Find the tools that fit a task, best first, with their argument schemas (use it when unsure which tool
    to call, or which toolset to load)."""
    from toolsets.extensions.exposure.search import search
    from toolsets.pipeline.gates.spec import EXEMPT

    candidates = [tool for tool in _profile(ctx) if tool.name not in EXEMPT]
    return ToolSearchResult(
        matches=[
            ToolMatchResult(
                name=m.tool.name, toolset=m.tool.toolset, description=m.tool.description, score=round(m.score, 3),
                input_schema=m.tool.input_schema,
            )
            for m in search(candidates, query, limit)
        ]
    )  # fmt: skip
