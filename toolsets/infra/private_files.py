"""Folders and files only their owner can read: the data folder and what the product keeps in it.

The data folder holds every user's memories, events and messages (the SQLite store), who called which tool (the
audit log), the canary state and the plugins' own folders. Another account on the machine must read none of it,
whatever the process umask: every folder is created 0700 and every file 0600 (SQLite's `-wal` and `-shm` take
their mode from the database file). Existing folders and files keep the mode they have (an operator may have
chosen it); `loose_modes` lists those that others can read, so the server can say once, at start, what `chmod`
to run.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import stat
from pathlib import Path
from typing import IO, Any

DIR_MODE = 0o700
FILE_MODE = 0o600
# Looked into one level down (each plugin's own folder, not what it holds); the docs folder is the operator's.
_LOOKED_INTO = ("audit", "canary", "plugins")
_NOT_LOOKED_AT = ("docs",)

logger = logging.getLogger("truloop.files")


def private_dir(path: Path) -> Path:
    """`path` as a folder, created 0700 with each missing parent; existing folders are left as they are."""
    path = Path(path)
    missing: list[Path] = []
    current = path
    while not os.path.isdir(current) and current.parent != current:
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, DIR_MODE)
        except FileExistsError:
            if not os.path.isdir(folder):
                raise
    return path


def private_opener(path: str | os.PathLike[str], flags: int) -> int:
    """An `opener` for `open()`: a file it creates is 0600 (an existing file keeps its mode)."""
    return os.open(path, flags, FILE_MODE)


def open_private(path: Path, mode: str = "a", **options: Any) -> IO[Any]:
    """`open(path, mode)`, the file created 0600 if it is new (its folder 0700)."""
    private_dir(Path(path).parent)
    return open(path, mode, opener=private_opener, **options)


def private_file(path: Path) -> Path:
    """`path` created empty with mode 0600 if it is missing (its folder 0700); an existing file is untouched."""
    if os.path.lexists(path):  # never opened for writing: a read-only store stays readable
        return path
    private_dir(Path(path).parent)
    with contextlib.suppress(FileExistsError):  # another process made it meanwhile
        os.close(private_opener(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
    return path


def write_private(path: Path, data: str | bytes) -> None:
    """Write `data` (text as UTF-8) to `path`, created 0600 if it is new; replaces what was there."""
    with open_private(path, "wb") as handle:
        handle.write(data.encode() if isinstance(data, str) else data)


def loose_modes(data_dir: Path, extra: tuple[Path, ...] = ()) -> list[str]:
    """The `chmod` commands that would make `data_dir` (and `extra` files) private again: the folder, the files
    at its top, and the folders and files in its audit/, canary/ and plugins/ (not deeper, never the docs)."""
    commands: list[str] = []
    folders: list[str] = []
    files: list[str] = []
    seen: set[Path] = set()

    def check(path: Path) -> os.stat_result | None:
        if path in seen:
            return None
        seen.add(path)
        try:
            info = path.lstat()
        except OSError:
            return None
        if stat.S_ISLNK(info.st_mode) or not info.st_mode & 0o077:
            return info
        if stat.S_ISDIR(info.st_mode):
            folders.append(str(path))
        elif stat.S_ISREG(info.st_mode):
            files.append(str(path))
        return info

    top = check(data_dir)
    if top is not None and stat.S_ISDIR(top.st_mode):
        for entry in _entries(data_dir):
            if entry.name in _NOT_LOOKED_AT:
                continue
            info = check(entry)
            if info is not None and stat.S_ISDIR(info.st_mode) and entry.name in _LOOKED_INTO:
                for inner in _entries(entry):
                    check(inner)
    for path in extra:
        check(path)
    if folders:
        commands.append("chmod 700 " + " ".join(shlex.quote(folder) for folder in folders))
    if files:
        commands.append("chmod 600 " + " ".join(shlex.quote(file) for file in files))
    return commands


def warn_if_loose(data_dir: Path, extra: tuple[Path, ...] = ()) -> list[str]:
    """One warning line naming the `chmod` to run when the data folder or its files are readable by others."""
    commands = loose_modes(data_dir, extra)
    if commands:
        logger.warning(
            "the data folder %s holds private data that other users of this machine can read; run: %s",
            data_dir,
            "; ".join(commands),
        )
    return commands


def _entries(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as found:
            return [Path(entry.path) for entry in found]
    except OSError:
        return []
