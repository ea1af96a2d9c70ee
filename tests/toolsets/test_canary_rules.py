"""The canary by its rules: only a fatal error (a permission error, data damage, the candidate's worker process
dying) rolls back at once; an ordinary exception counts toward the 5% error rate, whatever its type; and what an
operator sees and does: `canary status` (per-version calls, errors, timeouts and p95 over both windows, live, from a
process that is not serving, from another replica over Redis, and before the first call), `tools list` marking
the candidate, the commands that act on the folder refusing without `--tools-dir`, and the text form of
`canary_decision` audit lines."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.plugin_files import plugin_source, serving, write
from tests.support import TRULOOP, child_env, eventually
from toolsets.pipeline.canary.state import CanaryState

pytestmark = pytest.mark.anyio
ISOLATIONS = ["inprocess", "process"]
OUTPUT = {"type": "object", "properties": {"v": {"type": "string"}}, "required": ["v"]}
STABLE = """
def run(input_data, context):
    return {"v": "stable"}
"""
# Its second call raises an exception the stable version never raised: an ordinary error (1 call in many).
RARE_KEY_ERROR = """
import itertools
_calls = itertools.count(1)

def run(input_data, context):
    if next(_calls) == 2:
        raise KeyError("a bug, not a disaster")
    return {"v": "candidate"}
"""
# 4 calls in 50 raise ValueError (8%): the error rate rolls it back (soft), not a fatal rule.
VALUE_ERROR_8_PERCENT = """
import itertools
_calls = itertools.count(1)

def run(input_data, context):
    if next(_calls) % 50 in (5, 17, 29, 41):
        raise ValueError("bad")
    return {"v": "candidate"}
"""
DATA_DAMAGE = """
class DataDamageError(Exception):
    pass

def run(input_data, context):
    raise DataDamageError("wrote half a record")
"""
MARKED = """
class LedgerBroken(Exception):
    canary_fatal = "data_damage"

def run(input_data, context):
    raise LedgerBroken("ledger checksum mismatch")
"""
PERMISSION = """
def run(input_data, context):
    raise PermissionError("cannot open the mailbox")
"""
DIES = """
import os

def run(input_data, context):
    os._exit(3)
"""
HEALTHY = """
def run(input_data, context):
    return {"v": "candidate"}
