"""Answers kept per distinct list of tools: a list is known by its tools' identities (plugins reloading or
progressive exposure make new lists, hence new entries); holding the tools keeps their ids from being reused while an
entry is kept."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolsets.core.tool import Tool


class PerToolList:
    """Answers kept per distinct list of tool objects (and a key, where given: a protocol version, a page's next
    cursor), at most 256."""

    def __init__(self) -> None:
        self._kept: dict[tuple[Any, ...], tuple[tuple[Tool, ...], dict[str, Any]]] = {}

    def get(self, tools: list[Tool], version: Any = None) -> dict[str, Any] | None:
        kept = self._kept.get((version, *map(id, tools)))
        if kept is None or any(a is not b for a, b in zip(kept[0], tools, strict=True)):
            return None
        return kept[1]

    def put(self, tools: list[Tool], answer: dict[str, Any], version: Any = None) -> None:
        if len(self._kept) > 256:
            self._kept.clear()
        self._kept[(version, *map(id, tools))] = (tuple(tools), answer)
