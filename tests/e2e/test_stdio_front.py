"""The stdio lean front (server/stdio/lean_front.py) answers what the SDK's own path answers, without the SDK.

Each scenario is written to a real `truloop-mcp` over stdio twice, with the speed paths on and off
(`TRULOOP_FAST_PATHS=0`: the SDK answers everything), and the answers compared message by message.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from server.mcp.wire_forms import HANDSHAKE_VERSIONS, LATEST_HANDSHAKE, initialize_result
from tests.support import INITIALIZED, TRULOOP, paths_env

pytestmark = pytest.mark.timeout(120)


def _initialize(version: str, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {
        "protocolVersion": version,
        "capabilities": capabilities or {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


def _call(request_id: Any, name: str, arguments: Any, **extra: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, **extra},
    }


def _serve(lines: list[dict[str, Any] | str], data_dir: Path, fast_paths: bool, *args: str) -> list[dict[str, Any]]:
    """Every message the server wrote for `lines` (written at once, then end of input), by id where it has one."""
    text = "".join((line if isinstance(line, str) else json.dumps(line, ensure_ascii=False)) + "\n" for line in lines)
    done = subprocess.run(
        [TRULOOP, "--data-dir", str(data_dir), "--user", "u1", "--timezone", "Asia/Seoul", *args],
        input=text.encode(),
        capture_output=True,
        env=paths_env(fast_paths),
        timeout=90,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return [json.loads(line) for line in done.stdout.decode().splitlines()]


def _both(lines: list[dict[str, Any] | str], tmp_path: Path, *args: str) -> tuple[list[Any], list[Any]]:
    fast = _serve(lines, tmp_path / "fast", True, *args)
    plain = _serve(lines, tmp_path / "plain", False, *args)
    return _by_id(fast), _by_id(plain)


def _by_id(messages: list[dict[str, Any]]) -> list[Any]:
    """Answers in id order (concurrent calls may finish in any order), notifications in the order written."""
    answers = sorted((m for m in messages if "id" in m), key=lambda m: json.dumps(m["id"]))
    return answers + [m for m in messages if "id" not in m]


@pytest.mark.parametrize("version", [*HANDSHAKE_VERSIONS, "2099-01-01"])
def test_initialize_answer_is_the_sdks(version: str, tmp_path: Path) -> None:
    fast, plain = _both([_initialize(version)], tmp_path)
    assert fast == plain
    assert fast[0]["result"] == initialize_result(version, fast[0]["result"]["serverInfo"]["version"])
    assert fast[0]["result"]["protocolVersion"] == (version if version in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE)


def test_handshake_versions_are_the_sdks() -> None:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

    assert HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS
    assert LATEST_HANDSHAKE == LATEST_HANDSHAKE_VERSION


def test_session_answers_are_the_sdks(tmp_path: Path) -> None:
    """List, calls (success, bad arguments, unknown tool, a Korean argument), ping, a reused id, bad lines."""
    lines: list[dict[str, Any] | str] = [
        _initialize("2025-11-25", {"roots": {"listChanged": True}, "elicitation": {}}),
        INITIALIZED,
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        _call(3, "get_day_of_week", {"date": "2026-03-10"}),
        _call(4, "get_day_of_week", {"date": "화요일"}),
        _call(5, "no_such_tool", {}),
        _call(6, "get_day_of_week", "not an object"),
        _call("seven", "save_memory", {"content": "김민지는 화요일마다 회의가 있다"}),
        _call(8, "search_memories", {"query": "다음 주 출장 일정"}),  # nothing saved matches it
        "{not json",
        {"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"cursor": "bogus"}},
        {"jsonrpc": "2.0", "id": 10, "method": "prompts/list"},  # the SDK's, on the session the front opened
        _call(11, "get_day_of_week", {"date": "2026-03-11"}),  # the front's again, after the SDK joined
    ]
    fast, plain = _both(lines, tmp_path)
    assert _scrub(fast) == _scrub(plain)
    answers = {m["id"]: m for m in fast if "id" in m and m["id"] is not None}
    assert answers[3]["result"]["structuredContent"]["day_of_week"] == "Tuesday"
    assert answers[4]["result"]["isError"] is True
    assert "출장" in json.dumps(answers[8]["result"], ensure_ascii=False)
    assert answers["seven"]["result"]["structuredContent"]["content"].startswith("김민지")
    assert answers[9]["error"]["code"] == -32602
    assert answers[10]["result"]["prompts"]
    assert answers[11]["result"]["structuredContent"]["day_of_week"] == "Wednesday"


def test_log_messages_are_the_sdks(tmp_path: Path) -> None:
    """A handshake-era session hears `error` and above until it sets a level (a refusal is a warning)."""
    lines: list[dict[str, Any] | str] = [
        _initialize("2025-06-18"),
        INITIALIZED,
        _call(1, "get_day_of_week", {"date": "2026-02-30"}),
    ]
    fast, plain = _both(lines, tmp_path)
    assert _scrub(fast) == _scrub(plain)
    assert not [m for m in fast if m.get("method") == "notifications/message"]


def _scrub(messages: list[dict[str, Any]]) -> list[Any]:
    """Without what differs between any two runs (memory ids, times)."""
    text = json.dumps(messages, ensure_ascii=False, sort_keys=True)

    text = re.sub(r'"(id|memory_id|created_at|saved_at|seconds)": ?("[^"]*"|[0-9.]+)', r'"\1": "*"', text)
    text = re.sub(r"mem_[0-9a-f]{32}", "mem_*", text)
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", "T*", text)
    return json.loads(text)


def test_no_sdk_import_before_the_first_call_is_answered(tmp_path: Path) -> None:
    """initialize, the list and a plain call are answered with the SDK not imported (`-X importtime` lists every
    module a process imports)."""
    lines = [_initialize("2025-11-25"), INITIALIZED, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]
    lines.append(_call(2, "get_day_of_week", {"date": "2026-03-10"}))
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "server", "--data-dir", str(tmp_path), "--user", "u1"],
        input="".join(json.dumps(line) + "\n" for line in lines).encode(),
        capture_output=True,
        env=paths_env(True),
        timeout=90,
    )
    assert done.returncode == 0
    answers = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert [m["id"] for m in answers] == [0, 1, 2]
    imported = [line.split("|")[-1].strip() for line in done.stderr.decode().splitlines() if "import time:" in line]
    assert imported, "no -X importtime output"
    assert not [name for name in imported if name.split(".")[0] in ("mcp", "mcp_types", "starlette", "uvicorn")]


def test_a_connection_that_opens_without_a_handshake_is_the_sdks(tmp_path: Path) -> None:
    """A request before `initialize`, and an `initialize` the front does not read as plain, go to the SDK whole."""
    early = [_call(1, "get_day_of_week", {"date": "2026-03-10"}), _initialize("2025-11-25")]
    fast, plain = _both(early, tmp_path)
    assert fast == plain
    odd = _initialize("2025-11-25")
    odd["params"]["clientInfo"] = {"name": 7}
    fast, plain = _both([odd], tmp_path / "odd")
    assert fast == plain and "error" in fast[0]


@pytest.mark.parametrize("fast_paths", [True, False], ids=["fast", "plain"])
def test_a_cancelled_call_is_never_answered(fast_paths: bool, tmp_path: Path) -> None:
    """`notifications/cancelled` stops a running call (a plugin sleeping in a worker): it gets no answer, and the
    session goes on."""
    from tests.plugin_files import LIFECYCLE, plugin_source, write

    tools = tmp_path / "tools"
    tools.mkdir()
    write(tools / "napper.py", plugin_source("napper", LIFECYCLE.format(tag="a")))
    proc = subprocess.Popen(
        [TRULOOP, "--tools-dir", str(tools), "--data-dir", str(tmp_path / "data")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=paths_env(fast_paths),
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for message in (_initialize("2025-11-25"), INITIALIZED, _call("slow", "napper", {"sleep": 2})):
            proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 0
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "slow"}}
        ping = {"jsonrpc": "2.0", "id": "after", "method": "ping"}
        proc.stdin.write((json.dumps(cancel) + "\n" + json.dumps(ping) + "\n").encode())
        proc.stdin.close()  # end of input: every request still owed an answer is answered first
        rest = [json.loads(line) for line in proc.stdout.read().decode().splitlines()]
        assert [m.get("id") for m in rest if "id" in m] == ["after"], rest
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()


def test_a_2026_07_28_client_is_served_by_the_sdk_as_without_the_front(tmp_path: Path) -> None:
    """No handshake: each request carries the 2026-07-28 envelope; the SDK serves the connection whole."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    lines: list[dict[str, Any] | str] = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}},
        _call(2, "get_day_of_week", {"date": "2026-03-10"}, _meta=meta),
        _initialize("2025-11-25"),  # a handshake on a 2026-07-28 connection is refused, as the SDK refuses it
    ]
    fast, plain = _both(lines, tmp_path)
    assert fast == plain
    answers = {m["id"]: m for m in fast}
    assert answers[2]["result"]["structuredContent"]["day_of_week"] == "Tuesday"
    assert "error" in answers[0]
