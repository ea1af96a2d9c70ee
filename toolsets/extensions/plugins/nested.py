"""`context.call_tool`, the server's side: a plugin's call of another tool goes back through the front door.

The nested call runs as the outer call's caller, in its profile and conversation (`nested_context`): the same
tool list, gates, confirmation (the host approved only the outer call, so a destructive tool is confirmed with
the user or cancelled) and audit line (marked `nested`). What crosses back is JSON only, one envelope:

    {"ok": true, "value": {...}}                          the tool's structured result
    {"ok": false, "code": "...", "reason": "...", "retryable": false}

Bounded: calls inside calls at most `MAX_DEPTH` deep (a tool that calls itself stops there) and at most
`MAX_PER_CALL` nested calls per outer call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolsets.core.context import ToolContext, nested_context
from toolsets.core.envelope import ToolCancelled, ToolErr, ToolInputRequired, ToolOk

MAX_DEPTH = 3
MAX_PER_CALL = 64
MAX_NAME = 128


def refusal(code: str, reason: str, *, retryable: bool = False) -> dict[str, Any]:
    """The envelope of a nested call that did not run (or not to the end)."""
    return {"ok": False, "code": code, "reason": reason, "retryable": retryable}


@dataclass(eq=False)
class NestedCalls:
    """The nested calls one plugin call may make."""

    ctx: ToolContext[Any]
    made: int = field(default=0)

    async def __call__(self, name: Any, arguments: Any) -> dict[str, Any]:
        if not isinstance(name, str) or not name or len(name) > MAX_NAME:
            return refusal("validation", "call_tool needs a tool name (a string)")
        if not isinstance(arguments, dict):
            return refusal("validation", "call_tool's arguments must be an object")
        door = self.ctx.door
        if door is None:
            return refusal("not_configured", "this call did not come through the front door; nothing to call back")
        if self.ctx.depth + 1 > MAX_DEPTH:
            return refusal("forbidden", f"calls inside calls go at most {MAX_DEPTH} deep")
        self.made += 1
        if self.made > MAX_PER_CALL:
            return refusal("forbidden", f"a call may make at most {MAX_PER_CALL} calls of other tools")
        outcome = await door.call(nested_context(self.ctx), name, arguments)
        return envelope(outcome)


def envelope(outcome: Any) -> dict[str, Any]:
    if isinstance(outcome, ToolOk):
        return {"ok": True, "value": outcome.data.model_dump(mode="json")}
    if isinstance(outcome, ToolErr):
        return {"ok": False, "code": outcome.code.value, "reason": outcome.reason, "retryable": outcome.retryable}
    if isinstance(outcome, ToolCancelled):
        return {"ok": False, "code": "cancelled", "reason": outcome.reason, "retryable": False}
    if isinstance(outcome, ToolInputRequired):
        return refusal("cancelled", "the tool needs the user's answer, which a call inside a call cannot ask for")
    return refusal("handler_error", "no result")
