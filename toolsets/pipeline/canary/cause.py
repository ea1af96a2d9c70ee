"""Why a rollout was held or rolled back, in one line an operator or a model reads: the rule that fired and the
numbers of both windows (the candidate's and stable's) the decision was taken on."""

from __future__ import annotations

from toolsets.pipeline.canary.metrics import Stats, Windows
from toolsets.pipeline.canary.state import CanaryState


def cause(state: CanaryState) -> str | None:
    """None unless the last decision was a hold or a rollback."""
    decision = state.decision
    if decision is None or decision.action not in ("hold", "rollback"):
        return None
    said = f"{decision.action} by {decision.by}, rule {decision.rule or '-'}: {decision.reason}"
    measured = [f"{who} {windows_said(state.metrics[who])}" for who in ("candidate", "stable") if who in state.metrics]
    if state.scheduled is not None and (decision.rule or "").startswith("scheduled"):
        runs = state.scheduled.candidate
        measured.append(f"candidate's scheduled runs {runs.runs}, {runs.failures} failed ({runs.timeouts} timeouts)")
    return "; ".join([said, *measured])


def windows_said(windows: Windows) -> str:
    return f"last 100 calls: {_stats(windows.last_calls)}, last 30 min: {_stats(windows.last_minutes)}"


def _stats(stats: Stats) -> str:
    p95 = "-" if stats.p95_ms is None else f"{stats.p95_ms:.1f} ms"
    return (
        f"{stats.calls} calls, {stats.errors} errors ({stats.error_rate:.1%}), "
        f"{stats.timeouts} timeouts ({stats.timeout_rate:.1%}), p95 {p95}"
    )
