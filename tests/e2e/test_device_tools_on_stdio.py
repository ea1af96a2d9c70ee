"""A stdio server lists only the tools that can work on it: no device can connect to stdio, so a deferred tool
only the device answers (`get_calendar_events`) is listed only when a device reaches the server through Redis
shared with an HTTP replica. Tools a client's form can answer instead stay listed; a gates file may still name
the hidden tool; `tools list --all` says where each tool is available."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.support import FAST_AND_PLAIN, MODES, TRULOOP, child_env, paths_env

pytestmark = pytest.mark.anyio
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")


async def _listed(data_dir: Path, *args: str, fast_paths: bool = True, mode: str = "auto", **env: str) -> set[str]:
    params = StdioServerParameters(
        command=TRULOOP, args=["--data-dir", str(data_dir), *args], env=paths_env(fast_paths, **env)
    )
    async with Client(params, mode=mode) as client:
        return {tool.name for tool in (await client.list_tools()).tools}


@MODES
@FAST_AND_PLAIN
async def test_plain_stdio_does_not_list_the_device_only_tool(tmp_path: Path, mode: str, fast_paths: bool) -> None:
    names = await _listed(tmp_path / "data", fast_paths=fast_paths, mode=mode)
    assert "get_calendar_events" not in names
    assert {"confirm_interaction", "get_permission_status", "get_events"} <= names  # a client's form answers these


async def test_stdio_with_a_shared_redis_lists_it(tmp_path: Path) -> None:
    prefix = f"t{os.getpid()}devtools"
    names = await _listed(tmp_path / "data", "--redis-url", REDIS_URL, TRULOOP_REDIS_PREFIX=prefix)
    assert "get_calendar_events" in names


async def test_a_gates_file_may_name_the_hidden_tool(tmp_path: Path) -> None:
    gates = tmp_path / "gates.toml"
    gates.write_text('[[gate]]\nkind = "requires"\ntool = "get_calendar_events"\nafter = ["get_events"]\n')
    names = await _listed(tmp_path / "data", "--gates", str(gates))
    assert "get_events" in names and "get_calendar_events" not in names


def test_tools_list_all_says_where_each_tool_is_available(tmp_path: Path) -> None:
    done = subprocess.run(
        [TRULOOP, "tools", "list", "--all", "--json", "--data-dir", str(tmp_path / "data")],
        capture_output=True, text=True, timeout=60, env=child_env(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    member = {row["name"]: row for row in json.loads(done.stdout)["profiles"]["member"]}
    assert "HTTP" in member["get_calendar_events"]["available"]
    assert "--redis-url" in member["get_calendar_events"]["available"]
    assert "elicitation" in member["confirm_interaction"]["available"]
    assert member["get_day_of_week"]["available"] == "everywhere"
    table = subprocess.run(
        [TRULOOP, "tools", "list", "--all", "--data-dir", str(tmp_path / "data")],
        capture_output=True, text=True, timeout=60, env=child_env(),
    ).stdout  # fmt: skip
    line = next(line for line in table.splitlines() if "get_calendar_events" in line)
    assert "device only" in line
