"""A newcomer's install, end to end: from a scratch HOME, `truloop-mcp install HOST` writes a config file whose
`truloop` entry the MCP Inspector CLI (`--config FILE --server truloop`) and the TypeScript SDK client start
and list tools from; re-running leaves one entry, another server in the file survives, and `uninstall` takes
out only ours. The shipped mcp.json's stdio entry starts from the repository root as it stands.

The Inspector CLI reads only an `mcpServers` object, so for VS Code (whose key is `servers`) it is given the
same entry under `mcpServers`; the TypeScript client reads the VS Code file itself. The Node project is the one
in tests/ts (tests/e2e/test_typescript_hosts.py installs it).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from server.cli.hosts import HOSTS
from tests.e2e.test_install_command import KEYS, OTHER, config_file, scope_args, scratch_env, truloop
from tests.e2e.test_typescript_hosts import TS_DIR, _need, _node_env, node_home
from tests.support import TRULOOP

pytestmark = pytest.mark.slow
__all__ = ["node_home"]  # a fixture used here, defined with the TypeScript host tests

ROOT = Path(__file__).resolve().parents[2]
CONFIG_CLIENT = TS_DIR / "config_client.mjs"
RUN_TIMEOUT = 90.0
# every host whose file is JSON (Codex's TOML entry is started from its file in tests/e2e/test_install_toml.py)
SCOPES = [(host, scope) for host in HOSTS for scope in HOSTS[host].scopes if HOSTS[host].form != "toml"]


def _node(home: Path, *args: str, cwd: Path = TS_DIR) -> subprocess.CompletedProcess[str]:
    env = _node_env(home)
    env.update(scratch_env(home))  # the same scratch HOME the install wrote into
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT)


def _inspector_tools(home: Path, file: Path, cwd: Path = TS_DIR, server: str | None = "truloop") -> set[str]:
    inspector = str(TS_DIR / "node_modules" / ".bin" / "mcp-inspector")  # installed by the node_home fixture
    chosen = ("--server", server) if server else ()  # without one, the Inspector takes the file's only server
    done = _node(home, inspector, "--cli", "--config", str(file), *chosen, "--method", "tools/list", cwd=cwd)
    assert done.returncode == 0, f"inspector failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return {tool["name"] for tool in json.loads(done.stdout)["tools"]}


def _sdk_tools(home: Path, file: Path, key: str) -> dict[str, Any]:
    done = _node(home, _need("node"), str(CONFIG_CLIENT), str(file), key, "truloop")
    assert done.returncode == 0, f"client failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize(("host", "scope"), SCOPES)
def test_an_installed_entry_starts_in_the_inspector_and_the_typescript_sdk(
    host: str, scope: str, node_home: Path, tmp_path: Path
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    workspace.mkdir()
    key = KEYS[host]
    file = config_file(home, workspace, host, scope)
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps({key: {"memory": OTHER}}))

    for _ in range(2):  # re-running leaves one entry
        done = truloop(home, "install", host, *scope_args(scope, workspace), "--profile", "notification-safe")
        assert done.returncode == 0, done.stderr
    written = json.loads(file.read_text())
    assert sorted(written[key]) == ["memory", "truloop"] and written[key]["memory"] == OTHER
    assert written[key]["truloop"]["command"] == TRULOOP

    inspector_file = file
    if key != "mcpServers":  # the Inspector reads mcpServers only: the same entry, under that key
        inspector_file = tmp_path / "inspector.json"
        inspector_file.write_text(json.dumps({"mcpServers": written[key]}))
    listed = _inspector_tools(home, inspector_file)
    assert {"get_day_of_week", "save_memory"} <= listed and "create_event" not in listed  # notification-safe
    assert len(SCOPES) == 12  # every JSON host, each of its scopes

    seen = _sdk_tools(home, file, key)
    assert seen["command"] == TRULOOP and set(seen["tools"]) == listed

    removed = truloop(home, "uninstall", host, *scope_args(scope, workspace))
    assert removed.returncode == 0, removed.stderr
    assert json.loads(file.read_text()) == {key: {"memory": OTHER}}


# -- the shipped mcp.json --


def _shipped() -> dict[str, Any]:
    config: dict[str, Any] = json.loads((ROOT / "mcp.json").read_text())
    return config["mcpServers"]


def test_the_shipped_stdio_entry_starts_from_the_repository_root(tmp_path: Path) -> None:
    entry = _shipped()["truloop"]
    command = entry["command"]
    assert not os.path.isabs(command) and (ROOT / command).is_file(), f"{command} (relative to {ROOT})"
    env = scratch_env(tmp_path)
    env.update(XDG_DATA_HOME=str(tmp_path / "data"), **entry.get("env", {}))
    params = StdioServerParameters(command=command, args=entry["args"], env=env, cwd=str(ROOT))

    async def listed() -> set[str]:
        with anyio.fail_after(30):
            async with Client(params) as client:
                return {tool.name for tool in (await client.list_tools()).tools}

    assert {"get_day_of_week", "create_event", "forget_memory"} <= anyio.run(listed)


def test_the_shipped_mcp_json_works_in_the_inspector_from_the_repository_root(node_home: Path, tmp_path: Path) -> None:
    listed = _inspector_tools(tmp_path, Path("mcp.json"), cwd=ROOT, server=None)  # as documented: no --server
    assert {"get_day_of_week", "create_event"} <= listed


def test_the_shipped_mcp_json_loads_in_pydantic_ai_with_nothing_in_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.mcp import load_mcp_toolsets
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    for name in [name for name in os.environ if name.startswith("TRULOOP")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))  # the stdio server inherits HOME: its store goes there
    monkeypatch.chdir(ROOT)  # the entry's command is relative to the repository root

    seen: set[str] = set()

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:  # what the agent's model is offered
        seen.update(tool.name for tool in info.function_tools)
        return ModelResponse(parts=[TextPart("listed")])

    async def run() -> None:
        agent = Agent(FunctionModel(model), toolsets=load_mcp_toolsets("mcp.json"))
        with anyio.fail_after(60):
            await agent.run("which tools?")

    anyio.run(run)
    assert {"truloop_get_day_of_week", "truloop_create_event", "truloop_search_knowledge_base"} <= seen


def test_the_http_entry_lives_in_its_own_file_and_reads_its_token_from_truloop_token() -> None:
    config = json.loads((ROOT / "mcp.http.json").read_text())["mcpServers"]
    assert set(config) == {"truloop-http"}
    entry = config["truloop-http"]
    assert entry["type"] == "http" and entry["url"] == "http://127.0.0.1:8000/mcp"
    assert entry["headers"] == {"Authorization": "Bearer ${TRULOOP_TOKEN}"}
    assert set(_shipped()) == {"truloop"}, "mcp.json holds only what works with nothing set"
    readme = (ROOT / "README.md").read_text() + (ROOT / "docs" / "hosts.md").read_text()
    assert "mcp.http.json" in readme and "truloop-mcp token --user" in readme
