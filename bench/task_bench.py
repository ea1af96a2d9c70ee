"""MCP task benchmark: a deferred tool's call as a task, answered by an instant device, over 2026-07-28 HTTP.

    .venv/bin/python bench/task_bench.py [--backends memory,redis] [--redis-url URL] [--tasks 200]
                                         [--gets 2000] [--concurrency 8] [--json out.json]

For each backend (the in-process store, then Redis under a fresh TRULOOP_REDIS_PREFIX) it spawns
`truloop-mcp --transport http --port 0` on 127.0.0.1 (bench/deferred_bench.py's `spawn_server`), connects one
DeviceSimulator (canned calendar answers, at once) for the bench user, then:
  blocking      --tasks sequential `tools/call get_calendar_events` without asking for a task (today's path):
                p50/p99 of call -> result, the device's round trip included;
  task          --tasks sequential calls of the same tool as tasks: `tools/call` (-> `resultType: task`), then
                `tasks/get` every --poll-ms until `completed`: p50/p99 of creation -> completed, and of the
                `tools/call` alone; every task is checked to end `completed` with the device's events;
  tasks/get     --concurrency callers share --gets `tasks/get` of one completed task: calls/s and p50.
Every request is a plain 2026-07-28 POST (httpx, one connection pool per caller). The run stops by itself after
--budget seconds; the server subprocesses are always stopped.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import secrets
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx

PROJECT_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_DIR))
sys.path.insert(0, str(PROJECT_DIR / "bench"))

from deferred_bench import BenchError, bearer, percentile, spawn_server  # noqa: E402

from bridge.device import DeviceSimulator, sample_calendar  # noqa: E402
from tests.support import TASKS_EXTENSION as EXT  # noqa: E402
from tests.support import RpcError, modern_request  # noqa: E402

DAY = {"start_date": "2026-03-10T00:00:00+09:00", "end_date": "2026-03-11T00:00:00+09:00"}
CALL = {"name": "get_calendar_events", "arguments": {"notification_message": "Calendar", **DAY}}


@dataclass
class Figures:
    backend: str
    blocking_p50_ms: float = 0.0
    blocking_p99_ms: float = 0.0
    create_p50_ms: float = 0.0
    create_p99_ms: float = 0.0
    completed_p50_ms: float = 0.0
    completed_p99_ms: float = 0.0
    gets_per_s: float = 0.0
    get_p50_ms: float = 0.0
    failure: str | None = None
    notes: list[str] = field(default_factory=list)


class Modern:
    """2026-07-28 requests of one caller over one connection pool (tests/support.py's `modern_request`)."""

    def __init__(self, client: httpx.AsyncClient, base: str, token: str) -> None:
        self._client, self._base, self._token = client, base, token

    async def __call__(self, method: str, params: dict[str, Any], *, tasks: bool = True) -> dict[str, Any]:
        caps = {"extensions": {EXT: {}}} if tasks else {}
        try:
            return await modern_request(self._client, self._base, self._token, method, params, caps)
        except RpcError as failed:
            raise BenchError(f"{method}: {failed.error}") from None


@contextlib.asynccontextmanager
async def device(base: str, token: str) -> AsyncIterator[DeviceSimulator]:
    simulator = DeviceSimulator(base, token, {"calendar.getEvents": sample_calendar})
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: simulator.run(reconnect=False))
        with anyio.fail_after(10):
            await simulator.connected.wait()
        yield simulator
        tg.cancel_scope.cancel()


def _events(result: dict[str, Any]) -> int:
    return len((result.get("structuredContent") or {}).get("events") or [])


