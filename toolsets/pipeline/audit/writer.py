"""The audit log's writer: a bounded queue in front of one background thread that masks, encodes and
appends lines, rotating the file by size.

`emit` never blocks and never raises: when the queue is full, or the disk refuses a write, the line is
dropped and counted, and `health()` says `degraded` for a while, so a call is never slowed or failed
by its audit line. The thread starts on the first line and ends after a short idle spell (closing the
file), so idle servers and short-lived test servers hold no thread; at exit, queued lines are written: each log
holds an exit handler of its own while it has lines on their way (and only then, so a log nobody uses any more is
not kept alive by it).
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import contextlib
import functools
import glob
import logging
import os
import re
import stat
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal, Protocol

from toolsets.infra.private_files import FILE_MODE, private_dir
from toolsets.pipeline.audit.record import Entry, masked_arguments, render

if TYPE_CHECKING:
    from toolsets.pipeline.audit.masking import Masker

logger = logging.getLogger("truloop.audit")

# Characters JSON lets through raw inside strings that still break or disguise a line for its readers
# (str.splitlines, JavaScript, editors, terminals): DEL and the C1 controls (NEL, U+0085, among them), the
# Unicode line and paragraph separators, and the bidirectional overrides. The encoder escapes C0 controls.
_RAW_BREAKERS = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_SURROGATE = re.compile("[\ud800-\udfff]")

QUEUE_SIZE = 10_000
BATCH = 512  # lines written per write() at most
BATCH_WAIT = 0.05  # seconds the thread lets lines gather before it writes them
RENDER_DELAY = 0.002  # seconds between a call's entries and their rendering on the event loop
IDLE_SECONDS = 2.0  # the thread ends after this long without lines
DEGRADED_SECONDS = 60.0  # health() says degraded this long after the last dropped line
RETRY_SECONDS = 1.0  # after a failed write, lines are dropped (counted) this long before the file is tried again

Health = Literal["ok", "degraded"]


class AuditSink(Protocol):
    """Where the audit middleware sends a call's entries (`Services.audit`)."""

    def emit(self, entry: Entry) -> None: ...


