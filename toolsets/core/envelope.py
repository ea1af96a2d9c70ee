"""The result envelope of every dispatched call: ok, error, cancelled, or input required."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from toolsets.core.errors import ErrorCode


@dataclass(frozen=True, slots=True)
class ToolOk:
    data: BaseModel


@dataclass(frozen=True, slots=True)
class ToolErr:
    """`code` may be given as its string value; it is coerced (an unknown code raises ValueError)."""

    code: ErrorCode
    reason: str
    retryable: bool = False
    detail: dict[str, Any] | None = None  # what a front may need beyond the text (ToolError.detail)

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", ErrorCode(self.code))

    def structured(self) -> dict[str, Any]:
        return {"status": "error", "code": self.code.value, "reason": self.reason, "retryable": self.retryable}

    @property
    def retry_later(self) -> bool:
        """Whether the very same call may succeed later: a precondition's text says what to call first instead."""
        return self.retryable and self.code is not ErrorCode.PRECONDITION


@dataclass(frozen=True, slots=True)
class ToolCancelled:
    reason: str

    def structured(self) -> dict[str, Any]:
        return {"status": "cancelled", "code": ErrorCode.CANCELLED.value, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class ToolInputRequired:
    """The front must ask the client and call again; `payload` is the front's own object."""

    payload: Any


ToolResult = ToolOk | ToolErr | ToolCancelled | ToolInputRequired


def text_and_structured(outcome: ToolOk | ToolErr | ToolCancelled) -> tuple[str, dict[str, Any]]:
    """What the model reads (as an MCP client's model reads it) and the machine-readable form."""
    if isinstance(outcome, ToolOk):
        from toolsets.core.content import ContentBlocks

        if isinstance(outcome.data, ContentBlocks):  # content blocks: their text, and the blocks themselves
            return outcome.data.text(), {"content": outcome.data.wire()}
        data = outcome.data.model_dump(mode="json")
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")), data
    if isinstance(outcome, ToolErr):
        text = outcome.reason + (" This may succeed if retried shortly." if outcome.retry_later else "")
        return text, outcome.structured()
    return f"Cancelled: {outcome.reason}", outcome.structured()
