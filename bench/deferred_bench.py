"""Deferred-tool benchmark: MCP client -> truloop-mcp -> device stream -> device POST -> tool result, over HTTP.

    .venv/bin/python bench/deferred_bench.py [--backends memory,redis] [--redis-url URL] [--calls 200]
                                             [--sessions 100] [--per-session 10] [--devices 1] [--json out.json]

For each backend (the in-process store, then Redis under a fresh TRULOOP_REDIS_PREFIX) it spawns
`truloop-mcp --transport http --port 0` on 127.0.0.1 (reading the port it reports) with a random
TRULOOP_JWT_SECRET and a temporary --data-dir, waits for /healthz, then:
  round trip  one DeviceSimulator (bridge/device.py, canned answers) for user bench-user and one MCP session
              (streamable HTTP, bearer JWT) calling get_permission_status sequentially: --warmup calls, then
              --calls timed ones; p50/p99 of tool call -> result, envelope + POST included.
  load        the simulator is replaced by --devices concurrent device connections of the same user (the
              simulator posts one answer at a time); --sessions MCP sessions each fire --per-session
              confirm_interaction calls at once (title = call index), so sessions x per-session calls are in
              flight together. Checked: every call returned {"confirmed": true}; the devices saw that many
              distinct call ids, each title once; every call id was accepted (HTTP 200) exactly once, the other
              connections' answers being 409s; no call is left pending (a fresh device stream gets no replay,
              and with Redis no call:/result:/user-calls: key is left under the prefix).
The whole run stops by itself after --budget seconds; the server subprocesses are always stopped.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import re
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import jwt
from anyio.abc import TaskGroup
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

PROJECT_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_DIR))

from bench_support import process_cpu_seconds  # noqa: E402 (a sibling module of the benchmarks)

from bridge.device import ANSWER_PATH, STREAM_PATH, DeviceSimulator  # noqa: E402

USER = "bench-user"
AUDIENCE = "truloop-bench"  # the server accepts tokens naming it (TRULOOP_JWT_AUDIENCE)
HOST = "127.0.0.1"
CONFIRMED = {"confirmed": True}
GRANTED = {"status": "granted"}
CANNED = {"interaction.confirm": CONFIRMED, "permissions.getStatus": GRANTED}
BASELINE_TOOL, BASELINE_ARGS = "get_day_of_week", {"date": "2026-03-10"}
REPLAY_WINDOW_S = 1.0  # how long a fresh device stream listens for replayed pending calls
LOG_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\d[ T][\d:,.]+\s*")


class BenchError(RuntimeError):
    pass


@dataclass
class LoadResult:
    expected: int = 0
    wall_s: float = 0.0
    calls_per_s: float = 0.0
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    results: int = 0
    ok: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    timed_out: bool = False
    server_cpu_s: float = 0.0
    bench_cpu_s: float = 0.0
    ids_seen: int = 0
    titles_missing: int = 0
    duplicate_envelopes: int = 0
    device_reconnects: int = 0
    accepted: int = 0
    answered_twice: int = 0
    never_accepted: int = 0
    conflicts_409: int = 0
    other_posts: dict[str, int] = field(default_factory=dict)
    replayed_after: int = -1
    redis_keys_left: dict[str, int] = field(default_factory=dict)


@dataclass
class BackendResult:
    backend: str
    rt_calls: int = 0
    rt_p50_ms: float = 0.0
    rt_p99_ms: float = 0.0
    rt_errors: int = 0
    plain_p50_ms: float = 0.0
    load: LoadResult = field(default_factory=LoadResult)
    server_warnings: dict[str, int] = field(default_factory=dict)
    failure: str | None = None

    def problems(self) -> list[str]:
        load, found = self.load, []
        if self.failure:
            found.append(self.failure)
        if self.rt_errors:
            found.append(f"{self.rt_errors} round-trip calls failed")
        if load.timed_out:
            found.append("load phase timed out")
        if load.ok != load.expected:
            found.append(f"{load.expected - load.ok} of {load.expected} calls without a confirmed result")
        if load.ids_seen != load.expected or load.titles_missing:
            found.append(f"device saw {load.ids_seen} distinct ids, {load.titles_missing} titles missing")
        if load.accepted != load.expected or load.answered_twice or load.never_accepted:
            found.append(
                f"{load.accepted} accepted answers, {load.answered_twice} ids accepted twice, "
                f"{load.never_accepted} never accepted"
            )
        if load.other_posts:
            found.append(f"unexpected POST outcomes {load.other_posts}")
        if load.replayed_after > 0:
            found.append(f"{load.replayed_after} calls replayed to a fresh device after the load (left pending)")
        if any(load.redis_keys_left.values()):
            found.append(f"Redis keys left {load.redis_keys_left}")
        return found


def percentile(samples: Sequence[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))] if ordered else 0.0


# -- the server subprocess ---------------------------------------------------------------------


SERVING = re.compile(r"serving (http://\S+)/mcp\b")  # what `truloop-mcp --transport http` says once it serves


def server_command() -> list[str]:
    script = Path(sys.executable).parent / "truloop-mcp"
    return [str(script)] if script.exists() else [sys.executable, "-m", "server"]


@contextlib.contextmanager
def spawn_server(
    secret: str, data_dir: Path, log_path: Path, *, redis_url: str | None, prefix: str, deferred_timeout: float
) -> Iterator[tuple[str, int]]:
    """`truloop-mcp --transport http --port 0` on loopback, healthy; yields (base URL, pid), then stops it.
    The port is the one the server reports on stderr (no free port guessed beforehand, so none raced for)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_") and k != "REDIS_URL"}
    env.update(TRULOOP_JWT_SECRET=secret, TRULOOP_JWT_AUDIENCE=AUDIENCE, TRULOOP_REDIS_PREFIX=prefix)
    args = ["--transport", "http", "--host", HOST, "--port", "0", "--data-dir", str(data_dir)]
    args += ["--deferred-timeout", f"{deferred_timeout:g}", "--max-sessions-per-user", "1000"]
    if redis_url:
        args += ["--redis-url", redis_url]
    with log_path.open("wb") as log:  # a file, not a pipe: a chatty server must never block on a full pipe
        proc = subprocess.Popen([*server_command(), *args], env=env, cwd=PROJECT_DIR, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 20
        while True:
            exited = proc.poll() is not None
            serving = SERVING.search(log_path.read_text(errors="replace"))
            if serving:
                base = serving.group(1)
                if httpx.get(f"{base}/healthz", timeout=5.0).status_code == 200:
                    break
            if exited:
                raise BenchError(f"server exited early ({proc.returncode}): {log_path.read_text()[-500:]}")
            if time.monotonic() > deadline:
                raise BenchError(f"server not healthy in 20 s: {log_path.read_text()[-500:]}")
            time.sleep(0.05)  # a log file offers no event to await
        yield base, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def server_warnings(log_path: Path) -> dict[str, int]:
    """Distinct WARNING/ERROR/Traceback lines of the server log (timestamps dropped), with their counts."""
    found: Counter[str] = Counter()
    for line in log_path.read_text(errors="replace").splitlines():
        if SERVING.search(line):
            continue
        if any(word in line for word in ("WARNING", "ERROR", "Traceback", "Error")):
            found[LOG_TIMESTAMP.sub("", line.strip())[:200]] += 1
    return dict(found)


# -- clients -------------------------------------------------------------------------------------


def bearer(secret: str, ttl: float) -> str:
    claims = {"sub": USER, "role": "member", "aud": AUDIENCE, "exp": int(time.time() + ttl)}
    return jwt.encode(claims, secret, algorithm="HS256")


@contextlib.asynccontextmanager
async def mcp_session(base: str, token: str, http_timeout: float) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=http_timeout) as http,
        Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client,  # type: ignore[arg-type]
    ):
        yield client


