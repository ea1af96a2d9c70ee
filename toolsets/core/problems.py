"""How a pydantic validation failure is told to a person or a model: `field.path: what is wrong`."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError

from toolsets.core.echo import echo


def field_path(loc: Sequence[int | str], *, whole: str = "arguments") -> str:
    """`("dates", 2)` -> `dates.2`; an empty location names the whole input."""
    return echo(".".join(str(part) for part in loc)) or whole


def problems(exc: ValidationError, *, whole: str = "arguments", limit: int | None = None) -> list[tuple[str, str]]:
    """(field, message) for each error, messages without pydantic's `Value error, ` prefix."""
    found = exc.errors(include_url=False, include_input=False)
    if limit is not None:
        found = found[:limit]
    return [(field_path(e["loc"], whole=whole), echo(e["msg"].removeprefix("Value error, "), 400)) for e in found]


def describe(exc: ValidationError, *, whole: str = "arguments", limit: int | None = None) -> str:
    """`field: message; other: message`."""
    return "; ".join(f"{field}: {message}" for field, message in problems(exc, whole=whole, limit=limit))
