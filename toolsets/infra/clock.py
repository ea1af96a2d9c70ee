"""Timestamps as the stores write them (ISO 8601 in UTC with an explicit offset), and as a caller reads them."""

from __future__ import annotations

import datetime as dt
from typing import Literal

Precision = Literal["seconds", "microseconds"]


def iso_utc(moment: dt.datetime, timespec: Precision = "seconds") -> str:
    """An aware `moment` as ISO 8601 in UTC, e.g. `2026-03-10T05:00:00+00:00`."""
    return moment.astimezone(dt.UTC).isoformat(timespec=timespec)


def now_iso(timespec: Precision = "seconds") -> str:
    """Now, as `iso_utc` writes it."""
    return iso_utc(dt.datetime.now(dt.UTC), timespec)


def in_zone(stored: str, zone: str) -> str:
    """A stored timestamp as the same moment in `zone` (an IANA name), e.g. `2026-03-10T14:00:00+09:00`; as stored
    when either cannot be read."""
    from zoneinfo import ZoneInfo

    try:
        return dt.datetime.fromisoformat(stored).astimezone(ZoneInfo(zone)).isoformat()
    except (ValueError, OSError, KeyError):  # ZoneInfoNotFoundError is a KeyError
        return stored
