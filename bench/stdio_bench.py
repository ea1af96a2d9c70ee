"""stdio benchmark: a bare `mcp` MCPServer against truloop-mcp, before and after, interleaved a, b, c...

No MCP client on the measuring side: each server runs as a subprocess and JSON-RPC travels as
newline-delimited JSON over its pipes, read and written with `os.read`/`os.write` through a selector.

Targets (the first is the baseline every ratio is taken against):
  bare         bench/bare_server.py: a bare MCPServer with the same tool, on the SDK's stdio_server
  bare+ours    the same bare server on truloop-mcp's stdio transport (server/stdio/): the transport alone
  before       truloop-mcp at a git revision (--before REF, exported with `git archive` into a temp folder)
  truloop-mcp  truloop-mcp from this working tree

Both truloop-mcp trees are compiled to bytecode first (`compileall`), as `pip install` of a wheel does and as
the bare server's packages in site-packages are; `--no-compile` measures an uncompiled editable tree.

Measured for each server:
  cold start   time from spawn to the initialize response (initialize is written right after spawn);
               --trials fresh processes each, interleaved.
  call latency one long-lived session per server; after initialize, notifications/initialized and
               --warmup calls, --calls sequential tools/call requests, interleaved; p50/p99.
  tools/list   --calls sequential tools/list requests on the same sessions, interleaved; p50.
  pipelined    --pipeline tools/call requests written at once, then all responses read;
               --pipeline-rounds rounds interleaved; calls/s (median round)
               and the server's CPU time per call (from /proc, Linux only).

Usage (from any cwd):
    python bench/stdio_bench.py [--before REF] [--trials 15] [--calls 300] [--pipeline 1000] [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import selectors
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

BENCH_DIR = Path(__file__).resolve().parent
PROJECT_DIR = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

from bench_support import BenchError, exported_revision, process_cpu_seconds  # noqa: E402 (a sibling module of the benchmarks)

VENV_PYTHON = PROJECT_DIR / ".venv" / "bin" / "python"

PROTOCOL_VERSION = "2025-11-25"
TOOL_NAME = "get_day_of_week"
TOOL_ARGS: dict[str, Any] = {"date": "2026-03-10"}
EXPECTED_DAY = "Tuesday"
READ_CHUNK = 1 << 16


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def initialize_line(request_id: int) -> bytes:
    return _line(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "stdio-bench", "version": "1.0"},
            },
        }
    )


INITIALIZED_LINE = _line({"jsonrpc": "2.0", "method": "notifications/initialized"})


def call_line(request_id: int) -> bytes:
    return _line(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": TOOL_NAME, "arguments": TOOL_ARGS},
        }
    )


@dataclass(frozen=True)
class Target:
    key: str
    label: str
    argv: tuple[str, ...]
    cwd: Path = PROJECT_DIR


class ServerProcess:
    """One server subprocess, spoken to with raw JSON lines over its stdin/stdout pipes."""

    def __init__(self, target: Target, *, env: dict[str, str]) -> None:
        self.target = target
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            target.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=target.cwd,
            env=env,
            bufsize=0,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in_fd = self.proc.stdin.fileno()
        self._out_fd = self.proc.stdout.fileno()
        os.set_blocking(self._in_fd, False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._out_fd, selectors.EVENT_READ)
        self._buffer = bytearray()
        self._next_id = 1
        self.stray_messages = 0  # lines that were not responses we waited for (notifications, ...)

    def cpu_seconds(self) -> float | None:
        return process_cpu_seconds(self.proc.pid)

    def new_ids(self, count: int) -> range:
        ids = range(self._next_id, self._next_id + count)
        self._next_id += count
        return ids

    def exchange(self, payload: bytes, wanted: Sequence[int], deadline: float) -> dict[int, dict[str, Any]]:
        """Write `payload` (interleaving reads so neither pipe can fill up) and return the responses to `wanted`."""
        pending = set(wanted)
        responses: dict[int, dict[str, Any]] = {}
        view = memoryview(payload)
        written = 0
        if view:
            written = self._write_some(view)
        writing = written < len(view)
        if writing:
            self._selector.register(self._in_fd, selectors.EVENT_WRITE)
        try:
            while pending or writing:
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    raise BenchError(
                        f"{self.target.label}: timed out with {len(pending)} of {len(wanted)} responses missing"
                        f"{self.stderr_tail()}"
                    )
                for key, _ in self._selector.select(remaining):
                    if key.fd == self._in_fd:
                        written += self._write_some(view[written:])
                        if written >= len(view):
                            writing = False
                            self._selector.unregister(self._in_fd)
                    else:
                        self._read_some(pending, responses)
        finally:
            if writing:
                self._selector.unregister(self._in_fd)
        return responses

    def _write_some(self, data: memoryview) -> int:
        try:
            return os.write(self._in_fd, data)
        except BlockingIOError:
            return 0
        except BrokenPipeError:
            raise BenchError(f"{self.target.label}: the server closed its stdin{self.stderr_tail()}") from None

    def _read_some(self, pending: set[int], responses: dict[int, dict[str, Any]]) -> None:
        chunk = os.read(self._out_fd, READ_CHUNK)
        if not chunk:
            raise BenchError(f"{self.target.label}: the server closed its stdout{self.stderr_tail()}")
        self._buffer += chunk
        start = 0
        while True:
            end = self._buffer.find(b"\n", start)
            if end < 0:
                break
            raw = bytes(self._buffer[start:end])
            start = end + 1
            if not raw.strip():
                continue
            try:
                message = json.loads(raw)
            except ValueError:
                raise BenchError(f"{self.target.label}: non-JSON line on stdout: {raw[:200]!r}") from None
            request_id = message.get("id") if isinstance(message, dict) else None
            if request_id in pending and ("result" in message or "error" in message):
                pending.discard(request_id)
                responses[request_id] = message
            else:
                self.stray_messages += 1
        del self._buffer[:start]

    def stderr_tail(self, limit: int = 2000) -> str:
        with contextlib.suppress(OSError, ValueError):
            self._stderr.flush()
            self._stderr.seek(0)
            text = self._stderr.read().decode(errors="replace").strip()
            if text:
                return f"\n--- {self.target.label} stderr (tail) ---\n{text[-limit:]}"
        return ""

    def close(self, timeout: float = 5.0) -> None:
        """Close stdin (end of input), wait, then terminate, then kill."""
        with contextlib.suppress(OSError, ValueError, KeyError):
            self._selector.close()
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=2.0)
        with contextlib.suppress(OSError):
            assert self.proc.stdout is not None
            self.proc.stdout.close()
        with contextlib.suppress(OSError):
            self._stderr.close()


class Launcher:
    """Spawns servers and guarantees every one of them is closed."""

    def __init__(self, *, env: dict[str, str], timeout: float) -> None:
        self.env = env
        self.timeout = timeout
        self._live: list[ServerProcess] = []

    def spawn(self, target: Target) -> ServerProcess:
        server = ServerProcess(target, env=self.env)
        self._live.append(server)
        return server

    def close(self, server: ServerProcess) -> None:
        with contextlib.suppress(ValueError):
            self._live.remove(server)
        server.close()

    def close_all(self) -> None:
        while self._live:
            self.close(self._live[-1])

    def deadline(self, seconds: float | None = None) -> float:
        return time.perf_counter() + (seconds if seconds is not None else self.timeout)


def _check_initialize(target: Target, response: dict[str, Any]) -> None:
    result = response.get("result")
    if not isinstance(result, dict) or "protocolVersion" not in result:
        raise BenchError(f"{target.label}: bad initialize response: {response}")


def _check_call(target: Target, response: dict[str, Any]) -> None:
    result = response.get("result")
    if not isinstance(result, dict) or result.get("isError"):
        raise BenchError(f"{target.label}: tools/call failed: {response}")
    structured = result.get("structuredContent")
    if not isinstance(structured, dict) or structured.get("day_of_week") != EXPECTED_DAY:
        raise BenchError(f"{target.label}: unexpected tools/call result: {response}")


def cold_start(launcher: Launcher, target: Target) -> float:
    """Seconds from spawn to the initialize response."""
    start = time.perf_counter()
    server = launcher.spawn(target)
    try:
        response = server.exchange(initialize_line(0), [0], launcher.deadline())[0]
        elapsed = time.perf_counter() - start
        _check_initialize(target, response)
        return elapsed
    finally:
        launcher.close(server)


def open_session(launcher: Launcher, target: Target, warmup: int) -> ServerProcess:
    server = launcher.spawn(target)
    _check_initialize(target, server.exchange(initialize_line(0), [0], launcher.deadline())[0])
    server.exchange(INITIALIZED_LINE, [], launcher.deadline())
    for request_id in server.new_ids(warmup):
        _check_call(target, server.exchange(call_line(request_id), [request_id], launcher.deadline())[request_id])
    return server


def timed_exchange(launcher: Launcher, server: ServerProcess, line: Callable[[int], bytes]) -> tuple[float, Any]:
    """Seconds from writing one request (`line(request_id)`) to its response, and the response."""
    (request_id,) = server.new_ids(1)
    payload = line(request_id)
    deadline = launcher.deadline()
    start = time.perf_counter()
    response = server.exchange(payload, [request_id], deadline)[request_id]
    return time.perf_counter() - start, response


def timed_call(launcher: Launcher, server: ServerProcess) -> float:
    elapsed, response = timed_exchange(launcher, server, call_line)
    _check_call(server.target, response)
    return elapsed


def list_line(request_id: int) -> bytes:
    return _line({"jsonrpc": "2.0", "id": request_id, "method": "tools/list"})


def timed_list(launcher: Launcher, server: ServerProcess) -> float:
    elapsed, response = timed_exchange(launcher, server, list_line)
    tools = (response.get("result") or {}).get("tools")
    if not isinstance(tools, list) or not any(tool.get("name") == TOOL_NAME for tool in tools):
        raise BenchError(f"{server.target.label}: bad tools/list response: {str(response)[:300]}")
    return elapsed


def pipelined(launcher: Launcher, server: ServerProcess, count: int) -> tuple[float, float | None]:
    """calls/s for `count` tools/call requests written at once, and the server's CPU seconds per call."""
    ids = server.new_ids(count)
    payload = b"".join(call_line(request_id) for request_id in ids)
    deadline = launcher.deadline(max(launcher.timeout, count * 0.05))
    cpu_before = server.cpu_seconds()
    start = time.perf_counter()
    responses = server.exchange(payload, ids, deadline)
    elapsed = time.perf_counter() - start
    cpu_after = server.cpu_seconds()
    for request_id in ids:
        _check_call(server.target, responses[request_id])
    cpu = None if cpu_before is None or cpu_after is None else (cpu_after - cpu_before) / count
    return count / elapsed, cpu


