"""stdio transport that answers every line, whatever arrives.

The SDK's stdio reader decodes stdin with the locale's codec, reads a whole line before any size
check, and passes unparsable input to the server loop, which drops it. Here:

- stdin is read as bytes by a daemon thread (so Ctrl-C never waits on a blocked read), a line at a
  time, and a line longer than `max_line_bytes` is discarded while it is read: memory stays bounded;
- each line is decoded as strict UTF-8 and parsed with bounded nesting (`toolsets.safe_json`);
- a bad line gets one JSON-RPC error: -32700 for bytes that are not UTF-8 JSON (or too deep, or too
  long), -32600 for JSON that is not a JSON-RPC message or whose `id` is not a string or integer
  (with `id: null`: such an id cannot be echoed faithfully), -32600 with the id for a request that
  reuses the id of a request still in flight (it is not run, so no reply is ever lost);
- at end of input, or on `stop()` (a signal), the requests already read are answered before the
  server stops (the SDK loop would cancel them), so `cat requests.jsonl | truloop-mcp` gets every answer.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import mcp.types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from toolsets import safe_json

logger = logging.getLogger("truloop.stdio")

MAX_LINE_BYTES = 16 * 1024 * 1024
DRAIN_SECONDS = 30.0
STOP_DRAIN_SECONDS = 1.5
_CHUNK = 64 * 1024


class Oversized:
    """A line longer than the limit; only its length was kept."""

    def __init__(self, size: int) -> None:
        self.size = size


Line = bytes | Oversized


def _read_lines(fd: int, limit: int, emit: Any) -> None:
    """Blocking: split `fd` into lines of at most `limit` bytes; `emit(None)` at end of input."""
    buffer = bytearray()
    skipped = 0  # > 0 while discarding the rest of an oversized line
    try:
        while True:
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                break
            start = 0
            while True:
                end = chunk.find(b"\n", start)
                piece = chunk[start:] if end < 0 else chunk[start:end]
                if skipped:
                    skipped += len(piece)
                elif len(buffer) + len(piece) > limit:
                    skipped = len(buffer) + len(piece)
                    buffer.clear()
                else:
                    buffer += piece
                if end < 0:
                    break
                emit(Oversized(skipped) if skipped else bytes(buffer))
                buffer.clear()
                skipped = 0
                start = end + 1
        if skipped:
            emit(Oversized(skipped))
        elif buffer:
            emit(bytes(buffer))
    except OSError as exc:
        logger.warning("stdin could not be read: %s", exc.strerror or type(exc).__name__)
    finally:
        emit(None)


class StdinLines:
    """Lines of stdin, read by a daemon thread into a bounded stream."""

    def __init__(self, fd: int, limit: int, buffered: int = 64) -> None:
        self._fd = fd
        self._limit = limit
        send, receive = anyio.create_memory_object_stream[Line | None](buffered)
        self._send: MemoryObjectSendStream[Line | None] = send
        self.receive: MemoryObjectReceiveStream[Line | None] = receive

    def start(self) -> None:
        portal_token = anyio.lowlevel.current_token()

        def emit(item: Line | None) -> None:
            try:
                anyio.from_thread.run(self._send.send, item, token=portal_token)
            except Exception:  # the loop has stopped or the reader is gone: nothing left to feed
                raise SystemExit from None

        thread = threading.Thread(
            target=_read_lines, args=(self._fd, self._limit, emit), name="truloop-stdin", daemon=True
        )
        thread.start()


class CheckedLines:
    """The line source handed to the SDK's `stdio_server`: only valid JSON-RPC messages get through;
    everything else is answered here."""

    def __init__(self, source: MemoryObjectReceiveStream[Line | None], limit: int = MAX_LINE_BYTES) -> None:
        self._source = source
        self._limit = limit
        self._in_flight: set[str | int] = set()
        self._answered = anyio.Event()
        self._out: Any = None
        self._stopping = False
        self._receiving: anyio.CancelScope | None = None

    def bind(self, write_stream: Any) -> _AnswerTracker:
        self._out = write_stream
        return _AnswerTracker(write_stream, self)

    def answered(self, request_id: Any) -> None:
        self._in_flight.discard(request_id)
        if not self._in_flight:
            self._answered.set()

    def stop(self) -> None:
        """Read no more input; answer what was read (for a short while), then end."""
        self._stopping = True
        if self._receiving is not None:
            self._receiving.cancel()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        while not self._stopping:
            item: Line | None = None
            with anyio.CancelScope() as scope:
                self._receiving = scope
                try:
                    item = await self._source.receive()
                except anyio.EndOfStream:
                    item = None
            self._receiving = None
            if scope.cancelled_caught or item is None:
                break
            text, error = self.check(item)
            if text is not None:
                yield text
            elif error is not None and self._out is not None:
                await self._out.send(SessionMessage(error))
        if self._in_flight:
            with anyio.move_on_after(STOP_DRAIN_SECONDS if self._stopping else DRAIN_SECONDS):
                await self._answered.wait()

    def check(self, line: Line) -> tuple[str | None, types.JSONRPCError | None]:
        """(the line to pass on, None) or (None, the error to answer; None for a blank line)."""
        if isinstance(line, Oversized):
            logger.info("stdin: a %d-byte line was refused (limit %d)", line.size, self._limit)
            return None, _error(None, types.PARSE_ERROR, f"Message too large: lines are limited to {self._limit} bytes")
        if not line.strip():
            return None, None
        try:
            text = line.decode("utf-8")
            data = safe_json.loads(text)
        except (UnicodeDecodeError, safe_json.JsonDecodeError):
            request_id = _id_of_unicode_invalid(line)
            if request_id is not None:  # grammatical JSON holding a lone surrogate escape such as "\ud800"
                return None, _error(
                    request_id,
                    types.INVALID_REQUEST,
                    "Invalid Request: strings must be valid Unicode (a lone "
                    "surrogate escape such as \\ud800 cannot be read)",
                )
            logger.info("stdin: a line that is not UTF-8 JSON was answered with a parse error")
            return None, _error(
                None,
                types.PARSE_ERROR,
                "Parse error: each line must be one UTF-8 JSON-RPC 2.0 message "
                f"(nested at most {safe_json.MAX_DEPTH} levels)",
            )
        if not isinstance(data, dict):
            return None, _invalid(None, "a JSON object (batches are not supported)")
        request_id = data.get("id")
        if "id" in data and not _valid_id(request_id):
            return None, _invalid(None, "an id that is a string or an integer")
        try:
            message = types.jsonrpc_message_adapter.validate_python(data, by_name=False)
        except ValidationError:
            return None, _invalid(request_id, '{"jsonrpc": "2.0", "method": ..., "id": ...} (or a response)')
        if isinstance(message, types.JSONRPCRequest):
            if message.id in self._in_flight:
                return None, _error(
                    message.id,
                    types.INVALID_REQUEST,
                    f"Invalid Request: id {message.id!r} is already used by a request still in flight; "
                    "give each request its own id",
                )
            self._in_flight.add(message.id)
            self._answered = anyio.Event()
        return text, None


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
    return request_id if _valid_id(request_id) else None


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class _AnswerTracker:
    """The server's write stream, noting which requests have been answered."""

    def __init__(self, inner: Any, lines: CheckedLines) -> None:
        self._inner = inner
        self._lines = lines

    async def send(self, item: SessionMessage) -> None:
        await self._inner.send(item)
        if isinstance(item.message, types.JSONRPCResponse | types.JSONRPCError):
            self._lines.answered(item.message.id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> _AnswerTracker:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


def _invalid(request_id: Any, expected: str) -> types.JSONRPCError:
    logger.info("stdin: a JSON line that is not a valid JSON-RPC message was answered with invalid request")
    return _error(request_id, types.INVALID_REQUEST, f"Invalid Request: expected {expected}")


def _error(request_id: Any, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


def open_stdin(limit: int = MAX_LINE_BYTES) -> CheckedLines:
    """Start reading this process's stdin; the result is what `serve_stdio` serves."""
    reader = StdinLines(sys.stdin.fileno(), limit)
    reader.start()
    return CheckedLines(reader.receive, limit)


async def serve_stdio(server: Any, lines: CheckedLines) -> None:
    """Serve `server` (an MCPServer) on `lines` and this process's stdout until input ends or `lines.stop()`."""
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
        low = server._lowlevel_server
        await low.run(read_stream, lines.bind(write_stream), low.create_initialization_options())
