"""event toolset: the caller's events (server side) and the device calendar (deferred to the device)."""

import datetime as dt
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, Field

from toolsets.assistant.device_calendar import READ_CALENDAR, DeviceCalendar
from toolsets.assistant.event_views import EventView, event_view, owned_event
from toolsets.assistant.user_lookup import FIND_PEOPLE_HINT, resolve
from toolsets.assistant.validation import parse_datetime, parse_timezone
from toolsets.core.annotations import DESTRUCTIVE, READ_ONLY, WRITE, WRITE_IDEMPOTENT, ToolHints
from toolsets.core.context import ToolContext
from toolsets.core.errors import CallDeferred, ErrorCode, ToolError, ToolInputError
from toolsets.core.toolset import Toolset
from toolsets.infra.store.users import UserRecord
from toolsets.services import Services
from toolsets.words.catalog import caller_locale, tr
from toolsets.words.dates import short_moment
from toolsets.words.values import clip

event_toolset = Toolset("event")

MAX_INVITEES = 50
DEFAULT_WINDOW = dt.timedelta(days=30)
MAX_WINDOW = dt.timedelta(days=366)

Moment = Annotated[str, Field(max_length=64)]


class EventList(BaseModel):
    start: str = Field(description="Start of the range searched, ISO 8601")
    end: str = Field(description="End of the range searched, ISO 8601")
    events: list[EventView] = Field(description="Your own events and those you are invited to, by start time")


class InviteResult(BaseModel):
    event: EventView = Field(description="The event after inviting")
    invited: list[str] = Field(description="User ids invited by this call")
    already_invited: list[str] = Field(description="User ids that were already invited (not duplicated)")


class DeletedEvent(BaseModel):
    event_id: str = Field(description="Id of the deleted event")
    title: str = Field(description="Its title")
    invitees_affected: int = Field(description="How many invitees lose the event")


async def resolve_invitees(services: Services, identifiers: list[str], owner_id: str) -> list[UserRecord]:
    """Every identifier must name exactly one user; otherwise nothing happens and the error says which."""
    if len(identifiers) > MAX_INVITEES:
        raise ToolInputError(f"At most {MAX_INVITEES} invitees per call; got {len(identifiers)}.")
    resolved = [await resolve(services.users, identifier) for identifier in identifiers]
    found = [answer.user for answer in resolved if answer.user is not None]
    unknown = [answer.identifier for answer in resolved if answer.status == "not_found"]
    ambiguous = [answer.described() for answer in resolved if answer.status == "ambiguous"]
    if unknown or ambiguous:
        parts = []
        if unknown:
            parts.append(f"no user matches {', '.join(map(repr, unknown))}")
        if ambiguous:
            parts.append(f"several users match {'; '.join(ambiguous)}")
        raise ToolError(
            f"Could not invite: {'; '.join(parts)}. Nothing was changed; {FIND_PEOPLE_HINT} "
            "(or get_user_eids for several), then pass their ids.",
            code=ErrorCode.NOT_FOUND,
        )
    if any(user.id == owner_id for user in found):
        raise ToolInputError("You organise this event; do not list yourself as an invitee.")
    return list({user.id: user for user in found}.values())


def check_times(start: dt.datetime, end: dt.datetime, deadline: dt.datetime | None, *, new_deadline: bool) -> None:
    if end <= start:
        raise ToolInputError(f"end ({end.isoformat()}) must be after start ({start.isoformat()}).")
    if deadline is not None:
        if new_deadline and deadline <= dt.datetime.now(dt.UTC):
            raise ToolInputError(
                f"availability_deadline ({deadline.isoformat()}) is in the past; give a future date-time."
            )
        if deadline > end:
            raise ToolInputError("availability_deadline must not be after the event's end.")


def check_future_start(start: dt.datetime) -> None:
    """A new event starts in the future (an existing one may be moved anywhere by update_event)."""
    now = dt.datetime.now(start.tzinfo or dt.UTC).replace(microsecond=0)
    if start <= now:
        suggestion = (start + dt.timedelta(days=(now - start).days + 1)).isoformat()
        raise ToolInputError(
            f"start ({start.isoformat()}) is in the past (it is now {now.isoformat()}); "
            f"give a future start, e.g. {suggestion}, and an end after it."
        )


