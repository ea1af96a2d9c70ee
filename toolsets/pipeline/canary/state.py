"""The shared state of one tool's rollout: which versions, the candidate's share, its status, the last decision
and the metrics it was taken on. Every replica reads it per call; a change is written with a revision check, so
of two replicas deciding at once, one decision applies."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from toolsets.pipeline.canary.metrics import ScheduledRuns, Windows

Status = Literal["active", "held", "rolled_back", "disabled", "promoted"]
Action = Literal["start", "promote", "hold", "rollback"]
ROUTED: frozenset[str] = frozenset({"active", "held", "promoted"})  # statuses whose share is routed


class RolloutDecision(BaseModel):
    action: Action
    reason: str
    rule: str | None = None  # which rule decided (a hold's kind: samples, errors, timeouts, latency, ...)
    at: float
    by: Literal["auto", "operator"] = "auto"
    rollback: Literal["soft", "hard"] | None = None
    share_from: float = 0.0
    share_to: float = 0.0


class CanaryState(BaseModel):
    tool: str
    stable: str  # version (content hash) of the stable file
    candidate: str  # version of the candidate file
    ladder: tuple[float, ...]
    share: float  # percent of keys routed to the candidate
    status: Status = "active"
    revision: int = 0
    step_started: float = 0.0
    stable_file: str | None = None  # file names, for the operator's command
    candidate_file: str | None = None
    decision: RolloutDecision | None = None
    metrics: dict[str, Windows] = {}  # "stable" / "candidate": the windows of the last evaluation
    scheduled: ScheduledRuns | None = None  # the scheduled runs of the last scheduled evaluation (None: none yet)

    @property
    def routed_share(self) -> float:
        return self.share if self.status in ROUTED else 0.0

    def step_key(self) -> str:
        """Where the candidate's samples of this step are kept: each step collects its own evidence."""
        return f"{self.tool}@{self.candidate}@{self.share:g}@{self.step_started:.3f}"

    def stable_key(self) -> str:
        return f"{self.tool}@{self.stable}"

    def scheduled_step_key(self) -> str:
        """The candidate's scheduled runs of this step: kept apart, so no real-time window ever reads them."""
        return f"{self.step_key()}@scheduled"

    def scheduled_stable_key(self) -> str:
        """Stable's scheduled runs of this step (the runs after the step's candidate runs)."""
        return f"{self.tool}@{self.stable}@{self.share:g}@{self.step_started:.3f}@scheduled"
