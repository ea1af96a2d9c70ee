"""A model composing a relay notification calls tools inside send_message_to_user: those calls keep the
caller's confirmation policy and ports (regression: they used to run destructive tools unconfirmed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp import Client

from tests.people import directory
from tests.support import MODES, answering, server_for

WITH_TOOLS = types.SamplingCapability(tools=types.SamplingToolsCapability())


def composing_model(tool: str, arguments: dict[str, Any], outcomes: list[dict[str, Any]]) -> Any:
    """A composing model that first calls `tool` (inside send_message_to_user), then writes the notification;
    `outcomes` gets the tool's result as the model saw it."""

    async def callback(context: Any, params: types.CreateMessageRequestParams) -> Any:
        last = params.messages[-1].content_as_list
        results = [block for block in last if isinstance(block, types.ToolResultContent)]
        if not results:
            return types.CreateMessageResultWithTools(
                role="assistant", model="test-model", stop_reason="toolUse",
                content=[types.ToolUseContent(type="tool_use", id="t1", name=tool, input=arguments)],
            )  # fmt: skip
        outcomes.append(json.loads(results[0].content[0].text))  # type: ignore[union-attr]
        return types.CreateMessageResult(
            role="assistant", model="test-model", content=types.TextContent(type="text", text="Alice says hi")
        )

    return callback


CASES = [
    # (--confirm, the user's answer or None when the client cannot be asked, forgotten?)
    ("auto", "accept", True),
    ("auto", "decline", False),
    ("auto", None, False),  # the host never saw this call, so its approval cannot stand in
    ("strict", "accept", True),
    ("strict", None, False),
    ("off", None, True),  # the operator turned confirmation off
]


@pytest.mark.anyio
@MODES
@pytest.mark.parametrize(("policy", "answer", "forgotten"), CASES)
async def test_forget_memory_inside_the_composing_model_follows_the_confirm_policy(
    tmp_path: Path, mode: str, policy: str, answer: str | None, forgotten: bool
) -> None:
    services = await directory(tmp_path)
    memory = await services.memories.save("alice", "Bob likes the window seat", [])
    outcomes: list[dict[str, Any]] = []
    asked: list[str] = []
    extra: dict[str, Any] = {}
    if answer is not None:
        extra["elicitation_callback"] = answering(answer, {"confirm": answer == "accept"}, seen=asked)
    client = Client(
        server_for(user="alice", services=services, confirm=policy), mode=mode,
        sampling_callback=composing_model("forget_memory", {"memory_id": memory.id}, outcomes),
        sampling_capabilities=WITH_TOOLS, **extra,
    )  # fmt: skip
    async with client:
        sent = await client.call_tool("send_message_to_user", {"recipient": "bob", "message": "hi"})
    assert not sent.is_error and sent.structured_content is not None, sent.content
    assert sent.structured_content["composed_by"] == "client-model"
    remaining = await services.memories.search("alice", "window seat", 5)
    assert (not remaining) is forgotten, (outcomes, remaining)
    assert len(outcomes) == 1
    if forgotten:
        assert outcomes[0] == {"memory_id": memory.id, "forgotten": True}
    else:
        assert outcomes[0]["status"] == "cancelled"
    if answer is not None and policy != "off":
        assert asked and asked[0].startswith("Forget the memory '")  # the memory by its text


CHECK_LOCATION = {"notification_message": "Checking", "permission": "location"}


@pytest.mark.anyio
@MODES
async def test_device_tools_inside_the_composing_model_reach_the_users_side(tmp_path: Path, mode: str) -> None:
    services = await directory(tmp_path)
    outcomes: list[dict[str, Any]] = []
    client = Client(
        server_for(user="alice", services=services), mode=mode,
        sampling_callback=composing_model("get_permission_status", CHECK_LOCATION, outcomes),
        sampling_capabilities=WITH_TOOLS,
        elicitation_callback=answering("accept", {"status": "granted"}),
    )  # fmt: skip
    async with client:
        sent = await client.call_tool("send_message_to_user", {"recipient": "bob", "message": "hi"})
    assert not sent.is_error, sent.content
    assert outcomes == [{"status": "granted"}]  # answered through the client, not refused with no_route
