"""The plugin sandbox's own parts: its bwrap options, what it covers, its limits, its worker zip, its start check,
and a sandboxed plugin that prints a flood (relayed to the log, capped, never into the protocol)."""

from __future__ import annotations

import io
import logging
import subprocess
import zipfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from mcp import Client

from tests.plugin_files import plugin_source, serving
from toolsets.extensions.plugins.sandboxed import STDERR_CAP, WORKER_INFRA, WORKER_MODULES, worker_zip
from toolsets.infra.sandbox import PluginWorkerSandbox, SandboxConfig, SandboxUnavailable, plugin_worker
from toolsets.infra.sandbox.bwrap import covering
from toolsets.infra.sandbox.plugin_worker import SANDBOX_UID

pytestmark = pytest.mark.anyio


def test_the_options_drop_everything_and_keep_the_network_out(tmp_path: Path) -> None:
    options = PluginWorkerSandbox(SandboxConfig(hidden=(tmp_path,))).options()
    assert options[0] == "--unshare-all" and "--share-net" not in options
    assert options[options.index("--cap-drop") + 1] == "ALL"
    assert options[options.index("--uid") + 1] == str(SANDBOX_UID)
    assert "--clearenv" in options and "--die-with-parent" in options and "--new-session" in options
    assert str(tmp_path) not in options  # the server's files are never mounted
    with_network = PluginWorkerSandbox(SandboxConfig(network=True)).options()
    assert "--share-net" in with_network


def test_a_hidden_path_inside_a_bound_folder_is_covered(tmp_path: Path) -> None:
    prefix = tmp_path / "python"
    (prefix / "data").mkdir(parents=True)
    (prefix / "audit.jsonl").write_text("")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    hidden = (prefix / "data", prefix / "audit.jsonl", outside, tmp_path / "missing")
    assert covering(hidden, [(str(prefix), str(prefix))]) == [
        "--tmpfs",
        str(prefix / "data"),
        "--ro-bind",
        "/dev/null",
        str(prefix / "audit.jsonl"),
    ]


def test_the_limits_are_set_inside() -> None:
    command = PluginWorkerSandbox().command("/usr/bin/bwrap", ["-c", "pass"])
    assert command[:2] == ["/usr/bin/bwrap", "--"]
    caps = [word for word in command if word.startswith("--") and "=" in word]
    assert "--nproc=1024" in caps
    assert {word.split("=")[0] for word in caps} >= {"--nproc", "--as", "--nofile", "--fsize", "--cpu"}


def test_the_worker_arrives_as_a_zip_of_its_own_modules() -> None:
    archive = zipfile.ZipFile(io.BytesIO(worker_zip()))
    names = set(archive.namelist())
    assert {f"toolsets/extensions/plugins/{name}.py" for name in WORKER_MODULES} <= names
    assert {f"toolsets/infra/{name}.py" for name in WORKER_INFRA} <= names
    for name in names:  # none imports the rest of the project (which is not in the sandbox), at the top or inside
        text = archive.read(name).decode()
        for line in (line.strip() for line in text.splitlines()):
            if line.startswith(("import ", "from ")) and "toolsets" in line:
                module = line.split()[1]
                shipped = [f"toolsets.extensions.plugins.{m}" for m in WORKER_MODULES]
                shipped += [f"toolsets.infra.{m}" for m in WORKER_INFRA]
                assert module in shipped, (name, line)


def test_without_bubblewrap_the_start_check_names_the_fix() -> None:
    sandbox = PluginWorkerSandbox(SandboxConfig(bwrap="no-such-bwrap-here"))
    with pytest.raises(SandboxUnavailable, match="bubblewrap"):
        sandbox.probe()


def test_the_start_check_passes_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """CI installs bubblewrap: the check starts one real sandbox (bwrap, its options through a pipe: those of
    `test_the_options_drop_everything_and_keep_the_network_out`) and Python in it exits 0; a failure here says why
    the sandbox cannot run."""
    started: list[tuple[list[str], int]] = []

    def run(argv: list[str], **options: Any) -> subprocess.CompletedProcess[bytes]:
        done = subprocess.run(argv, **options)  # the probe passes check=False itself
        started.append((argv, done.returncode))
        return done

    monkeypatch.setattr(plugin_worker, "subprocess", SimpleNamespace(run=run, TimeoutExpired=subprocess.TimeoutExpired))
    PluginWorkerSandbox().probe()
    [(argv, returncode)] = started
    assert returncode == 0
    bwrap = next(word for word in argv if Path(word).name == "bwrap")
    assert argv[argv.index(bwrap) + 1 :][:1] == ["--args"], argv  # the sandbox's options come through the pipe
    assert argv[-2:] == ["-c", "import sys; sys.exit(0)"], argv


def test_the_start_check_refuses_a_sandbox_that_does_not_start() -> None:
    """The check is a real start: a bwrap that exits non-zero (here `false`) fails it, naming the fix."""
    with pytest.raises(SandboxUnavailable, match="could not be created here"):
        PluginWorkerSandbox(SandboxConfig(bwrap="false")).probe()


FLOOD = """
import sys

def run(input_data, context):
    for _ in range(2000):
        print("x" * 500)
    sys.stdout.flush()
    return {"printed": 2000}
"""


@pytest.mark.timeout(60)
async def test_a_flood_of_prints_is_capped_and_never_reaches_the_protocol(
    tools: Path, data: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tools / "flood.py").write_text(plugin_source("flood", FLOOD))
    caplog.set_level(logging.INFO, logger="truloop.plugin.flood")
    async with serving(tools, data, plugin_isolation="sandbox") as server, Client(server) as c:
        result = await c.call_tool("flood", {})
        assert result.structured_content == {"printed": 2000}
        again = await c.call_tool("flood", {})
        assert again.structured_content == {"printed": 2000}
    relayed = [r for r in caplog.records if r.name == "truloop.plugin.flood"]
    assert relayed, "the prints reach the server's log"
    assert sum(len(r.getMessage()) for r in relayed) <= STDERR_CAP + 2000
    assert any("dropped" in r.getMessage() for r in relayed)


LEAVER = """
import os, subprocess

def run(input_data, context):
    if input_data.get("leave"):
        subprocess.Popen(["sleep", "300"])  # still running when the call returns
    return {"pids": sorted(int(entry) for entry in os.listdir("/proc") if entry.isdigit())}
"""


@pytest.mark.timeout(60)
async def test_what_a_call_leaves_running_ends_with_it(tools: Path, data: Path) -> None:
    (tools / "leaver.py").write_text(plugin_source("leaver", LEAVER))
    async with serving(tools, data, plugin_isolation="sandbox") as server, Client(server) as c:
        left = await c.call_tool("leaver", {"leave": True})
        assert left.structured_content is not None and len(left.structured_content["pids"]) == 3  # bwrap, us, sleep
        after = await c.call_tool("leaver", {})
        assert after.structured_content is not None and len(after.structured_content["pids"]) == 2, after
