"""guest toolset: what a guest (someone invited without membership) may do about their invitations."""

import datetime as dt
from typing import Annotated

from pydantic import BaseModel, Field

from toolsets.assistant.event_views import (
    DateRange,
    EventView,
    candidate_range,
    event_view,
    visible_event,
)
from toolsets.assistant.validation import MAX_AVAILABLE_DATES, check_available_dates
from toolsets.core.annotations import READ_ONLY, WRITE_IDEMPOTENT
from toolsets.core.context import ToolContext
from toolsets.core.errors import ErrorCode, ToolError
from toolsets.core.toolset import Toolset
from toolsets.infra.store.errors import InvitationMissing
from toolsets.services import Services
from toolsets.words.catalog import caller_locale

guest_toolset = Toolset("guest")
# The tool a guest finds event ids with (a guest has no get_events).
GUEST_LIST_TOOL = "list_invited_events"


class InvitedEvents(BaseModel):
    events: list[EventView] = Field(description="Events you are invited to, by start time")


class AvailabilityUpdate(BaseModel):
    event_id: str = Field(description="The event")
    available_dates: list[str] = Field(description="The dates now on record for you (YYYY-MM-DD, sorted)")
    submitted_at: str = Field(description="When they were recorded, ISO 8601 UTC")
    availability_deadline: str | None = Field(description="Until when you may still change them")
    # what shows the saved choice on its own (the availability app renders from this result alone)
    title: str = Field(description="The event's title")
    start: str = Field(description="The event's start, ISO 8601 with offset")
    end: str = Field(description="The event's end, ISO 8601 with offset")
    candidate_date_range: DateRange = Field(description="The dates you may pick from, inclusive")
    your_timezone: str = Field(description="Your IANA time zone: say the event's times in it")
    your_locale: str | None = Field(default=None, description="Your language, a BCP 47 tag (e.g. ko-KR)")


@guest_toolset.tool(hints=READ_ONLY)
async def list_invited_events(ctx: ToolContext[Services]) -> InvitedEvents:
    """List the events you are invited to, with their candidate dates, deadline and what you submitted."""
    services = ctx.deps
    events = await services.events.invited_events(ctx.caller.user_id)
    return InvitedEvents(events=[await event_view(services, event, ctx.caller) for event in events])


@guest_toolset.tool(hints=READ_ONLY)
async def get_event_details(
    ctx: ToolContext[Services],
    event_id: Annotated[str, Field(description="Id of an event you are invited to", max_length=64)],
) -> EventView:
    """Show one event you are invited to: time, place, candidate dates, deadline and your submitted dates."""
    services = ctx.deps
    event = await visible_event(services, event_id, ctx.caller.user_id, list_tool=GUEST_LIST_TOOL)
    return await event_view(services, event, ctx.caller)


@guest_toolset.tool(hints=WRITE_IDEMPOTENT)
async def update_guest_availability(
    ctx: ToolContext[Services],
    event_id: Annotated[str, Field(description="Id of an event you are invited to", max_length=64)],
    available_dates: Annotated[
        list[Annotated[str, Field(max_length=10)]],
        Field(
            description=f"Every date you can make, YYYY-MM-DD, within the event's candidate dates "
            f"(replaces what you sent before; at most {MAX_AVAILABLE_DATES}; [] for none)"
        ),
    ],
) -> AvailabilityUpdate:
    """Tell the organiser which of the event's candidate dates you can make, before its availability deadline."""
    services = ctx.deps
    event = await visible_event(services, event_id, ctx.caller.user_id, list_tool=GUEST_LIST_TOOL)
    if event.owner_id == ctx.caller.user_id:
        raise ToolError("You organise this event; availability is collected from invitees.", code=ErrorCode.FORBIDDEN)
    first, last = candidate_range(event)
    deadline = dt.datetime.fromisoformat(event.availability_deadline) if event.availability_deadline else None
    dates = check_available_dates(
        available_dates, first=first, last=last, deadline=deadline, now=dt.datetime.now(dt.UTC)
    )
    recorded = [day.isoformat() for day in dates]
    try:
        stamp = await services.events.set_availability(event.id, ctx.caller.user_id, recorded)
    except InvitationMissing:
        raise ToolError(
            "Your invitation was withdrawn meanwhile; nothing was recorded.", code=ErrorCode.NOT_FOUND
        ) from None
    return AvailabilityUpdate(
        event_id=event.id, available_dates=recorded, submitted_at=stamp,
        availability_deadline=event.availability_deadline, title=event.title, start=event.start, end=event.end,
        candidate_date_range=DateRange(first=first.isoformat(), last=last.isoformat()),
        your_timezone=ctx.caller.timezone, your_locale=caller_locale(ctx.caller),
    )  # fmt: skip
