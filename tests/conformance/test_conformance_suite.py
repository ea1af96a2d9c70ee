"""The official MCP conformance harness against `truloop-mcp --transport http`: `bash scripts/conformance.sh --all`
runs its whole server suite with the speed paths on and off (`TRULOOP_FAST_PATHS=0`), each at the harness's own
versions and at 2026-07-28, with
`tests/conformance/expected_failures.yaml` as the harness's baseline, and must exit 0.

Node 22 and the harness are installed with npm into a temporary cache (npm's own cache and HOME temporary too),
unless CONFORMANCE_CACHE names a cache to reuse. Without npm the test fails under CI and skips elsewhere.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import TRULOOP, child_env

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "conformance.sh"
PASS_TIMEOUT = 90  # CONFORMANCE_TIMEOUT: one harness run over the whole suite (about 10 s when all is well)
RUN_TIMEOUT = 300.0  # the install (about 10 s) and both passes


def _need_npm() -> None:
    for program in ("npm", "node"):
        if shutil.which(program) is None:
            message = f"{program} is not on PATH (scripts/conformance.sh installs Node 22 and the harness with npm)"
            if os.environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)


@pytest.mark.timeout(RUN_TIMEOUT + 30)
def test_the_whole_conformance_suite_passes_with_and_without_the_speed_paths(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    work = tmp_path_factory.mktemp("conformance")
    cache = os.environ.get("CONFORMANCE_CACHE")
    if not cache:
        _need_npm()
        cache = str(work / "cache")
    home = work / "home"
    home.mkdir()
    env = {k: v for k, v in child_env().items() if not k.lower().startswith("npm_config_")}
    env.update(
        CONFORMANCE_CACHE=cache,
        CONFORMANCE_TIMEOUT=str(PASS_TIMEOUT),
        TRULOOP_MCP=TRULOOP,
        PYTHON=sys.executable,
        TMPDIR=str(work),
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        npm_config_cache=str(work / "npm-cache"),
        npm_config_update_notifier="false",
        NO_COLOR="1",
    )
    proc = subprocess.Popen(
        ["bash", str(SCRIPT), "--all"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # a timeout stops the script's whole group, its server included
    )
    try:
        output, _ = proc.communicate(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)  # the script's trap stops its server
        try:
            output, _ = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output, _ = proc.communicate()
        pytest.fail(f"scripts/conformance.sh --all did not finish within {RUN_TIMEOUT:.0f} s:\n{output}")

    assert proc.returncode == 0, f"scripts/conformance.sh --all exited {proc.returncode}:\n{output}"
    for label in ("fast-paths=on", "fast-paths=off"):
        assert f"TOTAL  {label}" in output, output
