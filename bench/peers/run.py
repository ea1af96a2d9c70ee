"""Peers benchmark: truloop-mcp against other MCP servers serving the same tool, stdio and streamable HTTP.

Every server exposes `get_day_of_week(date)` with an input and an output schema and answers
{date, day_of_week, iso_weekday} as structured content (and the same JSON as text):

  truloop     this working tree's truloop-mcp (the .venv's console script), default settings (audit log on),
              --user bench --timezone UTC, a temporary --data-dir; HTTP unauthenticated on 127.0.0.1
  bare        bench/bare_server.py: a bare MCPServer of the project's `mcp` SDK
  fastmcp     bench/peers/fastmcp_server.py: FastMCP 4, in its own venv (bench/peers/.cache/, made on first use)
  typescript  bench/peers/ts/server.mjs: the TypeScript SDK's McpServer (`npm ci` on first use)

No MCP client on the measuring side: raw JSON-RPC lines over the stdio pipes (bench/stdio_bench.py's driver)
and a small HTTP/1.1 client on asyncio sockets (bench/http_bench.py's). Each round runs every server in turn
(the order rotates each round) and repeats each cold start --spawns times, spawn by spawn across the servers;
each figure is the median of the rounds, with their min-max. Everything is bounded (--timeout per step,
--max-seconds overall) and every process it starts is stopped.

    .venv/bin/python bench/peers/run.py [--rounds 3] [--only truloop,typescript] [--quick] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import fcntl
import hashlib
import json
import os
import platform
import selectors
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

PEERS_DIR = Path(__file__).resolve().parent
BENCH_DIR = PEERS_DIR.parent
PROJECT_DIR = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

# the drivers of the stdio and HTTP benchmarks (sibling modules of the benchmarks)
from bench_support import BenchError, child_pids, cpu_ns_between, peak_rss_kib, thread_cpu_ns  # noqa: E402
from http_bench import SERVING, Connection  # noqa: E402
from stdio_bench import (  # noqa: E402
    INITIALIZED_LINE,
    PROTOCOL_VERSION,
    Launcher,
    ServerProcess,
    Target,
    _check_call,
    _check_initialize,
    call_line,
    compile_tree,
    initialize_line,
    list_line,
    percentile,
)

VENV_BIN = PROJECT_DIR / ".venv" / "bin"
CACHE_DIR = PEERS_DIR / ".cache"
FASTMCP_REQUIREMENTS = PEERS_DIR / "fastmcp-requirements.txt"
FASTMCP_VERSION = next(
    line.partition("==")[2].strip()
    for line in FASTMCP_REQUIREMENTS.read_text().splitlines()
    if line.lower().startswith("fastmcp==")
)
TS_DIR = PEERS_DIR / "ts"
EXPECTED = {"date": "2026-03-10", "day_of_week": "Tuesday", "iso_weekday": 2}
ORDER = ("truloop", "bare", "fastmcp", "typescript")
SETUP_TIMEOUT = 900.0


def log(message: str) -> None:
    print(f"# {message}", file=sys.stderr, flush=True)


# -- the servers -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Peer:
    key: str
    label: str  # the stdio table's column
    short: str  # the HTTP table's column
    stdio: tuple[str, ...]
    http: tuple[str, ...]
    cwd: Path
    env: dict[str, str]


@contextlib.contextmanager
def _locked(name: str) -> Iterator[None]:
    """An exclusive lock in the cache folder, so that two runs never install at once."""
    CACHE_DIR.mkdir(exist_ok=True)
    with (CACHE_DIR / f"{name}.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _fingerprint(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part)
        digest.update(b"\0")
    return digest.hexdigest()


def _setup_run(argv: Sequence[str], what: str, **kwargs: Any) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=SETUP_TIMEOUT, check=False, **kwargs)
    except subprocess.TimeoutExpired:
        raise BenchError(f"{what}: no end after {SETUP_TIMEOUT:.0f}s") from None
    if done.returncode != 0:
        raise BenchError(f"{what} failed ({done.returncode}):\n{done.stdout[-1500:]}{done.stderr[-1500:]}")


def fastmcp_python() -> Path:
    """The interpreter of FastMCP's own venv, made (pinned, --no-deps from the requirements file) on first use."""
    venv = CACHE_DIR / f"fastmcp-{FASTMCP_VERSION}"
    python = venv / "bin" / "python"
    base = getattr(sys, "_base_executable", sys.executable)
    wanted = _fingerprint(FASTMCP_REQUIREMENTS.read_bytes(), platform.python_version().encode())
    marker = venv / ".peers-installed"
    with _locked("fastmcp"):
        if marker.is_file() and marker.read_text() == wanted and python.exists():
            return python
        log(f"creating {venv} (FastMCP {FASTMCP_VERSION}, once)")
        shutil.rmtree(venv, ignore_errors=True)
        _setup_run([base, "-m", "venv", str(venv)], "python -m venv")
        pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps"]
        _setup_run([*pip, "-r", str(FASTMCP_REQUIREMENTS)], "pip install (FastMCP)")
        marker.write_text(wanted)
    return python


