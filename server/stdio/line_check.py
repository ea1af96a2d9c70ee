"""What each stdin line is: a JSON-RPC message to serve, or the one error to answer it with.

- a line longer than the limit is discarded while it is read (`LineSplitter`): memory stays bounded;
- each line is decoded as strict UTF-8 and parsed with bounded nesting (`toolsets.core.safe_json`);
- a bad line gets one JSON-RPC error (a wire dict; `as_model` makes the SDK's model of it): -32700 for bytes
  that are not UTF-8 JSON (or too deep, or too long), -32600 for JSON that is not a JSON-RPC message or whose
  `id` is not a string or integer (with `id: null`: such an id cannot be echoed faithfully), -32600 with the id
  for a request that reuses the id of a request still in flight (it is not run, so no reply is ever lost).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from toolsets.core import safe_json

if TYPE_CHECKING:
    import mcp.types as types

logger = logging.getLogger("truloop.stdio")

MAX_LINE_BYTES = 16 * 1024 * 1024


class Oversized:
    """A line longer than the limit; only its length was kept."""

    __slots__ = ("size",)

    def __init__(self, size: int) -> None:
        self.size = size


Line = bytes | Oversized


class LineSplitter:
    """Splits a byte stream into lines of at most `limit` bytes (without their newline)."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._buffer = bytearray()
        self._skipped = 0  # > 0 while discarding the rest of an oversized line

    def feed(self, chunk: bytes, emit: Callable[[Line], None]) -> None:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                self._hold(chunk, start, len(chunk))
                return
            if not self._buffer and not self._skipped and end - start <= self._limit:
                emit(chunk[start:end])  # the common case: a whole line inside one chunk, no copy into the buffer
            else:
                self._hold(chunk, start, end)
                emit(Oversized(self._skipped) if self._skipped else bytes(self._buffer))
                self._buffer.clear()
                self._skipped = 0
            start = end + 1

    def finish(self, emit: Callable[[Line], None]) -> None:
        """End of input: the last line, if it had no newline."""
        if self._skipped:
            emit(Oversized(self._skipped))
        elif self._buffer:
            emit(bytes(self._buffer))
        self._buffer.clear()
        self._skipped = 0

    def _hold(self, chunk: bytes, start: int, end: int) -> None:
        size = end - start
        if self._skipped:
            self._skipped += size
        elif len(self._buffer) + size > self._limit:
            self._skipped = len(self._buffer) + size
            self._buffer.clear()
        else:
            self._buffer += chunk[start:end]


def line_size(line: Line) -> int:
    return line.size if isinstance(line, Oversized) else len(line)


PARSE_ERROR = -32700
INVALID_REQUEST = -32600
ID_EXPECTED = "an id that is a string or an integer"  # what a message with any other id is told, on every transport


MAX_IN_FLIGHT = 256  # requests read but not yet answered; past it, reading waits
DRAIN_SECONDS = 1.5  # at end of input: how long requests still running may take to be answered (then the
# process leaves within 3 s whatever a tool is doing; a client that wants every answer waits for them before closing)
STOP_DRAIN_SECONDS = 1.5  # after a signal


