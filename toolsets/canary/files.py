"""What a rollout does to the tools folder: promotion to 100% and hard rollback (blocking: run on a thread).

Promotion: the old stable file is kept as `DIR/.history/<stem>.<version>.py`, the candidate's bytes replace the
stable file (written beside it and renamed over it, so the loader never reads half a file), and
`NAME.canary.py` is removed. Hard rollback: `NAME.canary.py` becomes `NAME.canary.py.disabled` (not loaded;
rename it back to try it again). Both do nothing when the files are no longer as the rollout found them (another
replica sharing the folder, or the operator's command, did it first).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

HISTORY = ".history"
DISABLED_SUFFIX = ".disabled"


def version_of(path: Path) -> str | None:
    from toolsets.plugins.source import VERSION_CHARS

    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:VERSION_CHARS]
    except OSError:
        return None


def promote_files(stable: Path, candidate: Path, candidate_version: str) -> Path | None:
    """The candidate becomes the stable file; returns where the old stable file was kept (None: nothing done)."""
    if version_of(candidate) != candidate_version:
        return None
    data = candidate.read_bytes()
    history = stable.parent / HISTORY
    history.mkdir(exist_ok=True)
    kept = None
    old_version = version_of(stable)
    if old_version is not None:
        kept = history / f"{stable.stem}.{old_version}.py"
        kept.write_bytes(stable.read_bytes())
    temporary = stable.with_name(f".{stable.name}.{os.getpid()}.promoting")
    temporary.write_bytes(data)
    temporary.replace(stable)
    candidate.unlink(missing_ok=True)
    return kept or stable


def disable_candidate(candidate: Path, candidate_version: str) -> Path | None:
    """`NAME.canary.py` -> `NAME.canary.py.disabled`; None when the file is gone or holds another version."""
    if version_of(candidate) != candidate_version:
        return None
    target = candidate.with_name(candidate.name + DISABLED_SUFFIX)
    candidate.replace(target)
    return target
