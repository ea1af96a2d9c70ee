"""The canary's scheduled rule: runs the scheduler makes (`RequestInfo(transport="scheduled")`, through the front
door) of a plugin under canary rollout go to the candidate while the stage collects its runs, are kept apart from
the real-time windows (in both stores), roll the candidate back on one failure, and never promote by themselves:
3 good runs and the stage's gap make it await the operator's `canary promote`, which `canary status` shows with its
evidence. A tool the model authored (in the sandbox) is routed the same way."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.plugin_files import plugin_source, serving, write
from tests.support import TRULOOP, answering, child_env, eventually
from tests.toolsets.test_canary import HEALTHY, OUTPUT, STABLE
from toolsets.core.context import Caller, RequestInfo
from toolsets.core.envelope import ToolErr, ToolOk, ToolResult
from toolsets.pipeline.canary.metrics import windows
from toolsets.pipeline.canary.policy import SCHEDULED_MIN_RUNS, SCHEDULED_RUNS_PER_STAGE
from toolsets.pipeline.canary.state import CanaryState

pytestmark = pytest.mark.anyio
ACCEPT = answering("accept", {"confirm": True})
STORES = ["local", "redis"]
# Its second call answers without "v": a handler_error (the output_schema), an ordinary error.
SECOND_FAILS = """
import itertools
_calls = itertools.count(1)

def run(input_data, context):
    return {} if next(_calls) == 2 else {"v": "candidate"}
"""
FORBIDDEN = """
def run(input_data, context):
    raise PermissionError("cannot open the mailbox")
"""


def install(tools: Path, candidate: str) -> None:
    (tools / "lookup.py").write_text(plugin_source("lookup", STABLE, output_schema=OUTPUT))
    write(tools / "lookup.canary.py", plugin_source("lookup", candidate, output_schema=OUTPUT))


def store_settings(store: str, request: pytest.FixtureRequest) -> dict[str, Any]:
    if store == "local":
        return {}
    return {"redis_url": request.getfixturevalue("redis_url"), "redis_prefix": request.getfixturevalue("redis_prefix")}


async def state(server: Any, tool: str = "lookup") -> CanaryState:
    found = await server.deployment.plugins.canary.store.load(tool)
    assert found is not None
    return found


async def scheduled_run(server: Any, n: int, tool: str = "lookup", arguments: Any = None) -> ToolResult:
    """One run as the scheduler makes it: through the deployment's front door, marked `scheduled`."""
    door = server.deployment.front_door
    request = RequestInfo(request_id=f"run-{n}", transport="scheduled")
    ctx = door.context_for(Caller("scheduler"), "member", request=request)
    return await door.call(ctx, tool, arguments or {})


def answer(result: ToolResult) -> Any:
    assert isinstance(result, ToolOk), result
    return result.data.model_dump()["v"]


def audit_lines(data: Path) -> list[dict[str, Any]]:
    path = data / "audit" / "tool-calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def cli(*args: str, data: Path, shared: dict[str, Any], tools: Path | None = None) -> subprocess.CompletedProcess[str]:
    flags = ["--data-dir", str(data)] + (["--tools-dir", str(tools)] if tools else [])
    env: dict[str, str] = {}
    if shared:
        flags += ["--redis-url", shared["redis_url"]]
        env["TRULOOP_REDIS_PREFIX"] = shared["redis_prefix"]
    return subprocess.run(
        [TRULOOP, "canary", *args, *flags], capture_output=True, text=True, timeout=60, env=child_env(**env)
    )


async def close(server: Any, shared: dict[str, Any]) -> None:
    if shared:
        await server.deployment.plugins.canary.store.aclose()


