"""The docs folder, read safely (worker threads): which files there are, and their bytes.

Files (`.md`, `.markdown`, `.txt`, recursively; dot-entries skipped) are listed by stat only.
Symlinks are followed only when they stay inside the folder, and symlinked directories are not
descended (no cycles, no escape). A file is read only if the descriptor opened is a regular file.
"""

from __future__ import annotations

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


def read_regular_file(path: str, limit: int) -> tuple[os.stat_result, bytes] | None:
    """Read at most `limit` bytes of `path` if the file *opened* is a regular file, else None.

    O_NONBLOCK: a FIFO (or a device) swapped in after the scan would block `open()` forever and hold a
    worker thread; it opens at once and is then refused by the check on the opened descriptor.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            logger.warning("knowledge index: skipping %s (not a regular file)", path)
            return None
        with os.fdopen(fd, "rb", closefd=True) as handle:
            fd = -1
            return info, handle.read(limit)
    finally:
        if fd >= 0:
            os.close(fd)
