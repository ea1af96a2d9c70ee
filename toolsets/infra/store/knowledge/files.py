"""The docs folder, read safely (worker threads): which files there are, and their bytes.

Files (`.md`, `.markdown`, `.txt`, recursively; dot-entries skipped) are listed by stat only.
Symlinks are followed only when they stay inside the folder, and symlinked directories are not
descended (no cycles, no escape). A file is read only if the descriptor opened is a regular file.

A file is opened the way it was checked (`open_inside`): from the folder's descriptor, one component at a time,
no symlink followed (`O_NOFOLLOW`, `dir_fd`). A symlinked *file* inside the folder is still served, deliberately
(a docs folder often links one page under two names): the link is resolved, the resolved path must stay inside,
and that path is then opened the same way, no symlink followed, so a link swapped to point outside between the
check and the open is refused (ELOOP) instead of followed. Checking a path and then opening it by name let a
symlink renamed over a document in between leak the file it pointed to.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from pathlib import Path

from toolsets.infra.store.errors import DocsFolderMissing

logger = logging.getLogger("truloop.knowledge")

SUFFIXES = (".md", ".markdown", ".txt")
MAX_FILE_BYTES = 8 * 1024 * 1024


def resolve_root(docs_dir: Path) -> Path:
    if not docs_dir.is_dir():
        raise DocsFolderMissing(docs_dir)
    return docs_dir.resolve()


def inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def scan(root: Path) -> dict[str, tuple[int, int]]:
    """Relative path -> (mtime_ns, size) of every indexable file; stat only, no reads."""
    root_text = str(root)
    found: dict[str, tuple[int, int]] = {}
    pending = [root_text]
    while pending:
        directory = pending.pop()
        try:
            entries = os.scandir(directory)
        except OSError:
            continue
        with entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
                        continue
                    if not entry.name.lower().endswith(SUFFIXES):
                        continue
                    if entry.is_symlink():
                        target = os.path.realpath(entry.path)
                        if not inside(target, root_text) or not os.path.isfile(target):
                            continue
                        info = os.stat(target)
                    elif entry.is_file(follow_symlinks=False):
                        info = entry.stat(follow_symlinks=False)
                    else:
                        continue
                except OSError:
                    continue
                if info.st_size > MAX_FILE_BYTES:
                    logger.warning("knowledge index: skipping %s (larger than %d bytes)", entry.path, MAX_FILE_BYTES)
                    continue
                relative = os.path.relpath(entry.path, root_text).replace(os.sep, "/")
                found[relative] = (info.st_mtime_ns, info.st_size)
    return found


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


def read_inside(root: str, relative: str, limit: int) -> tuple[os.stat_result, bytes] | None:
    """`open_inside`, then at most `limit` bytes of the file opened (None: nothing readable there)."""
    fd = open_inside(root, relative)
    if fd is None:
        return None
    with os.fdopen(fd, "rb", closefd=True) as handle:
        return os.fstat(handle.fileno()), handle.read(limit)
