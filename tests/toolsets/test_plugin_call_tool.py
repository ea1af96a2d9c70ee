"""`context.call_tool`: a plugin's way back to the assistant goes through the front door as the same caller.

In every isolation mode (in the server's process, a worker process, the sandbox): the caller's profile decides
what can be called (a guest's plugin cannot reach a member tool), the gates apply, a destructive tool is
confirmed with the user (declined: cancelled), each nested call is an audit line marked `nested`, calls inside
calls stop at the depth limit, and sync and async plugins alike get results and `ToolCallError`s as JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.plugin_files import plugin_source, serving
from tests.support import answering, eventually

pytestmark = pytest.mark.anyio
ISOLATIONS = ["inprocess", "process", "sandbox"]
GATES = 'builtin = true\n\n[[gate]]\nkind = "requires"\ntool = "save_memory"\nafter = ["search_memories"]\n'
STEPS_SCHEMA = {
    "type": "object",
    "properties": {"steps": {"type": "array", "items": {"type": "object"}}},
    "required": ["steps"],
}
RELAY = """
def run(input_data, context):
    out = []
    for step in input_data["steps"]:
        try:
            out.append({"ok": context.call_tool(step["name"], step.get("arguments", {}))})
        except Exception as exc:
            out.append({"error": getattr(exc, "code", type(exc).__name__), "type": type(exc).__name__})
    return {"steps": out}
"""
ASYNC_RELAY = """
async def run(input_data, context):
    out = []
    for step in input_data["steps"]:
        try:
            out.append({"ok": await context.call_tool(step["name"], step.get("arguments", {}))})
        except Exception as exc:
            out.append({"error": getattr(exc, "code", type(exc).__name__), "type": type(exc).__name__})
    return {"steps": out}
"""
RECURSE = """
def run(input_data, context):
    depth = input_data.get("depth", 0)
    try:
        inner = context.call_tool("recurse", {"depth": depth + 1})
    except Exception as exc:
        return {"deepest": depth, "stopped": getattr(exc, "code", "")}
    return inner
"""


def relay_file(tools: Path, name: str = "relay", body: str = RELAY, **spec: Any) -> None:
    (tools / f"{name}.py").write_text(plugin_source(name, body, input_schema=STEPS_SCHEMA, **spec))


async def steps_of(client: Client, steps: list[dict[str, Any]], tool: str = "relay") -> list[dict[str, Any]]:
    result = await client.call_tool(tool, {"steps": steps})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return list(result.structured_content["steps"])


def audit_lines(data: Path) -> list[dict[str, Any]]:
    path = data / "audit" / "tool-calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.timeout(60)
@pytest.mark.parametrize("isolation", ISOLATIONS)
async def test_gates_and_audit_apply_to_nested_calls(isolation: str, tmp_path: Path, tools: Path, data: Path) -> None:
    gates = tmp_path / "gates.toml"
    gates.write_text(GATES)
    relay_file(tools)
    async with serving(tools, data, plugin_isolation=isolation, gates=gates) as server, Client(server) as c:
        save = {"name": "save_memory", "arguments": {"content": "민지는 캘린더 관리자"}}
        search = {"name": "search_memories", "arguments": {"query": "민지"}}
        first = await steps_of(c, [save])
        assert first[0]["error"] == "precondition", first
        then = await steps_of(c, [search, save])
        assert "ok" in then[0] and "ok" in then[1], then
        assert then[1]["ok"]["content"] == "민지는 캘린더 관리자"

    def nested_saves() -> bool:  # the audit log is written by a thread of its own: soon, not at once
        return any(line.get("nested") and line.get("tool_name") == "save_memory" for line in audit_lines(data))

    await eventually(nested_saves)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("isolation", ISOLATIONS)
@pytest.mark.parametrize("body", [RELAY, ASYNC_RELAY], ids=["sync", "async"])
async def test_a_destructive_nested_call_is_confirmed_with_the_user(
    isolation: str, body: str, tools: Path, data: Path
) -> None:
    relay_file(tools, body=body)
    asked: list[str] = []
    async with (
        serving(tools, data, plugin_isolation=isolation) as server,
        Client(server, mode="legacy", elicitation_callback=answering("decline", seen=asked)) as c,
    ):
        saved = await steps_of(c, [{"name": "save_memory", "arguments": {"content": "to forget"}}])
        memory_id = saved[0]["ok"]["id"]
        forget = {"name": "forget_memory", "arguments": {"memory_id": memory_id}}
        declined = await steps_of(c, [forget])
        assert declined[0] == {"error": "cancelled", "type": "ToolCallError"}, declined
        assert asked, "the user was asked"
        unknown = await steps_of(c, [{"name": "no_such_tool", "arguments": {}}])
        assert unknown[0]["error"] == "unknown_tool"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("isolation", ISOLATIONS)
async def test_a_guests_plugin_reaches_only_what_the_guest_can(isolation: str, tools: Path, data: Path) -> None:
    relay_file(tools, profiles=["guest"])
    overrides = {"plugin_isolation": isolation, "profile": "guest", "user": "hana"}
    async with serving(tools, data, **overrides) as server, Client(server) as c:
        names = {tool.name for tool in (await c.list_tools()).tools}
        assert "relay" in names and "search_memories" not in names
        steps = await steps_of(c, [{"name": "search_memories", "arguments": {"query": "x"}}])
        assert steps[0]["error"] == "unknown_tool", steps


@pytest.mark.timeout(60)
@pytest.mark.parametrize("isolation", ["inprocess", "sandbox"])
async def test_calls_inside_calls_stop_at_the_depth_limit(isolation: str, tools: Path, data: Path) -> None:
    (tools / "recurse.py").write_text(plugin_source("recurse", RECURSE, timeout_s=30))
    async with serving(tools, data, plugin_isolation=isolation) as server, Client(server) as c:
        result = await c.call_tool("recurse", {})
        assert result.structured_content == {"deepest": 3, "stopped": "forbidden"}, result.content
