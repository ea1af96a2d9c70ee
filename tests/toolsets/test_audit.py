"""The audit log through the pipeline: a tool_call and a tool_result line for every outcome (ok, each
error code, cancelled, input required, deferred by each route), with who and where the call came from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import anyio
import pytest
from mcp import Client
from pydantic import Field

from server.mcp.mcp_server import TruloopMCP
from tests.sample_toolset import CATALOG, Catalog, sample
from tests.support import MODES, answering, answering_device, payload, server_for
from toolsets.core.annotations import READ_ONLY
from toolsets.core.combined import CombinedToolset
from toolsets.core.context import Caller, ConfirmPolicy, RequestInfo, ToolContext
from toolsets.core.dispatch import dispatch
from toolsets.core.errors import ErrorCode, InputRequired, ToolError
from toolsets.core.toolset import AbstractToolset, Toolset
from toolsets.pipeline.audit.record import AuditRecord, Entry
from toolsets.pipeline.audit.writer import AuditLog
from toolsets.profiles import standard_middleware, with_policy

CALENDAR = {"notification_message": "Reading your calendar", "start_date": "2026-03-09T00:00:00+09:00",
            "end_date": "2026-03-15T23:59:59+09:00"}  # fmt: skip
CONFIRM = {"notification_message": "Asking you...", "title": "Share", "message": "Share your calendar?"}

failing = Toolset("failing")


@failing.tool(hints=READ_ONLY)
async def fail_with(code: Annotated[str, Field(description="The error code to raise")]) -> Catalog:
    """Always refuses with the given error code."""
    raise ToolError(f"failing with {code}", code=code)


class Sink:
    """A sink that keeps the entries (the writer is tested on its own in test_audit_writer.py)."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []

    def emit(self, entry: Entry) -> None:
        self.entries.append(entry)

    def results(self) -> list[Entry]:
        return [entry for entry in self.entries if entry["event"] == "tool_result"]


def audited(toolset: Toolset, name: str | None = None) -> tuple[AbstractToolset, Sink]:
    """`toolset` with the policy and an audit middleware configured with a sink of its own."""
    sink = Sink()
    return with_policy(CombinedToolset(name or toolset.name, toolset), standard_middleware(audit=sink)), sink


def context(policy: ConfirmPolicy = ConfirmPolicy.AUTO, **kwargs: Any) -> ToolContext[None]:
    request = RequestInfo(
        request_id="7", session_id="s-1", transport="http", protocol_version="2025-11-25", profile="t"
    )
    return ToolContext(caller=Caller("alice"), deps=None, request=request, confirm_policy=policy, **kwargs)


def lines(server: TruloopMCP) -> list[dict[str, Any]]:
    log = server.services.audit
    assert isinstance(log, AuditLog) and log.path is not None
    assert log.flush(), "the audit writer did not drain"
    return [json.loads(line) for line in log.path.read_text().splitlines()]


def results(server: TruloopMCP, tool: str | None = None) -> list[dict[str, Any]]:
    return [r for r in lines(server) if r["event"] == "tool_result" and tool in (None, r["tool_name"])]


@pytest.mark.anyio
async def test_ok_writes_a_call_line_then_a_result_line_with_every_field() -> None:
    toolset, sink = audited(sample, "test")
    await dispatch(toolset, "search_catalog", {"query": "ap"}, context())
    call, result = sink.entries
    assert call["event"] == "tool_call" and result["event"] == "tool_result"
    assert call["call_id"] == result["call_id"] and call["call_id"].startswith("tc_")
    assert result["status"] == "ok" and result["error_code"] is None and result["latency_ms"] >= 0
    for entry in (call, result):
        assert entry["request_id"] == "7" and entry["session_id"] == "s-1" and entry["transport"] == "http"
        assert entry["protocol_version"] == "2025-11-25" and entry["profile"] == "t"
        assert entry["user_id"] == "alice" and entry["role"] == "member" and entry["tool_name"] == "search_catalog"
        assert entry["tool_version"] == "0.1.0" and entry["route"] == "stable" and entry["nested"] is False
    assert result["deferred_route"] is None  # not a deferred tool