@event_toolset.tool(hints=READ_ONLY)
async def get_events(
    ctx: ToolContext[Services],
    start: Annotated[
        Moment | None, Field(description="Range start, ISO 8601 (e.g. 2026-03-09T00:00:00+09:00); default now")
    ] = None,
    end: Annotated[Moment | None, Field(description="Range end, ISO 8601; default 30 days after start")] = None,
) -> EventList:
    """List the events you organise or are invited to in a time range (default: the next 30 days), with invitees
    and, for your own events, the availability invitees submitted."""
    services = ctx.deps
    zone = ctx.caller.timezone
    now = dt.datetime.now(parse_timezone(zone)).replace(microsecond=0)
    since = parse_datetime(start, field="start", timezone=zone) if start else now
    until = parse_datetime(end, field="end", timezone=zone) if end else since + DEFAULT_WINDOW
    if until <= since:
        raise ToolInputError("end must be after start.")
    if until - since > MAX_WINDOW:
        raise ToolInputError("The range may span at most 366 days; narrow start/end.")
    events = await services.events.list_for(ctx.caller.user_id, since, until)
    views = [await event_view(services, event, ctx.caller) for event in events]
    return EventList(start=since.isoformat(), end=until.isoformat(), events=views)


@event_toolset.tool(hints=WRITE)
async def create_event(
    ctx: ToolContext[Services],
    title: Annotated[str, Field(description="Event title", min_length=1, max_length=200)],
    start: Annotated[Moment, Field(description="Start, ISO 8601, e.g. 2026-03-10T19:00:00+09:00")],
    end: Annotated[Moment, Field(description="End, ISO 8601; after start")],
    timezone: Annotated[
        str | None,
        Field(description="IANA zone of the event (default: yours); times without an offset are read in it"),
    ] = None,
    location: Annotated[str | None, Field(description="Where it happens", max_length=300)] = None,
    description: Annotated[str | None, Field(description="Details for invitees", max_length=4000)] = None,
    invitees: Annotated[
        list[Annotated[str, Field(max_length=200)]] | None,
        Field(description=f"People to invite: usernames, emails, phone numbers or ids (at most {MAX_INVITEES})"),
    ] = None,
    availability_deadline: Annotated[
        Moment | None,
        Field(description="Until when invitees may submit the dates they can make, ISO 8601; future, not after end"),
    ] = None,
) -> EventView:
    """Create an event you organise, optionally inviting people and collecting their availability until a
    deadline (invitees pick dates between the event's start and end dates)."""
    services = ctx.deps
    zone = (timezone or ctx.caller.timezone).strip()
    parse_timezone(zone)
    begins = parse_datetime(start, field="start", timezone=zone)
    ends = parse_datetime(end, field="end", timezone=zone)
    deadline = (
        parse_datetime(availability_deadline, field="availability_deadline", timezone=zone)
        if availability_deadline
        else None
    )
    check_times(begins, ends, deadline, new_deadline=True)
    check_future_start(begins)
    people = await resolve_invitees(services, invitees or [], ctx.caller.user_id)
    from toolsets.infra.store.events import NewEvent  # the events store loads on first use, not with the tools

    new = NewEvent(
        title=title.strip(), start=begins, end=ends, timezone=zone, location=location, description=description,
        availability_deadline=deadline,
    )  # fmt: skip
    event = await services.events.create(ctx.caller.user_id, new, [user.id for user in people])
    return await event_view(services, event, ctx.caller)


@event_toolset.tool(hints=WRITE_IDEMPOTENT)
async def update_event(
    ctx: ToolContext[Services],
    event_id: Annotated[str, Field(description="Id of your event", max_length=64)],
    title: Annotated[str | None, Field(description="New title", min_length=1, max_length=200)] = None,
    start: Annotated[Moment | None, Field(description="New start, ISO 8601")] = None,
    end: Annotated[Moment | None, Field(description="New end, ISO 8601")] = None,
    timezone: Annotated[str | None, Field(description="New IANA time zone")] = None,
    location: Annotated[str | None, Field(description="New location", max_length=300)] = None,
    description: Annotated[str | None, Field(description="New details", max_length=4000)] = None,
    availability_deadline: Annotated[
        Moment | None, Field(description='New availability deadline, ISO 8601 (future); "" removes it')
    ] = None,
) -> EventView:
    """Change some fields of an event you organise; fields you leave out stay as they are."""
    services = ctx.deps
    event = await owned_event(services, event_id, ctx.caller.user_id, "change it")
    zone = (timezone or event.timezone).strip()
    parse_timezone(zone)
    begins = parse_datetime(start, field="start", timezone=zone) if start else dt.datetime.fromisoformat(event.start)
    ends = parse_datetime(end, field="end", timezone=zone) if end else dt.datetime.fromisoformat(event.end)
    given: dict[str, object] = {"timezone": zone, "start": begins, "end": ends}
    if availability_deadline == "":
        deadline, new_deadline = None, False
        given["availability_deadline"] = None
    elif availability_deadline:
        deadline = parse_datetime(availability_deadline, field="availability_deadline", timezone=zone)
        new_deadline = True
        given["availability_deadline"] = deadline
    else:
        current = event.availability_deadline
        deadline, new_deadline = (dt.datetime.fromisoformat(current) if current else None), False
    check_times(begins, ends, deadline, new_deadline=new_deadline)
    texts = {"title": title.strip() if title is not None else None, "location": location, "description": description}
    given.update({key: value for key, value in texts.items() if value is not None})  # left out: unchanged
    from toolsets.infra.store.events import EventChanges

    updated = await services.events.update(event.id, EventChanges.model_validate(given))
    return await event_view(services, updated, ctx.caller)


