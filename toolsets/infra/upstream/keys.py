"""The credentials the upstream clients use, handed down from the one settings model."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import SecretStr


@dataclass(frozen=True, slots=True)
class UpstreamKeys:
    google_maps: SecretStr | None = None  # GOOGLE_MAPS_API_KEY
    supermemory: SecretStr | None = None  # SUPERMEMORY_API_KEY
    notion: SecretStr | None = None  # NOTION_TOKEN
