"""The command line: one clear line for bad input, clean shutdown of the HTTP server."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.support import TRULOOP, child_env, free_port

A_FILE = str(Path(__file__).resolve())


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TRULOOP, *args], capture_output=True, text=True, timeout=30, env=child_env(**env))


@pytest.mark.parametrize(
    ("args", "env", "needle"),
    [
        (["--transport", "carrier-pigeon"], {}, "--transport"),
        (["--port", "abc"], {}, "--port"),
        (["--port", "70000"], {}, "port"),
        (["--profile", "admin"], {}, "--profile"),
        (["--confirm", "maybe"], {}, "--confirm"),
        (["--timezone", "Mars/Base"], {}, "IANA"),
        (["--no-such-flag"], {}, "unrecognized"),
        (["--transport", "http", "--host", "0.0.0.0"], {}, "TRULOOP_JWT_SECRET"),
        ([], {"TRULOOP_JWT_SECRET": "short"}, "32 bytes"),
        ([], {"TRULOOP_STATE_KEYS": "short"}, "32 bytes"),
        ([], {"TRULOOP_JWT_SECRET": "a" * 40}, "too easy to guess"),
        (["--redis-url", "localhost:6379"], {}, "--redis-url / REDIS_URL: must be a URL such as redis://"),
        ([], {"REDIS_URL": "localhost:6379"}, "redis://127.0.0.1:6379/0"),
        (["--data-dir", A_FILE], {}, f"--data-dir / TRULOOP_DATA_DIR: '{A_FILE}' is a file"),
        (["--data-dir", f"{A_FILE}/sub"], {}, "is a file, not a folder"),
        (["--docs", A_FILE], {}, "--docs / TRULOOP_DOCS_DIR"),
        ([], {"TRULOOP_DEFERRED_TIMEOUT": "soon"}, "TRULOOP_DEFERRED_TIMEOUT: must be a number"),
        ([], {"TRULOOP_MAX_SESSIONS_PER_USER": "many"}, "TRULOOP_MAX_SESSIONS_PER_USER"),
        (["--max-sessions-per-user", "0"], {}, "--max-sessions-per-user"),
        (["--max-line-bytes", "10"], {}, "--max-line-bytes"),
    ],
)
def test_bad_input_exits_non_zero_with_one_line(args: list[str], env: dict[str, str], needle: str) -> None:
    proc = run(*args, **env)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("truloop-mcp: error:") and needle in lines[0]
    assert proc.stdout == ""


def test_python_dash_m_server_is_the_same_program() -> None:
    proc = subprocess.run([sys.executable, "-m", "server", "--help"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0 and "--transport" in proc.stdout


def test_port_in_use_is_one_line() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = run("--transport", "http", "--port", str(port))
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr


def start_http_server() -> tuple[subprocess.Popen[bytes], str]:
    """A `truloop-mcp --transport http` subprocess whose signals the test sends itself."""
    port = free_port()
    proc = subprocess.Popen(
        [TRULOOP, "--transport", "http", "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env(),
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while True:
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_http_server_shuts_down_cleanly(signum: int) -> None:
    proc, _ = start_http_server()
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 0, err
    assert b"Traceback" not in err


def test_http_shutdown_is_not_held_by_an_open_device_stream() -> None:
    proc, base = start_http_server()
    with httpx.stream("GET", f"{base}/api/v1/agent/rpc-stream", timeout=30) as stream:
        lines = stream.iter_lines()
        assert next(lines) == ": connected"
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        for _ in lines:  # the server ends the stream instead of heartbeating on
            pass
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 0, err
    assert time.monotonic() - started < 8


def test_the_listening_socket_is_tcp_so_responses_are_not_delayed_by_nagle() -> None:
    from server.runner import _bind

    sock = _bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()
