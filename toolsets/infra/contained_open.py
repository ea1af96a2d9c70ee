"""Open a regular file inside a folder, contained, following no symlink out of it (the docs' and plugins' opener).

From the folder's descriptor, one component at a time, with no symlink followed (`O_NOFOLLOW`, `dir_fd`). Standard
library only: the plugin worker imports it too (a plugin's `context.open_data`), as do the docs folder's reads
(`toolsets.infra.store.knowledge.files`).

A symlinked *file* inside the folder is still opened (a docs folder often links one page under two names): the link
is resolved, the resolved path must stay inside, and that path is then opened the same way, no symlink followed, so
a link swapped to point outside between the check and the open is refused (ELOOP) instead of followed.
"""

from __future__ import annotations

import errno
import os
import stat


def inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


_NOFOLLOW_WALK = hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY") and os.open in os.supports_dir_fd
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)


def open_inside(root: str, relative: str) -> int | None:
    """A descriptor of the regular file at `relative` (`/`-separated) inside the folder `root` (resolved), or None.

    Opened from `root`'s descriptor one component at a time with no symlink followed; a symlink as the last
    component is resolved and, if the result stays inside `root`, that path is opened the same way (no symlink
    followed anywhere, so whatever is opened is inside the folder). The caller closes the descriptor.
    """
    parts = relative.split("/")
    if not relative or "\x00" in relative or any(part in ("", ".", "..") for part in parts):
        return None
    if not _NOFOLLOW_WALK:  # no O_NOFOLLOW / dir_fd (not POSIX): check, open, then check the opened file
        return _open_checked(root, parts)
    try:
        return _walk(root, parts)
    except _SymlinkLastError:
        pass
    try:
        target = os.path.realpath(os.path.join(root, *parts))
    except (OSError, ValueError):  # swapped while being resolved
        return None
    if not inside(target, root) or target == root:
        return None
    try:
        return _walk(root, os.path.relpath(target, root).split(os.sep))
    except _SymlinkLastError:  # swapped again since: refused, never followed
        return None


class _SymlinkLastError(Exception):
    """The last component is a symlink."""


def _walk(root: str, parts: list[str]) -> int | None:
    try:
        directory = os.open(root, _OPEN_FLAGS | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        for part in parts[:-1]:
            try:
                child = os.open(part, _OPEN_FLAGS | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=directory)
            except OSError:
                return None  # missing, not a directory, or a symlink (symlinked directories are not descended)
            os.close(directory)
            directory = child
        try:
            # O_NONBLOCK: a FIFO swapped in opens at once (and is refused below) instead of holding the thread
            fd = os.open(parts[-1], _OPEN_FLAGS | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=directory)
        except OSError as error:
            if error.errno == errno.ELOOP and _is_symlink(parts[-1], directory):
                raise _SymlinkLastError from None
            return None
    finally:
        os.close(directory)
    return _regular(fd)


def _is_symlink(name: str, directory: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _regular(fd: int) -> int | None:
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _open_checked(root: str, parts: list[str]) -> int | None:
    for depth in range(1, len(parts)):
        if os.path.islink(os.path.join(root, *parts[:depth])):
            return None
    try:
        target = os.path.realpath(os.path.join(root, *parts))
        if not inside(target, root):
            return None
        fd = os.open(target, _OPEN_FLAGS | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError):
        return None
    try:
        same = os.path.samestat(os.fstat(fd), os.stat(target)) and inside(os.path.realpath(target), root)
    except OSError:
        same = False
    if not same:
        os.close(fd)
        return None
    return _regular(fd)
