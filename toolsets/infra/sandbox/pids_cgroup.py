"""A pids cgroup per call: how the workspace's process cap binds when the server runs as root.

RLIMIT_NPROC never binds for root (the kernel exempts uid 0, and bwrap started by root maps the sandbox's user
to it), so a root server caps a command's processes with the cgroup `pids` controller instead:
`PidsCgroups` finds a pids cgroup folder the server may write (once), and `create` makes a child of it per
call with `pids.max` set, which the command enters before it can fork (`wrap`: a shell writes its own pid to
`cgroup.procs`, then execs the command). `remove` kills what is left in it and removes it.

Where the children go:
- cgroup v2: under the server's own cgroup, when `pids` is in its `cgroup.controllers` and the folder is
  writable (systemd `Delegate=yes`, a container with a writable cgroupfs). The controller is enabled for the
  children (`+pids` in `cgroup.subtree_control`); since a cgroup that holds processes cannot do that, a server
  alone in its cgroup first moves itself into a leaf, `truloop-server` (what systemd asks of delegated units).
- cgroup v1: under the server's cgroup in the `pids` hierarchy (`/sys/fs/cgroup/pids/...`).
A folder given to the constructor is used instead of looking (tests; an operator's own layout).
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import logging
import os
import re
import signal
from dataclasses import dataclass
from pathlib import Path

import anyio

logger = logging.getLogger("truloop.workspace")

PREFIX = "truloop"
SERVER_LEAF = "truloop-server"  # cgroup v2: where a server alone in its cgroup moves itself
REMOVE_WAIT_S = 2.0  # how long `remove` retries before it gives up (and logs)
REMOVE_STEP_S = 0.02
KILL_BATCH = 256  # pidfds open at once while killing what is left (the open-file limit may be 1024)
# Runs as `sh -c JOIN CGROUP ARGV...`: the shell moves itself into the cgroup, then becomes the command.
JOIN = 'echo $$ > "$0/cgroup.procs" && exec "$@"'


@dataclass(frozen=True, slots=True)
class CallCgroup:
    """One call's cgroup."""

    path: Path

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv`, started inside this cgroup: nothing it runs exists outside it."""
        return ["/bin/sh", "-c", JOIN, str(self.path), *argv]


class PidsCgroups:
    """Finds where per-call pids cgroups can be made (once) and makes and removes them."""

    def __init__(self, parent: Path | None = None, *, proc: Path = Path("/proc/self")) -> None:
        self._given = parent  # the folder to use; None: the server's own cgroup, found through `proc`
        self._proc = proc
        self._serial = itertools.count(1)
        self._probed = False
        self._parent: Path | None = None
        self.why = ""  # why there is none, once probed

    def probe(self) -> Path | None:
        """The folder per-call cgroups are made in, or None (with `why` set); looked for once."""
        if not self._probed:
            self._probed = True
            reasons = []
            for folder in [self._given] if self._given is not None else self.candidates():
                why = _prepare(folder)
                if why is None:
                    self._parent = folder
                    logger.info("workspace commands are capped through the pids cgroup %s", folder)
                    break
                reasons.append(f"{folder}: {why}")
            else:
                self.why = "; ".join(reasons) or "the server is in no pids cgroup"
        return self._parent

    def candidates(self) -> list[Path]:
        """The server's own cgroup folders that may hold pids cgroups: the v2 one, then the v1 `pids` one."""
        try:
            memberships = (self._proc / "cgroup").read_text().splitlines()
            mounts = (self._proc / "mountinfo").read_text().splitlines()
        except OSError:
            return []
        found = []
        for v2 in (True, False):
            for line in memberships:
                hierarchy, _, rest = line.partition(":")
                controllers, _, path = rest.partition(":")
                unified = hierarchy == "0" and not controllers
                if unified if v2 else "pids" in controllers.split(","):
                    folder = _mounted(mounts, path, v2=v2)
                    if folder is not None and folder.is_dir():
                        found.append(folder)
        return found

    def create(self, max_pids: int) -> CallCgroup:
        """A new cgroup for one call, at most `max_pids` processes in it; OSError if it cannot be made."""
        parent = self.probe()
        if parent is None:
            raise OSError(errno.ENOENT, f"no pids cgroup ({self.why})")
        for _ in range(100):  # a leftover of an earlier server with the same pid is stepped over
            path = parent / f"{PREFIX}-{os.getpid()}-{next(self._serial)}"
            try:
                path.mkdir()
            except FileExistsError:
                continue
            try:
                (path / "pids.max").write_text(str(max_pids))
            except OSError:
                with contextlib.suppress(OSError):
                    path.rmdir()
                raise
            return CallCgroup(path)
        raise OSError(errno.EEXIST, f"no free cgroup name in {parent}")

    async def remove(self, cgroup: CallCgroup) -> bool:
        """Kill whatever is still in `cgroup` and remove it, retrying briefly; False (logged) if it stays."""
        deadline = anyio.current_time() + REMOVE_WAIT_S
        while True:
            _kill_members(cgroup.path)
            try:
                cgroup.path.rmdir()
                return True
            except FileNotFoundError:
                return True
            except OSError as exc:
                if anyio.current_time() >= deadline:
                    logger.warning("could not remove the pids cgroup %s: %s", cgroup.path, exc)
                    return False
            await anyio.sleep(REMOVE_STEP_S)


def _mounted(mounts: list[str], path: str, *, v2: bool) -> Path | None:
    """Where the cgroup `path` (as /proc/self/cgroup names it) is in the file system, or None."""
    for line in mounts:
        fields, _, tail = line.partition(" - ")
        parts, described = fields.split(), tail.split()
        if len(parts) < 5 or len(described) < 3:
            continue
        fstype, options = described[0], described[2].split(",")
        if fstype != ("cgroup2" if v2 else "cgroup") or (not v2 and "pids" not in options):
            continue
        root, mountpoint = _unescape(parts[3]), _unescape(parts[4])
        relative = os.path.relpath(path, root)
        if relative == ".." or relative.startswith("../"):
            continue  # the cgroup is outside what this mount shows
        return Path(os.path.normpath(os.path.join(mountpoint, relative)))
    return None


def _unescape(field: str) -> str:
    """A mountinfo path: spaces, tabs, newlines and backslashes are octal escapes there."""
    return re.sub(r"\\([0-7]{3})", lambda match: chr(int(match[1], 8)), field)


def _prepare(folder: Path) -> str | None:
    """Make `folder` ready to hold pids cgroups and try one; None when it works, else why not."""
    if not (folder / "cgroup.procs").is_file():
        return "not a cgroup folder"
    if not os.access(folder, os.W_OK):
        return "not writable by the server"
    try:
        if (folder / "cgroup.controllers").is_file():  # cgroup v2
            if "pids" not in (folder / "cgroup.controllers").read_text().split():
                return "the pids controller is not available there"
            _enable_for_children(folder)
        probe = folder / f"{PREFIX}-{os.getpid()}-probe"
        probe.mkdir(exist_ok=True)
        try:
            if not (probe / "pids.max").is_file():
                return "a cgroup made there has no pids.max (not a pids cgroup)"
            (probe / "pids.max").write_text("1")
        finally:
            probe.rmdir()
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def _enable_for_children(folder: Path) -> None:
    """cgroup v2: enable `pids` for `folder`'s children, first moving the server into a leaf if it is alone
    in `folder` (a cgroup with processes of its own cannot enable controllers for its children)."""
    control = folder / "cgroup.subtree_control"
    if "pids" in control.read_text().split():
        return
    try:
        control.write_text("+pids")
        return
    except OSError as exc:
        if exc.errno != errno.EBUSY or _members(folder) != [os.getpid()]:
            raise
    leaf = folder / SERVER_LEAF
    leaf.mkdir(exist_ok=True)
    (leaf / "cgroup.procs").write_text(str(os.getpid()))
    logger.info("moved the server into %s, so that its cgroup can hold per-call pids cgroups", leaf)
    control.write_text("+pids")


def _members(folder: Path) -> list[int]:
    try:
        return [int(pid) for pid in (folder / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _kill_members(folder: Path) -> None:
    """SIGKILL every process in the cgroup `folder`: `cgroup.kill` (cgroup v2), or each one through a pidfd,
    signalled only if its pid is still listed once the pidfd is open (so a reused pid is never hit)."""
    kill = folder / "cgroup.kill"
    if kill.is_file():
        with contextlib.suppress(OSError):
            kill.write_text("1")
            return
    pids = _members(folder)
    for start in range(0, len(pids), KILL_BATCH):
        opened: dict[int, int] = {}
        try:
            for pid in pids[start : start + KILL_BATCH]:
                with contextlib.suppress(OSError):
                    opened[pid] = os.pidfd_open(pid)
            still = set(_members(folder))
            for pid, fd in opened.items():
                if pid in still:
                    with contextlib.suppress(OSError):
                        signal.pidfd_send_signal(fd, signal.SIGKILL)
        finally:
            for fd in opened.values():
                os.close(fd)
