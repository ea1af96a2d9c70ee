"""Assembles servers from settings: one per MCP surface, sharing the same services."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from bridge.delivery import DeviceDelivery
from bridge.pending import BridgeBackend, MemoryBackend
from bridge.service import ChannelSender, DeviceBridge
from server.audit_log import open_audit_log
from server.exposure import Conversations, ToolExposure
from server.extensions import publish_workspace
from server.identity import Surface
from server.mcp_server import TruloopMCP
from server.settings import Settings
from toolsets.core.context import Caller
from toolsets.services import Services

if TYPE_CHECKING:
    from toolsets.pipeline.gates import GateSet


def default_caller(settings: Settings) -> Caller:
    return Caller(user_id=settings.user, role="member", timezone=settings.timezone)


def build_bridge(settings: Settings) -> DeviceBridge:
    backend: BridgeBackend
    if settings.redis_url is not None:
        from bridge.redis_backend import RedisBackend

        backend = RedisBackend(settings.redis_url.get_secret_value(), prefix=settings.redis_prefix)
    else:
        backend = MemoryBackend()
    return DeviceBridge(backend, extra_channel=sendbird_channel(settings))


def sendbird_channel(settings: Settings) -> ChannelSender | None:
    """The Sendbird route to the user's app, when both its app id and its token are set."""
    if settings.sendbird_app_id is None or settings.sendbird_api_token is None:
        return None
    from bridge.sendbird import SendbirdChannel

    return SendbirdChannel(
        settings.sendbird_app_id,
        settings.sendbird_api_token,
        sender_id=settings.sendbird_sender_id,
        channel_url_template=settings.sendbird_channel_url_template,
    )


def build_services(settings: Settings, bridge: DeviceBridge | None = None) -> Services:
    services = Services(
        data_dir=settings.data_dir,
        docs_dir=settings.resolved_docs_dir,
        keys=settings.upstream_keys,
        database_url=settings.database_url,
        open_audit=functools.partial(open_audit_log, settings),  # on the first audit line, not at start
    )
    if bridge is not None:
        services.delivery = DeviceDelivery(bridge)
    return services


def build_server(
    settings: Settings,
    *,
    member_profile: str | None = None,
    services: Services | None = None,
    bridge: DeviceBridge | None = None,
    **kwargs: Any,
) -> TruloopMCP:
    """`member_profile` None means the stdio/unauthenticated default: `--profile`."""
    profile = member_profile or settings.profile
    publish_workspace(settings)
    surface = Surface(member_profile=profile, default_caller=default_caller(settings), default_profile=profile)
    if settings.state_keys:
        from mcp.server.request_state import RequestStateSecurity

        kwargs["request_state_security"] = RequestStateSecurity(
            keys=[key.get_secret_value() for key in settings.state_keys]
        )
    bridge = bridge or build_bridge(settings)
    return TruloopMCP(
        surface,
        exposure=build_exposure(settings, progressive_allowed=profile != "notification-safe"),
        confirm_policy=settings.confirm,
        bridge=bridge,
        deferred_timeout=settings.deferred_timeout,
        stdio=settings.transport == "stdio",
        services=services or build_services(settings, bridge),
        log_level=settings.log_level,
        fast_paths=settings.fast_paths,  # server/speed/: installed by the server when on
        **kwargs,
    )


def build_exposure(settings: Settings, *, progressive_allowed: bool = True) -> ToolExposure:
    """The deployment's exposure mode and gates; conversations of 2026-07-28 callers in Redis when configured."""
    from toolsets.core.conversation import MemoryConversations

    conversations: Conversations
    if settings.redis_url is not None:
        from bridge.redis_conversations import RedisConversations

        conversations = RedisConversations(settings.redis_url.get_secret_value(), prefix=settings.redis_prefix)
    else:
        conversations = MemoryConversations()
    exposure = settings.exposure if progressive_allowed else "full"
    if settings.gates is None:  # built on first use, not to answer initialize
        return ToolExposure(exposure, builtin_gates, conversations)
    from toolsets.pipeline.gates import load_gates
    from toolsets.profiles import tool_arguments

    return ToolExposure(exposure, load_gates(settings.gates, tool_arguments()), conversations)


def builtin_gates() -> GateSet:
    """The gates that apply without a gates file (checked against the tools by the tests; checking them here would
    load every toolset)."""
    from toolsets.pipeline.gates import BUILTIN_GATES, GateSet

    return GateSet(BUILTIN_GATES)
