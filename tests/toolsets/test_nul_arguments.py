"""One rule for text in tool arguments, the same on both store backends: a NUL character (U+0000) in any
string argument of any tool is a `validation` error naming that argument, before the tool runs, so
nothing reaches a store (PostgreSQL cannot hold NUL in text; SQLite can)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.people import directory
from tests.support import error_of, gates_off, server_for

pytestmark = pytest.mark.usefixtures("store_backend")  # every test on SQLite, then on PostgreSQL

NEXT_YEAR = dt.date.today().year + 1
EVENT = {
    "title": "Team dinner",
    "start": f"{NEXT_YEAR}-03-09T19:00:00+09:00",
    "end": f"{NEXT_YEAR}-03-09T21:00:00+09:00",
}


def refusal(result: Any) -> tuple[str, str]:
    assert result.is_error, result.content
    error = error_of(result)
    return error["code"], error["reason"]


def named(argument: str, reason: str) -> bool:
    return f": {argument}: must not contain the NUL character" in reason


@pytest.mark.anyio
async def test_nul_in_each_store_bound_argument_is_a_validation_error_naming_it(tmp_path: Path) -> None:
    services = await directory(tmp_path)
    async with Client(server_for(user="alice", services=services, gates=gates_off(tmp_path))) as alice:
        event = (await alice.call_tool("create_event", EVENT)).structured_content
        memory = (await alice.call_tool("save_memory", {"content": "Likes tea"})).structured_content
        assert event is not None and memory is not None
        calls: list[tuple[str, dict[str, Any], str]] = [
            ("save_memory", {"content": "wi\x00fi"}, "content"),
            ("save_memory", {"content": "Likes tea", "tags": ["drinks", "te\x00a"]}, "tags.1"),
            ("create_event", {**EVENT, "title": "Din\x00ner"}, "title"),
            ("create_event", {**EVENT, "description": "\x00"}, "description"),
            ("update_event", {"event_id": event["id"], "title": "B\x00BQ"}, "title"),
            ("update_event", {"event_id": event["id"], "description": "bring\x00food"}, "description"),
            ("update_event", {"event_id": event["id"] + "\x00", "title": "BBQ"}, "event_id"),
            ("get_user_profile", {"user_id": "bo\x00b"}, "user_id"),
            ("forget_memory", {"memory_id": memory["id"] + "\x00"}, "memory_id"),
            ("search_memories", {"query": "te\x00a"}, "query"),
            ("search_users", {"query": "bo\x00b"}, "query"),
            ("search_knowledge_base", {"query": "wi\x00fi"}, "query"),
            ("invite_to_event", {"event_id": event["id"], "invitees": ["bob", "ca\x00rol"]}, "invitees.1"),
        ]
        answers = [(tool, argument, refusal(await alice.call_tool(tool, args))) for tool, args, argument in calls]
        # nothing was written: the event and the memory are as they were, and no memory holds NUL
        after = (await alice.call_tool("get_events", {"start": EVENT["start"]})).structured_content
        found = (await alice.call_tool("search_memories", {"query": "tea"})).structured_content
    wrong = [(tool, argument, answer) for tool, argument, answer in answers
             if answer[0] != "validation" or not named(argument, answer[1])]  # fmt: skip
    assert not wrong, wrong
    assert after is not None and [(e["title"], e["description"]) for e in after["events"]] == [("Team dinner", None)]
    assert found is not None and [hit["record"]["id"] for hit in found["memories"]] == [memory["id"]]


def nul_value(schema: dict[str, Any]) -> Any:
    """A NUL-holding value shaped as the property takes text (a string, or a list of them); None otherwise."""
    options = schema.get("anyOf", [schema])
    for option in options:
        if option.get("type") == "string":
            return "x\x00y"
        if option.get("type") == "array" and option.get("items", {}).get("type") == "string":
            return ["x\x00y"]
    return None


@pytest.mark.anyio
async def test_nul_in_any_string_argument_of_any_tool_is_refused_the_same_way(tmp_path: Path) -> None:
    services = await directory(tmp_path)
    async with Client(server_for(user="alice", services=services)) as alice:
        listed = await alice.list_tools()
        cases = [
            (tool.name, name, value)
            for tool in listed.tools
            for name, schema in tool.input_schema.get("properties", {}).items()
            if (value := nul_value(schema)) is not None
        ]
        answers = [(tool, name, refusal(await alice.call_tool(tool, {name: value}))) for tool, name, value in cases]
    assert len(cases) >= 20  # the sweep reaches the tools' text arguments
    expected = [(tool, name) for tool, name, _ in cases]
    named_right = [(tool, name) for tool, name, (code, reason) in answers
                   if code == "validation" and (named(name, reason) or named(f"{name}.0", reason))]  # fmt: skip
    assert named_right == expected
