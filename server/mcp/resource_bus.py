"""The server's `subscriptions/listen` bus (2026-07-28), scoped to each listener's caller.

The SDK's bus fans every event out to every listen stream, filtered only by what each stream asked for. A
`ResourceUpdated` of `truloop://inbox` is one user's, though, and a document is not a guest's: `ScopedBus` delivers a
resource event only to the streams whose caller may see it (`view(may_see)`), and everything else (the tool list
changed) to every stream, as the SDK's bus does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio.lowlevel
from mcp.server.subscriptions import ResourceUpdated, ServerEvent

logger = logging.getLogger("truloop.resources")

# (uri, whose resource it is or None for everyone's) -> whether this stream's caller may hear of it
MaySee = Callable[[str, str | None], bool]
Deliver = Callable[[ServerEvent], None]


class ScopedBus:
    """A `SubscriptionBus` (`mcp.server.subscriptions`) whose resource events reach only the callers they concern."""

    def __init__(self) -> None:
        self._listeners: dict[object, tuple[Deliver, MaySee | None]] = {}

    async def publish(self, event: ServerEvent, owner: str | None = None) -> None:
        """Deliver `event`; a `ResourceUpdated` of `owner`'s (None: anyone's who may see the URI) only where seen."""
        for deliver, may_see in list(self._listeners.values()):
            if isinstance(event, ResourceUpdated) and may_see is not None and not may_see(event.uri, owner):
                continue
            if isinstance(event, ResourceUpdated) and may_see is None and owner is not None:
                continue  # a stream of unknown caller never hears of a user's resource
            try:
                deliver(event)
            except Exception:  # fan-out boundary: one listener must not starve the others
                logger.exception("subscription listener raised; continuing")
        await anyio.lowlevel.checkpoint()

    def subscribe(self, listener: Deliver, may_see: MaySee | None = None) -> Callable[[], None]:
        token = object()
        self._listeners[token] = (listener, may_see)

        def unsubscribe() -> None:
            self._listeners.pop(token, None)

        return unsubscribe

    def view(self, may_see: MaySee) -> BusView:
        return BusView(self, may_see)


class BusView:
    """What one listen stream subscribes through: the bus, with its caller's `may_see`."""

    def __init__(self, bus: ScopedBus, may_see: MaySee) -> None:
        self._bus = bus
        self._may_see = may_see

    async def publish(self, event: ServerEvent) -> None:
        await self._bus.publish(event)

    def subscribe(self, listener: Any) -> Callable[[], None]:
        return self._bus.subscribe(listener, self._may_see)
