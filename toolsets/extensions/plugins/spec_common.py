"""What the three kinds of plugin spec share: the timeout bounds, the profiles rule and the one error they raise."""

from __future__ import annotations

from typing import Any

DEFAULT_TIMEOUT_S = 30.0
MAX_TIMEOUT_S = 600.0


class PluginSpecError(ValueError):
    """The spec is not acceptable; the message names the key and what it expects."""


def offered(profiles: tuple[str, ...], profile: str) -> bool:
    """Whether a plugin asking for `profiles` is in `profile`: notification-safe is a part of member, so a plugin in
    it is in member too."""
    if profile == "member":
        return "member" in profiles or "notification-safe" in profiles
    return profile in profiles


def some_profiles(cls: Any, value: Any) -> Any:
    """The `profiles` of any spec: a name or a list of names, at least one, each once."""
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list | tuple) and not value:
        raise ValueError("name at least one profile: member, notification-safe or guest")
    return tuple(dict.fromkeys(value)) if isinstance(value, list | tuple) else value
