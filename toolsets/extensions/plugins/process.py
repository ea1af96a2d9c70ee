"""`--plugin-isolation process`: each plugin version runs in a supervised worker process (worker.py).

A plugin that crashes (segfault, `os._exit`), leaks or hangs cannot take the server with it. When a worker dies,
only the call that brought it down fails (`handler_error`, `PluginWorkerCrashed`): the worker names the call that
called `os._exit` on its way out, a call past its timeout is the one whose worker is killed, and a worker that
dies with one call in flight died of that call. The other calls then in flight (bystanders) are run once more on
a fresh worker when the tool says that is safe (`readOnlyHint` or `idempotentHint`), else answered with a
`handler_error` that is `retryable: true` (they may or may not have run). A call past its timeout returns
`timeout` and its worker is killed (a hung call never ends otherwise), and the next call starts a fresh worker
(which runs `create` again). The price is a process per version (~20 MB, ~0.1 s to start) and a pipe hop per
call (see the plugin benchmark in docs/plugins.md).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from toolsets.core.errors import ErrorCode, ToolError
from toolsets.extensions.plugins.context import LogSink, ProgressSink
from toolsets.extensions.plugins.failures import PluginWorkerCrashed, stand_in
from toolsets.extensions.plugins.nested import refusal
from toolsets.extensions.plugins.plugin_runner import CallInfo, PluginLoadError
from toolsets.extensions.plugins.source import PluginSource
from toolsets.infra.child_env import child_environment

if TYPE_CHECKING:
    from toolsets.infra.sandbox.plugin_worker import PluginWorkerSandbox

logger = logging.getLogger("truloop.plugins")

Spawn = Callable[..., Any]  # a task group's start_soon: the worker's reader lives as long as the catalog
BOOT_SECONDS = 30.0
CLOSE_SECONDS = 5.0
MAX_LINE = 64 * 1024 * 1024
NESTED_WAITING = 16  # a call's requests of other tools waiting to be served; past it they are refused


__all__ = ["PluginWorkerCrashed", "ProcessRunner"]


def _remote_error(answer: dict[str, Any], tool: str) -> Exception:
    """An exception named like the plugin's own (the model sees only the name); the worker's trace goes to the log."""
    if answer.get("not_json"):
        return ToolError(
            f"The tool {tool} returned a result that is not JSON data ({answer.get('message')}); the plugin needs "
            "fixing.",
            code=ErrorCode.HANDLER_ERROR,
        )
    trace = str(answer.get("message"))
    fatal = answer.get("fatal")
    return stand_in(str(answer.get("type")), f"raised in the worker process:\n{trace}", fatal=fatal)


def _bystander(tool: str) -> ToolError:
    return ToolError(
        f"The tool {tool} was interrupted: its worker process crashed because of another call running beside this "
        "one. This call may or may not have completed; it is safe to call it again.",
        code=ErrorCode.HANDLER_ERROR,
        retryable=True,
    )


@dataclass(eq=False)
class _Reply:
    progress: ProgressSink | None = None
    log: LogSink | None = None
    done: anyio.Event = field(default_factory=anyio.Event)
    message: dict[str, Any] | None = None
    nested: Any = None  # the send side of this call's queue of `call_tool` requests


@dataclass(eq=False)
class _Worker:
    process: Process
    calls: dict[int, _Reply] = field(default_factory=dict)
    control: _Reply | None = None
    exit_code: int | None = None
    send_lock: anyio.Lock = field(default_factory=anyio.Lock)
    culprits: set[int] = field(default_factory=set)  # the calls known to have ended it (os._exit, a timeout)
    killed: bool = False  # we killed it (a timeout, a malformed line): no call in flight brought it down itself
    in_flight_at_end: int = 0

    def caused_by(self, call_id: int) -> bool:
        """Whether this call brought the worker down (else it was a bystander)."""
        if self.culprits or self.killed:
            return call_id in self.culprits
        return self.in_flight_at_end == 1

    async def send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        assert self.process.stdin is not None
        try:
            async with self.send_lock:
                await self.process.stdin.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            raise PluginWorkerCrashed(f"the worker process is gone (exit code {self.process.returncode})") from None

    async def ask(self, message: dict[str, Any], seconds: float) -> dict[str, Any]:
        """A control request (load, create, close) and its one answer."""
        reply = self.control = _Reply()
        await self.send(message)
        with anyio.fail_after(seconds):
            await reply.done.wait()
        if reply.message is None:
            raise PluginWorkerCrashed(f"the worker process exited (code {self.exit_code})")
        return reply.message

    def ended(self, code: int | None) -> None:
        self.exit_code = code
        self.in_flight_at_end = len(self.calls)
        for reply in [*self.calls.values(), *([self.control] if self.control else [])]:
            reply.done.set()


class ProcessRunner:
    def __init__(
        self, source: PluginSource, module: str, spawn: Spawn, sandbox: PluginWorkerSandbox | None = None
    ) -> None:
        self._source = source
        self._module = module
        self._spawn = spawn
        self._sandbox = sandbox  # None: a plain worker process (`process`); else inside bubblewrap (`sandbox`)
        self._header: dict[str, Any] | None = None  # name, version, data_dir: known once the spec is read
        self._worker: _Worker | None = None
        self._boot_lock = anyio.Lock()
        self._ids = itertools.count(1)
        self._stopping = False
        self._retry_safe = False  # read-only or idempotent: a bystander of a crash may run again
        self.starts = 0  # workers started for this version (1 unless one crashed or hung)

    @property
    def label(self) -> str:
        return (self._header or {}).get("name") or self._source.path.name

    async def load(self) -> dict[str, Any]:
        """Start a worker and import the version there; its raw TOOL_SPEC."""
        worker = await self._launch()
        answer = await self._ask(worker, self._load_request())
        if answer.get("op") != "loaded":
            await self._terminate(worker)
            raise PluginLoadError(str(answer.get("message") or "the worker could not load the file"))
        return dict(answer["spec"])

    def identify(self, name: str, data_dir: Path, *, retry_safe: bool = False) -> None:
        """The tool's name and data folder, known once its spec was read, for the plugin's context; `retry_safe`:
        a call interrupted by another call's crash may run again (the tool is read-only or idempotent)."""
        self._header = {"name": name, "version": self._source.version, "data_dir": str(data_dir)}
        self._retry_safe = retry_safe

    async def start(self) -> None:
        worker = self._worker
        if worker is None:
            raise PluginLoadError("the worker process exited before create(context)")
        answer = await self._ask(worker, self._create_request())
        if answer.get("op") != "created":
            await self._terminate(worker)
            raise PluginLoadError(str(answer.get("message") or "create(context) failed in the worker"))

    async def call(self, input_data: dict[str, Any], info: CallInfo, progress: ProgressSink) -> Any:
        retried = False
        while True:
            worker = await self._ready()
            call_id = next(self._ids)
            info_data = info.shown()
            send, receive = anyio.create_memory_object_stream[dict[str, Any]](NESTED_WAITING)
            reply = worker.calls[call_id] = _Reply(progress, info.log, nested=send)
            try:
                await self._exchange(
                    worker, reply, info, receive, {"op": "call", "id": call_id, "input": input_data, "info": info_data}
                )
            except PluginWorkerCrashed:
                if self._worker is worker:
                    self._worker = None  # its pipe is broken: the next call starts another
                if retried:  # the worker died before this call reached it, twice
                    raise _bystander(self.label) from None
                retried = True  # it never ran: safe to send again, to a fresh worker
                continue
            except anyio.get_cancelled_exc_class():
                # past its timeout (or withdrawn): a hung call would hold the worker forever, so it goes
                logger.warning(
                    "plugin %s: killing its worker (pid %s) after a call that did not finish",
                    self.label,
                    worker.process.pid,
                )
                worker.culprits.add(call_id)
                worker.killed = True
                self._kill(worker)
                raise
            finally:
                worker.calls.pop(call_id, None)
                send.close()
            answer = reply.message
            if answer is not None:
                if answer["op"] == "error":
                    raise _remote_error(answer, self.label)
                return answer.get("value")
            if worker.caused_by(call_id):
                raise PluginWorkerCrashed(f"the worker process exited (code {worker.exit_code}) during the call")
            if retried or not self._retry_safe:
                raise _bystander(self.label)
            retried = True
            logger.warning("plugin %s: running a call again after another call crashed its worker", self.label)

    async def _exchange(
        self, worker: _Worker, reply: _Reply, info: CallInfo, receive: Any, message: dict[str, Any]
    ) -> None:
        """Send the call and wait for its answer, serving its `call_tool` requests meanwhile."""
        failed: PluginWorkerCrashed | None = None
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._serve_nested, worker, info, receive)
            try:
                await worker.send(message)
                await reply.done.wait()
            except PluginWorkerCrashed as exc:  # raised here, not wrapped in the task group's exception group
                failed = exc
            tg.cancel_scope.cancel()
        if failed is not None:
            raise failed

    async def _serve_nested(self, worker: _Worker, info: CallInfo, receive: Any) -> None:
        """One call's `context.call_tool` and `context.ask` requests, one at a time, each answered with its JSON
        envelope."""
        async with receive:
            async for request in receive:
                if request.get("op") == "client":
                    if info.ask_client is None:
                        answer = refusal("not_configured", "there is no MCP client to ask here")
                    else:
                        answer = await info.ask_client(request.get("requests"))
                elif info.call_tool is None:
                    answer = refusal("not_configured", "context.call_tool is not offered here")
                else:
                    answer = await info.call_tool(request.get("name"), request.get("arguments"))
                with contextlib.suppress(PluginWorkerCrashed):  # the call's own wait sees the worker go
                    await worker.send({"op": "tool_result", "nid": request.get("nid"), "envelope": answer})

    async def stop(self) -> None:
        self._stopping = True
        worker, self._worker = self._worker, None
        if worker is not None:
            await self._terminate(worker)

    async def abort(self) -> None:
        """Kill the worker at once: a load cut short (overrun, superseded, the server stopping), whose worker may
        be busy in the plugin's import and would never answer `close`."""
        self._stopping = True
        worker, self._worker = self._worker, None
        if worker is not None:
            self._kill(worker)
            with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_SECONDS):
                await worker.process.wait()

    # -- the worker's life -------------------------------------------------------------------------------------

    async def _ready(self) -> _Worker:
        async with self._boot_lock:
            if self._worker is not None:
                return self._worker
            if self._stopping:
                raise PluginWorkerCrashed("the plugin version was retired")
            logger.warning("plugin %s: starting a new worker process", self.label)
            worker = await self._launch()
            answer = await self._ask(worker, self._load_request())
            if answer.get("op") == "loaded":
                answer = await self._ask(worker, self._create_request())
            if answer.get("op") != "created":
                await self._terminate(worker)
                raise PluginWorkerCrashed(f"the restarted worker failed: {answer.get('message')}")
            return worker

    def _load_request(self) -> dict[str, Any]:
        """What a worker is first sent (at load, and again by each restarted worker): import this version."""
        return {"op": "load", "path": str(self._source.path), "source": self._source.text, "module": self._module}

    def _create_request(self) -> dict[str, Any]:
        # in the sandbox, the worker kills what a call left running once no call runs (its PID namespace is its own)
        return {"op": "create", **(self._header or {}), "reap": self._sandbox is not None}

    async def _launch(self) -> _Worker:
        if self._sandbox is not None:
            from toolsets.extensions.plugins.sandboxed import open_worker
            from toolsets.infra.sandbox.config import SandboxUnavailable

            try:
                process = await open_worker(self._sandbox)
            except SandboxUnavailable as exc:
                raise PluginLoadError(exc.message) from None  # reported as the version's load error
        else:
            process = await anyio.open_process(
                [sys.executable, "-m", "toolsets.extensions.plugins.worker"],
                stdin=-1,
                stdout=-1,
                stderr=None,
                env=child_environment(),  # a small fixed environment: none of the server's secrets
            )
        worker = self._worker = _Worker(process)
        self.starts += 1
        self._spawn(self._read, worker)
        if process.stderr is not None:
            self._spawn(self._relay_stderr, worker)
        return worker

    async def _relay_stderr(self, worker: _Worker) -> None:
        """A sandboxed worker's stderr (the plugin's prints and logs) into the server's log, `STDERR_CAP` bytes
        of it at most (then dropped, so a chatty or hostile plugin cannot flood the log or hold memory)."""
        from toolsets.extensions.plugins.sandboxed import STDERR_CAP

        assert worker.process.stderr is not None
        stream = BufferedByteReceiveStream(worker.process.stderr)
        relayed = 0
        with contextlib.suppress(
            anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, anyio.ClosedResourceError
        ):
            while True:
                try:
                    line = await stream.receive_until(b"\n", 4096)
                except anyio.DelimiterNotFound:
                    line = await stream.receive(4096)
                if relayed < STDERR_CAP:
                    relayed += len(line)
                    plugin_log = logging.getLogger(f"truloop.plugin.{self.label}")  # its name, once its spec is read
                    plugin_log.info("%s", line.decode(errors="replace").rstrip()[:1000])
                    if relayed >= STDERR_CAP:
                        plugin_log.warning(
                            "the worker wrote more than %d bytes to stderr; the rest is dropped", STDERR_CAP
                        )

    async def _ask(self, worker: _Worker, message: dict[str, Any]) -> dict[str, Any]:
        try:
            return await worker.ask(message, BOOT_SECONDS)
        except TimeoutError:
            self._kill(worker)
            raise PluginLoadError(f"the worker did not answer {message['op']!r} within {BOOT_SECONDS:g} s") from None
        except PluginWorkerCrashed as exc:
            raise PluginLoadError(str(exc)) from None

    async def _read(self, worker: _Worker) -> None:
        assert worker.process.stdout is not None
        stream = BufferedByteReceiveStream(worker.process.stdout)
        try:
            while True:
                line = await stream.receive_until(b"\n", MAX_LINE)
                self._route(worker, json.loads(line))
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        except (anyio.DelimiterNotFound, ValueError):
            logger.error("plugin %s: the worker wrote a malformed line; killing it", self.label)
            worker.killed = True
            self._kill(worker)
        finally:
            with anyio.CancelScope(shield=True):
                code = await worker.process.wait()
                with contextlib.suppress(Exception):
                    await worker.process.aclose()  # its pipes, before the loop that owns them is gone
            if self._worker is worker:
                self._worker = None
            if not self._stopping and code != 0:
                logger.warning(
                    "plugin %s: worker process exited with code %s; the next call starts another", self.label, code
                )
            worker.ended(code)

    def _route(self, worker: _Worker, message: dict[str, Any]) -> None:
        op = message.get("op")
        if op in ("progress", "log", "result", "error") and message.get("id") is not None:
            reply = worker.calls.get(message["id"])
            if reply is None:
                return  # a call that timed out, answered late
            if op == "progress":
                if reply.progress is not None:
                    reply.progress(float(message.get("progress") or 0), message.get("total"), message.get("message"))
                return
            if op == "log":
                if reply.log is not None:
                    reply.log(str(message.get("level")), message.get("data"), message.get("logger"))
                return
            reply.message = message
            reply.done.set()
        elif op in ("call_tool", "client") and message.get("id") is not None:
            reply = worker.calls.get(message["id"])
            if reply is None or reply.nested is None:
                return
            try:
                reply.nested.send_nowait(message)
            except (anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
                busy = refusal("rate_limited", "too many calls of other tools at once", retryable=True)
                self._spawn(worker.send, {"op": "tool_result", "nid": message.get("nid"), "envelope": busy})
        elif op == "exiting" and message.get("id") is not None:
            worker.culprits.add(message["id"])  # its os._exit: the process ends right after this line
        elif worker.control is not None:
            worker.control.message = message
            worker.control.done.set()

    async def _terminate(self, worker: _Worker) -> None:
        try:
            if worker.exit_code is None and worker.process.returncode is None:
                try:
                    with anyio.move_on_after(CLOSE_SECONDS):
                        await worker.ask({"op": "close"}, CLOSE_SECONDS)
                except (PluginWorkerCrashed, TimeoutError):
                    pass
        finally:
            self._kill(worker)  # also when we are cut short: no worker outlives its version
        with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_SECONDS):
            await worker.process.wait()
        if self._worker is worker:
            self._worker = None

    def _kill(self, worker: _Worker) -> None:
        """Kill it, and make sure no new call is sent to it (the next call starts another)."""
        if self._worker is worker:
            self._worker = None
        if worker.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                worker.process.kill()
