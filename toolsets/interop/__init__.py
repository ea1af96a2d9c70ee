"""Interop: any agent framework's tool calls answered in-process, no MCP in between.

`runner_for(...)` / `InteropRunner` run LangChain/LangGraph, OpenAI Chat Completions, OpenAI Responses and
Anthropic Messages tool calls through `toolsets.core.dispatch` and reply in the matching shape;
`truloop-mcp call` (server/cli/call_command.py) is the same over a pipe. `toolsets.interop.langgraph_tools`
(the `langgraph` extra) makes LangChain tools of a profile; nothing else imports it.
"""

from toolsets.interop.definitions import tool_definitions
from toolsets.interop.runner import InteropRunner, NoDeviceRoute, runner_for
from toolsets.interop.shapes import Framing, ParsedCall, Shape, parse_call, parse_document

__all__ = [
    "Framing",
    "InteropRunner",
    "NoDeviceRoute",
    "ParsedCall",
    "Shape",
    "parse_call",
    "parse_document",
    "runner_for",
    "tool_definitions",
]
