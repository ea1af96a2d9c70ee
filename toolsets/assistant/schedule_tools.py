"""schedule toolset: tool runs on a schedule ("every weekday at 8, tell me today's events"), their list, and
cancelling one. A run happens as the person who scheduled it, through the same door as their own calls, and its
result goes to their inbox and to the resource truloop://schedules/{id}."""

from __future__ import annotations

import datetime as dt
import json
import secrets
from typing import Annotated, Any

from pydantic import BaseModel, Field, ValidationError

from toolsets.assistant.schedule_words import when_words
from toolsets.core.annotations import READ_ONLY, ToolHints
from toolsets.core.context import ToolContext
from toolsets.core.errors import CallCancelled, ErrorCode, ToolError, ToolInputError
from toolsets.core.tool import Tool
from toolsets.core.toolset import Toolset
from toolsets.infra.store.schedules import Schedule, ScheduleCapReachedError
from toolsets.pipeline.approval import person_refusal, question_key
from toolsets.pipeline.questions import fields, tool_title
from toolsets.scheduling.port import SchedulerPort
from toolsets.scheduling.when import When, WhenError, next_tick, parse_when
from toolsets.services import Services
from toolsets.words.catalog import caller_locale, tr
from toolsets.words.values import as_lines

schedule_toolset = Toolset("schedule")

SCHEDULE_TOOLS = frozenset({"schedule_tool_run", "list_schedules", "cancel_schedule"})
MAX_ARGUMENTS_BYTES = 16_000


class ScheduledRun(BaseModel):
    id: str = Field(description="The schedule's id (for cancel_schedule)")
    tool: str = Field(description="The tool each run calls")
    when: str = Field(description="When it runs, in words")
    next_run_at: str | None = Field(description="The next run, ISO 8601 in your time zone")
    status: str = Field(description="active, paused (with a reason), cancelled or done")
    reason: str | None = Field(default=None, description="Why it is paused, cancelled or done")
    runs: int = Field(default=0, description="Runs so far")
    failures: int = Field(default=0, description="Runs that failed")
    last_run_at: str | None = Field(default=None, description="The last run's planned time, ISO 8601 UTC")
    resource: str = Field(description="The resource with the schedule and its recent runs")


class ScheduleList(BaseModel):
    schedules: list[ScheduledRun] = Field(description="Your schedules, newest first")


class CancelledSchedule(BaseModel):
    id: str = Field(description="The schedule's id")
    status: str = Field(description="Its status now")


def schedule_uri(schedule_id: str) -> str:
    return f"truloop://schedules/{schedule_id}"


def shown(schedule: Schedule) -> ScheduledRun:
    return ScheduledRun(
        id=schedule.id, tool=schedule.tool, when=schedule.when, next_run_at=_local(schedule), status=schedule.status,
        reason=schedule.reason, runs=schedule.runs, failures=schedule.failures, last_run_at=schedule.last_run_at,
        resource=schedule_uri(schedule.id),
    )  # fmt: skip


def _local(schedule: Schedule) -> str | None:
    """The next run in the owner's time zone; as stored when a damaged row cannot say (it is paused, and shown)."""
    from zoneinfo import ZoneInfo

    if schedule.next_run_at is None:
        return None
    try:
        return dt.datetime.fromisoformat(schedule.next_run_at).astimezone(ZoneInfo(schedule.timezone)).isoformat()
    except (ValueError, KeyError):  # ZoneInfoNotFoundError is a KeyError
        return schedule.next_run_at


def _engine(ctx: ToolContext[Services]) -> SchedulerPort:
    port = ctx.deps.scheduler
    if port is None:
        raise ToolError(
            "Scheduled runs are not available here: this front has no scheduler (run truloop-mcp as a server).",
            code=ErrorCode.NOT_CONFIGURED,
        )
    return port


def _target(ctx: ToolContext[Services], name: str) -> Tool:
    profile = ctx.request.profile or ctx.caller.role
    toolset = ctx.profiles.get(profile) if ctx.profiles is not None else None
    tool = toolset.get(name) if toolset is not None else None
    if tool is None or tool.name in SCHEDULE_TOOLS:
        raise ToolError(
            f"No tool {name!r} that you can schedule; list your tools (or search_tools) for its exact name.",
            code=ErrorCode.NOT_FOUND,
        )
    return tool


def tool_ref(tool: Tool) -> dict[str, Any]:
    """What a run loads: a file's tool is named by its file (a later file with the same tool name is not it)."""
    version = getattr(tool, "version", None)
    source = getattr(version, "source", None)
    if source is not None:
        return {"kind": "custom_file", "file": f"tools/{source.path.name}", "tool_name": tool.name, "entrypoint": "run"}
    return {"kind": "builtin", "tool_name": tool.name}


