"""The loop a written tool goes through when it fails: feedback, rehearsal, the recorded cause of a rollback.

In process over `Deployment(...).mcp_server()` with `--tool-authoring` (so every version runs in the real bubblewrap
sandbox), on both store backends: a version that fails on an input leaves feedback (the masked input, the error); the
next version, written without cases, is rehearsed on that input and stays pending while it still fails; a version
that handles it (and matches its own TOOL_CASES) enters the canary; a canary that breaks the 5% rule rolls back with
the rule and both windows recorded, readable through `get_tool_feedback`, `tool_registry_status`, `canary status`
and `truloop-mcp tools feedback`; the version after that is rehearsed on the rollback's failing inputs. Only where
the authoring tools are published (member, with authoring on) can the model read feedback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from server.cli.canary_command import status_table
from server.runtime.composition import Deployment
from tests.plugin_files import plugin_source, serving
from tests.support import TRULOOP, answering, child_env, error_of, eventually, settings
from toolsets.extensions.authoring.rehearsal import CasesError, declared_cases

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
ACCEPT = answering("accept", {"confirm": True})
SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "note": {"type": "string"}},
    "required": ["text"],
}

V1 = """
def run(input_data, context):
    if input_data["text"] == "boom":
        raise ValueError("boom is not a word")
    return {"text": input_data["text"].upper()}
"""
V2_STILL_BROKEN = """
def run(input_data, context):
    if input_data["text"].startswith("boo"):
        raise KeyError("still boom")
    return {"text": input_data["text"].upper()}
"""
V3_FIXED_BUT_BAD = """
TOOL_CASES = [{"input": {"text": "a"}, "expect": {"text": "A"}}, {"input": {"text": "boom"}}]

def run(input_data, context):
    if input_data["text"].startswith("bad"):
        raise RuntimeError("bad input")
    return {"text": input_data["text"].upper()}
"""
V_WRONG_CASE = """
TOOL_CASES = [{"input": {"text": "a"}, "expect": {"text": "a"}}]

def run(input_data, context):
    return {"text": input_data["text"].upper()}
