"""The stdio transports against a real `truloop-mcp` subprocess: pipelined bursts and a client that stops reading
(the lean front, server/stdio/lean_front.py, on the asyncio pipes of server/stdio/pipes.py), stdin and stdout as
regular files and as terminals (it and the SDK's `stdio_server` fed by server/stdio/sdk_transport.py, `plain`); and
the line splitter in-process."""

from __future__ import annotations

import datetime as dt
import json
import os
import pty
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from server.stdio.line_check import LineSplitter, Oversized
from tests.support import FAST_AND_PLAIN, INIT, INITIALIZED, TRULOOP, paths_env

pytestmark = pytest.mark.slow

FIRST_DAY = dt.date(2026, 1, 1)


def date_of(request_id: int) -> dt.date:
    return FIRST_DAY + dt.timedelta(days=request_id % 3650)


def call(request_id: int) -> bytes:
    params = {"name": "get_day_of_week", "arguments": {"date": date_of(request_id).isoformat()}}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}).encode() + b"\n"


def opening() -> bytes:
    return json.dumps(INIT).encode() + b"\n" + json.dumps(INITIALIZED).encode() + b"\n"


def check_answers(replies: list[dict[str, Any]], count: int) -> None:
    """Every call 0..count-1 answered exactly once, each with the weekday of its own date."""
    calls = [reply for reply in replies if isinstance(reply.get("id"), int)]
    ids = [reply["id"] for reply in calls]
    assert len(ids) == count and set(ids) == set(range(count)), f"{len(ids)} replies, {len(set(ids))} distinct"
    for reply in calls:
        expected = date_of(reply["id"])
        assert reply["result"]["structuredContent"] == {
            "date": expected.isoformat(),
            "day_of_week": expected.strftime("%A"),
            "iso_weekday": expected.isoweekday(),
        }, reply


def spawn(tmp_path: Path, fast_paths: bool = True, **streams: Any) -> subprocess.Popen[bytes]:
    options: dict[str, Any] = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    options.update(streams)
    args = [TRULOOP, "--data-dir", str(tmp_path / "data"), "--timezone", "Asia/Seoul"]
    return subprocess.Popen(args, env=paths_env(fast_paths), **options)


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


