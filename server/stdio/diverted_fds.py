"""fds 0 and 1 diverted while the stdio server serves, and put back afterwards.

While serving, fd 0 reads the null device and fd 1 writes to stderr, so a stray `print` or a child process
cannot corrupt or steal the protocol stream; the protocol itself goes through private copies of both.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field


@dataclass
class Claim:
    """What was changed on fds 0 and 1 while serving, to put back afterwards."""

    saved: dict[int, tuple[int, bool]] = field(default_factory=dict)  # fd -> (its copy, was blocking)

    def divert(self, fd: int, target: int) -> None:
        self.saved[fd] = (os.dup(fd), os.get_blocking(fd))
        os.dup2(target, fd)

    def divert_to_null(self, fd: int) -> None:
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            self.divert(fd, null)
        finally:
            os.close(null)

    def restore(self) -> None:
        for fd, (copy, was_blocking) in self.saved.items():
            with contextlib.suppress(OSError):
                os.set_blocking(copy, was_blocking)  # a shared description (socket, file) gets its mode back
                os.dup2(copy, fd)
            with contextlib.suppress(OSError):
                os.close(copy)
        self.saved.clear()
