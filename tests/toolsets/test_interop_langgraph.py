"""LangChain tools of a profile inside real LangGraph graphs: ToolNode, create_react_agent, interrupt/resume."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, create_react_agent, tools_condition
from langgraph.types import Command
from pydantic import Field

from server.mcp.wire_forms import to_mcp_tool
from tests.support import services_for
from toolsets.core.context import Caller, DeferredCall
from toolsets.core.errors import ErrorCode, ToolError
from toolsets.interop.langgraph_tools import langchain_tools
from toolsets.profiles import build_profiles

pytestmark = pytest.mark.anyio

ALICE = Caller("alice", timezone="Asia/Seoul")
CONFIRM_ARGS = {"notification_message": "Asking you", "title": "Share", "message": "Share your calendar with Minji?"}


class ScriptedModel(BaseChatModel):
    """A chat model that answers with the messages it was given, in order, and remembers what it saw."""

    script: list[AIMessage]
    seen: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.seen.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self.script.pop(0))])


def tool_node_graph(model: ScriptedModel, tools: list[Any], checkpointer: Any = None) -> Any:
    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=checkpointer)


def tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [message for message in result["messages"] if isinstance(message, ToolMessage)]


async def test_tool_node_answers_several_calls_with_matching_tool_messages(data_dir: Path) -> None:
    model = ScriptedModel(
        script=[
            AIMessage(
                content="",
                tool_calls=[
                    {"name": "get_day_of_week", "args": {"date": "2026-03-10"}, "id": "call_1"},
                    {"name": "get_day_of_week", "args": {"date": "March 10th"}, "id": "call_2"},  # the bad one
                    {"name": "get_current_datetime", "args": {}, "id": "call_3"},
                ],
            ),
            AIMessage(content="It is a Tuesday."),
        ]
    )
    graph = tool_node_graph(model, langchain_tools(services_for(data_dir), ALICE))
    result = await graph.ainvoke({"messages": [HumanMessage("What day is 2026-03-10?")]})

    answers = tool_messages(result)
    assert [m.tool_call_id for m in answers] == ["call_1", "call_2", "call_3"]
    assert [m.status for m in answers] == ["success", "error", "success"]
    assert json.loads(answers[0].content) == {"date": "2026-03-10", "day_of_week": "Tuesday", "iso_weekday": 2}
    assert answers[0].artifact["day_of_week"] == "Tuesday" and answers[0].name == "get_day_of_week"
    assert "YYYY-MM-DD" in answers[1].content and answers[1].artifact["code"] == "validation"
    assert answers[2].artifact["timezone"] == "Asia/Seoul"
    assert result["messages"][-1].content == "It is a Tuesday."
    assert [type(m).__name__ for m in model.seen[1][-3:]] == ["ToolMessage"] * 3  # the model read the replies


async def test_create_react_agent_runs_the_tools(data_dir: Path) -> None:
    model = ScriptedModel(
        script=[
            AIMessage(content="", tool_calls=[{"name": "save_memory", "args": {"content": "Likes jazz"}, "id": "m1"}]),
            AIMessage(content="", tool_calls=[{"name": "search_memories", "args": {"query": "jazz"}, "id": "m2"}]),
            AIMessage(content="Saved."),
        ]
    )
    agent = create_react_agent(model, langchain_tools(services_for(data_dir), ALICE))
    result = await agent.ainvoke({"messages": [HumanMessage("Remember that I like jazz")]})
    answers = tool_messages(result)
    assert [m.status for m in answers] == ["success", "success"]
    assert "Likes jazz" in answers[1].content
    assert result["messages"][-1].content == "Saved."


def test_the_tools_publish_the_mcp_schemas(data_dir: Path) -> None:
    tools = langchain_tools(services_for(data_dir), ALICE)
    member = build_profiles().profile("member")
    assert sorted(tool.name for tool in tools) == sorted(member.names())
    for tool in tools:
        published = to_mcp_tool(member.get(tool.name))  # type: ignore[arg-type]
        assert tool.args_schema == published.input_schema, tool.name
        assert tool.description == published.description
        function = convert_to_openai_tool(tool)["function"]  # what bind_tools sends (LangChain drops titles)
        assert function["name"] == tool.name
        assert set(function["parameters"]["properties"]) == set(published.input_schema["properties"])
    guest = langchain_tools(services_for(data_dir), ALICE, "guest")
    assert {tool.name for tool in guest} == set(build_profiles().profile("guest").names())


async def confirm_round(data_dir: Path, answer: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run a graph that calls confirm_interaction up to its interrupt, then resume it with `answer(request)`."""
    model = ScriptedModel(
        script=[
            AIMessage(content="", tool_calls=[{"name": "confirm_interaction", "args": CONFIRM_ARGS, "id": "call_c1"}]),
            AIMessage(content="Done."),
        ]
    )
    graph = tool_node_graph(model, langchain_tools(services_for(data_dir), ALICE), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t1"}}
    paused = await graph.ainvoke({"messages": [HumanMessage("Share my calendar with Minji")]}, config)
    (pending,) = paused["__interrupt__"]
    request = pending.value
    resumed = await graph.ainvoke(Command(resume=answer(request)), config)
    return request, resumed


async def test_a_deferred_tool_interrupts_with_the_json_rpc_request_and_resumes_with_the_result(data_dir: Path) -> None:
    request, resumed = await confirm_round(
        data_dir, lambda request: {"jsonrpc": "2.0", "id": request["id"], "result": {"confirmed": True}}
    )
    assert request == {
        "jsonrpc": "2.0",
        "id": "call_c1",
        "method": "interaction.confirm",
        "params": {"title": "Share", "message": "Share your calendar with Minji?"},  # no notification_message
    }
    (answer,) = tool_messages(resumed)
    assert answer.tool_call_id == "call_c1" and answer.status == "success"
    assert json.loads(answer.content) == {"confirmed": True}
    assert resumed["messages"][-1].content == "Done."


@pytest.mark.parametrize(
    ("error", "code", "text"),
    [
        ({"code": -32001, "message": "PermissionDenied"}, "permission_denied", "denied confirm_interaction"),
        ({"code": -32002, "message": "UserCanceled"}, "user_canceled", "canceled confirm_interaction"),
        (
            {
                "code": -32010,
                "message": "PermissionRequired",
                "data": {"requiredPermission": "calendar.read", "canPromptAgain": True},
            },
            "permission_required",
            "'calendar.read' permission",
        ),
        ({"code": -32603, "message": "crashed"}, "device_error", "could not run confirm_interaction"),
    ],
)
async def test_resuming_with_a_device_error_reads_as_the_device_route_does(
    data_dir: Path, error: dict[str, Any], code: str, text: str
) -> None:
    _, resumed = await confirm_round(data_dir, lambda request: {"jsonrpc": "2.0", "id": request["id"], "error": error})
    (answer,) = tool_messages(resumed)
    assert answer.status == "error" and answer.artifact["code"] == code
    assert text in answer.content


@pytest.mark.parametrize(
    "answer",
    [
        lambda request: {"jsonrpc": "2.0", "id": "call_someone_else", "result": {"confirmed": True}},
        lambda request: {"confirmed": True},  # a bare result, not a JSON-RPC response
        lambda request: {"jsonrpc": "2.0", "id": request["id"], "result": {"confirmed": "yes"}},  # not a boolean
    ],
    ids=["wrong-id", "not-json-rpc", "malformed-result"],
)
async def test_resuming_with_something_else_is_a_device_error(data_dir: Path, answer: Any) -> None:
    _, resumed = await confirm_round(data_dir, answer)
    (reply,) = tool_messages(resumed)
    assert reply.status == "error" and reply.artifact["code"] == "device_error"


class FakeDevice:
    """A device resolver (as the bridge's DeferredRouter is one): answers, or says there is no route."""

    def __init__(self, connected: bool) -> None:
        self.connected = connected
        self.calls: list[DeferredCall] = []

    async def resolve(self, call: DeferredCall) -> Any:
        self.calls.append(call)
        if not self.connected:
            raise ToolError("no device", code=ErrorCode.NO_ROUTE)
        return {"confirmed": False}


async def test_a_connected_device_answers_without_an_interrupt(data_dir: Path) -> None:
    device = FakeDevice(connected=True)
    model = ScriptedModel(
        script=[
            AIMessage(content="", tool_calls=[{"name": "confirm_interaction", "args": CONFIRM_ARGS, "id": "c"}]),
            AIMessage(content="ok"),
        ]
    )
    graph = tool_node_graph(model, langchain_tools(services_for(data_dir), ALICE, device=device))
    result = await graph.ainvoke({"messages": [HumanMessage("ask")]})
    assert "__interrupt__" not in result
    (answer,) = tool_messages(result)
    assert json.loads(answer.content) == {"confirmed": False}
    assert device.calls[0].notification_message == "Asking you"


async def test_without_a_device_the_graph_is_interrupted(data_dir: Path) -> None:
    device = FakeDevice(connected=False)
    model = ScriptedModel(
        script=[AIMessage(content="", tool_calls=[{"name": "confirm_interaction", "args": CONFIRM_ARGS, "id": "c"}])]
    )
    graph = tool_node_graph(
        model, langchain_tools(services_for(data_dir), ALICE, device=device), checkpointer=InMemorySaver()
    )
    paused = await graph.ainvoke({"messages": [HumanMessage("ask")]}, {"configurable": {"thread_id": "x"}})
    assert paused["__interrupt__"][0].value["method"] == "interaction.confirm"
    assert len(device.calls) == 1


async def test_outside_a_graph_a_tool_answers_directly_and_a_deferred_one_says_no_route(data_dir: Path) -> None:
    tools = {tool.name: tool for tool in langchain_tools(services_for(data_dir), ALICE)}
    assert json.loads(await tools["get_day_of_week"].ainvoke({"date": "2026-03-10"}))["day_of_week"] == "Tuesday"
    message = await tools["confirm_interaction"].ainvoke(
        {"type": "tool_call", "id": "z", "name": "confirm_interaction", "args": CONFIRM_ARGS}
    )
    assert isinstance(message, ToolMessage) and message.status == "error"
    assert message.artifact["code"] == "no_route" and "LangGraph graph with a checkpointer" in message.content
    sync = tools["get_day_of_week"].invoke({"type": "tool_call", "id": "s", "name": "get_day_of_week", "args": {}})
    assert sync.status == "success" and sync.tool_call_id == "s"


def test_a_synchronous_graph_runs_the_tools_and_the_interrupt_round(data_dir: Path) -> None:
    model = ScriptedModel(
        script=[
            AIMessage(
                content="",
                tool_calls=[
                    {"name": "get_day_of_week", "args": {"date": "2026-03-10"}, "id": "call_d"},
                    {"name": "confirm_interaction", "args": CONFIRM_ARGS, "id": "call_c"},
                ],
            ),
            AIMessage(content="Done."),
        ]
    )
    graph = tool_node_graph(model, langchain_tools(services_for(data_dir), ALICE), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "sync"}}
    paused = graph.invoke({"messages": [HumanMessage("go")]}, config)
    request = paused["__interrupt__"][0].value
    assert request["id"] == "call_c" and request["method"] == "interaction.confirm"
    resumed = graph.invoke(Command(resume={"jsonrpc": "2.0", "id": "call_c", "result": {"confirmed": True}}), config)
    answers = {m.tool_call_id: m for m in tool_messages(resumed)}
    assert answers["call_d"].status == "success" and answers["call_c"].status == "success"
    assert json.loads(answers["call_c"].content) == {"confirmed": True}
    assert resumed["messages"][-1].content == "Done."
