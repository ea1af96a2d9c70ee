"""The call pipeline: wrappers compose, middleware runs in order and may answer without the tool."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.sample_toolset import DELETED, sample
from tests.support import MODES, error_of, server_with
from toolsets.core.call import ToolCall
from toolsets.core.combined import CombinedToolset
from toolsets.core.context import Caller, ConfirmPolicy, ToolContext
from toolsets.core.dispatch import dispatch
from toolsets.core.envelope import ToolCancelled, ToolErr, ToolOk, ToolResult
from toolsets.core.errors import ErrorCode, ToolError
from toolsets.core.filtered import FilteredToolset
from toolsets.core.middleware import CallNext, MiddlewareToolset
from toolsets.pipeline.approval import ApprovalRequiredToolset

ARCHITECTURE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def ctx(policy: ConfirmPolicy = ConfirmPolicy.AUTO) -> ToolContext[None]:
    return ToolContext(caller=Caller("alice"), deps=None, confirm_policy=policy)


@pytest.fixture(autouse=True)
def _clear() -> None:
    DELETED.clear()


class Recorder:
    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log = name, log

    async def __call__(self, call: ToolCall, call_next: CallNext) -> ToolResult:
        self.log.append(f"{self.name}>")
        outcome = await call_next(call)
        self.log.append(f"<{self.name}")
        return outcome


async def no_deletes_of_apples(call: ToolCall, call_next: CallNext) -> ToolResult:
    """A gate: a corrective result, and the tool does not run."""
    if call.tool.name == "delete_item" and getattr(call.arguments, "item_id", "") == "apple":
        return ToolErr(ErrorCode.VALIDATION, "apples are never deleted; pick another item")
    return await call_next(call)


async def upper_case_query(call: ToolCall, call_next: CallNext) -> ToolResult:
    """Rewrites the arguments (validated again by the tool's own model)."""
    if call.tool.name != "search_catalog":
        return await call_next(call)
    changed = call.tool.args_model.model_validate({"query": call.arguments.query.lower()})  # type: ignore[attr-defined]
    return await call_next(replace(call, arguments=changed))


async def raising(call: ToolCall, call_next: CallNext) -> ToolResult:
    raise ToolError("not today", code=ErrorCode.FORBIDDEN)


@pytest.mark.anyio
async def test_middleware_runs_first_listed_outermost_and_sees_envelopes() -> None:
    log: list[str] = []
    toolset = MiddlewareToolset(CombinedToolset("t", sample), [Recorder("a", log), Recorder("b", log)])
    outcome = await dispatch(toolset, "search_catalog", {"query": "ap"}, ctx())
    assert isinstance(outcome, ToolOk) and log == ["a>", "b>", "<b", "<a"]
    log.clear()
    failed = await dispatch(toolset, "explode", {"reason": "x"}, ctx())  # the tool raises: b and a still see it
    assert isinstance(failed, ToolErr) and failed.code == "handler_error" and log == ["a>", "b>", "<b", "<a"]


@pytest.mark.anyio
async def test_a_gate_answers_without_running_the_tool_and_before_confirmation() -> None:
    asked: list[str] = []

    class Confirmer:
        async def confirm(self, request: Any) -> Any:
            asked.append(request.tool_name)
            raise AssertionError("a gated call must not reach confirmation")

    gated = MiddlewareToolset(ApprovalRequiredToolset(CombinedToolset("t", sample)), [no_deletes_of_apples])
    context = ctx(ConfirmPolicy.STRICT)
    context.confirmer = Confirmer()
    outcome = await dispatch(gated, "delete_item", {"item_id": "apple"}, context)
    assert isinstance(outcome, ToolErr) and "never deleted" in outcome.reason
    assert DELETED == [] and asked == []


@pytest.mark.anyio
async def test_middleware_may_replace_arguments_and_its_exceptions_become_envelopes() -> None:
    rewriting = MiddlewareToolset(CombinedToolset("t", sample), [upper_case_query])
    outcome = await dispatch(rewriting, "search_catalog", {"query": "AP"}, ctx())
    assert isinstance(outcome, ToolOk) and outcome.data.model_dump() == {"items": ["apple", "apricot"]}
    broken = MiddlewareToolset(CombinedToolset("t", sample), [raising])
    refused = await dispatch(broken, "search_catalog", {"query": "a"}, ctx())
    assert isinstance(refused, ToolErr) and refused.code == "forbidden" and refused.reason == "not today"


@pytest.mark.anyio
async def test_wrappers_compose_filter_and_approval() -> None:
    approval = ApprovalRequiredToolset(CombinedToolset("t", sample), needs_approval=lambda t: t.name == "refuse")
    visible = FilteredToolset(approval, lambda t: t.name != "explode", name="no-explode")
    assert "explode" not in visible.names() and visible.name == "no-explode"
    hidden = await dispatch(visible, "explode", {"reason": "x"}, ctx())
    assert isinstance(hidden, ToolErr) and hidden.code == "unknown_tool"
    cancelled = await dispatch(visible, "refuse", {"reason": "x"}, ctx(ConfirmPolicy.STRICT))
    assert isinstance(cancelled, ToolCancelled)  # the custom predicate, under strict with nobody to ask
    deleted = await dispatch(visible, "delete_item", {"item_id": "x"}, ctx(ConfirmPolicy.STRICT))
    assert isinstance(deleted, ToolOk) and DELETED == ["x"]  # not destructive by this wrapper's rule


@pytest.mark.anyio
@MODES
async def test_a_composed_pipeline_behind_mcp(mode: str) -> None:
    composed = MiddlewareToolset(ApprovalRequiredToolset(CombinedToolset("test", sample)), [no_deletes_of_apples])
    async with Client(server_with({"test": composed}), mode=mode) as client:
        gated = await client.call_tool("delete_item", {"item_id": "apple"})
        passed = await client.call_tool("search_catalog", {"query": "an"})
    assert error_of(gated)["code"] == "validation" and DELETED == []
    assert passed.structured_content == {"items": ["banana"]}


@pytest.mark.anyio
async def test_the_documented_middleware_example_works_as_written(tmp_path: Any) -> None:

    from tests.people import directory
    from toolsets.profiles import build_profiles

    page = ARCHITECTURE.read_text(encoding="utf-8")
    start = page.index("# toolsets/pipeline/no_bulk_forget.py")
    source = page[start : page.index("```", start)]
    assert len(source.splitlines()) <= 25
    namespace: dict[str, Any] = {}
    exec(compile(source, "no_bulk_forget.py", "exec"), namespace)
    services = await directory(tmp_path)
    guarded = MiddlewareToolset(build_profiles().profile("member"), [namespace["NoBulkForget"](3)])
    context = ToolContext(caller=Caller("alice"), deps=services, confirm_policy=ConfirmPolicy.OFF)
    outcomes = []
    for n in range(4):
        saved = await services.memories.save("alice", f"fact number {n}", [])
        outcomes.append(await dispatch(guarded, "forget_memory", {"memory_id": saved.id}, context))
    assert [type(o).__name__ for o in outcomes] == ["ToolOk", "ToolOk", "ToolOk", "ToolErr"]
    assert outcomes[3].code == "rate_limited"  # type: ignore[union-attr]