"""


def source(body: str) -> str:
    return plugin_source("shout", body, input_schema=SCHEMA)


async def call(c: Client, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    result = await c.call_tool(name, arguments or {})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def status_of(c: Client, file: str) -> dict[str, Any]:
    return next(entry for entry in (await call(c, "tool_registry_status"))["files"] if entry["file"] == file)


def audit_lines(data: Path, event: str) -> list[dict[str, Any]]:
    path = data / "audit" / "tool-calls.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [line for line in lines if line["event"] == event]


@pytest.mark.timeout(240)
async def test_feedback_rehearsal_and_the_cause_of_a_rollback(store_backend: str, tools: Path, data: Path) -> None:
    (tools / "shout.py").write_text(source(V1))
    async with (
        serving(tools, data, tool_authoring=True, canary_key="request") as server,
        Client(server, mode="legacy", elicitation_callback=ACCEPT) as c,
    ):
        deployment = server.deployment
        # v1 fails on "boom": the feedback keeps the input (masked like the audit log) and the error
        assert (await call(c, "shout", {"text": "hi"}))["text"] == "HI"
        assert error_of(await c.call_tool("shout", {"text": "boom"}))["code"] == "handler_error"
        note = {"text": "boom", "note": "write to minji@example.com"}
        assert error_of(await c.call_tool("shout", note))["code"] == "handler_error"
        feedback = await call(c, "get_tool_feedback", {"name": "shout", "limit": 10})
        assert feedback["kept"] == 50
        masked, plain = feedback["entries"]  # newest first
        assert plain["arguments"] == {"text": "boom"} and plain["code"] == "handler_error"
        assert plain["kind"] == "call" and plain["route"] == "stable" and "ValueError" in plain["message"]
        assert masked["arguments"] == {"text": "boom", "note": "write to [email]"}
        v1 = plain["version"]

        # v2, without cases, is rehearsed on "boom" and stays pending while it still fails
        v2 = await call(c, "create_or_update_custom_tool_file", {"name": "shout", "source": source(V2_STILL_BROKEN)})
        assert v2["state"] == "pending" and v2["file"] == "shout.canary.py.pending"
        assert "rehearsal case 1 of 1" in v2["error"] and '{"text": "boom"}' in v2["error"]
        assert "KeyError" in v2["error"] and f"version {v1}" in v2["error"]
        assert not (tools / "shout.canary.py").exists() and (tools / "shout.canary.py.pending").exists()
        pending = await status_of(c, "shout.canary.py.pending")
        assert pending["state"] == "pending" and pending["name"] == "shout" and pending["error"] == v2["error"]

        # its own cases count too: a case whose expectation the result does not meet keeps it pending
        wrong = await call(c, "create_or_update_custom_tool_file", {"name": "shout", "source": source(V_WRONG_CASE)})
        assert wrong["state"] == "pending" and "TOOL_CASES[0]" in wrong["error"]
        assert """expected 'text' = "a", got "A\"""" in wrong["error"]

        # v3 handles "boom" and matches its cases: it enters the canary (the pending file goes to the history)
        v3 = await call(c, "create_or_update_custom_tool_file", {"name": "shout", "source": source(V3_FIXED_BUT_BAD)})
        assert v3["state"] == "candidate" and v3["file"] == "shout.canary.py"
        assert not (tools / "shout.canary.py.pending").exists()
        rollout = await deployment.plugins.canary.store.load("shout")
        assert rollout is not None and rollout.candidate == v3["version"] and rollout.share == 10

        # it fails on "bad..." inputs, which stable answers well: past 5% over 20 calls it is rolled back
        for n in range(800):
            text = f"bad{n}" if n % 3 == 0 else f"ok{n}"
            await c.call_tool("shout", {"text": text})
            rollout = await deployment.plugins.canary.store.load("shout")
            if rollout is not None and rollout.status == "rolled_back":
                break
        assert rollout is not None and rollout.status == "rolled_back"
        assert rollout.decision is not None and rollout.decision.rule == "errors"

        entries = (await call(c, "get_tool_feedback", {"name": "shout"}))["entries"]
        rollback = next(entry for entry in entries if entry["kind"] == "rollback")
        assert (
            rollback["rule"] == "errors" and rollback["version"] == v3["version"] and "above 5%" in rollback["message"]
        )
        assert rollback["windows"]["candidate"]["last_calls"]["calls"] >= 20
        assert rollback["windows"]["candidate"]["last_calls"]["error_rate"] > 0.05
        assert rollback["windows"]["stable"]["last_calls"]["calls"] > 0
        assert rollback["samples"] and all(sample["text"].startswith("bad") for sample in rollback["samples"])
        canary_calls = [e for e in entries if e["kind"] == "call" and e["version"] == v3["version"]]
        assert canary_calls and all(e["route"] == "canary" for e in canary_calls)

        candidate = await status_of(c, "shout.canary.py")
        assert candidate["cause"] is not None and "rule errors" in candidate["cause"]
        assert "candidate last 100 calls" in candidate["cause"] and "stable last 100 calls" in candidate["cause"]
        assert "rule errors" in status_table([rollout])
        await eventually(lambda: any(line["kind"] == "rollback" for line in audit_lines(data, "tool_feedback")))
        line = next(line for line in audit_lines(data, "tool_feedback") if line["kind"] == "rollback")
        assert line["rule"] == "errors" and line["samples"] and line["windows"]["candidate"]["last_calls"]["calls"]

        # the next version is rehearsed on the rollback's failing inputs
        again = await call(
            c, "create_or_update_custom_tool_file", {"name": "shout", "source": source(V3_FIXED_BUT_BAD)}
        )
        assert again["state"] == "pending" and "rule errors" in again["error"] and '"bad' in again["error"]

    # the operator reads the same feedback from the store
    args = [TRULOOP, "tools", "feedback", "shout", "--data-dir", str(data)]
    if store_backend == "postgresql":
        args += ["--database-url", str(settings().database_url.get_secret_value())]  # type: ignore[union-attr]
    with anyio.fail_after(60):
        shown = await anyio.run_process([*args, "--json"], env=child_env())
    report = json.loads(shown.stdout)
    assert report["name"] == "shout" and any(entry["kind"] == "rollback" for entry in report["entries"])
    with anyio.fail_after(60):
        text = (await anyio.run_process(args, env=child_env())).stdout.decode()
    assert "rollback  route canary  rule errors" in text and "failing input:" in text


