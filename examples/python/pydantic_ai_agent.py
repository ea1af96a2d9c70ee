"""truloop-mcp's tools in a pydantic-ai agent, over MCP: the server on stdio as an `MCPToolset`, with a destructive
tool's confirmation answered by the agent's elicitation handler.

    pip install 'pydantic-ai-slim[mcp]'
    .venv/bin/python examples/python/pydantic_ai_agent.py [--server PATH] [--data-dir DIR] [--model MODEL] [--decline]

The server starts with `--demo`, so the knowledge base has documents on a new `--data-dir`. `--model` is any
pydantic-ai model name whose provider package and API key you have (`openai:gpt-5-mini`,
`anthropic:claude-sonnet-4-5`, ...). Without it, a scripted stand-in model plays the agent's turns (search the
documents in Korean, save a memory, forget it), so the example runs offline.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import warnings
from pathlib import Path
from typing import Any

from fastmcp.client.elicitation import ElicitResult
from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

PROMPT = "회의실 예약 규칙을 찾아 주고, 내가 한강 회의실을 좋아한다고 기억했다가 다시 지워 줘."


def truloop_toolset(server: str, data_dir: str | None, accept: bool) -> MCPToolset[Any]:
    async def confirm(message: str, response_type: Any, params: Any, context: Any) -> Any:
        # A destructive tool (forget_memory) asks before it runs: this is where an app shows a dialog.
        print(f"asked: {message} -> {'yes' if accept else 'no'}")
        return {"confirm": True} if accept else ElicitResult(action="decline")

    args = ["--demo", *(["--data-dir", data_dir] if data_dir else [])]
    # pydantic-ai warns that a modern session cannot elicit; truloop-mcp asks through the modern era's
    # input-required results instead, which the client hands to this same handler
    warnings.filterwarnings("ignore", message="`elicitation_handler` will never be called")
    # tool_error_behavior="failed": a refused or cancelled call is shown to the model, which answers from it
    return MCPToolset(StdioTransport(server, args), elicitation_handler=confirm, tool_error_behavior="failed")


def _returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    requests = [message for message in messages if isinstance(message, ModelRequest)]
    return [part for request in requests for part in request.parts if isinstance(part, ToolReturnPart)]


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A stand-in model for running offline: each turn calls the next tool, reading the memory's id from the
    earlier answer, then ends with a plain answer."""
    answers = _returns(messages)
    turn = len(answers)
    if turn == 0:
        call = ToolCallPart("search_knowledge_base", {"query": "회의실 예약"})
    elif turn == 1:
        call = ToolCallPart("save_memory", {"content": "한강 회의실을 좋아한다"})
    elif turn == 2:
        saved = answers[1].content
        memory_id = saved["id"] if isinstance(saved, dict) else json.loads(str(saved))["id"]
        call = ToolCallPart("forget_memory", {"memory_id": memory_id})
    else:
        return ModelResponse(parts=[TextPart(f"Done: {answers[-1].model_response_str()}")])
    return ModelResponse(parts=[call])


async def main(model: Model | str, server: str, data_dir: str | None, accept: bool) -> None:
    agent = Agent(model, toolsets=[truloop_toolset(server, data_dir, accept)])
    result = await agent.run(PROMPT)
    for answer in _returns(result.all_messages()):
        print(f"{answer.tool_name}: {answer.model_response_str()}")
    print(f"agent: {result.output}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default=str(Path(sys.executable).parent / "truloop-mcp"))
    parser.add_argument("--data-dir")
    parser.add_argument("--model", help="a pydantic-ai model name, e.g. openai:gpt-5-mini (default: scripted)")
    parser.add_argument("--decline", action="store_true", help="decline the confirmation instead of accepting it")
    options = parser.parse_args()
    chosen: Model | str = FunctionModel(scripted)
    if options.model:
        from pydantic_ai.models import infer_model

        try:
            chosen = infer_model(options.model)
        except ImportError as missing:  # the provider's package (openai, anthropic, ...)
            parser.exit(2, f"{parser.prog}: --model {options.model}: {missing}\n")
        except Exception as refused:  # an unknown provider, or its API key not in the environment
            parser.exit(2, f"{parser.prog}: --model {options.model}: {refused}\n")
    asyncio.run(main(chosen, options.server, options.data_dir, accept=not options.decline))
