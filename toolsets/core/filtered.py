"""`FilteredToolset`: publishes only the tools a predicate keeps; calls pass through unchanged."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from toolsets.core.tool import Tool
from toolsets.core.toolset import AbstractToolset
from toolsets.core.wrapper import WrapperToolset


class FilteredToolset(WrapperToolset):
    def __init__(self, wrapped: AbstractToolset, keep: Callable[[Tool], bool], *, name: str | None = None) -> None:
        super().__init__(wrapped, name=name or f"{wrapped.name}[filtered]")
        self.keep = keep
        self._kept: tuple[int, dict[str, Tool]] | None = None

    def tools(self) -> Mapping[str, Tool]:
        revision = self.wrapped.revision()  # re-filtered only when the wrapped tools changed
        if self._kept is None or self._kept[0] != revision:
            self._kept = (revision, {tool.name: tool for tool in self.wrapped if self.keep(tool)})
        return self._kept[1]
