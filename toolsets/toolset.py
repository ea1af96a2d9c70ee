"""Toolsets: small objects that hold tools, and wrappers that compose them into profiles.

A tool is a typed async function. Its docstring is its description, each parameter carries a
`Field(description=...)`, and it returns a pydantic model. A first parameter annotated
`ToolContext` receives the caller's context and is not part of the published schema.
Schemas are built on first use, so importing a toolset stays cheap.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterator, Mapping
from functools import cached_property
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, create_model

from toolsets.annotations import ToolHints
from toolsets.context import ToolContext

ToolFunction = Callable[..., Awaitable[BaseModel]]


class Tool:
    """One published tool: its function, hints and (lazily built) schemas."""

    __slots__ = ("__dict__", "deferred", "function", "hints", "name", "toolset")

    def __init__(self, function: ToolFunction, *, name: str, toolset: str, hints: ToolHints, deferred: bool) -> None:
        if not inspect.iscoroutinefunction(function):
            raise TypeError(f"tool {name!r} must be an async function")
        if not (function.__doc__ or "").strip():
            raise TypeError(f"tool {name!r} needs a docstring: the model reads it to decide when to call the tool")
        self.name = name
        self.toolset = toolset
        self.function = function
        self.hints = hints
        self.deferred = deferred

    @cached_property
    def description(self) -> str:
        return inspect.cleandoc(self.function.__doc__ or "")

    @cached_property
    def _signature(self) -> tuple[bool, dict[str, tuple[Any, Any]], type[BaseModel]]:
        hints = get_type_hints(self.function, include_extras=True)
        takes_ctx = False
        fields: dict[str, tuple[Any, Any]] = {}
        for index, param in enumerate(inspect.signature(self.function).parameters.values()):
            annotation = hints.get(param.name, Any)
            if index == 0 and annotation is ToolContext:
                takes_ctx = True
                continue
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[param.name] = (annotation, default)
        result = hints.get("return")
        if not (isinstance(result, type) and issubclass(result, BaseModel)):
            raise TypeError(f"tool {self.name!r} must declare a pydantic model as its return type")
        return takes_ctx, fields, result

    @cached_property
    def args_model(self) -> type[BaseModel]:
        _, fields, _ = self._signature
        model = create_model(  # type: ignore[call-overload]
            f"{self.name}_arguments", __config__=ConfigDict(extra="ignore"), **fields
        )
        for field_name, info in model.model_fields.items():
            if not info.description:
                raise TypeError(f"parameter {field_name!r} of tool {self.name!r} needs Field(description=...)")
        return model

    @property
    def result_model(self) -> type[BaseModel]:
        return self._signature[2]

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        schema = self.args_model.model_json_schema()
        schema.pop("title", None)
        return schema

    @cached_property
    def output_schema(self) -> dict[str, Any]:
        return self.result_model.model_json_schema()

    def unknown_keys(self, raw: Mapping[str, Any]) -> list[str]:
        known = self.args_model.model_fields
        return sorted(key for key in raw if key not in known)

    async def run(self, ctx: ToolContext, arguments: BaseModel) -> BaseModel:
        takes_ctx = self._signature[0]
        kwargs = {name: getattr(arguments, name) for name in type(arguments).model_fields}
        if takes_ctx:
            return await self.function(ctx, **kwargs)
        return await self.function(**kwargs)


class AbstractToolset:
    """A named, read-only mapping of tool name -> Tool; wrappers compose these."""

    name: str

    def tools(self) -> Mapping[str, Tool]:
        raise NotImplementedError

    def get(self, tool_name: str) -> Tool | None:
        return self.tools().get(tool_name)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.tools().values())

    def __len__(self) -> int:
        return len(self.tools())

    def names(self) -> list[str]:
        return list(self.tools())

    def filtered(self, predicate: Callable[[Tool], bool], *, name: str | None = None) -> FilteredToolset:
        return FilteredToolset(self, predicate, name=name)


class Toolset(AbstractToolset):
    """A toolset created at module level; `@toolset.tool(hints=...)` registers a function."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._tools: dict[str, Tool] = {}

    def tools(self) -> Mapping[str, Tool]:
        return self._tools

    def tool(
        self, *, hints: ToolHints, name: str | None = None, deferred: bool = False
    ) -> Callable[[ToolFunction], ToolFunction]:
        def register(function: ToolFunction) -> ToolFunction:
            tool_name = name or function.__name__
            if tool_name in self._tools:
                raise ValueError(f"tool {tool_name!r} is already registered in toolset {self.name!r}")
            self._tools[tool_name] = Tool(function, name=tool_name, toolset=self.name, hints=hints, deferred=deferred)
            return function

        return register


class CombinedToolset(AbstractToolset):
    """Several toolsets as one; a tool name may appear only once."""

    def __init__(self, name: str, *toolsets: AbstractToolset) -> None:
        self.name = name
        self.members = toolsets

    @cached_property
    def _tools(self) -> dict[str, Tool]:
        combined: dict[str, Tool] = {}
        for toolset in self.members:
            for tool in toolset:
                if tool.name in combined:
                    raise ValueError(f"tool {tool.name!r} appears in more than one toolset of {self.name!r}")
                combined[tool.name] = tool
        return combined

    def tools(self) -> Mapping[str, Tool]:
        return self._tools


class FilteredToolset(AbstractToolset):
    def __init__(self, inner: AbstractToolset, predicate: Callable[[Tool], bool], *, name: str | None = None) -> None:
        self.name = name or f"{inner.name}[filtered]"
        self.inner = inner
        self.predicate = predicate

    @cached_property
    def _tools(self) -> dict[str, Tool]:
        return {tool.name: tool for tool in self.inner if self.predicate(tool)}

    def tools(self) -> Mapping[str, Tool]:
        return self._tools
