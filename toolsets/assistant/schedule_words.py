"""What the owner of a schedule reads about it, in their language: when it runs, and each run's outcome as a
sentence (the result summarised, never raw JSON) for their inbox."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolsets.words.catalog import tr, trn
from toolsets.words.dates import short_moment
from toolsets.words.values import clip, humanised

NAMED_BY = ("title", "name", "display_name", "content", "text", "id")  # what names one item of a listed result
SUMMARY_FIELDS = 4  # top-level fields a summary shows at most
SUMMARY_ITEMS = 3  # items of a list it names at most


def when_words(kind: str, text: str, timezone: str, every: dt.timedelta | None, locale: str | None) -> str:
    """When a schedule runs, as a person says it: "every 30 minutes", "once, Mar 10, 7 PM", a cron line."""
    if kind == "once":
        return tr(locale, "once, {moment}", moment=short_moment(text, timezone, locale))
    if kind == "interval" and every is not None:
        return tr(locale, "every {duration}", duration=_duration(every, locale))
    return tr(locale, "on the cron schedule '{cron}'", cron=text)


def _duration(every: dt.timedelta, locale: str | None) -> str:
    from babel.units import format_unit

    from toolsets.words.catalog import babel_locale

    seconds = int(every.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            return str(format_unit(seconds // size, f"duration-{unit}", length="long", locale=babel_locale(locale)))
    return str(format_unit(seconds, "duration-second", length="long", locale=babel_locale(locale)))


def task_name(tool: str) -> str:
    return humanised(tool)


def summary(data: Mapping[str, Any], locale: str | None) -> str:
    """A tool's structured result in a few words: each field under its label, a list by its count and first names."""
    parts = []
    for key, value in list(data.items())[:SUMMARY_FIELDS]:
        if value is None or value == "" or key.startswith("your_"):
            continue
        parts.append(f"{humanised(key)}: {_said(value, locale)}")
    return "; ".join(parts) if parts else tr(locale, "no result")


def _said(value: Any, locale: str | None) -> str:
    if isinstance(value, bool):
        return tr(locale, "yes") if value else tr(locale, "no")
    if isinstance(value, list):
        count = trn(locale, "{count} item", "{count} items", len(value), count=len(value))
        names = [name for item in value[:SUMMARY_ITEMS] if (name := _name(item))]
        return f"{count} ({', '.join(names)}{', …' if len(value) > len(names) else ''})" if names else count
    if isinstance(value, dict):
        name = _name(value)
        return name or trn(locale, "{count} field", "{count} fields", len(value), count=len(value))
    return clip(str(value))


def _name(item: Any) -> str | None:
    if isinstance(item, str | int | float):
        return clip(str(item), 40)
    if isinstance(item, dict):
        for key in NAMED_BY:
            if isinstance(item.get(key), str) and item[key].strip():
                return clip(item[key], 40)
    return None


def run_told(tool: str, planned: str, timezone: str, outcome: RunOutcome, locale: str | None) -> str:
    """One run as its owner's inbox tells it."""
    name, when = task_name(tool), short_moment(planned, timezone, locale)
    if outcome.ok:
        said = summary(outcome.data, locale) if outcome.data is not None else clip(outcome.text, 300)
        return tr(locale, "Ran the scheduled task '{name}' ({when}): {result}", name=name, when=when, result=said)
    return tr(
        locale, "The scheduled task '{name}' ({when}) failed: {reason}", name=name, when=when,
        reason=clip(outcome.text, 300),
    )  # fmt: skip


def paused_told(tool: str, reason: str, locale: str | None) -> str:
    return tr(locale, "The scheduled task '{name}' is paused: {reason}.", name=task_name(tool), reason=reason)


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What a run came to: whether it succeeded, its text, and its structured result (when it has one)."""

    ok: bool
    text: str
    data: Mapping[str, Any] | None = None
