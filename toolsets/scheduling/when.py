"""`when` of a schedule: a cron expression (5 fields, or 6 with seconds first), an ISO 8601 interval (`PT5S`,
`P1D`) or a one-off ISO 8601 date-time; read in the caller's time zone (a date-time without an offset is local
time there, and cron fields are local time, daylight saving included).

Every form is checked once, when the schedule is made, against the deployment's minimum interval: a cron
expression by the gaps between its next firings, an interval by itself. No tick is ever planned more than
`MAX_AHEAD` after the moment it follows (an interval is at most that long), at creation and at every tick alike, so a
stored schedule never asks for an instant the calendar cannot hold. Parsing is bounded (the text is at most
`MAX_WHEN_CHARS`; cron has no backtracking)."""

from __future__ import annotations

import datetime as dt
import itertools
import re
from dataclasses import dataclass
from typing import Literal
from zoneinfo import ZoneInfo

from pydantic import TypeAdapter, ValidationError

MAX_WHEN_CHARS = 120
MAX_AHEAD = dt.timedelta(days=366)  # the longest interval, and the furthest a next tick may be from the one before
CRON_GAPS_CHECKED = 24  # firings whose gaps are compared with the minimum interval
_DURATION = TypeAdapter(dt.timedelta)
_ISO_DURATION = re.compile(r"^P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$")
_CRON_FIELD = re.compile(r"^[0-9A-Za-z*/,\-?LW#]+$")
Kind = Literal["cron", "interval", "once"]


class WhenError(ValueError):
    """`when` is not one of the three forms, or fires more often than the minimum interval."""


@dataclass(frozen=True, slots=True)
class When:
    kind: Kind
    text: str  # as given (cron, interval) or normalised (once: the instant with its offset)
    timezone: str
    every: dt.timedelta | None = None  # interval
    at: dt.datetime | None = None  # once

    def next_after(self, moment: dt.datetime) -> dt.datetime | None:
        """The first firing strictly after `moment` (aware), or None when there is none (a one-off in the past)."""
        zone = ZoneInfo(self.timezone)
        if self.kind == "once":
            assert self.at is not None
            return self.at if self.at > moment else None
        if self.kind == "interval":
            assert self.every is not None
            return moment + self.every
        from cronsim import CronSim

        local = moment.astimezone(zone).replace(microsecond=0)
        return next(iter(CronSim(self.text, local))).astimezone(dt.UTC)

    def describe(self) -> str:
        if self.kind == "once":
            return f"once, at {self.text}"
        if self.kind == "interval":
            return f"every {self.text} ({_spoken(self.every)})"
        return f"on the cron schedule {self.text!r} ({self.timezone} time)"


def stored_when(kind: Kind, text: str, timezone: str) -> When:
    """A schedule's `when` as stored (checked when it was made, by this version or an older one)."""
    if kind == "interval":
        return When(kind, text, timezone, every=_DURATION.validate_python(text))
    if kind == "once":
        return When(kind, text, timezone, at=dt.datetime.fromisoformat(text).astimezone(dt.UTC))
    return When(kind, text, timezone)


def next_tick(when: When, after: dt.datetime) -> dt.datetime | None:
    """The firing after `after`, None when there is none; `WhenError` when it cannot be planned: further than
    `MAX_AHEAD` past `after`, or past what the calendar holds."""
    from cronsim import CronSimError

    if when.every is not None and when.every > MAX_AHEAD:  # an interval stored by an older version
        raise WhenError(f"`when` {when.text!r} is longer than {MAX_AHEAD.days} days, the longest interval there is.")
    try:
        upcoming = when.next_after(after)
    except (CronSimError, OverflowError, ValueError, StopIteration) as exc:
        raise WhenError(
            f"`when` {when.text!r} has no next run this server can plan ({exc or type(exc).__name__})."
        ) from None
    if upcoming is not None and upcoming - after > MAX_AHEAD:
        raise WhenError(
            f"`when` {when.text!r}: its next run is more than {MAX_AHEAD.days} days away; runs must be "
            f"at most {MAX_AHEAD.days} days apart (use P{MAX_AHEAD.days}D or less, or a nearer date)."
        )
    return upcoming


