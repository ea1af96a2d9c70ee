"""The tools of a profile as each framework declares tools to its model (the same schemas MCP publishes)."""

from __future__ import annotations

from typing import Any

from toolsets.core.toolset import AbstractToolset
from toolsets.interop.shapes import Shape


def tool_definitions(toolset: AbstractToolset, shape: Shape | str) -> list[dict[str, Any]]:
    """`tools=` for OpenAI Chat Completions (`openai-chat`), OpenAI Responses (`openai-responses`), Anthropic
    Messages (`anthropic`) or LangChain's `bind_tools` (`langchain`, OpenAI's function format)."""
    shape = Shape(shape)
    definitions = []
    for tool in toolset:
        described = {"name": tool.name, "description": tool.description}
        if shape is Shape.ANTHROPIC:
            definitions.append({**described, "input_schema": tool.input_schema})
        elif shape is Shape.OPENAI_RESPONSES:
            definitions.append({"type": "function", **described, "parameters": tool.input_schema})
        else:
            definitions.append({"type": "function", "function": {**described, "parameters": tool.input_schema}})
    return definitions