# Scheduling a destructive tool is itself destructive (every run changes things, unasked), so hosts are told so; the
# tool asks its own yes for those (`asks_user`), worded for every run, and is not asked a second time.
@schedule_toolset.tool(hints=ToolHints(destructive=True), asks_user=True)
async def schedule_tool_run(
    ctx: ToolContext[Services],
    tool: Annotated[str, Field(description="The tool each run calls, e.g. get_events", min_length=1, max_length=100)],
    when: Annotated[
        str,
        Field(
            description=(
                "When it runs, in the user's time zone: a cron expression ('0 8 * * 1-5' = weekdays at 8:00; six "
                "fields put seconds first), an ISO 8601 interval ('PT30M', 'P1D'; at most P366D) or one date-time "
                "('2026-12-01T09:00', within 366 days)"
            ),
            min_length=1,
            max_length=120,
        ),
    ],
    arguments: Annotated[
        dict[str, Any], Field(description="The tool's arguments, the same at every run", default_factory=dict)
    ],
) -> ScheduledRun:
    """Run a tool on a schedule for the user ("every weekday at 8, tell me today's events"; "remind me every
    Monday"). Each run's result lands in the user's inbox (get_inbox). Destructive when the scheduled tool is: its
    runs change things without asking again, so the user must confirm every future run (a client that cannot ask
    them cannot schedule it). Turn the user's words into `when` yourself."""
    port = _engine(ctx)
    target = _target(ctx, tool)
    if len(json.dumps(arguments, ensure_ascii=False)) > MAX_ARGUMENTS_BYTES:
        raise ToolInputError(f"arguments are too large (at most {MAX_ARGUMENTS_BYTES} bytes of JSON).")
    try:
        checked = target.args_model.model_validate(arguments)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors()[:5])
        raise ToolInputError(f"arguments do not fit {target.name}: {problems}.") from None
    now = dt.datetime.now(dt.UTC)
    try:
        parsed = parse_when(when, ctx.caller.timezone, port.min_interval, now)
        first = next_tick(parsed, now)
    except WhenError as exc:
        raise ToolInputError(str(exc)) from None
    gate = ctx.door.gate_refusing_alone(target.name) if ctx.door is not None else None
    if gate is not None:
        raise ToolError(
            f"{target.name} cannot be scheduled: a scheduled run is a conversation of its own, with no call before "
            f"it, so {gate} would refuse every run. Nothing was scheduled; call {target.name} yourself instead.",
            code=ErrorCode.PRECONDITION,
            retryable=False,
        )
    values = checked.model_dump(mode="json", exclude_none=True)
    confirmed_at = await _every_run_confirmed(ctx, target, values, parsed) if target.hints.destructive else None
    schedule = Schedule(
        id="sch_" + secrets.token_hex(8), owner_id=ctx.caller.user_id, owner_role=ctx.caller.role,
        owner_groups=[str(g) for g in ctx.caller.claims.get("groups", []) or []][:50], timezone=ctx.caller.timezone,
        locale=ctx.caller.locale,
        profile=ctx.request.profile or ctx.caller.role, tool=target.name, tool_ref=tool_ref(target), arguments=values,
        when=parsed.text, kind=parsed.kind, created_at=now.isoformat(timespec="seconds"),
        confirmed=confirmed_at is not None, confirmed_at=confirmed_at,
        next_run_at=first.astimezone(dt.UTC).isoformat(timespec="milliseconds") if first is not None else None,
    )  # fmt: skip
    try:
        await ctx.deps.schedules.create(schedule, cap=port.max_per_user)
    except ScheduleCapReachedError:
        raise ToolError(
            f"You already have {port.max_per_user} schedules, the most one person may keep; cancel one first "
            "(list_schedules, cancel_schedule).",
            code=ErrorCode.RATE_LIMITED,
        ) from None
    await port.start(schedule)
    return shown(schedule).model_copy(update={"when": parsed.describe()})


async def _every_run_confirmed(ctx: ToolContext[Services], target: Tool, values: dict[str, Any], parsed: When) -> str:
    """A person's yes to every future run of a destructive tool, whatever `--confirm` says (a run asks nobody), and
    when they gave it; `CallCancelled` when they did not, or cannot be asked."""
    locale = caller_locale(ctx.caller)
    rows = fields(target, values, locale)
    when = when_words(parsed.kind, parsed.text, parsed.timezone, parsed.every, locale)
    question = tr(
        locale, "Run '{tool}' {when}, each time without asking again? Each run cannot be undone.",
        tool=tool_title(target), when=when,
    )  # fmt: skip
    question = f"{question}\n{as_lines(list(rows))}" if rows else question
    key = "schedule/" + question_key(target.name, values)
    answer = await person_refusal(ctx, target.name, values, question, key, rows)
    if answer is not None:
        raise CallCancelled(answer.reason.replace("nothing was changed", "nothing was scheduled"))
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


@schedule_toolset.tool(hints=READ_ONLY)
async def list_schedules(
    ctx: ToolContext[Services],
    include_ended: Annotated[bool, Field(description="Also cancelled and finished ones")] = False,
) -> ScheduleList:
    """List the user's scheduled tool runs: what runs, when, the next run, and how the runs went."""
    found = await ctx.deps.schedules.listed(ctx.caller.user_id, include_ended=include_ended)
    return ScheduleList(schedules=[shown(schedule) for schedule in found[:200]])


@schedule_toolset.tool(hints=ToolHints(idempotent=True))
async def cancel_schedule(
    ctx: ToolContext[Services],
    schedule_id: Annotated[
        str, Field(description="The schedule's id, from list_schedules", min_length=1, max_length=64)
    ],
) -> CancelledSchedule:
    """Stop a scheduled tool run for good (a run under way finishes)."""
    store = ctx.deps.schedules
    schedule = await store.get(schedule_id.strip())
    if schedule is None or schedule.owner_id != ctx.caller.user_id:
        raise ToolError(f"No schedule {schedule_id!r} of yours; list_schedules shows them.", code=ErrorCode.NOT_FOUND)
    changed = await store.set_status(schedule.id, "cancelled", f"cancelled by {ctx.caller.user_id}")
    if ctx.deps.scheduler is not None:
        await ctx.deps.scheduler.stop(schedule.id)
    return CancelledSchedule(id=schedule.id, status=changed.status if changed is not None else "cancelled")