def stored_next_tick(kind: Kind, text: str, timezone: str, after: dt.datetime) -> dt.datetime | None:
    """`next_tick` of a stored schedule's `when`; `WhenError` says why it cannot be planned, whatever is wrong with
    it (stored by an older version with other bounds, or damaged)."""
    try:
        ZoneInfo(timezone)
        when = stored_when(kind, text, timezone)
    except (ValueError, KeyError, OverflowError) as exc:  # ZoneInfoNotFoundError is a KeyError
        raise WhenError(f"`when` {text!r} ({kind}, in {timezone!r}) cannot be read: {exc}.") from None
    return next_tick(when, after)


def parse_when(text: str, timezone: str, min_interval: float, now: dt.datetime) -> When:
    """`text` as one of the three forms, in `timezone`; `WhenError` says what is wrong and what would do."""
    text = text.strip()
    if not text or len(text) > MAX_WHEN_CHARS:
        raise WhenError(f"`when` must be 1 to {MAX_WHEN_CHARS} characters.")
    zone = ZoneInfo(timezone)
    if _ISO_DURATION.match(text):
        return _interval(text, timezone, min_interval)
    fields = text.split()
    if len(fields) in (5, 6) and all(_CRON_FIELD.match(field) for field in fields):
        return _cron(text, timezone, min_interval, now.astimezone(zone))
    try:
        at = dt.datetime.fromisoformat(text)
    except ValueError:
        raise WhenError(
            f"`when` {text!r} is not a cron expression (e.g. '0 8 * * 1-5'), an ISO 8601 interval (e.g. 'PT1H', "
            "'P1D') or an ISO 8601 date-time (e.g. '2026-12-01T09:00')."
        ) from None
    if at.tzinfo is None:
        at = at.replace(tzinfo=zone)
    try:
        at.astimezone(dt.UTC)
    except OverflowError:
        raise WhenError(f"`when` {text!r} is past what the calendar holds; give a nearer date-time.") from None
    if at <= now:
        raise WhenError(f"`when` {text!r} is in the past ({timezone} time); give a future date-time.")
    return When("once", at.isoformat(), timezone, at=at.astimezone(dt.UTC))


def _interval(text: str, timezone: str, min_interval: float) -> When:
    if "Y" in text.split("T")[0] or "M" in text.split("T")[0]:
        raise WhenError(f"`when` {text!r}: years and months have no fixed length; use days (P30D) or cron.")
    try:
        every = _DURATION.validate_python(text)
    except ValidationError:
        raise WhenError(f"`when` {text!r} is not an ISO 8601 interval such as PT5M or P1D.") from None
    if every.total_seconds() < min_interval:
        raise WhenError(_too_often(text, min_interval))
    if every > MAX_AHEAD:
        raise WhenError(
            f"`when` {text!r} is longer than this server plans ahead: at most {MAX_AHEAD.days} days "
            f"(P{MAX_AHEAD.days}D); for rarer runs use a cron expression or one date-time."
        )
    return When("interval", text, timezone, every=every)


def _cron(text: str, timezone: str, min_interval: float, local_now: dt.datetime) -> When:
    from cronsim import CronSim, CronSimError

    try:
        firings = CronSim(text, local_now.replace(microsecond=0))
        times = [next(firings) for _ in range(CRON_GAPS_CHECKED)]
    except (CronSimError, StopIteration, ValueError) as exc:
        raise WhenError(f"`when` {text!r} is not a valid cron expression ({exc}).") from None
    gaps = [(later - earlier).total_seconds() for earlier, later in itertools.pairwise(times)]
    if gaps and min(gaps) < min_interval:
        raise WhenError(_too_often(text, min_interval))
    return When("cron", text, timezone)


def _too_often(text: str, min_interval: float) -> str:
    return (
        f"`when` {text!r} fires more often than this server allows: at most once every {min_interval:g} s "
        "(--schedule-min-interval)."
    )


def _spoken(every: dt.timedelta | None) -> str:
    seconds = int(every.total_seconds()) if every is not None else 0
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0 and seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} s"