@event_toolset.tool(hints=WRITE_IDEMPOTENT)
async def invite_to_event(
    ctx: ToolContext[Services],
    event_id: Annotated[str, Field(description="Id of your event", max_length=64)],
    invitees: Annotated[
        list[Annotated[str, Field(max_length=200)]],
        Field(description="People to invite: usernames, emails, phone numbers or ids", min_length=1),
    ],
) -> InviteResult:
    """Invite people to an event you organise; people already invited are not invited twice."""
    services = ctx.deps
    event = await owned_event(services, event_id, ctx.caller.user_id, "invite people")
    people = await resolve_invitees(services, invitees, ctx.caller.user_id)
    added, already = await services.events.invite(event.id, [user.id for user in people], ctx.caller.user_id)
    refreshed = await services.events.get(event.id)
    if refreshed is None:
        raise ToolError("The event was deleted while inviting; nothing to invite to.", code=ErrorCode.NOT_FOUND)
    view = await event_view(services, refreshed, ctx.caller)
    return InviteResult(event=view, invited=added, already_invited=already)


async def _delete_question(ctx: ToolContext[Services], values: Mapping[str, Any]) -> str:
    """The event by its title and its start in the caller's zone, in the caller's language."""
    locale = caller_locale(ctx.caller)
    event_id = str(values.get("event_id", "")).strip()
    event = await ctx.deps.events.get(event_id) if event_id else None
    if event is None or event.owner_id != ctx.caller.user_id:  # the tool itself says what is wrong, after
        return tr(locale, "Delete this event? This cannot be undone.")
    when = short_moment(event.start, ctx.caller.timezone, locale)
    return tr(locale, "Delete the event '{title}' ({when})? This cannot be undone.", title=clip(event.title), when=when)


@event_toolset.tool(hints=DESTRUCTIVE, question=_delete_question)
async def delete_event(
    ctx: ToolContext[Services],
    event_id: Annotated[str, Field(description="Id of your event to delete", max_length=64)],
) -> DeletedEvent:
    """Delete an event you organise, with its invitations and collected availability. This cannot be undone."""
    services = ctx.deps
    event = await owned_event(services, event_id, ctx.caller.user_id, "delete it")
    if not await services.events.delete(event.id):
        raise ToolError(f"Event {event_id!r} was already deleted.", code=ErrorCode.NOT_FOUND)
    return DeletedEvent(event_id=event.id, title=event.title, invitees_affected=len(event.invitations))


@event_toolset.tool(hints=ToolHints(read_only=True, idempotent=True), device=READ_CALENDAR)
async def get_calendar_events(
    ctx: ToolContext[Services],
    notification_message: Annotated[
        str, Field(description="Short text the user's device shows while it reads the calendar", max_length=200)
    ],
    start_date: Annotated[
        Moment, Field(description="Range start, ISO 8601 with offset, e.g. 2026-03-09T00:00:00+09:00")
    ],
    end_date: Annotated[Moment, Field(description="Range end, ISO 8601 with offset")],
) -> DeviceCalendar:
    """Read the events in the calendar on the user's own device (phone) between two times. Runs on the device,
    which may ask the user for calendar permission."""
    zone = ctx.caller.timezone
    begins = parse_datetime(start_date, field="start_date", timezone=zone)
    ends = parse_datetime(end_date, field="end_date", timezone=zone)
    if ends <= begins:
        raise ToolInputError("end_date must be after start_date.")
    if ends - begins > MAX_WINDOW:
        raise ToolInputError("The range may span at most 366 days.")
    raise CallDeferred(
        {"start_date": begins.isoformat(), "end_date": ends.isoformat()}, notification_message=notification_message
    )
