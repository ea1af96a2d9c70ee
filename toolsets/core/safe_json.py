"""Decoding of untrusted JSON: bounded nesting, strict UTF-8, no NaN; every failure is one `ValueError`.

`json.loads` raises `RecursionError` (not a `ValueError`) on deep nesting and surrogate-escaped
text on bad UTF-8, so callers that catch `ValueError` crashed on both. pydantic-core's parser
(already a dependency) stops at `MAX_DEPTH` levels and reports bad bytes as a parse error.
"""

from __future__ import annotations

from typing import Any

import pydantic_core

# pydantic-core's own recursion limit; documented here so error texts can name it.
MAX_DEPTH = 200


class JsonDecodeError(ValueError):
    """Not JSON, invalid UTF-8, or nested deeper than `MAX_DEPTH`."""


def loads(data: bytes | bytearray | str) -> Any:
    try:
        return pydantic_core.from_json(data, allow_inf_nan=False)
    except ValueError as exc:
        raise JsonDecodeError(str(exc)) from None
