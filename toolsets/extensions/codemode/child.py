"""Code mode's interpreter, inside the sandbox: runs one program the model wrote, then exits.

Standard library only: its source is handed to `python -I -c` in the sandbox (nothing of the project is mounted).
One JSON object a line each way over the protocol pipes (fds 0 and 1, moved aside at start; fds 0, 1 and 2 then
point at /dev/null, so a program's own writes never reach the protocol):

    out  {"op": "ready"}                                   the interpreter is up (a warm one waits here)
    in   {"op": "run", "code": "...", "cap": 65536}        the program, and the bound of its output and result
    out  {"op": "call", "name": "...", "arguments": {...}}  `tools.NAME(**arguments)`, one at a time
    in   {"op": "answer", "envelope": {"ok": true, "value": {...}}}  or {"ok": false, "code", "reason", "retryable"}
    out  {"op": "done", "output": "...", "output_bytes": N, "result": ..., "result_json_bytes": N,
          "error": null | {"type", "message", "trace", "code"}}

The server never trusts what arrives here: it reads bounded lines, as JSON only, and counts every call itself.
"""

import io
import json
import os
import sys
import threading
import traceback
from typing import Any, BinaryIO


class ToolCallError(Exception):
    """A tool call the front door refused, or that failed: `.code`, `.reason`, `.retryable` (docs/errors.md)."""

    def __init__(self, code: str, reason: str, retryable: bool = False) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason
        self.retryable = retryable


class BoundedText(io.TextIOBase):
    """What a program prints: the first `cap` bytes kept, the rest counted."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.kept: list[bytes] = []
        self.size = 0
        self.total = 0

    def writable(self) -> bool:
        return True

    def write(self, text: Any) -> int:
        text = str(text)
        data = text.encode("utf-8", "replace")
        self.total += len(data)
        room = self.cap - self.size
        if room > 0:
            piece = data[:room]
            self.kept.append(piece)
            self.size += len(piece)
        return len(text)

    def text(self) -> str:
        return b"".join(self.kept).decode("utf-8", "ignore")


class Channel:
    def __init__(self, reader: BinaryIO, writer: BinaryIO) -> None:
        self.reader = reader
        self.writer = writer
        self.lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        self.writer.write(json.dumps(message, ensure_ascii=False, allow_nan=False).encode(errors="replace") + b"\n")
        self.writer.flush()

    def receive(self) -> Any:
        line = self.reader.readline()
        if not line:
            os._exit(0)  # the server is gone or done with this program
        return json.loads(line)

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        try:
            json.dumps(arguments, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"tools.{name}: its arguments must be JSON data ({exc})") from None
        with self.lock:  # one call at a time, whichever thread of the program makes it
            self.send({"op": "call", "name": name, "arguments": arguments})
            answer = self.receive()
        envelope = answer.get("envelope") if isinstance(answer, dict) else None
        if not isinstance(envelope, dict):
            raise ToolCallError("handler_error", "the server sent no answer")
        if envelope.get("ok"):
            return envelope.get("value")
        raise ToolCallError(str(envelope.get("code")), str(envelope.get("reason")), bool(envelope.get("retryable")))


class Tools:
    """`tools.NAME(**arguments)`: a tool of the caller's profile, through the server's front door."""

    def __init__(self, channel: Channel) -> None:
        object.__setattr__(self, "_channel", channel)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        channel = object.__getattribute__(self, "_channel")

        def call(*args: Any, **arguments: Any) -> Any:
            if args:
                raise TypeError(f"tools.{name} takes keyword arguments only, e.g. tools.{name}(query='...')")
            return channel.call(name, arguments)

        call.__name__ = name
        return call

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("tools is read-only")


def encoded_result(value: Any, cap: int) -> tuple[Any, int]:
    """(the result as sent, the size of its JSON): past `cap`, its JSON text clipped."""
    if value is None:
        return None, 0
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")  # a lone surrogate passes json.dumps but has no UTF-8 form
    except (TypeError, ValueError, RecursionError) as exc:
        raise TypeError(f"`result` must be JSON data (dicts, lists, strings, numbers, booleans, None): {exc}") from None
    size = len(text.encode("utf-8"))
    if size <= cap:
        return value, size
    return text.encode("utf-8")[:cap].decode("utf-8", "ignore"), size


def error_of(exc: BaseException) -> dict[str, Any]:
    frames = traceback.format_exception(type(exc), exc, exc.__traceback__)
    program_frames = [frame for frame in frames if "<program>" in frame or not frame.startswith("  File ")]
    return {
        "type": type(exc).__name__,
        "message": str(exc)[:2000],
        "trace": "".join(program_frames)[-4000:],
        "code": getattr(exc, "code", None) if isinstance(exc, ToolCallError) else None,
    }


def main() -> None:
    channel = Channel(os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb"))
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    channel.send({"op": "ready"})
    order = channel.receive()
    cap = int(order.get("cap") or 65536)
    printed = BoundedText(cap)
    sys.stdout = sys.stderr = printed
    namespace: dict[str, Any] = {
        "__name__": "__main__",
        "tools": Tools(channel),
        "ToolCallError": ToolCallError,
        "result": None,
    }
    error: dict[str, Any] | None = None
    result: Any = None
    result_bytes = 0
    try:
        exec(compile(str(order.get("code") or ""), "<program>", "exec"), namespace)
        result, result_bytes = encoded_result(namespace.get("result"), cap)
    except SystemExit as exc:  # exit() ends a program; a code other than 0 is its error
        if exc.code not in (None, 0):
            error = error_of(exc)
        result, result_bytes = _quiet_result(namespace.get("result"), cap)
    except BaseException as exc:  # KeyboardInterrupt too: the program's end, reported
        error = error_of(exc)
    channel.send(
        {
            "op": "done",
            "output": printed.text(),
            "output_bytes": printed.total,
            "result": result,
            "result_json_bytes": result_bytes,
            "error": error,
        }
    )
    os._exit(0)


def _quiet_result(value: Any, cap: int) -> tuple[Any, int]:
    try:
        return encoded_result(value, cap)
    except TypeError:
        return None, 0


if __name__ == "__main__":
    main()
