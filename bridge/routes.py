"""The agent-rpc shim's HTTP routes: a device's SSE stream of envelopes, and its answers.

Every refusal is a 4xx with a JSON-RPC error body, and changes nothing.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from bridge.jsonrpc import (
    ALREADY_ANSWERED,
    FORBIDDEN,
    INVALID_PARAMS,
    TOO_LARGE,
    UNAUTHORIZED,
    UNAVAILABLE,
    UNKNOWN_CALL,
    BadMessage,
    error_body,
    parse_response,
)
from bridge.pending import Outcome
from bridge.service import DeviceBridge, TaskAnswers
from toolsets.core.deferred import DeviceTools, device_result
from toolsets.core.problems import problems

logger = logging.getLogger("truloop.shim")

MAX_BODY_BYTES = 256 * 1024

DEVICE_ROLE = "member"  # the role whose profile holds the deferred (device) tools


@dataclass(frozen=True, slots=True)
class DeviceCaller:
    user_id: str
    role: str
    expires_at: float | None  # the token's exp (epoch seconds): a stream is closed then


Identify = Callable[[Request], Awaitable[DeviceCaller | None]]


def _refuse(status: int, request_id: Any, code: int, message: str, data: Any = None) -> JSONResponse:
    headers = {"WWW-Authenticate": 'Bearer error="invalid_token"'} if status == 401 else None
    return JSONResponse(error_body(request_id, code, message, data), status_code=status, headers=headers)


async def _read_limited(request: Request, limit: int) -> bytes | None:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


ROUTE_PREFIXES = ("", "/assistant")


def shim_routes(
    bridge: DeviceBridge,
    identify: Identify,
    device_tools: DeviceTools,
    *,
    task_answers: TaskAnswers | None = None,
    max_body: int = MAX_BODY_BYTES,
) -> list[Route]:
    """`task_answers`: who finishes an MCP task when the device answers the call it waits on (None: no tasks)."""

    async def caller_of(request: Request) -> DeviceCaller | Response:
        caller = await identify(request)
        if caller is None:
            return _refuse(401, None, UNAUTHORIZED, "Unauthorized: send Authorization: Bearer <JWT>")
        if caller.role != DEVICE_ROLE:
            return _refuse(403, None, FORBIDDEN, f"Forbidden: device routes serve {DEVICE_ROLE} tokens only")
        return caller

    async def tool_message(request: Request) -> Response:
        caller = await caller_of(request)
        if isinstance(caller, Response):
            return caller
        user_id = caller.user_id
        body = await _read_limited(request, max_body)
        if body is None:
            return _refuse(413, None, TOO_LARGE, f"The body is larger than {max_body} bytes")
        try:
            response = parse_response(body)
        except BadMessage as bad:
            return _refuse(400, None, bad.code, bad.message)
        try:
            call = await bridge.pending_call(str(response.id))
            if call is None or call.user_id != user_id:
                outcome = await bridge.answer(user_id, response) if call is None else Outcome.UNKNOWN
                return _unanswerable(outcome, response.id)
            tool = device_tools.by_method(call.method)
            if tool is not None and response.error is None:
                try:
                    device_result(tool, response.result)
                except ValidationError as exc:
                    found = [{"field": f, "problem": m} for f, m in problems(exc, whole="result", limit=10)]
                    return _refuse(422, response.id, INVALID_PARAMS, f"The result does not fit {call.method}", found)
            taken = call.task_id is not None and task_answers is not None
            if taken:  # the task records the answer first: it is not lost if finishing it fails here
                assert task_answers is not None
                await task_answers.device_answered(call, response)
            outcome = await bridge.answer(user_id, response, taken=taken)
        except Exception as exc:
            logger.warning("tool-message could not reach the bridge store: %s", type(exc).__name__)
            return _refuse(503, response.id, UNAVAILABLE, "The bridge's store is unavailable; retry shortly")
        if outcome is Outcome.COMPLETED:
            return JSONResponse({"jsonrpc": "2.0", "id": response.id, "result": {"accepted": True}})
        return _unanswerable(outcome, response.id)

    async def rpc_stream(request: Request) -> Response:
        caller = await caller_of(request)
        if isinstance(caller, Response):
            return caller
        try:
            await bridge.backend.ping()
        except Exception:
            return _refuse(503, None, UNAVAILABLE, "The bridge's store is unavailable; reconnect shortly")
        return StreamingResponse(
            _events(bridge, caller.user_id, caller.expires_at),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    # The existing apps' client guide posts under /assistant (the gateway path they were built against): the
    # same routes answer there too.
    return [
        Route(f"{prefix}/api/v1/agent/{path}", endpoint, methods=[method])
        for prefix in ROUTE_PREFIXES
        for path, endpoint, method in (("tool-message", tool_message, "POST"), ("rpc-stream", rpc_stream, "GET"))
    ]


def _unanswerable(outcome: Outcome, request_id: Any) -> JSONResponse:
    if outcome is Outcome.ALREADY_ANSWERED:
        return _refuse(409, request_id, ALREADY_ANSWERED, "This call was already answered")
    return _refuse(404, request_id, UNKNOWN_CALL, "Unknown or expired call id (or not one of your calls)")


async def _events(bridge: DeviceBridge, user_id: str, expires_at: float | None) -> AsyncIterator[str]:
    async with bridge.device_stream(user_id) as envelopes:
        yield ": connected\n\n"
        while True:
            wait = bridge.heartbeat
            if expires_at is not None:
                left = expires_at - time.time()
                if left <= 0:  # the device reconnects with a fresh token
                    yield 'event: close\ndata: {"reason":"token_expired"}\n\n'
                    return
                wait = min(wait, left)
            envelope = None
            with anyio.move_on_after(wait):
                try:
                    envelope = await envelopes.receive()
                except anyio.EndOfStream:  # the server is shutting down
                    return
            if envelope is None:
                yield ": heartbeat\n\n"
            else:
                yield f"event: agent-rpc\ndata: {json.dumps(envelope, ensure_ascii=False)}\n\n"
