"""The names of the profiles (toolsets/profiles.py composes them): light, so the settings and the plugin
spec can check a profile name without composing any profile."""

from __future__ import annotations

from typing import Literal, get_args

ProfileName = Literal["member", "notification-safe", "guest"]
PROFILE_NAMES: tuple[ProfileName, ...] = get_args(ProfileName)
