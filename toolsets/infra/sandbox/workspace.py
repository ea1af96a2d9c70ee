"""The workspace profile: where `run_shell` and `run_python` run, a sandbox that sees the workspace and nothing else.

`WorkspaceSandbox(config).run(argv, timeout_s=...)` starts `argv` under `bwrap` in new user, PID, IPC, UTS, cgroup and
network namespaces (the network is shared only with `network=True`), with every capability dropped, the
system folders read-only, a minimal /etc, a private /tmp, the new PID namespace's /proc, a minimal /dev, a
fixed environment, and the workspace as the only writable folder, mounted at /workspace (the working
directory). Nothing of the server is visible: its processes, its data folder, the audit log, the home
folder, /run and its sockets, the host's /tmp. Resource limits (address space, file size, processes) are
set with `prlimit` inside.

A call may run at most `WORKSPACE_LIMITS.processes` (1,024) processes at once, whoever runs the server. Not as
root, `prlimit --nproc` binds: it is set inside the sandbox's new user namespace, and since Linux 5.14 the
kernel counts RLIMIT_NPROC per user namespace, so the count is the sandbox's own processes. As root it never
binds (the kernel exempts uid 0, and bwrap started by root maps the sandbox's user to it), so each call runs
in a pids cgroup of its own with `pids.max` set (pids_cgroup.py), removed after the call; a
root server without a writable pids cgroup refuses to run commands (SandboxUnavailable) unless unsandboxed.

Whatever the command starts ends with the call: the bwrap process leads a process group of its own that is
killed at the time limit, when the command ends and when the call is cancelled; killing it kills the PID
namespace's init (`--die-with-parent`), and with it every process in the namespace, `setsid` and all.

With `unsandboxed=True` (the operator's `--workspace-unsandboxed`) the command runs directly in the
workspace folder, still with the fixed environment, the limits and the process-group kill (and, as root,
the pids cgroup when there is one, whose leftovers are killed too), but nothing else stands between it and the
machine.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream, Process

from toolsets.core.errors import ErrorCode, ToolError
from toolsets.infra.child_env import SYSTEM_PATH
from toolsets.infra.sandbox.bwrap import (
    INSTALL_HINT,
    base_options,
    covering,
    environment_options,
    filled_pipe,
    option_bytes,
)
from toolsets.infra.sandbox.config import WORKSPACE_LIMITS, SandboxConfig, SandboxUnavailable
from toolsets.infra.sandbox.pids_cgroup import CallCgroup, PidsCgroups

logger = logging.getLogger("truloop.workspace")

MOUNT = "/workspace"
OUTPUT_CAP = 64 * 1024  # bytes kept of stdout and of stderr each
DRAIN_GRACE_S = 0.5  # how long output is still read once the command has ended and its group was killed
PROBE_TIMEOUT_S = 10.0
# The little of /etc that programs need: users and groups by name, the dynamic linker, the alternatives
# (awk, editor, ...), time zones, certificates, MIME types. Never shadow, ssh keys or the host's name.
ETC_ENTRIES = (
    "passwd", "group", "nsswitch.conf", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime",
    "timezone", "ssl", "ca-certificates", "ca-certificates.conf", "mime.types", "protocols", "services",
    "magic", "magic.mime", "inputrc",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class RunResult:
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    truncated: bool


class WorkspaceSandbox:
    """Runs commands for one workspace folder (`config.folder`), sandboxed unless configured otherwise."""

    def __init__(self, config: SandboxConfig, *, cgroups: PidsCgroups | None = None) -> None:
        if config.folder is None:
            raise ValueError("the workspace sandbox needs its folder")
        self.config = config
        self.limits = config.limits or WORKSPACE_LIMITS
        self.workspace = Path(os.path.realpath(config.folder))
        self._bwrap: str | None = None  # the resolved program, once a probe has succeeded
        # As root, where each call's pids cgroup is made (found when first needed; a test may point it elsewhere).
        self.cgroups = cgroups if cgroups is not None else PidsCgroups()
        self.root = os.geteuid() == 0  # RLIMIT_NPROC does not bind: the process cap needs a pids cgroup
        self._capped = False  # root, and the pids cgroup probe succeeded
        self._cap_settled = False  # as root: capped, or unsandboxed without a cgroup (and warned once)

    @property
    def cwd(self) -> str:
        """The working directory a command sees (and `HOME`)."""
        return str(self.workspace) if self.config.unsandboxed else MOUNT

    # -- the command line ------------------------------------------------------------------------------------

    def environment(self) -> dict[str, str]:
        """The command's whole environment: fixed, nothing of the server's."""
        return {"PATH": SYSTEM_PATH, "HOME": self.cwd, "PWD": self.cwd, "LANG": "C.UTF-8", "TERM": "dumb"}

    def limited(self, argv: list[str]) -> list[str]:
        """`argv` under `prlimit` (when the machine has it)."""
        prlimit = shutil.which("prlimit", path=SYSTEM_PATH)
        options = self.limits.prlimit_options()
        if prlimit is None or not options:
            return argv
        return [prlimit, *options, "--", *argv]

    def bwrap_options(self) -> list[str]:
        """bwrap's options (the namespaces, the mounts, the environment), before its `--`."""
        args = base_options(network=self.config.network, etc=ETC_ENTRIES)
        args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", "/var/tmp"]
        args += ["--bind", str(self.workspace), MOUNT]
        hidden = [path for path in self.config.hidden if os.path.realpath(path) != str(self.workspace)]
        args += covering(hidden, [(str(self.workspace), MOUNT)])
        args += ["--chdir", MOUNT, *environment_options(self.environment())]
        return args

    # -- running ---------------------------------------------------------------------------------------------

    async def ready(self) -> str | None:
        """The bwrap program once it is known to work here (None when unsandboxed); SandboxUnavailable if not.
        As root, also the pids cgroup the process cap needs (probed once)."""
        if self.config.unsandboxed:
            self._settle_cap()
            return None
        if self._bwrap is not None:
            return self._bwrap
        found = shutil.which(self.config.bwrap)
        if found is None:
            raise SandboxUnavailable(
                f"run_shell and run_python run inside a bubblewrap sandbox, and `{self.config.bwrap}` is not "
                f"installed on the server: {INSTALL_HINT}. (The operator can start the server with "
                "--workspace-unsandboxed instead, which is unsafe.)"
            )
        self._settle_cap()
        probe = await self._execute([found, "--", "true"], PROBE_TIMEOUT_S, self.bwrap_options())
        if probe.exit_code != 0:
            why = (probe.stderr.strip().splitlines() or ["it timed out" if probe.timed_out else "no reason given"])[0]
            raise SandboxUnavailable(
                f"run_shell and run_python run inside a bubblewrap sandbox, which could not be created on the "
                f"server ({why}). Unprivileged user namespaces must be allowed (sysctl "
                "kernel.unprivileged_userns_clone=1, or an AppArmor profile for bwrap); where they are not, "
                f"{INSTALL_HINT} with its setuid helper, or start the server with --workspace-unsandboxed (unsafe)."
            )
        self._bwrap = found
        return found

    def _settle_cap(self) -> None:
        """As root: find the pids cgroup that caps a call's processes, or refuse (warn, when unsandboxed)."""
        if not self.root or self._cap_settled:
            return
        self._capped = self.cgroups.probe() is not None
        self._cap_settled = self._capped or self.config.unsandboxed
        if self._capped:
            return
        if self.config.unsandboxed:
            logger.warning(
                "workspace commands run as root, unsandboxed and without a process cap: no writable pids cgroup (%s)",
                self.cgroups.why,
            )
            return
        raise SandboxUnavailable(
            f"run_shell and run_python allow each call at most {self.limits.processes} processes, and the "
            "server runs as root, where the kernel does not apply that limit: it needs a pids cgroup the server "
            f"can write, and there is none ({self.cgroups.why}). The operator can run the server as an "
            "unprivileged user, give it a writable pids cgroup (a systemd unit with Delegate=yes, or a container "
            "with a writable cgroupfs), or start it with --workspace-unsandboxed (unsafe)."
        )

    async def run(self, argv: list[str], *, timeout_s: float) -> RunResult:
        """Run `argv` (program and arguments, no shell) and return its exit code and bounded output."""
        bwrap = await self.ready()
        if bwrap is None:
            return await self._execute(self.limited(argv), timeout_s)
        return await self._execute([bwrap, "--", *self.limited(argv)], timeout_s, self.bwrap_options())

    async def _execute(self, argv: list[str], timeout_s: float, options: list[str] | None = None) -> RunResult:
        """Run `argv`; `options` (bwrap's) go through a pipe (`--args FD`), so the sandbox's /proc/1/cmdline
        does not show the host's paths. As root, in a pids cgroup of its own, removed afterwards."""
        if not self._capped:
            return await self._spawn(argv, timeout_s, options, None)
        try:
            cgroup = self.cgroups.create(self.limits.processes)
        except OSError as exc:
            raise SandboxUnavailable(
                f"The server could not make the pids cgroup that caps this call's processes ({exc}); try again."
            ) from None
        try:
            return await self._spawn(argv, timeout_s, options, cgroup)
        finally:
            with anyio.CancelScope(shield=True):
                await self.cgroups.remove(cgroup)  # after the group is killed and reaped (`_spawn`'s finally)

    async def _spawn(
        self, argv: list[str], timeout_s: float, options: list[str] | None, cgroup: CallCgroup | None
    ) -> RunResult:
        env = self.environment() if self.config.unsandboxed else {"PATH": SYSTEM_PATH, "LANG": "C.UTF-8"}
        pass_fds: tuple[int, ...] = ()
        if options is not None:
            reader = filled_pipe(option_bytes(options))
            pass_fds = (reader,)
            argv = [argv[0], "--args", str(reader), *argv[1:]]
        if cgroup is not None:
            argv = cgroup.wrap(argv)  # the same process (sh execs), in the cgroup before it can fork
        try:
            process = await anyio.open_process(
                argv, cwd=self.workspace, env=env, stdin=-3, start_new_session=True, pass_fds=pass_fds
            )  # stdin=-3: /dev/null
        except FileNotFoundError:
            raise ToolError(f"No such program: {argv[0]!r}.", code=ErrorCode.NOT_FOUND) from None
        finally:
            for fd in pass_fds:
                os.close(fd)
        outputs = (bytearray(), bytearray())
        truncated = False
        timed_out = False

        async def drain(stream: ByteReceiveStream | None, into: bytearray) -> None:
            nonlocal truncated
            if stream is None:
                return
            with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                async for chunk in stream:
                    room = OUTPUT_CAP - len(into)
                    if room > 0:
                        into += chunk[:room]
                    if len(chunk) > room:
                        truncated = True  # keep reading (and dropping), so the command is not blocked on a full pipe

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(drain, process.stdout, outputs[0])
                tg.start_soon(drain, process.stderr, outputs[1])
                with anyio.move_on_after(timeout_s) as deadline:
                    await process.wait()
                timed_out = deadline.cancelled_caught
                _kill_group(process)
                # What is still writing (a process that left the group, unsandboxed) is not waited for.
                tg.cancel_scope.deadline = min(tg.cancel_scope.deadline, anyio.current_time() + DRAIN_GRACE_S)
        finally:
            with anyio.CancelScope(shield=True):
                _kill_group(process)  # also when the call is cancelled
                await process.aclose()
        return RunResult(
            exit_code=None if timed_out else process.returncode,
            stdout=outputs[0].decode(errors="replace"),
            stderr=outputs[1].decode(errors="replace"),
            timed_out=timed_out,
            truncated=truncated,
        )


def _kill_group(process: Process) -> None:
    """SIGKILL the command's process group (bwrap's, sandboxed: its death takes the whole PID namespace)."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
