"""FTS5 MATCH expressions built from analyzer terms, the one way every store searches its index."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal


def match_expression(terms: Iterable[str], *, require: Literal["any", "all"] = "any", prefix: str = "") -> str | None:
    """`"t1" OR "t2"` (or AND-ed with `require="all"`); each term quoted, after `prefix` (a store's scope
    key, e.g. the owner of a memory). Terms hold only letters and digits, so nothing a user typed reaches
    MATCH as syntax. None when there is no term; an empty term (the analyzer makes none) raises ValueError."""
    terms = list(terms)
    if not all(terms):
        raise ValueError("an empty search term")
    quoted = [f'"{prefix}{term}"' for term in terms]
    if not quoted:
        return None
    return (" OR " if require == "any" else " AND ").join(quoted)
