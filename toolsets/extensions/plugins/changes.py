"""Who hears that what plugins publish changed (a tool, resource or prompt was added, replaced or removed).

The MCP front subscribes each server, which tells its handshake-era sessions
(`notifications/tools/list_changed`, `.../resources/list_changed`, `.../prompts/list_changed`, and
`notifications/resources/updated` to the sessions subscribed to a resource whose file changed) and its 2026-07-28
listen streams. Listeners are held weakly: a server that is gone stops hearing without unsubscribing.
"""

from __future__ import annotations

import inspect
import logging
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

logger = logging.getLogger("truloop.plugins")

Kind = str  # "tool", "resource" or "prompt"


@dataclass(frozen=True, slots=True)
class PluginChange:
    """What changed: the kinds whose lists changed, and the fixed resource URIs whose content may have."""

    kinds: frozenset[Kind] = frozenset({"tool"})
    updated: tuple[str, ...] = field(default=())

    @property
    def tools(self) -> bool:
        return "tool" in self.kinds

    @property
    def resources(self) -> bool:
        return "resource" in self.kinds

    @property
    def prompts(self) -> bool:
        return "prompt" in self.kinds


Listener = Callable[[PluginChange], Awaitable[None]]
ANNOUNCE_SECONDS = 5.0  # a listener that cannot deliver in time (a client not reading) is skipped


class ToolListChanges:
    def __init__(self) -> None:
        self._listeners: list[weakref.ref[Any]] = []

    def subscribe(self, listener: Listener) -> None:
        ref: weakref.ref[Any] = weakref.WeakMethod(listener) if inspect.ismethod(listener) else weakref.ref(listener)
        self._listeners.append(ref)

    async def announce(self, change: PluginChange | None = None) -> None:
        change = change if change is not None else PluginChange()
        self._listeners = [ref for ref in self._listeners if ref() is not None]
        for ref in list(self._listeners):
            listener = ref()
            if listener is None:
                continue
            with anyio.move_on_after(ANNOUNCE_SECONDS):
                try:
                    await listener(change)
                except Exception:
                    logger.warning("a plugin-change listener failed", exc_info=True)
