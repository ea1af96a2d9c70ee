"""The deployment's canary store, from the settings: Redis with `--redis-url` (every replica shares it), else
this machine's (`<data-dir>/canary/state.json`, which `truloop-mcp canary ...` reads and changes too)."""

from __future__ import annotations

from pathlib import Path

from server.settings import Settings
from toolsets.pipeline.canary.store import CanaryStore, LocalCanaryStore


def canary_state_file(settings: Settings) -> Path:
    return settings.data_dir / "canary" / "state.json"


def open_canary_store(settings: Settings) -> CanaryStore:
    if settings.redis_url is not None:
        from toolsets.pipeline.canary.redis_store import RedisCanaryStore

        return RedisCanaryStore(settings.redis_url.get_secret_value(), prefix=settings.redis_prefix)  # its own client
    return LocalCanaryStore(canary_state_file(settings))
