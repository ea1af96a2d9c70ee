"""Cold start: what the stdio server loads before it answers `initialize`.

With the speed paths on, the lean front answers `initialize` once the front door is composed and the default caller
read (`Deployment.ready()`), so the first `tools/list` or `tools/call` right after the handshake waits for nothing;
it still never loads the MCP SDK, nor what only some calls need (the other stores, the masker's number libraries,
the plugin machinery, metrics). With the speed paths off, the SDK answers `initialize` before any toolset loads.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from server.runtime.composition import Deployment
from server.runtime.server_factory import build_server
from server.settings import Settings
from tests.support import INIT, child_env

ROOT = Path(__file__).resolve().parents[2]
# What the front door and the first call need: loaded before the lean front answers initialize, never before the
# SDK answers it on the plain path.
THE_DOOR = (
    "toolsets.profiles",  # composing the profiles loads every toolset
    "toolsets.front_door",
    "toolsets.pipeline.canary",
    "toolsets.pipeline.approval",
    "toolsets.pipeline.audit.audit_middleware",
    "toolsets.pipeline.audit.writer",
    "toolsets.pipeline.audit.masking",
    "toolsets.extensions.exposure.tools",
    "toolsets.assistant.datetime_tools",
    "toolsets.assistant.event_tools",
    "toolsets.assistant.memory_tools",
    "toolsets.assistant.knowledge_tools",
    "toolsets.assistant.user_tools",
    "toolsets.assistant.relay_tools",
    "toolsets.infra.store.sqlite.database",  # the default caller is read from the user directory
    "toolsets.infra.store.users",
    "toolsets.assistant.directory",  # and entered in it
    "toolsets.infra.store.memories",  # the tools' contracts
    "toolsets.infra.store.knowledge",
    "toolsets.pipeline.tracing",
    "toolsets.pipeline.gates",
    "sqlite3",
)
# Modules (and their submodules) that answering initialize must not load on either path.
NEVER_BEFORE_INITIALIZE = (
    "phonenumbers",  # the masker's libraries: imported on the first masked number (numbers.py)
    "stdnum",
    "toolsets.extensions.workspace",
    "toolsets.infra.store.postgres.database",  # the store's backend is chosen at start, each store opened on use
    "toolsets.infra.store.events",
    "toolsets.infra.store.inbox",
    "psycopg",
    "psycopg_pool",
    "toolsets.extensions.plugins.catalog",
    "toolsets.extensions.plugins.deployment",
    "bridge.jsonrpc",
    "tomllib",
    "server.settings_text",  # one-line errors and the README table; --help needs only server.settings
    "prometheus_client",  # /metrics is HTTP's: stdio never builds the metrics (server/runtime/metrics.py)
    "server.runtime.metrics",
    "toolsets.pipeline.call_metrics",
)


def loaded_before_answer(args: list[str], tmp_path: Path, env: dict[str, str] | None = None) -> list[str]:
    """The modules imported before the answer to `initialize`: stderr shares stdout's pipe, so importtime's
    lines and the answer arrive in the order they were written."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "server", "--data-dir", str(tmp_path / "data"), *args],
        input=json.dumps(INIT) + "\n", stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        timeout=60, cwd=ROOT, env=env or child_env(),
    )  # fmt: skip
    lines = proc.stdout.splitlines()
    answers = [i for i, line in enumerate(lines) if line.startswith("{") and json.loads(line).get("id") == INIT["id"]]
    assert proc.returncode == 0 and answers, proc.stdout[-3000:]
    timed = [line for line in lines[: answers[0]] if line.startswith("import time:") and "imported package" not in line]
    return [line.rsplit("|", 1)[1].strip() for line in timed]


def forbidden(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == name or m.startswith(name + ".") for name in names)]


@pytest.mark.slow
def test_initialize_is_answered_with_the_door_ready_and_without_the_sdk(tmp_path: Path) -> None:
    loaded = loaded_before_answer([], tmp_path)
    assert {"server.settings", "server.runtime.composition", "toolsets.front_door", "toolsets.profiles"} <= set(loaded)
    assert forbidden(loaded, (*NEVER_BEFORE_INITIALIZE, "mcp", "mcp_types")) == []  # the lean front answers it


@pytest.mark.slow
def test_without_the_speed_paths_the_sdk_answers_initialize_before_any_toolset_loads(tmp_path: Path) -> None:
    loaded = loaded_before_answer([], tmp_path, child_env(TRULOOP_FAST_PATHS="0"))
    assert {"mcp.server.mcpserver", "server.settings", "server.runtime.composition"} <= set(loaded)
    assert forbidden(loaded, (*THE_DOOR, *NEVER_BEFORE_INITIALIZE)) == []


@pytest.mark.slow
def test_a_workspace_or_a_tools_folder_loads_what_it_needs_at_start(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    loaded = loaded_before_answer(["--tools-dir", str(tools), "--workspace", str(tmp_path)], tmp_path)
    assert (
        "toolsets.extensions.plugins.catalog" in loaded and "toolsets.extensions.workspace" in loaded
    )  # loaded before serving


def test_the_profiles_and_builtin_gates_are_built_on_first_use(tmp_path: Path) -> None:
    deployment = build_server(Settings(data_dir=tmp_path, timezone="UTC")).deployment
    assert "front_door" not in vars(deployment) and "toolsets" not in vars(deployment)
    gates = deployment.front_door.exposure.gates
    assert {"update_event", "delete_event", "invite_to_event"} <= set(gates.by_tool)
    assert deployment.front_door is deployment.front_door


def test_the_audit_log_is_opened_on_first_use(tmp_path: Path) -> None:
    server = build_server(Settings(data_dir=tmp_path, timezone="UTC"))
    services: Any = server.services
    assert "audit" not in vars(services)
    log = services.audit
    assert log is not None and log is services.audit and log.path == tmp_path / "audit" / "tool-calls.jsonl"
    off = build_server(Settings(data_dir=tmp_path, timezone="UTC", audit_log="off"))
    assert off.services is not None and off.services.audit is None


@pytest.mark.anyio
async def test_without_a_tools_folder_the_catalog_stays_unconfigured(tmp_path: Path) -> None:
    deployment = Deployment(Settings(data_dir=tmp_path, timezone="UTC"))
    async with deployment:
        assert deployment.plugins is None
