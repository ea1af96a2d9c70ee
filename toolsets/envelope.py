"""The result envelope of every dispatched call: ok, error, cancelled, or input required."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

ErrorCode = Literal["unknown_tool", "validation", "handler_error"] | str


@dataclass(frozen=True, slots=True)
class ToolOk:
    data: BaseModel


@dataclass(frozen=True, slots=True)
class ToolErr:
    code: ErrorCode
    reason: str
    retryable: bool = False

    def structured(self) -> dict[str, Any]:
        return {"status": "error", "code": self.code, "reason": self.reason, "retryable": self.retryable}


@dataclass(frozen=True, slots=True)
class ToolCancelled:
    reason: str

    def structured(self) -> dict[str, Any]:
        return {"status": "cancelled", "code": "cancelled", "reason": self.reason}


@dataclass(frozen=True, slots=True)
class ToolInputRequired:
    """The front must ask the client and call again; `payload` is the front's own object."""

    payload: Any


ToolResult = ToolOk | ToolErr | ToolCancelled | ToolInputRequired
