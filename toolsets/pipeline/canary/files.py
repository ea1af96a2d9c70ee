"""What a rollout does to the tools folder: promotion to 100% and hard rollback (blocking: run on a thread).

Promotion: the old stable file is kept as `DIR/.history/<stem>.<version>.py`, the candidate's bytes replace the
stable file (written beside it and renamed over it, so the loader never reads half a file), and
`NAME.canary.py` is removed. Hard rollback: `NAME.canary.py` becomes `NAME.canary.py.disabled` (not loaded;
rename it back to try it again). Both do nothing when the files are no longer as the rollout found them (another
replica sharing the folder, or the operator's command, did it first).
"""

from __future__ import annotations

import os
from pathlib import Path

from toolsets.extensions.plugins.source import PluginSource

HISTORY = ".history"
DISABLED_SUFFIX = ".disabled"


def _holding(path: Path, version: str) -> bytes | None:
    """The bytes of `path` when they are `version` (None: gone, unreadable, or another version)."""
    data = _read(path)
    return data if data is not None and PluginSource.version_of(data) == version else None


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def promote_files(stable: Path, candidate: Path, candidate_version: str) -> Path | None:
    """The candidate becomes the stable file; returns where the old stable file was kept (None: nothing done)."""
    data = _holding(candidate, candidate_version)
    if data is None:
        return None
    history = stable.parent / HISTORY
    history.mkdir(exist_ok=True)
    kept = None
    old = _read(stable)
    if old is not None:
        kept = history / f"{stable.stem}.{PluginSource.version_of(old)}.py"
        kept.write_bytes(old)
    temporary = stable.with_name(f".{stable.name}.{os.getpid()}.promoting")
    temporary.write_bytes(data)
    temporary.replace(stable)
    candidate.unlink(missing_ok=True)
    return kept or stable


def disable_candidate(candidate: Path, candidate_version: str) -> Path | None:
    """`NAME.canary.py` -> `NAME.canary.py.disabled`; None when the file is gone or holds another version."""
    if _holding(candidate, candidate_version) is None:
        return None
    target = candidate.with_name(candidate.name + DISABLED_SUFFIX)
    candidate.replace(target)
    return target


def apply(status: str, stable: Path | None, candidate: Path, candidate_version: str) -> Path | None:
    """What a rollout's `status` does to the folder (the server's router and the operator's command alike):
    `promoted` -> `promote_files` (given the stable file), `disabled` -> `disable_candidate`; None: nothing done."""
    if status == "disabled":
        return disable_candidate(candidate, candidate_version)
    if status == "promoted" and stable is not None:
        return promote_files(stable, candidate, candidate_version)
    return None
