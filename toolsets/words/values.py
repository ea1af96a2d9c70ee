"""A tool's arguments as a person reads them: each value under its label, never a function call with ids.

The label is the schema's `title` for the field (pydantic writes one for every built-in tool's field: `memory_id` ->
"Memory Id"; a plugin's schema may give its own), else the field's name made readable, in the catalog's words when
it has them. Long values are clipped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolsets.words.catalog import tr

VALUE_CHARS = 60  # what one value shows at most, so a question fits a dialog


def clip(text: str, limit: int = VALUE_CHARS) -> str:
    """`text` on one line, at most `limit` characters (an ellipsis marks the cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def humanised(name: str) -> str:
    """`memory_id` -> "Memory id"; `startDate` -> "Start date"."""
    spaced = "".join(f" {c.lower()}" if c.isupper() else c for c in name).replace("_", " ").replace("-", " ")
    words = " ".join(spaced.split())
    return words[:1].upper() + words[1:]


def shown_value(value: Any, locale: str | None) -> str:
    if isinstance(value, bool):
        return tr(locale, "yes") if value else tr(locale, "no")
    if isinstance(value, str):
        return clip(value)
    if isinstance(value, list) and all(isinstance(item, str | int | float) for item in value):
        return clip(", ".join(str(item) for item in value))
    return clip(json.dumps(value, ensure_ascii=False, separators=(", ", ": ")))


def labelled(schema: Mapping[str, Any], values: Mapping[str, Any], locale: str | None) -> list[tuple[str, str]]:
    """Each given value with its label, in the schema's order of fields (then any others)."""
    fields = schema.get("properties") or {}
    order = [name for name in fields if name in values] + [name for name in values if name not in fields]
    rows = []
    for name in order:
        field = fields.get(name)
        title = field.get("title") if isinstance(field, dict) else None
        label = title.strip() if isinstance(title, str) and title.strip() else humanised(name)
        rows.append((clip(tr(locale, label), 40), shown_value(values[name], locale)))
    return rows


def as_lines(rows: list[tuple[str, str]]) -> str:
    return "\n".join(f"• {label}: {value}" for label, value in rows)
