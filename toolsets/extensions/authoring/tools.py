"""The `custom_tools` toolset: the model manages its own tools in the tools folder (see the package's docstring).

`authoring_toolset(ToolAuthoring(catalog, folder, emit))` builds it for one deployment (its catalog, its audit
sink); the
deployment publishes it in the member profile only where `--tool-authoring` allows (stdio, or HTTP with
`--tool-authoring-http`). Writing, deleting and reloading change what code runs, so they are destructive tools,
confirmed like every destructive tool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from toolsets.core.annotations import READ_ONLY, ToolHints
from toolsets.core.context import ToolContext
from toolsets.core.toolset import Toolset
from toolsets.extensions.authoring.models import (
    AuthoringResult,
    RegistryStatus,
    ReloadResult,
    ToolFeedback,
    ToolListing,
)
from toolsets.extensions.authoring.service import ToolAuthoring
from toolsets.infra.store.feedback import MAX_FEEDBACK_PER_TOOL

if TYPE_CHECKING:
    pass

AUTHORING_TOOLSET = "custom_tools"
AUTHORING_TOOLS = frozenset(
    {
        "list_custom_tools",
        "tool_registry_status",
        "create_or_update_custom_tool_file",
        "delete_custom_tool_file",
        "reload_custom_tools",
        "get_tool_feedback",
    }
)
ToolName = Annotated[
    str,
    Field(
        description="The tool's name and file name: a letter, then letters, digits or underscores, e.g. 'word_stats'",
        max_length=64,
    ),
]


def authoring_toolset(authoring: ToolAuthoring) -> Toolset:
    """The tools over one deployment's `ToolAuthoring` (which `FeedbackMiddleware` also tells of plugin calls)."""
    toolset = Toolset(AUTHORING_TOOLSET)

    @toolset.tool(hints=READ_ONLY)
    async def list_custom_tools() -> ToolListing:
        """List the files in the custom tools folder, the tools loaded from them and the files that failed to load
        (with the error)."""
        return await authoring.listing()

    @toolset.tool(hints=READ_ONLY)
    async def tool_registry_status() -> RegistryStatus:
        """The state of each file in the custom tools folder: its version, whether it serves, is on trial, is a
        canary candidate, is pending or disabled, and its load error word for word."""
        return RegistryStatus(files=await authoring.status())

    @toolset.tool(hints=READ_ONLY)
    async def get_tool_feedback(
        ctx: ToolContext[Any],
        name: ToolName,
        limit: Annotated[int, Field(ge=1, le=MAX_FEEDBACK_PER_TOOL, description="How many entries, newest first")] = 20,
    ) -> ToolFeedback:
        """What went wrong with a tool's versions, newest first: each failed or timed-out call (its version, route,
        arguments and error) and each canary hold or rollback (the rule, both windows' numbers, sample failing
        inputs). Your own calls' arguments are shown masked; other users' only by shape (each argument's type and
        length). Read it before writing a fix: the next version is rehearsed on your own failed inputs."""
        return await authoring.feedback(name, limit, ctx.caller.user_id)

    @toolset.tool(hints=ToolHints(destructive=True))
    async def create_or_update_custom_tool_file(
        ctx: ToolContext[Any],
        name: ToolName,
        source: Annotated[
            str,
            Field(
                description="The whole Python file: TOOL_SPEC = {'name': <name>, 'description': ..., 'input_schema': "
                "{'type': 'object', 'properties': {...}}} and def run(input_data, context): returning a dict"
            ),
        ],
    ) -> AuthoringResult:
        """Write a custom tool. A new tool is checked (import, TOOL_SPEC, schemas, name) and rehearsed in the
        sandbox on its TOOL_CASES = [{'input': {...}, 'expect': {...}}] (else the replaced version's) plus the inputs
        of its latest feedback (get_tool_feedback); passing, it serves on trial until its first calls succeed; if
        not, it stays pending and the result says why (the failing case). A new version of a tool that already
        serves, once checked and rehearsed, becomes a canary candidate that gets a share of the calls and is
        promoted or rolled back by its error rate and latency; it never replaces the served version at once."""
        return await authoring.write(ctx, name, source)

    @toolset.tool(hints=ToolHints(destructive=True, idempotent=True))
    async def delete_custom_tool_file(ctx: ToolContext[Any], name: ToolName) -> AuthoringResult:
        """Remove a custom tool's files (served, candidate, pending and disabled versions); they are kept in the
        folder's history, and the tool stops serving at once."""
        return await authoring.delete(ctx, name)

    @toolset.tool(hints=ToolHints(destructive=True, idempotent=True))
    async def reload_custom_tools(ctx: ToolContext[Any]) -> ReloadResult:
        """Load the custom tools folder again now (changed files take effect), and check pending tools again."""
        checked = await authoring.reload(ctx)
        listing = await authoring.listing()
        served = sorted({tool.name for tool in listing.loaded})
        return ReloadResult(served=served, checked=checked, errors=listing.errors)

    return toolset