def percentile(values: Sequence[float], pct: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    position = (len(ordered) - 1) * pct / 100.0
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass
class Samples:
    cold_start_s: list[float] = field(default_factory=list)
    call_s: list[float] = field(default_factory=list)
    list_s: list[float] = field(default_factory=list)
    pipelined_cps: list[float] = field(default_factory=list)
    pipelined_cpu_s: list[float] = field(default_factory=list)  # server CPU seconds per call, per round
    stray_messages: int = 0

    def summary(self) -> dict[str, float]:
        return {
            "cold_start_p50_ms": statistics.median(self.cold_start_s) * 1e3,
            "cold_start_min_ms": min(self.cold_start_s) * 1e3,
            "cold_start_max_ms": max(self.cold_start_s) * 1e3,
            "call_p50_ms": percentile(self.call_s, 50) * 1e3,
            "call_p99_ms": percentile(self.call_s, 99) * 1e3,
            "call_mean_ms": statistics.fmean(self.call_s) * 1e3,
            "list_p50_ms": percentile(self.list_s, 50) * 1e3 if self.list_s else float("nan"),
            "pipelined_calls_per_s": statistics.median(self.pipelined_cps),
            "pipelined_best_calls_per_s": max(self.pipelined_cps),
            "pipelined_cpu_ms_per_call": statistics.median(self.pipelined_cpu_s) * 1e3
            if self.pipelined_cpu_s
            else float("nan"),
        }


def _interleaved(targets: Sequence[Target], rounds: int) -> Iterator[tuple[int, Target]]:
    for index in range(rounds):
        for target in targets:
            yield index, target


def run_benchmark(
    args: argparse.Namespace, targets: Sequence[Target], log: Callable[[str], None]
) -> dict[str, Samples]:
    env = dict(os.environ)
    for noisy in ("PYTHONPROFILEIMPORTTIME", "PYTHONTRACEMALLOC", "PYTHONDEVMODE", "PYTHONASYNCIODEBUG"):
        env.pop(noisy, None)
    launcher = Launcher(env=env, timeout=args.timeout)
    samples = {target.key: Samples() for target in targets}
    overall_deadline = time.perf_counter() + args.max_seconds

    def check_budget() -> None:
        if time.perf_counter() > overall_deadline:
            raise BenchError(f"overall time budget of {args.max_seconds:.0f}s exceeded")

    try:
        for target in targets:  # untimed: warms the page cache and .pyc files for all
            cold_start(launcher, target)
        log(f"cold start: {args.trials} trials each, interleaved")
        for _, target in _interleaved(targets, args.trials):
            check_budget()
            samples[target.key].cold_start_s.append(cold_start(launcher, target))

        log(f"tools/call latency: {args.warmup} warm-up + {args.calls} sequential calls each, interleaved")
        sessions = {target.key: open_session(launcher, target, args.warmup) for target in targets}
        for index, target in _interleaved(targets, args.calls):
            if index % 50 == 0:
                check_budget()
            samples[target.key].call_s.append(timed_call(launcher, sessions[target.key]))

        log(f"tools/list latency: {args.calls} sequential requests each, interleaved")
        for index, target in _interleaved(targets, args.calls):
            if index % 50 == 0:
                check_budget()
            samples[target.key].list_s.append(timed_list(launcher, sessions[target.key]))

        log(f"pipelined: {args.pipeline_rounds} rounds of {args.pipeline} calls each, interleaved")
        for _, target in _interleaved(targets, args.pipeline_rounds):
            check_budget()
            calls_per_s, cpu_per_call = pipelined(launcher, sessions[target.key], args.pipeline)
            samples[target.key].pipelined_cps.append(calls_per_s)
            if cpu_per_call is not None:
                samples[target.key].pipelined_cpu_s.append(cpu_per_call)
        for target in targets:
            samples[target.key].stray_messages = sessions[target.key].stray_messages
    finally:
        launcher.close_all()
    return samples


ROWS: tuple[tuple[str, str, str, bool], ...] = (
    # (label, summary key, format, higher is better)
    ("cold start p50 (ms)", "cold_start_p50_ms", ".1f", False),
    ("cold start min (ms)", "cold_start_min_ms", ".1f", False),
    ("call p50 (ms)", "call_p50_ms", ".3f", False),
    ("call p99 (ms)", "call_p99_ms", ".3f", False),
    ("tools/list p50 (ms)", "list_p50_ms", ".3f", False),
    ("pipelined (calls/s)", "pipelined_calls_per_s", ".0f", True),
    ("pipelined server CPU/call (ms)", "pipelined_cpu_ms_per_call", ".3f", False),
)


def ratios_to_baseline(
    targets: Sequence[Target], summaries: dict[str, dict[str, float]]
) -> dict[str, dict[str, float]]:
    """Each target's figure over the first target's (the bare MCPServer), per summary key."""
    base = summaries[targets[0].key]
    return {
        target.key: {
            key: summaries[target.key][key] / base[key] if base[key] else float("nan") for _, key, _, _ in ROWS
        }
        for target in targets[1:]
    }


def render_table(targets: Sequence[Target], summaries: dict[str, dict[str, float]]) -> str:
    """One row per metric, one column per target, then each later target's ratio to the first (x bare)."""
    ratios = ratios_to_baseline(targets, summaries)
    header = [
        "metric",
        *(target.label for target in targets),
        *(f"{t.label} / {targets[0].label}" for t in targets[1:]),
    ]
    rows: list[list[str]] = [header]
    for label, key, fmt, _ in ROWS:
        cells = [label, *(format(summaries[target.key][key], fmt) for target in targets)]
        cells += [f"{ratios[target.key][key]:.2f}x" for target in targets[1:]]
        rows.append(cells)
    widths = [max(len(row[col]) for row in rows) for col in range(len(header))]
    lines = []
    for index, row in enumerate(rows):
        cells = [row[0].ljust(widths[0])] + [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        lines.append("  ".join(cells))
        if index == 0:
            lines.append("  ".join("-" * width for width in widths))
    lines.append(
        "ratios: a target's figure over the bare MCPServer's (calls/s: above 1 is faster; the rest: below 1 is)"
    )
    return "\n".join(lines)


def compile_tree(python: str, tree: Path, log: Callable[[str], None]) -> None:
    """Bytecode for the project's packages, as `pip install` of a wheel writes it (`__pycache__` is ignored by git)."""
    packages = [str(tree / name) for name in ("server", "bridge", "toolsets") if (tree / name).is_dir()]
    done = subprocess.run([python, "-m", "compileall", "-q", *packages], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BenchError(f"compileall {tree} failed: {done.stdout[-500:]}{done.stderr[-500:]}")
    log(f"compiled {', '.join(packages)}")


def default_python() -> str:
    return str(VENV_PYTHON) if VENV_PYTHON.exists() else sys.executable


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--python", default=default_python(), help="interpreter for both servers (default: %(default)s)")
    p.add_argument("--trials", type=int, default=15, help="cold-start spawns per server (default 15)")
    p.add_argument("--calls", type=int, default=300, help="sequential timed tools/call per server (default 300)")
    p.add_argument("--warmup", type=int, default=10, help="untimed tools/call before the latency loop (default 10)")
    p.add_argument("--pipeline", type=int, default=1000, help="tools/call written at once per round (default 1000)")
    p.add_argument("--pipeline-rounds", type=int, default=5, help="pipelined rounds per server (default 5)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds allowed per step (default 30)")
    p.add_argument("--max-seconds", type=float, default=900.0, help="overall time budget (default 900)")
    p.add_argument("--json", type=Path, default=None, help="also write the results as JSON to this path")
    p.add_argument("--before", default=None, metavar="REF", help="also run truloop-mcp at this git revision")
    p.add_argument("--no-bare-ours", action="store_true", help="leave out the bare server on our transport")
    p.add_argument(
        "--no-compile",
        action="store_true",
        help="measure truloop-mcp without compiled bytecode (by default both trees are compiled first, as a "
        "wheel install compiles them; the bare server's packages in site-packages are compiled already)",
    )
    args = p.parse_args(argv)
    for name in ("trials", "calls", "pipeline", "pipeline_rounds"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.warmup < 0:
        p.error("--warmup must not be negative")
    return args


def build_targets(args: argparse.Namespace, data_dir: Path, before: Path | None) -> list[Target]:
    bare = (args.python, str(BENCH_DIR / "bare_server.py"))
    truloop = ("-m", "server", "--timezone", "Asia/Seoul")
    targets = [Target("bare", "bare MCPServer", bare)]
    if not args.no_bare_ours:
        targets.append(Target("bare_ours", "bare+ours", (*bare, "--transport", "truloop")))
    if before is not None:
        argv = (args.python, *truloop, "--data-dir", str(data_dir / "before"))
        targets.append(Target("before", f"before ({args.before})", argv, cwd=before))
    targets.append(Target("after", "truloop-mcp", (args.python, *truloop, "--data-dir", str(data_dir / "after"))))
    return targets


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)

    def log(message: str) -> None:
        print(f"# {message}", file=sys.stderr, flush=True)

    log(f"python: {args.python}; cwd for servers: {PROJECT_DIR}")
    started = time.perf_counter()
    with contextlib.ExitStack() as stack:
        data_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="stdio-bench-")))
        try:
            before = stack.enter_context(exported_revision(args.before, "stdio-bench-before-")) if args.before else None
            if not args.no_compile:
                for tree in (PROJECT_DIR, before):
                    if tree is not None:
                        compile_tree(args.python, tree, log)
            targets = build_targets(args, data_dir, before)
            samples = run_benchmark(args, targets, log)
        except BenchError as exc:
            print(f"stdio_bench: error: {exc}", file=sys.stderr)
            return 1
    summaries = {key: value.summary() for key, value in samples.items()}
    print(render_table(targets, summaries))
    for target in targets:
        if samples[target.key].stray_messages:
            print(f"note: {target.label} sent {samples[target.key].stray_messages} non-response lines")
    if args.json is not None:
        report = {
            "config": {
                "python": args.python,
                "python_version": platform.python_version(),
                "platform": platform.platform(),
                "cpu_count": os.cpu_count(),
                "protocol_version": PROTOCOL_VERSION,
                "tool": TOOL_NAME,
                "arguments": TOOL_ARGS,
                "trials": args.trials,
                "calls": args.calls,
                "warmup": args.warmup,
                "pipeline": args.pipeline,
                "pipeline_rounds": args.pipeline_rounds,
                "before": args.before,
                "duration_s": time.perf_counter() - started,
            },
            "targets": {
                target.key: {
                    "label": target.label,
                    "argv": list(target.argv),
                    "summary": summaries[target.key],
                    "cold_start_ms": [value * 1e3 for value in samples[target.key].cold_start_s],
                    "call_ms": [value * 1e3 for value in samples[target.key].call_s],
                    "list_ms": [value * 1e3 for value in samples[target.key].list_s],
                    "pipelined_calls_per_s": samples[target.key].pipelined_cps,
                    "pipelined_cpu_ms_per_call": [value * 1e3 for value in samples[target.key].pipelined_cpu_s],
                }
                for target in targets
            },
            "ratios_to_bare": ratios_to_baseline(targets, summaries),
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
