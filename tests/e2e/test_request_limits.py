"""Per-user bounds on an installed server (docs/security.md, *Per-user rate limits*): `--calls-per-minute` and
`--max-concurrent-calls`, over HTTP, on one replica and shared by two through Redis; what a refused call, read and
prompt get; that the session stays usable and other users are untouched; the refusal metric; and the audit lines of
plugin resource reads and prompt gets."""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path

import anyio
import httpx
import pytest
from mcp.shared.exceptions import MCPError

from tests.plugin_files import LIFECYCLE, plugin_source
from tests.support import (
    INIT,
    INITIALIZED,
    SECRET,
    child_env,
    error_of,
    mcp_client,
    replica_env,
    spawn_http_server,
    stdio_server_process,
    token,
)

pytestmark = pytest.mark.timeout(120)

DAY = {"date": "2026-03-10"}
REDIS_URL = "redis://127.0.0.1:6379/0"


def _metric(base: str, name: str, **labels: str) -> tuple[float, str]:
    bearer = token(sub="ops", role="operator")
    text = httpx.get(f"{base}/metrics", headers={"Authorization": f"Bearer {bearer}"}, timeout=10).text
    from prometheus_client.parser import text_string_to_metric_families

    total = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                total += sample.value
    return total, text


@pytest.mark.anyio
async def test_past_the_rate_a_call_read_and_prompt_are_refused_and_nothing_else_is(tmp_path: Path) -> None:
    env = child_env(TRULOOP_JWT_SECRET=SECRET)
    with spawn_http_server("--calls-per-minute", "5", "--data-dir", str(tmp_path), env=env) as base:
        async with mcp_client(base, token("alice")) as alice:
            for _ in range(5):
                assert not (await alice.call_tool("get_day_of_week", DAY)).is_error
            refused = await alice.call_tool("get_day_of_week", DAY)
            assert refused.is_error
            error = error_of(refused)
            assert error["code"] == "rate_limited" and error["retryable"] is True
            wait = int(error["reason"].split("Try again in ")[1].split(" s")[0])
            assert 1 <= wait <= 12, error["reason"]  # one of 5 a minute comes back every 12 s
            assert "at most 5 a minute" in error["reason"]
            # the session is still usable: what is not counted still answers, with no transport error
            assert (await alice.list_tools()).tools
            with pytest.raises(MCPError) as read:
                await alice.read_resource("truloop://guide")
            assert read.value.error.code == -32000
            assert read.value.error.data["code"] == "rate_limited" and read.value.error.data["retryAfter"] >= 1
            with pytest.raises(MCPError) as prompt:
                await alice.get_prompt("summarise_inbox", {})
            assert prompt.value.error.code == -32000
        async with mcp_client(base, token("bob")) as bob:  # another user is untouched
            assert not (await bob.call_tool("get_day_of_week", DAY)).is_error
            assert (await bob.read_resource("truloop://guide")).contents
        calls, text = _metric(base, "truloop_requests_limited_total", kind="call", limit="rate")
        reads, _ = _metric(base, "truloop_requests_limited_total", kind="read", limit="rate")
        assert calls == 1 and reads == 1
        assert "alice" not in text and "bob" not in text


@pytest.mark.anyio
async def test_two_replicas_share_one_users_rate_through_redis(tmp_path: Path) -> None:
    env = replica_env(REDIS_URL, f"t-limits-{secrets.token_hex(4)}:")
    with (
        spawn_http_server("--calls-per-minute", "4", "--data-dir", str(tmp_path / "a"), env=env) as a,
        spawn_http_server("--calls-per-minute", "4", "--data-dir", str(tmp_path / "b"), env=env) as b,
    ):
        async with mcp_client(a, token("alice")) as on_a, mcp_client(b, token("alice")) as on_b:
            for client in (on_a, on_b, on_a, on_b):
                assert not (await client.call_tool("get_day_of_week", DAY)).is_error
            for client in (on_a, on_b):
                refused = await client.call_tool("get_day_of_week", DAY)
                assert error_of(refused)["code"] == "rate_limited"
        async with mcp_client(b, token("carol")) as carol:
            assert not (await carol.call_tool("get_day_of_week", DAY)).is_error


