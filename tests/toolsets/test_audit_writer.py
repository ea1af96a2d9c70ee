"""The audit writer: lines in order, size rotation, and a failing disk or a full queue that only drops
(and counts) lines, never slows or fails the caller; /healthz reports it; calls keep working."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

import toolsets.pipeline.audit.writer as writer
from server.http.asgi_app import build_http_app, http_deployment
from tests.support import payload, serve_in_process, server_for, settings, stdio_server_process
from toolsets.pipeline.audit.writer import AuditLog, log_files, rotated


def entry(n: int, **extra: Any) -> dict[str, Any]:
    return {"ts": 1_773_100_800.0 + n, "event": "tool_call", "call_id": f"tc_{n}", "arguments": {"n": n}, **extra}


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_lines_arrive_in_order_masked_with_an_rfc3339_time(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit" / "tool-calls.jsonl")
    for n in range(1000):
        log.emit(entry(n, arguments={"email": "a@b.co", "n": n}))
    assert log.flush()
    lines = read(tmp_path / "audit" / "tool-calls.jsonl")
    assert [line["call_id"] for line in lines] == [f"tc_{n}" for n in range(1000)]
    assert lines[0]["ts"] == "2026-03-10T00:00:00.000Z" and lines[0]["arguments"] == {"email": "[masked]", "n": 0}
    assert log.written == 1000 and log.dropped == 0 and log.health() == "ok"
    assert (tmp_path / "audit").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "audit" / "tool-calls.jsonl").stat().st_mode & 0o777 == 0o600


def test_rotation_by_size_keeps_the_newest_files(tmp_path: Path) -> None:
    path = tmp_path / "tool-calls.jsonl"
    log = AuditLog(path, max_bytes=2000, keep=2)
    for n in range(300):
        log.emit(entry(n))
    assert log.flush()
    files = log_files(path)
    assert files == [rotated(path, 2), rotated(path, 1), path] and not rotated(path, 3).exists()
    assert all(file.stat().st_size <= 2000 for file in files)
    kept = [line["call_id"] for file in files for line in read(file)]
    assert kept == [f"tc_{n}" for n in range(300 - len(kept), 300)]  # the newest, in order, none lost between files


def test_keep_zero_keeps_no_old_files(tmp_path: Path) -> None:
    path = tmp_path / "tool-calls.jsonl"
    log = AuditLog(path, max_bytes=500, keep=0)
    for n in range(50):
        log.emit(entry(n))
    assert log.flush()
    assert log_files(path) == [path] and read(path)[-1]["call_id"] == "tc_49"


def test_a_full_disk_drops_and_counts_lines_without_raising() -> None:
    log = AuditLog(Path("/dev/full"))  # every write: ENOSPC
    started = time.perf_counter()
    for n in range(100):
        log.emit(entry(n))
    assert time.perf_counter() - started < 0.1  # emit never waits for the disk
    assert log.flush()
    assert log.dropped == 100 and log.written == 0 and log.health() == "degraded"
    assert Path("/dev/full").exists()  # a device is never rotated away


def test_an_unwritable_location_drops_and_recovers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writer, "RETRY_SECONDS", 0.05)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the log's folder should be")
    log = AuditLog(blocker / "tool-calls.jsonl")
    log.emit(entry(1))
    assert log.flush() and log.dropped == 1 and log.last_error
    blocker.unlink()  # the operator fixes it: the next lines are written again
    time.sleep(0.1)
    log.emit(entry(2))
    assert log.flush() and log.written == 1 and read(blocker / "tool-calls.jsonl")[0]["call_id"] == "tc_2"


def test_a_full_queue_drops_instead_of_waiting(tmp_path: Path) -> None:
    release = threading.Event()

    class StuckStream(io.StringIO):
        def write(self, text: str) -> int:
            release.wait(5)
            return super().write(text)

    stream = StuckStream()
    log = AuditLog(None, stream=stream, queue_size=10)
    started = time.perf_counter()
    for n in range(200):
        log.emit(entry(n))
    assert time.perf_counter() - started < 0.1
    assert log.dropped >= 180 and log.health() == "degraded"
    release.set()
    assert log.flush()
    assert log.written + log.dropped == 200


def test_the_thread_ends_when_idle_and_starts_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writer, "IDLE_SECONDS", 0.05)
    path = tmp_path / "tool-calls.jsonl"
    log = AuditLog(path)
    log.emit(entry(1))
    assert log.flush()
    deadline = time.monotonic() + 5
    while log._thread is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert log._thread is None and log._file is None  # no thread, no open file while idle
    log.emit(entry(2))
    assert log.flush() and [line["call_id"] for line in read(path)] == ["tc_1", "tc_2"]


def test_lines_queued_at_exit_are_written_and_an_idle_log_holds_no_exit_handler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "tool-calls.jsonl"
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from toolsets.pipeline.audit.writer import AuditLog\n"
        "log = AuditLog(Path(sys.argv[1]))\n"
        "for n in range(300):\n"
        "    log.emit({'ts': 1.0, 'event': 'tool_call', 'call_id': f'tc_{n}'})\n"
    )  # and exits at once: the writer thread is a daemon, so only the log's exit handler writes the lines
    subprocess.run(
        [sys.executable, "-c", script, str(path)], check=True, timeout=60, cwd=Path(__file__).resolve().parents[2]
    )
    assert [line["call_id"] for line in read(path)] == [f"tc_{n}" for n in range(300)]

    monkeypatch.setattr(writer, "IDLE_SECONDS", 0.05)
    log = AuditLog(tmp_path / "other.jsonl")
    assert not log._exit_hook  # nothing on its way yet
    log.emit(entry(1))
    assert log._exit_hook and log.flush()
    deadline = time.monotonic() + 5
    while log._thread is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert log._thread is None and not log._exit_hook  # idle: the exit has nothing to wait for


def test_calls_work_when_the_audit_disk_is_full_and_healthz_says_so(tmp_path: Path) -> None:
    """A real stdio server writing its audit log to /dev/full answers every call."""
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *({"jsonrpc": "2.0", "id": n, "method": "tools/call",
           "params": {"name": "get_day_of_week", "arguments": {"date": "2026-03-10"}}} for n in range(2, 12)),
    ]  # fmt: skip
    with stdio_server_process("--data-dir", str(tmp_path), "--audit-log", "/dev/full") as proc:
        out, err = proc.communicate("".join(json.dumps(line) + "\n" for line in lines).encode(), timeout=30)
    answers = [json.loads(line) for line in out.decode().splitlines()]
    days = [a["result"]["structuredContent"]["day_of_week"] for a in answers if a.get("id", 0) >= 2]
    assert days == ["Tuesday"] * 10 and proc.returncode == 0
    assert b"cannot write the audit log /dev/full" in err


@pytest.mark.anyio
async def test_healthz_reports_a_degraded_audit_log(tmp_path: Path) -> None:
    configured = settings(transport="http", data_dir=tmp_path, audit_log="/dev/full")
    deployment = http_deployment(configured)
    app = build_http_app(configured, deployment=deployment)
    async with serve_in_process(app) as base, httpx.AsyncClient(base_url=base) as http:
        healthy = await http.get("/healthz")
        assert healthy.status_code == 200 and healthy.json()["audit"] == "ok"
        assert healthy.json()["audit_dropped"] == 0
        async with Client(server_for(services=deployment.services, transport="http")) as client:
            assert payload(await client.call_tool("get_day_of_week", {"date": "2026-03-10"}))["iso_weekday"] == 2
        assert deployment.services.audit.flush()
        degraded = await http.get("/healthz")
    assert degraded.status_code == 503
    assert degraded.json()["status"] == "degraded" and degraded.json()["audit"] == "degraded"
    assert degraded.json()["audit_dropped"] == 2 and degraded.json()["store"] == "ok"


def test_audit_log_dash_writes_to_stderr_on_stdio(tmp_path: Path) -> None:
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "get_day_of_week", "arguments": {"date": "2026-03-10"}}},
    ]  # fmt: skip
    with stdio_server_process("--data-dir", str(tmp_path), "--audit-log", "-") as proc:
        out, err = proc.communicate("".join(json.dumps(line) + "\n" for line in lines).encode(), timeout=30)
    assert all("jsonrpc" in json.loads(line) for line in out.decode().splitlines())  # stdout: the protocol only
    audited = [json.loads(line) for line in err.decode().splitlines() if line.startswith('{"ts"')]
    assert [a["event"] for a in audited] == ["tool_call", "tool_result"] and audited[1]["status"] == "ok"
    assert not (tmp_path / "audit").exists()


# Every character that may split a line for some reader (str.splitlines splits on all of these but \x7f),
# plus the controls JSON leaves raw and a bidirectional override that would disguise a line in a terminal.
LINE_BREAKERS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\x00\x1b\x7f\x9f\u202e"


def test_line_separators_and_control_characters_are_escaped_so_each_line_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "tool-calls.jsonl"
    log = AuditLog(path)
    texts = [f"a{char}b" for char in LINE_BREAKERS] + [LINE_BREAKERS, "민지\u2028에게 010-1234-5678\u2029로"]
    for n, text in enumerate(texts):
        log.emit(entry(n, arguments={"content": text, f"key{text}": n}))
    log.emit(entry(len(texts), arguments={"content": "half a pair \ud800 here"}))  # a lone surrogate
    assert log.flush() and log.dropped == 0
    raw = path.read_bytes().decode("utf-8")
    assert raw.endswith("\n")
    lines = raw.splitlines()
    assert len(lines) == len(texts) + 1 == raw.count("\n")
    assert not any(char in raw for char in LINE_BREAKERS.replace("\n", ""))
    parsed = [json.loads(line) for line in lines]
    assert [line["arguments"]["content"] for line in parsed[: len(LINE_BREAKERS)]] == [
        f"a{char}b" for char in LINE_BREAKERS
    ]  # the same text once parsed
    assert parsed[len(LINE_BREAKERS) + 1]["arguments"]["content"] == "민지\u2028에게 [phone]\u2029로"
    assert parsed[-1]["arguments"]["content"] == "half a pair \ufffd here"


def test_rotated_files_are_private_too(tmp_path: Path) -> None:
    path = tmp_path / "new" / "audit" / "tool-calls.jsonl"
    log = AuditLog(path, max_bytes=2000, keep=3)
    for n in range(200):
        log.emit(entry(n))
    assert log.flush()
    assert len(log_files(path)) == 4
    assert all(file.stat().st_mode & 0o777 == 0o600 for file in log_files(path))
    assert (tmp_path / "new").stat().st_mode & 0o777 == 0o700  # the missing parents too, not only audit/
