"""stdio transport that answers malformed input instead of dropping it.

The SDK's stdio reader passes an unparsable line to the server loop, which drops it, so a
script piping JSON-RPC by hand never learns what went wrong. Here each bad line gets a
JSON-RPC error (-32700 for text that is not JSON, -32600 for JSON that is not a JSON-RPC
message, with the request's id when one can be read) and serving goes on.

At end of input the requests already read are answered before the server stops (the SDK
loop would cancel them), so `cat requests.jsonl | truloop-mcp` gets every answer.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp.types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

logger = logging.getLogger("truloop.stdio")

MAX_LINE_BYTES = 16 * 1024 * 1024
DRAIN_SECONDS = 30.0


class _CheckedLines:
    """An async line source for `stdio_server` that diverts malformed lines to an error reply
    and, at end of input, waits for the requests it passed on to be answered."""

    def __init__(self, source: Any) -> None:
        self._source = source
        self._unanswered: set[Any] = set()
        self._answered = anyio.Event()
        self._out: Any = None

    def bind(self, write_stream: Any) -> _AnswerTracker:
        self._out = write_stream
        return _AnswerTracker(write_stream, self)

    def answered(self, request_id: Any) -> None:
        self._unanswered.discard(request_id)
        if not self._unanswered:
            self._answered.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._source:
            if not line.strip():
                continue
            message, error = _check(line)
            if message is not None:
                if isinstance(message, types.JSONRPCRequest):
                    self._unanswered.add(message.id)
                    self._answered = anyio.Event()
                yield line
            elif self._out is not None:
                await self._out.send(SessionMessage(error))
        if self._unanswered:
            with anyio.move_on_after(DRAIN_SECONDS):
                await self._answered.wait()


class _AnswerTracker:
    """The server's write stream, noting which requests have been answered."""

    def __init__(self, inner: Any, lines: _CheckedLines) -> None:
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


def _check(line: str) -> tuple[Any, types.JSONRPCError | None]:
    if len(line) > MAX_LINE_BYTES:
        return None, _error(None, types.INVALID_REQUEST, f"Message too large (limit {MAX_LINE_BYTES} bytes)")
    try:
        return types.jsonrpc_message_adapter.validate_json(line, by_name=False), None
    except ValueError:
        pass
    try:
        data = json.loads(line)
    except ValueError:
        logger.info("stdin: a line that is not JSON was answered with a parse error")
        return None, _error(None, types.PARSE_ERROR, "Parse error: each line must be one JSON-RPC 2.0 message")
    request_id = data.get("id") if isinstance(data, dict) else None
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        request_id = None
    logger.info("stdin: a JSON line that is not a JSON-RPC message was answered with invalid request")
    return None, _error(
        request_id,
        types.INVALID_REQUEST,
        'Invalid Request: expected {"jsonrpc": "2.0", "method": ..., "id": ...} (or a response or notification)',
    )


def _error(request_id: Any, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


async def serve_stdio(server: Any) -> None:
    """Serve `server` (an MCPServer) on this process's stdin/stdout until end of input."""
    lines = _CheckedLines(anyio.wrap_file(sys.stdin))
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
        low = server._lowlevel_server
        await low.run(read_stream, lines.bind(write_stream), low.create_initialization_options())
