"""The command line: one clear line for bad input, clean shutdown of the HTTP server."""

from __future__ import annotations

import io
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.support import TRULOOP, child_env, http_server_process

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


def test_port_0_serves_on_a_free_port_and_says_which_once_whatever_the_log_level() -> None:
    with http_server_process("--log-level", "ERROR") as (base, _, log):
        assert httpx.get(f"{base}/healthz", timeout=5).status_code == 200
        lines = [line for line in log.read_text().splitlines() if "serving" in line]
    assert lines == [f"truloop-mcp: serving {base}/mcp (SSE at /sse)"]
    assert not base.endswith(":0")


def test_the_serving_line_brackets_an_ipv6_host() -> None:
    from server.runtime.serving import announce

    stream = io.StringIO()
    announce(("::1", 8000), stream)
    assert stream.getvalue() == "truloop-mcp: serving http://[::1]:8000/mcp (SSE at /sse)\n"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_http_server_shuts_down_cleanly(signum: int) -> None:
    with http_server_process() as (_, proc, log):
        proc.send_signal(signum)
        status = proc.wait(timeout=15)
        err = log.read_text()
    assert status == 0, err
    assert "Traceback" not in err


def test_http_shutdown_is_not_held_by_an_open_device_stream() -> None:
    with http_server_process() as (base, proc, log):
        with httpx.stream("GET", f"{base}/api/v1/agent/rpc-stream", timeout=30) as stream:
            lines = stream.iter_lines()
            assert next(lines) == ": connected"
            proc.send_signal(signal.SIGTERM)
            for _ in lines:  # the server ends the stream instead of heartbeating on
                pass
        status = proc.wait(timeout=15)
        err = log.read_text()
    assert status == 0, err
    assert "shutdown took longer" not in err  # a graceful stop, not the hard exit that ends a stuck one


def test_the_listening_socket_is_tcp_so_responses_are_not_delayed_by_nagle() -> None:
    from server.runtime.serving import _bind

    sock = _bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()
