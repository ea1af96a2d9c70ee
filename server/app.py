"""Assembles servers from settings: one per MCP surface, sharing the same services."""

from __future__ import annotations

from typing import Any

from server.identity import Surface
from server.mcp_server import TruloopMCP
from server.settings import Settings
from toolsets.context import Caller
from toolsets.services import Services


def default_caller(settings: Settings) -> Caller:
    return Caller(user_id=settings.user, role="member", timezone=settings.timezone)


def build_services(settings: Settings) -> Services:
    return Services(data_dir=settings.data_dir, docs_dir=settings.resolved_docs_dir)


def build_server(
    settings: Settings, *, member_profile: str | None = None, services: Services | None = None, **kwargs: Any
) -> TruloopMCP:
    """`member_profile` None means the stdio/unauthenticated default: `--profile`."""
    profile = member_profile or settings.profile
    surface = Surface(member_profile=profile, default_caller=default_caller(settings), default_profile=profile)
    if settings.state_keys:
        from mcp.server.request_state import RequestStateSecurity

        kwargs["request_state_security"] = RequestStateSecurity(keys=list(settings.state_keys))
    return TruloopMCP(
        surface,
        confirm_policy=settings.confirm,
        services=services or build_services(settings),
        log_level=settings.log_level,
        **kwargs,
    )
