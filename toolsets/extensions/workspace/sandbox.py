"""Where `run_shell` and `run_python` run: a bubblewrap sandbox that sees the workspace and nothing of the server.

`Sandbox(config).run(argv, timeout_s=...)` starts `argv` under `bwrap` in new user, PID, IPC, UTS, cgroup and
network namespaces (the network is shared only with `network=True`), with every capability dropped, the
system folders read-only, a minimal /etc, a private /tmp, the new PID namespace's /proc, a minimal /dev, a
fixed environment, and the workspace as the only writable folder, mounted at /workspace (the working
directory). Nothing of the server is visible: its processes, its data folder, the audit log, the home
folder, /run and its sockets, the host's /tmp. Resource limits (address space, file size, processes) are
set with `prlimit` inside.

Whatever the command starts ends with the call: the bwrap process leads a process group of its own that is
killed at the time limit, when the command ends and when the call is cancelled; killing it kills the PID
namespace's init (`--die-with-parent`), and with it every process in the namespace, `setsid` and all.

With `unsandboxed=True` (the operator's `--workspace-unsandboxed`) the command runs directly in the
workspace folder, still with the fixed environment, the limits and the process-group kill, but nothing
else stands between it and the machine.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream, Process

from toolsets.core.errors import ErrorCode, ToolError
from toolsets.extensions.workspace.paths import within
from toolsets.infra.child_env import SYSTEM_PATH

MOUNT = "/workspace"
OUTPUT_CAP = 64 * 1024  # bytes kept of stdout and of stderr each
DRAIN_GRACE_S = 0.5  # how long output is still read once the command has ended and its group was killed
PROBE_TIMEOUT_S = 10.0
INSTALL_HINT = (
    "install the `bubblewrap` package (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"
)
# The system folders bound read-only; a symlink (/bin -> usr/bin on merged-/usr systems) is recreated as one.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# The little of /etc that programs need: users and groups by name, the dynamic linker, the alternatives
# (awk, editor, ...), time zones, certificates, MIME types. Never shadow, ssh keys or the host's name.
ETC_ENTRIES = (
    "passwd", "group", "nsswitch.conf", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime",
    "timezone", "ssl", "ca-certificates", "ca-certificates.conf", "mime.types", "protocols", "services",
    "magic", "magic.mime", "inputrc",
)  # fmt: skip
NETWORK_ETC_ENTRIES = ("resolv.conf", "hosts", "host.conf", "gai.conf")


class SandboxUnavailable(ToolError):  # noqa: N818 - a refusal the model (and the operator) reads
    def __init__(self, message: str) -> None:
        super().__init__(message, code=ErrorCode.NOT_CONFIGURED)


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Per-process resource limits (`prlimit`); 0 leaves one unset."""

    address_space: int = 4 << 30  # bytes of virtual memory
    file_size: int = 1 << 30  # bytes of the largest file a command may write
    processes: int = 4096  # the kernel counts these per user, not per sandbox


@dataclass(frozen=True, slots=True)
class SandboxConfig:
    workspace: Path
    network: bool = False  # --workspace-network: share the host's network (the server's own ports included)
    unsandboxed: bool = False  # --workspace-unsandboxed: no bwrap at all (unsafe)
    hidden: tuple[Path, ...] = ()  # paths inside the workspace the command must not see (the data folder, say)
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    bwrap: str = "bwrap"  # the program, looked up on the server's PATH unless a path


@dataclass(frozen=True, slots=True)
class RunResult:
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    truncated: bool


class Sandbox:
    """Runs commands for one workspace folder, sandboxed unless configured otherwise."""

    def __init__(self, config: SandboxConfig) -> None:
        self.config = config
        self.workspace = Path(os.path.realpath(config.workspace))
        self._bwrap: str | None = None  # the resolved program, once a probe has succeeded

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
        limits = self.config.limits
        prlimit = shutil.which("prlimit", path=SYSTEM_PATH)
        options = [
            f"--{name}={value}"
            for name, value in (("as", limits.address_space), ("fsize", limits.file_size), ("nproc", limits.processes))
            if value > 0
        ]
        if prlimit is None or not options:
            return argv
        return [prlimit, *options, "--", *argv]

    def bwrap_options(self) -> list[str]:
        """bwrap's options (the namespaces, the mounts, the environment), before its `--`."""
        args = ["--unshare-all"]
        if self.config.network:
            args.append("--share-net")
        args += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--hostname", "sandbox"]
        for path in SYSTEM_DIRS:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                args += ["--ro-bind", path, path]
        etc = ETC_ENTRIES + (NETWORK_ETC_ENTRIES if self.config.network else ())
        for name in etc:
            args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
        for python_etc in sorted(glob.glob("/etc/python3*")):
            args += ["--ro-bind-try", python_etc, python_etc]
        args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", "/var/tmp"]
        args += ["--bind", str(self.workspace), MOUNT]
        masked: list[Path] = []
        for hidden in self.config.hidden:
            real = os.path.realpath(hidden)
            if real == str(self.workspace) or not within(self.workspace, real) or not os.path.lexists(real):
                continue
            if any(within(done, real) for done in masked):
                continue
            masked.append(Path(real))
            inside = f"{MOUNT}/{os.path.relpath(real, self.workspace)}"
            args += ["--tmpfs", inside] if os.path.isdir(real) else ["--ro-bind", "/dev/null", inside]
        args += ["--chdir", MOUNT, "--clearenv"]
        for name, value in self.environment().items():
            args += ["--setenv", name, value]
        return args

    # -- running ---------------------------------------------------------------------------------------------

    async def ready(self) -> str | None:
        """The bwrap program once it is known to work here (None when unsandboxed); SandboxUnavailable if not."""
        if self.config.unsandboxed:
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

    async def run(self, argv: list[str], *, timeout_s: float) -> RunResult:
        """Run `argv` (program and arguments, no shell) and return its exit code and bounded output."""
        bwrap = await self.ready()
        if bwrap is None:
            return await self._execute(self.limited(argv), timeout_s)
        return await self._execute([bwrap, "--", *self.limited(argv)], timeout_s, self.bwrap_options())

    async def _execute(self, argv: list[str], timeout_s: float, options: list[str] | None = None) -> RunResult:
        """Run `argv`; `options` (bwrap's) go through a pipe (`--args FD`), so the sandbox's /proc/1/cmdline
        does not show the host's paths."""
        env = self.environment() if self.config.unsandboxed else {"PATH": SYSTEM_PATH, "LANG": "C.UTF-8"}
        pass_fds: tuple[int, ...] = ()
        if options is not None:
            reader, writer = os.pipe()
            with os.fdopen(writer, "wb") as pipe:  # a few KiB: fits the pipe's buffer, so this never blocks
                pipe.write(b"".join(option.encode() + b"\0" for option in options))
            pass_fds = (reader,)
            argv = [argv[0], "--args", str(reader), *argv[1:]]
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
