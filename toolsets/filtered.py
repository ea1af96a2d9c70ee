"""`FilteredToolset`: publishes only the tools a predicate keeps; calls pass through unchanged."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property

from toolsets.tool import Tool
from toolsets.toolset import AbstractToolset
from toolsets.wrapper import WrapperToolset


class FilteredToolset(WrapperToolset):
    def __init__(self, wrapped: AbstractToolset, keep: Callable[[Tool], bool], *, name: str | None = None) -> None:
        super().__init__(wrapped, name=name or f"{wrapped.name}[filtered]")
        self.keep = keep

    @cached_property
    def _kept(self) -> dict[str, Tool]:
        return {tool.name: tool for tool in self.wrapped if self.keep(tool)}

    def tools(self) -> Mapping[str, Tool]:
        return self._kept
