"""What every bubblewrap sandbox of the server starts with (the workspace's commands, sandboxed plugins).

New user, PID, IPC, UTS, cgroup and network namespaces (the network shared only when asked), every capability
dropped, `--die-with-parent` and `--new-session`, the system folders read-only (a symlink such as /bin -> usr/bin
recreated as one), and only the named entries of /etc plus Python's own.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable

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
