"""`when` of a schedule: the three forms, read in the caller's time zone, held to the minimum interval and to
`MAX_AHEAD`; a stored `when` that cannot be planned says why."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import pytest

from toolsets.scheduling.when import (
    MAX_AHEAD,
    MAX_WHEN_CHARS,
    WhenError,
    next_tick,
    parse_when,
    stored_next_tick,
    stored_when,
)

NOW = dt.datetime(2026, 11, 27, 0, 30, tzinfo=dt.UTC)  # Friday 09:30 in Seoul


def test_cron_is_local_time_in_the_callers_zone() -> None:
    when = parse_when("0 8 * * 1-5", "Asia/Seoul", 60, NOW)
    assert when.kind == "cron"
    assert when.next_after(NOW) == dt.datetime(2026, 11, 29, 23, 0, tzinfo=dt.UTC)  # Monday 08:00 KST
    seconds = parse_when("*/10 * * * * *", "UTC", 5, NOW)  # six fields: seconds first
    assert seconds.next_after(NOW) == NOW + dt.timedelta(seconds=10)


def test_cron_follows_daylight_saving() -> None:
    when = parse_when("0 9 * * *", "America/New_York", 60, NOW)
    before = dt.datetime(2026, 3, 6, 15, 0, tzinfo=dt.UTC)  # two days before the US switch (March 8)
    first = when.next_after(before)
    assert first is not None
    second = when.next_after(first)
    assert (first.hour, second.hour if second else None) == (14, 13)  # 09:00 EST then 09:00 EDT


def test_intervals_and_one_offs() -> None:
    assert parse_when("PT5S", "UTC", 1, NOW).next_after(NOW) == NOW + dt.timedelta(seconds=5)
    assert parse_when("P1DT2H", "UTC", 1, NOW).every == dt.timedelta(days=1, hours=2)
    once = parse_when("2026-12-01T09:00", "Asia/Seoul", 60, NOW)
    assert once.at == dt.datetime(2026, 12, 1, 0, 0, tzinfo=dt.UTC) and once.text == "2026-12-01T09:00:00+09:00"
    assert once.next_after(once.at) is None  # type: ignore[arg-type]
    offset = parse_when("2026-12-01T09:00:00+00:00", "Asia/Seoul", 60, NOW)
    assert offset.at == dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)  # an offset given wins over the zone
    again = stored_when(once.kind, once.text, once.timezone)
    assert again.at == once.at and stored_when("interval", "PT5S", "UTC").every == dt.timedelta(seconds=5)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("PT30S", "at most once every 60 s"),
        ("*/10 * * * *", "at most once every 900 s"),
        ("P1M", "no fixed length"),
        ("P1Y", "no fixed length"),
        ("2020-01-01T00:00", "in the past"),
        ("99 * * * *", "not a valid cron expression"),
        ("every monday", "not a cron expression"),
        ("", "1 to"),
        ("x" * (MAX_WHEN_CHARS + 1), "1 to"),
    ],
)
def test_refusals_say_what_would_do(text: str, said: str) -> None:
    minimum = 900 if text.startswith("*/10") else 60
    with pytest.raises(WhenError, match=said):
        parse_when(text, "Asia/Seoul", minimum, NOW)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("P3000000D", "at most 366 days"),
        ("P367D", "at most 366 days"),
        ("9999-12-31T23:59:59-12:00", "calendar"),
    ],
)
def test_nothing_is_planned_further_ahead_than_366_days(text: str, said: str) -> None:
    with pytest.raises(WhenError, match=said):
        parse_when(text, "UTC", 60, NOW)
    assert next_tick(parse_when("P366D", "UTC", 60, NOW), NOW) == NOW + MAX_AHEAD
    far = parse_when("2028-01-01T00:00", "UTC", 60, NOW)  # a valid date-time, but its run is too far away
    with pytest.raises(WhenError, match="more than 366 days away"):
        next_tick(far, NOW)


@pytest.mark.parametrize(
    ("kind", "text", "zone", "said"),
    [
        ("interval", "P3000000D", "UTC", "longer than 366 days"),  # stored by a version without the bound
        ("interval", "soon", "UTC", "cannot be read"),
        ("cron", "not a cron", "UTC", "no next run"),
        ("interval", "PT1S", "Mars/Olympus_Mons", "cannot be read"),
        ("once", "9999-12-31T23:59:59-12:00", "UTC", "cannot be read"),
    ],
)
def test_a_stored_when_that_cannot_be_planned_says_why(kind: Any, text: str, zone: str, said: str) -> None:
    with pytest.raises(WhenError, match=said):
        stored_next_tick(kind, text, zone, NOW)


def test_hostile_text_is_bounded() -> None:
    started = time.perf_counter()
    for text in ("P" + "1" * 110 + "D", "* " * 60, "," * 119, "1-" * 59 + "1"):
        with pytest.raises(WhenError):
            parse_when(text, "UTC", 60, NOW)
    assert time.perf_counter() - started < 1.0