class LineChecker:
    """Checks lines and keeps the ids of the requests still in flight (answered ones are `answered`)."""

    def __init__(self, limit: int = MAX_LINE_BYTES) -> None:
        self._limit = limit
        self._in_flight: set[str | int] = set()
        self._idle = asyncio.Event()
        self._idle.set()
        self._room = asyncio.Event()  # set while fewer than MAX_IN_FLIGHT requests await their answer
        self._room.set()
        self._draining: anyio.CancelScope | None = None

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    async def all_answered(self) -> None:
        await self._idle.wait()

    async def drain(self, stopping: bool) -> None:
        """Input ended (or a stop was asked for): wait for the requests in flight to be answered, for at most
        `DRAIN_SECONDS` (`STOP_DRAIN_SECONDS` after a stop)."""
        if not self._in_flight:
            return
        with anyio.move_on_after(STOP_DRAIN_SECONDS if stopping else DRAIN_SECONDS) as scope:
            self._draining = scope
            await self.all_answered()
        self._draining = None

    def hurry(self) -> None:
        """A stop while draining: wait at most `STOP_DRAIN_SECONDS` more."""
        if self._draining is not None:
            self._draining.deadline = min(self._draining.deadline, anyio.current_time() + STOP_DRAIN_SECONDS)

    def has_room(self) -> bool:
        """Whether another request may be read now (`room` would not wait)."""
        return self._room.is_set()

    async def room(self) -> None:
        """Wait while MAX_IN_FLIGHT requests are unanswered: reading more would only queue tasks and memory."""
        await self._room.wait()

    def answered(self, request_id: Any) -> None:
        self._in_flight.discard(request_id)
        if len(self._in_flight) < MAX_IN_FLIGHT:
            self._room.set()
        if not self._in_flight:
            self._idle.set()

    def frame(self, line: Line) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """(the JSON object a line holds, None) or (None, the error to answer; None for a blank line): the checks
        that need no model of the protocol."""
        if isinstance(line, Oversized):
            logger.info("stdin: a %d-byte line was refused (limit %d)", line.size, self._limit)
            return None, _error(None, PARSE_ERROR, f"Message too large: lines are limited to {self._limit} bytes")
        if not line.strip():
            return None, None
        try:
            data = safe_json.loads(line)
        except safe_json.JsonDecodeError:
            return None, _unreadable(line)
        if not isinstance(data, dict):
            return None, _invalid(None, "a JSON object (batches are not supported)")
        if "id" in data and not valid_id(data["id"]):
            return None, _invalid(None, ID_EXPECTED)
        return data, None

    def admit(self, data: dict[str, Any]) -> dict[str, Any] | None:
        """Note a valid message read: a request's id while it is in flight (None), or the error of a request reusing
        the id of one still in flight (it is not run, so no reply is ever lost). A cancelled request may never be
        answered: it is not waited for at end of input."""
        method = data.get("method")
        if "id" in data and method is not None:
            request_id = data["id"]
            if request_id in self._in_flight:
                return _error(
                    request_id,
                    INVALID_REQUEST,
                    f"Invalid Request: id {request_id!r} is already used by a request still in flight; "
                    "give each request its own id",
                )
            self._in_flight.add(request_id)
            if len(self._in_flight) >= MAX_IN_FLIGHT:
                self._room.clear()
            self._idle.clear()
        elif method == "notifications/cancelled":
            params = data.get("params")
            cancelled = params.get("requestId") if isinstance(params, dict) else None
            if valid_id(cancelled):
                self.answered(cancelled)
        return None

    def check(self, line: Line) -> tuple[Any, types.JSONRPCError | None]:
        """(the SDK's message to serve, None) or (None, the error to answer; None for a blank line)."""
        data, error = self.frame(line)
        if data is None:
            return None, None if error is None else as_model(error)
        return self.validated(data)

    def validated(self, data: dict[str, Any]) -> tuple[Any, types.JSONRPCError | None]:
        """A framed JSON object as the SDK's message (admitted), or the error of one that is no JSON-RPC message."""
        import mcp.types as types
        from pydantic import ValidationError

        try:
            message = types.jsonrpc_message_adapter.validate_python(data, by_name=False)
        except ValidationError:
            request_id = data.get("id")
            return None, as_model(_invalid(request_id, '{"jsonrpc": "2.0", "method": ..., "id": ...} (or a response)'))
        refusal = self.admit(data)
        if refusal is not None:
            return None, as_model(refusal)
        return message, None


def as_model(error: dict[str, Any]) -> types.JSONRPCError:
    """An error dict of this module as the SDK's model (for the SDK's write streams)."""
    import mcp.types as types

    return types.JSONRPCError.model_validate(error)


def _unreadable(line: bytes) -> dict[str, Any]:
    request_id = _id_of_unicode_invalid(line)
    if request_id is not None:  # grammatical JSON holding a lone surrogate escape such as "\ud800"
        return _error(
            request_id,
            INVALID_REQUEST,
            "Invalid Request: strings must be valid Unicode (a lone surrogate escape such as \\ud800 cannot be read)",
        )
    logger.info("stdin: a line that is not UTF-8 JSON was answered with a parse error")
    return _error(
        None,
        PARSE_ERROR,
        f"Parse error: each line must be one UTF-8 JSON-RPC 2.0 message (nested at most {safe_json.MAX_DEPTH} levels)",
    )


def _id_of_unicode_invalid(line: bytes) -> str | int | None:
    """The id of a line that is JSON by RFC 8259's grammar but not valid Unicode, so that its sender gets
    an answer it can match; None for anything else (not JSON, too deep, NaN...)."""
    import json

    def no_constants(name: str) -> Any:
        raise ValueError(name)

    try:
        data = json.loads(line.decode("utf-8"), parse_constant=no_constants)
    except (ValueError, RecursionError):
        return None
    request_id = data.get("id") if isinstance(data, dict) else None
    if isinstance(request_id, str):
        try:
            request_id.encode("utf-8")
        except UnicodeEncodeError:  # the id itself cannot be echoed
            return None
    return request_id if valid_id(request_id) else None


def valid_id(value: Any) -> bool:
    """A JSON-RPC id this server accepts: a string or an integer (never null, a fraction or a boolean)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _invalid(request_id: Any, expected: str) -> dict[str, Any]:
    logger.info("stdin: a JSON line that is not a valid JSON-RPC message was answered with invalid request")
    return _error(request_id, INVALID_REQUEST, f"Invalid Request: expected {expected}")


def invalid_id_error() -> dict[str, Any]:
    """The answer to a message whose `id` is not a string or an integer (the id cannot be echoed)."""
    return _error(None, INVALID_REQUEST, f"Invalid Request: expected {ID_EXPECTED}")


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
