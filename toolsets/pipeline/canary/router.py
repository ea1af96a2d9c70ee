"""The per-call hook of the canary rollout: pick the version, run it, keep its sample, apply the rules.

`CanaryMiddleware` (toolsets/pipeline/canary/canary_middleware.py, composed before the audit middleware) picks the
version of a plugin call that has a candidate and pins it on the call's notes, so both audit lines carry
`tool_version` and `route`; `CanaryRouter.run` (the plugin toolset's innermost step) runs the call on that version,
records its sample, and every `EVALUATE_EVERY` candidate calls applies the rules. A fatal error of the candidate (a
permission error, data damage, its worker process dying: plugins/failures.py) rolls it back hard at once; any other
error counts toward the error rate. A scheduled run (`RequestInfo.transport == "scheduled"`) is routed and judged
by the scheduled rule instead (scheduled.py, `rules.decide_scheduled`): its samples are kept apart from the
real-time windows, one failed run rolls the candidate back, and a stage is promoted only by the operator. A rollout
starts as soon as the catalog loads the candidate (`observe`). A decision is one audit event (`canary_decision`),
written by the one process whose revision-checked write won; a hold or a rollback is also kept as feedback on the
candidate (its rule, both windows, sample failing inputs: plugins/feedback.py). The canary never fails a call: when
its store is unreachable, calls run on the stable version and nothing is recorded.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from toolsets.core.call import ToolCall
from toolsets.core.call_notes import Route
from toolsets.core.envelope import ToolOk, ToolResult
from toolsets.core.errors import CallCancelled, ErrorCode, InputRequired, ToolError
from toolsets.extensions.plugins.failures import DESCRIBED, fatal_kind
from toolsets.pipeline.canary import actions, files, scheduled
from toolsets.pipeline.canary.metrics import Outcome, Sample, windows
from toolsets.pipeline.canary.policy import EVALUATE_EVERY, SCHEDULED_MIN_SECONDS_BETWEEN_STAGES
from toolsets.pipeline.canary.routing import KeyKind, routing_key, to_candidate
from toolsets.pipeline.canary.rules import decide, decide_scheduled
from toolsets.pipeline.canary.state import CanaryState
from toolsets.pipeline.canary.store import CanaryStore, LocalCanaryStore

if TYPE_CHECKING:
    from toolsets.extensions.plugins.catalog import PluginCatalog
    from toolsets.extensions.plugins.version import PluginVersion

logger = logging.getLogger("truloop.canary")

Emit = Callable[[dict[str, Any]], None]


@dataclass(frozen=True, slots=True)
class Choice:
    call_id: str
    version: PluginVersion
    route: Route
    state: CanaryState
    candidate: bool  # whether `version` is the candidate (a scheduled run's route does not say)


@dataclass(frozen=True, slots=True)
class CanarySetup:
    """What the deployment gives a catalog's canary router: its store (None: this process's, in memory), how calls
    are keyed, where its decision lines go (the audit log's `emit`), and `scheduled_gap`: the seconds a stage is
    observed before its scheduled runs may be approved."""

    store: CanaryStore | None = None
    key_kind: KeyKind = "user"
    emit: Emit | None = None
    scheduled_gap: float = SCHEDULED_MIN_SECONDS_BETWEEN_STAGES


class CanaryRouter:
    def __init__(self, catalog: PluginCatalog, setup: CanarySetup | None = None) -> None:
        setup = setup if setup is not None else CanarySetup()
        self.catalog = catalog
        self.store: CanaryStore = setup.store if setup.store is not None else LocalCanaryStore()
        self.key_kind: KeyKind = setup.key_kind
        self.emit: Emit | None = setup.emit  # the audit log's, for decision lines
        self.scheduled_gap: float = setup.scheduled_gap
        self._evaluating: dict[str, anyio.Lock] = {}
        self._files = anyio.Lock()

    async def observe(self) -> None:
        """Start (or bring up to date) the rollout of every loaded candidate, before any call of it: the catalog
        calls this when what it serves changed."""
        for name, stable in list(self.catalog.versions().items()):
            candidate = self.catalog.candidate(name)
            if candidate is None:
                continue
            try:
                state = await self._state(stable, candidate, self.emit)
                if state is not None and state.candidate == candidate.version and state.status == "promoted":
                    await self.apply_files(state)  # promoted elsewhere (an operator, another replica)
            except Exception as exc:
                logger.warning("canary of %s: store unavailable (%s); the rollout starts at its first call", name, exc)

    # -- choosing ----------------------------------------------------------------------------------------------

    async def choose(self, call: ToolCall) -> Choice | None:
        """The version this call runs on, or None when its tool has no candidate (or the store is unreachable)."""
        from toolsets.extensions.plugins.tool import PluginTool

        tool = call.tool
        if not isinstance(tool, PluginTool):
            return None
        candidate = self.catalog.candidate(tool.name)
        if candidate is None:
            return None
        emit = self.emit
        try:
            state = await self._state(tool.version, candidate, emit)
            if state is None:
                return None
            if state.candidate == candidate.version and state.status in ("promoted", "disabled"):
                await self.apply_files(state)
            if scheduled.is_scheduled(call.ctx):
                mine = state.candidate == candidate.version and await scheduled.to_candidate(self.store, state)
                return Choice(call.call_id, candidate if mine else tool.version, "scheduled", state, mine)
        except Exception as exc:
            logger.warning("canary of %s: store unavailable (%s); the stable version serves", tool.name, exc)
            return None
        share = state.routed_share if state.candidate == candidate.version else 0.0
        key = routing_key(call.ctx, self.key_kind, call.call_id)
        if share > 0 and to_candidate(tool.name, key, share):
            return Choice(call.call_id, candidate, "canary", state, True)
        return Choice(call.call_id, tool.version, "stable", state, False)

    async def _state(self, stable: PluginVersion, candidate: PluginVersion, emit: Emit | None) -> CanaryState | None:
        name = stable.name
        for _ in range(3):  # another replica may write between our read and our write: read again
            state = await self.store.load(name)
            if state is not None and state.candidate == candidate.version:
                if state.stable == stable.version or state.status == "promoted":
                    return state
                changed = state.model_copy(update={"stable": stable.version, "revision": state.revision + 1})
                if await self.store.save(changed, state.revision):
                    return changed
                continue
            fresh = actions.start_beside(stable, candidate, revision=state.revision + 1 if state is not None else 0)
            if await self.store.save(fresh, state.revision if state is not None else None):
                _emit(emit, fresh)
                return fresh
        return await self.store.load(name)

    # -- running -----------------------------------------------------------------------------------------------

    async def run(self, call: ToolCall) -> ToolResult:
        choice = call.notes.pinned
        if not isinstance(choice, Choice) or choice.call_id != call.call_id:
            choice = await self.choose(call)
        tool: Any = call.tool
        if choice is None:
            call.notes.pin(tool.version.version, "stable")
            return ToolOk(await tool.run(call.ctx, call.arguments))
        call.notes.pin(choice.version.version, choice.route, choice)
        started = time.perf_counter()
        outcome: Outcome | None = None
        fatal: str | None = None
        raised = ""
        try:
            data = await tool.run(call.ctx, call.arguments, choice.version, choice.route)
            outcome = "ok"
            return ToolOk(data)
        except (InputRequired, CallCancelled):
            raise
        except ToolError as exc:
            outcome = "timeout" if exc.code == ErrorCode.TIMEOUT else "error"
            raise
        except Exception as exc:
            outcome, fatal, raised = "error", fatal_kind(exc), type(exc).__name__
            raise
        finally:
            if outcome is not None:
                sample = Sample(time.time(), outcome, (time.perf_counter() - started) * 1000, fatal)
                await self._after(choice, sample, self.emit, raised)

    async def _after(self, choice: Choice, sample: Sample, emit: Emit | None, raised: str = "") -> None:
        state = choice.state
        try:
            if choice.route == "scheduled":
                await self._after_scheduled(choice, sample, emit, raised)
                return
            canary = choice.route == "canary"
            count = await self.store.record(state.step_key() if canary else state.stable_key(), sample)
            if not canary or state.status not in ("active", "held"):
                return
            if sample.fatal is not None:
                await self._judge_fatal(state, sample.fatal, emit, raised)
            elif count % EVALUATE_EVERY == 0:
                await self.evaluate(state.tool, emit)
        except Exception as exc:
            logger.warning("canary of %s: sample or decision not recorded (%s)", state.tool, exc)

    async def _after_scheduled(self, choice: Choice, sample: Sample, emit: Emit | None, raised: str) -> None:
        """A scheduled run's sample, under its own key; a failure of the candidate rolls it back at once, any other
        run applies the scheduled rule (which holds, or records that the stage awaits approval)."""
        state = choice.state
        key = state.scheduled_step_key() if choice.candidate else state.scheduled_stable_key()
        await self.store.record(key, sample)
        if state.status not in ("active", "held"):
            return
        if choice.candidate and sample.fatal is not None:
            await self._judge_fatal(state, sample.fatal, emit, raised)
        else:  # a failure is judged on the stage it ran at, even if an operator moved the rollout meanwhile
            await self.evaluate_scheduled(state.tool, emit, stage=state if sample.outcome != "ok" else None)

    # -- deciding ----------------------------------------------------------------------------------------------

    async def _judge_fatal(self, state: CanaryState, kind: str, emit: Emit | None, raised: str = "") -> None:
        """A fatal error (one is enough): the candidate is rolled back hard at once, its file disabled."""
        what = f" ({raised})" if raised else ""
        reason = f"fatal error: {DESCRIBED.get(kind, kind)}{what} in a candidate call"
        await self._decide(state.tool, emit, lambda now: actions.rollback(now, reason, hard=True, rule="fatal"))

    async def evaluate(self, tool: str, emit: Emit | None = None) -> CanaryState | None:
        """Apply the rules to the current windows; returns the state written (None: nothing to evaluate, or another
        writer won)."""

        async def step(current: CanaryState) -> CanaryState:
            candidate = windows(await self.store.samples(current.step_key()))
            stable = windows(await self.store.samples(current.stable_key()))
            verdict = decide(current, candidate, stable)
            if verdict.action == "promote":
                new = actions.promote(current, verdict.reason, rule=verdict.rule)
            elif verdict.action == "rollback":
                new = actions.rollback(current, verdict.reason, rule=verdict.rule)
            else:
                new = actions.hold(current, verdict.reason, rule=verdict.rule)
            return new.model_copy(update={"metrics": {"stable": stable, "candidate": candidate}})

        return await self._decide(tool, emit, step)

    async def evaluate_scheduled(
        self, tool: str, emit: Emit | None = None, stage: CanaryState | None = None
    ) -> CanaryState | None:
        """Apply the scheduled rule to the stage's scheduled runs (never to the real-time windows); with `stage`,
        only while the rollout is still at that stage."""

        async def step(current: CanaryState) -> CanaryState:
            if stage is not None and (current.candidate, current.step_started) != (stage.candidate, stage.step_started):
                return current
            runs = await scheduled.read_runs(self.store, current, self.scheduled_gap)
            verdict = decide_scheduled(current, runs)
            if verdict.action == "rollback":
                new = actions.rollback(current, verdict.reason, rule=verdict.rule)
            else:
                new = actions.hold(current, verdict.reason, rule=verdict.rule)
            return new.model_copy(update={"scheduled": runs})

        return await self._decide(tool, emit, step)

    async def _decide(
        self, tool: str, emit: Emit | None, step: Callable[[CanaryState], Awaitable[CanaryState] | CanaryState]
    ) -> CanaryState | None:
        lock = self._evaluating.setdefault(tool, anyio.Lock())
        async with lock:
            current = await self.store.load(tool)
            if current is None or current.status not in ("active", "held"):
                return None
            new = step(current)
            if not isinstance(new, CanaryState):
                new = await new
            if not await self.store.save(new, current.revision):
                return None  # another replica decided first, on the same shared samples
        decision = new.decision
        if decision is not None and actions.news(current, new):
            _emit(emit, new)
            if self.catalog.feedback is not None:  # a hold or a rollback: its cause, for the model that wrote it
                await self.catalog.feedback.decided(new)
            level = logging.INFO if decision.action == "hold" else logging.WARNING
            logger.log(
                level,
                "canary of %s: %s (%g%% -> %g%%): %s",
                tool,
                decision.action,
                decision.share_from,
                decision.share_to,
                decision.reason,
            )
        await self.apply_files(new)
        return new

    # -- the tools folder --------------------------------------------------------------------------------------

    async def apply_files(self, state: CanaryState) -> None:
        """Promotion to 100% and hard rollback change the tools folder; the catalog is rescanned at once."""
        if state.status not in ("promoted", "disabled"):
            return
        async with self._files:
            candidate = self.catalog.candidate(state.tool)
            stable = self.catalog.versions().get(state.tool)
            if candidate is None or candidate.version != state.candidate:
                return
            stable_path = stable.source.path if stable is not None else None
            done = await anyio.to_thread.run_sync(
                files.apply, state.status, stable_path, candidate.source.path, candidate.version
            )
            if done is not None:
                await self.catalog.rescan(settle=False)


def _emit(emit: Emit | None, state: CanaryState) -> None:
    if emit is None:
        return
    try:
        emit(decision_event(state))
    except Exception:
        logger.exception("could not audit a canary decision")


def decision_event(state: CanaryState) -> dict[str, Any]:
    """The audit line of a decision (`event: canary_decision`), as the audit writer renders entries."""
    decision = state.decision
    assert decision is not None
    return {
        "ts": time.time(),
        "event": "canary_decision",
        "tool_name": state.tool,
        "tool_version": state.candidate,
        "stable_version": state.stable,
        "route": "canary",
        "action": decision.action,
        "rollback": decision.rollback,
        "by": decision.by,
        "share_from": decision.share_from,
        "share_to": decision.share_to,
        "canary_status": state.status,
        "reason": decision.reason,
        "rule": decision.rule,
    }
