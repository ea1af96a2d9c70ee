"""A `run_shell` or `run_python` call runs at most 1,024 processes at once, whoever runs the server: as root in
a pids cgroup of its own (removed after the call), not as root through RLIMIT_NPROC counted in the sandbox's
user namespace; a root server without a writable pids cgroup refuses, naming the fixes, unless unsandboxed."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from mcp import Client

from server.runtime.server_factory import build_server
from tests.support import error_of, server_with, settings
from toolsets.core.context import ConfirmPolicy
from toolsets.extensions.workspace import shell, workspace_toolset
from toolsets.infra.sandbox import WORKSPACE_LIMITS, SandboxConfig, SandboxUnavailable
from toolsets.infra.sandbox import WorkspaceSandbox as Sandbox
from toolsets.infra.sandbox.pids_cgroup import CallCgroup, PidsCgroups
from toolsets.profiles import with_policy

pytestmark = pytest.mark.anyio

CAP = 1024  # the documented cap (WORKSPACE_LIMITS.processes)
MARGIN = 50  # the host's own processes coming and going while a test samples
TAG = f"30.{1000 + os.getpid() % 9000}"  # `sleep 30.NNNN`: a duration no other test uses
FORK_LOOP = (  # up to 3,000 background children; dash gives up at the first failed fork, else `wait`
    f"i=0; while [ $i -lt 3000 ]; do sleep {TAG} & i=$((i+1)); [ $((i % 250)) -eq 0 ] && echo $i; done; wait"
)

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the pids cgroup is what caps a root server")
with_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


def host_processes() -> int:
    return sum(1 for entry in os.listdir("/proc") if entry.isdigit())


def tagged() -> list[int]:
    """The fork loop's children still alive anywhere on the machine."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if f"sleep\0{TAG}".encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
    return found


def ours(parent: Path) -> list[Path]:
    """This process's per-call cgroups under `parent` (the server runs in the test's process)."""
    return sorted(parent.glob(f"truloop-{os.getpid()}-*"))


