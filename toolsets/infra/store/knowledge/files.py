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

import logging
import os
from pathlib import Path

from toolsets.infra.contained_open import inside, open_inside
from toolsets.infra.store.errors import DocsFolderMissing

logger = logging.getLogger("truloop.knowledge")

SUFFIXES = (".md", ".markdown", ".txt")
MAX_FILE_BYTES = 8 * 1024 * 1024


def resolve_root(docs_dir: Path) -> Path:
    if not docs_dir.is_dir():
        raise DocsFolderMissing(docs_dir)
    return docs_dir.resolve()


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


def read_inside(root: str, relative: str, limit: int) -> tuple[os.stat_result, bytes] | None:
    """`open_inside`, then at most `limit` bytes of the file opened (None: nothing readable there)."""
    fd = open_inside(root, relative)
    if fd is None:
        return None
    with os.fdopen(fd, "rb", closefd=True) as handle:
        return os.fstat(handle.fileno()), handle.read(limit)
