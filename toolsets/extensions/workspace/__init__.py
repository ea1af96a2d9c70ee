"""The opt-in workspace toolset (`--workspace DIR`): files and a shell confined to one folder."""

from toolsets.extensions.workspace.tools import WORKSPACE_TOOLSET, workspace_toolset

__all__ = ["WORKSPACE_TOOLSET", "workspace_toolset"]