def typescript_ready() -> None:
    """`npm ci` into bench/peers/ts/node_modules unless it already matches the lockfile and this node."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        raise BenchError("node and npm are needed for the TypeScript server (or leave it out with --only)")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30, check=True).stdout
    wanted = _fingerprint((TS_DIR / "package.json").read_bytes(), (TS_DIR / "package-lock.json").read_bytes(),
                          version.strip().encode())  # fmt: skip
    marker = TS_DIR / "node_modules" / ".peers-installed"
    with _locked("npm"):
        if marker.is_file() and marker.read_text() == wanted:
            return
        log("npm ci in bench/peers/ts (once)")
        env = {k: v for k, v in os.environ.items() if not k.lower().startswith("npm_config_")}
        env.update(
            npm_config_cache=str(CACHE_DIR / "npm"),
            npm_config_update_notifier="false",
            npm_config_audit="false",
            npm_config_fund="false",
        )
        _setup_run([npm, "ci", "--no-audit", "--no-fund"], "npm ci", cwd=TS_DIR, env=env)
        marker.write_text(wanted)


def _package_version(python: Path, name: str) -> str:
    code = f"import importlib.metadata as m; print(m.version({name!r}))"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=60, check=False)
    return done.stdout.strip() or "?"


def _major_minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def _base_env() -> dict[str, str]:
    noisy = ("PYTHONPROFILEIMPORTTIME", "PYTHONTRACEMALLOC", "PYTHONDEVMODE", "PYTHONASYNCIODEBUG", "NODE_OPTIONS")
    return {k: v for k, v in os.environ.items() if k not in noisy and not k.startswith(("TRULOOP_", "FASTMCP_"))}


def build_peers(keys: Sequence[str], scratch: Path, truloop_env: dict[str, str]) -> list[Peer]:
    python = VENV_BIN / "python"
    env = _base_env()
    peers: list[Peer] = []
    for key in keys:
        if key == "truloop":
            common = ("--user", "bench", "--timezone", "UTC")
            truloop = str(VENV_BIN / "truloop-mcp")
            stdio = (truloop, *common, "--data-dir", str(scratch / "truloop-stdio"))
            http = (truloop, "--transport", "http", "--host", "127.0.0.1", "--port", "0", *common)
            http += ("--data-dir", str(scratch / "truloop-http"))
            peers.append(Peer(key, "truloop", "truloop", stdio, http, PROJECT_DIR, env | truloop_env))
        elif key == "bare":
            mcp = _major_minor(_package_version(python, "mcp"))
            bare = (str(python), str(BENCH_DIR / "bare_server.py"))
            label = f"bare MCPServer (mcp {mcp})"
            peers.append(Peer(key, label, "bare", bare, (*bare, "--http"), PROJECT_DIR, env))
        elif key == "fastmcp":
            server = (str(fastmcp_python()), str(PEERS_DIR / "fastmcp_server.py"))
            label = f"FastMCP {FASTMCP_VERSION.split('.')[0]}"
            peers.append(Peer(key, label, "FastMCP", server, (*server, "--http"), PEERS_DIR, env))
        elif key == "typescript":
            typescript_ready()
            sdk = json.loads((TS_DIR / "package.json").read_text())["dependencies"]["@modelcontextprotocol/sdk"]
            node = shutil.which("node") or "node"
            server = (node, str(TS_DIR / "server.mjs"))
            label = f"TypeScript SDK {_major_minor(sdk)} McpServer"
            peers.append(Peer(key, label, "TypeScript", server, (*server, "--http"), TS_DIR, env))
    return peers


# -- figures ---------------------------------------------------------------------------------------


@dataclass
class Rounds:
    """One value per round for each figure (a round's value is the median of its repeats where it has several)."""

    values: dict[str, list[float]] = field(default_factory=lambda: collections.defaultdict(list))
    notes: list[str] = field(default_factory=list)

    def add(self, name: str, value: float | None) -> None:
        if value is not None:
            self.values[name].append(value)


def _full_check(where: str, result: Any) -> None:
    structured = result.get("structuredContent") if isinstance(result, dict) else None
    if structured != EXPECTED or result.get("isError"):
        raise BenchError(f"{where}: expected structuredContent {EXPECTED}, got {str(result)[:400]}")
    texts = [item.get("text") for item in result.get("content") or [] if item.get("type") == "text"]
    if not texts or json.loads(texts[0]) != EXPECTED:
        raise BenchError(f"{where}: expected the same JSON as text content, got {str(result)[:400]}")


def _check_tool_listed(where: str, result: Any) -> None:
    tools = result.get("tools") if isinstance(result, dict) else None
    tool = next((t for t in tools or [] if t.get("name") == "get_day_of_week"), None)
    if tool is None:
        raise BenchError(f"{where}: get_day_of_week is not listed: {str(result)[:400]}")
    output = (tool.get("outputSchema") or {}).get("properties") or {}
    if set(output) != set(EXPECTED) or "date" not in ((tool.get("inputSchema") or {}).get("properties") or {}):
        raise BenchError(f"{where}: unexpected input/output schema: {tool}")


# -- stdio ------------------------------------------------------------------------------------------


def _exchange_one(launcher: Launcher, server: ServerProcess, payload: bytes, request_id: int) -> dict[str, Any]:
    return server.exchange(payload, [request_id], launcher.deadline())[request_id]


def stdio_cold(launcher: Launcher, target: Target) -> tuple[float, float]:
    """Seconds from spawn to the initialize answer, and to the first tools/call answer (notifications/initialized
    and the call written as soon as initialize is answered)."""
    start = time.perf_counter()
    server = launcher.spawn(target)
    try:
        response = _exchange_one(launcher, server, initialize_line(0), 0)
        initialized = time.perf_counter() - start
        _check_initialize(target, response)
        response = _exchange_one(launcher, server, INITIALIZED_LINE + call_line(1), 1)
        answered = time.perf_counter() - start
        _check_call(target, response)
        return initialized, answered
    finally:
        launcher.close(server)


def stdio_session(launcher: Launcher, target: Target, args: argparse.Namespace, rounds: Rounds) -> None:
    """One session: checked first (the tool's schemas, the whole answer), then sequential calls (latency, CPU per
    call) and one pipelined batch; peak RSS at the end."""
    server = launcher.spawn(target)
    try:
        _check_initialize(target, _exchange_one(launcher, server, initialize_line(0), 0))
        server.exchange(INITIALIZED_LINE, [], launcher.deadline())
        list_id, call_id = server.new_ids(2)
        listed = _exchange_one(launcher, server, list_line(list_id), list_id).get("result")
        _check_tool_listed(f"{target.label} (stdio)", listed)
        _full_check(
            f"{target.label} (stdio)", _exchange_one(launcher, server, call_line(call_id), call_id).get("result")
        )
        for request_id in server.new_ids(args.warmup):
            _check_call(target, _exchange_one(launcher, server, call_line(request_id), request_id))
        pid = server.proc.pid

        latencies: list[float] = []
        cpu_before = thread_cpu_ns(pid)
        for request_id in server.new_ids(args.calls):
            payload = call_line(request_id)
            deadline = launcher.deadline()
            started = time.perf_counter()
            response = server.exchange(payload, [request_id], deadline)[request_id]
            latencies.append(time.perf_counter() - started)
            _check_call(target, response)
        cpu = cpu_ns_between(cpu_before, thread_cpu_ns(pid))
        rounds.add("call_p50_ms", percentile(latencies, 50) * 1e3)
        rounds.add("call_p99_ms", percentile(latencies, 99) * 1e3)
        rounds.add("cpu_seq_us", None if cpu is None else cpu / args.calls / 1e3)

        ids = server.new_ids(args.pipeline)
        payload = b"".join(call_line(request_id) for request_id in ids)
        deadline = launcher.deadline(max(launcher.timeout, args.pipeline * 0.05))
        cpu_before = thread_cpu_ns(pid)
        started = time.perf_counter()
        responses = server.exchange(payload, ids, deadline)
        elapsed = time.perf_counter() - started
        cpu = cpu_ns_between(cpu_before, thread_cpu_ns(pid))
        for request_id in ids:
            _check_call(target, responses[request_id])
        rounds.add("pipelined_cps", args.pipeline / elapsed)
        rounds.add("cpu_pipelined_us", None if cpu is None else cpu / args.pipeline / 1e3)

        children = child_pids(pid)
        rss = [peak_rss_kib(p) for p in (pid, *children)]
        rounds.add("peak_rss_mib", sum(r for r in rss if r is not None) / 1024 if rss[0] is not None else None)
        if children:
            rounds.notes.append(f"{target.label}: peak RSS adds {len(children)} child process(es)")
        if server.stray_messages:
            rounds.notes.append(f"{target.label}: {server.stray_messages} non-response lines on stdout")
    finally:
        launcher.close(server)


# -- streamable HTTP -----------------------------------------------------------------------------------


class HttpServer:
    """A server on a free loopback port, named on its stderr (read through a pipe, so the port is seen at once)."""

    def __init__(self, peer: Peer, timeout: float) -> None:
        self.peer = peer
        self._tail: collections.deque[bytes] = collections.deque(maxlen=200)
        self.proc = subprocess.Popen(
            peer.http, cwd=peer.cwd, env=peer.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        assert self.proc.stderr is not None
        try:
            self.port = self._wait_for_port(self.proc.stderr, timeout)
        except BaseException:
            self.stop()
            raise
        threading.Thread(target=self._drain, args=(self.proc.stderr,), daemon=True).start()

    def _wait_for_port(self, stderr: IO[bytes], timeout: float) -> int:
        deadline = time.perf_counter() + timeout
        fd = stderr.fileno()
        buffer = b""
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while True:
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    tail = self.stderr_tail(buffer)
                    raise BenchError(f"{self.peer.label}: no `serving` line in {timeout:.0f}s{tail}")
                if selector.select(remaining):
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        raise BenchError(f"{self.peer.label}: exited before serving{self.stderr_tail(buffer)}")
                    buffer += chunk
                    found = SERVING.search(buffer.decode(errors="replace"))
                    if found:
                        self._tail.append(buffer)
                        return int(found.group(2))

    def _drain(self, stderr: IO[bytes]) -> None:
        with contextlib.suppress(OSError, ValueError):
            for line in iter(stderr.readline, b""):
                self._tail.append(line)

    def stderr_tail(self, extra: bytes = b"") -> str:
        text = (b"".join(self._tail) + extra).decode(errors="replace").strip()
        return f"\n--- {self.peer.label} stderr (tail) ---\n{text[-2000:]}" if text else ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        with contextlib.suppress(OSError):
            assert self.proc.stderr is not None
            self.proc.stderr.close()


@contextlib.contextmanager
def _blamed(server: HttpServer) -> Iterator[None]:
    try:
        yield
    except (OSError, EOFError, ValueError, TimeoutError, BenchError) as exc:
        raise BenchError(f"{server.peer.label} (HTTP): {type(exc).__name__}: {exc}{server.stderr_tail()}") from None


async def _closed(connections: Sequence[Connection]) -> None:
    for connection in connections:
        await connection.close()


async def http_cold(peer: Peer, step_seconds: float) -> float:
    """Seconds from spawn to the initialize answer over HTTP."""
    start = time.perf_counter()
    server = HttpServer(peer, step_seconds)
    connection = Connection("127.0.0.1", server.port, None)
    try:
        with _blamed(server):
            await asyncio.wait_for(connection.connect(), step_seconds)
            await asyncio.wait_for(connection.initialize(), step_seconds)
        return time.perf_counter() - start
    finally:
        await _closed([connection])
        server.stop()


async def _one_session(server: HttpServer, concurrency: int, step_seconds: float) -> list[Connection]:
    """One MCP session, carried by `concurrency` connections (HTTP/1.1: one request at a time on each)."""
    first = Connection("127.0.0.1", server.port, None)
    connections = [first]
    await asyncio.wait_for(first.open(), step_seconds)
    for index in range(1, concurrency):
        connection = Connection("127.0.0.1", server.port, None)
        connections.append(connection)
        await asyncio.wait_for(connection.join(first, id_base=index * 1_000_000_000), step_seconds)
    return connections


async def http_load(peer: Peer, args: argparse.Namespace, rounds: Rounds) -> None:
    """--concurrency callers on one session, --requests calls each: calls/s and the server's CPU per call.
    Checked first: the tool's schemas, and the whole answer on every connection of the session."""
    server = HttpServer(peer, args.timeout)
    connections: list[Connection] = []
    try:
        with _blamed(server):
            connections = await _one_session(server, args.concurrency, args.timeout)
            where = f"{peer.label} (HTTP)"
            listed = await asyncio.wait_for(connections[0].post({"jsonrpc": "2.0", "id": 0, "method": "tools/list"}),
                                            args.timeout)  # fmt: skip
            _check_tool_listed(where, listed.get("result"))
            answers = await asyncio.wait_for(asyncio.gather(*(c.call() for c in connections)), args.timeout)
            for answer in answers:
                _full_check(where, answer)
            for _ in range(args.http_warmup):
                await asyncio.wait_for(asyncio.gather(*(c.call() for c in connections)), args.timeout)

            async def drive(connection: Connection) -> None:
                for _ in range(args.requests):
                    await connection.call()

            total = args.requests * args.concurrency
            bound = max(args.timeout, total * 0.05)
            cpu_before = thread_cpu_ns(server.proc.pid)
            started = time.perf_counter()
            await asyncio.wait_for(asyncio.gather(*(drive(c) for c in connections)), bound)
            elapsed = time.perf_counter() - started
            cpu = cpu_ns_between(cpu_before, thread_cpu_ns(server.proc.pid))
        rounds.add("http_cps", total / elapsed)
        rounds.add("http_cpu_us", None if cpu is None else cpu / total / 1e3)
        if sum(c.reconnects for c in connections):
            rounds.notes.append(f"{peer.label} (HTTP): {sum(c.reconnects for c in connections)} reconnects")
    finally:
        await _closed(connections)
        server.stop()


# -- the run --------------------------------------------------------------------------------------------


def _rotated(peers: Sequence[Peer], index: int) -> list[Peer]:
    shift = index % len(peers)
    return [*peers[shift:], *peers[:shift]]


def run(peers: Sequence[Peer], args: argparse.Namespace) -> dict[str, Rounds]:
    results = {peer.key: Rounds() for peer in peers}
    launchers = {peer.key: Launcher(env=peer.env, timeout=args.timeout) for peer in peers}
    targets = {peer.key: Target(peer.key, peer.label, peer.stdio, peer.cwd) for peer in peers}
    budget_end = time.perf_counter() + args.max_seconds

    def check_budget() -> None:
        if time.perf_counter() > budget_end:
            raise BenchError(f"the overall time budget of {args.max_seconds:.0f}s is spent (--max-seconds)")

    try:
        for index in range(args.rounds):
            order = _rotated(peers, index)
            log(f"round {index + 1} of {args.rounds}: {', '.join(p.key for p in order)}")
            # each session first checks its server's tool and answer: in round 1, before any figure of that server
            for peer in order:
                check_budget()
                stdio_session(launchers[peer.key], targets[peer.key], args, results[peer.key])
            cold: dict[str, list[tuple[float, float]]] = {peer.key: [] for peer in peers}
            for _ in range(args.spawns):
                for peer in order:
                    check_budget()
                    cold[peer.key].append(stdio_cold(launchers[peer.key], targets[peer.key]))
            for peer in order:
                results[peer.key].add("cold_init_ms", statistics.median(a for a, _ in cold[peer.key]) * 1e3)
                results[peer.key].add("cold_call_ms", statistics.median(b for _, b in cold[peer.key]) * 1e3)
                results[peer.key].add("first_call_ms", statistics.median(b - a for a, b in cold[peer.key]) * 1e3)
            for peer in order:
                check_budget()
                asyncio.run(http_load(peer, args, results[peer.key]))
            http_cold_s: dict[str, list[float]] = {peer.key: [] for peer in peers}
            for _ in range(args.spawns):
                for peer in order:
                    check_budget()
                    http_cold_s[peer.key].append(asyncio.run(http_cold(peer, args.timeout)))
            for peer in order:
                results[peer.key].add("http_cold_ms", statistics.median(http_cold_s[peer.key]) * 1e3)
    finally:
        for launcher in launchers.values():
            launcher.close_all()
    return results


# -- the tables -------------------------------------------------------------------------------------------

Row = tuple[str, tuple[tuple[str, str], ...]]  # label, ((figure, format), ...): several figures share a cell

STDIO_ROWS: tuple[Row, ...] = (
    ("cold start, spawn -> initialize answered (ms)", (("cold_init_ms", ".0f"),)),
    ("cold start, spawn -> first call answered (ms)", (("cold_call_ms", ".0f"),)),
    ("first call after the handshake (ms)", (("first_call_ms", ".2f"),)),
    ("call p50 / p99 (ms)", (("call_p50_ms", ".3f"), ("call_p99_ms", ".3f"))),
    ("pipelined calls/s", (("pipelined_cps", ".0f"),)),
    ("server CPU per call, sequential / pipelined (us)", (("cpu_seq_us", ".0f"), ("cpu_pipelined_us", ".0f"))),
    ("peak RSS (MiB)", (("peak_rss_mib", ".1f"),)),
)
HTTP_ROWS: tuple[Row, ...] = (
    ("cold start, spawn -> initialize answered (ms)", (("http_cold_ms", ".0f"),)),
    ("calls/s", (("http_cps", ".0f"),)),
    ("server CPU per call (us)", (("http_cpu_us", ".0f"),)),
)


def _spread(values: Sequence[float], fmt: str) -> str:
    if not values:
        return "n/a"
    middle = format(statistics.median(values), fmt)
    return middle if len(values) == 1 else f"{middle} ({min(values):{fmt}}-{max(values):{fmt}})"


def summarise(results: dict[str, Rounds]) -> dict[str, dict[str, dict[str, Any]]]:
    return {
        key: {
            name: {"median": statistics.median(v), "min": min(v), "max": max(v), "rounds": list(v)}
            for name, v in rounds.values.items()
        }
        for key, rounds in results.items()
    }


def _ratio(ours: Sequence[float], theirs: Sequence[float]) -> str:
    if not ours or not theirs or not statistics.median(theirs):
        return "n/a"
    return f"{statistics.median(ours) / statistics.median(theirs):.2f}x"


def render(title: str, rows: Sequence[Row], peers: Sequence[Peer], results: dict[str, Rounds], short: bool) -> str:
    keys = [peer.key for peer in peers]
    ratio = "truloop" in keys and "typescript" in keys
    header = [title, *(peer.short if short else peer.label for peer in peers)]
    if ratio:
        header.append("truloop / TypeScript")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label, figures in rows:
        cells = [label]
        for peer in peers:
            values = results[peer.key].values
            cells.append(" / ".join(_spread(values.get(name, []), fmt) for name, fmt in figures))
        if ratio:
            ours, theirs = results["truloop"].values, results["typescript"].values
            cells.append(" / ".join(_ratio(ours.get(name, []), theirs.get(name, [])) for name, _ in figures))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# -- main -------------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 3; 1 with --quick)")
    p.add_argument("--only", default=",".join(ORDER), help=f"servers to run, comma-separated, of {','.join(ORDER)}")
    p.add_argument("--quick", action="store_true", help="small counts: a smoke run well under a minute")
    p.add_argument("--spawns", type=int, default=None, help="cold starts per server per round, each transport (5)")
    p.add_argument("--calls", type=int, default=None, help="sequential stdio calls per round, after warm-up (300)")
    p.add_argument("--warmup", type=int, default=None, help="untimed stdio calls before those (20)")
    p.add_argument("--pipeline", type=int, default=None, help="stdio calls written at once per round (1000)")
    p.add_argument("--concurrency", type=int, default=16, help="HTTP callers on the one session (16)")
    p.add_argument("--requests", type=int, default=None, help="HTTP calls per caller per round (100)")
    p.add_argument("--http-warmup", type=int, default=None, help="untimed HTTP calls per caller first (3)")
    p.add_argument("--truloop-env", action="append", default=[], metavar="K=V",
                   help="environment for truloop only, e.g. TRULOOP_FAST_PATHS=0 (repeatable)")  # fmt: skip
    p.add_argument("--timeout", type=float, default=60.0, help="seconds allowed per step (60)")
    p.add_argument("--max-seconds", type=float, default=1800.0, help="overall time budget (1800)")
    p.add_argument("--no-compile", action="store_true", help="leave truloop's tree without compiled bytecode")
    p.add_argument("--json", type=Path, default=None, help="also write every round's figures to this file")
    args = p.parse_args(argv)
    quick = args.quick
    defaults = {
        "rounds": 1 if quick else 3,
        "spawns": 1 if quick else 5,
        "calls": 100 if quick else 300,
        "warmup": 10 if quick else 20,
        "pipeline": 200 if quick else 1000,
        "requests": 15 if quick else 100,
        "http_warmup": 1 if quick else 3,
    }
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    for name in ("rounds", "spawns", "calls", "pipeline", "concurrency", "requests"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.warmup < 0 or args.http_warmup < 0:
        p.error("warm-up counts must not be negative")
    args.keys = [key.strip() for key in args.only.split(",") if key.strip()]
    unknown = sorted(set(args.keys) - set(ORDER))
    if unknown or not args.keys:
        p.error(f"--only: unknown {','.join(unknown) or 'empty list'}; choose from {','.join(ORDER)}")
    args.keys = [key for key in ORDER if key in args.keys]
    args.truloop_env_dict = {}
    for pair in args.truloop_env:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            p.error(f"--truloop-env wants K=V, got {pair!r}")
        args.truloop_env_dict[name] = value
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if not (VENV_BIN / "truloop-mcp").exists():
        print(f"peers: no {VENV_BIN / 'truloop-mcp'}: install the project first (README)", file=sys.stderr)
        return 1
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="peers-bench-") as tmp:
        try:
            if "truloop" in args.keys and not args.no_compile:
                compile_tree(str(VENV_BIN / "python"), PROJECT_DIR, log)
            peers = build_peers(args.keys, Path(tmp), args.truloop_env_dict)
            results = run(peers, args)
        except BenchError as exc:
            print(f"peers: error: {exc}", file=sys.stderr)
            return 1
    stdio = render("stdio", STDIO_ROWS, peers, results, short=False)
    http = render(f"streamable HTTP, c={args.concurrency} on one session", HTTP_ROWS, peers, results, short=True)
    notes = [note for rounds in results.values() for note in dict.fromkeys(rounds.notes)]
    if args.truloop_env_dict:
        notes.insert(0, "truloop ran with " + " ".join(f"{k}={v}" for k, v in args.truloop_env_dict.items()))
    print(stdio, http, sep="\n\n")
    print(f"\neach cell: the median of {args.rounds} round(s) (min-max over the rounds)")
    for note in notes:
        print(f"note: {note}")
    if args.json is not None:
        report = {
            "config": {
                "rounds": args.rounds,
                "spawns": args.spawns,
                "calls": args.calls,
                "warmup": args.warmup,
                "pipeline": args.pipeline,
                "concurrency": args.concurrency,
                "requests": args.requests,
                "http_warmup": args.http_warmup,
                "truloop_env": args.truloop_env_dict,
                "protocol_version": PROTOCOL_VERSION,
                "python": platform.python_version(),
                "platform": platform.platform(),
                "cpu_count": os.cpu_count(),
                "duration_s": time.perf_counter() - started,
            },
            "servers": {
                peer.key: {"label": peer.label, "stdio": list(peer.stdio), "http": list(peer.http)} for peer in peers
            },
            "figures": summarise(results),
            "notes": notes,
            "tables": {"stdio": stdio, "http": http},
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
