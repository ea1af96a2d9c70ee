"""Where rollouts live: `CanaryStore` (the protocol), and `LocalCanaryStore` for a single server.

`LocalCanaryStore` keeps samples in memory and, given a path, mirrors the states into a JSON file
(`<data-dir>/canary/state.json`) and appends each sample to a file of its key (`<data-dir>/canary/samples/`;
scheduled runs in files of their own, `...@scheduled.jsonl`), so `truloop-mcp canary ...` on the same machine
reads and changes what the server routes by, and sees the calls it counted (a server that restarts reads them
back too). With `--redis-url`, `redis_store.py` beside this file keeps
both in Redis for every replica.
A state is written only over the revision it was read at (`save(..., expected)`), so one of two concurrent
decisions applies and the other is read back.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import anyio.to_thread

from toolsets.infra.private_files import open_private, private_dir, write_private
from toolsets.pipeline.canary.metrics import Sample
from toolsets.pipeline.canary.policy import MAX_SAMPLES
from toolsets.pipeline.canary.state import CanaryState

SAMPLES = "samples"


class CanaryStore(Protocol):
    async def load(self, tool: str) -> CanaryState | None: ...

    async def save(self, state: CanaryState, expected: int | None) -> bool:
        """Write `state` if the stored one has revision `expected` (None: if there is none); False otherwise."""

    async def all(self) -> list[CanaryState]: ...

    async def record(self, key: str, sample: Sample) -> int:
        """Append a sample; returns how many were ever recorded under `key`."""

    async def samples(self, key: str) -> list[Sample]:
        """The kept samples of `key`, oldest first."""

    async def aclose(self) -> None: ...


class LocalCanaryStore:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._states: dict[str, CanaryState] = {}
        self._seen: tuple[int, int, int] | None = None  # the file's (mtime_ns, size) last read
        self._samples: dict[str, deque[Sample]] = {}
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    async def load(self, tool: str) -> CanaryState | None:
        self._refresh()
        return self._states.get(tool)

    async def all(self) -> list[CanaryState]:
        self._refresh()
        return [self._states[tool] for tool in sorted(self._states)]

    async def save(self, state: CanaryState, expected: int | None) -> bool:
        if self.path is None:
            return self._swap(state, expected)
        return await anyio.to_thread.run_sync(self._save_to_file, state, expected)

    async def record(self, key: str, sample: Sample) -> int:
        kept = self._samples.get(key)
        if kept is None:
            kept = self._samples[key] = deque(self._read_samples(key), maxlen=MAX_SAMPLES)
            self._counts[key] = len(kept)
        kept.append(sample)
        self._counts[key] = self._counts.get(key, 0) + 1
        self._append_sample(key, sample, self._counts[key])
        return self._counts[key]

    async def samples(self, key: str) -> list[Sample]:
        kept = self._samples.get(key)
        if kept is None:  # another process's (the server's, for `canary status`), or from before a restart
            return self._read_samples(key)
        return list(kept)

    # -- the samples' files ----------------------------------------------------------------------------------------

    def _sample_file(self, key: str) -> Path | None:
        if self.path is None:
            return None
        return self.path.parent / SAMPLES / (re.sub(r"[^A-Za-z0-9_.@-]", "_", key) + ".jsonl")

    def _append_sample(self, key: str, sample: Sample, count: int) -> None:
        """One short line appended (a write of a few dozen bytes: not worth a thread hop); the file is cut back to
        the newest `MAX_SAMPLES` when it holds twice as many."""
        file = self._sample_file(key)
        if file is None:
            return
        try:
            private_dir(file.parent)
            with open_private(file, "a", encoding="utf-8") as handle:
                handle.write(sample.encode() + "\n")
            if count % MAX_SAMPLES == 0 and count >= 2 * MAX_SAMPLES:
                kept = list(self._samples.get(key, ()))
                temporary = file.with_name(f".{file.name}.{os.getpid()}.tmp")
                write_private(temporary, "".join(s.encode() + "\n" for s in kept))
                temporary.replace(file)
        except OSError:
            pass  # the canary never fails a call; this process's own samples stay in memory

    def _read_samples(self, key: str) -> list[Sample]:
        file = self._sample_file(key)
        if file is None:
            return []
        try:
            lines = file.read_text(encoding="utf-8").splitlines()[-MAX_SAMPLES:]
        except OSError:
            return []
        found = []
        for line in lines:
            with contextlib.suppress(ValueError, TypeError):
                found.append(Sample.decode(line))
        return found

    async def aclose(self) -> None:
        return None

    # -- the file mirror -----------------------------------------------------------------------------------------

    def _swap(self, state: CanaryState, expected: int | None) -> bool:
        current = self._states.get(state.tool)
        if (current.revision if current is not None else None) != expected:
            return False
        self._states[state.tool] = state
        return True

    def _save_to_file(self, state: CanaryState, expected: int | None) -> bool:
        assert self.path is not None
        with self._lock, _file_lock(self.path):
            self._seen = None
            self._refresh()  # what another process (the operator's command) wrote meanwhile
            if not self._swap(state, expected):
                return False
            private_dir(self.path.parent)
            data = {tool: s.model_dump(mode="json") for tool, s in sorted(self._states.items())}
            temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            write_private(temporary, json.dumps(data, ensure_ascii=False, indent=1))
            temporary.replace(self.path)
            self._seen = _signature(self.path)
            return True

    def _refresh(self) -> None:
        if self.path is None:
            return
        signature = _signature(self.path)
        if signature == self._seen:
            return
        self._seen = signature
        if signature is None:
            self._states = {}
            return
        try:
            raw = json.loads(self.path.read_text())
            self._states = {tool: CanaryState.model_validate(value) for tool, value in raw.items()}
        except (OSError, ValueError):
            self._seen = None  # half written or unreadable: keep what we had, look again next time


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size, info.st_ino


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    import fcntl

    with open_private(path.with_name(path.name + ".lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
