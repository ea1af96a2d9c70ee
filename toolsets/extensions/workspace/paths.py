"""Paths inside the workspace folder, and nothing outside it.

A path is relative to the workspace; an absolute path, a `~` path, or one whose real location (after
`..` and symlinks) is outside the folder is refused; `--workspace-strict` refuses every `..` too. The
file is then opened by walking the resolved path one component at a time from the folder's own
descriptor with O_NOFOLLOW, so a symlink swapped in after the check is refused instead of followed.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from toolsets.core.errors import ErrorCode, ToolError

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class WorkspaceRefusal(ToolError):  # noqa: N818 - a refusal the model reads, not a bug
    def __init__(self, message: str) -> None:
        super().__init__(message, code=ErrorCode.FORBIDDEN)


class Workspace:
    def __init__(self, root: Path, *, strict: bool = False) -> None:
        self.root = Path(os.path.realpath(root))
        self.strict = strict
        if not self.root.is_dir():
            raise ValueError(f"the workspace {str(root)!r} is not a folder")

    def inside(self, path: str) -> PurePosixPath:
        """`path` as a symlink-free path relative to the workspace (`.` for the folder itself); refused if outside."""
        if "\x00" in path:
            raise WorkspaceRefusal("A path cannot contain a NUL character.")
        given = PurePosixPath(path.strip() or ".")
        if given.is_absolute() or path.strip().startswith("~"):
            raise WorkspaceRefusal(
                f"{path!r} is an absolute path; give a path relative to the workspace folder, such as 'notes/todo.md'."
            )
        if self.strict and ".." in given.parts:
            raise WorkspaceRefusal(f"{path!r} uses '..', which the server's strict workspace mode refuses.")
        real = os.path.realpath(self.root / given)
        if not within(self.root, real):
            raise WorkspaceRefusal(f"{path!r} leads outside the workspace folder (through '..' or a symlink).")
        return PurePosixPath(os.path.relpath(real, self.root))

    @contextmanager
    def directory(self, relative: PurePosixPath, *, create: bool = False) -> Iterator[int]:
        """A descriptor of the folder `relative` (from `inside`), opened without following any symlink."""
        fd = os.open(self.root, DIR_FLAGS)
        try:
            for part in relative.parts:
                if part == ".":
                    continue
                try:
                    child = os.open(part, DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    os.mkdir(part, 0o755, dir_fd=fd)
                    child = os.open(part, DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    raise _swapped(relative, exc) from None
                os.close(fd)
                fd = child
            yield fd
        finally:
            os.close(fd)

    @contextmanager
    def file(self, relative: PurePosixPath, flags: int, *, create_parents: bool = False) -> Iterator[int]:
        """A descriptor of the file `relative`, its last component opened with O_NOFOLLOW as well."""
        if relative.name in ("", ".", ".."):
            raise WorkspaceRefusal("Name a file, not the workspace folder itself.")
        with self.directory(relative.parent, create=create_parents) as parent:
            try:
                fd = os.open(relative.name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=parent)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.EMLINK):
                    raise _swapped(relative, exc) from None
                raise
            try:
                yield fd
            finally:
                os.close(fd)


def within(root: Path, real: str) -> bool:
    """Whether the resolved path `real` is the folder `root` (itself resolved) or inside it."""
    top = str(root)
    return real == top or real.startswith(top + os.sep)


def _swapped(relative: PurePosixPath, exc: OSError) -> WorkspaceRefusal | OSError:
    if exc.errno in (errno.ELOOP, errno.EMLINK):
        return WorkspaceRefusal(f"'{relative}' changed into a symlink while it was opened; refused.")
    return exc
