"""Who sees which arguments of tool feedback (toolsets/extensions/plugins/feedback_view.py, feedback.py): a failed
call is kept with its caller; its caller reads its masked arguments, every other reader (another user, the tool's
author, the operator) their shape only; a rehearsal replays only its author's own inputs."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from toolsets.core.envelope import ToolErr
from toolsets.core.errors import ErrorCode
from toolsets.extensions.plugins.feedback import FeedbackRecorder
from toolsets.extensions.plugins.feedback_view import seen_by, shape
from toolsets.extensions.plugins.outcome import PluginOutcome
from toolsets.infra.store.feedback import MAX_FEEDBACK_PER_TOOL, FeedbackEntry
from toolsets.pipeline.audit.masking import Masker

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]
DIAGNOSIS = "diagnosis: HIV positive"


class Intake(BaseModel):
    text: str
    count: int = 0


class MemoryFeedback:
    def __init__(self) -> None:
        self.entries: list[FeedbackEntry] = []

    async def add(self, entry: FeedbackEntry) -> None:
        self.entries.insert(0, entry)

    async def recent(self, tool: str, limit: int = MAX_FEEDBACK_PER_TOOL) -> list[FeedbackEntry]:
        return [entry for entry in self.entries if entry.tool == tool][:limit]


def recorder(store: MemoryFeedback) -> FeedbackRecorder:
    return FeedbackRecorder(lambda: store, lambda: Masker().value)  # type: ignore[arg-type, return-value]


async def fail(feedback: FeedbackRecorder, user: str | None, arguments: Intake) -> None:
    err = ToolErr(ErrorCode.HANDLER_ERROR, "The tool intake failed with an internal error (ValueError)")
    await feedback.on_outcome(PluginOutcome("intake", "v1", "stable", arguments, err, user))


async def test_a_failed_call_is_kept_with_its_caller_and_shown_by_shape_to_anyone_else() -> None:
    store = MemoryFeedback()
    feedback = recorder(store)
    await fail(feedback, "alice", Intake(text=DIAGNOSIS, count=0))
    [kept] = store.entries
    assert kept.user_id == "alice" and kept.arguments == {"text": DIAGNOSIS, "count": 0}
    assert seen_by(kept, "alice").arguments == {"text": DIAGNOSIS, "count": 0}
    for reader in ("mallory", None):  # another user (or the tool's author), the operator
        assert seen_by(kept, reader).arguments == {
            "text": {"type": "string", "length": len(DIAGNOSIS)},
            "count": {"type": "integer", "sign": "zero"},
        }


async def test_an_entry_of_nobodys_call_is_shown_by_shape_to_everyone() -> None:
    old = FeedbackEntry(id="fb_1", tool="intake", version="v1", kind="call", route="stable", at=1.0)
    old = old.model_copy(update={"arguments": {"text": DIAGNOSIS}})
    assert seen_by(old, "alice").arguments == {"text": {"type": "string", "length": len(DIAGNOSIS)}}


def test_samples_are_shown_to_their_own_caller_only() -> None:
    rollback = FeedbackEntry(
        id="fb_2",
        tool="intake",
        version="v2",
        kind="rollback",
        route="canary",
        at=1.0,
        samples=[{"text": DIAGNOSIS}, {"text": "bad0"}, {"text": "legacy"}],
        sample_users=["alice", "mallory"],  # the third: recorded before callers were kept
    )
    shaped = {"text": {"type": "string", "length": len(DIAGNOSIS)}}
    assert seen_by(rollback, "mallory").samples == [shaped, {"text": "bad0"}, {"text": shape("legacy")}]
    assert seen_by(rollback, "alice").samples == [
        {"text": DIAGNOSIS},
        {"text": shape("bad0")},
        {"text": shape("legacy")},
    ]
    assert all("HIV" not in str(sample) for sample in seen_by(rollback, None).samples)


async def test_a_rehearsal_replays_only_its_authors_own_inputs() -> None:
    store = MemoryFeedback()
    feedback = recorder(store)
    await fail(feedback, "alice", Intake(text=DIAGNOSIS))
    await fail(feedback, "mallory", Intake(text="boom"))
    await fail(feedback, None, Intake(text="nobody's"))
    assert [arguments for arguments, _ in await feedback.replay_inputs("intake", "mallory")] == [
        {"text": "boom", "count": 0}
    ]
    assert [arguments for arguments, _ in await feedback.replay_inputs("intake", "alice")] == [
        {"text": DIAGNOSIS, "count": 0}
    ]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, {"type": "null"}),
        (True, {"type": "boolean"}),
        (-3, {"type": "integer", "sign": "negative"}),
        (2.5, {"type": "number", "sign": "positive"}),
        ("", {"type": "string", "length": 0}),
        (["a", 1], {"type": "array", "length": 2, "items": [{"type": "string", "length": 1}, shape(1)]}),
        ({"HIV": "positive"}, {"type": "object", "size": 1}),  # a nested object's keys may be free text too
    ],
)
def test_a_shape_is_a_type_and_a_size(value: Any, shown: dict[str, Any]) -> None:
    assert shape(value) == shown
