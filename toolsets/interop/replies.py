"""Replies to tool calls, in the shape each call came in.

| shape | reply |
|---|---|
| LangChain / LangGraph | `{"type":"tool","role":"tool","content","name","tool_call_id","status","artifact"}` |
| OpenAI Chat Completions | `{"role":"tool","tool_call_id","content"}` |
| OpenAI Responses | `{"type":"function_call_output","call_id","output"}` |
| Anthropic Messages | `{"type":"tool_result","tool_use_id","content","is_error"}` |

`content` is what an MCP client's model reads: the result as JSON text, or the dispatcher's corrective text.
The LangChain `artifact` is the structured result (on failure, the error envelope
`{"status","code","reason",...}`), as MCP's `structuredContent` and `_meta` carry them.
"""

from __future__ import annotations

from typing import Any

from toolsets.core.envelope import ToolCancelled, ToolErr, ToolOk, ToolResult, text_and_structured
from toolsets.core.errors import ErrorCode
from toolsets.interop.shapes import Document, Framing, ParsedCall, Shape, Unrecognized


def reply(call: ParsedCall, outcome: ToolResult) -> dict[str, Any]:
    settled = outcome if isinstance(outcome, ToolOk | ToolErr | ToolCancelled) else _cannot_ask(call)
    text, data = text_and_structured(settled)
    failed = not isinstance(settled, ToolOk)
    if call.shape is Shape.LANGCHAIN:
        return {
            "type": "tool",
            "role": "tool",
            "content": text,
            "name": call.name,
            "tool_call_id": call.call_id,
            "status": "error" if failed else "success",
            "artifact": data,
        }
    if call.shape is Shape.OPENAI_CHAT:
        return {"role": "tool", "tool_call_id": call.call_id, "content": text}
    if call.shape is Shape.OPENAI_RESPONSES:
        return {"type": "function_call_output", "call_id": call.call_id, "output": text}
    return {"type": "tool_result", "tool_use_id": call.call_id, "content": text, "is_error": failed}


def _cannot_ask(call: ParsedCall) -> ToolErr:
    """A port asked for a round trip with the client (`ToolInputRequired`), which no framework here can make."""
    return ToolErr(
        ErrorCode.NO_ROUTE,
        f"{call.name} needs an answer from the user that this caller cannot ask for; nothing was done.",
    )


def not_a_call(item: Unrecognized) -> dict[str, Any]:
    return {"error": {"code": "not_a_tool_call", "message": item.reason}}


def frame(document: Document, replies: list[dict[str, Any]]) -> Any:
    """The replies to `document`, framed as the document was (one reply, a list, an Anthropic user message)."""
    if document.framing is Framing.ONE:
        return replies[0]
    if document.framing is Framing.ANTHROPIC_USER:
        return {"role": "user", "content": replies}
    return replies