@dataclass
class Sampler:
    """Counts the host's processes every 20 ms on a thread of its own (the event loop is busy running the call)."""

    baseline: int = field(default_factory=host_processes)
    peak: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, host_processes())
            time.sleep(0.02)

    @contextlib.contextmanager
    def sampling(self) -> Iterator[Sampler]:
        thread = threading.Thread(target=self.run, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join()


@pytest.fixture
async def cleanup() -> AsyncIterator[list[Path]]:
    """Whatever a failing test leaves, gone: the fork loop's children, and this process's cgroups under the
    folders the test adds to the list."""
    parents: list[Path] = []
    yield parents
    for pid in tagged():
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    for parent in parents:
        for leftover in ours(parent):
            await PidsCgroups(parent).remove(CallCgroup(leftover))


@contextlib.contextmanager
def nobody_site() -> Iterator[tuple[Path, Path]]:
    """A workspace `nobody` can use (not under the 0700 tmp_path), and a bwrap that runs as `nobody`."""
    folder = Path(tempfile.mkdtemp(prefix="truloop-cap-"))
    try:
        folder.chmod(0o755)
        workspace = folder / "room"
        workspace.mkdir()
        workspace.chmod(0o777)
        as_nobody = folder / "bwrap-as-nobody"
        as_nobody.write_text('#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups bwrap "$@"\n')
        as_nobody.chmod(0o755)
        yield workspace, as_nobody
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def room(tmp_path: Path) -> Path:
    workspace = tmp_path / "room"
    workspace.mkdir()
    return workspace


@as_root
@with_bwrap
@pytest.mark.timeout(90)
async def test_a_fork_loop_stays_under_the_cap_as_root(room: Path, cleanup: list[Path]) -> None:
    assert WORKSPACE_LIMITS.processes == CAP
    parent = PidsCgroups().probe()
    if parent is None:
        pytest.skip("this machine gives root no writable pids cgroup")
    cleanup.append(parent)
    server = build_server(settings(workspace=room, confirm="off"))
    async with Client(server, mode="legacy") as client:
        await client.call_tool("run_shell", {"command": "true"})  # the sandbox's probes, before the baseline
        with Sampler().sampling() as sampler:
            result = await client.call_tool("run_shell", {"command": FORK_LOOP, "timeout_s": 5})
        after = host_processes()
    assert not result.is_error and result.structured_content is not None, result.content
    print(f"processes: baseline {sampler.baseline}, peak {sampler.peak}, after {after}")  # seen with -s
    assert sampler.peak > sampler.baseline + CAP // 2  # the loop did run up to the cap
    assert sampler.peak <= sampler.baseline + CAP + MARGIN
    assert "3000" not in result.structured_content["stdout"]
    assert after <= sampler.baseline + MARGIN and not tagged()
    assert ours(parent) == []  # the call's cgroup is gone


@as_root
@with_bwrap
@pytest.mark.timeout(60)
async def test_unsandboxed_as_root_still_runs_in_the_cgroup(room: Path, cleanup: list[Path]) -> None:
    parent = PidsCgroups().probe()
    if parent is None:
        pytest.skip("this machine gives root no writable pids cgroup")
    cleanup.append(parent)
    sandbox = Sandbox(SandboxConfig(room, unsandboxed=True))
    with Sampler().sampling() as sampler:
        result = await shell.run(FORK_LOOP, sandbox, strict=False, timeout_s=5)
    assert sampler.peak <= sampler.baseline + CAP + MARGIN and "3000" not in result.stdout
    seen = await shell.run(f"setsid sleep {TAG} & cat /proc/self/cgroup", sandbox, strict=False, timeout_s=5)
    assert f"truloop-{os.getpid()}-" in seen.stdout, seen
    assert not tagged() and ours(parent) == []  # what left the process group was killed with the cgroup


@as_root
@pytest.mark.timeout(30)
async def test_as_root_without_a_pids_cgroup_commands_are_refused(room: Path, tmp_path: Path) -> None:
    empty = tmp_path / "not-a-cgroup"
    empty.mkdir()
    sandbox = Sandbox(SandboxConfig(room), cgroups=PidsCgroups(empty))
    server = server_with({"test": with_policy(workspace_toolset(room, sandbox=sandbox))}, ConfirmPolicy.OFF)
    async with Client(server) as client:
        for tool, arguments in (("run_shell", {"command": "touch ran"}), ("run_python", {"code": "open('ran', 'w')"})):
            error = error_of(await client.call_tool(tool, arguments))
            assert error["code"] == "not_configured", error
            reason = error["reason"]
            assert f"at most {CAP} processes" in reason and "runs as root" in reason, reason
            assert "unprivileged user" in reason and "Delegate=yes" in reason and "writable cgroupfs" in reason
            assert "--workspace-unsandboxed (unsafe)" in reason and str(empty) in reason
    assert not (room / "ran").exists() and os.listdir(empty) == []
    with pytest.raises(SandboxUnavailable):
        await shell.run("touch ran", sandbox, strict=False, timeout_s=5)
    unsandboxed = Sandbox(SandboxConfig(room, unsandboxed=True), cgroups=PidsCgroups(empty))
    result = await shell.run("touch ran && echo ran", unsandboxed, strict=False, timeout_s=5)
    assert result.stdout == "ran\n"  # the operator chose no sandbox: it runs, uncapped (and logged)


@as_root
@with_bwrap
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv (util-linux)")
@pytest.mark.timeout(60)
async def test_not_as_root_the_rlimit_caps_each_sandbox(cleanup: list[Path]) -> None:
    """bwrap started as `nobody` (through setpriv): the sandbox's user namespace belongs to an unprivileged
    user, as for a server that is not root, and `prlimit --nproc` inside it binds."""
    with nobody_site() as (workspace, as_nobody):
        sandbox = Sandbox(SandboxConfig(workspace, bwrap=str(as_nobody)))
        sandbox.root = False  # what a server not running as root decides: no cgroup, the rlimit binds
        assert (await shell.run("id -u", sandbox, strict=False, timeout_s=10)).stdout == "65534\n"
        with Sampler().sampling() as sampler:
            result = await shell.run(FORK_LOOP, sandbox, strict=False, timeout_s=5)
        assert sampler.peak > sampler.baseline + CAP // 2
        assert sampler.peak <= sampler.baseline + CAP + MARGIN and "3000" not in result.stdout, result
        assert not tagged()


@pytest.mark.timeout(10)
def test_the_servers_cgroup_folders_are_found_from_proc(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    proc.mkdir()
    unified = tmp_path / "cg 2"  # a space: escaped in mountinfo
    (unified / "system.slice" / "truloop.service").mkdir(parents=True)
    pids = tmp_path / "pids"
    (pids / "truloop").mkdir(parents=True)
    (proc / "cgroup").write_text("8:pids:/truloop\n4:memory:/x\n0::/system.slice/truloop.service\n")
    escaped = str(unified).replace(" ", "\\040")
    (proc / "mountinfo").write_text(
        f"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        f"35 31 0:32 / {tmp_path}/memory rw,relatime - cgroup cgroup rw,memory\n"
        f"39 31 0:36 / {pids} rw,relatime - cgroup cgroup rw,pids\n"
        f"41 31 0:38 / {escaped} rw,relatime - cgroup2 cgroup2 rw\n"
    )
    finder = PidsCgroups(proc=proc)
    assert finder.candidates() == [unified / "system.slice" / "truloop.service", pids / "truloop"]
    assert finder.probe() is None and "not a cgroup folder" in finder.why  # plain folders, not cgroupfs
    (unified / "truloop.service").mkdir()
    (proc / "mountinfo").write_text(f"41 31 0:38 /system.slice {escaped} rw - cgroup2 cgroup2 rw\n")
    assert PidsCgroups(proc=proc).candidates() == [unified / "truloop.service"]  # a mount of a sub-tree
