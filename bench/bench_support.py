"""What the before/after benchmarks (stdio_bench, http_bench) share: their error, and a past revision to run."""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parent.parent


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