@pytest.mark.parametrize("store", STORES)
async def test_scheduled_runs_go_to_the_candidate_and_are_kept_apart(
    store: str, tools: Path, data: Path, request: pytest.FixtureRequest
) -> None:
    install(tools, HEALTHY)
    shared = store_settings(store, request)
    async with serving(tools, data, canary_key="request", **shared) as server, Client(server) as client:
        for _ in range(20):
            await client.call_tool("lookup", {})
        answers = [answer(await scheduled_run(server, n)) for n in range(SCHEDULED_RUNS_PER_STAGE + 2)]
        assert answers == ["candidate"] * SCHEDULED_RUNS_PER_STAGE + ["stable"] * 2  # the stage's runs, then stable
        current = await state(server)
        assert current.status == "active" and current.share == 10  # the default gap (10 minutes) has not passed
        assert current.decision is not None and current.decision.rule == "scheduled_gap", current.decision
        canary = server.deployment.plugins.canary
        assert len(await canary.store.samples(current.scheduled_step_key())) == SCHEDULED_RUNS_PER_STAGE
        assert len(await canary.store.samples(current.scheduled_stable_key())) == 2
        realtime = [await canary.store.samples(key) for key in (current.step_key(), current.stable_key())]
        assert sum(len(samples) for samples in realtime) == 20  # the real-time windows read only real-time calls
        if not shared:
            stored = list((data / "canary" / "samples").iterdir())
            assert sum(path.name.endswith("@scheduled.jsonl") for path in stored) == 2  # their own files
        await eventually(lambda: sum(line.get("transport") == "scheduled" for line in audit_lines(data)) == 14)
        await close(server, shared)
    scheduled = [line for line in audit_lines(data) if line.get("transport") == "scheduled"]
    assert {line["route"] for line in scheduled} == {"scheduled"}
    results = [line for line in scheduled if line["event"] == "tool_result"]
    ran = [line["tool_version"] for line in results]
    assert ran == [current.candidate] * SCHEDULED_RUNS_PER_STAGE + [current.stable] * 2  # the version that ran
    others = [line for line in audit_lines(data) if line["event"] == "tool_result" and line not in scheduled]
    assert len(others) == 20 and {line["route"] for line in others} <= {"stable", "canary"}


@pytest.mark.parametrize("store", STORES)
async def test_good_runs_and_the_gap_await_approval_and_the_operator_promotes(
    store: str, tools: Path, data: Path, request: pytest.FixtureRequest
) -> None:
    install(tools, HEALTHY)
    shared = store_settings(store, request)
    async with serving(tools, data, canary_scheduled_gap=1.0, **shared) as server:
        for n in range(SCHEDULED_MIN_RUNS - 1):
            assert answer(await scheduled_run(server, n)) == "candidate"
        current = await state(server)
        assert current.decision is not None and current.decision.rule == "scheduled_samples"
        assert answer(await scheduled_run(server, 2)) == "candidate"
        started = (await state(server)).step_started
        await anyio.sleep(max(0.0, started + 1.05 - time.time()))
        for n in range(3, 10):  # many more good runs: still never promoted by the rule
            await scheduled_run(server, n)
        current = await state(server)
        assert current.status == "active" and current.share == 10, current.decision
        assert current.decision is not None and current.decision.rule == "manual"
        assert current.decision.action == "hold" and "awaiting approval" in current.decision.reason
        assert current.scheduled is not None and current.scheduled.awaiting_approval
        assert current.scheduled.candidate.runs == SCHEDULED_RUNS_PER_STAGE and current.scheduled.stable.runs == 5

        table = cli("status", data=data, shared=shared)
        assert table.returncode == 0, table.stderr
        assert "lookup  active, awaiting approval  candidate share 10%" in table.stdout, table.stdout
        assert "scheduled runs at 10%" in table.stdout and "gap 1s: passed" in table.stdout
        candidate_row = next(line for line in table.stdout.splitlines() if line.startswith(f"  {current.candidate}  "))
        assert candidate_row.split()[4] == "0"  # the real-time table: no call of the candidate
        scheduled_row = [line for line in table.stdout.splitlines() if line.startswith(f"  {current.candidate}  ")][1]
        assert scheduled_row.split()[1:4] == ["canary", str(SCHEDULED_RUNS_PER_STAGE), "0"], scheduled_row
        assert "canary promote lookup" in table.stdout
        shown = json.loads(cli("status", "--json", data=data, shared=shared).stdout)[0]
        assert shown["scheduled"]["awaiting_approval"] is True and shown["scheduled"]["until_gap_s"] == 0
        assert shown["scheduled"]["candidate"]["runs"] == SCHEDULED_RUNS_PER_STAGE
        assert shown["scheduled"]["candidate"]["failures"] == 0 and shown["scheduled"]["candidate"]["last_run"]
        assert shown["scheduled"]["stable"]["runs"] == 5 and shown["scheduled"]["since_stage_s"] >= 1
        assert shown["metrics"]["candidate"]["last_calls"]["calls"] == 0  # apart from the real-time windows

        promoted = cli("promote", "lookup", data=data, shared=shared)
        assert promoted.returncode == 0 and "at 30%" in promoted.stdout, promoted.stderr
        current = await state(server)
        assert current.share == 30 and current.decision is not None
        assert (current.decision.by, current.decision.rule) == ("operator", "manual")
        assert f"{SCHEDULED_RUNS_PER_STAGE} scheduled runs ok at 10%" in current.decision.reason
        assert answer(await scheduled_run(server, 10)) == "candidate"  # the new stage collects its own runs
        current = await state(server)
        assert current.scheduled is not None and current.scheduled.candidate.runs == 1
        assert not current.scheduled.awaiting_approval and current.decision is not None
        assert current.decision.rule == "scheduled_samples"
        await close(server, shared)
    decisions = [line for line in audit_lines(data) if line["event"] == "canary_decision"]
    assert [(d["action"], d["rule"]) for d in decisions if d["action"] != "hold"] == [
        ("start", None),
        ("promote", "manual"),
    ]
    assert [d["rule"] for d in decisions if d["action"] == "hold"][:3] == [
        "scheduled_samples",
        "scheduled_gap",
        "manual",
    ]


