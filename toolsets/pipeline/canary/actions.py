"""The transitions of a rollout's state, the same whether the rules or an operator decide: each returns the next
state (revision + 1) carrying the decision (`news` tells whether it is one to audit)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Literal

from toolsets.pipeline.canary.policy import ladder_for, next_share
from toolsets.pipeline.canary.state import CanaryState, RolloutDecision

if TYPE_CHECKING:
    from toolsets.extensions.plugins.version import PluginVersion

By = Literal["auto", "operator"]


def start(
    tool: str,
    stable: str,
    candidate: str,
    ladder: tuple[float, ...],
    *,
    stable_file: str | None = None,
    candidate_file: str | None = None,
    revision: int = 0,
) -> CanaryState:
    now = time.time()
    share = ladder[0]
    reason = f"candidate {candidate} starts at {share:g}% (ladder {'-'.join(f'{r:g}' for r in ladder)})"
    return CanaryState(
        tool=tool,
        stable=stable,
        candidate=candidate,
        ladder=ladder,
        share=share,
        revision=revision,
        step_started=now,
        stable_file=stable_file,
        candidate_file=candidate_file,
        decision=RolloutDecision(action="start", reason=reason, at=now, share_to=share),
    )


def start_beside(stable: PluginVersion, candidate: PluginVersion, *, revision: int = 0) -> CanaryState:
    """The rollout of a loaded candidate beside its stable version: the ladder their hints call for."""
    return start(
        stable.name,
        stable.version,
        candidate.version,
        ladder_for(stable.tool_spec.hints, candidate.tool_spec.hints),
        stable_file=stable.source.path.name,
        candidate_file=candidate.source.path.name,
        revision=revision,
    )


def promote(state: CanaryState, reason: str, by: By = "auto", rule: str | None = None) -> CanaryState:
    share = next_share(state.ladder, state.share if state.status in ("active", "held") else 0.0)
    status = "promoted" if share >= 100 else "active"
    return _next(state, "promote", reason, by, share=share, status=status, rule=rule)


def hold(state: CanaryState, reason: str, by: By = "auto", rule: str | None = None) -> CanaryState:
    """An operator's hold pauses promotion (rollback still applies); the rules' hold only records why."""
    status = "held" if by == "operator" else state.status
    return _next(state, "hold", reason, by, share=state.share, status=status, rule=rule or by)


def rollback(
    state: CanaryState, reason: str, by: By = "auto", *, hard: bool = False, rule: str | None = None
) -> CanaryState:
    """Soft: the share goes to 0 and the candidate file stays. Hard: the candidate file is disabled too."""
    status = "disabled" if hard else "rolled_back"
    return _next(state, "rollback", reason, by, share=0.0, status=status, hard=hard, rule=rule)


def news(before: CanaryState, after: CanaryState) -> bool:
    """Whether `after` decided something `before` had not (an audit event): a hold of the same kind is not news."""
    old, new = before.decision, after.decision
    if new is None:
        return False
    if old is None:
        return True
    return (new.action, new.rule, after.share, after.status) != (old.action, old.rule, before.share, before.status)


def _next(
    state: CanaryState,
    action: str,
    reason: str,
    by: By,
    *,
    share: float,
    status: str,
    hard: bool = False,
    rule: str | None = None,
) -> CanaryState:
    now = time.time()
    decision = RolloutDecision.model_validate(
        {
            "action": action,
            "reason": reason,
            "rule": rule,
            "at": now,
            "by": by,
            "rollback": ("hard" if hard else "soft") if action == "rollback" else None,
            "share_from": state.routed_share,
            "share_to": share,
        }
    )
    step_started = now if share != state.share else state.step_started  # a new step collects new samples
    return state.model_copy(
        update={
            "share": share,
            "status": status,
            "revision": state.revision + 1,
            "step_started": step_started,
            "decision": decision,
        }
    )
