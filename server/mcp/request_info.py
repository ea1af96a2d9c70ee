"""What an MCP request is, for the logs and the audit line: the same fields from every MCP front (the SDK's path
and the stdio lean front), built here once."""

from __future__ import annotations

from typing import Any

from toolsets.core.context import RequestInfo


def mcp_request_info(
    request_id: Any, session_id: str | None, *, stdio: bool, protocol_version: str | None, profile: str
) -> RequestInfo:
    """`session_id`: the handshake-era session (the stdio process's own on stdio); None on 2026-07-28."""
    return RequestInfo(
        request_id=None if request_id is None else str(request_id),
        session_id=session_id,
        transport="stdio" if stdio else "http",
        protocol_version=protocol_version,
        profile=profile,
    )
