"""The official MCP conformance harness against `truloop-mcp --transport http`: the four passes of
`bash scripts/conformance.sh --all` (its whole server suite with the speed paths on and off, `TRULOOP_FAST_PATHS=0`,
each at the harness's own versions and at 2026-07-28), with `tests/conformance/expected_failures.yaml` as the
harness's baseline, must each exit 0.

The passes run at once, one `scripts/conformance.sh --fast-paths F --era E` each, with a server of its own: the first
installs Node 22 and the harness with npm into a temporary cache (npm's own cache and HOME temporary too), unless
CONFORMANCE_CACHE names a cache to reuse, and the other three start once it has and read the same installation
through a cache folder of their own (each pass writes its results into its cache). Without npm the test fails under
CI and skips elsewhere.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support import TRULOOP, child_env

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "conformance.sh"
PASS_TIMEOUT = 90  # CONFORMANCE_TIMEOUT: one harness run over the whole suite (about 10 s when all is well)
RUN_TIMEOUT = 300.0  # the install (about 10 s) and the four passes, side by side
PASSES = [("on", "harness"), ("off", "harness"), ("on", "2026-07-28"), ("off", "2026-07-28")]
INSTALLED = "conformance: node v"  # what the script logs once Node and the harness are in its cache


def _need_npm() -> None:
    for program in ("npm", "node"):
        if shutil.which(program) is None:
            message = f"{program} is not on PATH (scripts/conformance.sh installs Node 22 and the harness with npm)"
            if os.environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)


def _label(fast: str, era: str) -> str:
    return f"fast-paths={fast}" + ("" if era == "harness" else f"@{era}")


class _Pass:
    """One `scripts/conformance.sh --fast-paths F --era E` in a process group of its own, its output read as it
    comes."""

    def __init__(self, fast: str, era: str, env: dict[str, str]) -> None:
        self.label = _label(fast, era)
        self.lines: list[str] = []
        self.installed = threading.Event()
        self.proc = subprocess.Popen(
            ["bash", str(SCRIPT), "--fast-paths", fast, "--era", era],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # a timeout stops the script's whole group, its server included
        )
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            if line.startswith(INSTALLED):
                self.installed.set()
        self.installed.set()  # (ended: whether it installed or not, nothing more to wait for)

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def finish(self, deadline: float) -> bool:
        """Wait for the script until `deadline` (time.monotonic()); past it, stop its group. True if it ended in
        time."""
        try:
            self.proc.wait(timeout=max(deadline - time.monotonic(), 0.1))
            ended = True
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGTERM)  # the script's trap stops its server
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            ended = False
        self.reader.join(timeout=10)
        return ended


@pytest.mark.timeout(RUN_TIMEOUT + 60)
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
    deadline = time.monotonic() + RUN_TIMEOUT
    first = _Pass(*PASSES[0], env)
    passes = [first]
    try:
        first.installed.wait(timeout=RUN_TIMEOUT)
        if first.proc.poll() is None or first.proc.returncode != 2:  # (2: a setup error, the install's included)
            for fast, era in PASSES[1:]:
                own = work / f"cache-{fast}-{era}"  # its results, beside the first pass's installation
                own.mkdir()
                (own / "node_modules").symlink_to(Path(cache).resolve() / "node_modules", target_is_directory=True)
                passes.append(_Pass(fast, era, {**env, "CONFORMANCE_CACHE": str(own)}))
        late = [one.label for one in passes if not one.finish(deadline)]
    finally:
        for one in passes:
            if one.proc.poll() is None:
                os.killpg(one.proc.pid, signal.SIGKILL)
                one.proc.wait()
    everything = "\n".join(f"--- {one.label}\n{one.output}" for one in passes)
    assert not late, f"scripts/conformance.sh did not finish within {RUN_TIMEOUT:.0f} s: {late}\n{everything}"
    assert len(passes) == len(PASSES), f"the first pass could not set up:\n{everything}"
    for one in passes:
        assert one.proc.returncode == 0, (
            f"{one.label}: scripts/conformance.sh exited {one.proc.returncode}:\n{everything}"
        )
        assert f"TOTAL  {one.label} " in one.output, everything
