"""Input checks shared by tools; each failure says what a valid value looks like."""

from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from toolsets.core.errors import ToolInputError
from toolsets.infra.contacts import Contact, parse_contact

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_date(value: str, *, field: str = "date") -> dt.date:
    """A calendar date written `YYYY-MM-DD`."""
    text = value.strip()
    if _ISO_DATE.match(text):
        try:
            return dt.date.fromisoformat(text)
        except ValueError:
            pass
    raise ToolInputError(f"{field} must be a real calendar date written YYYY-MM-DD, like 2026-03-10; got {value!r}.")


@lru_cache(maxsize=256)
def _zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def parse_timezone(name: str, *, field: str = "timezone") -> ZoneInfo:
    """An IANA time zone name such as `Asia/Seoul` or `UTC`."""
    text = name.strip()
    try:
        if not text or text.startswith(("/", ".")) or ".." in text:
            raise ValueError(text)
        return _zone(text)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ToolInputError(
            f"{field} must be an IANA time zone name such as 'Asia/Seoul', 'Europe/Berlin' or 'UTC'; got {name!r}."
        ) from None


def today_in(timezone: str) -> dt.date:
    try:
        zone = parse_timezone(timezone)
    except ToolInputError:
        zone = _zone("UTC")
    return dt.datetime.now(zone).date()


def contact(value: str, *, default_country_code: str, field: str = "query") -> Contact:
    """A phone number or an email address, normalised (see `toolsets.infra.contacts`)."""
    try:
        return parse_contact(value, default_country_code)
    except ValueError:
        raise ToolInputError(
            f"{field} must be a phone number (e.g. 010-1234-5678 or +82 10 1234 5678) or an email address; "
            f"got {value!r}."
        ) from None


def search_terms(query: str, *, example: str) -> list[str]:
    """The search terms of a free-text query (the shared analyzer's); a query with none is refused."""
    from toolsets.infra.text import analyzer

    terms = analyzer().query_terms(query)
    if not terms:
        raise ToolInputError(f"query has no words or numbers to search for: pass one or more words, e.g. {example}.")
    return terms


def parse_datetime(value: str, *, field: str, timezone: str) -> dt.datetime:
    """ISO 8601 date-time; without an offset it is read in `timezone` (an IANA name)."""
    try:
        moment = dt.datetime.fromisoformat(value.strip())
    except ValueError:
        raise ToolInputError(
            f"{field} must be an ISO 8601 date-time such as 2026-03-10T14:00:00+09:00; got {value!r}."
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=parse_timezone(timezone))
    return moment


MAX_AVAILABLE_DATES = 62


def check_available_dates(
    values: list[str], *, first: dt.date, last: dt.date, deadline: dt.datetime | None, now: dt.datetime
) -> list[dt.date]:
    """A guest's available dates: real `YYYY-MM-DD` dates inside [first, last], submitted before
    the deadline, without duplicates, at most MAX_AVAILABLE_DATES of them. Returned sorted."""
    if deadline is not None and now >= deadline:
        raise ToolInputError(
            f"The availability deadline ({deadline.isoformat()}) has passed; availability can no longer be changed."
        )
    if len(values) > MAX_AVAILABLE_DATES:
        raise ToolInputError(f"available_dates may hold at most {MAX_AVAILABLE_DATES} dates; got {len(values)}.")
    dates = [parse_date(value, field="available_dates") for value in values]
    duplicates = sorted({day.isoformat() for day in dates if dates.count(day) > 1})
    if duplicates:
        raise ToolInputError(f"available_dates lists a date more than once: {', '.join(duplicates)}.")
    outside = [day.isoformat() for day in dates if not first <= day <= last]
    if outside:
        raise ToolInputError(
            f"available_dates must fall between {first.isoformat()} and {last.isoformat()} (the event's candidate "
            f"dates); these do not: {', '.join(outside)}."
        )
    return sorted(dates)
