"""A plugin's `uri_template`: matching a URI against it, and checking the variables it yields once decoded.

RFC 6570 level 1 (`{name}`: one path segment) and reserved expansion (`{+name}`: a path, `/` allowed). A template
is matched against the raw URI and each value is percent-decoded after, so `%2F` in a `{name}` would reach the
plugin as `/`: every value is checked after decoding. A `{name}` value may not hold `/`, `\\`, `..` or NUL (nor be
`.`); a `{+name}` value is a relative path whose segments are neither empty, `.` nor `..`, with no `\\` or NUL.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

VARIABLE = re.compile(r"\{(\+?)([A-Za-z_][A-Za-z0-9_]{0,63})\}")
MAX_SEGMENT = 512
MAX_PATH = 2048


def variables(template: str) -> list[str]:
    """The template's variable names, in order (a path variable without its `+`)."""
    return [found.group(2) for found in VARIABLE.finditer(template)]


def path_variables(template: str) -> frozenset[str]:
    """The names the template declares as paths (`{+name}`)."""
    return frozenset(found.group(2) for found in VARIABLE.finditer(template) if found.group(1))


def pattern(template: str) -> re.Pattern[str]:
    """A linear-time pattern: each `{name}` matches one non-empty path segment, each `{+name}` a non-empty path."""
    parts: list[str] = []
    position = 0
    for found in VARIABLE.finditer(template):
        parts.append(re.escape(template[position : found.start()]))
        allowed = f"[^?#]{{1,{MAX_PATH}}}" if found.group(1) else f"[^/?#]{{1,{MAX_SEGMENT}}}"
        parts.append(f"(?P<{found.group(2)}>{allowed})")
        position = found.end()
    parts.append(re.escape(template[position:]))
    return re.compile("".join(parts))


def match(template: str, uri: str) -> dict[str, str] | None:
    """The variables of `uri`, percent-decoded (not yet checked: see `checked`), or None when it does not match."""
    found = pattern(template).fullmatch(uri)
    if found is None:
        return None
    return {name: unquote(value) for name, value in found.groupdict().items()}


def checked(template: str, params: dict[str, str]) -> dict[str, str]:
    """`params` when each value is safe to build a file name or a path from; ValueError naming the one that is not."""
    paths = path_variables(template)
    for name, value in params.items():
        problem = _path_problem(value) if name in paths else _segment_problem(value)
        if problem is not None:
            raise ValueError(
                f"The resource parameter {name!r} of {template} {problem} (after percent-decoding); "
                "nothing was read. Ask for a URI whose parameters name an item, not a path."
            )
    return params


def _segment_problem(value: str) -> str | None:
    for bad, shown in (("\x00", "NUL"), ("/", "'/'"), ("\\", "'\\'"), ("..", "'..'")):
        if bad in value:
            return f"contains {shown}, which a single-segment parameter may not hold"
    if value == ".":
        return "is '.', which a single-segment parameter may not be"
    return None


def _path_problem(value: str) -> str | None:
    for bad, shown in (("\x00", "NUL"), ("\\", "'\\'")):
        if bad in value:
            return f"contains {shown}, which a path parameter may not hold"
    if value.startswith("/"):
        return "is an absolute path; a path parameter is relative to the plugin's folder"
    if any(segment in ("", ".", "..") for segment in value.split("/")):
        return "has an empty, '.' or '..' segment, which a path parameter may not hold"
    return None
