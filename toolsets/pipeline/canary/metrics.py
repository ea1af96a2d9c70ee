"""Samples of one tool version's calls, and what the rules read from them: two windows (the last 100 calls,
the last 30 minutes), each with its calls, error rate, timeout rate and latency p50/p95/p99; and, apart, the
scheduled runs of the current stage (`ScheduledRuns`: how many, how many failed, when, and the stage's gap)."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from toolsets.pipeline.canary.policy import WINDOW_CALLS, WINDOW_SECONDS

Outcome = Literal["ok", "error", "timeout"]


@dataclass(frozen=True, slots=True)
class Sample:
    at: float  # epoch seconds (replicas compare them: wall clock, not monotonic)
    outcome: Outcome  # a timeout is an error too: it counts in both rates
    latency_ms: float
    fatal: str | None = None  # a fatal error's kind (plugins/failures.py: permission, data_damage, process_died)

    def encode(self) -> str:
        return json.dumps([round(self.at, 3), self.outcome, round(self.latency_ms, 3), self.fatal])

    @classmethod
    def decode(cls, text: str | bytes) -> Sample:
        at, outcome, latency, fatal = json.loads(text)
        return cls(float(at), outcome, float(latency), fatal)


class Stats(BaseModel):
    calls: int = 0
    errors: int = 0
    timeouts: int = 0
    error_rate: float = 0.0
    timeout_rate: float = 0.0
    p50_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None


class Windows(BaseModel):
    last_calls: Stats  # the last WINDOW_CALLS calls
    last_minutes: Stats  # the calls of the last WINDOW_SECONDS

    @property
    def both(self) -> tuple[Stats, Stats]:
        return self.last_calls, self.last_minutes


def stats(samples: Sequence[Sample]) -> Stats:
    if not samples:
        return Stats()
    errors = sum(1 for s in samples if s.outcome != "ok")
    timeouts = sum(1 for s in samples if s.outcome == "timeout")
    latencies = sorted(s.latency_ms for s in samples)
    n = len(samples)
    return Stats(
        calls=n,
        errors=errors,
        timeouts=timeouts,
        error_rate=errors / n,
        timeout_rate=timeouts / n,
        p50_ms=percentile(latencies, 0.50),
        p95_ms=percentile(latencies, 0.95),
        p99_ms=percentile(latencies, 0.99),
    )


def percentile(ordered: Sequence[float], q: float) -> float:
    """Nearest rank: the smallest value with at least `q` of the values at or below it."""
    return round(ordered[max(0, math.ceil(q * len(ordered)) - 1)], 3)


def windows(samples: Sequence[Sample], now: float | None = None) -> Windows:
    """`samples` oldest first."""
    since = (time.time() if now is None else now) - WINDOW_SECONDS
    recent = [s for s in samples if s.at >= since]
    return Windows(last_calls=stats(samples[-WINDOW_CALLS:]), last_minutes=stats(recent))


class RunStats(BaseModel):
    """One version's scheduled runs at the current stage."""

    runs: int = 0
    failures: int = 0  # errors and timeouts
    timeouts: int = 0
    last_run: float | None = None  # epoch seconds


class ScheduledRuns(BaseModel):
    """The scheduled evidence of the current stage, apart from the real-time windows."""

    candidate: RunStats
    stable: RunStats
    stage_started: float  # epoch seconds
    gap_s: float  # how long a stage is observed before it may be approved
    since_stage_s: float  # at the time of reading
    until_gap_s: float  # 0 once the gap has passed
    awaiting_approval: bool = False  # enough good runs and the gap passed: the operator promotes it


def run_stats(samples: Sequence[Sample]) -> RunStats:
    return RunStats(
        runs=len(samples),
        failures=sum(1 for s in samples if s.outcome != "ok"),
        timeouts=sum(1 for s in samples if s.outcome == "timeout"),
        last_run=max((s.at for s in samples), default=None),
    )


def scheduled_runs(
    candidate: Sequence[Sample], stable: Sequence[Sample], stage_started: float, gap_s: float, now: float | None = None
) -> ScheduledRuns:
    since = max(0.0, (time.time() if now is None else now) - stage_started)
    return ScheduledRuns(
        candidate=run_stats(candidate),
        stable=run_stats(stable),
        stage_started=stage_started,
        gap_s=gap_s,
        since_stage_s=round(since, 3),
        until_gap_s=round(max(0.0, gap_s - since), 3),
    )
