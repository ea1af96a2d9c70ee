"""The plugin worker profile: Python in bubblewrap as an unprivileged user, seeing nothing of the server.

What runs there: a plugin worker (toolsets/extensions/plugins/sandboxed.py hands it its code) and code mode's
interpreters (toolsets/extensions/codemode/). When the server runs as root, bwrap itself is started as `nobody`
(uid 65534), so the sandbox's processes are owned by that uid on the host too, never by root; otherwise as the
server's own user, seen inside as 65534. New user, PID, IPC, UTS, cgroup and network namespaces (the network only
when allowed: `--plugin-network`), no capabilities, `no_new_privs`, the system folders read-only, a private /tmp
(a plugin's `data_dir` lives there), a fixed environment, and nothing of the server: no data folder, store, audit
log, tools folder, home folder, sockets, environment or processes (its /proc is the new PID namespace's).

Files the program needs arrive through pipes (`--ro-bind-data`), so nothing of the project's folders needs to be
visible. The interpreter is the server's own when the sandbox's user can read it, else the system's
`/usr/bin/python3`; the server's site-packages are visible read-only (with the server's own interpreter) so that
operator plugins find their libraries.

Limits, set with `prlimit` inside the new user namespace (the kernel counts processes per user namespace, so the
process cap is per sandbox and binds whoever runs the server): `PLUGIN_WORKER_LIMITS` unless the config names
others (code mode's).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import sysconfig
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path

import anyio
from anyio.abc import Process

from toolsets.infra.child_env import SYSTEM_PATH
from toolsets.infra.sandbox.bwrap import (
    INSTALL_HINT,
    SYSTEM_DIRS,
    base_options,
    covering,
    environment_options,
    filled_pipe,
    option_bytes,
)
from toolsets.infra.sandbox.config import PLUGIN_WORKER_LIMITS, SandboxConfig, SandboxUnavailable

SANDBOX_UID = 65534  # nobody: the sandbox's user inside, and on the host when the server is root
DATA_AT = "/tmp/plugin-data"
PROBE_SECONDS = 15.0
# users and groups by name, the dynamic linker, time zones, certificates (for --plugin-network)
PLUGIN_ETC_ENTRIES = (
    "passwd", "group", "nsswitch.conf", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "ssl",
    "ca-certificates",
)  # fmt: skip


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


class PluginWorkerSandbox:
    """Starts Python in a fresh sandbox per process; one per use (plugins, code mode), built from the settings."""

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self.config = config or SandboxConfig()
        if self.config.folder is not None or self.config.unsandboxed:
            raise ValueError("the plugin worker has no data folder and is never unsandboxed")
        self.limits = self.config.limits or PLUGIN_WORKER_LIMITS

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
            raise SandboxUnavailable(
                f"the plugin sandbox runs as an unprivileged user (uid {SANDBOX_UID}), who cannot read this server's "
                f"Python ({own}); install the server in a folder others can read (e.g. /opt) or install python3 "
                f"{own_version} from the system's packages"
            )
        sites = tuple(s for s in sites if os.path.isdir(s) and self._visible(s))
        binds = tuple(p for p in (prefix, *sites) if not any(p.startswith(d + "/") or p == d for d in SYSTEM_DIRS))
        return python, binds, sites

    def options(self) -> list[str]:
        """bwrap's options, before its `--`."""
        args = base_options(network=self.config.network, etc=PLUGIN_ETC_ENTRIES)
        args += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
        args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", DATA_AT]
        _, binds, _ = self.interpreter
        for folder in binds:
            args += ["--ro-bind", folder, folder]
        args += covering(self.config.hidden, [(folder, folder) for folder in (*binds, *SYSTEM_DIRS)])
        env = {"PATH": SYSTEM_PATH, "HOME": "/tmp", "LANG": "C.UTF-8", "TMPDIR": "/tmp"}
        return [*args, "--chdir", "/tmp", *environment_options(env)]

    def command(self, bwrap: str, program: Sequence[str]) -> list[str]:
        """The command line inside the sandbox (bwrap's options go separately, through a pipe): Python with
        `program` (its arguments after `-I`), under the limits."""
        python, _, _ = self.interpreter
        prlimit = shutil.which("prlimit", path=SYSTEM_PATH)
        if prlimit is None:
            raise SandboxUnavailable("the plugin sandbox needs `prlimit` (util-linux) for its limits")
        return [bwrap, "--", prlimit, *self.limits.prlimit_options(), "--", python, "-I", *program]

    # -- starting ------------------------------------------------------------------------------------------

    def bwrap(self) -> str:
        found = shutil.which(self.config.bwrap)
        if found is None:
            raise SandboxUnavailable(
                f"plugins and the tools the model writes run in a bubblewrap sandbox, and `{self.config.bwrap}` is "
                f"not installed: {INSTALL_HINT}"
            )
        return found

    @cached_property
    def _option_bytes(self) -> bytes:
        """bwrap's options as `--args` reads them (the same for every process: computed once)."""
        return option_bytes(self.options())

    @contextmanager
    def _started_as(
        self, program: Sequence[str], files: Mapping[str, bytes]
    ) -> Iterator[tuple[list[str], dict[str, object]]]:
        """(the whole command line, the spawn's keyword arguments) of one sandbox: bwrap's options and `files` (their
        paths inside, read-only) in pipes (`--args FD`, `--ro-bind-data FD`), closed on our side once it started."""
        command = self.command(self.bwrap(), program)
        options_fd = filled_pipe(self._option_bytes)
        fds = [options_fd]
        pipes = ["--args", str(options_fd)]
        try:
            for inside, data in files.items():
                fd = filled_pipe(data)
                fds.append(fd)
                pipes += ["--ro-bind-data", str(fd), inside]
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
            raise SandboxUnavailable("the plugin sandbox needs `setpriv` (util-linux) to leave root")
        return [setpriv, f"--reuid={user}", f"--regid={user}", "--clear-groups", "--", *argv]

    async def open_program(
        self, program: Sequence[str], *, files: Mapping[str, bytes] | None = None, stderr: int = -3
    ) -> Process:
        """Python with `program` (its arguments after `-I`) in a fresh sandbox, `files` readable inside: stdin and
        stdout pipes (the protocol), stderr a pipe (-1) or dropped (-3, code mode's interpreters)."""
        with self._started_as(program, files or {}) as (argv, spawn):
            return await anyio.open_process(argv, stdin=-1, stdout=-1, stderr=stderr, **spawn)  # type: ignore[arg-type]  # spawn holds user and group as anyio takes them

    def probe(self) -> None:
        """Start one sandbox and run Python in it (synchronously, once, at start); SandboxUnavailable naming the fix
        when it cannot run here."""
        try:
            with self._started_as(["-c", "import sys; sys.exit(0)"], {}) as (argv, spawn):
                done = subprocess.run(argv, capture_output=True, timeout=PROBE_SECONDS, check=False, **spawn)  # type: ignore[call-overload]  # spawn holds user and group as subprocess takes them
        except subprocess.TimeoutExpired:
            raise SandboxUnavailable("starting the plugin sandbox did not finish in time") from None
        if done.returncode != 0:
            why = (done.stderr.decode(errors="replace").strip().splitlines() or ["no reason given"])[-1]
            raise SandboxUnavailable(
                f"the bubblewrap sandbox for plugins could not be created here ({why}). Unprivileged user "
                "namespaces must be allowed (sysctl kernel.unprivileged_userns_clone=1 and user.max_user_namespaces "
                "> 0, or an AppArmor profile for bwrap on Ubuntu 24.04 and later)"
            )
