"""uvicorn's server, telling its owner where it listens once it accepts connections, and leaving the
signals to its owner.

uvicorn offers only a `started` flag; a caller that binds port 0 needs the port the kernel picked,
and needs it when connections are served, not when the socket is bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable, Generator

import uvicorn

Address = tuple[str, int]


class ReportingServer(uvicorn.Server):
    """A `uvicorn.Server` that calls `on_started(address)` once, when it starts serving. With `own_signals`
    uvicorn installs no SIGINT/SIGTERM handlers: the owner handles them (and sets `should_exit`)."""

    def __init__(
        self, config: uvicorn.Config, on_started: Callable[[Address], None], *, own_signals: bool = False
    ) -> None:
        super().__init__(config)
        self._on_started = on_started
        self._own_signals = own_signals

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        """What `serve()` enters around serving: uvicorn's SIGINT/SIGTERM handlers, unless the owner keeps them."""
        if self._own_signals:
            yield
            return
        with super().capture_signals():
            yield

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


def parser_name(protocol: type[asyncio.Protocol]) -> str:
    """`httptools` or `h11`: the uvicorn protocol `protocol` is, or is built on."""
    for klass in protocol.__mro__:
        module = klass.__module__
        if module.startswith("uvicorn.protocols.http."):
            return module.rsplit(".", 1)[-1].removesuffix("_impl")
    return protocol.__name__
