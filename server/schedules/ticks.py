"""One tick of a schedule: checked, claimed once, run as its owner through the front door, recorded, and told.

The run is the owner's own call on route `scheduled`: their profile, the gates, the audit log, the canary's rule
for scheduled runs. Nobody can be asked during it: a destructive tool runs only when its owner said yes to every
run when scheduling it, and deferred tools reach the owner's device through the bridge or fail. Each run is a
conversation of its own (a gate that needs an earlier call in it refuses). A run whose error says the same call
may succeed later is tried again, at most `MAX_ATTEMPTS` times, `RETRY_SECONDS` apart, never past the next tick (a
`precondition` is not: nothing within the tick would meet it). A schedule whose tool is gone, whose file changed,
whose owner lost the profile, whose destructive tool has no recorded yes, or whose next tick cannot be planned is
paused with the reason (never run with other rights).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from server.mcp.call_route import route_call
from toolsets.admission.kinds import RequestKind
from toolsets.assistant.schedule_tools import schedule_uri, tool_ref
from toolsets.assistant.schedule_words import RunOutcome, paused_told, run_told
from toolsets.core.context import Caller, ConfirmPolicy, RequestInfo
from toolsets.core.conversation import ConversationState, MemoryConversation
from toolsets.core.envelope import ToolErr, ToolInputRequired, ToolOk, text_and_structured
from toolsets.infra.store.schedules import Schedule, ScheduleRun
from toolsets.scheduling.when import WhenError, stored_next_tick

if TYPE_CHECKING:
    from toolsets.front_door import FrontDoor
    from toolsets.services import Services

logger = logging.getLogger("truloop.schedules")

MAX_ATTEMPTS = 3
RETRY_SECONDS = 5.0
SUMMARY_CHARS = 1500
MAX_SKIPPED_TICKS = 100_000  # ticks stepped over at most when a schedule comes back late (bounded work)
SENDER = "truloop-schedules"
UNASKED = "it runs on a schedule, where nobody can be asked; schedule it again and say yes to every run"


class TickRunner:
    def __init__(
        self, services: Services, door: Callable[[], FrontDoor], deferred: Callable[[], Any], replica: str
    ) -> None:
        self.services = services
        self._door = door
        self._deferred = deferred  # a resolver for deferred tools (the device bridge), or None
        self.replica = replica

    async def tick(self, schedule_id: str, planned_at: str) -> str | None:
        """Run the tick planned at `planned_at` (once, whichever replica gets it); the next tick, None for none."""
        store = self.services.schedules
        schedule = await store.get(schedule_id)
        if schedule is None or schedule.status != "active":
            return None
        try:
            upcoming = _next(schedule, dt.datetime.fromisoformat(planned_at))
        except WhenError as exc:
            await self.pause(schedule, f"its next run cannot be planned: {exc}")
            return None
        problem = await self.problem(schedule)
        if problem is not None:
            await self.pause(schedule, problem)
            return None
        now = dt.datetime.now(dt.UTC)
        run = ScheduleRun(schedule_id=schedule.id, planned_at=planned_at, started_at=_iso(now), replica=self.replica)
        if await store.claim(run):
            await self._run(schedule, run, upcoming)
        following = _iso(upcoming) if upcoming is not None else None
        await store.planned(schedule.id, following)
        if following is None:
            await store.set_status(schedule.id, "done", "its last run is done")
        return following

    async def problem(self, schedule: Schedule) -> str | None:
        """Why the schedule may not run as it was made (its tool, its file, its owner's profile), or None."""
        door = self._door()
        record = await self.services.users.get(schedule.owner_id)
        role = record.role if record is not None else schedule.owner_role
        if schedule.profile != "guest" and role == "guest":
            return f"its owner no longer has the {schedule.profile} profile"
        tool = door.toolset(schedule.profile).get(schedule.tool)
        if tool is None:
            return f"{schedule.tool} is no longer available to its owner"
        ref = schedule.tool_ref
        if ref.get("kind") == "custom_file" and tool_ref(tool).get("file") != ref.get("file"):
            return f"{schedule.tool} is no longer served from {ref.get('file')}"
        if tool.hints.destructive and not _said_yes(schedule):  # e.g. stored by a version that did not always ask
            return f"{schedule.tool} is destructive and its owner's yes to every run is not on record; schedule it anew"
        return None

    async def _run(self, schedule: Schedule, run: ScheduleRun, upcoming: dt.datetime | None) -> None:
        door = self._door()
        caller = Caller(
            schedule.owner_id, role=schedule.owner_role, timezone=schedule.timezone,  # type: ignore[arg-type]
            claims={"sub": schedule.owner_id, "groups": schedule.owner_groups}, locale=schedule.locale,
        )  # fmt: skip
        info = RequestInfo(request_id=f"{schedule.id}@{run.planned_at}", transport="scheduled")
        policy = ConfirmPolicy.OFF if _said_yes(schedule) else ConfirmPolicy.STRICT
        ctx = door.context_for(
            caller, schedule.profile, request=info, confirm_policy=policy, deferred=self._deferred(),
            host_approves=False, unasked=UNASKED, conversation=MemoryConversation(ConversationState()),
        )  # fmt: skip
        attempt = 0
        while True:
            attempt += 1
            outcome = await route_call(
                door, ctx, schedule.tool, schedule.arguments, client=False, kind=RequestKind.SCHEDULED
            )
            retry = isinstance(outcome, ToolErr) and outcome.retry_later and attempt < MAX_ATTEMPTS
            deadline = upcoming is None or dt.datetime.now(dt.UTC) + dt.timedelta(seconds=RETRY_SECONDS) < upcoming
            if not (retry and deadline):
                break
            await anyio.sleep(RETRY_SECONDS)
        code: str | None
        data: dict[str, Any] | None = None
        if isinstance(outcome, ToolInputRequired):  # nobody to answer: it cannot finish on a schedule
            text, code, status = "it asked for input, and nobody can answer a scheduled run", "input_required", "error"
        else:
            text, structured = text_and_structured(outcome)
            ok = isinstance(outcome, ToolOk)
            code, status = (None if ok else str(structured.get("code"))), ("ok" if ok else "error")
            data = structured if ok else None
        finished = run.model_copy(
            update={"finished_at": _iso(dt.datetime.now(dt.UTC)), "status": status, "code": code,
                    "summary": _short(text), "attempts": attempt}
        )  # fmt: skip
        await self.services.schedules.finish(finished)
        told = run_told(schedule.tool, run.planned_at, schedule.timezone, RunOutcome(status == "ok", text, data),
                        schedule.locale)  # fmt: skip
        await self._tell(schedule, told, f"{schedule.tool} ({schedule.id}) {status}: {_short(text, 600)}")

    async def pause(self, schedule: Schedule, reason: str) -> None:
        await self.services.schedules.set_status(schedule.id, "paused", reason)
        logger.info("schedule %s paused: %s", schedule.id, reason)
        told = paused_told(schedule.tool, reason, schedule.locale)
        await self._tell(schedule, told, f"{schedule.tool} ({schedule.id}) paused: {reason}")

    async def _tell(self, schedule: Schedule, text: str, original: str) -> None:
        """The owner's inbox (`text`: a sentence in their language; `original`: what happened, as the record says
        it), and the schedule's resource for whoever is subscribed to it."""
        services = self.services
        try:
            await services.inbox.send(
                sender_id=SENDER, recipient_id=schedule.owner_id, text=text, original=original,
                composed_by="template", rate_limited=False,
            )  # fmt: skip
        except Exception:
            logger.warning("schedule %s: its result did not reach the inbox", schedule.id, exc_info=True)
        if services.resource_changes is not None:
            await services.resource_changes.schedule_changed(schedule.owner_id, schedule_uri(schedule.id))


def _said_yes(schedule: Schedule) -> bool:
    return schedule.confirmed and schedule.confirmed_at is not None


def _next(schedule: Schedule, planned: dt.datetime) -> dt.datetime | None:
    """The tick after `planned` that is still ahead (ticks missed while nothing ran are stepped over); `WhenError`
    when it cannot be planned."""
    now = dt.datetime.now(dt.UTC)
    upcoming = first_tick(schedule, planned)
    for _ in range(MAX_SKIPPED_TICKS):
        if upcoming is None or upcoming > now:
            return upcoming
        upcoming = first_tick(schedule, upcoming)
    return first_tick(schedule, now)


def first_tick(schedule: Schedule, after: dt.datetime) -> dt.datetime | None:
    """The stored schedule's firing after `after`; `WhenError` says why there is none it can plan."""
    return stored_next_tick(schedule.kind, schedule.when, schedule.timezone, after)


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat(timespec="milliseconds")


def _short(text: str, limit: int = SUMMARY_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
