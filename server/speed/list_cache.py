"""The one `tools/list` cache: every path's answers for a page of tools, kept, not rebuilt.

One `ToolListCache` per deployment (`Deployment.tool_lists`), given at construction to the paths that answer
`tools/list`: the MCP server's own handler and `tools_wire` (`TruloopMCP`), the lean path (`server.speed.lean_path`,
which `server.speed.lean_http` reaches) and the stdio lean front (`server.stdio.lean_front`). One table, keyed by

- the page: its tools' identities, which stand for the caller's profile and the tools' revision (plugins reloading
  or progressive exposure make new tool objects, hence a new key; holding the tools keeps their ids from being reused
  while an entry is kept), and the page's next cursor;
- the era: the protocol version, for an answer that depends on it (the SDK's whole answer), else none;
- apps: whether the client negotiated MCP Apps (the SDK's answer then carries the tools' `_meta.ui`);
- the form the path answers in, so each path gives the same bytes it always gave: `published` (the caller's whole
  list as `types.Tool`s), `wire` (a page's `ListToolsResult` dumped), `sdk` (the SDK's whole answer, made once by the
  SDK's own handler) and `lean` (the stdio front's result from `server.wire_forms.tool_form`).

The SDK copies the top level of a handler's dict, never the parts below, and every path answers a copy of a kept
dict's top level, so a kept answer can be given again. Imported by the stdio lean front before the SDK is loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from server.mcp.tool_lists import ToolLists

if TYPE_CHECKING:
    import mcp.types as types

    from toolsets.core.tool import Tool

Form = Literal["published", "wire", "sdk", "lean"]
T = TypeVar("T")
MAX_ENTRIES = 1024  # answers kept, of every form; past it all are let go (replaced plugin versions with them)


class ToolListCache(ToolLists):
    """`ToolLists` whose results are made once per page (`published`, `wire`), and the other paths' answers kept
    beside them (`get`, `put`, `lean`). `keep=False` (speed paths off): nothing is kept, every answer is made again."""

    def __init__(self, *, keep: bool = True) -> None:
        self.keep = keep
        self._kept: dict[tuple[Any, ...], tuple[tuple[Tool, ...], Any]] = {}

    @staticmethod
    def _key(form: Form, tools: list[Tool], era: str | None, cursor: str | None, apps: bool) -> tuple[Any, ...]:
        return (form, era, apps, cursor, *map(id, tools))

    def get(
        self, form: Form, tools: list[Tool], *, era: str | None = None, cursor: str | None = None, apps: bool = False
    ) -> Any:
        """The answer kept for this page in this form, era and apps (None: none kept)."""
        kept = self._kept.get(self._key(form, tools, era, cursor, apps))
        if kept is None or any(a is not b for a, b in zip(kept[0], tools, strict=True)):
            return None
        return kept[1]

    def put(
        self,
        form: Form,
        tools: list[Tool],
        answer: Any,
        *,
        era: str | None = None,
        cursor: str | None = None,
        apps: bool = False,
    ) -> None:
        if not self.keep:
            return
        if len(self._kept) >= MAX_ENTRIES:
            self._kept.clear()
        self._kept[self._key(form, tools, era, cursor, apps)] = (tuple(tools), answer)

    def _made(self, form: Form, tools: list[Tool], cursor: str | None, make: Callable[[], T]) -> T:
        answer = self.get(form, tools, cursor=cursor)
        if answer is None:
            answer = make()
            self.put(form, tools, answer, cursor=cursor)
        return answer

    def published(self, tools: list[Tool]) -> list[types.Tool]:
        return self._made("published", tools, None, lambda: ToolLists.published(self, tools))

    def wire(self, tools: list[Tool], next_cursor: str | None = None) -> dict[str, Any]:
        return self._made("wire", tools, next_cursor, lambda: ToolLists.wire(self, tools, next_cursor))

    def lean(self, tools: list[Tool], next_cursor: str | None = None) -> dict[str, Any]:
        """The stdio lean front's `tools/list` result for this page (a client without apps)."""

        def make() -> dict[str, Any]:
            from server.mcp.wire_forms import tool_form, tools_list_result

            return tools_list_result([tool_form(tool) for tool in tools], next_cursor)

        return self._made("lean", tools, next_cursor, make)
