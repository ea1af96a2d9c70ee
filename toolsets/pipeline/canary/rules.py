"""The rollout rules, evaluated on the candidate's windows at its current step against stable's windows:

- roll back when the error rate is above 5% (over at least `MIN_CALLS_TO_ROLL_BACK` calls) in either window;
  every error counts here, whatever its exception type. Only a fatal error (a permission error, data damage, or
  the candidate's worker process dying: plugins/failures.py) rolls back at once, on a single event, and that is
  the router's (`CanaryRouter._judge_fatal`);
- promote one step when the last-100 window is full (100 calls at this step) and, in both windows, the error
  rate is at most 2%, the timeout rate at most 1%, and p95 within +20% of stable's (`P95_SLACK_MS` for tiny ones);
- hold otherwise (too few calls, an error rate between 2% and 5%, timeouts, slow tail, or the operator's hold).

Scheduled runs are judged apart (`decide_scheduled`, on the stage's `ScheduledRuns`), never on the windows:

- roll back (soft) on any failed or timed-out scheduled run of the candidate at this stage (`scheduled_errors`):
  with a handful of runs, one failure is the signal (a fatal one is the router's, hard, as above);
- hold while the stage has fewer than `SCHEDULED_MIN_RUNS` candidate runs (`scheduled_samples`) or was observed
  for less than its gap (`scheduled_gap`);
- then hold awaiting the operator's approval (`manual`): a scheduled stage never promotes by itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolsets.pipeline.canary.metrics import ScheduledRuns, Stats, Windows
from toolsets.pipeline.canary.policy import (
    MAX_ERROR_RATE_TO_PROMOTE,
    MAX_P95_RATIO,
    MAX_TIMEOUT_RATE_TO_PROMOTE,
    MIN_CALLS_TO_PROMOTE,
    MIN_CALLS_TO_ROLL_BACK,
    MIN_STABLE_CALLS,
    P95_SLACK_MS,
    ROLLBACK_ERROR_RATE,
    SCHEDULED_MIN_RUNS,
)
from toolsets.pipeline.canary.state import Action, CanaryState

LABELS = ("last 100 calls", "last 30 minutes")
SCHEDULED_FAILED = "scheduled_errors"  # the rule of a rollback on a failed scheduled run
SCHEDULED_RULES = frozenset({"scheduled_samples", "scheduled_gap", SCHEDULED_FAILED, "manual"})


@dataclass(frozen=True, slots=True)
class Verdict:
    action: Action  # promote | hold | rollback
    reason: str
    rule: str


def decide(state: CanaryState, candidate: Windows, stable: Windows) -> Verdict:
    for label, window in zip(LABELS, candidate.both, strict=True):
        if window.calls >= MIN_CALLS_TO_ROLL_BACK and window.error_rate > ROLLBACK_ERROR_RATE:
            return Verdict("rollback", f"error rate {_rate(window)} over the {label} is above 5%", "errors")
    calls = candidate.last_calls.calls
    if calls < MIN_CALLS_TO_PROMOTE:
        return Verdict(
            "hold", f"{calls} of {MIN_CALLS_TO_PROMOTE} calls at {state.share:g}%: too few to judge", "samples"
        )
    for label, window in zip(LABELS, candidate.both, strict=True):
        if window.error_rate > MAX_ERROR_RATE_TO_PROMOTE:
            return Verdict("hold", f"error rate {_rate(window)} over the {label} is between 2% and 5%", "errors")
        if window.timeout_rate > MAX_TIMEOUT_RATE_TO_PROMOTE:
            return Verdict("hold", f"timeout rate {window.timeout_rate:.1%} over the {label} is above 1%", "timeouts")
    for label, mine, theirs in zip(LABELS, candidate.both, stable.both, strict=True):
        if theirs.calls < MIN_STABLE_CALLS or theirs.p95_ms is None:
            reason = f"stable has {theirs.calls} calls over the {label}: too few to compare latency"
            return Verdict("hold", reason, "stable_samples")
        limit = max(theirs.p95_ms * MAX_P95_RATIO, theirs.p95_ms + P95_SLACK_MS)
        if mine.p95_ms is not None and mine.p95_ms > limit:
            return Verdict(
                "hold",
                f"p95 {mine.p95_ms:.1f} ms over the {label} is more than 20% above stable's {theirs.p95_ms:.1f} ms",
                "latency",
            )
    if state.status == "held":
        return Verdict("hold", "held by the operator (the metrics alone would promote it)", "operator")
    window = candidate.last_calls
    return Verdict(
        "promote",
        f"{window.calls} calls at {state.share:g}%: error rate {_rate(window)}, timeout rate "
        f"{window.timeout_rate:.1%}, p95 {window.p95_ms:.1f} ms (stable {stable.last_calls.p95_ms:.1f} ms)",
        "healthy",
    )


def _rate(window: Stats) -> str:
    return f"{window.error_rate:.1%} ({window.errors}/{window.calls})"


def decide_scheduled(state: CanaryState, runs: ScheduledRuns) -> Verdict:
    """The scheduled rule on the stage's scheduled runs: roll back on a failure, else hold (the last hold, `manual`,
    awaits the operator's `canary promote`)."""
    candidate, at = runs.candidate, f"at {state.share:g}%"
    if candidate.failures:
        failed = "timed out" if candidate.timeouts == candidate.failures else "failed"
        return Verdict(
            "rollback",
            f"{candidate.failures} of {candidate.runs} scheduled runs {at} {failed}: with so few runs, one failure "
            "rolls the candidate back",
            SCHEDULED_FAILED,
        )
    if candidate.runs < SCHEDULED_MIN_RUNS:
        return Verdict(
            "hold",
            f"{candidate.runs} of {SCHEDULED_MIN_RUNS} scheduled runs {at}: too few to judge",
            "scheduled_samples",
        )
    if runs.until_gap_s > 0:
        return Verdict(
            "hold",
            f"{candidate.runs} scheduled runs ok {at}; the stage has been observed {duration(runs.since_stage_s)} of "
            f"the {duration(runs.gap_s)} it needs",
            "scheduled_gap",
        )
    return Verdict(
        "hold",
        f"awaiting approval: {candidate.runs} scheduled runs ok {at} over {duration(runs.since_stage_s)}; "
        f"promote with `canary promote {state.tool}`",
        "manual",
    )


def awaiting_approval(state: CanaryState, runs: ScheduledRuns) -> bool:
    return state.status in ("active", "held") and decide_scheduled(state, runs).rule == "manual"


def duration(seconds: float) -> str:
    """Whole seconds, minutes or hours (an operator's reading, not a measurement)."""
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"
