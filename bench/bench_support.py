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


def thread_cpu_ns(pid: int) -> dict[int, int] | None:
    """Nanoseconds on CPU of each live thread of process `pid`, by thread id: the first field of
    /proc/PID/task/TID/schedstat (Linux; None elsewhere or once the process is gone)."""
    try:
        tids = [int(name) for name in os.listdir(f"/proc/{pid}/task")]
    except (OSError, ValueError):
        return None
    spent: dict[int, int] = {}
    for tid in tids:
        try:
            spent[tid] = int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # the thread ended meanwhile
    return spent


def cpu_ns_between(before: dict[int, int] | None, after: dict[int, int] | None) -> int | None:
    """CPU nanoseconds the threads alive at `after` spent since `before` (a thread that ended in between is
    not counted: its time is lost, which the benchmarks' servers, with long-lived threads, do not hit)."""
    if before is None or after is None:
        return None
    return sum(ns - before.get(tid, 0) for tid, ns in after.items())


def child_pids(pid: int) -> list[int]:
    """Every descendant process of `pid` (Linux /proc/PID/task/TID/children; [] elsewhere)."""
    found: list[int] = []
    queue = [pid]
    while queue:
        parent = queue.pop()
        try:
            tids = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                children = [int(text) for text in Path(f"/proc/{parent}/task/{tid}/children").read_text().split()]
            except (OSError, ValueError):
                continue
            found.extend(children)
            queue.extend(children)
    return found


def peak_rss_kib(pid: int) -> int | None:
    """VmHWM of process `pid` (its peak resident set, KiB; Linux /proc; None elsewhere)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None
