"""Named profiles: compositions of toolsets and wrappers, never copied lists of tools.

This is the one place where policy is composed: a new wrapper or middleware is one line here.
From the outside in: middleware (gates, argument checks) -> confirmation of destructive tools ->
the toolsets themselves (a deferred tool's answer comes from the user's side).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from toolsets.core.combined import CombinedToolset
from toolsets.core.deferred import DeviceTools
from toolsets.core.filtered import FilteredToolset
from toolsets.core.middleware import Middleware, MiddlewareToolset
from toolsets.core.toolset import AbstractToolset
from toolsets.pipeline.approval import ApprovalRequiredToolset
from toolsets.pipeline.audit.middleware import audit
from toolsets.pipeline.canary.router import canary_route
from toolsets.pipeline.gates import enforce_gates
from toolsets.pipeline.tracing import trace_call
from toolsets.profile_names import PROFILE_NAMES

# Argument middleware, outermost first (see toolsets/core/middleware.py for the ordering rules).
# The audit log is first, so it sees every outcome (a no-op when the deployment gives no `Services.audit`).
MIDDLEWARE: tuple[Middleware, ...] = (canary_route, audit, trace_call, enforce_gates)  # canary: picks the version first


def with_policy(toolset: AbstractToolset) -> AbstractToolset:
    return MiddlewareToolset(ApprovalRequiredToolset(toolset), MIDDLEWARE)


@cache
def profiles() -> Mapping[str, AbstractToolset]:
    from toolsets.assistant.datetime_tools import datetime_toolset
    from toolsets.assistant.event_tools import event_toolset
    from toolsets.assistant.guest_tools import guest_toolset
    from toolsets.assistant.interaction_tools import interaction_toolset
    from toolsets.assistant.knowledge_tools import knowledge_toolset
    from toolsets.assistant.memory_tools import memory_toolset
    from toolsets.assistant.permission_tools import permission_toolset
    from toolsets.assistant.places_tools import places_toolset
    from toolsets.assistant.relay_tools import relay_toolset
    from toolsets.assistant.user_tools import user_toolset
    from toolsets.extensions.exposure.tools import exposure_toolset
    from toolsets.extensions.plugins.deployment import plugin_toolset, workspace_slot
    from toolsets.extensions.plugins.tool import offered_to

    member = with_policy(
        CombinedToolset(
            "member",
            datetime_toolset,
            user_toolset,
            knowledge_toolset,
            memory_toolset,
            places_toolset,
            relay_toolset,
            event_toolset,
            interaction_toolset,
            permission_toolset,
            exposure_toolset,
            workspace_slot,  # the deployment's --workspace, where it is published (server/extensions.py)
            plugin_toolset("member"),  # the --tools-dir plugins that ask for member (re-read on reload)
        )
    )
    # An allow-list: agents composing notifications must not create events, look users up or send
    # messages, and a toolset added to `member` later stays out until it is listed here.
    safe = {
        datetime_toolset.name,
        knowledge_toolset.name,
        interaction_toolset.name,
        permission_toolset.name,
        places_toolset.name,
        memory_toolset.name,
    }
    notification_safe = FilteredToolset(
        member, lambda tool: tool.toolset in safe or offered_to(tool, "notification-safe"), name="notification-safe"
    )
    guest = with_policy(CombinedToolset("guest", guest_toolset, exposure_toolset, plugin_toolset("guest")))
    composed = {"member": member, "notification-safe": notification_safe, "guest": guest}
    DeviceTools(composed.values())  # a deferred tool whose declaration does not fit stops the server here
    return composed


@cache
def tool_arguments() -> Mapping[str, frozenset[str]]:
    """Every tool of every profile, with its argument names (gates are checked against them)."""
    return {tool.name: frozenset(tool.args_model.model_fields) for toolset in profiles().values() for tool in toolset}


@cache
def device_tools() -> DeviceTools:
    """The deferred tools of every profile, for the device routes."""
    return DeviceTools(profiles().values())


def profile(name: str) -> AbstractToolset:
    try:
        return profiles()[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; choose one of {', '.join(PROFILE_NAMES)}") from None
