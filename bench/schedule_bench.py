"""Scheduled runs benchmark: what a schedule adds to a tool's run, and how late runs start.

    .venv/bin/python bench/schedule_bench.py [--redis-url URL] [--database-url URL] [--ticks 300]
                                             [--seconds 20] [--json out.json]

In-process, on a `Deployment` of the settings (a fresh data folder; PostgreSQL and Redis when given, each under a
fresh Redis prefix):
  overhead  --ticks ticks of a schedule of `get_day_of_week` run one after the other by the engine's `TickRunner`
            (look at the schedule, claim the tick, run the tool through the front door, record the run, write the
            owner's inbox message), against the same number of plain front-door calls of the tool: p50/p99 of each
            and the difference (the scheduling overhead per run);
  drift     a schedule every second fired by the real engine (docket, on `memory://` or Redis) for --seconds:
            p50/p95/max of each run's start minus its planned instant.
The run stops by itself (each part is bounded by its count or seconds).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

PROJECT_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_DIR))

from server.runtime.composition import Deployment  # noqa: E402
from server.settings import Settings  # noqa: E402
from toolsets.core.context import Caller, RequestInfo  # noqa: E402
from toolsets.infra.store.schedules import Schedule  # noqa: E402

DAY = {"date": "2026-03-10"}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _schedule(owner: str, when: str, kind: str) -> Schedule:
    return Schedule(
        id="sch_" + secrets.token_hex(8), owner_id=owner, timezone="UTC", profile="member", tool="get_day_of_week",
        tool_ref={"kind": "builtin", "tool_name": "get_day_of_week"}, arguments=DAY, when=when, kind=kind,  # type: ignore[arg-type]
        created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    )  # fmt: skip


async def overhead(deployment: Deployment, ticks: int) -> dict[str, float]:
    services, door = deployment.services, deployment.front_door
    owner = "bench-" + secrets.token_hex(3)
    ctx = door.context_for(Caller(owner), "member", request=RequestInfo(transport="scheduled"))
    plain: list[float] = []
    for _ in range(ticks):
        started = time.perf_counter()
        await door.call(ctx, "get_day_of_week", DAY)
        plain.append((time.perf_counter() - started) * 1000)
    schedule = _schedule(owner, "PT1S", "interval")
    await services.schedules.create(schedule, cap=1)
    runner = deployment.schedules.runner
    ticked: list[float] = []
    planned = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
    for number in range(ticks):
        at = (planned + dt.timedelta(seconds=number)).isoformat(timespec="milliseconds")
        started = time.perf_counter()
        await runner.tick(schedule.id, at)
        ticked.append((time.perf_counter() - started) * 1000)
    await services.schedules.set_status(schedule.id, "cancelled", "bench")
    return {
        "call_p50_ms": statistics.median(plain), "call_p99_ms": percentile(plain, 0.99),
        "tick_p50_ms": statistics.median(ticked), "tick_p99_ms": percentile(ticked, 0.99),
        "overhead_p50_ms": statistics.median(ticked) - statistics.median(plain),
    }  # fmt: skip


async def drift(deployment: Deployment, seconds: float) -> dict[str, float]:
    services = deployment.services
    schedule = _schedule("bench-" + secrets.token_hex(3), "* * * * * *", "cron")
    await services.schedules.create(schedule, cap=1)
    await deployment.schedules.start(schedule)
    await anyio.sleep(seconds)
    await services.schedules.set_status(schedule.id, "cancelled", "bench")
    await deployment.schedules.stop(schedule.id)
    runs = await services.schedules.recent_runs(schedule.id)
    late = [
        (dt.datetime.fromisoformat(run.started_at) - dt.datetime.fromisoformat(run.planned_at)).total_seconds() * 1000
        for run in runs
    ]
    return {"runs": len(runs), "drift_p50_ms": statistics.median(late), "drift_p95_ms": percentile(late, 0.95),
            "drift_max_ms": max(late)}  # fmt: skip


async def main(options: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="schedule-bench-") as scratch:
        flags: dict[str, Any] = {"data_dir": Path(scratch), "schedule_min_interval": 1}
        if options.redis_url:
            flags.update(redis_url=options.redis_url, redis_prefix=f"bench{secrets.token_hex(4)}:")
        if options.database_url:
            flags["database_url"] = options.database_url
        deployment = Deployment(Settings(**flags))
        async with deployment:
            found = {"overhead": await overhead(deployment, options.ticks)}
            found["drift"] = await drift(deployment, options.seconds)
    found["backend"] = {"store": "postgresql" if options.database_url else "sqlite",
                        "engine": "redis" if options.redis_url else "memory"}  # fmt: skip
    return found


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url")
    parser.add_argument("--database-url")
    parser.add_argument("--ticks", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--json", type=Path)
    options = parser.parse_args()
    report = anyio.run(main, options)
    text = json.dumps(report, indent=2)
    print(text)
    if options.json:
        options.json.write_text(text + "\n")
