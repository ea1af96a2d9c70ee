"""The admission step's cost (toolsets/admission): per call over stdio, and the limiter's own per request.

1. `get_day_of_week` over stdio, calls alternating between servers run side by side (their order rotating each
   round): the revision before the
   admission step (`--before`, default the commit before it landed), this tree with its stdio default (no limits),
   with both limits on in memory, and with both limits on in Redis (`--redis-url`). Limits high enough never to
   refuse, so every call pays the whole step.
2. The limiter alone, in process: one `enter` + `leave` of a call (a count and a slot), in memory and in Redis.

    python bench/admission_bench.py [--calls 2000] [--warmup 200] [--before REF] [--redis URL]
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_support import exported_revision
from stdio_session import StdioSession

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))

HIGH = ("--calls-per-minute", "1000000", "--max-concurrent-calls", "10000")


def stdio_figures(options: argparse.Namespace) -> None:
    with (
        tempfile.TemporaryDirectory(prefix="truloop-admission-bench-") as scratch,
        exported_revision(options.before, "truloop-admission-before-") as before,
    ):
        root = Path(scratch)

        def common(name: str) -> tuple[str, ...]:
            return ("--data-dir", str(root / name), "--audit-log", "off")

        servers = {
            f"before ({options.before})": StdioSession(*common("a"), source=before),
            "limits off": StdioSession(*common("b")),
            "limits on, memory": StdioSession(*common("c"), *HIGH),
            "limits on, Redis": StdioSession(*common("d"), *HIGH, "--redis-url", options.redis),
        }
        samples: dict[str, list[float]] = {name: [] for name in servers}
        order = list(servers.items())
        for round_no in range(options.warmup + options.calls):
            turn = round_no % len(order)  # the order rotates each round: no server always follows the same one
            for name, server in order[turn:] + order[:turn]:
                elapsed, _ = server.call("get_day_of_week", {"date": "2026-03-10"})
                if round_no >= options.warmup:
                    samples[name].append(elapsed)
        for server in servers.values():
            server.close()
    print(f"# {options.calls} sequential get_day_of_week calls per server over stdio, interleaved")
    base = statistics.median(next(iter(samples.values())))
    for name, values in samples.items():
        values.sort()
        p50, p99 = statistics.median(values), values[int(len(values) * 0.99) - 1]
        print(f"{name:26s} p50 {p50 * 1e6:8.1f} µs  p99 {p99 * 1e6:8.1f} µs  p50 vs before {p50 / base:.3f}x")


async def limiter_figures(options: argparse.Namespace) -> None:
    from toolsets.admission.admission import Admission
    from toolsets.admission.kinds import RequestKind
    from toolsets.admission.limits import Limits, Refused
    from toolsets.admission.memory_limiter import MemoryLimiter
    from toolsets.admission.redis_limiter import RedisLimiter
    from toolsets.infra.redis_client import open_redis

    limits = Limits(per_minute=10**6, concurrent=10**4)
    redis = open_redis(options.redis)
    admissions = {
        "off": Admission(None, Limits()),
        "memory": Admission(MemoryLimiter(limits), limits),
        "Redis": Admission(RedisLimiter(redis, limits, prefix=f"bench-adm-{secrets.token_hex(4)}:"), limits),
    }
    print(f"# one call's enter + leave, {options.calls} times, in process")
    for name, admission in admissions.items():
        for _ in range(100):
            ticket = await admission.enter("alice", RequestKind.CALL)
            assert not isinstance(ticket, Refused)
            await ticket.leave()
        times = []
        for _ in range(options.calls):
            started = time.perf_counter()
            ticket = await admission.enter("alice", RequestKind.CALL)
            assert not isinstance(ticket, Refused)
            await ticket.leave()
            times.append(time.perf_counter() - started)
        times.sort()
        p50, p99 = statistics.median(times), times[int(len(times) * 0.99)]
        print(f"{name:8s} p50 {p50 * 1e6:7.1f} µs  p99 {p99 * 1e6:7.1f} µs")
    await redis.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--before", default="b5f3e80", help="the revision to compare with (default: before the step)")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    options = parser.parse_args()
    asyncio.run(limiter_figures(options))
    stdio_figures(options)


if __name__ == "__main__":
    main()
