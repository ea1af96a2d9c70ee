"""Assembling a deployment's front door from its parts: the in-process composition root.

    door = assemble(services)                       # the profiles, the pipeline, the built-in gates
    runner = runner_for(door, Caller("alice"))       # or langchain_tools(door, ...), or the MCP server

The server's composition root (server/runtime/composition.py's `Deployment`) builds its door with `assemble` too,
passing what its settings add (a gates file, plugins, the workspace, conversations in Redis, the audit log); to get
that door in-process from the same settings, use `server.runtime.in_process.in_process()`. Each call builds new
objects: two assemblies share nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
    standard_middleware,
    tool_arguments,
    without_device_only_tools,
)

if TYPE_CHECKING:
    from toolsets.admission.admission import Admission
    from toolsets.core.conversation import Conversations
    from toolsets.core.middleware import Middleware
    from toolsets.core.toolset import AbstractToolset
    from toolsets.pipeline.call_metrics import CallRecorder
    from toolsets.services import Services


def assemble(
    services: Services,
    *,
    confirm_policy: ConfirmPolicy = ConfirmPolicy.AUTO,
    gates_file: Path | None = None,
    exposure: Exposure = "full",
    extensions: Extensions = NO_EXTENSIONS,
    conversations: Conversations | None = None,
    toolsets: Mapping[str, AbstractToolset] | None = None,
    middleware: Sequence[Middleware] = (),
    device_only_hidden: bool = False,
    metrics: CallRecorder | None = None,
    admission: Admission | None = None,
    version: str | None = None,
) -> FrontDoor:
    """The gates are the built-in ones plus `gates_file`'s (checked against the tools here); the audit log is
    `services.audit`'s when it has one; conversations are kept in memory unless given. `toolsets` are the member
    and guest toolsets before policy (default: `assistant_toolsets(extensions, exposure)`); `middleware` are your
    own instances, run inside the standard ones (`standard_middleware`), in order; `metrics` records every call
    (`toolsets.pipeline.call_metrics`); `admission` bounds each caller's requests (`toolsets.admission`; none
    by default); `version` is the built-in tools' in audit lines (default: read from the installed package's
    metadata with the first audited request). `device_only_hidden`: no device can reach this door's fronts, so the
    deferred tools only a device answers are left out of every profile."""
    from toolsets.core.conversation import MemoryConversations
    from toolsets.extensions.exposure.policy import ToolExposure
    from toolsets.pipeline.gates.spec import load_gates

    bare = dict(toolsets) if toolsets is not None else assistant_toolsets(extensions, exposure)
    gates = load_gates(gates_file, tool_arguments(bare.values()))  # a gate may name a tool this front hides
    if device_only_hidden:
        bare = without_device_only_tools(bare)
    standard = standard_middleware(
        audit=services.audit,
        gates=gates,
        plugins=extensions.plugins,
        metrics=metrics,
        trials=extensions.trials,
        version=version,
    )
    chain = [*standard, *middleware]
    profiles = build_profiles(middleware=chain, extensions=extensions, exposure=exposure, toolsets=bare)
    return FrontDoor(
        profiles,
        services,
        exposure=ToolExposure(exposure, gates),
        conversations=conversations if conversations is not None else MemoryConversations(),
        confirm_policy=confirm_policy,
        admission=admission,
        version=version,
    )
