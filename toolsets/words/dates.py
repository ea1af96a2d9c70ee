"""Moments as a person reads them, in their zone and language, formatted by Babel (CLDR's patterns per locale)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from toolsets.words.catalog import babel_locale


def local(moment: dt.datetime | str, zone: str) -> dt.datetime:
    """`moment` (a datetime or ISO 8601 text; naive means UTC) in the IANA zone `zone` (UTC when it is unknown)."""
    when = dt.datetime.fromisoformat(moment) if isinstance(moment, str) else moment
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    try:
        return when.astimezone(ZoneInfo(zone))
    except (KeyError, ValueError):  # ZoneInfoNotFoundError is a KeyError
        return when.astimezone(dt.UTC)


def short_moment(moment: dt.datetime | str, zone: str, locale: str | None) -> str:
    """Day and hour, as short as the locale words them: "Mar 10, 7 PM", "3월 10일 오후 7시" (minutes when not :00,
    seconds when not :00: a schedule's runs a few seconds apart are told apart)."""
    from babel import Locale
    from babel.dates import format_skeleton

    when = local(moment, zone)
    where = Locale.parse(babel_locale(locale))
    day = format_skeleton("MMMd", when, locale=where)
    hour = format_skeleton(
        "h" if when.minute == when.second == 0 else "hm" if when.second == 0 else "hms", when, locale=where
    )
    pattern = str(where.datetime_formats["medium"])  # how this locale joins a date and a time: "{1}, {0}"
    return pattern.replace("{1}", day).replace("{0}", hour)
