"""Envelope -> MCP `CallToolResult` (or the `InputRequiredResult` a port asked for) as the SDK's models (their
handshake-era wire forms, built without the SDK, are `server.wire_forms`).

An error or cancellation carries no `structuredContent`: clients (the TypeScript SDK first) validate
`structuredContent` against the tool's `outputSchema`, which describes success only. The text tells
the model what happened; the machine-readable envelope rides in `_meta` under `ERROR_META_KEY`.
"""

from __future__ import annotations

import mcp.types as types

from server.wire_forms import ERROR_META_KEY
from toolsets.core.envelope import ToolInputRequired, ToolOk, ToolResult, text_and_structured
from toolsets.core.tool import Tool


def to_mcp_result(outcome: ToolResult) -> types.CallToolResult | types.InputRequiredResult:
    if isinstance(outcome, ToolInputRequired):
        return outcome.payload
    text, data = text_and_structured(outcome)
    content = [types.TextContent(type="text", text=text)]
    if isinstance(outcome, ToolOk):
        return types.CallToolResult(content=content, structured_content=data)
    return types.CallToolResult(content=content, meta={ERROR_META_KEY: data}, is_error=True)


def to_mcp_tool(tool: Tool) -> types.Tool:
    hints = tool.hints
    return types.Tool(
        name=tool.name,
        title=tool.name.replace("_", " ").capitalize(),
        description=tool.description,
        input_schema=tool.input_schema,
        output_schema=tool.output_schema,
        annotations=types.ToolAnnotations(
            read_only_hint=hints.read_only,
            destructive_hint=hints.destructive,
            idempotent_hint=hints.idempotent,
            open_world_hint=hints.open_world,
        ),
    )
