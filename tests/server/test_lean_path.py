"""The lean path (server/speed/lean_path.py) answers exactly what the SDK's own path answers, and only where it may."""

from __future__ import annotations

import json
from typing import Any

import mcp.types as types
import pytest
from mcp import Client
from mcp_types.methods import serialize_server_result
from pydantic import BaseModel

from server.mcp.call_route import plain_call
from server.mcp.wire_forms import call_result as to_wire_result
from server.mcp.wire_forms import to_mcp_result
from server.speed.lean_path import LeanPath
from tests.support import FAST_AND_PLAIN, MODES, paths_env, server_for, stdio_server_process
from toolsets.core.envelope import ToolCancelled, ToolErr, ToolOk
from toolsets.core.errors import ErrorCode

HANDSHAKE_VERSIONS = ("2025-06-18", "2025-11-25")


class Found(BaseModel):
    name: str
    score: float
    tags: list[str]
    note: str | None = None


OUTCOMES = {
    "ok": ToolOk(Found(name='김민지 "민지" <tag>', score=1.5, tags=["친구", "\u2028"])),
    "ok_none": ToolOk(Found(name="Mina", score=0, tags=[])),
    "error": ToolErr(ErrorCode.VALIDATION, "date: 2026-02-30 is not a date. Use YYYY-MM-DD."),
    "retryable": ToolErr(ErrorCode.UPSTREAM_UNAVAILABLE, "Places did not answer.", retryable=True),
    "cancelled": ToolCancelled("사용자가 취소했습니다"),
}


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
@pytest.mark.parametrize("outcome", OUTCOMES.values(), ids=OUTCOMES.keys())
def test_wire_result_is_what_the_sdk_serializes(outcome: Any, version: str) -> None:
    sdk = serialize_server_result(
        "tools/call", version, to_mcp_result(outcome).model_dump(by_alias=True, mode="json", exclude_none=True)
    )
    assert to_wire_result(outcome) == sdk


@pytest.mark.parametrize(
    ("params", "plain"),
    [
        ({"name": "t", "arguments": {"a": 1}}, ("t", {"a": 1})),
        ({"name": "t"}, ("t", {})),
        ({"name": "t", "arguments": None}, ("t", {})),
        ({"name": "t", "arguments": {}, "_meta": {"progressToken": 7}}, ("t", {})),
        ({"name": "t", "_meta": {"progressToken": "p"}}, ("t", {})),
        ({"name": "t", "_meta": {}}, ("t", {})),
        # everything else is the SDK's to check (and to refuse, if it must)
        (None, None),
        ([], None),
        ({}, None),
        ({"name": 3}, None),
        ({"name": "t", "arguments": []}, None),
        ({"name": "t", "arguments": "x"}, None),
        ({"name": "t", "task": {"ttl": 1}}, None),
        ({"name": "t", "_meta": None}, None),
        ({"name": "t", "_meta": {"progressToken": True}}, None),
        ({"name": "t", "_meta": {"progressToken": 1.5}}, None),
        ({"name": "t", "_meta": {"traceparent": "00-ab-cd-01", "progressToken": 2}}, ("t", {})),
        ({"name": "t", "_meta": []}, None),
    ],
)
def test_plain_call(params: Any, plain: Any) -> None:
    assert plain_call(params, progress=True) == plain


@pytest.mark.parametrize("meta", [{"progressToken": 7}, {"progressToken": "p"}, {"progressToken": None}])
def test_a_progress_token_is_plain_only_where_progress_is_reported(meta: dict[str, Any]) -> None:
    params = {"name": "t", "_meta": meta}
    assert plain_call(params, progress=False) is None
    assert plain_call({"name": "t", "_meta": {"traceparent": "x"}}, progress=False) == ("t", {})


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_day_of_week", {"date": "2026-03-10"}),
    ("get_day_of_week", {"date": "2026-02-30"}),  # validation error
    ("get_day_of_week", {}),
    ("no_such_tool", {}),
    ("get_day_of_week", {"date": "2026년 3월 10일"}),  # Korean text in the refusal
]


