"""How events are shown to the models of their owner, their invitees and guests."""

import datetime as dt
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from toolsets.core.errors import ErrorCode, ToolError
from toolsets.services import Services
from toolsets.words.catalog import caller_locale

if TYPE_CHECKING:  # the events store loads on first use, not with the tools
    from toolsets.core.context import Caller
    from toolsets.infra.store.events import EventRecord


class InviteeView(BaseModel):
    id: str = Field(description="Invitee's user id")
    display_name: str | None = Field(description="Invitee's name")
    responded: bool = Field(description="Whether they submitted their availability")
    available_dates: list[str] | None = Field(
        default=None, description="Dates they can make (YYYY-MM-DD); shown to the event's owner only"
    )


class DateRange(BaseModel):
    first: str = Field(description="First date invitees may pick (YYYY-MM-DD), the event's start date")
    last: str = Field(description="Last date invitees may pick (YYYY-MM-DD), the event's end date")


class EventView(BaseModel):
    id: str = Field(description="Event id")
    title: str = Field(description="Title")
    start: str = Field(description="Start, ISO 8601 with offset")
    end: str = Field(description="End, ISO 8601 with offset")
    timezone: str = Field(description="The event's IANA time zone")
    location: str | None = Field(description="Where")
    description: str | None = Field(description="Details")
    availability_deadline: str | None = Field(description="Until when invitees may submit availability")
    candidate_date_range: DateRange = Field(
        description="The dates invitees may pick from: every day from `first` to `last`, inclusive"
    )
    owner_id: str = Field(description="Organiser's user id")
    your_role: str = Field(description="owner or invitee")
    invitees: list[InviteeView] = Field(description="Who is invited")
    availability_by_date: dict[str, int] | None = Field(
        default=None, description="For the owner: how many invitees can make each date"
    )
    your_available_dates: list[str] | None = Field(default=None, description="For an invitee: the dates you submitted")
    your_timezone: str = Field(default="UTC", description="Your IANA time zone: say this event's times in it")
    your_locale: str | None = Field(default=None, description="Your language, a BCP 47 tag (e.g. ko-KR)")


def candidate_range(event: "EventRecord") -> tuple[dt.date, dt.date]:
    from toolsets.assistant.validation import parse_timezone

    zone = parse_timezone(event.timezone)
    first = dt.datetime.fromisoformat(event.start).astimezone(zone).date()
    last = dt.datetime.fromisoformat(event.end).astimezone(zone).date()
    return first, last


async def event_view(services: Services, event: "EventRecord", viewer: "Caller") -> EventView:
    viewer_id = viewer.user_id
    is_owner = viewer_id == event.owner_id
    names = await services.users.get_many(event.invitee_ids())
    invitees = [
        InviteeView(
            id=inv.user_id,
            display_name=names[inv.user_id].display_name if inv.user_id in names else None,
            responded=inv.responded_at is not None,
            available_dates=inv.available_dates if is_owner else None,
        )
        for inv in event.invitations
    ]
    by_date: dict[str, int] | None = None
    if is_owner:
        by_date = {}
        for inv in event.invitations:
            for day in inv.available_dates or []:
                by_date[day] = by_date.get(day, 0) + 1
        by_date = dict(sorted(by_date.items()))
    mine = next((inv.available_dates for inv in event.invitations if inv.user_id == viewer_id), None)
    first, last = candidate_range(event)
    return EventView(
        id=event.id,
        title=event.title,
        start=event.start,
        end=event.end,
        timezone=event.timezone,
        location=event.location,
        description=event.description,
        availability_deadline=event.availability_deadline,
        candidate_date_range=DateRange(first=first.isoformat(), last=last.isoformat()),
        owner_id=event.owner_id,
        your_role="owner" if is_owner else "invitee",
        invitees=invitees,
        availability_by_date=by_date,
        your_available_dates=None if is_owner else mine,
        your_timezone=viewer.timezone,
        your_locale=caller_locale(viewer),
    )


async def visible_event(
    services: Services, event_id: str, viewer_id: str, *, list_tool: str = "get_events"
) -> "EventRecord":
    """The event if the viewer owns it or is invited; otherwise not_found (its existence stays private).

    `list_tool` is the tool the caller has for finding event ids (`list_invited_events` for a guest).
    """
    event = await services.events.get(event_id.strip())
    if event is None or not event.involves(viewer_id):
        raise ToolError(
            f"No event {event_id!r} that you can see. Use {list_tool} to find event ids.", code=ErrorCode.NOT_FOUND
        )
    return event


async def owned_event(services: Services, event_id: str, owner_id: str, action: str) -> "EventRecord":
    event = await visible_event(services, event_id, owner_id)
    if event.owner_id != owner_id:
        raise ToolError(f"Only the event's organiser can {action}; you are an invitee.", code=ErrorCode.FORBIDDEN)
    return event
