"""A real `truloop-mcp` subprocess over stdio: SDK client in both eras, and raw JSON-RPC lines; each on the
stdio lean front (`fast`) and on the SDK's `stdio_server` (`plain`, `TRULOOP_FAST_PATHS=0`)."""

from __future__ import annotations

import json
import signal
import subprocess

import pytest
from mcp import Client, StdioServerParameters

from tests.support import FAST_AND_PLAIN, MODES, TRULOOP, error_of, paths_env


def params(*args: str, fast_paths: bool = True) -> StdioServerParameters:
    return StdioServerParameters(command=TRULOOP, args=["--timezone", "Asia/Seoul", *args], env=paths_env(fast_paths))


@pytest.mark.anyio
@MODES
@FAST_AND_PLAIN
async def test_console_script_over_stdio(mode: str, fast_paths: bool) -> None:
    async with Client(params(fast_paths=fast_paths), mode=mode) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        result = await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
    assert {"get_day_of_week", "get_current_datetime"} <= tools
    assert result.structured_content == {"date": "2026-03-10", "day_of_week": "Tuesday", "iso_weekday": 2}


@pytest.mark.anyio
async def test_profile_flag_on_stdio() -> None:
    async with Client(params("--profile", "guest"), mode="legacy") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        refused = await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
    assert "get_day_of_week" not in names
    assert refused.is_error and error_of(refused)["code"] == "unknown_tool"  # type: ignore[index]


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "pipe", "version": "1"}},
}
CALL = {
    "jsonrpc": "2.0",
    "id": 9,
    "method": "tools/call",
    "params": {"name": "get_day_of_week", "arguments": {"date": "2026-03-10"}},
}


def pipe(lines: list[str], fast_paths: bool = True) -> list[dict]:
    proc = subprocess.run(
        [TRULOOP], input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=30, env=paths_env(fast_paths)
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


MALFORMED = [
    json.dumps(INIT),
    json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    "this is not json",
    json.dumps({"id": 5, "hello": "world"}),
    "[1, 2, 3]",
    json.dumps(CALL),
]


@FAST_AND_PLAIN
def test_malformed_lines_get_json_rpc_errors_and_serving_goes_on(fast_paths: bool) -> None:
    replies = pipe(MALFORMED, fast_paths)
    by_id: dict = {}
    nulls = []
    for reply in replies:
        if reply.get("id") is None:
            nulls.append(reply)
        else:
            by_id[reply["id"]] = reply
    assert by_id[1]["result"]["serverInfo"]["name"] == "truloop-mcp"
    assert by_id[5]["error"]["code"] == -32600
    assert sorted(reply["error"]["code"] for reply in nulls) == [-32700, -32600]
    assert by_id[9]["result"]["structuredContent"]["day_of_week"] == "Tuesday"


@FAST_AND_PLAIN
def test_unknown_method_is_method_not_found(fast_paths: bool) -> None:
    replies = pipe(
        [json.dumps(INIT), json.dumps({"jsonrpc": "2.0", "id": 2, "method": "no/such", "params": {}})], fast_paths
    )
    assert any(r.get("id") == 2 and r["error"]["code"] == -32601 for r in replies)


@FAST_AND_PLAIN
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_clean_shutdown_on_signal(signum: int, fast_paths: bool) -> None:
    proc = subprocess.Popen(
        [TRULOOP], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=paths_env(fast_paths)
    )
    assert proc.stdin and proc.stdout
    proc.stdin.write((json.dumps(INIT) + "\n").encode())
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1  # answered: serving, with its signal handlers in place
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert b"Traceback" not in err


@FAST_AND_PLAIN
def test_end_of_input_exits_cleanly(fast_paths: bool) -> None:
    proc = subprocess.run([TRULOOP], input="", capture_output=True, text=True, timeout=30, env=paths_env(fast_paths))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr


@FAST_AND_PLAIN
@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_each_handshake_version_is_served(version: str, fast_paths: bool) -> None:
    init = {**INIT, "params": {**INIT["params"], "protocolVersion": version}}  # type: ignore[dict-item]
    replies = pipe([json.dumps(init), json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                    json.dumps(CALL)], fast_paths)  # fmt: skip
    by_id = {reply.get("id"): reply for reply in replies}
    assert by_id[1]["result"]["protocolVersion"] == version
    assert by_id[9]["result"]["structuredContent"]["day_of_week"] == "Tuesday"


def test_both_paths_answer_the_same_lines_alike() -> None:
    """The same session, bad lines and all, on the lean front and on the SDK's: equal answers."""
    lines = [*MALFORMED, json.dumps({"jsonrpc": "2.0", "id": 10, "method": "tools/list"}),
             json.dumps({**CALL, "id": 11, "params": {"name": "get_day_of_week", "arguments": {"date": "2026-02-30"}}}),
             json.dumps({**CALL, "id": 12, "params": {"name": "no_such_tool", "arguments": {}}})]  # fmt: skip

    def keyed(replies: list[dict]) -> list[str]:  # answers to concurrent requests may come in either order
        return sorted(json.dumps(reply, sort_keys=True) for reply in replies)

    fast, plain = pipe(lines, True), pipe(lines, False)
    assert len(fast) == 8 and keyed(fast) == keyed(plain)


@FAST_AND_PLAIN
def test_a_call_before_initialize_says_to_initialize_first(fast_paths: bool) -> None:
    replies = pipe([json.dumps(CALL), json.dumps(INIT)], fast_paths)
    refused = next(reply for reply in replies if reply.get("id") == CALL["id"])
    assert refused["error"]["code"] == -32602
    assert "initialize" in refused["error"]["message"] and refused["error"]["data"] == {"method": "tools/call"}
    assert any(reply.get("id") == INIT["id"] and "result" in reply for reply in replies)  # and serving goes on
