"""`truloop-mcp canary status|promote|hold|rollback NAME` on the state a server wrote (`<data-dir>/canary/`),
as an operator runs it beside the server: the table, each action, its audit event, and the tools folder."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from mcp import Client

from tests.plugin_files import plugin_source, serving, write
from tests.support import TRULOOP, child_env

pytestmark = pytest.mark.anyio

BODY = 'def run(input_data, context):\n    return {"v": context.version}\n'


def canary(*args: str, data: Path, tools: Path | None = None) -> subprocess.CompletedProcess[str]:
    flags = ["--data-dir", str(data)] + (["--tools-dir", str(tools)] if tools else [])
    return subprocess.run(
        [TRULOOP, "canary", *args, *flags], capture_output=True, text=True, timeout=60, env=child_env()
    )


async def test_operator_commands_change_the_rollout_and_are_audited(tmp_path: Path) -> None:
    tools, data = tmp_path / "tools", tmp_path / "data"
    tools.mkdir()
    (tools / "lookup.py").write_text(plugin_source("lookup", BODY))
    write(tools / "lookup.canary.py", plugin_source("lookup", "# v2\n" + BODY))
    async with serving(tools, data) as server, Client(server) as client:
        await client.call_tool("lookup", {})

        shown = canary("status", data=data)
        assert shown.returncode == 0, shown.stderr
        assert "lookup  active  candidate share 10% (ladder 10-30-60-100)" in shown.stdout
        assert "lookup.canary.py" in shown.stdout and "last decision: start" in shown.stdout

        held = canary("hold", "lookup", data=data)
        assert held.returncode == 0 and "lookup: held" in held.stdout
        promoted = canary("promote", "lookup", data=data)
        assert promoted.returncode == 0 and "at 30%" in promoted.stdout
        listed = json.loads(canary("status", "lookup", "--json", data=data).stdout)
        assert listed[0]["share"] == 30 and listed[0]["status"] == "active"
        # the server routes by what the operator wrote

        state = await server.deployment.plugins.canary.store.load("lookup")
        assert state is not None and state.share == 30

        rolled = canary("rollback", "lookup", "--hard", data=data, tools=tools)
        assert rolled.returncode == 0, rolled.stderr
        assert (tools / "lookup.canary.py.disabled").exists() and not (tools / "lookup.canary.py").exists()
        again = canary("rollback", "lookup", data=data)
        assert again.returncode == 1 and "already rolled back" in again.stderr

    missing = canary("promote", "nothing", data=data)
    assert missing.returncode == 1 and "no canary rollout of 'nothing'" in missing.stderr
    lines = [json.loads(line) for line in (data / "audit" / "tool-calls.jsonl").read_text().splitlines()]
    # two processes append to the log, each in batches: their order in the file is not their order in time
    in_time = sorted((d for d in lines if d["event"] == "canary_decision"), key=lambda d: d["ts"])
    decisions = [(d["action"], d["by"]) for d in in_time]
    assert decisions == [("start", "auto"), ("hold", "operator"), ("promote", "operator"), ("rollback", "operator")]
