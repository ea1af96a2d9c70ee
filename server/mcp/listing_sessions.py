"""The handshake-era sessions that listed something (resources, prompts), to tell when plugins change that list."""

from __future__ import annotations

import logging
import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from server.mcp.protocol_era import is_modern
from server.sdk_compat import connection_of

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from server.mcp.mcp_server import TruloopMCP

logger = logging.getLogger("truloop.server")

ANNOUNCE_SECONDS = 2.0  # a session that does not read holds up no one else


class ListingSessions:
    """Held weakly: a session that is gone is forgotten without being told."""

    def __init__(self, what: str, server: TruloopMCP) -> None:
        self.what = what  # for the log: "resources", "prompts"
        self._server = server
        self._sessions: weakref.WeakSet[Any] = weakref.WeakSet()

    def remember(self, ctx: ServerRequestContext[Any, Any]) -> None:
        # a stdio process's one session hears of list changes from its lean front (server/stdio/session.py)
        if self._server.stdio_session is None and not is_modern(ctx.protocol_version):
            connection = connection_of(ctx.session)
            if connection is not None:
                self._sessions.add(connection)

    async def tell(self, send: Callable[[Any], Awaitable[None]]) -> None:
        """`send(connection)` to each (one that fails is forgotten)."""
        for connection in list(self._sessions):
            try:
                with anyio.move_on_after(ANNOUNCE_SECONDS):
                    await send(connection)
            except Exception:
                logger.debug("could not tell a session that the %s changed", self.what, exc_info=True)
                self._sessions.discard(connection)