async def answers(client: Client) -> tuple[Any, list[Any]]:
    listed = [tool.model_dump(by_alias=True, exclude_none=True) for tool in (await client.list_tools()).tools]
    called = []
    for name, arguments in CALLS:
        result = await client.call_tool(name, arguments)
        called.append(result.model_dump(by_alias=True, exclude_none=True))
    progressed = await client.session.call_tool("get_day_of_week", {"date": "2026-03-11"}, progress_callback=noop)
    called.append(progressed.model_dump(by_alias=True, exclude_none=True))
    return listed, called


async def noop(progress: float, total: float | None, message: str | None) -> None:
    return None


@pytest.mark.anyio
@MODES
async def test_lean_and_sdk_paths_answer_alike(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    lean = server_for("member")
    (path,) = [m for m in lean.middleware if isinstance(m, LeanPath)]
    taken: list[str] = []
    real_call, real_list = path.tools_call, path.tools_list

    async def counted_call(request: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        taken.append("call")
        return await real_call(request, name, arguments)

    async def counted_list(request: Any, call_next: Any) -> dict[str, Any]:
        taken.append("list")
        return await real_list(request, call_next)

    monkeypatch.setattr(path, "tools_call", counted_call)
    monkeypatch.setattr(path, "tools_list", counted_list)
    async with Client(lean, mode=mode) as client:
        lean_answers = await answers(client)
        again = [tool.model_dump(by_alias=True, exclude_none=True) for tool in (await client.list_tools()).tools]
    plain = server_for("member", fast_paths=False)
    assert not any(isinstance(m, LeanPath) for m in plain.middleware)
    async with Client(plain, mode=mode) as client:
        sdk_answers = await answers(client)

    assert lean_answers == sdk_answers
    assert again == lean_answers[0]  # the kept answer
    assert lean_answers[1][0]["structuredContent"]["day_of_week"] == "Tuesday"
    assert taken.count("list") == 2
    assert taken.count("call") == (len(CALLS) + 1 if mode == "legacy" else 0)  # 2026-07-28 calls: the SDK's path


@FAST_AND_PLAIN
def test_nothing_is_answered_before_initialize(tmp_path: Any, fast_paths: bool) -> None:
    """The SDK's handshake gate still refuses a call or a list sent before `initialize`."""
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_day_of_week", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    with stdio_server_process("--data-dir", str(tmp_path), env=paths_env(fast_paths)) as proc:
        out, _ = proc.communicate("".join(json.dumps(line) + "\n" for line in lines).encode(), timeout=60)
    replies = {reply["id"]: reply for reply in map(json.loads, out.decode().splitlines())}
    assert set(replies) == {1, 2}
    for reply in replies.values():
        assert "result" not in reply
        assert reply["error"]["code"] == types.INVALID_PARAMS


@FAST_AND_PLAIN
@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_progress_token_and_fallback_over_stdio(tmp_path: Any, version: str, fast_paths: bool) -> None:
    """A plain call with a progress token and a call with a field the lean path leaves to the SDK both answer."""
    hello = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    day = {"date": "2026-03-10"}
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"name": "get_day_of_week", "arguments": day, "_meta": {"progressToken": "p1"}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "get_day_of_week", "arguments": day, "task": None}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_day_of_week", "arguments": [1]}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "get_day_of_week", "arguments": day, "_meta": {"progressToken": 1.5}}},
    ]  # fmt: skip
    with stdio_server_process("--data-dir", str(tmp_path), env=paths_env(fast_paths)) as proc:
        out, _ = proc.communicate("".join(json.dumps(line) + "\n" for line in lines).encode(), timeout=60)
    replies = {reply["id"]: reply for reply in map(json.loads, out.decode().splitlines()) if "id" in reply}
    assert replies[1]["result"] == replies[2]["result"]
    assert replies[1]["result"]["structuredContent"]["day_of_week"] == "Tuesday"
    for refused in (3, 4):  # the SDK's refusals: arguments not an object, a progress token not a string or integer
        assert replies[refused]["error"]["code"] == types.INVALID_PARAMS