async def sse_events(response: httpx.Response) -> AsyncIterator[tuple[str, str]]:
    """(event type, data) per SSE event, and ("comment", text) per comment line."""
    event_type, data_lines = "message", []
    async for line in response.aiter_lines():
        if line.startswith(":"):
            yield "comment", line[1:].strip()
        elif line:
            name, _, value = line.partition(":")
            if name == "event":
                event_type = value.removeprefix(" ")
            elif name == "data":
                data_lines.append(value.removeprefix(" "))
        else:
            if data_lines:
                yield event_type, "\n".join(data_lines)
            event_type, data_lines = "message", []


class ConcurrentDevice:
    """One device of the user that answers every request at once (up to `limit` POSTs in flight).

    Like the app it reconnects when the stream ends (pending calls are then delivered again) and
    answers an id again only if the earlier POST got no answer or a 5xx. `deliveries` counts
    envelopes per call id; `outcomes` (shared by the devices of a run) collects each POST's HTTP
    status, or the transport error's name.
    """

    def __init__(self, base: str, token: str, outcomes: dict[str, list[int | str]], limit: int) -> None:
        self.base = base
        self.auth = {"Authorization": f"Bearer {token}"}
        self.outcomes = outcomes
        self.limit = limit
        self.deliveries: Counter[str] = Counter()
        self.requests: dict[str, dict[str, Any]] = {}
        self.connections = 0
        self.connected = anyio.Event()
        self._busy: set[str] = set()  # being answered, or answered and taken or refused (< 500)

    async def run(self) -> None:
        limits = httpx.Limits(max_connections=self.limit + 2, max_keepalive_connections=self.limit + 2)
        limiter = anyio.CapacityLimiter(self.limit)
        async with httpx.AsyncClient(limits=limits, timeout=10.0) as client, anyio.create_task_group() as tg:
            while True:
                with contextlib.suppress(httpx.TransportError):
                    await self._listen(client, tg, limiter)
                await anyio.sleep(0.1)

    async def _listen(self, client: httpx.AsyncClient, tg: TaskGroup, limiter: anyio.CapacityLimiter) -> None:
        headers = {"Accept": "text/event-stream", **self.auth}
        timeout = httpx.Timeout(60.0, connect=5.0)
        async with client.stream("GET", self.base + STREAM_PATH, headers=headers, timeout=timeout) as response:
            if response.status_code != 200:
                if response.status_code >= 500:
                    return
                raise BenchError(f"device stream refused: HTTP {response.status_code}")
            async for kind, data in sse_events(response):
                if kind == "comment":
                    if data == "connected":
                        self.connections += 1
                        self.connected.set()
                    continue
                if kind != "agent-rpc":
                    continue
                message = json.loads(json.loads(data)["data"])
                if "id" not in message:
                    continue
                call_id = message["id"]
                self.deliveries[call_id] += 1
                self.requests.setdefault(call_id, message)
                if call_id not in self._busy:
                    self._busy.add(call_id)
                    tg.start_soon(self._answer, client, limiter, message)

    async def _answer(self, client: httpx.AsyncClient, limiter: anyio.CapacityLimiter, request: dict[str, Any]) -> None:
        reply = CANNED.get(request.get("method", ""))
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
        if reply is None:
            body["error"] = {"code": -32601, "message": "Method not found"}
        else:
            body["result"] = reply
        async with limiter:
            try:
                response = await client.post(self.base + ANSWER_PATH, json=body, headers=self.auth)
                outcome: int | str = response.status_code
            except httpx.HTTPError as exc:
                outcome = type(exc).__name__
        self.outcomes[request["id"]].append(outcome)
        if not isinstance(outcome, int) or outcome >= 500:
            self._busy.discard(request["id"])  # answer again if the call is delivered again


