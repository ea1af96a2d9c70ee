"""Input checks shared by tools; each failure says what a valid value looks like."""

from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from toolsets.errors import ToolInputError

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
