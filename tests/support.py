"""Helpers shared by the tests: servers built in-process, real subprocesses, tokens."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import jwt
import mcp.types as types
import pytest
from pydantic import SecretStr

from server.auth.identity import Surface
from server.mcp.mcp_server import TruloopMCP
from server.runtime.server_factory import build_server
from server.settings import Settings
from toolsets.core.context import Caller, ConfirmPolicy
from toolsets.core.toolset import AbstractToolset
from toolsets.front_door import FrontDoor
from toolsets.infra.store.backend import open_backend
from toolsets.infra.upstream.keys import UpstreamKeys
from toolsets.services import Services

if TYPE_CHECKING:
    from mcp import Client

SECRET = "test-secret-" + "x" * 32
# The audience the tests' servers accept besides their resource URLs (`--jwt-audience`), and their tokens carry:
# a test mints tokens before its server has picked a port, so the resource URL is not known yet.
AUDIENCE = "truloop-tests"
MODES = pytest.mark.parametrize("mode", ["auto", "legacy"])  # the two protocol eras a client may speak
# The speed paths (server/speed/) on, then off: a test that must hold for both answers runs both ways.
FAST_AND_PLAIN = pytest.mark.parametrize("fast_paths", [True, False], ids=["fast", "plain"])
# The handshake a raw stdio test writes first (2025-11-25), and the notification that completes it.
INIT = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
# The shared store the in-process helpers use: None is SQLite in the test's folder; the `store_backend`
# fixture (tests/conftest.py) sets a fresh PostgreSQL schema's URL for the PostgreSQL run of a test.
STORE_URL: str | None = None
BIN = Path(sys.executable).parent
TRULOOP = str(BIN / "truloop-mcp")


def settings(**overrides: Any) -> Settings:
    values: dict[str, Any] = {"user": "alice", "timezone": "Asia/Seoul", "database_url": STORE_URL}
    if "jwt_secret" in overrides:
        values["jwt_audience"] = (AUDIENCE,)
    values.update(overrides)
    return Settings(**values)


def server_for(profile: str = "member", services: Services | None = None, **overrides: Any) -> TruloopMCP:
    """An in-process server over a fresh store (the test's XDG_DATA_HOME) unless `services` is given."""
    return build_server(settings(profile=profile, **overrides), services=services)


async def no_wait(seconds: float) -> None:
    """A backoff sleep that returns at once: retries are counted, never waited for, in tests."""


def services_for(
    data_dir: Path,
    *,
    transport: Any = None,
    keys: UpstreamKeys | None = None,
    database_url: str | None = None,
    **options: Any,
) -> Services:
    """Services on `data_dir` (the store: `database_url`, else the test's `STORE_URL`, else SQLite in `data_dir`);
    `transport` (an httpx.MockTransport) stands in for the internet; `options`: other `Services` fields."""
    url = database_url or STORE_URL
    return Services(
        backend=open_backend(data_dir, SecretStr(url) if url else None),
        data_dir=data_dir,
        docs_dir=data_dir / "docs",
        keys=keys or UpstreamKeys(),
        http_transport=transport,
        retry_sleep=no_wait,
        **options,
    )


@dataclass
class ToolsetsOnly:
    """A deployment of nothing but the given toolsets (for tests of the MCP front itself)."""

    front_door: FrontDoor
    services: Any = None
    plugins: None = None
    tasks: None = None


def server_with(catalog: Mapping[str, AbstractToolset], policy: ConfirmPolicy = ConfirmPolicy.AUTO) -> TruloopMCP:
    from toolsets.core.conversation import MemoryConversations
    from toolsets.extensions.exposure.policy import ToolExposure
    from toolsets.pipeline.gates.spec import GateSet
    from toolsets.profiles import Profiles

    door = FrontDoor(
        Profiles(catalog), None, exposure=ToolExposure("full", GateSet()), conversations=MemoryConversations(),
        confirm_policy=policy,
    )  # fmt: skip
    surface = Surface("test", Caller("alice", timezone="Asia/Seoul"), "test")
    return TruloopMCP(surface, ToolsetsOnly(door), log_level="WARNING")


def token(sub: str = "alice", role: str | None = "member", secret: str = SECRET, **claims: Any) -> str:
    """An HS256 token the tests' servers accept; a claim given as None is left out (`aud=None`: no audience)."""
    payload: dict[str, Any] = {"sub": sub, "exp": int(time.time()) + 300, "aud": AUDIENCE, **claims}
    if role is not None:
        payload["role"] = role
    payload = {name: value for name, value in payload.items() if value is not None}
    return jwt.encode(payload, secret, algorithm="HS256")


def answering(action: str, content: dict[str, Any] | None = None, seen: list[str] | None = None) -> Any:
    async def callback(context: Any, params: Any) -> types.ElicitResult:
        if seen is not None:
            seen.append(params.message)
        return types.ElicitResult(action=action, content=content if action == "accept" else None)  # type: ignore[arg-type]

    return callback


def mcp_client(base: str, bearer: str, mode: str = "auto", *, timeout: float = 30.0, **options: Any) -> Client:
    """An MCP client of the server at `base` over streamable HTTP, with `bearer` as its token."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}"}, timeout=timeout)
    return Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode, **options)  # type: ignore[arg-type]


# -- waiting for something to happen: an event where there is one, a bounded deadline where there is not --

SERVING = re.compile(r"serving (http://\S+)/mcp\b")  # the line `truloop-mcp --transport http` writes once serving


def read_until(stream: IO[bytes], needle: str, timeout: float = 20.0) -> str:
    """Lines of a subprocess's pipe up to and including the first holding `needle`, read for at most
    `timeout` s (the rest of the pipe is left unread). AssertionError, quoting what was read, at end of
    stream or time-out."""
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        for raw in iter(stream.readline, b""):
            line = raw.decode(errors="replace")
            lines.put(line)
            if needle in line:
                return
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while True:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"no {needle!r} within {timeout:g} s; read: {''.join(seen)!r}") from None
        if line is None:
            raise AssertionError(f"the stream ended without {needle!r}; read: {''.join(seen)!r}")
        seen.append(line)
        if needle in line:
            return "".join(seen)


def wait_for_line(
    path: Path, pattern: re.Pattern[str], proc: subprocess.Popen[bytes], timeout: float = 20.0
) -> re.Match[str]:
    """The first match of `pattern` in the file `path` a running `proc` writes (its stderr, say), waited for
    at most `timeout` s; RuntimeError with the file's text if `proc` exits first or time runs out."""
    deadline = time.monotonic() + timeout
    while True:
        exited = proc.poll() is not None  # before reading: a line written just before exiting still counts
        text = path.read_text(errors="replace") if path.exists() else ""
        found = pattern.search(text)
        if found:
            return found
        if exited:
            raise RuntimeError(f"the process exited ({proc.returncode}) before {pattern.pattern!r}: {text}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"no {pattern.pattern!r} within {timeout:g} s: {text}")
        time.sleep(0.02)  # a file offers no event to await


async def eventually(condition: Callable[[], bool | Awaitable[bool]], seconds: float = 10.0) -> None:
    """Wait until `condition()` holds, at most `seconds`: for state with no event to await (a store,
    a list another task fills); prefer an `anyio.Event` wherever the code under test offers one."""
    import inspect

    import anyio

    with anyio.fail_after(seconds):
        while True:
            held = condition()
            if await held if inspect.isawaitable(held) else held:
                return
            await anyio.sleep(0.02)


def child_env(**extra: str) -> dict[str, str]:
    """This environment for a server subprocess, without the settings it reads (TRULOOP_*, and the shared
    services CI exports for the tests): a test that wants Redis or PostgreSQL passes it explicitly."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_") and k not in ("DATABASE_URL", "REDIS_URL")
    }
    if "TRULOOP_JWT_SECRET" in extra:  # the tests' tokens name AUDIENCE (see token())
        env["TRULOOP_JWT_AUDIENCE"] = AUDIENCE
    env.update(extra)
    return env


def paths_env(fast_paths: bool, **extra: str) -> dict[str, str]:
    """`child_env(**extra)`, with the speed paths switched off (`TRULOOP_FAST_PATHS=0`) unless `fast_paths`."""
    return child_env(**extra) if fast_paths else child_env(TRULOOP_FAST_PATHS="0", **extra)


@contextlib.contextmanager
def stdio_server_process(
    *args: str, use_pty: bool = False, env: Mapping[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """`truloop-mcp` over stdio whose stdin is a pipe or a terminal (a pty held open here, as a person at a
    terminal would); `proc.stdin` writes to either. stdout and stderr are pipes. Killed if still running at the end."""
    parent = child = None
    if use_pty:
        import pty

        parent, child = pty.openpty()
    proc = subprocess.Popen(
        [TRULOOP, *args],
        stdin=child if use_pty else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env or child_env()),
    )
    if child is not None and parent is not None:
        os.close(child)
        proc.stdin = open(parent, "wb", buffering=0)  # noqa: SIM115 - what is typed at the terminal; closed below
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if use_pty and proc.stdin is not None:
            proc.stdin.close()


@contextlib.contextmanager
def http_server_process(
    *args: str, env: Mapping[str, str] | None = None, stderr_path: Path | None = None, timeout: float = 20.0
) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    """Run `truloop-mcp --transport http --port 0` on loopback; yields (base URL, process, stderr file) once
    it serves, its port read from the line it writes on stderr (no free port guessed, so no race for one).

    stderr goes to a file (a pipe nobody reads could fill and stall the server) that a test can check.
    Without `--data-dir` the server gets a temporary one: a test never writes into the user's real store.
    """
    env = dict(env or child_env())
    with tempfile.TemporaryDirectory(prefix="truloop-test-") as scratch:
        if "--data-dir" not in args and not env.get("TRULOOP_DATA_DIR"):
            args = (*args, "--data-dir", str(Path(scratch) / "data"))
        log = stderr_path or Path(scratch) / "server.stderr"
        cmd = [TRULOOP, "--transport", "http", "--host", "127.0.0.1", "--port", "0", *args]
        with log.open("wb") as err:
            proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        try:
            base = wait_for_line(log, SERVING, proc, timeout).group(1)
            yield base, proc, log
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextlib.contextmanager
def spawn_http_server(*args: str, env: Mapping[str, str] | None = None, timeout: float = 20.0) -> Iterator[str]:
    """Run `truloop-mcp --transport http` on a loopback port of its choosing; yields its base URL."""
    with http_server_process(*args, env=env, timeout=timeout) as (base, _, _):
        yield base


@contextlib.contextmanager
def device_ready_http_server(data_dir: Path, fast_paths: bool = True) -> Iterator[str]:
    """An HTTP server for device and back-channel tests: the tests' JWT secret, deferred calls time out in 10 s."""
    env = paths_env(fast_paths, TRULOOP_JWT_SECRET=SECRET)
    with spawn_http_server("--data-dir", str(data_dir), "--deferred-timeout", "10", env=env) as base:
        yield base


@contextlib.asynccontextmanager
async def serve_in_process(app: Any) -> AsyncIterator[str]:
    """Serve an ASGI app with uvicorn on a loopback port the kernel picks, inside the test's event loop;
    yields its base URL once it serves."""
    import anyio
    import uvicorn

    from server.http.uvicorn_server import ReportingServer, http_url

    serving = anyio.Event()
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    server = ReportingServer(config, on_started=lambda _: serving.set())
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        with anyio.fail_after(10):
            await serving.wait()
        try:
            yield http_url(server.bound_address())
        finally:
            server.should_exit = True


def error_of(result: types.CallToolResult) -> dict[str, Any]:
    """The error envelope of an error result (in `_meta`, never in `structuredContent`)."""
    from server.mcp.wire_forms import ERROR_META_KEY

    assert result.is_error, result.content
    assert result.structured_content is None, "error results must not carry structuredContent"
    assert result.meta is not None and ERROR_META_KEY in result.meta, result
    return result.meta[ERROR_META_KEY]


def payload(result: types.CallToolResult) -> dict[str, Any]:
    """What a result says, machine-readably: `structuredContent` on success, the error envelope otherwise."""
    if result.is_error:
        return error_of(result)
    assert result.structured_content is not None, result.content
    return result.structured_content


def gates_off(folder: Path) -> Path:
    """A gates file that turns the built-in gates off (for tests of what a tool itself does)."""
    path = folder / "no-gates.toml"
    path.write_text("builtin = false\n", encoding="utf-8")
    return path


@contextlib.contextmanager
def fresh_schema(base: str, prefix: str = "t") -> Iterator[str]:
    """A new, empty PostgreSQL schema on the server at `base` (dropped afterwards, its sessions ended first): the
    URL whose connections use it, named `{prefix}_<random>` as both the schema and the application name."""
    import secrets
    from urllib.parse import quote

    import psycopg

    name = f"{prefix}_{secrets.token_hex(6)}"
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {name}")
    separator = "&" if "?" in base else "?"
    options = quote(f"-csearch_path={name}")
    try:
        yield f"{base}{separator}options={options}&application_name={name}"
    finally:
        with psycopg.connect(base, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s", (name,))
            admin.execute(f"DROP SCHEMA {name} CASCADE")


async def answering_device(
    server: TruloopMCP, answer: Callable[[dict[str, Any]], dict[str, Any]], seen: list[dict[str, Any]], ready: Any
) -> None:
    """An in-process device for user alice: answers every request with `answer(request)` (a `result` or an
    `error`), noting each envelope and request in `seen`; `ready` (an `anyio.Event`) is set once it listens."""
    import json

    from bridge.jsonrpc import RpcResponse

    bridge = server.bridge
    assert bridge is not None
    async with bridge.device_stream("alice") as envelopes:
        ready.set()
        async for envelope in envelopes:
            request = json.loads(envelope["data"])
            seen.append({"envelope": envelope, "request": request})
            body = {"jsonrpc": "2.0", "id": request["id"], **answer(request)}
            await bridge.answer("alice", RpcResponse.model_validate(body))


@contextlib.asynccontextmanager
async def device_online(base: str, user: str, answers: Any = None) -> AsyncIterator[Any]:
    """A simulated phone of `user` (bridge/device.py), connected to `base` (the server knows it is online) for the
    duration of the block."""
    import functools

    import anyio

    from bridge.device import DeviceSimulator

    device = DeviceSimulator(base, token(sub=user), answers)
    async with anyio.create_task_group() as tg:
        tg.start_soon(functools.partial(device.run, reconnect=False))
        with anyio.fail_after(5):
            await device.connected.wait()
        yield device
        tg.cancel_scope.cancel()


TASKS_EXTENSION = "io.modelcontextprotocol/tasks"


class RpcError(Exception):
    """A JSON-RPC error answer (its `code`, and the whole `error`)."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error)
        self.code = error.get("code")
        self.error = error


def rpc_answer(status_and_type: tuple[int, str], text: str, request_id: Any) -> dict[str, Any]:
    """The result of request `request_id` from a streamable-HTTP answer (JSON, or SSE events); raises `RpcError`."""
    import json

    _, content_type = status_and_type
    if content_type.startswith("text/event-stream"):
        for line in text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                message = json.loads(line[5:])
                if message.get("id") == request_id:
                    break
        else:
            raise AssertionError(f"no answer to {request_id} in {text!r}")
    else:
        message = json.loads(text)
    if "error" in message:
        raise RpcError(message["error"])
    result: dict[str, Any] = message["result"]
    return result


async def modern_request(
    client: Any, base: str, bearer: str, method: str, params: dict[str, Any], capabilities: dict[str, Any]
) -> dict[str, Any]:
    """One 2026-07-28 request over `client` (an httpx.AsyncClient): stateless, with its envelope in `_meta` and the
    routing headers (`Mcp-Method`, `Mcp-Name`) as a client sends them; raises `RpcError`."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    headers = {
        "Authorization": f"Bearer {bearer}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
    }
    name = params.get({"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(method, "taskId"))
    if name:
        headers["Mcp-Name"] = name
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    response = await client.post(f"{base}/mcp", json=body, headers=headers)
    return rpc_answer((response.status_code, response.headers.get("content-type", "")), response.text, 1)


def replica_env(redis_url: str, redis_prefix: str, database_url: str | None = None, **extra: str) -> dict[str, str]:
    """The environment of replicas that share one Redis (under their own prefix), one state key and, given one, one
    PostgreSQL store: the tests' JWT secret."""
    shared = {"DATABASE_URL": database_url} if database_url else {}
    return child_env(
        TRULOOP_JWT_SECRET=SECRET,
        REDIS_URL=redis_url,
        TRULOOP_REDIS_PREFIX=redis_prefix,
        TRULOOP_STATE_KEYS="replica-shared-state-key-" + "k" * 24,
        **shared,
        **extra,
    )