@contextlib.asynccontextmanager
async def running(device: Any) -> AsyncIterator[None]:
    """Run a device (simulator or concurrent) in the background, connected, for the block."""
    async with anyio.create_task_group() as tg:
        run = functools.partial(device.run, reconnect=False) if isinstance(device, DeviceSimulator) else device.run
        tg.start_soon(run)
        with anyio.fail_after(10):
            await device.connected.wait()
        yield
        tg.cancel_scope.cancel()


# -- phases --------------------------------------------------------------------------------------


async def round_trip(base: str, token: str, args: argparse.Namespace, out: BackendResult) -> None:
    device = DeviceSimulator(base, token)
    samples: list[float] = []
    plain: list[float] = []
    warmup, calls = args.warmup, args.calls
    async with running(device), mcp_session(base, token, http_timeout=30) as client:
        for n in range(warmup + args.baseline_calls):  # the same path without the device: the HTTP floor
            started = time.perf_counter()
            result = await client.call_tool(BASELINE_TOOL, BASELINE_ARGS)
            if result.is_error:
                raise BenchError(f"{BASELINE_TOOL} failed: {result.content}")
            if n >= warmup:
                plain.append((time.perf_counter() - started) * 1000)
        for n in range(warmup + calls):
            started = time.perf_counter()
            result = await client.call_tool(
                "get_permission_status", {"notification_message": "bench: checking", "permission": "location"}
            )
            elapsed = (time.perf_counter() - started) * 1000
            if result.is_error or result.structured_content != GRANTED:
                out.rt_errors += 1
            elif n >= warmup:
                samples.append(elapsed)
    refused = [a for a in device.answered if a["status"] != 200]
    out.rt_errors += len(refused)
    out.rt_calls, out.rt_p99_ms = len(samples), percentile(samples, 0.99)
    out.rt_p50_ms = statistics.median(samples) if samples else 0.0
    out.plain_p50_ms = statistics.median(plain) if plain else 0.0


