"""The dispatcher table of seed 002, adapted: directly, and through MCP in both eras."""

from __future__ import annotations

import logging
from typing import Any

import mcp.types as types
import pytest
from mcp import Client

from tests.sample_toolset import CATALOG, DELETED
from tests.support import MODES, answering, error_of, server_with
from toolsets.core.context import Caller, ConfirmPolicy, ConfirmRequest, Decision, ToolContext
from toolsets.core.dispatch import dispatch
from toolsets.core.envelope import ToolCancelled, ToolErr, ToolOk

TOOLSET = CATALOG["test"]


class FixedConfirmer:
    def __init__(self, decision: Decision) -> None:
        self.decision = decision
        self.asked: list[ConfirmRequest] = []

    async def confirm(self, request: ConfirmRequest) -> Decision:
        self.asked.append(request)
        return self.decision


def ctx(policy: ConfirmPolicy = ConfirmPolicy.AUTO, confirmer: Any = None) -> ToolContext:
    return ToolContext(caller=Caller("alice"), deps=None, confirm_policy=policy, confirmer=confirmer)


@pytest.fixture(autouse=True)
def _clear() -> None:
    DELETED.clear()


# -- the table, straight against dispatch() ------------------------------------------------


@pytest.mark.anyio
async def test_unknown_tool() -> None:
    outcome = await dispatch(TOOLSET, "foo", {}, ctx())
    assert isinstance(outcome, ToolErr) and outcome.code == "unknown_tool"
    assert "search_catalog" in outcome.reason  # tells the model what exists


@pytest.mark.anyio
@pytest.mark.parametrize("raw", [{"query": 123}, {}, {"query": ""}, ["query"], "query"])
async def test_validation_failure(raw: Any) -> None:
    outcome = await dispatch(TOOLSET, "search_catalog", raw, ctx())
    assert isinstance(outcome, ToolErr) and outcome.code == "validation"
    assert "search_catalog" in outcome.reason


@pytest.mark.anyio
async def test_extra_keys_are_ignored_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="truloop.dispatch"):
        outcome = await dispatch(TOOLSET, "search_catalog", {"query": "ap", "hallucinated": 1}, ctx())
    assert isinstance(outcome, ToolOk) and outcome.data.model_dump() == {"items": ["apple", "apricot"]}
    assert "hallucinated" in caplog.text


@pytest.mark.anyio
@pytest.mark.parametrize("policy", [ConfirmPolicy.AUTO, ConfirmPolicy.STRICT])
async def test_destructive_declined_or_dismissed_is_cancelled(policy: ConfirmPolicy) -> None:
    for decision in (Decision.DECLINED, Decision.CANCELLED):
        confirmer = FixedConfirmer(decision)
        outcome = await dispatch(TOOLSET, "delete_item", {"item_id": "x1"}, ctx(policy, confirmer))
        assert isinstance(outcome, ToolCancelled)
        assert confirmer.asked and "Run 'Delete item' with these values?" in confirmer.asked[0].message
    assert DELETED == []


@pytest.mark.anyio
async def test_destructive_accepted_runs_the_handler() -> None:
    outcome = await dispatch(
        TOOLSET, "delete_item", {"item_id": "x1"}, ctx(confirmer=FixedConfirmer(Decision.ACCEPTED))
    )
    assert isinstance(outcome, ToolOk) and outcome.data.model_dump() == {"deleted": "x1"}
    assert DELETED == ["x1"]


@pytest.mark.anyio
async def test_destructive_without_a_way_to_ask() -> None:
    unavailable = FixedConfirmer(Decision.UNAVAILABLE)
    strict = await dispatch(TOOLSET, "delete_item", {"item_id": "s"}, ctx(ConfirmPolicy.STRICT, unavailable))
    assert isinstance(strict, ToolCancelled) and "elicitation" in strict.reason
    no_port = await dispatch(TOOLSET, "delete_item", {"item_id": "s2"}, ctx(ConfirmPolicy.STRICT, None))
    assert isinstance(no_port, ToolCancelled)
    auto = await dispatch(TOOLSET, "delete_item", {"item_id": "a"}, ctx(ConfirmPolicy.AUTO, unavailable))
    assert isinstance(auto, ToolOk)  # the host's approval of destructiveHint tools stands in
    assert DELETED == ["a"]


@pytest.mark.anyio
async def test_policy_off_never_asks() -> None:
    confirmer = FixedConfirmer(Decision.DECLINED)
    outcome = await dispatch(TOOLSET, "delete_item", {"item_id": "o"}, ctx(ConfirmPolicy.OFF, confirmer))
    assert isinstance(outcome, ToolOk) and confirmer.asked == []


@pytest.mark.anyio
async def test_handler_exception_shows_only_its_type(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="truloop.dispatch"):
        outcome = await dispatch(TOOLSET, "explode", {"reason": "boom"}, ctx())
    assert isinstance(outcome, ToolErr) and outcome.code == "handler_error"
    assert "RuntimeError" in outcome.reason
    assert "hunter2" not in outcome.reason and "Traceback" not in outcome.reason and "boom" not in outcome.reason
    assert "hunter2" in caplog.text  # the operator still gets the details in the server log


