"""Assembling a deployment's front door from its parts: the in-process composition root.

    door = assemble(services)                       # the profiles, the pipeline, the built-in gates
    runner = runner_for(door, Caller("alice"))       # or langchain_tools(door, ...), or the MCP server

The server's composition root (server/composition.py) calls `assemble` too, with what its settings add
(a gates file, plugins, the workspace, conversations in Redis, the audit log). Each call builds new objects:
two assemblies share nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from toolsets.core.context import ConfirmPolicy
from toolsets.front_door import FrontDoor
from toolsets.profiles import (
    NO_EXTENSIONS,
    Exposure,
    Extensions,
    assistant_toolsets,
    build_profiles,
    pipeline,
    tool_arguments,
)

if TYPE_CHECKING:
    from toolsets.core.conversation import Conversations
    from toolsets.services import Services


def assemble(
    services: Services,
    *,
    confirm_policy: ConfirmPolicy = ConfirmPolicy.AUTO,
    gates_file: Path | None = None,
    exposure: Exposure = "full",
    extensions: Extensions = NO_EXTENSIONS,
    conversations: Conversations | None = None,
) -> FrontDoor:
    """The gates are the built-in ones plus `gates_file`'s (checked against the tools here); the audit log is
    `services.audit`'s when it has one; conversations are kept in memory unless given."""
    from toolsets.core.conversation import MemoryConversations
    from toolsets.extensions.exposure.policy import ToolExposure
    from toolsets.pipeline.gates.spec import load_gates

    bare = assistant_toolsets(extensions, exposure)
    gates = load_gates(gates_file, tool_arguments(bare.values()))
    middleware = pipeline(audit=services.audit, gates=gates, plugins=extensions.plugins)
    profiles = build_profiles(middleware=middleware, extensions=extensions, exposure=exposure, toolsets=bare)
    return FrontDoor(
        profiles,
        services,
        exposure=ToolExposure(exposure, gates),
        conversations=conversations if conversations is not None else MemoryConversations(),
        confirm_policy=confirm_policy,
    )
