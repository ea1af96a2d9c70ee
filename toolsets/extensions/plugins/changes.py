"""Who hears that the published tool lists changed (a plugin was added, replaced or removed).

The MCP front subscribes each server, which tells its handshake-era sessions
(`notifications/tools/list_changed`) and its 2026-07-28 listen streams. Listeners are held weakly:
a server that is gone stops hearing without unsubscribing.
"""

from __future__ import annotations

import inspect
import logging
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

logger = logging.getLogger("truloop.plugins")

Listener = Callable[[], Awaitable[None]]
ANNOUNCE_SECONDS = 5.0  # a listener that cannot deliver in time (a client not reading) is skipped


class ToolListChanges:
    def __init__(self) -> None:
        self._listeners: list[weakref.ref[Any]] = []

    def subscribe(self, listener: Listener) -> None:
        ref: weakref.ref[Any] = weakref.WeakMethod(listener) if inspect.ismethod(listener) else weakref.ref(listener)
        self._listeners.append(ref)

    async def announce(self) -> None:
        self._listeners = [ref for ref in self._listeners if ref() is not None]
        for ref in list(self._listeners):
            listener = ref()
            if listener is None:
                continue
            with anyio.move_on_after(ANNOUNCE_SECONDS):
                try:
                    await listener()
                except Exception:
                    logger.warning("a tool-list-changed listener failed", exc_info=True)
