"""The rollout policy: start shares and ladders by risk, and the rules' thresholds (real-time and scheduled)."""

from __future__ import annotations

from toolsets.core.annotations import ToolHints

LOW_RISK_LADDER: tuple[float, ...] = (10, 30, 60, 100)
HIGH_RISK_LADDER: tuple[float, ...] = (1, 5, 20, 50, 100)  # destructive or open-world tools

WINDOW_CALLS = 100  # the "last N calls" window
WINDOW_SECONDS = 30 * 60  # the "last T minutes" window
MIN_CALLS_TO_PROMOTE = 100  # a step is promoted only when its last-100 window is full
MAX_ERROR_RATE_TO_PROMOTE = 0.02
MAX_TIMEOUT_RATE_TO_PROMOTE = 0.01
MAX_P95_RATIO = 1.20  # candidate p95 within +20% of stable's
P95_SLACK_MS = 2.0  # ... or within this many ms of it: sub-millisecond tools would otherwise hold on jitter
MIN_STABLE_CALLS = 20  # stable calls a latency comparison needs
ROLLBACK_ERROR_RATE = 0.05
MIN_CALLS_TO_ROLL_BACK = 20  # an error rate is judged on at least this many calls (a fatal error needs one)
EVALUATE_EVERY = 10  # candidate calls between two evaluations (a fatal error is judged at once)
MAX_SAMPLES = 5_000  # samples kept per version and step (the 30-minute window is within these)

# Scheduled runs (a tool run by the scheduler, `RequestInfo.transport == "scheduled"`) come a few a day: they are
# judged on their own samples, never on the windows above, and a stage is promoted only by the operator.
SCHEDULED_MIN_RUNS = 3  # successful scheduled runs of the candidate a stage needs before it awaits approval
SCHEDULED_RUNS_PER_STAGE = 5  # scheduled runs sent to the candidate per stage (its evidence); later ones: stable
SCHEDULED_MIN_SECONDS_BETWEEN_STAGES = 10 * 60  # a stage is observed this long before it may be approved


def ladder_for(*hints: ToolHints) -> tuple[float, ...]:
    """Destructive or open-world tools (by either version's hints) start at 1%, others at 10%."""
    risky = any(hint.destructive or hint.open_world for hint in hints)
    return HIGH_RISK_LADDER if risky else LOW_RISK_LADDER


def next_share(ladder: tuple[float, ...], share: float) -> float:
    """The ladder's next rung above `share` (the first rung from 0)."""
    for rung in ladder:
        if rung > share:
            return rung
    return 100.0
