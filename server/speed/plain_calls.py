"""What a `tools/call` a speed path may answer itself looks like: params that need no more checking than this
(`name`, `arguments` and a free-form `_meta` whose progress token, if any, is a string or an integer). Read without
the SDK, so the stdio lean front (which answers before the SDK is loaded) and the SDK-side paths share it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def plain_call(params: Mapping[str, Any] | None) -> tuple[str, dict[str, Any]] | None:
    """(name, arguments) of `tools/call` params that need no more checking than this; None: let the SDK check."""
    if not isinstance(params, dict) or not params.keys() <= _CALL_KEYS:
        return None
    name, arguments = params.get("name"), params.get("arguments")
    if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)) or not _plain_meta(params):
        return None
    return name, arguments or {}


_CALL_KEYS = frozenset({"name", "arguments", "_meta"})


def _plain_meta(params: dict[str, Any]) -> bool:
    meta = params.get("_meta")
    if meta is None:
        return "_meta" not in params
    if not isinstance(meta, dict):
        return False
    if "progressToken" not in meta:  # other keys (a traceparent, a host's own) are free-form on these versions
        return True
    token = meta["progressToken"]
    return isinstance(token, str) or (isinstance(token, int) and not isinstance(token, bool))
