"""A plugin file's tool on a schedule: each run loads the file (its reference names the file), runs in the plugin
sandbox (no view of the server's data), is judged by the canary's rule for scheduled runs (a candidate file gets the
stage's runs, on route `scheduled`, and then waits for the operator), and a schedule whose file went away is
paused with the reason, never run as something else."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio.to_thread
import pytest

from tests.e2e.test_schedules import data_of, inbox, server
from tests.plugin_files import plugin_source, write
from tests.support import TRULOOP, child_env, eventually

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

BODY = """
import os

def run(input_data, context):
    return {{"tag": {tag!r}, "sees_data": os.path.exists({data!r})}}
"""


async def test_a_sandboxed_plugin_runs_scheduled_under_the_scheduled_canary_rule(tmp_path: Path) -> None:
    tools, data, audit = tmp_path / "tools", tmp_path / "data", tmp_path / "audit.jsonl"
    tools.mkdir()
    write(tools / "tagged.py", plugin_source("tagged", BODY.format(tag="stable", data=str(data))))
    flags = ("--tools-dir", str(tools), "--plugin-isolation", "sandbox", "--audit-log", str(audit),
             "--canary-scheduled-gap", "0")  # fmt: skip
    async with server(data, *flags) as client:
        made = data_of(await client.call_tool("schedule_tool_run", {"tool": "tagged", "when": "PT1S"}))
        await eventually(lambda: _ran(client, 1), seconds=20)
        write(tools / "tagged.canary.py", plugin_source("tagged", BODY.format(tag="candidate", data=str(data))))
        await eventually(lambda: _ran(client, 8), seconds=30)
        texts = await inbox(client)
        assert all("Sees data: no" in text for text in texts)  # the sandbox hides the server's data
        tags = [("candidate" if "Tag: candidate" in t else "stable") for t in reversed(texts)]  # oldest first
        assert tags.count("candidate") == 5 and tags[0] == "stable", tags  # the stage's 5 runs, then stable
        schedule = json.loads((await client.read_resource(made["resource"])).contents[0].text)["schedule"]  # type: ignore[union-attr]
        state = await anyio.to_thread.run_sync(_canary_status, tools, data)
        assert "awaiting" in json.dumps(state) or state.get("decision", {}).get("rule") == "manual", state
        for name in ("tagged.py", "tagged.canary.py"):
            (tools / name).unlink()
        await eventually(lambda: _paused(client, made["id"]), seconds=20)
    assert schedule["status"] == "active"
    lines = [json.loads(line) for line in audit.read_text().splitlines() if line.strip()]
    results = [line for line in lines if line.get("tool_name") == "tagged" and line.get("event") == "tool_result"]
    assert {line["transport"] for line in results} == {"scheduled"} and {line["user_id"] for line in results} == {
        "alice"
    }
    candidate = [line for line in results if line["route"] == "scheduled"]
    assert len(candidate) >= 5, [line["route"] for line in results]  # the candidate's runs, on the scheduled route


def _canary_status(tools: Path, data: Path) -> dict[str, Any]:
    status = subprocess.run(
        [TRULOOP, "canary", "status", "tagged", "--json", "--tools-dir", str(tools), "--data-dir", str(data)],
        capture_output=True, text=True, timeout=30, env=child_env(),
    )  # fmt: skip
    assert status.returncode == 0, status.stderr
    found = json.loads(status.stdout)
    state: dict[str, Any] = found[0] if isinstance(found, list) else found
    return state


async def _ran(client: object, at_least: int) -> bool:
    return len(await inbox(client)) >= at_least  # type: ignore[arg-type]


async def _paused(client: object, schedule_id: str) -> bool:
    listed = data_of(await client.call_tool("list_schedules", {}))  # type: ignore[attr-defined]
    (schedule,) = [s for s in listed["schedules"] if s["id"] == schedule_id]
    return bool(schedule["status"] == "paused" and "no longer available" in (schedule["reason"] or ""))
