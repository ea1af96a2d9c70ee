"""The files of one authored tool, and the blocking operations on them (run them on a thread).

`NAME.py` the stable file, `NAME.canary.py` a candidate, `NAME.py.pending` a new tool not yet serving,
`NAME.canary.py.pending` a new version that failed its rehearsal, `NAME.canary.py.disabled` a candidate rolled back
hard. Writes go to a hidden file beside the target and are
renamed over it, so the plugin loader never reads half a file; a removed or replaced file is kept under
`DIR/.history/` (named with its version), never simply lost.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from toolsets.extensions.plugins.source import PluginSource
from toolsets.pipeline.canary.files import DISABLED_SUFFIX, HISTORY

NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
PENDING_SUFFIX = ".py.pending"


def name_problem(name: str) -> str | None:
    """Why `name` cannot name an authored tool (None: it can): a letter, then letters, digits or `_`, at most 64;
    so no path separator, no dot, no leading `_` (the loader skips those) and nothing a shell would read."""
    if NAME.fullmatch(name):
        return None
    return (
        f"{name!r} is not a valid tool name: use a letter, then letters, digits or underscores (at most 64), "
        "e.g. 'word_stats'"
    )


@dataclass(frozen=True, slots=True)
class ToolFiles:
    folder: Path
    name: str

    @property
    def stable(self) -> Path:
        return self.folder / f"{self.name}.py"

    @property
    def candidate(self) -> Path:
        return self.folder / f"{self.name}.canary.py"

    @property
    def pending(self) -> Path:
        return self.folder / f"{self.name}{PENDING_SUFFIX}"

    @property
    def disabled(self) -> Path:
        return self.folder / f"{self.name}.canary.py{DISABLED_SUFFIX}"

    @property
    def candidate_pending(self) -> Path:
        """A new version of a served tool that failed its rehearsal: kept, never loaded."""
        return self.folder / f"{self.name}.canary{PENDING_SUFFIX}"

    @property
    def candidate_key(self) -> str:
        """Its entry in the ledger (beside the tool's own)."""
        return f"{self.name}.canary"

    def all(self) -> tuple[Path, ...]:
        return self.stable, self.candidate, self.pending, self.disabled, self.candidate_pending


def write_file(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.writing")
    temporary.write_bytes(data)
    temporary.replace(path)


def keep(path: Path) -> Path | None:
    """Move `path` under DIR/.history/ (named with its version); None when there was no such file."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    history = path.parent / HISTORY
    history.mkdir(exist_ok=True)
    kept = history / f"{path.name}.{PluginSource.version_of(data)}"
    path.replace(kept)
    return kept


def promote_pending(files: ToolFiles, version: str) -> bool:
    """`NAME.py.pending` -> `NAME.py` (a broken `NAME.py` that served nothing is kept in history first), when the
    pending file still holds `version`."""
    data = read(files.pending)
    if data is None or PluginSource.version_of(data) != version:
        return False
    keep(files.stable)
    files.pending.replace(files.stable)
    return True


def demote(files: ToolFiles, version: str) -> bool:
    """`NAME.py` -> `NAME.py.pending` (a failed trial), when the file still holds `version`."""
    data = read(files.stable)
    if data is None or PluginSource.version_of(data) != version:
        return False
    files.stable.replace(files.pending)
    return True


def read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def folder_files(folder: Path) -> list[str]:
    """The names the authoring tools deal with: plugin files, pending and disabled ones (not helpers, not hidden)."""
    try:
        names = sorted(entry.name for entry in folder.iterdir() if entry.is_file())
    except OSError:
        return []
    endings = (".py", PENDING_SUFFIX, DISABLED_SUFFIX)
    return [name for name in names if not name.startswith(("_", ".")) and name.endswith(endings)]
