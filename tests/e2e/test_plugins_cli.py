"""Plugins as an operator and a host meet them: `truloop-mcp tools list|check`, `--tools-dir` on a real stdio
subprocess and a real HTTP server, with files added, edited and deleted while they serve."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp import Client, StdioServerParameters

from tests.plugin_files import plugin_source, write
from tests.support import SECRET, TRULOOP, child_env, error_of, eventually, mcp_client, spawn_http_server, token

GOOD = plugin_source("echo_text", "def run(input_data, context):\n    return {'echo': input_data.get('text')}\n")


def tools_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TRULOOP, "tools", *args], capture_output=True, text=True, env=child_env(), timeout=60)


def test_tools_list_shows_versions_and_load_errors(tools: Path, tmp_path: Path) -> None:
    (tools / "echo_text.py").write_text(GOOD)
    (tools / "broken.py").write_text("TOOL_SPEC = {\n")
    (tools / "_helper.py").write_text("raise SystemExit('never imported')\n")
    data = ["--data-dir", str(tmp_path / "data")]
    listed = tools_cli("list", "--tools-dir", str(tools), *data, "--json")
    assert listed.returncode == 0, listed.stderr
    report = json.loads(listed.stdout)
    assert [(p["name"], p["file"], len(p["version"])) for p in report["plugins"]] == [("echo_text", "echo_text.py", 12)]
    assert [(e["file"], "syntax error" in e["error"]) for e in report["errors"]] == [("broken.py", True)]
    table = tools_cli("list", "--tools-dir", str(tools), *data)
    assert table.returncode == 0 and report["plugins"][0]["version"] in table.stdout and "broken.py" in table.stdout
    assert not (tmp_path / "data").exists()  # listing never starts a plugin


def test_tools_list_without_a_folder_says_how_to_give_one() -> None:
    result = tools_cli("list")
    assert result.returncode == 2 and "--tools-dir" in result.stderr


def test_tools_check_validates_a_file_without_serving_it(tools: Path) -> None:
    good = tools / "echo_text.py"
    good.write_text(GOOD)
    checked = tools_cli("check", str(good))
    assert checked.returncode == 0 and "echo_text" in checked.stdout
    cases = {
        "syntax.py": ("TOOL_SPEC = {\n", "syntax error"),
        "schema.py": (
            plugin_source("bad", "def run(i, c):\n    return {}\n", input_schema={"type": 3}),
            "input_schema",
        ),
        "builtin.py": (plugin_source("get_events", "def run(i, c):\n    return {}\n"), "built-in"),
        "norun.py": (plugin_source("norun", "x = 1\n"), "neither run"),
    }
    for name, (text, reason) in cases.items():
        path = tools.parent / name
        path.write_text(text)
        result = tools_cli("check", str(path))
        assert result.returncode == 1 and reason in result.stderr, (name, result.stderr)
        assert result.stderr.count("\n") == 1  # one line, no traceback
    twin = tools.parent / "twin.py"
    twin.write_text(GOOD)
    clash = tools_cli("check", str(twin), "--tools-dir", str(tools))
    assert clash.returncode == 1 and "already served by echo_text.py" in clash.stderr
    assert tools_cli("check", str(tools / "missing.py")).returncode == 1


def test_a_tools_dir_that_is_not_a_folder_stops_the_server_with_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [TRULOOP, "--tools-dir", str(tmp_path / "nope")], capture_output=True, text=True, env=child_env(), timeout=30
    )
    assert result.returncode == 2 and "--tools-dir" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.anyio
async def test_stdio_server_reloads_plugins_and_tells_the_host(tools: Path, tmp_path: Path) -> None:
    notices: list[Any] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            notices.append(message)

    params = StdioServerParameters(
        command=TRULOOP,
        args=["--tools-dir", str(tools), "--data-dir", str(tmp_path / "data")],
        env=child_env(),
    )
    async with Client(params, mode="legacy", message_handler=on_message) as client:
        assert "echo_text" not in {tool.name for tool in (await client.list_tools()).tools}
        saved = time.monotonic()
        write(tools / "echo_text.py", GOOD)
        await eventually(lambda: len(notices) >= 1, 5)
        assert time.monotonic() - saved < 1.0
        result = await client.call_tool("echo_text", {"text": "hi"})
        assert result.structured_content == {"echo": "hi"}
        (tools / "echo_text.py").unlink()
        await eventually(lambda: len(notices) >= 2, 5)
        assert error_of(await client.call_tool("echo_text", {"text": "hi"}))["code"] == "unknown_tool"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_http_server_serves_and_reloads_plugins(mode: str, tools: Path) -> None:
    (tools / "echo_text.py").write_text(GOOD)
    with spawn_http_server("--tools-dir", str(tools), env=child_env(TRULOOP_JWT_SECRET=SECRET)) as base:
        async with mcp_client(base, token(), mode) as client:
            assert (await client.call_tool("echo_text", {"text": "x"})).structured_content == {"echo": "x"}
            write(tools / "echo_text.py", GOOD.replace("'echo'", "'echo2'"))

            async def reloaded() -> bool:
                return (await client.call_tool("echo_text", {"text": "x"})).structured_content == {"echo2": "x"}

            await eventually(reloaded, 5)
        async with mcp_client(base, token("g", role="guest"), mode) as guest:
            assert "echo_text" not in {tool.name for tool in (await guest.list_tools()).tools}


def test_tools_list_during_a_broken_edit_says_the_server_keeps_the_last_good_version(tools: Path) -> None:
    (tools / "echo_text.py").write_text(GOOD + "\ndef half_written(:\n")  # saved mid-edit: a syntax error
    listed = tools_cli("list", "--tools-dir", str(tools))
    assert listed.returncode == 0, listed.stderr
    assert "(none)" not in listed.stdout and "keeps serving the last version that loaded" in listed.stdout
    assert "echo_text.py" in listed.stdout  # its load error is listed below
