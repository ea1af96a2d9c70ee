"""`--plugin-isolation sandbox` (and every file of a folder the model writes to): the worker in bubblewrap.

The worker process (worker.py, the same protocol as `--plugin-isolation process`) starts under `bwrap` as an
unprivileged user: when the server runs as root, bwrap itself is started as `nobody` (uid 65534), so the
sandbox's processes are owned by that uid on the host too, never by root; otherwise as the server's own user,
seen inside as 65534. New user, PID, IPC, UTS, cgroup and network namespaces (the network only with
`--plugin-network`), no capabilities, `no_new_privs`, the system folders read-only, a private /tmp (the
plugin's `data_dir` lives there), a fixed environment, and nothing of the server: not its data folder, store,
audit log, tools folder, home folder, sockets, environment or processes (its /proc is the new PID namespace's).

The worker's own code (worker.py and the few light modules it imports) arrives as a zip through a pipe
(`--ro-bind-data`), and the plugin's source through the protocol, so nothing of the project's folders needs
to be visible. The interpreter is the server's own when the sandbox's user can read it, else the system's
`/usr/bin/python3`; the server's site-packages are visible read-only (with the server's own interpreter) so
that operator plugins find their libraries.

Limits, set with `prlimit` inside the new user namespace (the kernel counts processes per user namespace,
so the process cap is per worker and binds whoever runs the server): processes, address space, open files,
file size, CPU seconds. Wall time is the tool's `timeout_s` (the worker is killed past it); output is the
protocol's line cap and the stderr cap below.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import anyio
from anyio.abc import Process

from toolsets.extensions.plugins.plugin_runner import PluginLoadError
from toolsets.infra.bwrap_base import INSTALL_HINT, SYSTEM_DIRS, base_options
from toolsets.infra.child_env import SYSTEM_PATH

SANDBOX_UID = 65534  # nobody: the sandbox's user inside, and on the host when the server is root
ZIP_AT = "/opt/truloop/worker.zip"
DATA_AT = "/tmp/plugin-data"
PROBE_SECONDS = 15.0
STDERR_CAP = 256 * 1024  # bytes of a worker's stderr forwarded to the server's log; the rest is dropped
# The worker's code: these modules import only the standard library.
WORKER_MODULES = ("worker", "context", "failures", "module", "plugin_loop")
WORKER_INFRA = ("contained_open",)  # toolsets/infra/ modules it imports (context.open_data)
# users and groups by name, the dynamic linker, time zones, certificates (for --plugin-network)
PLUGIN_ETC_ENTRIES = (
    "passwd", "group", "nsswitch.conf", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "ssl",
    "ca-certificates",
)  # fmt: skip
BOOT = (
    "import sys, json; sys.path[:0] = [{zip!r}]; sys.path += json.loads(sys.argv[1]); "
    "from toolsets.extensions.plugins.worker import main; main()"
)


class PluginSandboxUnavailable(PluginLoadError):  # noqa: N818 - the operator reads it
    pass


@dataclass(frozen=True, slots=True)
class PluginSandboxLimits:
    """Per-worker limits (`prlimit` inside the sandbox)."""

    processes: int = 1024  # the documented cap: a fork bomb never takes more than this many processes
    address_space: int = 2 << 30  # bytes of virtual memory per process
    open_files: int = 256
    file_size: int = 64 << 20  # bytes of the largest file it may write (in its private /tmp)
    cpu_seconds: int = 600  # CPU time of one worker process over its life; past it the worker is restarted


@dataclass(frozen=True, slots=True)
class PluginSandboxConfig:
    network: bool = False  # --plugin-network
    limits: PluginSandboxLimits = field(default_factory=PluginSandboxLimits)
    bwrap: str = "bwrap"
    # the server's own files (data folder, tools folder, audit log): covered if a bound folder holds them
    hidden: tuple[Path, ...] = ()


def _others_can_reach(path: str, *, read: bool = False) -> bool:
    """Whether a user who is neither owner nor group can reach `path` (search every folder above it)."""
    current = Path(path)
    try:
        if read and not os.stat(current).st_mode & stat.S_IROTH:
            return False
        for parent in [current, *current.parents] if current.is_dir() else current.parents:
            if not os.stat(parent).st_mode & stat.S_IXOTH:
                return False
    except OSError:
        return False
    return True


def _python_version_of(executable: str) -> str | None:
    name = os.path.basename(os.path.realpath(executable))
    return name.removeprefix("python") if name.startswith("python3.") else None


class PluginSandbox:
    """Starts plugin workers inside bubblewrap; one per deployment, built by the composition root."""

    def __init__(self, config: PluginSandboxConfig | None = None) -> None:
        self.config = config or PluginSandboxConfig()

    # -- who and what --------------------------------------------------------------------------------------

    @property
    def data_dir(self) -> Path:
        """A plugin's `context.data_dir` inside: scratch space in the sandbox's /tmp, as long as the worker lives."""
        return Path(DATA_AT)

    @property
    def host_user(self) -> int | None:
        """The uid bwrap is started as: `nobody` when the server is root (None: the server's own)."""
        return SANDBOX_UID if os.geteuid() == 0 else None

    def _visible(self, path: str, *, read: bool = False) -> bool:
        return self.host_user is None or _others_can_reach(path, read=read)

    @cached_property
    def interpreter(self) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
        """(the Python the worker runs on, the folders bound for it, the site-packages added to its path)."""
        own = os.path.realpath(sys.executable)
        own_version = f"{sys.version_info.major}.{sys.version_info.minor}"
        sites = tuple(
            dict.fromkeys(p for p in (sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]) if p)
        )
        if self._visible(own, read=True) and self._visible(sys.base_prefix):
            python, prefix = own, sys.base_prefix
        elif os.path.exists("/usr/bin/python3") and _python_version_of("/usr/bin/python3") == own_version:
            python, prefix = "/usr/bin/python3", "/usr"
        else:
            raise PluginSandboxUnavailable(
                f"the plugin sandbox runs as an unprivileged user (uid {SANDBOX_UID}), who cannot read this server's "
                f"Python ({own}); install the server in a folder others can read (e.g. /opt) or install python3 "
                f"{own_version} from the system's packages"
            )
        sites = tuple(s for s in sites if os.path.isdir(s) and self._visible(s))
        binds = tuple(p for p in (prefix, *sites) if not any(p.startswith(d + "/") or p == d for d in SYSTEM_DIRS))
        return python, binds, sites

    @cached_property
    def worker_zip(self) -> bytes:
        """worker.py and the modules it imports, as a zip the sandbox imports from (never the project's folder)."""
        here = Path(__file__).parent
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for package in ("toolsets", "toolsets/extensions", "toolsets/extensions/plugins", "toolsets/infra"):
                archive.writestr(f"{package}/__init__.py", "")
            for name in WORKER_MODULES:
                archive.writestr(f"toolsets/extensions/plugins/{name}.py", (here / f"{name}.py").read_text("utf-8"))
            infra = here.parent.parent / "infra"
            for name in WORKER_INFRA:
                archive.writestr(f"toolsets/infra/{name}.py", (infra / f"{name}.py").read_text("utf-8"))
        return buffer.getvalue()

    def options(self) -> list[str]:
        """bwrap's options, before its `--`."""
        args = base_options(network=self.config.network, etc=PLUGIN_ETC_ENTRIES)
        args += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
        args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", DATA_AT]
        _, binds, _ = self.interpreter
        for folder in binds:
            args += ["--ro-bind", folder, folder]
        args += covering(self.config.hidden, (*binds, *SYSTEM_DIRS))
        args += ["--chdir", "/tmp", "--clearenv"]
        for name, value in {"PATH": SYSTEM_PATH, "HOME": "/tmp", "LANG": "C.UTF-8", "TMPDIR": "/tmp"}.items():
            args += ["--setenv", name, value]
        return args

    def command(self, bwrap: str, program: Sequence[str] | None = None) -> list[str]:
        """The worker's command line inside the sandbox (bwrap's options go separately, through a pipe);
        `program`: Python's arguments after `-I` instead of the worker's."""
        limits = self.config.limits
        python, _, sites = self.interpreter
        prlimit = shutil.which("prlimit", path=SYSTEM_PATH)
        if prlimit is None:
            raise PluginSandboxUnavailable("the plugin sandbox needs `prlimit` (util-linux) for its limits")
        caps = [
            f"--nproc={limits.processes}",
            f"--as={limits.address_space}",
            f"--nofile={limits.open_files}",
            f"--fsize={limits.file_size}",
            f"--cpu={limits.cpu_seconds}",
        ]
        if program is None:
            program = ["-c", BOOT.format(zip=ZIP_AT), json.dumps(list(sites))]
        return [bwrap, "--", prlimit, *caps, "--", python, "-I", *program]

    # -- starting ------------------------------------------------------------------------------------------

    def bwrap(self) -> str:
        found = shutil.which(self.config.bwrap)
        if found is None:
            raise PluginSandboxUnavailable(
                f"plugins and the tools the model writes run in a bubblewrap sandbox, and `{self.config.bwrap}` is "
                f"not installed: {INSTALL_HINT}"
            )
        return found

    @cached_property
    def _option_bytes(self) -> bytes:
        """bwrap's options as `--args` reads them (the same for every worker: computed once)."""
        return b"".join(option.encode() + b"\0" for option in self.options())

    @contextmanager
    def _started_as(self, program: Sequence[str] | None = None) -> Iterator[tuple[list[str], dict[str, object]]]:
        """(the whole command line, the spawn's keyword arguments) of one sandbox: bwrap's options and the worker
        zip in pipes (`--args FD`, `--ro-bind-data FD`), closed on our side once the process started."""
        command = self.command(self.bwrap(), program)
        options_fd = _filled_pipe(self._option_bytes)
        fds = [options_fd]
        try:
            zip_fd = _filled_pipe(self.worker_zip)
            fds.append(zip_fd)
            pipes = ["--args", str(options_fd), "--ro-bind-data", str(zip_fd), ZIP_AT]
            yield self._as_sandbox_user([command[0], *pipes, *command[1:]]), self._spawn_kwargs(fds)
        finally:
            for fd in fds:
                os.close(fd)

    def _spawn_kwargs(self, fds: list[int]) -> dict[str, object]:
        return {"cwd": "/", "env": {"PATH": SYSTEM_PATH, "LANG": "C.UTF-8"}, "pass_fds": tuple(fds)}

    def _as_sandbox_user(self, argv: list[str]) -> list[str]:
        """`argv` started as `nobody` when the server is root (setpriv, since the event loop may be uvloop, which
        has no `user=`), so that the sandbox's processes are not root's on the host either."""
        user = self.host_user
        if user is None:
            return argv
        setpriv = shutil.which("setpriv", path=SYSTEM_PATH)
        if setpriv is None:
            raise PluginSandboxUnavailable("the plugin sandbox needs `setpriv` (util-linux) to leave root")
        return [setpriv, f"--reuid={user}", f"--regid={user}", "--clear-groups", "--", *argv]

    async def open_worker(self) -> Process:
        """A worker process in a fresh sandbox, its stdin/stdout the protocol, its stderr a pipe."""
        with self._started_as() as (argv, spawn):
            return await anyio.open_process(argv, stdin=-1, stdout=-1, stderr=-1, **spawn)  # type: ignore[arg-type]  # spawn holds user and group as anyio takes them

    async def open_program(self, program: Sequence[str]) -> Process:
        """Python with `program` (its arguments after `-I`) in a fresh sandbox: stdin/stdout pipes, stderr
        dropped (code mode's interpreters, which answer only through the protocol)."""
        with self._started_as(program) as (argv, spawn):
            return await anyio.open_process(argv, stdin=-1, stdout=-1, stderr=-3, **spawn)  # type: ignore[arg-type]  # spawn holds user and group as anyio takes them

    def probe(self) -> None:
        """Start one sandbox and run Python in it (synchronously, once, at start); PluginSandboxUnavailable naming the
        fix when it cannot run here."""
        try:
            with self._started_as(["-c", "import sys; sys.exit(0)"]) as (argv, spawn):
                done = subprocess.run(argv, capture_output=True, timeout=PROBE_SECONDS, check=False, **spawn)  # type: ignore[call-overload]  # spawn holds user and group as subprocess takes them
        except subprocess.TimeoutExpired:
            raise PluginSandboxUnavailable("starting the plugin sandbox did not finish in time") from None
        if done.returncode != 0:
            why = (done.stderr.decode(errors="replace").strip().splitlines() or ["no reason given"])[-1]
            raise PluginSandboxUnavailable(
                f"the bubblewrap sandbox for plugins could not be created here ({why}). Unprivileged user "
                "namespaces must be allowed (sysctl kernel.unprivileged_userns_clone=1 and user.max_user_namespaces "
                "> 0, or an AppArmor profile for bwrap on Ubuntu 24.04 and later)"
            )


def covering(hidden: tuple[Path, ...], bound: tuple[str, ...]) -> list[str]:
    """bwrap options that cover each hidden path lying inside a bound folder (an empty tmpfs over a folder,
    /dev/null over a file): a Python installed next to the data folder must not carry it into the sandbox."""
    args: list[str] = []
    for path in hidden:
        real = os.path.realpath(path)
        if not os.path.lexists(real):
            continue
        if not any(real == folder or real.startswith(folder.rstrip("/") + "/") for folder in bound):
            continue
        args += ["--tmpfs", real] if os.path.isdir(real) else ["--ro-bind", "/dev/null", real]
    return args


def _filled_pipe(data: bytes) -> int:
    """A pipe's read end, holding `data` (its buffer grown to fit, so writing never blocks)."""
    reader, writer = os.pipe()
    try:
        if len(data) > 60_000:
            fcntl.fcntl(writer, fcntl.F_SETPIPE_SZ, min(1 << 20, 1 << (len(data) + 1).bit_length()))
        with os.fdopen(writer, "wb") as pipe:
            pipe.write(data)
    except BaseException:
        os.close(reader)
        raise
    return reader
