"""One look at each JSON-RPC message POSTed to an MCP endpoint, before any transport sees it.

- A message whose `id` is not a string or an integer (`null`, `1.5`, `true`, an object) is refused with
  `-32600 Invalid Request` and status 400, as stdio refuses it; nothing of it runs. (The SDK's HTTP transports
  read such a request as a notification: it was answered 202 and never answered.)
- What the message is, for the middleware behind (`server.http.unread_backlog`, the lean HTTP path):
  `scope["truloop.rpc"]` holds a `Peeked` (the parsed object, a request and its id or not, the body's size).

The body is read once here, within the transport's own size limit, and given back to the app behind as it
came (`server.http.body_replay.Replay`); a body over the limit, or one that is not a JSON object, goes on unread by
this middleware: the transport answers it as it always does (413, a parse error).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from server.http.body_replay import Replay, read_body
from server.stdio.line_check import invalid_id_error, valid_id
from toolsets.core import safe_json

PEEKED = "truloop.rpc"
INVALID_ID = invalid_id_error()


@dataclass(frozen=True, slots=True)
class Peeked:
    """A POSTed message: `size` bytes, the JSON object `message` (read-only: the app behind reads the body
    itself; a speed path may take this instead of parsing it again); a request (it has a `method` and an
    `id`) with `request_id`, or not."""

    size: int
    message: dict[str, Any]
    is_request: bool
    request_id: str | int | None = None


class RpcPeek:
    def __init__(self, app: ASGIApp, *, paths: Collection[str], max_body: int) -> None:
        self.app = app
        self.paths = frozenset(paths)
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] not in self.paths:
            await self.app(scope, receive, send)
            return
        messages, body = await read_body(receive, self.max_body)
        replay = Replay(messages, receive)
        if body is not None:
            peeked = _peek(body)
            if peeked is False:
                await JSONResponse(INVALID_ID, status_code=400)(scope, replay, send)
                return
            if peeked is not None:
                scope[PEEKED] = peeked
        try:
            await self.app(scope, replay, send)
        finally:  # uvicorn keeps a connection's last scope until its next request: the message goes now
            scope.pop(PEEKED, None)


def _peek(body: bytes) -> Peeked | bool | None:
    """What `body` is; False for a message with an invalid id; None when it is no JSON object."""
    try:
        data: Any = safe_json.loads(body)
    except safe_json.JsonDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    if "id" not in data:
        return Peeked(len(body), data, False)
    request_id = data["id"]
    if not valid_id(request_id):
        return False
    return Peeked(len(body), data, "method" in data, request_id)
