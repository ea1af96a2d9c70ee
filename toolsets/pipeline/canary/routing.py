"""Which version a call runs on: a stable hash of (tool, key) against the candidate's share.

The bucket of a key is fixed (SHA-256, not Python's salted `hash`), so a key keeps its version across calls,
restarts and replicas, and a key routed to the candidate at 10% stays there at 30%.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from toolsets.core.context import ToolContext

KeyKind = Literal["session", "user", "request"]
BUCKETS = 10_000  # shares are honoured to a hundredth of a percent


def bucket(tool: str, key: str) -> int:
    digest = hashlib.sha256(f"{tool}\0{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % BUCKETS


def to_candidate(tool: str, key: str, share: float) -> bool:
    """True when `key` falls in the candidate's `share` (percent) of the buckets."""
    return bucket(tool, key) < round(share * BUCKETS / 100)


def routing_key(ctx: ToolContext[Any], kind: KeyKind, call_id: str) -> str:
    """The key of a call: its user, its MCP session (the user's when there is none), or the request itself."""
    if kind == "request":
        return ctx.request.request_id or call_id
    if kind == "session" and ctx.request.session_id:
        return f"session:{ctx.request.session_id}"
    return f"user:{ctx.caller.user_id}"