class AuditLog:
    """JSON lines appended to `path` (rotated at `max_bytes`, `keep` old files `path.1` ... `path.N`),
    or to `stream` (no rotation) when `path` is None."""

    def __init__(
        self,
        path: Path | None,
        *,
        stream: IO[str] | None = None,
        max_bytes: int = 10 * 1024 * 1024,
        keep: int = 5,
        known_secrets: Iterable[str] = (),
        queue_size: int = QUEUE_SIZE,
    ) -> None:
        if (path is None) == (stream is None):
            raise ValueError("give a path or a stream")
        self.path = path
        self._stream = stream
        self.max_bytes = max_bytes
        self.keep = keep
        self._known_secrets = tuple(known_secrets)
        # Rendered lines. A deque's append and popleft are atomic, so the call path takes no lock and wakes
        # no thread; the writer polls every BATCH_WAIT while lines come. `_emitted` is counted by the callers'
        # thread, `_settled` (written or dropped) by the writer: each has one writer, so both stay exact.
        self._lines: collections.deque[str] = collections.deque()
        self._capacity = queue_size
        self._emitted = 0
        self._settled = 0
        self._pending: list[Entry] = []  # emitted on an event loop, rendered RENDER_DELAY later
        self._scheduled = False
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._file: IO[str] | None = None
        self._masked: dict[int, tuple[object, object]] = {}  # id(arguments) of calls whose result is still due
        self._size = 0
        self._regular = True
        self._failing_until = 0.0
        self.written = 0
        self.dropped = 0
        self.last_drop: float | None = None  # monotonic
        self.last_error: str | None = None
        self._exit_hook = False  # `_flush_at_exit` is registered with atexit (lines are on their way)

    def __repr__(self) -> str:
        return f"AuditLog({str(self.path) if self.path else '<stream>'!r})"

    @functools.cached_property
    def masker(self) -> Masker:
        """The masking of arguments, with the server's own secrets: made when the first line is rendered (after
        the first call has answered), as compiling its patterns is a noticeable part of a cold start."""
        from toolsets.pipeline.audit.masking import Masker

        return Masker(self._known_secrets)

    # -- the call path ---------------------------------------------------------------------------------

    def emit(self, entry: Entry) -> None:
        """Take a call's entry. On an event loop it is rendered a moment later, after the call has answered
        (so masking and encoding are off the call's latency); elsewhere at once. Either way it is rendered on
        the caller's thread: the writer thread only joins and writes, holding the GIL for moments."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._accept(entry)
            return
        if len(self._pending) >= self._capacity:
            self._drop(1, "queue full")
            return
        self._pending.append(entry)
        if not self._scheduled:
            self._scheduled = True
            with self._lock:
                self._hold_exit()
            loop.call_later(RENDER_DELAY, self._render_pending)

    def _render_pending(self) -> None:
        self._scheduled = False
        pending, self._pending = self._pending, []
        for entry in pending:
            self._accept(entry)
        with self._lock:
            if self._thread is None:  # nothing was queued (every entry dropped): nothing to wait for at exit
                self._release_exit()

    def _accept(self, entry: Entry) -> None:
        try:
            line = self._render(entry)
        except Exception:
            logger.exception("an audit entry could not be rendered")
            self._drop(1, "unrenderable entry")
            return
        if len(self._lines) >= self._capacity:
            self._drop(1, "queue full")
            return
        self._emitted += 1
        self._lines.append(line)
        with self._lock:  # uncontended; makes "the writer saw no lines and ended" and this check one order
            if self._thread is None:
                self._hold_exit()
                self._thread = threading.Thread(target=self._run, name="truloop-audit", daemon=True)
                self._thread.start()

    def health(self) -> Health:
        recent = self.last_drop is not None and time.monotonic() - self.last_drop < DEGRADED_SECONDS
        return "degraded" if recent else "ok"

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every queued line is written or dropped; False if that took longer than `timeout`.
        Call it from the thread that emits (or after its event loop ended)."""
        self._render_pending()
        deadline = time.monotonic() + timeout
        while self._emitted > self._settled:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.005)
        return True

    # -- the process's exit --------------------------------------------------------------------------------

    def _hold_exit(self) -> None:
        """Lines are on their way: the process's exit writes them first (at most a second). Under `_lock`."""
        if not self._exit_hook:
            self._exit_hook = True
            atexit.register(self._flush_at_exit)

    def _release_exit(self) -> None:
        """Every line is settled and none is pending: the exit has nothing to wait for. Under `_lock`."""
        if self._exit_hook and not self._scheduled:
            self._exit_hook = False
            atexit.unregister(self._flush_at_exit)

    def _flush_at_exit(self) -> None:
        self.flush(timeout=1.0)

    # -- the writer thread -----------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            idle_since = time.monotonic()
            while True:
                if not self._lines:
                    if time.monotonic() - idle_since < IDLE_SECONDS:
                        time.sleep(BATCH_WAIT)
                        continue
                    with self._lock:
                        if not self._lines:  # an emit after this sees no thread and starts one
                            self._thread = None
                            self._close_file()
                            self._release_exit()
                            return
                    continue
                if len(self._lines) < BATCH:
                    time.sleep(BATCH_WAIT)  # gather lines: one write for many calls
                batch: list[str] = []
                with contextlib.suppress(IndexError):
                    while len(batch) < BATCH:
                        batch.append(self._lines.popleft())
                try:
                    self._write(batch)
                finally:
                    self._settled += len(batch)
                idle_since = time.monotonic()
        except BaseException:  # never reached in practice; keeps the counters honest if it is
            logger.exception("the audit writer stopped")
            with self._lock:
                self._thread = None
            raise

    def _render(self, entry: Entry) -> str:
        """A call's two lines share their arguments: masked once, for its tool_call line."""
        arguments = entry.get("arguments")
        key = id(arguments)
        kept = self._masked.pop(key, None) if entry.get("event") == "tool_result" else None
        if kept is not None and kept[0] is arguments:
            masked = kept[1]
        else:
            masked = masked_arguments(arguments, self.masker)
            if entry.get("event") == "tool_call" and arguments is not None:
                if len(self._masked) > 10_000:  # calls that never finished
                    self._masked.clear()
                self._masked[key] = (arguments, masked)
        try:
            line = render(entry, masked)
        except ValueError:  # a lone surrogate (valid in a JSON request's escapes, not in UTF-8): U+FFFD instead
            line = render(_without_surrogates(entry), _without_surrogates(masked))
        return one_line(line) + "\n"

    def _write(self, lines: list[str]) -> None:
        if self._stream is not None:
            try:
                self._stream.write("".join(lines))
                self._stream.flush()
                self.written += len(lines)
            except (OSError, ValueError) as exc:
                self._drop(len(lines), str(exc))
            return
        if time.monotonic() < self._failing_until:
            self._drop(len(lines), self.last_error or "write failed")
            return
        try:
            if self._file is None:
                self._open()
            for line in lines:
                self._append(line)
            assert self._file is not None
            self._file.flush()
        except OSError as exc:  # the buffer is lost with the file: the batch counts as dropped
            self._close_file()
            self._failing_until = time.monotonic() + RETRY_SECONDS
            if self.last_error != exc.strerror:
                logger.warning("cannot write the audit log %s: %s; calls go on, lines are dropped", self.path, exc)
            self._drop(len(lines), exc.strerror or type(exc).__name__)
            return
        self.written += len(lines)

    def _append(self, line: str) -> None:
        size = len(line.encode())
        if self._regular and self._size and self._size + size > self.max_bytes:
            self._rotate()
        assert self._file is not None
        self._file.write(line)
        self._size += size

    def _open(self) -> None:
        assert self.path is not None
        private_dir(self.path.parent)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
        self._file = os.fdopen(fd, "a", encoding="utf-8", newline="\n")
        info = os.fstat(fd)
        self._size = info.st_size
        self._regular = stat.S_ISREG(info.st_mode)  # never rename a device (/dev/full) or a pipe

    def _rotate(self) -> None:
        """tool-calls.jsonl -> .1 -> .2 ... -> .keep (the oldest goes)."""
        assert self.path is not None
        if self._file is not None:
            self._file.flush()  # a failure here is the write's failure, not swallowed by close
        self._close_file()
        if self.keep == 0:
            self.path.unlink(missing_ok=True)
        else:
            for index in range(self.keep - 1, 0, -1):
                older = rotated(self.path, index)
                if older.exists():
                    older.replace(rotated(self.path, index + 1))
            if self.path.exists():
                self.path.replace(rotated(self.path, 1))
        self._open()

    def _close_file(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None

    def _drop(self, count: int, reason: str) -> None:
        self.dropped += count
        self.last_drop = time.monotonic()
        self.last_error = reason


def one_line(line: str) -> str:
    """A JSON line with the characters that could split or disguise it escaped (`\\u2028`): still the same JSON."""
    if line.isascii() and "\x7f" not in line:
        return line
    return _RAW_BREAKERS.sub(lambda match: f"\\u{ord(match.group()):04x}", line)


def _without_surrogates(value: object) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_without_surrogates(key): _without_surrogates(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_without_surrogates(item) for item in value]
    return value


def rotated(path: Path, index: int) -> Path:
    return path.with_name(f"{path.name}.{index}")


def log_files(path: Path) -> list[Path]:
    """The log and its rotated files that exist, oldest first."""
    prefix = path.name + "."
    numbered = [
        (int(p.name[len(prefix) :]), p)
        for p in path.parent.glob(glob.escape(prefix) + "*")
        if p.name[len(prefix) :].isdigit()
    ]
    found = [p for _, p in sorted(numbered, reverse=True)]
    return [*found, path] if path.exists() else found


def stderr_or_stdout(protocol_on_stdout: bool) -> IO[str]:
    """`--audit-log -`: standard output, unless it carries the protocol (stdio), then standard error."""
    return sys.stderr if protocol_on_stdout else sys.stdout
