"""Feedback's contract: one entry about one tool version (a failed or timed-out call, or why the canary held or
rolled a candidate back), and the store's two operations. Arguments arrive masked (as the audit log masks them)
with the user whose call they were (only that user is shown them: toolsets/extensions/plugins/feedback_view.py);
the store keeps the newest `MAX_FEEDBACK_PER_TOOL` entries of each tool and drops the older ones as new ones come."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

MAX_FEEDBACK_PER_TOOL = 50
Kind = Literal["call", "hold", "rollback"]
FeedbackRoute = Literal["stable", "canary", "trial", "scheduled"]


class FeedbackEntry(BaseModel):
    id: str
    tool: str
    version: str  # the version the entry is about (a rollout's: the candidate)
    kind: Kind
    route: FeedbackRoute
    at: float  # epoch seconds
    arguments: dict[str, Any] | None = None  # a call's arguments, masked
    user_id: str | None = None  # whose call it was (None: recorded before callers were kept, nobody's)
    masked: bool = False  # masking changed the arguments (a rehearsal cannot replay them as they were)
    code: str | None = None  # a call's error code (handler_error, timeout, ...)
    message: str = ""  # the error the model saw, or the decision's reason
    rule: str | None = None  # a hold's or a rollback's rule
    stable_version: str | None = None
    windows: dict[str, Any] | None = None  # "candidate" / "stable": both windows' numbers at the decision
    samples: list[dict[str, Any]] = Field(default_factory=list)  # failing inputs of the candidate (masked)
    sample_users: list[str | None] = Field(default_factory=list)  # whose call each sample was, in the same order


class FeedbackStore(Protocol):
    async def add(self, entry: FeedbackEntry) -> None:
        """Keep `entry`, and only the newest `MAX_FEEDBACK_PER_TOOL` entries of its tool."""
        ...

    async def recent(self, tool: str, limit: int = MAX_FEEDBACK_PER_TOOL) -> list[FeedbackEntry]:
        """A tool's entries, newest first."""
        ...