async def test_a_failed_trial_call_is_feedback_on_the_trial_route(tools: Path, data: Path) -> None:
    flaky = plugin_source("flaky", 'def run(input_data, context):\n    raise RuntimeError("not ready")\n')
    async with (
        serving(tools, data, tool_authoring=True) as server,
        Client(server, mode="legacy", elicitation_callback=ACCEPT) as c,
    ):
        assert (await call(c, "create_or_update_custom_tool_file", {"name": "flaky", "source": flaky}))[
            "state"
        ] == "trial"
        assert error_of(await c.call_tool("flaky", {}))["code"] == "handler_error"
        entries = (await call(c, "get_tool_feedback", {"name": "flaky"}))["entries"]
        assert [(e["kind"], e["route"], e["code"]) for e in entries] == [("call", "trial", "handler_error")]
        # the same file written again is rehearsed on that input, and stays pending
        await eventually(lambda: (tools / "flaky.py.pending").exists())
        again = await call(c, "create_or_update_custom_tool_file", {"name": "flaky", "source": flaky})
        assert again["state"] == "pending" and "rehearsal case 1 of 1" in again["error"]


@pytest.mark.parametrize(
    "overrides",
    [
        {"tool_authoring": True, "profile": "guest"},
        {"tool_authoring": False},
    ],
    ids=["guest", "member-without-authoring"],
)
async def test_who_cannot_read_feedback(overrides: dict[str, Any], tools: Path, data: Path) -> None:
    (tools / "shout.py").write_text(source(V1))
    async with serving(tools, data, **overrides) as server, Client(server, mode="legacy") as c:
        assert "get_tool_feedback" not in {tool.name for tool in (await c.list_tools()).tools}
        refused = await c.call_tool("get_tool_feedback", {"name": "shout", "limit": 5})
        assert error_of(refused)["code"] == "unknown_tool"


async def test_an_operators_rollback_is_feedback_too(store_backend: str, tools: Path, data: Path) -> None:
    (tools / "shout.py").write_text(source(V1))
    (tools / "shout.canary.py").write_text(source(V_WRONG_CASE))  # placed by hand: not rehearsed, served at once
    async with serving(tools, data) as server, Client(server, mode="legacy") as c:
        await c.call_tool("shout", {"text": "hi"})
        args = [TRULOOP, "canary", "rollback", "shout", "--data-dir", str(data)]
        if store_backend == "postgresql":
            args += ["--database-url", str(settings().database_url.get_secret_value())]  # type: ignore[union-attr]
        with anyio.fail_after(60):
            done = await anyio.run_process(args, env=child_env())
        assert b"rolled_back" in done.stdout
        recorder = server.deployment.plugins.feedback
        entries = await recorder.recent("shout")
        assert [(e.kind, e.rule, e.message) for e in entries] == [("rollback", None, "rolled back by the operator")]
    lines = audit_lines(data, "tool_feedback")
    assert [(line["kind"], line["reason"]) for line in lines] == [("rollback", "rolled back by the operator")]


def test_over_http_only_member_tokens_with_the_flag_get_it(tools: Path, data: Path) -> None:
    plain = Deployment(settings(tools_dir=tools, data_dir=data, tool_authoring=True, transport="http"))
    assert "get_tool_feedback" not in set(plain.profiles["member"].names())
    allowed = Deployment(
        settings(tools_dir=tools, data_dir=data, tool_authoring=True, transport="http", tool_authoring_http=True)
    )
    assert "get_tool_feedback" in set(allowed.profiles["member"].names())
    assert "get_tool_feedback" not in set(allowed.profiles["guest"].names())


def test_the_cases_a_file_declares() -> None:
    assert declared_cases("x = 1\n") is None
    cases = declared_cases('TOOL_CASES = [{"input": {"a": 1}, "expect": {"b": 2}}, {"input": {}}]\n')
    assert cases is not None and [(c.input, c.expect, c.origin) for c in cases] == [
        ({"a": 1}, {"b": 2}, "TOOL_CASES[0]"),
        ({}, None, "TOOL_CASES[1]"),
    ]
    for bad in (
        "TOOL_CASES = make()\n",
        "TOOL_CASES = {}\n",
        'TOOL_CASES = [{"input": 1}]\n',
        'TOOL_CASES = [{"input": {}, "expected": {}}]\n',
        'TOOL_CASES = [{"input": {}, "expect": 3}]\n',
        "TOOL_CASES = [" + '{"input": {}}, ' * 21 + "]\n",
    ):
        with pytest.raises(CasesError):
            declared_cases(bad)
