"""The worker process of `--plugin-isolation process` and `sandbox`: one plugin version, over stdin/stdout.

    python -m toolsets.extensions.plugins.worker

One JSON object a line each way. In: `load` {path, source, module}, `create` {name, version, data_dir}, `call`
{id, input, info}, `tool_result` {nid, envelope} (the answer to a `call_tool`), `close`. Out: `loaded` {spec},
`created`, `progress` {id, ...}, `result` {id, value}, `error` {id, type, message, fatal?, not_json?},
`call_tool` {id, nid, name, arguments} (the plugin's `context.call_tool`), `client` {id, nid, requests} (its
`context.ask`, answered like `call_tool` with `tool_result`), `log` {id, level, data, logger}, `failed` {message},
`closed`, and
`exiting` {id}: the call whose code called `os._exit` (said just before the process ends, so the server fails
that call alone and retries or releases the others). The plugin's own stdout goes to stderr (the pipe is the
protocol), and the worker ends when its input ends (the server is gone). Whatever a plugin raises (`SystemExit`
and `KeyboardInterrupt` included) is that call's `error`; the worker lives on.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextlib
import itertools
import json
import os
import signal
import sys
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

from toolsets.extensions.plugins.context import PluginContext, plugin_logger
from toolsets.extensions.plugins.failures import fatal_kind
from toolsets.extensions.plugins.module import PluginImportError, PluginModule, fitted, import_plugin
from toolsets.extensions.plugins.plugin_loop import is_async


class NotJSON(ValueError):  # noqa: N818 - the error type the model sees
    pass


def encoded(message: dict[str, Any]) -> bytes:
    """One protocol line; NotJSON when the message holds what JSON cannot carry (NaN, a lone surrogate...)."""
    try:
        return json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode() + b"\n"
    except (TypeError, ValueError, RecursionError) as exc:
        raise NotJSON(f"{type(exc).__name__}: {exc}") from None


class Worker:
    def __init__(self, out: BinaryIO) -> None:
        self._out = out
        self._calls_by_thread: dict[int, int] = {}  # thread ident -> the call its sync code runs
        self._calls_by_task: dict[asyncio.Task[Any], int] = {}  # a call's handling task -> its id
        self._write_lock = threading.Lock()
        self._loaded: PluginModule | None = None
        self._run: Any = None
        self._instance: Any = None
        self._threads = ThreadPoolExecutor(max_workers=32, thread_name_prefix="plugin")
        self._header: dict[str, Any] = {}
        self._nested: dict[int, concurrent.futures.Future[dict[str, Any]]] = {}  # nid -> the plugin's wait
        self._nids = itertools.count(1)
        self._in_flight = 0
        self._reap = False  # in the sandbox: what a call left running is killed once no call runs

    def send(self, message: dict[str, Any]) -> None:
        """Write one line. A result that is not JSON data becomes that call's `error` (`not_json`); any other
        message that cannot be encoded raises NotJSON (a progress report is then dropped by its sender)."""
        try:
            data = encoded(message)
        except NotJSON as exc:
            op = message.get("op")
            if op == "result":
                call_id = message.get("id")
                data = encoded({"op": "error", "id": call_id, "type": "NotJSON", "message": str(exc), "not_json": True})
            elif op in ("loaded", "created", "closed"):
                data = encoded({"op": "failed", "message": f"not plain JSON data: {exc}"})
            else:
                raise
        with self._write_lock:
            self._out.write(data)
            self._out.flush()

    def running_call(self) -> int | None:
        """The call whose code runs on this thread (or in this task), if any."""
        call_id = self._calls_by_thread.get(threading.get_ident())
        if call_id is not None:
            return call_id
        try:
            task = asyncio.current_task()
        except RuntimeError:
            return None
        return self._calls_by_task.get(task) if task is not None else None

    def context(self, info: dict[str, Any] | None = None, call_id: int | None = None) -> PluginContext:
        header = self._header
        extra: dict[str, Any] = {}
        if call_id is not None:

            def progress(value: float, total: float | None, message: str | None) -> None:
                self.send({"op": "progress", "id": call_id, "progress": value, "total": total, "message": message})

            def log(level: str, data: Any, logger: str | None) -> None:
                self.send({"op": "log", "id": call_id, "level": level, "data": data, "logger": logger})

            extra["_progress"] = progress
            extra["_log"] = log
            extra["_nested"] = partial(self.call_tool, call_id)
            extra["_client"] = partial(self.ask_client, call_id)
        info = info or {}
        capabilities = info.get("client_capabilities")
        if isinstance(info.get("max_read_bytes"), int):
            extra["max_read_bytes"] = info["max_read_bytes"]
        return PluginContext(
            tool_name=header["name"],
            version=header["version"],
            data_dir=Path(header["data_dir"]),
            logger=plugin_logger(header["name"]),
            caller_id=info.get("caller_id"),
            role=info.get("role"),
            request_id=info.get("request_id"),
            kind=str(info.get("kind") or "tool"),
            client_capabilities=capabilities if isinstance(capabilities, dict) else {},
            **extra,
        )

    def call_tool(self, call_id: int, name: str, arguments: dict[str, Any]) -> concurrent.futures.Future[Any]:
        """Ask the server to run another tool for this call; the future holds its envelope."""
        return self._request({"op": "call_tool", "id": call_id, "name": name, "arguments": arguments}, "arguments")

    def ask_client(self, call_id: int, requests: dict[str, Any]) -> concurrent.futures.Future[Any]:
        """Ask the server to put these questions to the MCP client for this call; the future holds the envelope."""
        return self._request({"op": "client", "id": call_id, "requests": requests}, "requests")

    def _request(self, message: dict[str, Any], what: str) -> concurrent.futures.Future[Any]:
        """Send a request the server answers with `tool_result` {nid, envelope}; the future holds the envelope (a
        refusal at once when `what` is not JSON data)."""
        future: concurrent.futures.Future[dict[str, Any]] = concurrent.futures.Future()
        nid = next(self._nids)
        self._nested[nid] = future
        try:
            self.send({**message, "nid": nid})
        except NotJSON as exc:
            self._nested.pop(nid, None)
            future.set_result({"ok": False, "code": "validation", "reason": f"the {what} are not JSON data: {exc}"})
        return future

    async def invoke(self, function: Any, *args: Any, call_id: int | None = None) -> Any:
        args = fitted(function, *args)
        if is_async(function):
            return await function(*args)

        def in_thread() -> Any:
            ident = threading.get_ident()
            if call_id is not None:
                self._calls_by_thread[ident] = call_id
            try:
                return function(*args)
            finally:
                self._calls_by_thread.pop(ident, None)

        result = await asyncio.get_running_loop().run_in_executor(self._threads, in_thread)
        if hasattr(result, "__await__"):
            return await result
        return result

    async def _call(self, message: dict[str, Any]) -> None:
        call_id = message["id"]
        task = asyncio.current_task()
        if task is not None:
            self._calls_by_task[task] = call_id
        try:
            value = await self.invoke(
                self._run, message.get("input") or {}, self.context(message.get("info"), call_id), call_id=call_id
            )
        except BaseException as exc:
            trace = traceback.format_exc(limit=20)
            error = {"op": "error", "id": call_id, "type": type(exc).__name__, "message": trace}
            fatal = fatal_kind(exc)
            return self.send({**error, "fatal": fatal} if fatal else error)
        finally:
            if task is not None:
                self._calls_by_task.pop(task, None)
        info = message.get("info") or {}
        if info.get("kind") == "resource":
            value = bounded(value, info.get("max_read_bytes"))
        if isinstance(value, bytes | bytearray) and info.get("kind") == "resource":
            value = {"blob": base64.b64encode(bytes(value)).decode("ascii")}  # a resource's binary contents
        return self.send({"op": "result", "id": call_id, "value": value})

    async def handle(self, message: dict[str, Any]) -> None:
        op = message.get("op")
        if op == "load":
            try:
                self._loaded = import_plugin(message["source"], Path(message["path"]), message["module"])
                json.dumps(self._loaded.raw_spec, allow_nan=False)
            except PluginImportError as exc:
                return self.send({"op": "failed", "message": str(exc)})
            except (TypeError, ValueError) as exc:
                return self.send({"op": "failed", "message": f"TOOL_SPEC is not plain JSON data: {exc}"})
            self._run = self._loaded.run
            return self.send({"op": "loaded", "spec": self._loaded.raw_spec})
        if op == "create":
            assert self._loaded is not None
            self._header = {key: message[key] for key in ("name", "version", "data_dir")}
            self._reap = bool(message.get("reap"))
            if self._loaded.create is not None:
                try:
                    self._instance = await self.invoke(self._loaded.create, self.context())
                except BaseException as exc:
                    return self.send({"op": "failed", "message": f"create(context) raised {type(exc).__name__}: {exc}"})
                self._run = getattr(self._instance, "run", None)
                if not callable(self._run):
                    message_text = "create(context) returned an object without a run(input_data, context) method"
                    return self.send({"op": "failed", "message": message_text})
            return self.send({"op": "created"})
        if op == "call":
            self._in_flight += 1
            try:
                return await self._call(message)
            finally:
                self._in_flight -= 1
                if self._reap and not self._in_flight:
                    reap_strays()
        if op == "tool_result":
            future = self._nested.pop(message.get("nid"), None)  # type: ignore[arg-type]  # an id the worker sent back: a missing one finds nothing
            envelope = message.get("envelope")
            if future is not None and not future.done():
                future.set_result(envelope if isinstance(envelope, dict) else {"ok": False, "code": "handler_error"})
            return None
        if op == "close":
            close = getattr(self._instance, "close", None)
            if callable(close):
                try:
                    await self.invoke(close)
                except BaseException as exc:
                    plugin_logger(self._header.get("name", "?")).warning(
                        "close() raised %s: %s", type(exc).__name__, exc
                    )
            self.send({"op": "closed"})
            _exit(0)
        return None


_exit = os._exit  # the real one, for the worker's own ends


def bounded(value: Any, limit: Any) -> Any:
    """A resource's text or bytes cut one past the server's bound: the server still sees it is too large and refuses
    it, and no more than that crosses the pipe."""
    if isinstance(limit, int) and isinstance(value, str | bytes | bytearray) and len(value) > limit:
        return value[: limit + 1]
    return value


def reap_strays() -> None:
    """In the sandbox only (its own PID namespace: pid 1 is bwrap, the rest is ours): kill every process a call
    left behind (a `sleep &`, a fork bomb's children) and reap our own, so nothing outlives the calls."""
    me = os.getpid()
    strays = [int(entry) for entry in os.listdir("/proc") if entry.isdigit() and int(entry) not in (1, me)]
    for pid in strays:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    for pid in strays:  # our own children are reaped now (a SIGKILLed one ends at once); bwrap reaps the rest
        with contextlib.suppress(OSError):
            os.waitpid(pid, 0)


def report_exits(worker: Worker) -> None:
    """Replace `os._exit` so that a plugin calling it names its call on the way out (the server then fails that
    call alone). The process still ends at once, with the plugin's exit code."""

    def exiting(code: int) -> None:
        try:
            call_id = worker.running_call()
            if call_id is not None:
                worker.send({"op": "exiting", "id": call_id})
        finally:
            _exit(code)

    os._exit = exiting  # type: ignore[assignment]  # the worker process's own exit, so it can say which call died


def _read_lines(source: BinaryIO, loop: asyncio.AbstractEventLoop, worker: Worker) -> None:
    running: set[asyncio.Task[None]] = set()  # the loop keeps only weak references to its tasks

    def start(message: dict[str, Any]) -> None:
        task = loop.create_task(worker.handle(message))
        running.add(task)
        task.add_done_callback(running.discard)

    for line in iter(source.readline, b""):
        try:
            message = json.loads(line)
        except ValueError:
            continue
        loop.call_soon_threadsafe(start, message)
    _exit(0)  # the server closed our input: it is gone or done with us; hung plugin threads go too


def main() -> None:
    protocol_in = os.fdopen(os.dup(0), "rb")
    protocol_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a plugin's print() goes to stderr, never into the protocol
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    sys.stdout = sys.stderr
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    worker = Worker(protocol_out)
    report_exits(worker)
    threading.Thread(target=_read_lines, args=(protocol_in, loop, worker), daemon=True).start()
    loop.run_forever()


if __name__ == "__main__":
    main()