@pytest.mark.anyio
async def test_at_most_n_calls_of_a_user_run_at_once(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    schema = {"type": "object", "properties": {"sleep": {"type": "number"}}}
    slow = plugin_source("slow_counter", LIFECYCLE.format(tag="slow"), input_schema=schema, timeout_s=20)
    (tools / "slow_counter.py").write_text(slow)
    env = child_env(TRULOOP_JWT_SECRET=SECRET)
    args = ("--max-concurrent-calls", "2", "--tools-dir", str(tools), "--data-dir", str(tmp_path / "data"))
    with spawn_http_server(*args, env=env) as base:
        async with mcp_client(base, token("alice")) as alice, mcp_client(base, token("bob")) as bob:
            outcomes: list[bool] = []

            async def slow_call() -> None:
                outcomes.append((await alice.call_tool("slow_counter", {"sleep": 3})).is_error)

            with anyio.fail_after(30):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(slow_call)
                    tg.start_soon(slow_call)
                    await anyio.sleep(1.0)  # both are running
                    third = await alice.call_tool("get_day_of_week", DAY)
                    assert error_of(third)["code"] == "rate_limited"
                    assert "at once" in error_of(third)["reason"]
                    started = time.monotonic()
                    assert not (await bob.call_tool("get_day_of_week", DAY)).is_error  # bob has his own slots
                    assert time.monotonic() - started < 2
            assert outcomes == [False, False]
            assert not (await alice.call_tool("get_day_of_week", DAY)).is_error  # the slots came back


RESOURCE = """
RESOURCE_SPEC = {"uri": "notes://today", "name": "today_notes", "description": "Today's notes",
                 "mime_type": "text/plain", "profiles": ["member", "guest"]}

def run(params, context):
    return "오늘의 메모"
"""

PROMPT = """
PROMPT_SPEC = {"name": "weekly_review", "description": "Review a week",
               "arguments": [{"name": "week", "description": "ISO week", "required": True}]}

def run(arguments, context):
    return f"Review {arguments['week']}."
"""


def _rpc(proc: object, message: dict[str, object]) -> dict[str, object]:
    stdin, stdout = proc.stdin, proc.stdout  # type: ignore[attr-defined]
    stdin.write((json.dumps(message) + "\n").encode())
    stdin.flush()
    while True:
        answer = json.loads(stdout.readline())
        if answer.get("id") == message.get("id"):
            return answer  # type: ignore[no-any-return]


def test_plugin_resource_reads_and_prompt_gets_have_audit_lines(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "today_notes.py").write_text(RESOURCE)
    (tools / "weekly_review.py").write_text(PROMPT)
    audit = tmp_path / "audit.jsonl"
    args = ("--tools-dir", str(tools), "--data-dir", str(tmp_path / "data"), "--audit-log", str(audit))
    with stdio_server_process(*args) as proc:
        _rpc(proc, INIT)
        proc.stdin.write((json.dumps(INITIALIZED) + "\n").encode())  # type: ignore[union-attr]
        read = _rpc(proc, {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "notes://today"}})
        assert read["result"]["contents"][0]["text"] == "오늘의 메모"  # type: ignore[index]
        params = {"name": "weekly_review", "arguments": {"week": "2026-W11"}}
        got = _rpc(proc, {"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": params})
        assert "result" in got
        missing = _rpc(proc, {"jsonrpc": "2.0", "id": 4, "method": "prompts/get", "params": {"name": "weekly_review"}})
        assert missing["error"]["code"] == -32602  # type: ignore[index]
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(timeout=20)  # type: ignore[attr-defined]
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    requests = [line for line in lines if line["event"] == "request"]
    assert [(r["tool_name"], r["target"], r["status"]) for r in requests] == [
        ("resources/read", "notes://today", "ok"),
        ("prompts/get", "weekly_review", "ok"),
        ("prompts/get", "weekly_review", "error"),
    ]
    first = requests[0]
    assert first["user_id"] == "local" or first["user_id"]
    assert first["transport"] == "stdio" and first["latency_ms"] >= 0
    assert requests[1]["arguments"] == {"week": "2026-W11"}


@pytest.mark.anyio
async def test_tasks_made_count_and_their_runs_do_not_count_again(tmp_path: Path) -> None:
    from tests.support import TASKS_EXTENSION, modern_request

    tools = tmp_path / "tools"
    tools.mkdir()
    schema = {"type": "object", "properties": {"sleep": {"type": "number"}}}
    body = LIFECYCLE.format(tag="task")
    (tools / "counter.py").write_text(plugin_source("counter", body, input_schema=schema, task_support="optional"))
    env = child_env(TRULOOP_JWT_SECRET=SECRET)
    args = ("--calls-per-minute", "2", "--tools-dir", str(tools), "--data-dir", str(tmp_path / "data"))
    capabilities = {"extensions": {TASKS_EXTENSION: {}}}
    with spawn_http_server(*args, env=env) as base:
        bearer = token("alice")
        async with httpx.AsyncClient(timeout=30) as http:
            made = [
                await modern_request(
                    http, base, bearer, "tools/call", {"name": "counter", "arguments": {}}, capabilities
                )
                for _ in range(3)
            ]
            assert [answer.get("resultType") for answer in made[:2]] == ["task", "task"]
            assert made[2]["isError"] is True and "at most 2 a minute" in made[2]["content"][0]["text"]
            for answer in made[:2]:  # both ran: a run does not count again
                with anyio.fail_after(15):
                    while True:
                        task = await modern_request(
                            http, base, bearer, "tasks/get", {"taskId": answer["taskId"]}, capabilities
                        )
                        if task["status"] != "working":
                            break
                        await anyio.sleep(0.1)
                assert task["status"] == "completed", task
