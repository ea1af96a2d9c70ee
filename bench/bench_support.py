"""What the benchmarks share: their error, a past revision to run, and a server process's CPU time."""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parent.parent
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class BenchError(RuntimeError):
    pass


@contextlib.contextmanager
def exported_revision(ref: str, prefix: str) -> Iterator[Path]:
    """The project at git revision `ref`, exported (read-only for the repository) into a temporary folder."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        archive = subprocess.run(["git", "-C", str(PROJECT_DIR), "archive", ref], capture_output=True, check=False)
        if archive.returncode != 0:
            raise BenchError(f"git archive {ref} failed: {archive.stderr.decode(errors='replace').strip()}")
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        yield Path(tmp)


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds process `pid` has used so far (Linux /proc; None elsewhere)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
