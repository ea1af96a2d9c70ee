"""Servers from settings, for callers that hold only settings: each call is a new deployment
(server/runtime/composition.py) unless one is given, so HTTP's surfaces share theirs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from server.runtime.composition import Deployment, default_caller
from server.settings import Settings

if TYPE_CHECKING:
    from bridge.service import DeviceBridge
    from server.mcp.mcp_server import TruloopMCP
    from toolsets.services import Services

__all__ = ["build_server", "default_caller"]


def build_server(
    settings: Settings,
    *,
    member_profile: str | None = None,
    services: Services | None = None,
    bridge: DeviceBridge | None = None,
    deployment: Deployment | None = None,
    **kwargs: Any,
) -> TruloopMCP:
    """`member_profile` None means the stdio/unauthenticated default: `--profile`."""
    deployment = deployment or Deployment(settings, services=services, bridge=bridge)
    return deployment.mcp_server(member_profile, **kwargs)
