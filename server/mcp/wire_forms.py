"""The one serialiser of what the server answers: results and tool forms as plain dicts, what the SDK's serializer
makes of its models for the same content, built without importing the SDK (the stdio server answers its first
messages before the SDK is loaded: `server.stdio.lean_front`). The SDK's own path takes the same forms as its
models (`to_mcp_result`, `to_mcp_tool`).

A tool's error or cancellation carries no `structuredContent`: clients (the TypeScript SDK first) validate
`structuredContent` against the tool's `outputSchema`, which describes success only. The text tells the model
what happened; the machine-readable envelope rides in `_meta` under `ERROR_META_KEY`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolsets.core.content import ContentBlocks
from toolsets.core.envelope import ToolInputRequired, ToolOk, ToolResult, text_and_structured

if TYPE_CHECKING:
    import mcp.types as types

    from toolsets.core.tool import Tool

ERROR_META_KEY = "io.truloop/error"

SERVER_NAME = "truloop-mcp"
INSTRUCTIONS = (
    "Tools of the truloop assistant. Dates are ISO 8601 (YYYY-MM-DD); times carry UTC offsets. "
    "A failed call explains what to change; a cancelled one means the user said no."
)
# what the server's handlers make the SDK advertise on a handshake (tools.listChanged: server.sdk_compat)
HANDSHAKE_CAPABILITIES: dict[str, Any] = {
    "completions": {},
    "logging": {},
    "prompts": {"listChanged": True},
    "resources": {"listChanged": True, "subscribe": True},
    "tools": {"listChanged": True},
    "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},  # (server/tasks/)
}

# the protocol versions an `initialize` can ask for, oldest first (the SDK's HANDSHAKE_PROTOCOL_VERSIONS)
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[-1]
MODERN_META_PREFIX = "io.modelcontextprotocol/"  # the 2026-07-28 request envelope's `_meta` keys


def negotiated_version(requested: Any) -> str:
    """The version a handshake settles on: the one asked for when it is a handshake version, else the latest."""
    return requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE


def initialize_result(requested: Any, version: str) -> dict[str, Any]:
    """The answer to a handshake `initialize` asking for protocol version `requested` (`version`: the server's)."""
    return {
        "capabilities": {name: dict(value) for name, value in HANDSHAKE_CAPABILITIES.items()},
        "instructions": INSTRUCTIONS,
        "protocolVersion": negotiated_version(requested),
        "serverInfo": {"name": SERVER_NAME, "version": version},
    }


def call_result(outcome: ToolResult) -> dict[str, Any]:
    """The `tools/call` result as a handshake-era (2025-06-18, 2025-11-25) client reads it, without building and
    validating the SDK's models."""
    if isinstance(outcome, ToolInputRequired):  # never on these versions: their questions are asked inline
        return outcome.payload.model_dump(by_alias=True, mode="json", exclude_none=True)
    if isinstance(outcome, ToolOk) and isinstance(outcome.data, ContentBlocks):
        return {"content": outcome.data.wire(), "isError": False}  # the tool's own blocks, no structured content
    text, data = text_and_structured(outcome)
    content = [{"type": "text", "text": text}]
    if isinstance(outcome, ToolOk):
        return {"content": content, "isError": False, "structuredContent": data}
    return {"_meta": {ERROR_META_KEY: data}, "content": content, "isError": True}


def tool_form(tool: Tool) -> dict[str, Any]:
    """One tool as `tools/list` publishes it."""
    hints = tool.hints
    form: dict[str, Any] = {
        "name": tool.name,
        "title": tool.name.replace("_", " ").capitalize(),
        "description": tool.description,
        "inputSchema": tool.input_schema,
    }
    if tool.output_schema is not None:  # a plugin may declare none
        form["outputSchema"] = tool.output_schema
    if tool.task_support != "forbidden":  # a client may run it as a task (absent: it may not)
        form["execution"] = {"taskSupport": tool.task_support}
    form["annotations"] = {
        "readOnlyHint": hints.read_only,
        "destructiveHint": hints.destructive,
        "idempotentHint": hints.idempotent,
        "openWorldHint": hints.open_world,
    }
    return form


def tools_list_result(forms: list[dict[str, Any]], next_cursor: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"tools": forms}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


def to_mcp_result(outcome: ToolResult) -> types.CallToolResult | types.InputRequiredResult:
    """`call_result` as the SDK's model (its `call_tool` path), or the `InputRequiredResult` a port asked for."""
    import mcp.types as types

    if isinstance(outcome, ToolInputRequired):
        return outcome.payload
    return types.CallToolResult.model_validate(call_result(outcome))


def to_mcp_tool(tool: Tool) -> types.Tool:
    """`tool_form` as the SDK's model."""
    import mcp.types as types

    return types.Tool.model_validate(tool_form(tool))
