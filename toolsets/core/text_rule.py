"""The one rule for text in tool arguments: no NUL character (U+0000), anywhere, for every tool.

PostgreSQL cannot store NUL in text (psycopg raises `DataError`), SQLite can: refusing it before any
tool runs makes both store backends, every tool and every front answer the same (a `validation`
error naming the argument) instead of an internal error on one backend only. Retrying never helps,
and no legitimate name, note or query needs the character.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

NUL = "\x00"
NUL_REFUSED = "must not contain the NUL character (U+0000); remove it and call again"


def nul_in(arguments: Mapping[str, Any], names: Iterable[str]) -> str | None:
    """The path (`content`, `tags.1`, `filters.kind`) of the first string holding NUL among the arguments
    called `names`, at any depth (a dict's keys too); None when there is none."""
    for name in names:
        found = _nul_path(arguments[name], name)
        if found is not None:
            return found
    return None


def _nul_path(value: Any, path: str) -> str | None:
    if isinstance(value, str):
        return path if NUL in value else None
    if isinstance(value, Mapping):
        for key, item in value.items():
            key_path = f"{path}.{key}"
            if isinstance(key, str) and NUL in key:
                return path
            found = _nul_path(item, key_path)
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = _nul_path(item, f"{path}.{index}")
            if found is not None:
                return found
    return None
