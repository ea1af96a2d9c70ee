"""uvicorn's server, telling its owner where it listens once it accepts connections.

uvicorn offers only a `started` flag; a caller that binds port 0 needs the port the kernel picked,
and needs it when connections are served, not when the socket is bound."""

from __future__ import annotations

import socket
from collections.abc import Callable

import uvicorn

Address = tuple[str, int]


class ReportingServer(uvicorn.Server):
    """A `uvicorn.Server` that calls `on_started(address)` once, when it starts serving."""

    def __init__(self, config: uvicorn.Config, on_started: Callable[[Address], None]) -> None:
        super().__init__(config)
        self._on_started = on_started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._on_started(self.bound_address())

    def bound_address(self) -> Address:
        """(host, port) of the first listening socket; the real port when port 0 was asked for."""
        host, port = self.servers[0].sockets[0].getsockname()[:2]
        return str(host), int(port)


def http_url(address: Address, path: str = "") -> str:
    host, port = address
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{path}"