@pytest.mark.anyio
@pytest.mark.parametrize(
    "code", [code for code in ErrorCode if code not in ("unknown_tool", "validation", "cancelled")]
)
async def test_every_error_code_a_tool_raises_is_a_result_line(code: ErrorCode) -> None:
    toolset, sink = audited(failing)
    await dispatch(toolset, "fail_with", {"code": code.value}, context())
    (result,) = sink.results()
    assert result["status"] == "error" and result["error_code"] == code.value


@pytest.mark.anyio
async def test_a_crash_is_handler_error() -> None:
    toolset, sink = audited(sample, "test")
    await dispatch(toolset, "explode", {"reason": "boom"}, context())
    assert sink.results()[0]["error_code"] == "handler_error"


@pytest.mark.anyio
async def test_refusals_before_the_pipeline_are_audited_too() -> None:
    ctx = context()
    toolset, sink = audited(sample, "test")
    await dispatch(toolset, "no_such_tool", {"password": "hunter2"}, ctx)
    await dispatch(toolset, "search_catalog", {"query": ""}, ctx)  # min_length=1
    await dispatch(toolset, "search_catalog", ["not", "an", "object"], ctx)
    entries = sink.entries
    assert [e["event"] for e in entries] == ["tool_call", "tool_result"] * 3
    unknown, empty, listed = sink.results()
    assert unknown["error_code"] == "unknown_tool" and unknown["tool_name"] == "no_such_tool"
    assert empty["error_code"] == "validation" and listed["error_code"] == "validation"
    assert entries[0]["call_id"] == unknown["call_id"]


@pytest.mark.anyio
async def test_cancelled_and_input_required() -> None:
    toolset, sink = audited(sample, "test")
    await dispatch(toolset, "delete_item", {"item_id": "pear"}, context(ConfirmPolicy.STRICT))  # nobody to ask
    (cancelled,) = sink.results()
    assert cancelled["status"] == "cancelled" and cancelled["error_code"] == "cancelled"

    class Later:
        async def confirm(self, request: Any) -> Any:
            raise InputRequired({"ask": request.message})

    toolset, sink = audited(sample, "test")
    await dispatch(toolset, "delete_item", {"item_id": "pear"}, context(confirmer=Later()))
    (pending,) = sink.results()
    assert pending["status"] == "input_required" and pending["error_code"] is None


@pytest.mark.anyio
async def test_a_withdrawn_call_is_cancelled_in_the_log() -> None:
    slow = Toolset("slow")

    @slow.tool(hints=READ_ONLY)
    async def wait_forever() -> Catalog:
        """Never returns."""
        await anyio.sleep_forever()
        raise AssertionError

    toolset, sink = audited(slow)
    with anyio.move_on_after(0.05):
        await dispatch(toolset, "wait_forever", {}, context())
    (result,) = sink.results()
    assert result["status"] == "cancelled" and result["latency_ms"] >= 40


@pytest.mark.anyio
async def test_no_sink_is_a_pass_through() -> None:
    ctx: ToolContext[None] = ToolContext(caller=Caller("alice"), deps=None)
    outcome = await dispatch(CATALOG["test"], "search_catalog", {"query": "ap"}, ctx)
    assert outcome.data.items == ["apple", "apricot"]  # type: ignore[union-attr]


@pytest.mark.anyio
@MODES
async def test_over_mcp_the_line_says_who_and_where(mode: str) -> None:
    server = server_for(user="alice", transport="http")
    async with Client(server, mode=mode) as client:
        result = await client.call_tool("get_day_of_week", {"date": "2026-03-10"})
    assert payload(result)["day_of_week"] == "Tuesday"
    call, done = (r for r in lines(server) if r["tool_name"] == "get_day_of_week")
    for record in (call, done):
        AuditRecord.model_validate(record)  # the published schema of a line
        assert record["user_id"] == "alice" and record["profile"] == "member" and record["transport"] == "http"
        assert record["request_id"] is not None and record["protocol_version"]
        assert record["arguments"] == {"date": "2026-03-10"}
        assert record["ts"].endswith("Z") and "T" in record["ts"]
    assert done["status"] == "ok"


