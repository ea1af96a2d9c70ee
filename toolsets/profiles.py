"""Named profiles: compositions of toolsets, never copied lists of tools."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from toolsets.toolset import AbstractToolset, CombinedToolset

PROFILE_NAMES = ("member", "notification-safe", "guest")


@cache
def profiles() -> Mapping[str, AbstractToolset]:
    from toolsets.datetime_tools import datetime_toolset
    from toolsets.event_tools import event_toolset
    from toolsets.guest_tools import guest_toolset
    from toolsets.interaction_tools import interaction_toolset
    from toolsets.knowledge_tools import knowledge_toolset
    from toolsets.memory_tools import memory_toolset
    from toolsets.permission_tools import permission_toolset
    from toolsets.places_tools import places_toolset
    from toolsets.relay_tools import relay_toolset
    from toolsets.user_tools import user_toolset

    member = CombinedToolset(
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
    notification_safe = member.filtered(lambda tool: tool.toolset in safe, name="notification-safe")
    return {"member": member, "notification-safe": notification_safe, "guest": CombinedToolset("guest", guest_toolset)}


def profile(name: str) -> AbstractToolset:
    try:
        return profiles()[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; choose one of {', '.join(PROFILE_NAMES)}") from None
