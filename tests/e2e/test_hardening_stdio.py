"""Hostile stdin against a real `truloop-mcp` subprocess: deep nesting, invalid UTF-8 under a strict
locale, ids of every JSON type, duplicate in-flight ids, oversized lines with bounded memory, and
signals that end the server cleanly while stdin stays open."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.support import INIT, INITIALIZED, TRULOOP, child_env, stdio_server_process


def call(request_id: Any, date: str = "2026-03-10") -> dict[str, Any]:
    params = {"name": "get_day_of_week", "arguments": {"date": date}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def encode(*messages: Any) -> bytes:
    return b"".join((m if isinstance(m, bytes) else json.dumps(m).encode()) + b"\n" for m in messages)


def strict_env() -> dict[str, str]:
    return child_env(PYTHONIOENCODING="utf-8:strict", LANG="C.UTF-8", LC_ALL="C.UTF-8")


def run(tmp_path: Path, payload: bytes, *args: str) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [TRULOOP, "--data-dir", str(tmp_path / "data"), *args],
        input=payload,
        capture_output=True,
        timeout=60,
        env=strict_env(),
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    assert b"Traceback" not in proc.stderr
    return [json.loads(line) for line in proc.stdout.decode().splitlines()]


def by_id(replies: list[dict[str, Any]]) -> dict[Any, list[dict[str, Any]]]:
    grouped: dict[Any, list[dict[str, Any]]] = {}
    for reply in replies:
        grouped.setdefault(json.dumps(reply.get("id")), []).append(reply)
    return grouped


def test_deep_nesting_and_invalid_utf8_are_parse_errors_and_serving_goes_on(tmp_path: Path) -> None:
    replies = run(
        tmp_path,
        encode(
            INIT,
            INITIALIZED,
            b"[" * 1000,
            b'{"a":' * 100_000,
            b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":"\xff\xfe"}}',
            b"\xc3\x28",
            b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}',  # JSON by grammar, not Unicode; id unusable
            b'{"jsonrpc":"2.0","id":6,"method":"ping","params":{"x":"\\udc00"}}',  # the id can be answered
            call(1),
        ),
    )
    errors = [r for r in replies if r.get("id") is None]
    assert [e["error"]["code"] for e in errors] == [-32700] * 5
    assert by_id(replies)["6"][0]["error"]["code"] == -32600
    assert by_id(replies)["1"][0]["result"]["structuredContent"]["day_of_week"] == "Tuesday"


@pytest.mark.parametrize("bad_id", [{"a": 1}, [1], 1.5, 2.0, True, False])
def test_an_id_that_is_not_a_string_or_integer_is_answered_with_invalid_request(tmp_path: Path, bad_id: Any) -> None:
    replies = run(tmp_path, encode(INIT, INITIALIZED, {"jsonrpc": "2.0", "id": bad_id, "method": "ping"}, call(2)))
    assert replies[1] == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid Request: expected an id that is a string or an integer"},
    }
    assert replies[2]["id"] == 2 and "result" in replies[2]


def test_every_request_gets_exactly_one_reply_even_when_ids_collide(tmp_path: Path) -> None:
    lines = [INIT, INITIALIZED]
    for n in range(20):
        lines += [call(n % 5, f"2026-03-{10 + n % 5:02d}")]  # ids 0..4 reused while in flight, or not
    replies = run(tmp_path, encode(*lines))[1:]
    assert len(replies) == 20  # one reply per request line, never one for two, never none
    for reply in replies:
        if "error" in reply:
            assert reply["error"]["code"] == -32600 and "already used" in reply["error"]["message"]
        else:
            assert reply["result"]["structuredContent"]["date"].startswith("2026-03-1")


def _peak_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_an_oversized_line_is_refused_while_memory_stays_bounded(tmp_path: Path) -> None:
    limit = 1024 * 1024
    args = ("--data-dir", str(tmp_path / "data"), "--max-line-bytes", str(limit))
    with stdio_server_process(*args, env=strict_env()) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(encode(INIT, INITIALIZED, call(2)))  # a first call builds the tools: not the line's cost
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == "init"
        assert json.loads(proc.stdout.readline())["id"] == 2
        before = _peak_rss_kib(proc.pid)
        chunk = b"x" * (1024 * 1024)
        proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"')
        for _ in range(200):  # a 200 MB line
            proc.stdin.write(chunk)
        proc.stdin.write(b'"}}\n' + encode(call(3)))
        proc.stdin.flush()
        refused = json.loads(proc.stdout.readline())
        served = json.loads(proc.stdout.readline())
        peak = _peak_rss_kib(proc.pid)
        proc.stdin.close()
        assert proc.wait(timeout=20) == 0
    assert refused["id"] is None and refused["error"]["code"] == -32700
    assert f"{limit} bytes" in refused["error"]["message"]
    assert served["id"] == 3 and "result" in served
    assert peak - before < 32 * 1024, f"peak RSS grew by {(peak - before) // 1024} MiB for a 200 MiB line"


@pytest.mark.parametrize("use_pty", [False, True], ids=["pipe", "pty"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_ends_the_stdio_server_promptly_with_status_0(tmp_path: Path, signum: int, use_pty: bool) -> None:
    with stdio_server_process("--data-dir", str(tmp_path / "data"), use_pty=use_pty, env=strict_env()) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        # on a terminal, typed lines: then the server's reader is blocked on the tty, waiting for more
        proc.stdin.write(encode(INIT, INITIALIZED, call(1)))
        proc.stdin.flush()
        first, answered = json.loads(proc.stdout.readline()), json.loads(proc.stdout.readline())
        assert first["id"] == "init" and answered["id"] == 1 and "result" in answered
        proc.send_signal(signum)
        # well before the hard exit (HARD_EXIT_SECONDS) that would free a reader stuck on the tty
        status = proc.wait(timeout=5)
        err = proc.stderr.read()
        assert status == 0, err
        assert b"Traceback" not in err and b"shutdown took longer" not in err


def test_requests_read_before_a_signal_are_answered(tmp_path: Path) -> None:
    with stdio_server_process("--data-dir", str(tmp_path / "data"), env=strict_env()) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(encode(INIT, INITIALIZED))
        proc.stdin.flush()
        proc.stdout.readline()
        lines: list[bytes] = []
        answered_last = threading.Event()

        def collect() -> None:
            for line in proc.stdout:  # type: ignore[union-attr]
                lines.append(line)
                if json.loads(line)["id"] == 5:
                    answered_last.set()

        reader = threading.Thread(target=collect, daemon=True)
        reader.start()
        proc.stdin.write(encode(*(call(n) for n in range(1, 6))))
        proc.stdin.flush()
        # lines are read in order: once 5 is answered, all five were read (the others perhaps still running)
        assert answered_last.wait(timeout=20), lines
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 0
        reader.join(timeout=5)
    ids = sorted(json.loads(line)["id"] for line in lines)
    assert ids == [1, 2, 3, 4, 5]
