"""What a sandbox is made from: its configuration, its limits, and the refusal when it cannot run here.

One `SandboxConfig` and one `Limits` for both profiles; each profile reads the fields it has (the workspace its
folder and `unsandboxed`, the plugin worker neither) and its own limits when the config names none.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from toolsets.core.errors import ErrorCode, ToolError


class SandboxUnavailable(ToolError):  # noqa: N818 - a refusal the model (and the operator) reads
    """The sandbox cannot run here (no bwrap, no user namespaces, no prlimit, no process cap); says the fix."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code=ErrorCode.NOT_CONFIGURED)


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-process resource limits, set with `prlimit` inside the sandbox's own user namespace; 0 leaves one unset.

    `processes` is at once, per sandbox: not as root RLIMIT_NPROC, which the kernel (5.14 and later) counts per user
    namespace, so the count is the sandbox's own processes; as root (where it never binds) the workspace holds the
    same number with a pids cgroup per call (pids_cgroup.py), and the plugin worker runs as `nobody`."""

    processes: int = 0
    address_space: int = 0  # bytes of virtual memory per process
    open_files: int = 0
    file_size: int = 0  # bytes of the largest file a process may write
    cpu_seconds: int = 0  # CPU time of one process over its life

    def prlimit_options(self) -> list[str]:
        """`prlimit`'s options for the limits that are set."""
        named = (
            ("nproc", self.processes),
            ("as", self.address_space),
            ("nofile", self.open_files),
            ("fsize", self.file_size),
            ("cpu", self.cpu_seconds),
        )
        return [f"--{name}={value}" for name, value in named if value > 0]


# A workspace command: 4 GiB of address space, files of at most 1 GiB, 1,024 processes at once per call.
WORKSPACE_LIMITS = Limits(processes=1024, address_space=4 << 30, file_size=1 << 30)
# A plugin worker: 1,024 processes (a fork bomb never takes more), 2 GiB of address space per process, 256 open
# files, files of at most 64 MiB (in its private /tmp), 600 CPU seconds over its life (past it, it is restarted).
PLUGIN_WORKER_LIMITS = Limits(
    processes=1024, address_space=2 << 30, open_files=256, file_size=64 << 20, cpu_seconds=600
)


@dataclass(frozen=True, slots=True)
class SandboxConfig:
    folder: Path | None = None  # the workspace: mounted writable at /workspace (the plugin worker has none)
    network: bool = False  # --workspace-network, --plugin-network: share the host's network (its ports included)
    unsandboxed: bool = False  # the workspace's --workspace-unsandboxed: no bwrap at all (unsafe)
    # the server's own files (data folder, tools folder, audit log): covered where a mounted folder holds them
    hidden: tuple[Path, ...] = ()
    limits: Limits | None = None  # None: the profile's own (WORKSPACE_LIMITS, PLUGIN_WORKER_LIMITS)
    bwrap: str = "bwrap"  # the program, looked up on the server's PATH unless a path
