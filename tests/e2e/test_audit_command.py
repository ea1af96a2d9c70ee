"""`truloop-mcp audit tail|grep`: filters by user, tool, status and time, across rotated files."""

from __future__ import annotations

import json
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from server.cli.audit_command import parse_time
from tests.support import TRULOOP, child_env, read_until
from toolsets.pipeline.audit.writer import AuditLog

NOW = time.time()


def entry(n: int, user: str, tool: str, status: str | None, ago_hours: float) -> dict[str, Any]:
    event = "tool_call" if status is None else "tool_result"
    return {"ts": NOW - ago_hours * 3600, "event": event, "call_id": f"tc_{n}", "request_id": str(n),
            "session_id": None, "transport": "stdio", "protocol_version": "2025-11-25", "user_id": user,
            "role": "member", "profile": "member", "tool_name": tool, "tool_version": "0.1.0", "route": "stable",
            "arguments": {"note": f"call {n}", "phone": "010-1234-5678"}, "status": status,
            "error_code": "not_found" if status == "error" else None,
            "latency_ms": 1.5 if status else None}  # fmt: skip


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    """Nine lines over three files (rotated at a small size), oldest first."""
    path = tmp_path / "audit" / "tool-calls.jsonl"
    log = AuditLog(path, max_bytes=1400, keep=5)
    rows = [
        ("alice", "get_day_of_week", None, 50), ("alice", "get_day_of_week", "ok", 50),
        ("bob", "save_memory", None, 30), ("bob", "save_memory", "error", 30),
        ("alice", "search_memories", None, 3), ("alice", "search_memories", "ok", 3),
        ("alice", "forget_memory", None, 0.5), ("alice", "forget_memory", "cancelled", 0.5),
        ("bob", "get_day_of_week", "ok", 0.1),
    ]  # fmt: skip
    for n, (user, tool, status, ago) in enumerate(rows):
        log.emit(entry(n, user, tool, status, ago))
    assert log.flush()
    assert len(list(path.parent.iterdir())) >= 3, "the fixture should span rotated files"
    return path


def audit(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TRULOOP, "audit", *args], capture_output=True, text=True, env=child_env(**env), timeout=30)


def ids(output: str) -> list[str]:
    return [json.loads(line)["call_id"] for line in output.splitlines()]


def test_tail_prints_the_last_lines_across_rotated_files(log_path: Path) -> None:
    done = audit("tail", "-n", "4", "--audit-log", str(log_path))
    assert done.returncode == 0, done.stderr
    assert ids(done.stdout) == ["tc_5", "tc_6", "tc_7", "tc_8"]
    everything = audit("tail", "-n", "100", "--audit-log", str(log_path))
    assert ids(everything.stdout) == [f"tc_{n}" for n in range(9)]
    assert "010-1234-5678" not in everything.stdout  # the stored lines are masked


def test_filters_by_user_tool_status_and_time(log_path: Path) -> None:
    flags = ("--audit-log", str(log_path))
    assert ids(audit("tail", "--user", "bob", *flags).stdout) == ["tc_2", "tc_3", "tc_8"]
    assert ids(audit("tail", "--tool", "get_day_of_week", *flags).stdout) == ["tc_0", "tc_1", "tc_8"]
    assert ids(audit("tail", "--status", "error", *flags).stdout) == ["tc_3"]
    assert ids(audit("tail", "--since", "1h", *flags).stdout) == ["tc_6", "tc_7", "tc_8"]
    assert ids(audit("tail", "--since", "2d", "--until", "2h", *flags).stdout) == ["tc_2", "tc_3", "tc_4", "tc_5"]
    assert ids(audit("tail", "--user", "alice", "--event", "tool_result", "--since", "4h", *flags).stdout) == [
        "tc_5",
        "tc_7",
    ]


