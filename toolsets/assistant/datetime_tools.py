"""datetime toolset: the day of the week of a date, and the current date and time in a zone."""

import datetime as dt
from typing import Annotated, Any

from pydantic import BaseModel, Field

from toolsets.assistant.validation import parse_date, parse_timezone, today_in
from toolsets.core.annotations import READ_ONLY, ToolHints
from toolsets.core.context import ToolContext
from toolsets.core.toolset import Toolset

datetime_toolset = Toolset("datetime")

_CLOCK = ToolHints(read_only=True, idempotent=False)  # the answer changes with time


class DayOfWeekResult(BaseModel):
    date: str = Field(description="The date asked about, YYYY-MM-DD")
    day_of_week: str = Field(description="English weekday name, e.g. Tuesday")
    iso_weekday: int = Field(description="ISO weekday number: 1 = Monday ... 7 = Sunday")


class CurrentDateTimeResult(BaseModel):
    timezone: str = Field(description="IANA time zone the time is given in")
    datetime: str = Field(description="Current date and time, ISO 8601 with UTC offset")
    date: str = Field(description="Current date, YYYY-MM-DD")
    time: str = Field(description="Current time, HH:MM:SS")
    day_of_week: str = Field(description="English weekday name")
    utc_offset: str = Field(description="Offset from UTC, e.g. +09:00")


@datetime_toolset.tool(hints=READ_ONLY)
async def get_day_of_week(
    ctx: ToolContext[Any],
    date: Annotated[
        str | None,
        Field(description="ISO date YYYY-MM-DD, e.g. 2026-03-10. Omit for today in the user's time zone."),
    ] = None,
) -> DayOfWeekResult:
    """Return the day of the week (e.g. Tuesday) of a date; without a date, of today in the user's time zone."""
    day = parse_date(date) if date is not None else today_in(ctx.caller.timezone)
    return DayOfWeekResult(date=day.isoformat(), day_of_week=day.strftime("%A"), iso_weekday=day.isoweekday())


@datetime_toolset.tool(hints=_CLOCK)
async def get_current_datetime(
    ctx: ToolContext[Any],
    timezone: Annotated[
        str | None,
        Field(description="IANA time zone name, e.g. Asia/Seoul or UTC. Omit for the user's own time zone."),
    ] = None,
) -> CurrentDateTimeResult:
    """Return the current date and time in a time zone (default: the user's), with its UTC offset."""
    name = timezone if timezone is not None else ctx.caller.timezone
    now = dt.datetime.now(parse_timezone(name)).replace(microsecond=0)
    return CurrentDateTimeResult(
        timezone=name.strip(),
        datetime=now.isoformat(),
        date=now.date().isoformat(),
        time=now.strftime("%H:%M:%S"),
        day_of_week=now.strftime("%A"),
        utc_offset=now.isoformat()[19:] or "+00:00",
    )