@pytest.mark.parametrize("store", STORES)
async def test_one_failed_scheduled_run_rolls_the_candidate_back(
    store: str, tools: Path, data: Path, request: pytest.FixtureRequest
) -> None:
    install(tools, SECOND_FAILS)
    shared = store_settings(store, request)
    async with serving(tools, data, canary_scheduled_gap=0, **shared) as server:
        assert answer(await scheduled_run(server, 0)) == "candidate"
        failed = await scheduled_run(server, 1)
        assert isinstance(failed, ToolErr) and failed.code.value == "handler_error"
        current = await state(server)
        assert current.status == "rolled_back" and current.share == 0 and current.decision is not None
        assert (current.decision.rule, current.decision.rollback) == ("scheduled_errors", "soft")
        assert "1 of 2 scheduled runs at 10% failed" in current.decision.reason
        assert (tools / "lookup.canary.py").exists()  # soft: the file stays
        assert answer(await scheduled_run(server, 2)) == "stable"
        await close(server, shared)


async def test_a_fatal_scheduled_run_rolls_back_hard(tools: Path, data: Path) -> None:
    install(tools, FORBIDDEN)
    async with serving(tools, data) as server:
        assert isinstance(await scheduled_run(server, 0), ToolErr)
        current = await state(server)
        assert current.status == "disabled" and current.decision is not None
        assert (current.decision.rule, current.decision.rollback) == ("fatal", "hard")
        await eventually(lambda: (tools / "lookup.canary.py.disabled").exists())


@pytest.mark.parametrize("store", STORES)
async def test_real_time_windows_and_rules_ignore_scheduled_runs(
    store: str, tools: Path, data: Path, request: pytest.FixtureRequest
) -> None:
    install(tools, HEALTHY)
    shared = store_settings(store, request)
    async with (
        serving(tools, data, canary_key="request", canary_scheduled_gap=0, **shared) as server,
        Client(server) as client,
    ):
        for n in range(SCHEDULED_RUNS_PER_STAGE):
            await scheduled_run(server, n)
        canary = server.deployment.plugins.canary
        for _ in range(40):
            await client.call_tool("lookup", {})
        current = await state(server)
        candidate = windows(await canary.store.samples(current.step_key()))
        stable = windows(await canary.store.samples(current.stable_key()))
        assert candidate.last_calls.calls + stable.last_calls.calls == 40
        assert candidate.last_calls.calls < 30  # ~10% of 40: the scheduled runs are not in it
        evaluated = await canary.evaluate("lookup")  # the real-time rule, as every 10 candidate calls
        assert evaluated is not None and evaluated.decision is not None
        assert evaluated.decision.rule == "samples" and f"{candidate.last_calls.calls} of 100 calls" in (
            evaluated.decision.reason
        )
        shown = json.loads(cli("status", "--json", data=data, shared=shared).stdout)[0]
        assert sum(shown["metrics"][side]["last_calls"]["calls"] for side in ("stable", "candidate")) == 40
        assert shown["scheduled"]["candidate"]["runs"] == SCHEDULED_RUNS_PER_STAGE
        await close(server, shared)


SHOUT = """
def run(input_data, context):
    return {"v": input_data.get("text", "").upper()}
"""
SHOUT_V2 = """
def run(input_data, context):
    return {"v": input_data.get("text", "").upper() + "!"}
"""


async def test_an_authored_new_version_is_routed_by_the_scheduled_rule_in_the_sandbox(tools: Path, data: Path) -> None:
    (tools / "shout.py").write_text(plugin_source("shout", SHOUT))
    async with (
        serving(tools, data, tool_authoring=True) as server,
        Client(server, mode="legacy", elicitation_callback=ACCEPT) as client,
    ):
        written = await client.call_tool(
            "create_or_update_custom_tool_file", {"name": "shout", "source": plugin_source("shout", SHOUT_V2)}
        )
        assert written.structured_content is not None and written.structured_content["state"] == "candidate"
        answers = [answer(await scheduled_run(server, n, "shout", {"text": "hi"})) for n in range(3)]
        assert answers == ["HI!"] * 3  # the candidate, run in the sandbox
        current = await state(server, "shout")
        assert current.scheduled is not None and current.scheduled.candidate.runs == 3
        assert current.decision is not None and current.decision.rule == "scheduled_gap"
