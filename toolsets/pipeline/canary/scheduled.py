"""Scheduled runs under a canary rollout: which run goes to the candidate, and the stage's scheduled evidence.

A scheduled run is a call whose request says so (`RequestInfo.transport == "scheduled"`). The ladder's share picks
real-time callers by a hash; a tool that runs a few times a day would almost never reach a 10% candidate that way.
So scheduled runs go to the candidate while the stage collects its evidence (its first `SCHEDULED_RUNS_PER_STAGE`
runs), then to stable until the operator approves the next stage. Their samples are kept under their own keys
(`CanaryState.scheduled_step_key` / `scheduled_stable_key`), never in the real-time windows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolsets.pipeline.canary.metrics import ScheduledRuns, scheduled_runs
from toolsets.pipeline.canary.policy import SCHEDULED_RUNS_PER_STAGE
from toolsets.pipeline.canary.rules import awaiting_approval

if TYPE_CHECKING:
    from toolsets.core.context import ToolContext
    from toolsets.pipeline.canary.state import CanaryState
    from toolsets.pipeline.canary.store import CanaryStore

TRANSPORT = "scheduled"


def is_scheduled(ctx: ToolContext[Any]) -> bool:
    return ctx.request.transport == TRANSPORT


async def to_candidate(store: CanaryStore, state: CanaryState) -> bool:
    """Whether this scheduled run goes to the candidate: while the stage collects its runs, or once promoted."""
    if state.status == "promoted":
        return True
    if state.status not in ("active", "held"):
        return False
    return len(await store.samples(state.scheduled_step_key())) < SCHEDULED_RUNS_PER_STAGE


def gap_of(state: CanaryState, default: float) -> float:
    """The gap the serving process judged this rollout by (kept with its last scheduled evaluation); `default` (this
    process's setting) before any: what `canary status` and `canary promote` read, so they agree with the server."""
    return state.scheduled.gap_s if state.scheduled is not None else default


async def read_runs(store: CanaryStore, state: CanaryState, gap_s: float, now: float | None = None) -> ScheduledRuns:
    """The stage's scheduled runs, live from the store, with whether it awaits the operator's approval."""
    candidate = await store.samples(state.scheduled_step_key())
    stable = await store.samples(state.scheduled_stable_key())
    runs = scheduled_runs(candidate, stable, state.step_started, gap_s, now)
    return runs.model_copy(update={"awaiting_approval": awaiting_approval(state, runs)})
