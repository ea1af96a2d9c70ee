"""truloop's tools in a LangGraph agent, in-process (no MCP server): LangChain's `create_agent` over the member
profile, with a destructive tool's confirmation asked through `interrupt()` and answered on resume.

    pip install -e '.[langgraph]'
    .venv/bin/python examples/python/langgraph_agent.py [--data-dir DIR] [--model openai:gpt-4.1-mini] [--decline]

`--model` is any `init_chat_model` name whose provider package is installed (langchain-openai,
langchain-anthropic, ...; with its API key in the environment). Without `--model` a scripted stand-in model
plays the agent's turns (save a memory, look it up, forget it), so the example runs offline.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from toolsets.assembly import assemble
from toolsets.core.context import Caller
from toolsets.interop.langgraph_tools import langchain_tools
from toolsets.services import Services

DEFAULT_DATA = Path.home() / ".local/share/truloop"  # the store truloop-mcp uses (--data-dir)


def build_agent(model: BaseChatModel | str, data_dir: Path, user: str = "alice") -> Any:
    door = assemble(Services.at(data_dir))  # the profiles, the pipeline and the built-in gates, in this process
    tools = langchain_tools(door, Caller(user, timezone="Asia/Seoul"), "member")
    # A checkpointer is needed: a confirmation pauses the graph, and resuming it continues the same thread.
    return create_agent(model, tools, checkpointer=InMemorySaver())


async def run(agent: Any, prompt: str, thread_id: str, confirm: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """One user turn, answering every interrupt: a destructive tool's confirmation with `confirm(request)`,
    a deferred tool (one that runs on the user's device) with what a device would answer."""
    config = {"configurable": {"thread_id": thread_id}}
    state = await agent.ainvoke({"messages": [HumanMessage(prompt)]}, config)
    while "__interrupt__" in state:
        request = state["__interrupt__"][0].value
        if request.get("type") == "confirmation":  # {"type", "tool", "arguments", "message"}
            answer: Any = confirm(request)
        else:  # a JSON-RPC request for the device; resume with its JSON-RPC response
            answer = {"jsonrpc": "2.0", "id": request["id"], "result": {"confirmed": True}}
        state = await agent.ainvoke(Command(resume=answer), config)
    return state


class ScriptedModel(BaseChatModel):
    """A stand-in chat model for running offline: each turn calls the next scripted tool, reading earlier tool
    answers where it needs them (the memory's id), then ends with a plain answer."""

    @property
    def _llm_type(self) -> str:
        return "truloop-scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **_: Any) -> ChatResult:
        answers = [message for message in messages if isinstance(message, ToolMessage)]
        turn = len(answers)
        if turn == 0:
            call = {"name": "save_memory", "args": {"content": "Prefers window seats on trains"}}
        elif turn == 1:
            call = {"name": "search_memories", "args": {"query": "window seats"}}
        elif turn == 2:
            memory_id = answers[0].artifact["id"]
            call = {"name": "forget_memory", "args": {"memory_id": memory_id}}
        else:
            reply = AIMessage(content=f"Done: {answers[-1].content}")
            return ChatResult(generations=[ChatGeneration(message=reply)])
        message = AIMessage(content="", tool_calls=[{**call, "id": f"call_{turn}"}])
        return ChatResult(generations=[ChatGeneration(message=message)])


async def main(model: BaseChatModel | str, data_dir: Path, accept: bool) -> None:
    agent = build_agent(model, data_dir)

    def confirm(request: dict[str, Any]) -> bool:
        print(f"asked: {request['message']} -> {'yes' if accept else 'no'}")
        return accept

    state = await run(agent, "Remember that I like window seats, check it, then forget it.", "alice-1", confirm)
    for message in state["messages"]:
        if isinstance(message, ToolMessage):
            print(f"{message.name}: {message.status}: {message.content}")
    print(f"agent: {state['messages'][-1].content}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--model", help="an init_chat_model name, e.g. openai:gpt-4.1-mini (default: scripted)")
    parser.add_argument("--decline", action="store_true", help="decline the confirmation instead of accepting it")
    options = parser.parse_args()
    if options.model:
        from langchain.chat_models import init_chat_model

        try:
            chosen: BaseChatModel | str = init_chat_model(options.model)
        except ImportError as missing:  # the provider's package (langchain-openai, langchain-anthropic, ...)
            parser.exit(2, f"{parser.prog}: --model {options.model}: {missing}\n")
        except ValueError as unknown:  # a provider langchain does not know
            parser.exit(2, f"{parser.prog}: --model {options.model}: {unknown}\n")
    else:
        chosen = ScriptedModel()
    asyncio.run(main(chosen, options.data_dir, accept=not options.decline))
