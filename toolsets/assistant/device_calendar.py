"""The calendar on the user's device: the one shape of its events, on the wire and in the tool's result.

The device sends `{"id", "title", "start": {"dateTime"}, "end": {"dateTime"}}`; the tool
returns the same events with `start`/`end` as plain ISO 8601 strings. The model accepts both forms.
"""

import datetime as dt
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, Field

from toolsets.core.deferred import DeviceMethod


def _unwrap(value: Any) -> Any:
    return value.get("dateTime") if isinstance(value, dict) else value


def _real_datetime(value: str) -> str:
    """A date alone (an all-day event: `2026-03-10`), or a date-time with `T` and a UTC offset."""
    if len(value) == 10:
        try:
            dt.date.fromisoformat(value)
        except ValueError:
            raise ValueError("must be a date such as 2026-03-10, or a date-time with an offset") from None
        return value
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        raise ValueError("must be an ISO 8601 date-time such as 2026-03-10T09:00:00+09:00") from None
    if value[10:11] not in ("T", "t"):
        raise ValueError("must separate the date and the time with T, e.g. 2026-03-10T09:00:00+09:00")
    if parsed.tzinfo is None:
        raise ValueError("must carry a UTC offset, e.g. 2026-03-10T09:00:00+09:00 or ...Z")
    return value


CalendarTime = Annotated[
    str, BeforeValidator(_unwrap), Field(min_length=10, max_length=64), AfterValidator(_real_datetime)
]


class CalendarEntry(BaseModel):
    id: str = Field(description="The device calendar's event id", max_length=500)
    title: str = Field(default="", description="Title", max_length=1000)
    start: CalendarTime = Field(description="Start, ISO 8601 with offset (a date alone for all-day events)")
    end: CalendarTime = Field(description="End, ISO 8601 with offset (a date alone for all-day events)")


class DeviceCalendar(BaseModel):
    events: list[CalendarEntry] = Field(
        description="Events in the user's device calendar in the range", max_length=2000
    )


READ_CALENDAR = DeviceMethod("calendar.getEvents", {"start_date": "startDate", "end_date": "endDate"})