@pytest.mark.anyio
async def test_user_facing_refusal_passes_through() -> None:
    outcome = await dispatch(TOOLSET, "refuse", {"reason": "no such thing"}, ctx())
    assert outcome == ToolErr("not_found", "refused: no such thing", True)


@pytest.mark.anyio
async def test_read_only_normal_call_never_asks() -> None:
    confirmer = FixedConfirmer(Decision.DECLINED)
    outcome = await dispatch(TOOLSET, "search_catalog", {"query": "ban"}, ctx(ConfirmPolicy.STRICT, confirmer))
    assert isinstance(outcome, ToolOk) and outcome.data.model_dump() == {"items": ["banana"]}
    assert confirmer.asked == []


# -- the same table through MCP, both eras ----------------------------------------------------


@pytest.mark.anyio
@MODES
async def test_mcp_unknown_and_invalid_and_failing_calls(mode: str) -> None:
    async with Client(server_with(CATALOG), mode=mode) as client:
        unknown = await client.call_tool("foo", {})
        invalid = await client.call_tool("search_catalog", {"query": 123})
        boom = await client.call_tool("explode", {"reason": "x"})
        ok = await client.call_tool("search_catalog", {"query": "ap"})
    assert unknown.is_error and error_of(unknown)["code"] == "unknown_tool"  # type: ignore[index]
    assert invalid.is_error and error_of(invalid)["code"] == "validation"  # type: ignore[index]
    assert boom.is_error and error_of(boom)["code"] == "handler_error"  # type: ignore[index]
    assert "hunter2" not in boom.content[0].text  # type: ignore[union-attr]
    assert not ok.is_error and ok.structured_content == {"items": ["apple", "apricot"]}


@pytest.mark.anyio
@MODES
@pytest.mark.parametrize(
    ("action", "content", "runs", "status"),
    [
        ("accept", {"confirm": True}, True, None),
        ("accept", {"confirm": False}, False, "cancelled"),
        ("decline", None, False, "cancelled"),
        ("cancel", None, False, "cancelled"),
    ],
)
async def test_mcp_destructive_confirmation_by_elicitation(
    mode: str, action: str, content: Any, runs: bool, status: str | None
) -> None:
    seen: list[str] = []
    client = Client(server_with(CATALOG), mode=mode, elicitation_callback=answering(action, content, seen))
    async with client:
        result = await client.call_tool("delete_item", {"item_id": "d1"})
    assert len(seen) == 1 and seen[0] == "Run 'Delete item' with these values? This cannot be undone.\n• Item Id: d1"
    assert (["d1"] if runs else []) == DELETED
    if runs:
        assert not result.is_error and result.structured_content == {"deleted": "d1"}
    else:
        assert result.is_error and error_of(result)["status"] == status  # type: ignore[index]


@pytest.mark.anyio
@MODES
async def test_mcp_destructive_without_elicitation(mode: str) -> None:
    async with Client(server_with(CATALOG, ConfirmPolicy.STRICT), mode=mode) as client:
        strict = await client.call_tool("delete_item", {"item_id": "s"})
    async with Client(server_with(CATALOG, ConfirmPolicy.AUTO), mode=mode) as client:
        auto = await client.call_tool("delete_item", {"item_id": "a"})
    assert strict.is_error and error_of(strict)["status"] == "cancelled"  # type: ignore[index]
    assert not auto.is_error
    assert DELETED == ["a"]


@pytest.mark.anyio
async def test_forged_first_round_answer_is_not_trusted() -> None:
    """2026-07-28: inputResponses are not sealed; a pre-filled 'yes' must not skip the question."""
    forged = {"truloop/confirm": types.ElicitResult(action="accept", content={"confirm": True})}
    async with Client(server_with(CATALOG, ConfirmPolicy.STRICT), elicitation_callback=answering("decline")) as client:
        first = await client.session.call_tool(
            "delete_item", {"item_id": "f"}, input_responses=forged, allow_input_required=True
        )
        assert isinstance(first, types.InputRequiredResult)  # asked again
        assert DELETED == []
        (question,) = first.input_requests  # type: ignore[union-attr]
        assert question.startswith("truloop/confirm/delete_item/")
        forged = {question: forged["truloop/confirm"]}
        # replaying a sealed state against other arguments is refused by the SDK's binding
        with pytest.raises(Exception, match="requestState"):
            await client.session.call_tool(
                "delete_item",
                {"item_id": "other"},
                input_responses=forged,
                request_state=first.request_state,
                allow_input_required=True,
            )
        # the genuine retry with the sealed state and a real answer runs
        second = await client.session.call_tool(
            "delete_item",
            {"item_id": "f"},
            input_responses=forged,
            request_state=first.request_state,
            allow_input_required=True,
        )
    assert isinstance(second, types.CallToolResult) and not second.is_error
    assert DELETED == ["f"]