"""


def install(tools: Path, candidate: str) -> None:
    (tools / "lookup.py").write_text(plugin_source("lookup", STABLE, output_schema=OUTPUT))
    write(tools / "lookup.canary.py", plugin_source("lookup", candidate, output_schema=OUTPUT))


async def state(server: Any) -> CanaryState:
    found = await server.deployment.plugins.canary.store.load("lookup")
    assert found is not None
    return found


async def candidate_calls(server: Any, client: Client, count: int, limit: int = 5000) -> None:
    """Call `lookup` until `count` calls ran on the candidate (or its rollout ended)."""
    seen = 0
    for _ in range(limit):
        result = await client.call_tool("lookup", {})
        if result.is_error or (result.structured_content or {}).get("v") == "candidate":
            seen += 1
        if seen >= count or (await state(server)).status not in ("active", "held"):
            return
    raise AssertionError(f"only {seen} candidate calls in {limit}")


def cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TRULOOP, *args], capture_output=True, text=True, timeout=60, env=child_env(**env))


async def test_an_ordinary_exception_counts_toward_the_error_rate_and_does_not_roll_back(
    tools: Path, data: Path
) -> None:
    install(tools, RARE_KEY_ERROR)
    async with serving(tools, data, canary_key="request") as server, Client(server) as client:
        await candidate_calls(server, client, 40)
        current = await state(server)
        assert current.status == "active" and current.share == 10, current.decision
        assert current.decision is None or current.decision.action != "rollback"
        assert (tools / "lookup.canary.py").exists()
        errors = current.metrics["candidate"].last_calls.errors
        assert errors == 1  # it was counted, as an error


async def test_ordinary_exceptions_above_5_percent_roll_back_by_the_error_rate(tools: Path, data: Path) -> None:
    install(tools, VALUE_ERROR_8_PERCENT)
    async with serving(tools, data, canary_key="request") as server, Client(server) as client:
        await candidate_calls(server, client, 200)
        current = await state(server)
        assert current.status == "rolled_back" and current.decision is not None
        assert current.decision.rule == "errors" and "above 5%" in current.decision.reason
        assert current.decision.rollback == "soft" and (tools / "lookup.canary.py").exists()


FATAL_CASES = [
    pytest.param(isolation, body, said, id=f"{kind}-{isolation}")
    for kind, body, said in (
        ("permission", PERMISSION, "permission"),
        ("data-damage", DATA_DAMAGE, "data damage"),
        ("marked", MARKED, "data damage"),
    )
    for isolation in ISOLATIONS
] + [pytest.param("process", DIES, "process died", id="worker-dies-process")]  # in process, os._exit ends the server


@pytest.mark.parametrize(("isolation", "body", "said"), FATAL_CASES)
async def test_a_fatal_error_rolls_back_hard_at_once(
    isolation: str, body: str, said: str, tools: Path, data: Path
) -> None:
    install(tools, body)
    async with (
        serving(tools, data, canary_key="request", plugin_isolation=isolation) as server,
        Client(server) as client,
    ):
        await candidate_calls(server, client, 1, limit=500)
        current = await state(server)
        assert current.status == "disabled" and current.decision is not None, current.decision
        assert current.decision.rule == "fatal" and current.decision.rollback == "hard"
        assert said in current.decision.reason
        await eventually(lambda: (tools / "lookup.canary.py.disabled").exists())
        assert (await client.call_tool("lookup", {})).structured_content == {"v": "stable"}


async def test_status_is_live_from_a_process_that_is_not_serving(tools: Path, data: Path) -> None:
    install(tools, HEALTHY)
    async with serving(tools, data, canary_key="request") as server, Client(server) as client:
        before = cli("canary", "status", "--data-dir", str(data))  # loaded, not called yet: the rollout is there
        assert before.returncode == 0 and "lookup  active  candidate share 10%" in before.stdout, before.stdout
        for _ in range(43):
            await client.call_tool("lookup", {})
        current = await state(server)
        shown = json.loads(cli("canary", "status", "--json", "--data-dir", str(data)).stdout)[0]
        stable_calls = shown["metrics"]["stable"]["last_calls"]["calls"]
        candidate_calls_seen = shown["metrics"]["candidate"]["last_calls"]["calls"]
        assert stable_calls + candidate_calls_seen == 43 and candidate_calls_seen > 0, shown["metrics"]
        assert shown["metrics"]["candidate"]["last_minutes"]["calls"] == candidate_calls_seen
        assert shown["metrics"]["stable"]["last_calls"]["p95_ms"] is not None
        table = cli("canary", "status", "--data-dir", str(data)).stdout
        assert "calls 30m" in table and "p95 ms 30m" in table and "errors" in table and "timeouts" in table
        stable_row = next(line for line in table.splitlines() if current.stable in line)
        assert f"  {stable_calls}  " in stable_row


async def test_status_over_redis_from_another_replica(
    tools: Path, data: Path, redis_url: str, redis_prefix: str
) -> None:
    install(tools, HEALTHY)
    shared = {"redis_url": redis_url, "redis_prefix": redis_prefix}
    async with serving(tools, data, canary_key="request", **shared) as server, Client(server) as client:
        for _ in range(30):
            await client.call_tool("lookup", {})
        other = cli(
            "canary", "status", "--json", "--redis-url", redis_url, "--data-dir", str(data.parent / "elsewhere"),
            TRULOOP_REDIS_PREFIX=redis_prefix,
        )  # fmt: skip
        assert other.returncode == 0, other.stderr
        shown = json.loads(other.stdout)[0]
        total = sum(shown["metrics"][side]["last_calls"]["calls"] for side in ("stable", "candidate"))
        assert total == 30
        await server.deployment.plugins.canary.store.aclose()


def test_status_and_tools_list_show_a_candidate_no_server_has_loaded(tools: Path, data: Path) -> None:
    install(tools, HEALTHY)
    plain = cli("canary", "status", "--data-dir", str(data))
    assert "no canary rollout" in plain.stdout  # without the folder, the store is all it can read
    shown = cli("canary", "status", "--data-dir", str(data), "--tools-dir", str(tools))
    assert shown.returncode == 0, shown.stderr
    assert "lookup  not started" in shown.stdout and "lookup.canary.py" in shown.stdout
    assert (
        json.loads(cli("canary", "status", "--json", "--data-dir", str(data), "--tools-dir", str(tools)).stdout)[0][
            "started"
        ]
        is False
    )
    listed = cli("tools", "list", "--tools-dir", str(tools), "--data-dir", str(data))
    candidate_row = next(line for line in listed.stdout.splitlines() if "lookup.canary.py" in line)
    assert "candidate (canary)" in candidate_row
    stable_row = next(line for line in listed.stdout.splitlines() if "lookup.py" in line)
    assert "stable" in stable_row
    rows = json.loads(cli("tools", "list", "--json", "--tools-dir", str(tools), "--data-dir", str(data)).stdout)
    assert [row.get("candidate", False) for row in rows["plugins"]] == [True, False]


async def test_folder_changing_commands_refuse_without_tools_dir(tools: Path, data: Path) -> None:
    install(tools, HEALTHY)
    async with serving(tools, data, canary_key="request") as server:
        before = await state(server)
        hard = cli("canary", "rollback", "lookup", "--hard", "--data-dir", str(data))
        assert hard.returncode == 2 and len(hard.stderr.strip().splitlines()) == 1, hard.stderr
        assert "--tools-dir" in hard.stderr and (tools / "lookup.canary.py").exists()
        for _ in range(2):  # 10 -> 30 -> 60
            assert cli("canary", "promote", "lookup", "--data-dir", str(data)).returncode == 0
        full = cli("canary", "promote", "lookup", "--data-dir", str(data))
        assert full.returncode == 2 and "--tools-dir" in full.stderr, full.stderr
        after = await state(server)
        assert after.share == 60 and after.status == "active" and after.revision == before.revision + 2
        done = cli("canary", "rollback", "lookup", "--hard", "--data-dir", str(data), "--tools-dir", str(tools))
        assert done.returncode == 0 and (tools / "lookup.canary.py.disabled").exists()


async def test_audit_text_of_canary_decisions(tools: Path, data: Path) -> None:
    install(tools, PERMISSION)
    async with serving(tools, data, canary_key="request") as server, Client(server) as client:
        await candidate_calls(server, client, 1, limit=500)
        await eventually(lambda: (data / "audit" / "tool-calls.jsonl").exists())
    shown = cli("audit", "grep", "canary_decision", "--format", "text", "--data-dir", str(data))
    lines = shown.stdout.splitlines()
    assert len(lines) == 2, shown.stdout  # start, then the fatal rollback
    for line in lines:
        assert " ? " not in f" {line} " and "  -  " not in line, line
        assert "canary_decision  lookup@" in line
    assert "start 0%->10%" in lines[0] and "by auto" in lines[0]
    assert "rollback (hard) 10%->0%" in lines[1] and "disabled" in lines[1] and "rule fatal" in lines[1]
    assert "permission error" in lines[1]