@pytest.mark.anyio
@MODES
async def test_deferred_calls_say_which_route_answered(mode: str, tmp_path: Path) -> None:
    def server_logging_to(name: str) -> TruloopMCP:  # one file per server, as the three share a store
        return server_for(user="alice", transport="http", audit_log=str(tmp_path / name))

    server = server_logging_to("device.jsonl")
    ready = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(answering_device, server, lambda request: {"result": {"events": []}}, [], ready)
        await ready.wait()
        async with Client(server, mode=mode) as client:
            assert not (await client.call_tool("get_calendar_events", CALENDAR)).is_error
        tg.cancel_scope.cancel()
    (device,) = results(server, "get_calendar_events")
    assert device["status"] == "ok" and device["deferred_route"] == "device"

    asked = server_logging_to("asked.jsonl")
    async with Client(asked, mode=mode, elicitation_callback=answering("accept", {"confirmed": True})) as client:
        assert not (await client.call_tool("confirm_interaction", CONFIRM)).is_error
    rounds = results(asked, "confirm_interaction")
    assert {r["deferred_route"] for r in rounds} == {"elicitation"} and rounds[-1]["status"] == "ok"
    if mode == "auto":  # 2026-07-28: the question leaves as an InputRequiredResult, the answer comes in a new call
        assert [r["status"] for r in rounds] == ["input_required", "ok"]

    nobody = server_logging_to("nobody.jsonl")
    async with Client(nobody, mode=mode) as client:
        assert (await client.call_tool("confirm_interaction", CONFIRM)).is_error
    (none,) = results(nobody, "confirm_interaction")
    assert none["deferred_route"] == "none" and none["error_code"] == "no_route"


@pytest.mark.anyio
async def test_device_timeout_is_the_device_route_with_timeout() -> None:
    server = server_for(user="alice", transport="http", deferred_timeout=0.3)
    ready = anyio.Event()

    async def silent() -> None:
        async with server.bridge.device_stream("alice") as envelopes:  # type: ignore[union-attr]
            ready.set()
            async for _ in envelopes:
                pass

    async with anyio.create_task_group() as tg:
        tg.start_soon(silent)
        await ready.wait()
        async with Client(server, mode="legacy") as client:
            await client.call_tool("get_calendar_events", CALENDAR)
        tg.cancel_scope.cancel()
    (result,) = results(server, "get_calendar_events")
    assert result["deferred_route"] == "device" and result["error_code"] == "timeout" and result["latency_ms"] >= 300


@pytest.mark.anyio
async def test_arguments_are_masked_in_the_file_and_secrets_never_reach_it(tmp_path: Path) -> None:
    key = "AIzaSy" + "k" * 33
    server = server_for(user="alice", transport="http", google_maps_api_key=key, audit_log=str(tmp_path / "a.jsonl"))
    text = "call 010-1234-5678 or mail minji@example.com about 2026-03-10T09:00:00+09:00, key " + key
    async with Client(server) as client:
        await client.call_tool("save_memory", {"content": text})
        await client.call_tool("search_users", {"query": "+82 10 9876 5432", "by": "contact"})
    saved = next(r for r in results(server) if r["tool_name"] == "save_memory")  # (waits for the writer)
    raw = (tmp_path / "a.jsonl").read_text()
    for leaked in ("010-1234-5678", "minji@example.com", key, "9876"):
        assert leaked not in raw
    assert saved["arguments"]["content"] == "call [phone] or mail [email] about 2026-03-10T09:00:00+09:00, key [masked]"


@pytest.mark.anyio
async def test_audit_off_writes_nothing(tmp_path: Path) -> None:
    server = server_for(user="alice", audit_log="off", data_dir=tmp_path)
    assert server.services.audit is None
    async with Client(server) as client:
        assert not (await client.call_tool("get_day_of_week", {"date": "2026-03-10"})).is_error
    assert not (tmp_path / "audit").exists()
