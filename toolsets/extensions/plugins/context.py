"""`PluginContext`: all a plugin is given about the server (never its internals).

context.tool_name      the plugin's name (its spec's "name": a tool's, a resource's or a prompt's)
context.kind           "tool", "resource" or "prompt"
context.version        this version's content hash (the first 12 hex digits of the file's SHA-256)
context.caller_id      who is calling (None in create())
context.role           "member" or "guest" (None in create())
context.request_id     the MCP request's id, for your logs (None in create())
context.logger         a `logging.Logger` named truloop.plugin.<name> (the server's stderr)
context.data_dir       a folder of this plugin's own, kept across versions and restarts
context.open_data(path)
                       a file inside data_dir (`path` relative, `/`-separated), opened for reading in binary,
                       contained: no `..`, no symlink followed out of the folder (FileNotFoundError otherwise)
context.read_data(path), context.read_text(path, encoding="utf-8")
                       its bytes or text, at most `max_read_bytes` of them (`ResourceTooLarge` past it)
context.report_progress(progress, total=None, message=None)
                       MCP progress for this call; works in sync and async code, with or without `await`
context.call_tool(name, arguments=None)
                       another tool of the assistant, called as this call's caller (their profile, the gates,
                       confirmation and the audit log apply as to the model's own calls): its result (a dict).
                       From sync code it returns the result; from async code, `await` it. A failure raises
                       `ToolCallError` (`.code`, `.reason`, `.retryable`). Not available in create().
context.log(level, message, data=None)
                       a log message to the MCP client (`notifications/message` on this call's stream), at an
                       RFC 5424 level: debug, info, notice, warning, error, critical, alert, emergency
context.client_supports(name)
                       whether the client declared "elicitation", "sampling" or "roots"
context.elicit(message, schema, key=None)
                       ask the user (MCP elicitation): {"action": "accept"|"decline"|"cancel", "content": {...}}
context.sample(messages, max_tokens=..., system_prompt=None, key=None, **params)
                       ask the client's model (MCP sampling): {"role", "content", "model", "stopReason"}
context.list_roots(key=None)
                       the client's roots: [{"uri": "file://...", "name": ...}]
context.ask(requests)  several of the above at once: {key: {"method": ..., "params": {...}}} -> {key: result}

Questions to the client work in both protocol eras: a handshake-era client is asked on its session while the
handler waits; a 2026-07-28 client has no back-channel, so the first unanswered question ends this run of the
handler (with `InputPending`, which it must not catch), the client answers, and the handler runs again from the
start, this time getting the answers in the same order (keys default to the question's place in the run). A
client that did not declare what a question needs raises `ClientRequestError` (`.code` "client_capability").
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

ProgressSink = Callable[[float, float | None, str | None], None]
LogSink = Callable[[str, Any, str | None], None]  # level, data, logger
# Sends the client requests of one `ask` ({key: {"method", "params"}}) and returns a future of the JSON envelope:
# {"ok": true, "value": {key: result}}, or {"ok": false, "code", "reason"} ("input_required": the run must end)
ClientSink = Callable[[dict[str, Any]], "concurrent.futures.Future[dict[str, Any]]"]
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
METHODS = {"elicitation": "elicitation/create", "sampling": "sampling/createMessage", "roots": "roots/list"}
# Sends one nested call (tool name, arguments) and returns a future of its JSON envelope (nested.py's shape).
NestedSink = Callable[[str, dict[str, Any]], "concurrent.futures.Future[dict[str, Any]]"]


DEFAULT_MAX_READ_BYTES = 8 * 1024 * 1024  # a resource's contents, unless the server says otherwise

START_TASK_KEY = "truloop/start-task"  # (not a question: `ClientRequests` hands it to `ClientPort.start_task`)
START_TASK_METHOD = "truloop/startTask"


class ToolCallError(Exception):
    """A tool called through `context.call_tool` failed, was cancelled or was refused; `code` is the assistant's
    error code (validation, not_found, forbidden, cancelled, ...), `reason` what the model would have read."""

    def __init__(self, code: str, reason: str, retryable: bool = False) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason
        self.retryable = retryable


class ClientRequestError(Exception):
    """The client could not be asked: `code` "client_capability" (it did not declare what the question needs) or
    "not_configured" (this call has no MCP client: in-process, the pipe); `reason` says which."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason


