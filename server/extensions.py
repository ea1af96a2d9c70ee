"""The deployment's extensions, from its settings: the plugin folder (`--tools-dir`) and the workspace.

The profiles hold a plugin catalog and a workspace slot (toolsets/extensions/plugins/deployment.py); this module
fills them. `publish_workspace` runs when a server is built (it decides, per transport, whether the
workspace is published at all); `extensions_running` wraps serving: it loads the tools folder before
the first request, watches it while serving, and closes every plugin version when the server stops.

A deployment without a tools folder or a workspace imports none of it at start: the catalog and the slot,
empty, are loaded with the profiles (on the first tool list or call).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from server.settings import Settings
    from toolsets.core.toolset import AbstractToolset
    from toolsets.extensions.plugins.catalog import PluginConfig


def publish_workspace(settings: Settings) -> None:
    """Plug the workspace toolset in where it is published: stdio, or HTTP with --workspace-http (where the
    member profile goes to member tokens only; guests and notification-safe never get it)."""
    published = settings.workspace is not None and (settings.transport == "stdio" or settings.workspace_http)
    if not published and _workspace.cache_info().currsize == 0:
        return  # no workspace was ever plugged in this process: the slot is empty already
    from toolsets.extensions.plugins.deployment import workspace_slot

    workspace_slot.plug(_workspace(settings.workspace, settings.workspace_strict) if published else None)


@functools.cache
def _workspace(root: Path | None, strict: bool) -> AbstractToolset:
    from toolsets.extensions.workspace import workspace_toolset

    assert root is not None
    return workspace_toolset(root, strict=strict)


def plugin_config(settings: Settings) -> PluginConfig | None:
    if settings.tools_dir is None:
        return None
    from toolsets.extensions.plugins.catalog import PluginConfig

    return PluginConfig(settings.tools_dir, settings.data_dir / "plugins", settings.plugin_isolation)


@asynccontextmanager
async def extensions_running(settings: Settings) -> AsyncIterator[None]:
    publish_workspace(settings)
    if settings.tools_dir is None:  # no plugins to load or watch, so no candidate for the canary to route
        yield
        return
    from server.canary_setup import open_canary_store
    from toolsets.extensions.plugins.deployment import plugin_catalog

    plugin_catalog.configure(plugin_config(settings))
    plugin_catalog.canary.configure(open_canary_store(settings), settings.canary_key)
    try:
        async with plugin_catalog.running():
            yield
    finally:
        plugin_catalog.configure(None)
