"""Canary rollout of plugin versions (`NAME.canary.py`) through the MCP `Client`: routing by a stable hash, the
rules (a 6%-failing candidate rolled back, a healthy one promoted step by step to the stable file, a slow one
held, a fatal error rolled back hard), and the audit lines that say which version ran and what was decided."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.plugin_files import plugin_source, serving, write
from tests.support import eventually
from toolsets.core.annotations import ToolHints
from toolsets.pipeline.canary.policy import HIGH_RISK_LADDER, LOW_RISK_LADDER, ladder_for
from toolsets.pipeline.canary.routing import bucket, to_candidate
from toolsets.pipeline.canary.state import CanaryState

pytestmark = pytest.mark.anyio

OUTPUT = {"type": "object", "properties": {"v": {"type": "string"}}, "required": ["v"]}
STABLE = """
def run(input_data, context):
    return {"v": "stable"}
"""
HEALTHY = """
def run(input_data, context):
    return {"v": "candidate"}
"""
# 3 calls in 50 answer without "v": a handler_error (the output_schema), an error but not a crash.
FAILING_6_PERCENT = """
import itertools
_calls = itertools.count(1)

def run(input_data, context):
    return {} if next(_calls) % 50 in (7, 24, 41) else {"v": "candidate"}
"""
SLOW = """
import time

def run(input_data, context):
    time.sleep(0.03)
    return {"v": "candidate"}
"""
FORBIDDEN = """
def run(input_data, context):
    raise PermissionError("cannot open the mailbox")
