"""`truloop-mcp call` as a subprocess on pipes: JSON documents in, reply lines out, errors as lines."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support import TRULOOP, child_env, read_until

pytestmark = pytest.mark.slow

DAY = {"type": "tool_call", "id": "d1", "name": "get_day_of_week", "args": {"date": "2026-03-10"}}


def call(tmp_path: Path, stdin: bytes, *flags: str, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [TRULOOP, "call", "--user", "alice", "--timezone", "Asia/Seoul", "--data-dir", str(tmp_path / "data"), *flags],
        input=stdin,
        capture_output=True,
        timeout=timeout,
        env=child_env(XDG_DATA_HOME=str(tmp_path / "xdg")),
    )


def lines(*documents: Any) -> bytes:
    return b"".join((doc if isinstance(doc, bytes) else json.dumps(doc).encode()) + b"\n" for doc in documents)


def test_a_pipe_of_documents_gets_one_reply_line_each(tmp_path: Path) -> None:
    anthropic = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": "get_day_of_week", "input": {"date": "2026-03-11"}}],
    }
    openai_list = [
        {"id": "o1", "type": "function", "function": {"name": "get_day_of_week", "arguments": '{"date":"2026-03-12"}'}},
        {"id": "o2", "type": "function", "function": {"name": "get_day_of_week", "arguments": '{"date":'}},
    ]
    stdin = (
        lines(DAY, b"this is not json", b"", openai_list, anthropic, {"unrelated": True})
        + json.dumps({"type": "function_call", "call_id": "r1", "name": "no_such_tool", "arguments": "{}"}).encode()
    )  # the last line has no newline: still answered
    done = call(tmp_path, stdin)
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert len(replies) == 6  # the blank line is passed over

    assert replies[0]["tool_call_id"] == "d1" and replies[0]["status"] == "success"
    assert replies[0]["artifact"]["day_of_week"] == "Tuesday"
    assert replies[1] == {"error": {"code": "invalid_json", "message": replies[1]["error"]["message"], "line": 2}}
    assert "line 2 is not UTF-8 JSON" in replies[1]["error"]["message"]
    assert [reply["tool_call_id"] for reply in replies[2]] == ["o1", "o2"]
    assert json.loads(replies[2][0]["content"])["day_of_week"] == "Thursday"
    assert "not valid JSON" in replies[2][1]["content"]
    assert replies[3] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "t1",
                "content": '{"date":"2026-03-11","day_of_week":"Wednesday","iso_weekday":3}',
                "is_error": False,
            }
        ],
    }
    assert replies[4]["error"]["code"] == "not_a_tool_call"
    assert replies[5]["type"] == "function_call_output" and replies[5]["call_id"] == "r1"
    assert "Unknown tool 'no_such_tool'" in replies[5]["output"]


def test_replies_come_while_the_pipe_stays_open(tmp_path: Path) -> None:
    """A driver that waits for each reply before writing the next call is never left waiting."""
    proc = subprocess.Popen(
        [TRULOOP, "call", "--user", "alice", "--data-dir", str(tmp_path / "data")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(XDG_DATA_HOME=str(tmp_path / "xdg")),
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for number, date in enumerate(["2026-03-10", "2026-03-13"]):
            proc.stdin.write(lines({**DAY, "id": f"i{number}", "args": {"date": date}}))
            proc.stdin.flush()
            reply = json.loads(read_until(proc.stdout, f'"i{number}"', timeout=30))
            assert reply["status"] == "success" and reply["artifact"]["date"] == date
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_an_oversized_line_is_refused_and_the_stream_goes_on(tmp_path: Path) -> None:
    huge = {**DAY, "args": {"date": "2026-03-10", "padding": "x" * 5000}}
    done = call(tmp_path, lines(huge, DAY), "--max-line-bytes", "1024")
    assert done.returncode == 0, done.stderr
    first, second = (json.loads(line) for line in done.stdout.decode().splitlines())
    assert first["error"]["code"] == "line_too_long" and first["error"]["line"] == 1
    assert second["status"] == "success"


def test_confirmation_and_deferred_tools_on_a_pipe(tmp_path: Path) -> None:
    import anyio

    from tests.support import services_for

    async def a_memory() -> str:
        services = services_for(tmp_path / "data")
        saved = await services.memories.save("alice", "a fact to forget", [])
        await services.aclose()
        return saved.id

    forget = {"type": "tool_use", "id": "f", "name": "forget_memory", "input": {"memory_id": anyio.run(a_memory)}}
    permission = {
        "type": "function_call",
        "call_id": "p",
        "name": "get_permission_status",
        "arguments": '{"notification_message": "Checking", "permission": "calendar.read"}',
    }
    done = call(tmp_path, lines(forget, permission), "--confirm", "strict")
    assert done.returncode == 0, done.stderr
    cancelled, no_route = (json.loads(line) for line in done.stdout.decode().splitlines())
    assert cancelled["is_error"] is True and cancelled["content"].startswith("Cancelled:")
    assert "runs on the user's device" in no_route["output"] and "--redis-url" in no_route["output"]


def test_a_bad_flag_is_one_line_and_status_2(tmp_path: Path) -> None:
    done = call(tmp_path, b"", "--profile", "nobody")
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode().strip().splitlines() == [
        "truloop-mcp: error: --profile: unknown profile 'nobody'; choose one of member, notification-safe, guest"
    ]


def test_the_guest_profile_over_the_pipe(tmp_path: Path) -> None:
    done = call(tmp_path, lines(DAY, {**DAY, "name": "list_invited_events", "args": {}}), "--profile", "guest")
    assert done.returncode == 0, done.stderr
    refused, listed = (json.loads(line) for line in done.stdout.decode().splitlines())
    assert refused["artifact"]["code"] == "unknown_tool"
    assert listed["status"] == "success"


def test_with_redis_a_deferred_call_looks_for_a_device(tmp_path: Path, redis_url: str, redis_prefix: str) -> None:
    permission = {
        "type": "tool_call",
        "id": "p",
        "name": "get_permission_status",
        "args": {"notification_message": "Checking", "permission": "calendar.read"},
    }
    done = subprocess.run(
        [TRULOOP, "call", "--user", "alice", "--data-dir", str(tmp_path / "data"), "--redis-url", redis_url],
        input=lines(DAY, permission),
        capture_output=True,
        timeout=60,
        env=child_env(XDG_DATA_HOME=str(tmp_path / "xdg"), TRULOOP_REDIS_PREFIX=redis_prefix),
    )
    assert done.returncode == 0, done.stderr
    day, no_device = (json.loads(line) for line in done.stdout.decode().splitlines())
    assert day["status"] == "success"
    assert no_device["artifact"]["code"] == "no_route"
    assert "no device of user 'alice' is connected" in no_device["content"]
