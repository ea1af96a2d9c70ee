"""The interop runner: each framework's call shape in, the matching reply shape out, through `dispatch`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import anyio
import pytest
from pydantic import BaseModel, Field

from tests.support import services_for
from toolsets.core.annotations import ToolHints
from toolsets.core.context import Caller, ConfirmPolicy, ToolContext
from toolsets.core.conversation import MemoryConversations
from toolsets.core.toolset import Toolset
from toolsets.extensions.exposure.policy import ToolExposure
from toolsets.front_door import FrontDoor
from toolsets.interop import InteropRunner, runner_for
from toolsets.interop.shapes import ParsedCall
from toolsets.pipeline.gates.spec import GateSet
from toolsets.profiles import Profiles

pytestmark = pytest.mark.anyio

TUESDAY = {"date": "2026-03-10", "day_of_week": "Tuesday", "iso_weekday": 2}
TUESDAY_TEXT = json.dumps(TUESDAY, separators=(",", ":"))
ARGS = '{"date":"2026-03-10"}'  # as OpenAI sends them: JSON text


def runner(data_dir: Path, **options: Any) -> InteropRunner:
    return runner_for(services_for(data_dir), Caller("alice", timezone="Asia/Seoul"), "member", **options)


# (call as the framework emits it, the reply expected; "ID" stands for an id the runner made up)
SHAPES = [
    pytest.param(
        {"type": "tool_call", "id": "lc1", "name": "get_day_of_week", "args": {"date": "2026-03-10"}},
        {
            "type": "tool",
            "role": "tool",
            "content": TUESDAY_TEXT,
            "name": "get_day_of_week",
            "tool_call_id": "lc1",
            "status": "success",
            "artifact": TUESDAY,
        },
        id="langchain",
    ),
    pytest.param(
        {"name": "get_day_of_week", "args": '{"date": "2026-03-10"}'},  # no type, no id, arguments as text
        {
            "type": "tool",
            "role": "tool",
            "content": TUESDAY_TEXT,
            "name": "get_day_of_week",
            "tool_call_id": "ID",
            "status": "success",
            "artifact": TUESDAY,
        },
        id="langchain-no-id-string-args",
    ),
    pytest.param(
        {
            "id": "oa1",
            "type": "function",
            "function": {"name": "get_day_of_week", "arguments": ARGS},
        },
        {"role": "tool", "tool_call_id": "oa1", "content": TUESDAY_TEXT},
        id="openai-chat",
    ),
    pytest.param(
        {"type": "function", "function": {"name": "get_day_of_week", "arguments": {"date": "2026-03-10"}}},
        {"role": "tool", "tool_call_id": "ID", "content": TUESDAY_TEXT},
        id="openai-chat-no-id-object-args",
    ),
    pytest.param(
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "r1",
            "name": "get_day_of_week",
            "arguments": ARGS,
        },
        {"type": "function_call_output", "call_id": "r1", "output": TUESDAY_TEXT},
        id="openai-responses",
    ),
    pytest.param(
        {"type": "function_call", "name": "get_day_of_week", "arguments": {"date": "2026-03-10"}},
        {"type": "function_call_output", "call_id": "ID", "output": TUESDAY_TEXT},
        id="openai-responses-no-id-object-args",
    ),
    pytest.param(
        {"type": "tool_use", "id": "toolu_1", "name": "get_day_of_week", "input": {"date": "2026-03-10"}},
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": TUESDAY_TEXT, "is_error": False},
        id="anthropic",
    ),
    pytest.param(
        {"type": "tool_use", "name": "get_day_of_week", "input": ARGS},
        {"type": "tool_result", "tool_use_id": "ID", "content": TUESDAY_TEXT, "is_error": False},
        id="anthropic-no-id-string-input",
    ),
]


@pytest.mark.parametrize(("call", "expected"), SHAPES)
async def test_each_shape_gets_its_reply_shape(data_dir: Path, call: dict[str, Any], expected: dict[str, Any]) -> None:
    got = await runner(data_dir).reply(call)
    id_key = next(key for key in ("tool_call_id", "call_id", "tool_use_id") if key in expected)
    if expected[id_key] == "ID":
        made_up = got[id_key]
        assert isinstance(made_up, str) and len(made_up) > 10
        assert made_up.startswith("toolu_" if call.get("type") == "tool_use" else "call_")
        expected = {**expected, id_key: made_up}
    assert got == expected


FAILURES = [
    pytest.param("tool_call", "unknown_tool", "Unknown tool 'no_such_tool'", id="unknown-tool"),
    pytest.param("bad_json", "validation", "not valid JSON", id="bad-json-arguments"),
    pytest.param("bad_value", "validation", "YYYY-MM-DD", id="validation"),
    pytest.param("not_object", "validation", "must be a JSON object", id="arguments-not-an-object"),
]


def _failing(kind: str, shape: str) -> dict[str, Any]:
    name, arguments = {
        "tool_call": ("no_such_tool", "{}"),
        "bad_json": ("get_day_of_week", '{"date": "2026-03-10"'),
        "bad_value": ("get_day_of_week", '{"date": "10 March"}'),
        "not_object": ("get_day_of_week", "[1, 2]"),
    }[kind]
    if shape == "langchain":
        return {"type": "tool_call", "id": "x1", "name": name, "args": arguments}
    if shape == "openai-chat":
        return {"id": "x1", "type": "function", "function": {"name": name, "arguments": arguments}}
    if shape == "openai-responses":
        return {"type": "function_call", "call_id": "x1", "name": name, "arguments": arguments}
    return {"type": "tool_use", "id": "x1", "name": name, "input": arguments}


@pytest.mark.parametrize("shape", ["langchain", "openai-chat", "openai-responses", "anthropic"])
@pytest.mark.parametrize(("kind", "code", "text"), FAILURES)
async def test_every_failure_is_a_reply_with_the_dispatchers_text(
    data_dir: Path, shape: str, kind: str, code: str, text: str
) -> None:
    got = await runner(data_dir).reply(_failing(kind, shape))
    if shape == "langchain":
        assert got["status"] == "error" and got["tool_call_id"] == "x1"
        assert text in got["content"]
        assert got["artifact"]["code"] == code and got["artifact"]["status"] == "error"
    elif shape == "openai-chat":
        assert got["tool_call_id"] == "x1" and text in got["content"]
    elif shape == "openai-responses":
        assert got["call_id"] == "x1" and text in got["output"]
    else:
        assert got["tool_use_id"] == "x1" and got["is_error"] is True and text in got["content"]


async def test_an_ai_message_gets_its_replies_in_the_calls_order(data_dir: Path) -> None:
    message = {
        "type": "ai",
        "content": "",
        "tool_calls": [
            {"type": "tool_call", "id": "a", "name": "get_day_of_week", "args": {"date": "2026-03-10"}},
            {"type": "tool_call", "id": "b", "name": "get_day_of_week", "args": {"date": "bad"}},
            {"type": "tool_call", "id": "c", "name": "get_current_datetime", "args": {"timezone": "Europe/Paris"}},
        ],
        "invalid_tool_calls": [
            {"type": "invalid_tool_call", "id": "d", "name": "get_day_of_week", "args": '{"date": ', "error": "bad"}
        ],
    }
    replies = await runner(data_dir).reply(message)
    assert [reply["tool_call_id"] for reply in replies] == ["a", "b", "c", "d"]
    assert [reply["status"] for reply in replies] == ["success", "error", "success", "error"]
    assert replies[2]["artifact"]["timezone"] == "Europe/Paris"
    assert "not valid JSON" in replies[3]["content"]


async def test_an_openai_assistant_message_and_completion(data_dir: Path) -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "o1",
                "type": "function",
                "function": {"name": "get_day_of_week", "arguments": ARGS},
            },
            {"id": "o2", "type": "function", "function": {"name": "nope", "arguments": "{}"}},
        ],
    }
    replies = await runner(data_dir).reply(message)
    assert [reply["tool_call_id"] for reply in replies] == ["o1", "o2"]
    assert replies[0]["content"] == TUESDAY_TEXT and "Unknown tool 'nope'" in replies[1]["content"]
    completion = {"object": "chat.completion", "choices": [{"index": 0, "message": message}]}
    assert await runner(data_dir).reply(completion) == replies


async def test_a_responses_response_skips_what_is_not_a_call(data_dir: Path) -> None:
    response = {
        "object": "response",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "call_id": "r1", "name": "get_day_of_week", "arguments": ARGS},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "checking"}]},
        ],
    }
    assert await runner(data_dir).reply(response) == [
        {"type": "function_call_output", "call_id": "r1", "output": TUESDAY_TEXT}
    ]


async def test_an_anthropic_message_gets_a_user_message_of_tool_results(data_dir: Path) -> None:
    message = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "t1", "name": "get_day_of_week", "input": {"date": "2026-03-10"}},
            {"type": "tool_use", "id": "t2", "name": "get_day_of_week", "input": {}},
        ],
    }
    got = await runner(data_dir).reply(message)
    assert got["role"] == "user"
    assert [block["tool_use_id"] for block in got["content"]] == ["t1", "t2"]
    assert got["content"][0] == {"type": "tool_result", "tool_use_id": "t1", "content": TUESDAY_TEXT, "is_error": False}
    assert got["content"][1]["is_error"] is False and "day_of_week" in got["content"][1]["content"]


async def test_a_list_of_mixed_shapes_and_things_that_are_no_calls(data_dir: Path) -> None:
    replies = await runner(data_dir).reply(
        [
            {"type": "tool_use", "id": "t1", "name": "get_day_of_week", "input": {"date": "2026-03-10"}},
            42,
            {"type": "function_call", "call_id": "r1", "name": "get_day_of_week", "arguments": ARGS},
            {"hello": "world"},
        ]
    )
    assert replies[0]["tool_use_id"] == "t1" and replies[2]["call_id"] == "r1"
    assert replies[1]["error"]["code"] == "not_a_tool_call" and "a number" in replies[1]["error"]["message"]
    assert replies[3]["error"]["code"] == "not_a_tool_call"
    single = await runner(data_dir).reply({"hello": "world"})
    assert single["error"]["code"] == "not_a_tool_call" and "tool_use" in single["error"]["message"]


async def test_confirmation_follows_the_confirm_policy(data_dir: Path) -> None:
    services = services_for(data_dir)
    save = {"type": "tool_call", "id": "s", "name": "save_memory", "args": {"content": "Bring the blue folder"}}
    saved = await runner_for(services, "alice").reply(save)
    memory_id = saved["artifact"]["id"]
    forget = {"type": "tool_use", "id": "f", "name": "forget_memory", "input": {"memory_id": memory_id}}
    strict = await runner_for(services, "alice", confirm_policy=ConfirmPolicy.STRICT).reply(forget)
    assert (
        strict["is_error"] is True
        and strict["content"].startswith("Cancelled:")
        and "--confirm strict" in strict["content"]
    )
    auto = await runner_for(services, "alice").reply(forget)  # the calling framework is the host that approved
    assert auto["is_error"] is False, auto


async def test_deferred_tools_without_a_route_reply_no_route(data_dir: Path) -> None:
    call = {
        "type": "tool_call",
        "id": "p",
        "name": "get_permission_status",
        "args": {"notification_message": "Checking", "permission": "calendar.read"},
    }
    got = await runner(data_dir).reply(call)
    assert got["status"] == "error" and got["artifact"]["code"] == "no_route"
    assert "get_permission_status runs on the user's device" in got["content"]


async def test_the_profile_decides_what_can_be_called(data_dir: Path) -> None:
    services = services_for(data_dir)
    call = {"type": "tool_call", "id": "e", "name": "get_events", "args": {}}
    assert (await runner_for(services, "alice", "member").reply(call))["status"] == "success"
    refused = await runner_for(services, "alice", "notification-safe").reply(call)
    assert refused["artifact"]["code"] == "unknown_tool"


class Done(BaseModel):
    which: str = Field(description="which call")


async def test_the_calls_of_one_message_run_concurrently_and_replies_keep_their_order() -> None:
    toolset = Toolset("test")
    released = anyio.Event()

    @toolset.tool(hints=ToolHints())
    async def wait_for_release(which: Annotated[str, Field(description="label")]) -> Done:
        """Waits until release() ran."""
        await released.wait()
        return Done(which=which)

    @toolset.tool(hints=ToolHints())
    async def release(which: Annotated[str, Field(description="label")]) -> Done:
        """Lets wait_for_release finish."""
        released.set()
        return Done(which=which)

    door = FrontDoor(
        Profiles({"test": toolset}), None, exposure=ToolExposure("full", GateSet()), conversations=MemoryConversations()
    )

    def context(call: ParsedCall, conversation: str | None, deferred: Any) -> ToolContext[Any]:
        return door.context_for(Caller("alice"), "test")

    calls = [
        {"type": "tool_call", "id": "1", "name": "wait_for_release", "args": {"which": "first"}},
        {"type": "tool_call", "id": "2", "name": "release", "args": {"which": "second"}},
    ]
    with anyio.fail_after(5):  # run one after the other, the first call would wait for ever
        replies = await InteropRunner(door, "test", context).reply(calls)
    assert [reply["artifact"]["which"] for reply in replies] == ["first", "second"]


def test_the_runner_imports_neither_mcp_nor_langchain() -> None:
    code = (
        "import sys, toolsets.interop, toolsets.interop.runner; "
        "banned = ('mcp', 'langchain_core', 'langgraph', 'server', 'bridge'); "
        "bad = [m for m in sys.modules if m.split('.')[0] in banned]; "
        "print(bad); raise SystemExit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("shape", ["openai-chat", "openai-responses", "anthropic", "langchain"])
def test_tool_definitions_carry_the_published_schemas(shape: str) -> None:
    from toolsets.interop import tool_definitions
    from toolsets.profiles import build_profiles

    member = build_profiles().profile("member")
    definitions = tool_definitions(member, shape)
    assert len(definitions) == len(member)
    day = next(d for d in definitions if (d.get("function") or d)["name"] == "get_day_of_week")
    tool = member.get("get_day_of_week")
    assert tool is not None
    schema = {"anthropic": "input_schema"}.get(shape, "parameters")
    assert (day.get("function") or day)[schema] == tool.input_schema
    assert (day.get("function") or day)["description"] == tool.description
