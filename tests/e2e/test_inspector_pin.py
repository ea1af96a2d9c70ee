"""The MCP Inspector commands of docs/hosts.md name one Inspector version, the one `truloop-mcp dev` runs, and the
`mcp.json` one works as written, from the repository root, on the Node.js here (the docs say 20 or newer)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from server.cli.dev_command import INSPECTOR, NODE_NEEDED
from tests.support import child_env

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ROOT / "docs" / "hosts.md"
NPM_CACHES = ROOT / "tests" / "ts" / ".npm-cache" / "inspector-pin"  # (git-ignored, like the TypeScript hosts' cache)
UNPINNED = re.compile(r"npx (?:-y )?@modelcontextprotocol/inspector(?!@\d)\s+-")  # a command, not the prose about it


def documented_mcp_json_command() -> str:
    """The command of the `mcp.json` section's code block."""
    section = HOSTS.read_text(encoding="utf-8").split("\n## From the repository root: mcp.json\n", 1)[1]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    (line,) = [line for line in block.splitlines() if "--config mcp.json" in line]
    return line


def test_every_inspector_command_in_the_docs_is_pinned() -> None:
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
            assert not UNPINNED.search(line), f"{page.name}:{number} runs an unpinned Inspector: {line}"
    command = documented_mcp_json_command()
    assert f"npx -y {INSPECTOR} --cli --config mcp.json --server truloop" in command
    assert NODE_NEEDED in HOSTS.read_text(encoding="utf-8")


def test_the_documented_mcp_json_command_lists_the_tools(tmp_path: Path) -> None:
    npx = shutil.which("npx")
    if npx is None or not (ROOT / ".venv" / "bin" / "truloop-mcp").exists():
        message = "npx or the repository's .venv is missing (the command runs .venv/bin/truloop-mcp)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    home = tmp_path / "home"  # the server's store lands here, never in the user's home
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, timeout=30, check=True).stdout.strip()
    # npm's cache is kept between runs, one per Node.js version: npx downloads the pinned Inspector once per version
    # of either, and that first run is the one that would print EBADENGINE
    cache = NPM_CACHES / node
    env = {k: v for k, v in child_env().items() if not k.lower().startswith("npm_config_")}
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        npm_config_cache=str(cache),
        npm_config_update_notifier="false",
        NO_COLOR="1",
    )
    done = subprocess.run(
        shlex.split(documented_mcp_json_command()), cwd=ROOT, capture_output=True, text=True, timeout=240, env=env
    )
    try:
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
        assert "Both --config and --server" not in done.stderr
        assert "EBADENGINE" not in done.stderr  # the pinned Inspector declares support for this Node.js
        names = {tool["name"] for tool in json.loads(done.stdout)["tools"]}
        assert {"get_day_of_week", "search_users", "get_events"} <= names
    except Exception:
        shutil.rmtree(cache, ignore_errors=True)  # a failure is never cached away: the next run downloads afresh
        raise
