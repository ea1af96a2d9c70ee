"""The bound on a plugin resource's contents (`--max-resource-bytes`), measured before anything is encoded.

What `run` returned is measured before it is encoded, copied or checked, so contents past the bound are refused
without growing further in memory.

Text counts its UTF-8 bytes, binary its bytes, a `{"blob": ...}` the bytes its base64 stands for; a list, all of its
items together.
"""

from __future__ import annotations

from typing import Any

from toolsets.core.errors import ErrorCode, ToolError

CHUNK = 1 << 20  # characters encoded at a time to count a text's bytes


def too_large(name: str, limit: int) -> ToolError:
    return ToolError(
        f"The resource {name} is larger than this server serves ({limit} bytes, --max-resource-bytes); nothing was "
        "sent. Ask for a smaller part of it, or ask the operator to raise the bound.",
        code=ErrorCode.PRECONDITION,
        retryable=False,
    )


def over_bound(raw: Any, limit: int) -> bool:
    """Whether `raw`, a resource's `run` result, holds more than `limit` bytes of contents."""
    total = 0
    for item in raw if isinstance(raw, list) else [raw]:
        total += _size(item, limit - total)
        if total > limit:
            return True
    return False


def _size(item: Any, room: int) -> int:
    """The bytes `item` stands for, or any figure past `room` once it surely holds more."""
    if isinstance(item, dict):
        if isinstance(item.get("text"), str):
            return _size(item["text"], room)
        if isinstance(item.get("blob"), str):
            return len(item["blob"]) * 3 // 4
        return 0
    if isinstance(item, bytes | bytearray | memoryview):
        return len(item)
    if isinstance(item, str):
        return _utf8_length(item, room)
    return 0


def _utf8_length(text: str, room: int) -> int:
    """UTF-8 bytes of `text`, encoded a chunk at a time (never a whole copy), stopping once past `room`."""
    if len(text) > room or text.isascii():
        return len(text)  # a character is at least one byte
    total = 0
    for start in range(0, len(text), CHUNK):
        total += len(text[start : start + CHUNK].encode("utf-8", "surrogatepass"))
        if total > room:
            break
    return total
