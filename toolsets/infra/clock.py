"""Timestamps as the stores write them: ISO 8601 in UTC with an explicit offset."""

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
