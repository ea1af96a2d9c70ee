"""HTTP benchmark: a bare `mcp` MCPServer against truloop-mcp (before and after), streamable HTTP, interleaved.

Every server runs as a subprocess on a loopback port it picks (`--port 0`; the port is read from its
stderr). The measuring side is a small HTTP/1.1 client on raw asyncio sockets (no MCP SDK, no httpx),
so that the client costs little of the machine the servers share with it.

Targets (the first is the baseline every ratio is taken against):
  bare       bench/bare_server.py --http: a bare MCPServer with the same tool, served as the SDK serves it
  bare-json  the same with `json_response=True`: its difference to `bare` is what the SSE framing costs
  before     truloop-mcp at a git revision (--before REF, exported with `git archive`)
  after      truloop-mcp from this working tree
  after+jwt  the same with TRULOOP_JWT_SECRET set and a bearer token on every request
  --peer LABEL=COMMAND  any other server with the same tool that names its port the same way, e.g. the
             TypeScript SDK's McpServer (`--peer "ts=node bench/peers/ts/server.mjs --http"`, after
             `npm ci` in bench/peers/ts)

Each connection opens its own stateful session (initialize, notifications/initialized; protocol
2025-11-25, responses as SSE unless the server answers JSON), or with --one-session all connections
call on the first one's session (16 concurrent callers on one session), then sends tools/call
get_day_of_week one request at a time. --concurrency connections at once, --requests per connection per
round, --rounds rounds; within a round the targets take turns (--slices turns each), so other load on the
machine falls on all of them alike. --targets picks which run (default: all of them). Reported: calls/s
(median round), latency p50/p99 over all calls, server CPU per call from the process's main thread
(`/proc/PID/schedstat`, ns: the event loop, where the per-call work is) and from all its threads
(`/proc/PID/stat`, ticks: writer threads, a runtime's GC and worker threads too); Linux only.

    .venv/bin/python bench/http_bench.py [--before REF] [--concurrency 16] [--requests 200] [--rounds 5]
        [--one-session] [--targets bare,after] [--peer "ts=node bench/peers/ts/server.mjs --http"]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import secrets
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
PROJECT_DIR = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

from bench_support import BenchError, exported_revision, process_cpu_seconds  # noqa: E402 (a sibling module of the benchmarks)

VENV_PYTHON = PROJECT_DIR / ".venv" / "bin" / "python"
SERVING = re.compile(r"serving (http://[\d.]+:(\d+))/mcp")
PROTOCOL_VERSION = "2025-11-25"
EXPECTED_DAY = "Tuesday"


@dataclass(frozen=True)
class Target:
    key: str
    label: str
    argv: tuple[str, ...]
    cwd: Path = PROJECT_DIR
    env: tuple[tuple[str, str], ...] = ()
    token: str | None = None


@dataclass
class Samples:
    calls_per_s: list[float] = field(default_factory=list)
    latency_s: list[float] = field(default_factory=list)
    cpu_per_call_s: list[float] = field(default_factory=list)
    main_cpu_per_call_s: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, float]:
        ordered = sorted(self.latency_s)
        return {
            "calls_per_s": statistics.median(self.calls_per_s),
            "p50_ms": statistics.median(ordered) * 1e3,
            "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1e3,
            "cpu_ms_per_call": statistics.median(self.cpu_per_call_s) * 1e3 if self.cpu_per_call_s else float("nan"),
            "main_cpu_us_per_call": (
                statistics.median(self.main_cpu_per_call_s) * 1e6 if self.main_cpu_per_call_s else float("nan")
            ),
        }


# -- a minimal HTTP/1.1 client -------------------------------------------------------------------


class Connection:
    """One keep-alive connection holding one MCP session."""

    def __init__(self, host: str, port: int, token: str | None) -> None:
        self.host, self.port = host, port
        self.headers = {
            "Host": f"{host}:{port}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self._next_id = 0
        self.reconnects = 0

    async def open(self) -> None:
        """Connect and open a session: initialize, then notifications/initialized."""
        await self.connect()
        await self.initialize()
        await self.initialized()

    async def connect(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    async def join(self, session: Connection, id_base: int) -> None:
        """Connect, to carry `session`'s MCP session (several callers at once on one session); this
        connection's request ids start after `id_base`, so that no two callers' ids meet."""
        for name in ("Mcp-Session-Id", "MCP-Protocol-Version"):
            if name in session.headers:
                self.headers[name] = session.headers[name]
        self._next_id = id_base
        await self.connect()

    async def initialize(self) -> None:
        reply = await self.post(
            {
                "jsonrpc": "2.0",
                "id": self._id(),
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "http-bench", "version": "1"},
                },
            }
        )
        if "result" not in reply:
            raise BenchError(f"initialize failed: {reply}")
        self.headers["MCP-Protocol-Version"] = PROTOCOL_VERSION

    async def initialized(self) -> None:
        await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, expect_body=False)

    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def call(self) -> dict[str, Any]:
        """One tools/call get_day_of_week, checked; its result."""
        request_id = self._id()
        reply = await self.post(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": "get_day_of_week", "arguments": {"date": "2026-03-10"}},
            }
        )
        result = reply.get("result") or {}
        if reply.get("id") != request_id or (result.get("structuredContent") or {}).get("day_of_week") != EXPECTED_DAY:
            raise BenchError(f"unexpected tools/call reply: {str(reply)[:300]}")
        return result

    async def post(self, message: dict[str, Any], expect_body: bool = True) -> dict[str, Any]:
        body = json.dumps(message, separators=(",", ":")).encode()
        head = "".join(f"{k}: {v}\r\n" for k, v in self.headers.items())
        request = f"POST /mcp HTTP/1.1\r\n{head}Content-Length: {len(body)}\r\n\r\n".encode() + body
        try:
            status, headers, payload = await self._exchange(request)
        except (ConnectionError, asyncio.IncompleteReadError):
            # uvicorn closes a connection idle for 5 s (while the other targets ran): a new one, same session
            await self.close()
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
            self.reconnects += 1
            status, headers, payload = await self._exchange(request)
        if "mcp-session-id" in headers:
            self.headers["Mcp-Session-Id"] = headers["mcp-session-id"]
        if status >= 300 or not expect_body:
            if status >= 300:
                raise BenchError(f"HTTP {status}: {payload[:300]!r}")
            return {}
        if headers.get("content-type", "").startswith("text/event-stream"):
            for line in payload.splitlines():
                if line.startswith(b"data:") and line[5:].strip():
                    data = json.loads(line[5:])
                    if "result" in data or "error" in data:
                        return data
            raise BenchError(f"no JSON-RPC response in the SSE body: {payload[:300]!r}")
        return json.loads(payload)

    async def _exchange(self, request: bytes) -> tuple[int, dict[str, str], bytes]:
        assert self.reader is not None and self.writer is not None
        if self.reader.at_eof():
            raise ConnectionResetError("closed by the server")
        self.writer.write(request)
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        if "content-length" in headers:
            return status, headers, await self.reader.readexactly(int(headers["content-length"]))
        if headers.get("transfer-encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                chunks.append(chunk[:-2])
            return status, headers, b"".join(chunks)
        return status, headers, b""

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(Exception):
                await self.writer.wait_closed()


# -- servers -------------------------------------------------------------------------------------


class Server:
    def __init__(self, target: Target, scratch: Path) -> None:
        self.target = target
        self.log = scratch / f"{target.key}.stderr"
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_")}
        env.update(dict(target.env))
        with self.log.open("wb") as err:
            self.proc = subprocess.Popen(target.argv, cwd=target.cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + 30
        while True:
            text = self.log.read_text(errors="replace")
            found = SERVING.search(text)
            if found:
                self.port = int(found.group(2))
                return
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise BenchError(f"{target.label} did not start: {text[-2000:]}")
            time.sleep(0.05)

    def cpu_seconds(self) -> float | None:
        return process_cpu_seconds(self.proc.pid)

    def main_thread_cpu_seconds(self) -> float | None:
        """CPU time of the process's main thread, in ns resolution (the first field of /proc/PID/schedstat)."""
        try:
            return int(Path(f"/proc/{self.proc.pid}/schedstat").read_text().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            return None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@contextlib.contextmanager
def blamed(server: Server) -> Iterator[None]:
    """A failure names the target and ends with its stderr."""
    try:
        yield
    except (OSError, EOFError, ValueError, BenchError) as exc:
        tail = server.log.read_text(errors="replace")[-1500:]
        raise BenchError(f"{server.target.label}: {type(exc).__name__}: {exc}\n--- its stderr ---\n{tail}") from None


async def open_connections(server: Server, count: int, one_session: bool) -> list[Connection]:
    connections = [Connection("127.0.0.1", server.port, server.target.token) for _ in range(count)]
    with blamed(server):
        if one_session:  # the first opens the session, the others call on it (their ids apart, as a client's are)
            first, *others = connections
            await first.open()
            await asyncio.gather(*(c.join(first, n * 10_000_000) for n, c in enumerate(others, 1)))
        else:
            await asyncio.gather(*(c.open() for c in connections))
        for connection in connections:  # warm-up
            await connection.call()
    return connections


@dataclass
class Slice:
    calls: int = 0
    seconds: float = 0.0
    cpu_seconds: float | None = 0.0
    main_cpu_seconds: float | None = 0.0


async def one_slice(server: Server, connections: list[Connection], requests: int, samples: Samples) -> Slice:
    latencies: list[float] = []

    async def drive(connection: Connection) -> None:
        for _ in range(requests):
            started = time.perf_counter()
            await connection.call()
            latencies.append(time.perf_counter() - started)

    cpu_before, main_before = server.cpu_seconds(), server.main_thread_cpu_seconds()
    started = time.perf_counter()
    with blamed(server):
        await asyncio.gather(*(drive(c) for c in connections))
    elapsed = time.perf_counter() - started
    cpu_after, main_after = server.cpu_seconds(), server.main_thread_cpu_seconds()
    samples.latency_s.extend(latencies)
    cpu = cpu_after - cpu_before if cpu_before is not None and cpu_after is not None else None
    main = main_after - main_before if main_before is not None and main_after is not None else None
    return Slice(requests * len(connections), elapsed, cpu, main)


async def run(targets: Sequence[Target], args: argparse.Namespace, scratch: Path) -> dict[str, Samples]:
    samples = {target.key: Samples() for target in targets}
    servers: dict[str, Server] = {}
    sessions: dict[str, list[Connection]] = {}
    try:
        for target in targets:
            servers[target.key] = Server(target, scratch)
            sessions[target.key] = await open_connections(servers[target.key], args.concurrency, args.one_session)
        # Each round gives every target `requests` calls per connection, in `slices` turns taken in rotation:
        # a burst of other load on the machine then lands on every target alike instead of on one of them.
        slices = max(1, min(args.slices, args.requests))
        per_slice = [args.requests // slices + (1 if n < args.requests % slices else 0) for n in range(slices)]
        for index in range(args.rounds):
            print(f"# round {index + 1} of {args.rounds}", file=sys.stderr, flush=True)
            totals = {target.key: Slice() for target in targets}
            for requests in per_slice:
                for target in targets:
                    part = await one_slice(servers[target.key], sessions[target.key], requests, samples[target.key])
                    total = totals[target.key]
                    total.calls += part.calls
                    total.seconds += part.seconds
                    if total.cpu_seconds is not None and part.cpu_seconds is not None:
                        total.cpu_seconds += part.cpu_seconds
                    else:
                        total.cpu_seconds = None
                    if total.main_cpu_seconds is not None and part.main_cpu_seconds is not None:
                        total.main_cpu_seconds += part.main_cpu_seconds
                    else:
                        total.main_cpu_seconds = None
            for target in targets:
                total = totals[target.key]
                samples[target.key].calls_per_s.append(total.calls / total.seconds)
                if total.cpu_seconds is not None:
                    samples[target.key].cpu_per_call_s.append(total.cpu_seconds / total.calls)
                if total.main_cpu_seconds is not None:
                    samples[target.key].main_cpu_per_call_s.append(total.main_cpu_seconds / total.calls)
    finally:
        for connections in sessions.values():
            for connection in connections:
                await connection.close()
        for server in servers.values():
            server.stop()
    return samples


# -- report ----------------------------------------------------------------------------------------

ROWS = (
    ("calls/s (c=%d)", "calls_per_s", ".0f"),
    ("latency p50 (ms)", "p50_ms", ".2f"),
    ("latency p99 (ms)", "p99_ms", ".2f"),
    ("server CPU/call, main thread (us)", "main_cpu_us_per_call", ".0f"),
    ("server CPU/call, all threads (ms)", "cpu_ms_per_call", ".3f"),
)


def render(targets: Sequence[Target], summaries: dict[str, dict[str, float]], concurrency: int) -> str:
    base = summaries[targets[0].key]
    header = ["metric", *(t.label for t in targets), *(f"{t.label}/{targets[0].label}" for t in targets[1:])]
    rows = [header]
    for label, key, fmt in ROWS:
        cells = [label.replace("%d", str(concurrency)), *(format(summaries[t.key][key], fmt) for t in targets)]
        cells += [f"{summaries[t.key][key] / base[key]:.2f}x" for t in targets[1:]]
        rows.append(cells)
    widths = [max(len(row[col]) for row in rows) for col in range(len(header))]
    lines = ["  ".join([row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)])
             for row in rows]  # fmt: skip
    lines.insert(1, "  ".join("-" * w for w in widths))
    notes = []
    if "bare_json" in summaries and "bare" in summaries:
        sse = summaries["bare"]["cpu_ms_per_call"] - summaries["bare_json"]["cpu_ms_per_call"]
        notes.append(f"SSE framing (bare - bare-json): {sse * 1000:+.0f} us of server CPU per response")
    if "after" in summaries and "before" in summaries:
        after, before = summaries["after"], summaries["before"]
        notes.append(
            f"after / before: {after['calls_per_s'] / before['calls_per_s']:.2f}x calls/s, "
            f"{after['main_cpu_us_per_call'] / before['main_cpu_us_per_call']:.2f}x server CPU per call (main thread)"
        )
    if "after" in summaries and "after_jwt" in summaries:
        slower = 1 - summaries["after_jwt"]["calls_per_s"] / summaries["after"]["calls_per_s"]
        notes.append(f"JWT auth on: {slower * 100:+.1f}% fewer calls/s than without")
    return "\n".join(lines + notes)


def build_targets(args: argparse.Namespace, scratch: Path, before: Path | None) -> list[Target]:
    python = args.python
    bare = (python, str(BENCH_DIR / "bare_server.py"), "--http")
    truloop = (python, "-m", "server", "--transport", "http", "--host", "127.0.0.1", "--port", "0")
    truloop += ("--timezone", "Asia/Seoul", "--log-level", "ERROR", "--max-sessions-per-user", "1000")
    secret = secrets.token_urlsafe(36)
    targets = [Target("bare", "bare", bare), Target("bare_json", "bare-json", (*bare, "--json"))]
    if before is not None:
        targets.append(Target("before", "before", (*truloop, "--data-dir", str(scratch / "before")), cwd=before))
    targets.append(Target("after", "after", (*truloop, "--data-dir", str(scratch / "after"))))
    if not args.no_jwt:
        import jwt

        claims = {"sub": "bench", "role": "member", "aud": "truloop-bench", "exp": int(time.time()) + 3600}
        token = jwt.encode(claims, secret, "HS256")
        env = (("TRULOOP_JWT_SECRET", secret), ("TRULOOP_JWT_AUDIENCE", "truloop-bench"))
        argv = (*truloop, "--data-dir", str(scratch / "after-jwt"))
        targets.append(Target("after_jwt", "after+jwt", argv, env=env, token=token))
    for peer in args.peer:
        label, _, command = peer.partition("=")
        if not label or not command:
            raise BenchError(f"--peer wants LABEL=COMMAND, not {peer!r}")
        targets.append(Target(f"peer_{label}", label, tuple(shlex.split(command))))
    if args.targets:
        wanted = [name.strip() for name in args.targets.split(",") if name.strip()]
        known = {t.label: t for t in targets}
        missing = [name for name in wanted if name not in known]
        if missing:
            raise BenchError(f"unknown --targets {missing}; known: {sorted(known)}")
        targets = [known[name] for name in wanted]
    return targets


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--python", default=str(VENV_PYTHON) if VENV_PYTHON.exists() else sys.executable)
    p.add_argument("--before", default=None, metavar="REF", help="also run truloop-mcp at this git revision")
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--requests", type=int, default=200, help="calls per connection per round")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--slices", type=int, default=4, help="turns each round's calls are split into, across targets")
    p.add_argument("--no-jwt", action="store_true", help="leave out the after+jwt target")
    p.add_argument("--one-session", action="store_true", help="all connections call on one shared session")
    p.add_argument("--peer", action="append", default=[], metavar="LABEL=COMMAND", help="another server to run")
    p.add_argument(
        "--targets",
        default=None,
        metavar="A,B",
        help="run only these labels, in this order (the first is the baseline)",
    )
    p.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with contextlib.ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="http-bench-")))
        try:
            before = stack.enter_context(exported_revision(args.before, "http-bench-before-")) if args.before else None
            targets = build_targets(args, scratch, before)
            if not targets:
                raise BenchError("no targets to run")
            samples = asyncio.run(run(targets, args, scratch))
        except BenchError as exc:
            print(f"http_bench: error: {exc}", file=sys.stderr)
            return 1
    summaries = {key: value.summary() for key, value in samples.items()}
    print(render(targets, summaries, args.concurrency))
    if args.json:
        args.json.write_text(
            json.dumps({"summaries": summaries, "config": vars(args) | {"json": str(args.json)}}, indent=2, default=str)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
