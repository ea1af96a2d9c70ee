"""Which era of the protocol a request speaks: the handshake era (sessions, a back-channel to the client) or
2026-07-28 and later (no session, no back-channel; a question to the client leaves as `InputRequiredResult`)."""

from __future__ import annotations

from mcp_types.version import is_version_at_least

MODERN = "2026-07-28"


def is_modern(protocol_version: str | None) -> bool:
    """2026-07-28 or later."""
    return is_version_at_least(protocol_version or "", MODERN)