def test_grep_matches_a_pattern_and_exits_1_when_nothing_does(log_path: Path) -> None:
    flags = ("--audit-log", str(log_path))
    found = audit("grep", "_memor", "--user", "alice", *flags)
    assert found.returncode == 0 and ids(found.stdout) == ["tc_4", "tc_5", "tc_6", "tc_7"]
    assert ids(audit("grep", "-i", "CALL 3\\b", *flags).stdout) == ["tc_3"]
    missing = audit("grep", "no-such-thing", *flags)
    assert missing.returncode == 1 and missing.stdout == ""
    bad = audit("grep", "(", *flags)
    assert bad.returncode == 2 and "bad pattern" in bad.stderr


def test_text_format_is_one_short_line_each(log_path: Path) -> None:
    done = audit("tail", "-n", "2", "--format", "text", "--audit-log", str(log_path))
    first, second = done.stdout.splitlines()
    assert "forget_memory" in first and "cancelled" in first and "alice" in first
    assert "bob" in second and "get_day_of_week" in second and "ok" in second and "1.5ms" in second


def test_the_default_log_is_the_servers_under_data_dir(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit" / "tool-calls.jsonl")
    log.emit(entry(1, "alice", "get_day_of_week", "ok", 0))
    assert log.flush()
    assert ids(audit("tail", "--data-dir", str(tmp_path)).stdout) == ["tc_1"]
    assert ids(audit("tail", TRULOOP_DATA_DIR=str(tmp_path)).stdout) == ["tc_1"]


def test_clear_errors(tmp_path: Path) -> None:
    off = audit("tail", "--audit-log", "off")
    assert off.returncode == 2 and "off" in off.stderr
    stream = audit("tail", "--audit-log", "-")
    assert stream.returncode == 2 and "standard stream" in stream.stderr
    empty = audit("tail", "--data-dir", str(tmp_path))
    assert empty.returncode == 2 and "no audit log at" in empty.stderr
    bad_time = audit("tail", "--since", "yesterday", "--data-dir", str(tmp_path))
    assert bad_time.returncode == 2 and "not a time" in bad_time.stderr
    assert "Traceback" not in off.stderr + stream.stderr + empty.stderr + bad_time.stderr


def test_follow_prints_new_lines_across_a_rotation(tmp_path: Path) -> None:
    path = tmp_path / "tool-calls.jsonl"
    log = AuditLog(path, max_bytes=1400, keep=3)
    log.emit(entry(0, "alice", "get_day_of_week", "ok", 0))
    assert log.flush()
    proc = subprocess.Popen([TRULOOP, "audit", "tail", "-f", "-n", "1", "--audit-log", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env())  # fmt: skip
    try:
        assert proc.stdout is not None
        read_until(proc.stdout, "tc_0")
        for n in range(1, 8):  # about 500 bytes each: the file rotates on the way
            log.emit(entry(n, "alice", "get_day_of_week", "ok", 0))
        assert log.flush()
        seen = read_until(proc.stdout, "tc_7")
        assert [f"tc_{n}" for n in range(1, 8)] == ids(seen)
        assert len(list(tmp_path.iterdir())) > 1
    finally:
        proc.terminate()
        proc.wait(10)


def test_parse_time_forms() -> None:
    now = datetime(2026, 3, 10, 12, tzinfo=UTC)
    assert parse_time("15m", now) == now - timedelta(minutes=15)
    assert parse_time("2h", now) == now - timedelta(hours=2)
    assert parse_time("2026-03-10") == datetime(2026, 3, 10, tzinfo=UTC)
    assert parse_time("2026-03-10T09:00:00+09:00") == datetime(2026, 3, 10, tzinfo=UTC)


def test_a_folder_as_the_audit_log_is_refused_at_start(tmp_path: Path) -> None:
    done = subprocess.run([TRULOOP, "--audit-log", str(tmp_path)], capture_output=True, text=True, env=child_env(),
                          stdin=subprocess.DEVNULL, timeout=30)  # fmt: skip
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "--audit-log / TRULOOP_AUDIT_LOG" in done.stderr and "is a folder" in done.stderr