async def load(base: str, pid: int, token: str, args: argparse.Namespace, limit: float, out: LoadResult) -> None:
    total = args.sessions * args.per_session
    out.expected = total
    outcomes: dict[str, list[int | str]] = defaultdict(list)
    devices = [ConcurrentDevice(base, token, outcomes, args.device_concurrency) for _ in range(args.devices)]
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    opened, finished = 0, 0
    all_open, go, all_done = anyio.Event(), anyio.Event(), anyio.Event()
    started = 0.0

    def record(latency_ms: float | None, problem: str | None) -> None:
        nonlocal finished
        finished += 1
        if problem is None and latency_ms is not None:
            latencies.append(latency_ms)
        else:
            errors[problem or "?"] += 1
        if finished == total:
            out.wall_s = time.perf_counter() - started
            all_done.set()

    async def one_call(client: Client, index: int) -> None:
        arguments = {"notification_message": f"bench {index}", "title": f"bench-{index}", "message": "Go ahead?"}
        begun = time.perf_counter()
        try:
            result = await client.call_tool("confirm_interaction", arguments)
        except Exception as exc:
            record(None, f"exception {type(exc).__name__}: {str(exc)[:120]}")
            return
        if result.is_error or result.structured_content != CONFIRMED:
            text = " ".join(getattr(c, "text", "") for c in result.content)[:160]
            record(None, f"tool error: {text}")
        else:
            record((time.perf_counter() - begun) * 1000, None)

    async def session(number: int) -> None:
        nonlocal opened
        counted = False
        try:
            async with mcp_session(base, token, http_timeout=limit) as client:
                opened += 1
                counted = True
                if opened == args.sessions:
                    all_open.set()
                await go.wait()
                async with anyio.create_task_group() as tg:
                    for k in range(args.per_session):
                        tg.start_soon(one_call, client, number * args.per_session + k)
                await all_done.wait()  # keep every session open until the last call is back
        except Exception as exc:
            if not counted:
                opened += 1
                if opened == args.sessions:
                    all_open.set()
                await go.wait()
                for _ in range(args.per_session):
                    record(None, f"session failed: {type(exc).__name__}: {str(exc)[:120]}")

    async with contextlib.AsyncExitStack() as stack:
        for device in devices:
            await stack.enter_async_context(running(device))
        with anyio.move_on_after(limit) as scope:
            try:
                async with anyio.create_task_group() as tg:
                    for number in range(args.sessions):
                        tg.start_soon(session, number)
                    await all_open.wait()
                    server_cpu, bench_cpu = (process_cpu_seconds(pid) or 0.0), time.process_time()
                    started = time.perf_counter()
                    go.set()
                    await all_done.wait()
                    out.server_cpu_s = (process_cpu_seconds(pid) or 0.0) - server_cpu
                    out.bench_cpu_s = time.process_time() - bench_cpu
            except Exception as exc:  # reported with the counts, not raised: the figures so far still matter
                errors[f"load aborted: {type(exc).__name__}: {str(exc)[:160]}"] += 1
        out.timed_out = scope.cancelled_caught
        if out.timed_out:
            out.wall_s = time.perf_counter() - started if started else limit
        await anyio.sleep(0.2)  # let the last POST outcomes land before the devices stop

    out.results = finished
    out.ok = len(latencies)
    out.errors = dict(errors)
    out.calls_per_s = out.ok / out.wall_s if out.wall_s else 0.0
    out.p50_ms, out.p99_ms = (statistics.median(latencies), percentile(latencies, 0.99)) if latencies else (0, 0)
    seen = {call_id: request for device in devices for call_id, request in device.requests.items()}
    out.ids_seen = len(seen)
    titles = Counter(request["params"].get("title") for request in seen.values())
    out.titles_missing = sum(1 for i in range(total) if titles[f"bench-{i}"] != 1)
    out.duplicate_envelopes = sum(n - 1 for device in devices for n in device.deliveries.values())
    out.device_reconnects = sum(max(0, device.connections - 1) for device in devices)
    accepted = {call_id: statuses.count(200) for call_id, statuses in outcomes.items()}
    out.accepted = sum(accepted.values())
    out.answered_twice = sum(1 for n in accepted.values() if n > 1)
    out.never_accepted = sum(1 for call_id in seen if accepted.get(call_id, 0) == 0)
    posts = Counter(str(s) for statuses in outcomes.values() for s in statuses if s != 200)
    out.conflicts_409 = posts.pop("409", 0)
    out.other_posts = dict(posts)


