"""One program's exchange with its sandboxed interpreter (child.py's protocol), from the server's side.

The server sends the program, answers each `call` line through `call_tool` (the front door, as the caller), and
takes the `done` line. Everything read is bounded (`MAX_LINE` a line, JSON only, nothing evaluated); the wall
clock is `timeout_s`, past which the interpreter is killed. Whatever happens, the interpreter is killed and
reaped before this returns, and with it everything the program started (the sandbox's PID namespace ends).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from toolsets.extensions.codemode.pool import finish

MAX_LINE = 1024 * 1024  # a call's arguments, or the program's answer (its output and result are clipped inside)
MAX_NAME = 128

CallTool = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]  # -> the call's envelope (nested.py's shape)


class ProgramFailedError(Exception):
    """The interpreter broke the protocol or ended without answering (a limit killed it, most likely)."""


class ProgramTimedOutError(Exception):
    pass


@dataclass(frozen=True, slots=True)
class ProgramAnswer:
    output: str
    output_bytes: int
    result: Any
    result_json_bytes: int
    error: dict[str, Any] | None


async def run_program(process: Process, code: str, *, timeout_s: float, cap: int, call_tool: CallTool) -> ProgramAnswer:
    """Run `code` on `process` (a fresh interpreter, killed here at the end)."""
    try:
        with anyio.fail_after(timeout_s):
            return await _exchange(process, code, cap, call_tool)
    except TimeoutError:
        raise ProgramTimedOutError from None
    finally:
        await finish(process)


async def _exchange(process: Process, code: str, cap: int, call_tool: CallTool) -> ProgramAnswer:
    assert process.stdin is not None and process.stdout is not None
    lines = BufferedByteReceiveStream(process.stdout)
    try:
        ready = await _line(lines)
        if ready.get("op") != "ready":
            raise ProgramFailedError("the interpreter did not start")
        await _send(process, {"op": "run", "code": code, "cap": cap})
        while True:
            message = await _line(lines)
            op = message.get("op")
            if op == "done":
                return _answer(message)
            if op != "call":
                raise ProgramFailedError(f"the interpreter sent {str(op)[:40]!r}")
            name, arguments = message.get("name"), message.get("arguments")
            if not isinstance(name, str) or not name or len(name) > MAX_NAME or not isinstance(arguments, dict):
                envelope = {"ok": False, "code": "validation", "reason": "a tool name and keyword arguments"}
            else:
                envelope = await call_tool(name, arguments)
            await _send(process, {"op": "answer", "envelope": envelope})
    except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, anyio.ClosedResourceError):
        raise ProgramFailedError(
            "the program's interpreter ended without an answer (it was killed at a limit: memory, processes, open "
            "files or file size, or it closed its own protocol pipe)"
        ) from None
    except anyio.DelimiterNotFound:
        raise ProgramFailedError(f"the program sent a message longer than {MAX_LINE} bytes") from None


async def _line(lines: BufferedByteReceiveStream) -> dict[str, Any]:
    raw = await lines.receive_until(b"\n", MAX_LINE)
    try:
        message = json.loads(raw)
    except ValueError:
        raise ProgramFailedError("the program sent a line that is not JSON") from None
    if not isinstance(message, dict):
        raise ProgramFailedError("the program sent a line that is not a JSON object")
    return message


async def _send(process: Process, message: dict[str, Any]) -> None:
    assert process.stdin is not None
    await process.stdin.send(json.dumps(message, separators=(",", ":")).encode() + b"\n")


def _answer(message: dict[str, Any]) -> ProgramAnswer:
    def count(key: str) -> int:
        value = message.get(key)
        return value if isinstance(value, int) and value >= 0 else 0

    output = message.get("output")
    error = message.get("error")
    return ProgramAnswer(
        output=output if isinstance(output, str) else "",
        output_bytes=count("output_bytes"),
        result=message.get("result"),
        result_json_bytes=count("result_json_bytes"),
        error=error if isinstance(error, dict) else None,
    )