async def measure(base: str, token: str, args: argparse.Namespace, out: Figures) -> None:
    async with httpx.AsyncClient(timeout=30) as client, device(base, token):
        rpc = Modern(client, base, token)
        for _ in range(args.warmup):
            await rpc("tools/call", CALL, tasks=False)
        blocking = []
        for _ in range(args.tasks):
            started = time.perf_counter()
            result = await rpc("tools/call", CALL, tasks=False)
            blocking.append((time.perf_counter() - started) * 1000)
            if _events(result) != 2:
                raise BenchError(f"blocking call answered {result}")
        created, completed = [], []
        last = ""
        for _ in range(args.tasks):
            started = time.perf_counter()
            made = await rpc("tools/call", CALL)
            created.append((time.perf_counter() - started) * 1000)
            if made.get("resultType") != "task":
                raise BenchError(f"not a task: {made}")
            last = made["taskId"]
            while True:
                task = await rpc("tasks/get", {"taskId": last})
                if task["status"] == "completed":
                    break
                if task["status"] in ("failed", "cancelled"):
                    raise BenchError(f"task ended {task}")
                await anyio.sleep(args.poll_ms / 1000)
            completed.append((time.perf_counter() - started) * 1000)
            if _events(task["result"]) != 2:
                raise BenchError(f"task result {task['result']}")
        out.blocking_p50_ms, out.blocking_p99_ms = percentile(blocking, 0.5), percentile(blocking, 0.99)
        out.create_p50_ms, out.create_p99_ms = percentile(created, 0.5), percentile(created, 0.99)
        out.completed_p50_ms, out.completed_p99_ms = percentile(completed, 0.5), percentile(completed, 0.99)

    per_caller = max(1, args.gets // args.concurrency)
    latencies: list[float] = []

    async def caller() -> None:
        async with httpx.AsyncClient(timeout=30) as own:
            rpc = Modern(own, base, token)
            for _ in range(per_caller):
                started = time.perf_counter()
                task = await rpc("tasks/get", {"taskId": last})
                latencies.append((time.perf_counter() - started) * 1000)
                if task["status"] != "completed":
                    raise BenchError(f"tasks/get answered {task['status']}")

    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(args.concurrency):
            tg.start_soon(caller)
    wall = time.perf_counter() - started
    out.gets_per_s = len(latencies) / wall
    out.get_p50_ms = percentile(latencies, 0.5)


def render(results: list[Figures], args: argparse.Namespace) -> str:
    lines = [
        f"tasks: {args.tasks} sequential per path, poll every {args.poll_ms} ms; tasks/get: {args.gets} over "
        f"{args.concurrency} callers",
        "",
        "| backend | blocking call p50 / p99 | task: tools/call p50 / p99 | task: created -> completed p50 / p99 | "
        "tasks/get calls/s | tasks/get p50 |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        if r.failure:
            lines.append(f"| {r.backend} | failed: {r.failure} |  |  |  |  |")
            continue
        lines.append(
            f"| {r.backend} | {r.blocking_p50_ms:.1f} / {r.blocking_p99_ms:.1f} ms | {r.create_p50_ms:.1f} / "
            f"{r.create_p99_ms:.1f} ms | {r.completed_p50_ms:.1f} / {r.completed_p99_ms:.1f} ms | "
            f"{r.gets_per_s:.0f} | {r.get_p50_ms:.1f} ms |"
        )
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="memory,redis")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--poll-ms", type=float, default=2.0)
    parser.add_argument("--gets", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--budget", type=float, default=300.0)
    parser.add_argument("--json", type=Path)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    results = []
    for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
        secret = secrets.token_hex(16)
        out = Figures(backend)
        with tempfile.TemporaryDirectory(prefix="truloop-task-bench-") as scratch:
            scratch_dir = Path(scratch)
            prefix = f"truloop-task-bench-{secrets.token_hex(4)}:"
            redis = args.redis_url if backend == "redis" else None
            try:
                with spawn_server(
                    secret, scratch_dir / "data", scratch_dir / "server.log", redis_url=redis, prefix=prefix,
                    deferred_timeout=30,
                ) as (base, _pid):  # fmt: skip
                    token = bearer(secret, ttl=args.budget + 600)

                    async def run(base: str = base, token: str = token, out: Figures = out) -> None:
                        with anyio.fail_after(args.budget):
                            await measure(base, token, args, out)

                    anyio.run(run)
            except (BenchError, TimeoutError) as exc:
                out.failure = f"{type(exc).__name__}: {exc}"
        results.append(out)
    print(render(results, args))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=2))
    return 1 if any(r.failure for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
