"""The deployment's extensions, in the one place the profiles (toolsets/profiles.py) find them.

Profiles are composed once per process; what a deployment adds depends on its settings. So the
composition holds these objects, and the deployment fills them at start (server/extensions.py):

- `plugin_catalog`: the tools folder's plugins (empty until configured and running);
- `workspace_slot`: the workspace toolset, plugged in only where `--workspace` publishes it.
"""

from __future__ import annotations

from toolsets.extensions.plugins.catalog import PluginCatalog
from toolsets.extensions.plugins.changes import plugin_tool_changes
from toolsets.extensions.plugins.slot import ToolsetSlot
from toolsets.extensions.plugins.toolset import PluginToolset

plugin_catalog = PluginCatalog(changes=plugin_tool_changes)  # subscribers need not import the catalog
workspace_slot = ToolsetSlot("workspace")


def plugin_toolset(profile: str) -> PluginToolset:
    """The catalog's plugins that ask for `profile` (member also gets the notification-safe ones)."""
    return PluginToolset(plugin_catalog, profile)
