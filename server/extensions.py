"""The deployment's extensions, from its settings: the plugin folder (`--tools-dir`) and the workspace.

The profiles hold a plugin catalog and a workspace slot (toolsets/plugins/deployment.py); this module
fills them. `publish_workspace` runs when a server is built (it decides, per transport, whether the
workspace is published at all); `extensions_running` wraps serving: it loads the tools folder before
the first request, watches it while serving, and closes every plugin version when the server stops.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from server.canary_setup import open_canary_store
from server.settings import Settings
from toolsets.plugins.catalog import PluginConfig
from toolsets.plugins.deployment import plugin_catalog, workspace_slot
from toolsets.toolset import AbstractToolset


def publish_workspace(settings: Settings) -> None:
    """Plug the workspace toolset in where it is published: stdio, or HTTP with --workspace-http (where the
    member profile goes to member tokens only; guests and notification-safe never get it)."""
    published = settings.workspace is not None and (settings.transport == "stdio" or settings.workspace_http)
    workspace_slot.plug(_workspace(settings.workspace, settings.workspace_strict) if published else None)


@functools.cache
def _workspace(root: Path | None, strict: bool) -> AbstractToolset:
    from toolsets.workspace import workspace_toolset

    assert root is not None
    return workspace_toolset(root, strict=strict)


def plugin_config(settings: Settings) -> PluginConfig | None:
    if settings.tools_dir is None:
        return None
    return PluginConfig(settings.tools_dir, settings.data_dir / "plugins", settings.plugin_isolation)


@asynccontextmanager
async def extensions_running(settings: Settings) -> AsyncIterator[None]:
    publish_workspace(settings)
    plugin_catalog.configure(plugin_config(settings))
    plugin_catalog.canary.configure(open_canary_store(settings), settings.canary_key)
    try:
        async with plugin_catalog.running():
            yield
    finally:
        plugin_catalog.configure(None)
