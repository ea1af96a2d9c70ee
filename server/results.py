"""Envelope -> MCP `CallToolResult` (or the `InputRequiredResult` a port asked for), as a model or in
its handshake-era wire form.

An error or cancellation carries no `structuredContent`: clients (the TypeScript SDK first) validate
`structuredContent` against the tool's `outputSchema`, which describes success only. The text tells
the model what happened; the machine-readable envelope rides in `_meta` under `ERROR_META_KEY`.
"""

from __future__ import annotations

from typing import Any

import mcp.types as types

from toolsets.core.envelope import ToolInputRequired, ToolOk, ToolResult, text_and_structured
from toolsets.core.tool import Tool

ERROR_META_KEY = "io.truloop/error"


def to_mcp_result(outcome: ToolResult) -> types.CallToolResult | types.InputRequiredResult:
    if isinstance(outcome, ToolInputRequired):
        return outcome.payload
    text, data = text_and_structured(outcome)
    content = [types.TextContent(type="text", text=text)]
    if isinstance(outcome, ToolOk):
        return types.CallToolResult(content=content, structured_content=data)
    return types.CallToolResult(content=content, meta={ERROR_META_KEY: data}, is_error=True)


def to_wire_result(outcome: ToolResult) -> dict[str, Any]:
    """The `tools/call` result as a handshake-era (2025-06-18, 2025-11-25) client reads it: what the SDK's
    serializer makes of `to_mcp_result(outcome)`, without building and validating the models
    (tests/test_lean_path.py holds the two equal)."""
    if isinstance(outcome, ToolInputRequired):  # never on these versions: their questions are asked inline
        return outcome.payload.model_dump(by_alias=True, mode="json", exclude_none=True)
    text, data = text_and_structured(outcome)
    content = [{"type": "text", "text": text}]
    if isinstance(outcome, ToolOk):
        return {"content": content, "isError": False, "structuredContent": data}
    return {"_meta": {ERROR_META_KEY: data}, "content": content, "isError": True}


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
