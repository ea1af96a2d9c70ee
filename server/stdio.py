"""stdio transport that answers malformed input instead of dropping it.

The SDK's stdio reader passes an unparsable line to the server loop, which drops it, so a
script piping JSON-RPC by hand never learns what went wrong. Here each bad line gets a
JSON-RPC error (-32700 for text that is not JSON, -32600 for JSON that is not a JSON-RPC
message, with the request's id when one can be read) and serving goes on.
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


class _CheckedLines:
    """An async line source for `stdio_server` that diverts malformed lines to an error reply."""

    def __init__(self, source: Any) -> None:
        self._source = source
        self.write_stream: Any = None

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._source:
            if not line.strip():
                continue
            error = _problem(line)
            if error is None:
                yield line
            elif self.write_stream is not None:
                await self.write_stream.send(SessionMessage(error))


def _problem(line: str) -> types.JSONRPCError | None:
    if len(line) > MAX_LINE_BYTES:
        return _error(None, types.INVALID_REQUEST, f"Message too large (limit {MAX_LINE_BYTES} bytes)")
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        return None
    except ValueError:
        pass
    try:
        data = json.loads(line)
    except ValueError:
        logger.info("stdin: a line that is not JSON was answered with a parse error")
        return _error(None, types.PARSE_ERROR, "Parse error: each line must be one JSON-RPC 2.0 message")
    request_id = data.get("id") if isinstance(data, dict) else None
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        request_id = None
    logger.info("stdin: a JSON line that is not a JSON-RPC message was answered with invalid request")
    return _error(
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
        lines.write_stream = write_stream
        low = server._lowlevel_server
        await low.run(read_stream, write_stream, low.create_initialization_options())
