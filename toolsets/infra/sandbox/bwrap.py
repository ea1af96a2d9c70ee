"""The bwrap command builder both profiles share: the options every sandbox starts with, covering the server's
files where a mounted folder holds them, the environment, and the pipe bwrap reads its options from.

Every sandbox: new user, PID, IPC, UTS, cgroup and network namespaces (the network shared only when asked), every
capability dropped, `--die-with-parent` and `--new-session`, the system folders read-only (a symlink such as
/bin -> usr/bin recreated as one), and only the named entries of /etc plus Python's own. Its options go through a
pipe (`--args FD`), so the sandbox's /proc/1/cmdline does not show the host's paths.
"""

from __future__ import annotations

import fcntl
import glob
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

INSTALL_HINT = (
    "install the `bubblewrap` package (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"
)
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
NETWORK_ETC_ENTRIES = ("resolv.conf", "hosts", "host.conf", "gai.conf")


def base_options(*, network: bool, etc: Iterable[str]) -> list[str]:
    """bwrap's namespaces, privileges, system folders and /etc entries (`NETWORK_ETC_ENTRIES` too with `network`)."""
    args = ["--unshare-all"]
    if network:
        args.append("--share-net")
    args += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--hostname", "sandbox"]
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for name in (*etc, *(NETWORK_ETC_ENTRIES if network else ())):
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    for python_etc in sorted(glob.glob("/etc/python3*")):
        args += ["--ro-bind-try", python_etc, python_etc]
    return args


def covering(hidden: Iterable[Path], mounts: Sequence[tuple[str, str]]) -> list[str]:
    """bwrap options that cover each hidden path lying inside a mounted folder, at the path it has inside (an empty
    tmpfs over a folder, /dev/null over a file); `mounts`: (the folder on the host, where the sandbox sees it). A
    Python installed next to the data folder, or a data folder inside the workspace, must not carry it in."""
    args: list[str] = []
    covered: list[str] = []
    for path in hidden:
        real = os.path.realpath(path)
        if not os.path.lexists(real) or any(_within(done, real) for done in covered):
            continue
        for host, inside in mounts:
            if _within(host.rstrip("/") or "/", real):
                at = os.path.normpath(os.path.join(inside, os.path.relpath(real, host)))
                args += ["--tmpfs", at] if os.path.isdir(real) else ["--ro-bind", "/dev/null", at]
                covered.append(real)
                break
    return args


def environment_options(env: Mapping[str, str]) -> list[str]:
    """The sandbox's whole environment: cleared, then exactly `env`."""
    args = ["--clearenv"]
    for name, value in env.items():
        args += ["--setenv", name, value]
    return args


def option_bytes(options: Iterable[str]) -> bytes:
    """bwrap's options as `--args FD` reads them."""
    return b"".join(option.encode() + b"\0" for option in options)


def filled_pipe(data: bytes) -> int:
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


def _within(folder: str, real: str) -> bool:
    return real == folder or real.startswith(folder.rstrip("/") + "/")
