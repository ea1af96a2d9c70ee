"""The rollout rules, evaluated on the candidate's windows at its current step against stable's windows:

- roll back when the error rate is above 5% (over at least `MIN_CALLS_TO_ROLL_BACK` calls) in either window;
  every error counts here, whatever its exception type. Only a fatal error (a permission error, data damage, or
  the candidate's worker process dying: plugins/failures.py) rolls back at once, on a single event, and that is
  the router's (`CanaryRouter._judge_fatal`);
- promote one step when the last-100 window is full (100 calls at this step) and, in both windows, the error
  rate is at most 2%, the timeout rate at most 1%, and p95 within +20% of stable's (`P95_SLACK_MS` for tiny ones);
- hold otherwise (too few calls, an error rate between 2% and 5%, timeouts, slow tail, or the operator's hold).
"""

from __future__ import annotations

from dataclasses import dataclass

from toolsets.pipeline.canary.metrics import Stats, Windows
from toolsets.pipeline.canary.policy import (
    MAX_ERROR_RATE_TO_PROMOTE,
    MAX_P95_RATIO,
    MAX_TIMEOUT_RATE_TO_PROMOTE,
    MIN_CALLS_TO_PROMOTE,
    MIN_CALLS_TO_ROLL_BACK,
    MIN_STABLE_CALLS,
    P95_SLACK_MS,
    ROLLBACK_ERROR_RATE,
)
from toolsets.pipeline.canary.state import Action, CanaryState

LABELS = ("last 100 calls", "last 30 minutes")


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