"""


def install(tools: Path, candidate: str, **spec: Any) -> None:
    (tools / "lookup.py").write_text(plugin_source("lookup", STABLE, output_schema=OUTPUT, **spec))
    write(tools / "lookup.canary.py", plugin_source("lookup", candidate, output_schema=OUTPUT, **spec))


async def state(server: Any) -> CanaryState:
    found = await server.deployment.plugins.canary.store.load("lookup")
    assert found is not None
    return found


async def call_until(server: Any, client: Client, done: Any, limit: int) -> int:
    """Call `lookup` until `done(state)` holds; returns how many calls that took."""
    for count in range(1, limit + 1):
        await client.call_tool("lookup", {})
        if done(await state(server)):
            return count
    raise AssertionError(f"not reached in {limit} calls: {(await state(server)).model_dump(exclude={'metrics'})}")


def audit_lines(data: Path) -> list[dict[str, Any]]:
    path = data / "audit" / "tool-calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_routing_share_is_within_two_points_over_10k_keys_and_sticky() -> None:
    keys = [f"user:{n}" for n in range(10_000)]
    for share in (1, 5, 10, 20, 30, 50, 60):
        routed = sum(to_candidate("lookup", key, share) for key in keys)
        assert abs(routed / 100 - share) <= 2, (share, routed)
    assert [bucket("lookup", key) for key in keys[:500]] == [bucket("lookup", key) for key in keys[:500]]
    for key in keys:  # a key on the candidate at one rung stays on it at every higher rung
        if to_candidate("lookup", key, 10):
            assert to_candidate("lookup", key, 30) and to_candidate("lookup", key, 60)
    assert sum(to_candidate("other", key, 10) != to_candidate("lookup", key, 10) for key in keys) > 1000


def test_risky_tools_start_at_one_percent() -> None:
    assert ladder_for(ToolHints(read_only=True)) == LOW_RISK_LADDER == (10, 30, 60, 100)
    assert ladder_for(ToolHints(destructive=True)) == HIGH_RISK_LADDER == (1, 5, 20, 50, 100)
    assert ladder_for(ToolHints(), ToolHints(open_world=True)) == HIGH_RISK_LADDER


async def test_the_candidate_is_not_a_second_tool_and_one_user_sees_one_version(tools: Path, data: Path) -> None:
    install(tools, HEALTHY)
    async with serving(tools, data) as server, Client(server) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        assert listed.count("lookup") == 1
        answers = {(await client.call_tool("lookup", {})).structured_content["v"] for _ in range(30)}
        assert len(answers) == 1  # --canary-key user (the default): alice stays on one version
        current = await state(server)
        assert current.share == 10 and current.status == "active" and current.candidate_file == "lookup.canary.py"


async def test_a_candidate_failing_6_percent_of_calls_is_rolled_back(tools: Path, data: Path) -> None:
    install(tools, FAILING_6_PERCENT)
    async with serving(tools, data, canary_key="request") as server, Client(server) as client:
        await call_until(server, client, lambda s: s.status != "active", limit=3000)
        current = await state(server)
        assert current.status == "rolled_back" and current.share == 0, current.decision
        assert current.decision is not None and current.decision.rollback == "soft"
        assert "above 5%" in current.decision.reason
        answers = {(await client.call_tool("lookup", {})).structured_content["v"] for _ in range(50)}
        assert answers == {"stable"}
        assert (tools / "lookup.canary.py").exists()  # a soft rollback keeps the file
        await eventually(lambda: any(line.get("action") == "rollback" for line in audit_lines(data)))
    decisions = [line for line in audit_lines(data) if line["event"] == "canary_decision"]
    assert [d["action"] for d in decisions if d["action"] != "hold"] == ["start", "rollback"]
    assert all(d["rule"] == "samples" for d in decisions if d["action"] == "hold")  # one line per kind of hold
    assert decisions[-1]["share_from"] == 10 and decisions[-1]["share_to"] == 0 and decisions[-1]["by"] == "auto"


async def test_a_healthy_candidate_is_promoted_step_by_step_to_the_stable_file(tools: Path, data: Path) -> None:
    install(tools, HEALTHY)
    stable_before = (tools / "lookup.py").read_text()
    async with serving(tools, data, canary_key="request") as server, Client(server) as client:
        shares = [(await state(server)).share] if await client.call_tool("lookup", {}) else []
        while (await state(server)).status == "active":
            await call_until(server, client, lambda s, seen=shares[-1]: s.share != seen, limit=3000)
            shares.append((await state(server)).share)
        assert shares == [10, 30, 60, 100]
        assert (await state(server)).status == "promoted"
        await eventually(lambda: not (tools / "lookup.canary.py").exists())
        assert "candidate" in (tools / "lookup.py").read_text()
        kept = list((tools / ".history").glob("lookup.*.py"))
        assert len(kept) == 1 and kept[0].read_text() == stable_before
        await eventually(lambda: server.deployment.plugins.candidate("lookup") is None)
        result = await client.call_tool("lookup", {})
        assert result.structured_content == {"v": "candidate"}
        await eventually(lambda: any(line.get("share_to") == 100 for line in audit_lines(data)))
    lines = audit_lines(data)
    decisions = [line for line in lines if line["event"] == "canary_decision"]
    assert [(d["action"], d["share_to"]) for d in decisions if d["action"] != "hold"] == [
        ("start", 10),
        ("promote", 30),
        ("promote", 60),
        ("promote", 100),
    ]
    routed = [line for line in lines if line["event"] in ("tool_call", "tool_result") and line["route"] == "canary"]
    assert routed and {line["tool_version"] for line in routed} == {decisions[0]["tool_version"]}
    assert {line["event"] for line in routed} == {"tool_call", "tool_result"}  # both lines carry the route


async def test_injected_latency_holds_the_candidate(tools: Path, data: Path) -> None:
    install(tools, SLOW)
    async with serving(tools, data, canary_key="request") as server, Client(server) as client:
        await call_until(server, client, lambda s: s.decision is not None and "p95" in s.decision.reason, limit=3000)
        current = await state(server)
        assert current.status == "active" and current.share == 10  # held, neither promoted nor rolled back
        assert current.decision is not None and current.decision.action == "hold"
        assert "more than 20% above stable" in current.decision.reason
        candidate = current.metrics["candidate"].last_calls
        assert candidate.calls >= 100 and candidate.error_rate == 0 and (candidate.p95_ms or 0) >= 30


async def test_a_fatal_error_rolls_back_hard_at_once(tools: Path, data: Path) -> None:
    install(tools, FORBIDDEN)
    async with serving(tools, data, canary_key="request") as server, Client(server) as client:
        count = await call_until(server, client, lambda s: s.status != "active", limit=500)
        current = await state(server)
        assert current.status == "disabled" and current.decision is not None
        assert "PermissionError" in current.decision.reason and current.decision.rollback == "hard"
        assert count < 100  # the first failing candidate call decided it
        await eventually(lambda: (tools / "lookup.canary.py.disabled").exists())
        assert not (tools / "lookup.canary.py").exists()
        await eventually(lambda: server.deployment.plugins.candidate("lookup") is None)
