"""uvicorn's httptools protocol with the writes of one event-loop turn combined.

uvicorn writes each ASGI message to the socket as it comes: a response's status line and headers, then
its body, are two system calls, two TCP segments and two wake-ups of the client, though the application
sent both in the same instant. `WriteCombiningTransport` holds what is written during one turn of the
event loop and writes it once at the end of that turn (and before the connection is closed), so a
response the application sends at once leaves in one write. Nothing waits longer than that turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from server.sdk_compat import httptools_protocol_on

if TYPE_CHECKING:
    from server.http.connection_guard import ConnectionLimits


class WriteCombiningTransport(asyncio.Transport):
    """A stream transport whose writes of one event-loop turn leave in one write of `transport`."""

    def __init__(self, transport: asyncio.Transport) -> None:
        super().__init__()
        self._transport = transport
        self._pending: list[bytes] = []
        self._loop = asyncio.get_running_loop()

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._pending:
            self._loop.call_soon(self._flush)
        self._pending.append(bytes(data))

    def writelines(self, list_of_data: Iterable[bytes | bytearray | memoryview]) -> None:
        for data in list_of_data:
            self.write(data)

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        if pending and not self._transport.is_closing():
            self._transport.write(pending[0] if len(pending) == 1 else b"".join(pending))

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def abort(self) -> None:
        self._pending.clear()
        self._transport.abort()

    def write_eof(self) -> None:
        self._flush()
        self._transport.write_eof()

    def can_write_eof(self) -> bool:
        return self._transport.can_write_eof()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(map(len, self._pending))

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._transport.get_write_buffer_limits()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._transport.set_write_buffer_limits(high, low)

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)

    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def is_reading(self) -> bool:
        return self._transport.is_reading()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._transport.get_protocol()


def http_protocol(limits: ConnectionLimits | None = None) -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol on a `WriteCombiningTransport` (`uvicorn.Config(http=...)`), or its h11 one
    when httptools is not installed; either held to `limits` (server/http/connection_guard.py; its defaults if None)."""
    from server.sdk_compat import h11_protocol_with

    return httptools_protocol_on(WriteCombiningTransport, limits) or h11_protocol_with(limits)