async def replayed_calls(base: str, token: str) -> int:
    """Pending calls of the user, as a fresh device stream gets them again right after `: connected`."""
    ids: set[str] = set()
    connected = anyio.Event()

    async def read(response: httpx.Response) -> None:
        async for kind, data in sse_events(response):
            if kind == "comment" and data == "connected":
                connected.set()
            elif kind == "agent-rpc":
                message = json.loads(json.loads(data)["data"])
                if "id" in message:
                    ids.add(message["id"])

    headers = {"Accept": "text/event-stream", "Authorization": f"Bearer {token}"}
    async with (
        httpx.AsyncClient() as client,
        client.stream("GET", base + STREAM_PATH, headers=headers, timeout=10) as response,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(read, response)
        await connected.wait()
        await anyio.sleep(REPLAY_WINDOW_S)
        tg.cancel_scope.cancel()
    return len(ids)


async def redis_leftovers(url: str, prefix: str, *, delete: bool) -> dict[str, int]:
    """Keys under `prefix` by kind (call, result, answered, ...); `delete` removes them afterwards."""
    import redis.asyncio as redis

    client = redis.from_url(url, decode_responses=True, socket_connect_timeout=2, socket_timeout=5)
    try:
        kinds: Counter[str] = Counter()
        keys = [key async for key in client.scan_iter(match=f"{prefix}*", count=1000)]
        for key in keys:
            kinds[key.removeprefix(prefix).split(":", 1)[0]] += 1
        if delete and keys:
            await client.delete(*keys)
        return dict(kinds)
    finally:
        await client.aclose()


async def bench_backend(
    base: str, pid: int, backend: str, args: argparse.Namespace, prefix: str, secret: str, deadline: float
) -> BackendResult:
    out = BackendResult(backend)
    token = bearer(secret, ttl=args.budget + 600)

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 1:
            raise BenchError("out of time budget")
        return remaining

    try:
        with anyio.fail_after(min(60.0, left())):
            await round_trip(base, token, args, out)
        await load(base, pid, token, args, min(args.load_timeout, left()), out.load)
        with anyio.fail_after(min(15.0, left())):
            out.load.replayed_after = await replayed_calls(base, token)
            if backend == "redis":
                keys = await redis_leftovers(args.redis_url, prefix, delete=False)
                out.load.redis_keys_left = {k: n for k, n in keys.items() if k in ("call", "result", "user-calls")}
    except (BenchError, TimeoutError) as exc:
        out.failure = f"{type(exc).__name__}: {exc}"
    return out


# -- report ----------------------------------------------------------------------------------------


def render(results: list[BackendResult], args: argparse.Namespace) -> str:
    total = args.sessions * args.per_session
    lines = [
        f"deferred tools over streamable HTTP on {HOST}, user {USER}, {os.cpu_count()} CPUs",
        f"round trip (rt): get_permission_status x{args.calls} sequential (after {args.warmup} warm-ups), "
        f"1 DeviceSimulator; plain: {BASELINE_TOOL} x{args.baseline_calls} on the same session (no device)",
        f"load: confirm_interaction, {args.sessions} sessions x {args.per_session} = {total} in flight, "
        f"{args.devices} concurrent device connection(s) (<= {args.device_concurrency} POSTs each)",
        "",
    ]
    header = (
        f"{'backend':<8}{'plain p50':>10}{'rt p50 ms':>10}{'rt p99 ms':>10}"
        f"{'load s':>8}{'calls/s':>9}{'p50 ms':>8}{'p99 ms':>8}"
        f"{'results':>8}{'errors':>7}{'ids':>6}{'dup env':>8}{'200s':>6}{'409s':>6}{'2x':>4}{'left':>6}{'keys':>6}"
    )
    lines += [header, "-" * len(header)]
    for r in results:
        x = r.load
        keys = str(sum(x.redis_keys_left.values())) if r.backend == "redis" and x.replayed_after >= 0 else "-"
        lines.append(
            f"{r.backend:<8}{r.plain_p50_ms:>10.2f}{r.rt_p50_ms:>10.2f}{r.rt_p99_ms:>10.2f}"
            f"{x.wall_s:>8.2f}{x.calls_per_s:>9.0f}"
            f"{x.p50_ms:>8.0f}{x.p99_ms:>8.0f}{x.results:>8}{x.results - x.ok:>7}{x.ids_seen:>6}"
            f"{x.duplicate_envelopes:>8}{x.accepted:>6}{x.conflicts_409:>6}{x.answered_twice:>4}"
            f"{x.replayed_after:>6}{keys:>6}"
        )
    lines += [
        "plain/rt: ms per call. load s: first call fired -> last result; calls/s, p50/p99 over confirmed results.",
        "ids: distinct call ids the devices saw; dup env: envelopes beyond the first per id and device;",
        "200s/409s: device answers accepted / refused as already answered; 2x: ids accepted twice;",
        "left: calls replayed to a fresh device stream after the load; keys: call:/result:/user-calls: left in Redis.",
        "",
    ]
    for r in results:
        x = r.load
        if x.server_cpu_s and x.ok:
            lines.append(
                f"{r.backend}: load CPU {x.server_cpu_s:.1f} s server "
                f"({x.server_cpu_s / x.ok * 1000:.1f} ms per confirmed call), "
                f"{x.bench_cpu_s:.1f} s bench client+device, over {x.wall_s:.1f} s wall"
            )
        if r.load.device_reconnects:
            lines.append(f"{r.backend}: the load devices reconnected {r.load.device_reconnects} time(s)")
    for r in results:
        problems = r.problems()
        lines.append(f"{r.backend}: " + ("all checks passed" if not problems else "; ".join(problems)))
        for error, count in sorted(r.load.errors.items(), key=lambda kv: -kv[1])[:5]:
            lines.append(f"  {count} x {error}")
        for warning, count in sorted(r.server_warnings.items(), key=lambda kv: -kv[1])[:5]:
            lines.append(f"  server log {count} x {warning}")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backends", default="memory,redis", help="comma-separated: memory, redis")
    p.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    p.add_argument("--calls", type=int, default=200, help="timed round-trip calls")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--baseline-calls", type=int, default=100, help=f"timed {BASELINE_TOOL} calls (no device)")
    p.add_argument("--sessions", type=int, default=100, help="concurrent MCP sessions in the load phase")
    p.add_argument("--per-session", type=int, default=10, help="concurrent calls per session")
    p.add_argument("--devices", type=int, default=1, help="device connections of the user answering the load")
    p.add_argument("--device-concurrency", type=int, default=32, help="answer POSTs in flight per connection")
    p.add_argument("--deferred-timeout", type=float, default=30.0, help="the server's --deferred-timeout")
    p.add_argument("--load-timeout", type=float, default=45.0, help="seconds the load phase may take")
    p.add_argument("--budget", type=float, default=170.0, help="the whole run stops after this many seconds")
    p.add_argument("--json", type=Path, help="also write the figures to this file")
    args = p.parse_args(argv)
    args.backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if not set(args.backends) <= {"memory", "redis"}:
        p.error("--backends takes memory and/or redis")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))  # so `finally` stops the server
    deadline = time.monotonic() + args.budget
    secret = secrets.token_urlsafe(36)  # 48 characters
    results: list[BackendResult] = []
    with tempfile.TemporaryDirectory(prefix="deferred-bench-") as tmp:
        for backend in args.backends:
            prefix = f"truloop-bench-{secrets.token_hex(6)}:"
            redis_url = args.redis_url if backend == "redis" else None
            log_path = Path(tmp) / f"{backend}.log"
            try:
                if redis_url:
                    try:
                        anyio.run(functools.partial(redis_leftovers, redis_url, prefix, delete=False))
                    except Exception as exc:
                        raise BenchError(f"Redis at {redis_url} is unreachable ({type(exc).__name__})") from None
                with spawn_server(
                    secret,
                    Path(tmp) / backend,
                    log_path,
                    redis_url=redis_url,
                    prefix=prefix,
                    deferred_timeout=args.deferred_timeout,
                ) as (base, pid):
                    result = anyio.run(bench_backend, base, pid, backend, args, prefix, secret, deadline)
            except BenchError as exc:
                result = BackendResult(backend, failure=str(exc))
            finally:
                if redis_url:
                    with contextlib.suppress(Exception):
                        anyio.run(functools.partial(redis_leftovers, redis_url, prefix, delete=True))
            if log_path.exists():
                result.server_warnings = server_warnings(log_path)
            results.append(result)
            if time.monotonic() > deadline:
                break
    print(render(results, args))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=2))
    return 0 if all(not r.problems() for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
