"""Helpers shared by the tests: servers built in-process, real subprocesses, tokens."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import jwt
import mcp.types as types

from server.app import build_server
from server.identity import Surface
from server.mcp_server import TruloopMCP
from server.settings import Settings
from toolsets.context import Caller, ConfirmPolicy
from toolsets.services import Services
from toolsets.toolset import AbstractToolset

SECRET = "test-secret-" + "x" * 32
BIN = Path(sys.executable).parent
TRULOOP = str(BIN / "truloop-mcp")


def settings(**overrides: Any) -> Settings:
    values: dict[str, Any] = {"user": "alice", "timezone": "Asia/Seoul"}
    values.update(overrides)
    return Settings(**values)


def server_for(profile: str = "member", services: Services | None = None, **overrides: Any) -> TruloopMCP:
    """An in-process server over a fresh store (the test's XDG_DATA_HOME) unless `services` is given."""
    return build_server(settings(profile=profile, **overrides), services=services)


def services_for(data_dir: Path, *, transport: Any = None, env: Mapping[str, str] | None = None) -> Services:
    """Services on `data_dir`; `transport` (an httpx.MockTransport) stands in for the internet."""
    return Services(data_dir=data_dir, docs_dir=data_dir / "docs", env=dict(env or {}), http_transport=transport)


def server_with(catalog: Mapping[str, AbstractToolset], policy: ConfirmPolicy = ConfirmPolicy.AUTO) -> TruloopMCP:
    surface = Surface("test", Caller("alice", timezone="Asia/Seoul"), "test", catalog=catalog)
    return TruloopMCP(surface, confirm_policy=policy, log_level="WARNING")


def token(sub: str = "alice", role: str | None = "member", secret: str = SECRET, **claims: Any) -> str:
    payload: dict[str, Any] = {"sub": sub, "exp": int(time.time()) + 300, **claims}
    if role is not None:
        payload["role"] = role
    return jwt.encode(payload, secret, algorithm="HS256")


def answering(action: str, content: dict[str, Any] | None = None, seen: list[str] | None = None) -> Any:
    async def callback(context: Any, params: Any) -> types.ElicitResult:
        if seen is not None:
            seen.append(params.message)
        return types.ElicitResult(action=action, content=content if action == "accept" else None)  # type: ignore[arg-type]

    return callback


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_")}
    env.update(extra)
    return env


@contextlib.contextmanager
def stdio_server_process(
    *args: str, use_pty: bool = False, env: Mapping[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """`truloop-mcp` over stdio whose stdin is a pipe (`proc.stdin`) or a terminal (a pty held open here,
    as a person at a terminal would); stdout and stderr are pipes. Killed if still running at the end."""
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
    if child is not None:
        os.close(child)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if parent is not None:
            os.close(parent)


@contextlib.contextmanager
def http_server_process(
    *args: str, env: Mapping[str, str] | None = None, stderr_path: Path | None = None, timeout: float = 20.0
) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    """Run `truloop-mcp --transport http` on a free loopback port; yields (base URL, process, stderr file).

    stderr goes to a file (a pipe nobody reads could fill and stall the server) that a test can check.
    Without `--data-dir` the server gets a temporary one: a test never writes into the user's real store.
    """
    env = dict(env or child_env())
    with tempfile.TemporaryDirectory(prefix="truloop-test-") as scratch:
        if "--data-dir" not in args and not env.get("TRULOOP_DATA_DIR"):
            args = (*args, "--data-dir", str(Path(scratch) / "data"))
        log = stderr_path or Path(scratch) / "server.stderr"
        port = free_port()
        cmd = [TRULOOP, "--transport", "http", "--host", "127.0.0.1", "--port", str(port), *args]
        with log.open("wb") as err:
            proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + timeout
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"server exited early: {log.read_text(errors='replace')}")
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"{base}/healthz", timeout=1.0).status_code in (200, 503):
                        break
                if time.monotonic() > deadline:
                    raise RuntimeError("server did not become healthy in time")
                time.sleep(0.05)
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
    """Run `truloop-mcp --transport http` on a free loopback port; yields its base URL."""
    with http_server_process(*args, env=env, timeout=timeout) as (base, _, _):
        yield base


@contextlib.asynccontextmanager
async def serve_in_process(app: Any) -> Any:
    """Serve an ASGI app with uvicorn on a free loopback port inside the test's event loop."""
    import anyio
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        with anyio.fail_after(10):
            while not server.started:  # noqa: ASYNC110 - uvicorn exposes a flag, not an event
                await anyio.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True


def error_of(result: types.CallToolResult) -> dict[str, Any]:
    """The error envelope of an error result (in `_meta`, never in `structuredContent`)."""
    from server.results import ERROR_META_KEY

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