class ResourceTooLarge(Exception):  # noqa: N818 - the name the server recognises (in a worker too)
    """A file read with `read_data` / `read_text` is larger than the server lets a resource be."""


class InputPending(BaseException):  # a BaseException, so a plugin's `except Exception` lets it by
    """(2026-07-28) The question went to the client; this run of the handler ends here and runs again with the
    answer. Do not catch it."""


def _no_client(requests: dict[str, Any]) -> concurrent.futures.Future[dict[str, Any]]:
    future: concurrent.futures.Future[dict[str, Any]] = concurrent.futures.Future()
    future.set_result({"ok": False, "code": "not_configured", "reason": "there is no MCP client to ask here"})
    return future


def _no_log(level: str, data: Any, logger: str | None) -> None:
    return None


def _no_nested(name: str, arguments: dict[str, Any]) -> concurrent.futures.Future[dict[str, Any]]:
    future: concurrent.futures.Future[dict[str, Any]] = concurrent.futures.Future()
    future.set_result(
        {"ok": False, "code": "not_configured", "reason": "context.call_tool is not available here (in create)"}
    )
    return future


def _no_progress(progress: float, total: float | None, message: str | None) -> None:
    return None


class _Done:
    """What `report_progress` returns: awaiting it is allowed and returns at once."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield


@dataclass(frozen=True, slots=True)
class PluginContext:
    tool_name: str
    version: str
    data_dir: Path
    logger: logging.Logger
    caller_id: str | None = None
    role: str | None = None
    request_id: str | None = None
    kind: str = "tool"
    client_capabilities: dict[str, Any] = field(default_factory=dict)
    max_read_bytes: int = DEFAULT_MAX_READ_BYTES
    _progress: ProgressSink = field(default=_no_progress, repr=False)
    _nested: NestedSink = field(default=_no_nested, repr=False)
    _client: ClientSink = field(default=_no_client, repr=False)
    _log: LogSink = field(default=_no_log, repr=False)
    _asked: list[int] = field(default_factory=lambda: [0], repr=False)  # questions asked so far in this run

    def open_data(self, path: str) -> BinaryIO:
        """The regular file at `path` (relative, `/`-separated) inside `data_dir`, open for reading (binary; close it),
        opened one component at a time from the folder with no symlink followed out of it (the docs' opener)."""
        from toolsets.infra.contained_open import open_inside

        fd = open_inside(os.path.realpath(self.data_dir), str(path))
        if fd is None:
            raise FileNotFoundError(f"{path!r} is not a readable file inside this plugin's data folder")
        return os.fdopen(fd, "rb")

    def read_data(self, path: str) -> bytes:
        """The bytes of `open_data(path)`; ResourceTooLarge past `max_read_bytes` (never more is read)."""
        with self.open_data(path) as handle:
            data = handle.read(self.max_read_bytes + 1)
        if len(data) > self.max_read_bytes:
            raise ResourceTooLarge(f"{path!r} is larger than {self.max_read_bytes} bytes")
        return data

    def read_text(self, path: str, encoding: str = "utf-8") -> str:
        return self.read_data(path).decode(encoding)

    def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> _Done:
        """Never blocks and never fails the call: progress is a hint for the user's host."""
        try:
            self._progress(float(progress), None if total is None else float(total), message)
        except Exception:
            self.logger.debug("progress not sent", exc_info=True)
        return _Done()

    def log(self, level: str, message: Any, data: Any = None) -> _Done:
        """A `notifications/message` to the client; never blocks and never fails the call."""
        if level not in LEVELS:
            raise ValueError(f"level must be one of {', '.join(LEVELS)}")
        try:
            payload = message if data is None else {"message": message, "data": data}
            self._log(level, payload, self.tool_name)
        except Exception:
            self.logger.debug("log message not sent", exc_info=True)
        return _Done()

    def client_supports(self, name: str) -> bool:
        """Whether the client declared `elicitation`, `sampling` or `roots`."""
        return self.client_capabilities.get(name) is not None

    def ask(self, requests: dict[str, dict[str, Any]]) -> Any:
        """Several questions at once, `{key: {"method": ..., "params": {...}}}`: their answers by key. Returns them
        from sync code, an awaitable on an event loop."""
        if not isinstance(requests, dict) or not requests:
            raise TypeError("ask({key: {'method': ..., 'params': {...}}, ...}) needs at least one request")
        return _resolved(self._client({str(key): dict(value) for key, value in requests.items()}), _answered)

    def elicit(self, message: str, schema: dict[str, Any], key: str | None = None) -> Any:
        """The user's answer to a form: `{"action": "accept" | "decline" | "cancel", "content": {...}}`."""
        params = {"mode": "form", "message": str(message), "requestedSchema": schema}
        return self._one(key or self._next_key("elicitation"), METHODS["elicitation"], params)

    def sample(
        self,
        messages: str | list[dict[str, Any]],
        max_tokens: int = 1000,
        system_prompt: str | None = None,
        key: str | None = None,
        **params: Any,
    ) -> Any:
        """The client's model's answer: `{"role", "content", "model", "stopReason"}`. `messages` is a prompt (one
        user message) or MCP sampling messages; `params` adds e.g. `temperature`, `modelPreferences`."""
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        request: dict[str, Any] = {"messages": messages, "maxTokens": int(max_tokens), **params}
        if system_prompt is not None:
            request["systemPrompt"] = system_prompt
        return self._one(key or self._next_key("sampling"), METHODS["sampling"], request)

    def list_roots(self, key: str | None = None) -> Any:
        """The client's roots: `[{"uri": "file:///...", "name": ...}]`."""
        answer = self._one(key or self._next_key("roots"), METHODS["roots"], {})
        return _then(answer, lambda result: list((result or {}).get("roots") or []))

    def start_task(self) -> Any:
        """(A tool with `"task_start": "run"`.) Everything before ran while the client waited; if the client asked for
        a task, the call becomes one here: this run ends, and the task runs `run` again from the start, with the
        answers the client gave so far. Otherwise it goes on. Returns None (an awaitable on an event loop)."""
        return _then(self.ask({START_TASK_KEY: {"method": START_TASK_METHOD, "params": {}}}), lambda answers: None)

    def _next_key(self, what: str) -> str:
        self._asked[0] += 1
        return f"{what}-{self._asked[0]}"

    def _one(self, key: str, method: str, params: dict[str, Any]) -> Any:
        return _then(self.ask({key: {"method": method, "params": params}}), lambda answers: answers[key])

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """Another tool's result, as this call's caller. Returns it from sync code; returns an awaitable on an
        event loop (async code). Raises `ToolCallError` when the call fails."""
        if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
            raise TypeError("call_tool(name: str, arguments: dict | None)")
        return _resolved(self._nested(name, dict(arguments or {})), _unwrapped)


def _resolved(future: concurrent.futures.Future[dict[str, Any]], unwrap: Callable[[dict[str, Any]], Any]) -> Any:
    """What the server answered, unwrapped: at once in sync code, as an awaitable on an event loop (async code)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return unwrap(future.result())
    return _awaited(future, unwrap)


async def _awaited(future: concurrent.futures.Future[dict[str, Any]], unwrap: Callable[[dict[str, Any]], Any]) -> Any:
    return unwrap(await asyncio.wrap_future(future))


def _then(answer: Any, pick: Callable[[Any], Any]) -> Any:
    """`pick` applied to an answer `_resolved` gave: now, or once it is awaited."""
    if asyncio.iscoroutine(answer):
        return _picked(answer, pick)
    return pick(answer)


async def _picked(answer: Any, pick: Callable[[Any], Any]) -> Any:
    return pick(await answer)


def _unwrapped(envelope: dict[str, Any]) -> Any:
    if envelope.get("ok"):
        return envelope.get("value")
    raise ToolCallError(
        str(envelope.get("code") or "handler_error"), str(envelope.get("reason") or ""), bool(envelope.get("retryable"))
    )


def _answered(envelope: dict[str, Any]) -> Any:
    if envelope.get("ok"):
        return envelope.get("value") or {}
    if envelope.get("code") == "input_required":
        raise InputPending("the question went to the client; this run ends here")
    raise ClientRequestError(str(envelope.get("code") or "handler_error"), str(envelope.get("reason") or ""))


def plugin_logger(tool_name: str) -> logging.Logger:
    return logging.getLogger(f"truloop.plugin.{tool_name}")
