"""What one reader of feedback may see of the arguments it keeps: a user sees their own calls' arguments (masked
like the audit log); anyone else (the tool's author, another user, the operator) sees only their shape.

Masking removes what looks like a contact, a card or a secret, but a call's free text (`diagnosis: ...`, a private
note) has no shape to find, so masked values are not enough for another reader. A shape keeps what fixing a tool
needs, the argument names (the tool's input_schema declares them) and per value its JSON type, a string's or a
list's length, whether a number is negative, zero or positive, the first items of a list, and no other user's text.
"""

from __future__ import annotations

from typing import Any

from toolsets.infra.store.feedback import FeedbackEntry

SHAPE_ITEMS = 5  # items of a list shown by shape
SHAPE_DEPTH = 4


def seen_by(entry: FeedbackEntry, viewer: str | None) -> FeedbackEntry:
    """`entry` as `viewer` may read it (None: the operator, who is nobody's caller)."""
    arguments = entry.arguments
    if arguments is not None and (viewer is None or entry.user_id != viewer):
        arguments = shape_of_arguments(arguments)
    owners = entry.sample_users
    samples = [
        sample if viewer is not None and index < len(owners) and owners[index] == viewer else shape_of_arguments(sample)
        for index, sample in enumerate(entry.samples)
    ]
    return entry.model_copy(update={"arguments": arguments, "samples": samples})


def shape_of_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    return {str(name): shape(value) for name, value in arguments.items()}


def shape(value: Any, depth: int = 0) -> dict[str, Any]:
    """A value's JSON type and size, never its text: `{"type": "string", "length": 23}`."""
    if value is None:
        return {"type": "null"}
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int | float):
        sign = "negative" if value < 0 else "zero" if value == 0 else "positive"
        return {"type": "integer" if isinstance(value, int) else "number", "sign": sign}
    if isinstance(value, str):
        return {"type": "string", "length": len(value)}
    if isinstance(value, list | tuple):
        shown: dict[str, Any] = {"type": "array", "length": len(value)}
        if depth < SHAPE_DEPTH:
            shown["items"] = [shape(item, depth + 1) for item in value[:SHAPE_ITEMS]]
        return shown
    if isinstance(value, dict):  # a nested object's keys may be the caller's text: only its size
        return {"type": "object", "size": len(value)}
    return {"type": type(value).__name__}