class Collector:
    """Reads a child's stdout (JSON lines) and stderr on threads; `paused` holds the stdout reader back."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.replies: list[dict[str, Any]] = []
        self.stderr = bytearray()
        self.reading = threading.Event()
        self.reading.set()
        self._threads = [
            threading.Thread(target=self._out, daemon=True),
            threading.Thread(target=self._err, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _out(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.replies.append(json.loads(raw))
            self.reading.wait()

    def _err(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            self.stderr += raw

    def join(self, timeout: float) -> None:
        for thread in self._threads:
            thread.join(timeout)


def test_a_pipelined_burst_of_10k_calls_is_answered_without_loss_or_mixing(tmp_path: Path) -> None:
    count = 10_000
    proc = spawn(tmp_path)
    collector = Collector(proc)
    assert proc.stdin is not None
    payload = opening() + b"".join(call(n) for n in range(count))
    proc.stdin.write(payload)  # all at once: the server reads as fast as it answers
    proc.stdin.close()
    assert proc.wait(timeout=120) == 0, bytes(collector.stderr[-2000:])
    collector.join(10)
    assert b"Traceback" not in collector.stderr
    check_answers(collector.replies, count)


def test_a_client_that_stops_reading_stops_the_server_reading_and_memory_stays_bounded(tmp_path: Path) -> None:
    count = 30_000  # far more answers than the pipes and asyncio's write buffer can hold
    proc = spawn(tmp_path)
    collector = Collector(proc)
    assert proc.stdin is not None
    proc.stdin.write(opening())
    proc.stdin.flush()
    deadline = time.monotonic() + 20
    while not collector.replies and time.monotonic() < deadline:
        time.sleep(0.02)
    assert collector.replies, "no reply to initialize"

    collector.reading.clear()  # the client stops reading
    written = [0]

    def write_all() -> None:
        assert proc.stdin is not None
        for n in range(count):
            proc.stdin.write(call(n))
            written[0] = n + 1
        proc.stdin.close()

    writer = threading.Thread(target=write_all, daemon=True)
    writer.start()
    deadline = time.monotonic() + 30  # the server reads until its answers back up: wait for the writer to stall
    previous = -1
    while written[0] != previous and time.monotonic() < deadline:
        previous = written[0]
        time.sleep(0.5)
    before = rss_kib(proc.pid)
    stalled_at = written[0]
    time.sleep(2.0)
    after = rss_kib(proc.pid)
    assert written[0] < count, "the server kept reading although nobody read its answers"
    assert written[0] - stalled_at < 2000, f"the server read {written[0] - stalled_at} more calls while blocked"
    assert after - before < 16 * 1024, f"RSS grew by {(after - before) // 1024} MiB while the client did not read"

    collector.reading.set()  # the client reads again: everything is answered
    writer.join(60)
    assert proc.wait(timeout=120) == 0, bytes(collector.stderr[-2000:])
    collector.join(10)
    check_answers(collector.replies, count)


@FAST_AND_PLAIN
def test_stdin_and_stdout_as_regular_files(tmp_path: Path, fast_paths: bool) -> None:
    requests, answers = tmp_path / "requests.jsonl", tmp_path / "answers.jsonl"
    requests.write_bytes(opening() + b"".join(call(n) for n in range(500)) + b"not json\n")
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        proc = spawn(tmp_path, fast_paths, stdin=stdin, stdout=stdout)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    replies = [json.loads(line) for line in answers.read_bytes().splitlines()]
    check_answers(replies, 500)
    assert [r["error"]["code"] for r in replies if r.get("id") is None] == [-32700]


@FAST_AND_PLAIN
def test_stdin_as_a_regular_file_and_stdout_as_a_pipe(tmp_path: Path, fast_paths: bool) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(opening() + b"".join(call(n) for n in range(200)))
    with requests.open("rb") as stdin:
        proc = spawn(tmp_path, fast_paths, stdin=stdin)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    check_answers([json.loads(line) for line in out.splitlines()], 200)


def raw_terminal() -> tuple[int, int]:
    """A pty pair whose terminal side neither echoes nor translates (what a program reading JSON lines wants)."""
    import tty

    parent, child = pty.openpty()
    tty.setraw(child)
    return parent, child


def read_lines_from(fd: int, count: int, timeout: float) -> list[dict[str, Any]]:
    buffer, lines = b"", []
    deadline = time.monotonic() + timeout
    while len(lines) < count and time.monotonic() < deadline:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the terminal's other side is closed
            break
        buffer += chunk
        *done, buffer = buffer.split(b"\n")
        lines += [json.loads(line) for line in done if line.strip()]
    return lines


@FAST_AND_PLAIN
def test_stdin_as_a_terminal(tmp_path: Path, fast_paths: bool) -> None:
    parent, child = pty.openpty()  # canonical mode, as a person types: a line at a time
    try:
        proc = spawn(tmp_path, fast_paths, stdin=child)
        collector = Collector(proc)
        os.write(parent, opening() + b"".join(call(n) for n in range(20)))
        deadline = time.monotonic() + 30
        while len(collector.replies) < 21 and time.monotonic() < deadline:
            time.sleep(0.02)
        os.write(parent, b"\x04")  # Ctrl-D at the start of a line: end of input
        assert proc.wait(timeout=20) == 0, bytes(collector.stderr)
        collector.join(5)
        check_answers(collector.replies, 20)
        assert os.get_blocking(child), "the terminal was left non-blocking for whoever shares it"
    finally:
        os.close(parent)
        os.close(child)


@FAST_AND_PLAIN
def test_stdout_as_a_terminal(tmp_path: Path, fast_paths: bool) -> None:
    parent, child = raw_terminal()
    try:
        proc = spawn(tmp_path, fast_paths, stdout=child)
        assert proc.stdin is not None
        proc.stdin.write(opening() + b"".join(call(n) for n in range(50)))
        proc.stdin.close()
        replies = read_lines_from(parent, 51, timeout=30)
        assert proc.wait(timeout=20) == 0
        check_answers(replies, 50)
        assert os.get_blocking(child), "the terminal was left non-blocking for whoever shares it"
    finally:
        os.close(parent)
        os.close(child)


@FAST_AND_PLAIN
def test_a_stderr_sharing_the_stdout_pipe_keeps_its_blocking_mode(tmp_path: Path, fast_paths: bool) -> None:
    read_end, write_end = os.pipe()
    try:
        proc = spawn(tmp_path, fast_paths, stdout=write_end, stderr=write_end)
        assert proc.stdin is not None
        proc.stdin.write(opening() + call(1))
        proc.stdin.flush()
        replies = read_lines_from(read_end, 2, timeout=30)
        assert os.get_blocking(write_end), "stdout's (and so stderr's) pipe was made non-blocking"
        proc.stdin.close()
        assert proc.wait(timeout=20) == 0
        assert [reply["id"] for reply in replies] == ["init", 1]
    finally:
        os.close(read_end)
        os.close(write_end)


@pytest.mark.parametrize("chunk_size", [1, 2, 7, 64, 4096])
def test_lines_split_the_same_whatever_the_chunks(chunk_size: int) -> None:
    data = b'{"a":1}\n\n' + b"x" * 40 + b"\n" + b"y" * 9 + b"\n" + b"z" * 10 + b"\n" + b"tail"
    lines: list[bytes | Oversized] = []
    splitter = LineSplitter(limit=10)
    for start in range(0, len(data), chunk_size):
        splitter.feed(data[start : start + chunk_size], lines.append)
    splitter.finish(lines.append)
    shown = [f"oversized {line.size}" if isinstance(line, Oversized) else line for line in lines]
    assert shown == [b'{"a":1}', b"", "oversized 40", b"y" * 9, b"z" * 10, b"tail"]


def test_an_unterminated_oversized_last_line_is_reported_once() -> None:
    lines: list[bytes | Oversized] = []
    splitter = LineSplitter(limit=4)
    splitter.feed(b"ok\n" + b"w" * 6, lines.append)
    splitter.feed(b"w" * 6, lines.append)
    splitter.finish(lines.append)
    assert lines[0] == b"ok" and isinstance(lines[1], Oversized) and lines[1].size == 12 and len(lines) == 2
