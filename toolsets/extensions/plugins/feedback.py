"""`FeedbackRecorder`: what a plugin tool version got wrong, kept in the store for the model that wrote it.

Each failed or timed-out call of a plugin version (heard by `FeedbackMiddleware`: `on_outcome`) becomes a `call` entry,
its arguments masked as the audit log masks them, with the user who called (readers other than that user see their
shape only: feedback_view.py); each hold or rollback the canary decides (`decided`) becomes a `hold` or `rollback`
entry with its rule, the numbers of both windows it was decided on and sample failing inputs of the candidate, and
an audit line (`event: tool_feedback`). The store keeps the newest entries of each tool
(`MAX_FEEDBACK_PER_TOOL`). `replay_inputs` gives back the inputs the next version is rehearsed on: only its author's
own (a rehearsal runs the author's code on them, and its answer shows them to the author). Recording never
fails a call: a store that cannot answer is logged and the call goes on.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolsets.core.envelope import ToolErr
from toolsets.core.errors import ErrorCode
from toolsets.extensions.plugins.feedback_view import shape_of_arguments
from toolsets.extensions.plugins.outcome import PluginOutcome
from toolsets.infra.store.feedback import MAX_FEEDBACK_PER_TOOL, FeedbackEntry

if TYPE_CHECKING:
    from toolsets.infra.store.feedback import FeedbackStore
    from toolsets.pipeline.canary.state import CanaryState

logger = logging.getLogger("truloop.plugins.feedback")

FAILURES = frozenset({ErrorCode.HANDLER_ERROR, ErrorCode.TIMEOUT})  # the tool's fault, not the caller's
SAMPLES = 5  # failing inputs of the candidate kept with a hold or a rollback
REPLAY = 10  # feedback inputs a next version is rehearsed on
MESSAGE_CHARS = 2000

Mask = Callable[[Any], Any]
Emit = Callable[[dict[str, Any]], None]


class FeedbackRecorder:
    def __init__(
        self, store: Callable[[], FeedbackStore], masker: Callable[[], Mask], emit: Emit | None = None
    ) -> None:
        """`store`: the deployment's feedback store (opened on first use); `masker`: makes the audit log's masking
        of arguments (once, when first needed); `emit`: the audit log's sink."""
        self._store = store
        self._masker = masker
        self._mask: Mask | None = None
        self.emit = emit

    @property
    def store(self) -> FeedbackStore:
        return self._store()

    def mask(self, value: Any) -> Any:
        if self._mask is None:
            self._mask = self._masker()
        return self._mask(value)

    async def on_outcome(self, heard: PluginOutcome) -> None:
        outcome = heard.outcome
        if not isinstance(outcome, ToolErr) or outcome.code not in FAILURES:
            return
        route: Any = heard.route
        if route == "stable" and heard.trial:
            route = "trial"
        sent = heard.arguments.model_dump()
        arguments = self.mask(sent)
        entry = FeedbackEntry(
            id=_new_id(),
            tool=heard.name,
            version=heard.version,
            kind="call",
            route=route,
            at=time.time(),
            arguments=arguments,
            user_id=heard.user_id,
            masked=arguments != sent,
            code=outcome.code.value,
            message=outcome.reason[:MESSAGE_CHARS],
        )
        await self.store.add(entry)

    async def decided(self, state: CanaryState) -> FeedbackEntry | None:
        """A hold or a rollback the canary just decided, as an entry and an audit line (never raises)."""
        decision = state.decision
        if decision is None or decision.action not in ("hold", "rollback"):
            return None
        try:
            earlier = await self.store.recent(state.tool)
            failed = [
                entry
                for entry in earlier
                if entry.kind == "call" and entry.version == state.candidate and entry.arguments is not None
            ][:SAMPLES]
            samples = [entry.arguments for entry in failed if entry.arguments is not None]
            windows: dict[str, Any] | None = {key: value.model_dump() for key, value in state.metrics.items()} or None
            if state.scheduled is not None and (decision.rule or "").startswith("scheduled"):
                windows = {"scheduled": state.scheduled.model_dump()}
            entry = FeedbackEntry(
                id=_new_id(),
                tool=state.tool,
                version=state.candidate,
                kind="rollback" if decision.action == "rollback" else "hold",
                route="scheduled" if (decision.rule or "").startswith("scheduled") else "canary",
                at=decision.at,
                message=decision.reason[:MESSAGE_CHARS],
                rule=decision.rule,
                stable_version=state.stable,
                windows=windows,
                samples=samples,
                sample_users=[entry.user_id for entry in failed],
            )
            await self.store.add(entry)
        except Exception as exc:
            logger.warning("feedback of %s's %s not recorded (%s)", state.tool, decision.action, exc)
            return None
        self._audit(entry)
        return entry

    async def recent(self, tool: str, limit: int = MAX_FEEDBACK_PER_TOOL) -> list[FeedbackEntry]:
        return await self.store.recent(tool, limit)

    async def replay_inputs(self, tool: str, author: str, limit: int = REPLAY) -> list[tuple[dict[str, Any], str]]:
        """The inputs of the latest feedback (failed calls, and a hold's or a rollback's samples) that were
        `author`'s own calls, each once and newest first, with where it came from; masked arguments are left out
        (they are not what was sent). Another user's input is never replayed: the author's code would read it."""
        found: list[tuple[dict[str, Any], str]] = []
        seen: set[str] = set()
        for entry in await self.store.recent(tool):
            if entry.kind == "call":
                own = not entry.masked and entry.user_id == author
                inputs = [entry.arguments] if own and entry.arguments is not None else []
                origin = f"feedback: a {entry.code} of version {entry.version} ({entry.route})"
            else:
                owners = entry.sample_users
                inputs = [
                    sample
                    for index, sample in enumerate(entry.samples)
                    if index < len(owners) and owners[index] == author
                ]
                origin = f"feedback: the {entry.kind} of version {entry.version} (rule {entry.rule})"
            for arguments in inputs:
                key = json.dumps(arguments, sort_keys=True, ensure_ascii=False)
                if key not in seen and self.mask(arguments) == arguments:
                    seen.add(key)
                    found.append((arguments, origin))
                if len(found) >= limit:
                    return found
        return found

    def _audit(self, entry: FeedbackEntry) -> None:
        if self.emit is None:
            return
        line = {
            "ts": time.time(),
            "event": "tool_feedback",
            "kind": entry.kind,
            "tool_name": entry.tool,
            "tool_version": entry.version,
            "stable_version": entry.stable_version,
            "route": entry.route,
            "rule": entry.rule,
            "reason": entry.message,
            "windows": entry.windows,
            "samples": [shape_of_arguments(sample) for sample in entry.samples],  # the operator's: shapes only
        }
        try:
            self.emit(line)
        except Exception:
            logger.exception("could not audit a feedback entry")


def _new_id() -> str:
    return f"fb_{time.time_ns():x}{os.urandom(4).hex()}"
