"""The tool-call shapes agent frameworks emit, detected per call, and the documents that carry them.

| shape | a call | its arguments | its id |
|---|---|---|---|
| LangChain / LangGraph | `{"type":"tool_call","id","name","args"}` (`type` optional) | `args` | `id` |
| OpenAI Chat | `{"id","type":"function","function":{"name","arguments"}}` | `function.arguments` (text) | `id` |
| OpenAI Responses | `{"type":"function_call","call_id","name","arguments"}` | `arguments` (text) | `call_id` |
| Anthropic Messages | `{"type":"tool_use","id","name","input"}` | `input` | `id` |

Arguments may be an object or its JSON text in every shape. A document is one call, a list of calls, or
a message that holds calls (a LangChain AI message, an OpenAI assistant message or chat completion, an
OpenAI Responses response, an Anthropic assistant message); parts of a message that are not calls (text,
reasoning) are passed over.
"""

from __future__ import annotations

import enum
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolsets.core import safe_json


class Shape(enum.StrEnum):
    LANGCHAIN = "langchain"
    OPENAI_CHAT = "openai-chat"
    OPENAI_RESPONSES = "openai-responses"
    ANTHROPIC = "anthropic"


class Framing(enum.StrEnum):
    """How the replies to one document are framed."""

    ONE = "one"  # a single call: a single reply
    LIST = "list"  # a list of calls or a message holding them: a list of replies, in the calls' order
    ANTHROPIC_USER = "anthropic-user"  # an Anthropic assistant message: one user message of tool_result blocks


_ID_PREFIX = {Shape.ANTHROPIC: "toolu_"}  # the others use OpenAI's and LangChain's `call_`


@dataclass(frozen=True, slots=True)
class ParsedCall:
    shape: Shape
    call_id: str  # as sent, or made up when the call had none (the reply echoes it either way)
    name: str
    arguments: Any  # an object, normally; anything else is for the dispatcher to refuse
    bad_json: str | None = None  # the arguments were JSON text that does not parse: why


@dataclass(frozen=True, slots=True)
class Unrecognized:
    """A document, or an item of a list, that is no tool call of a known shape."""

    reason: str


Item = ParsedCall | Unrecognized


@dataclass(frozen=True, slots=True)
class Document:
    items: list[Item]
    framing: Framing


CALL_TYPES = ("tool_call", "function", "function_call", "tool_use")
_EXPECTED = (
    "a tool call ({type: tool_call | function | function_call | tool_use, ...}), a list of them, or an "
    "assistant message holding them"
)


def parse_document(document: Any) -> Document:
    if isinstance(document, list):
        return Document(_items(document), Framing.LIST)
    if isinstance(document, Mapping):
        message = _unwrap_langchain(document)
        choices = message.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):  # a chat completion
            message = choices[0].get("message") or {}
        if "tool_calls" in message or "invalid_tool_calls" in message:  # LangChain AI / OpenAI assistant message
            calls = list(message.get("tool_calls") or []) + list(message.get("invalid_tool_calls") or [])
            return Document(_items(calls), Framing.LIST)
        if isinstance(message.get("output"), list):  # an OpenAI Responses response
            return Document(_items(message["output"]), Framing.LIST)
        if message.get("role") == "assistant" and isinstance(message.get("content"), list):  # Anthropic
            return Document(_items(message["content"]), Framing.ANTHROPIC_USER)
        if message.get("role") == "assistant" or message.get("type") == "ai":  # a message with no calls
            return Document([], Framing.LIST)
    item = parse_call(document)
    return Document([item if item is not None else Unrecognized(f"not a tool call: expected {_EXPECTED}")], Framing.ONE)


def _unwrap_langchain(document: Mapping[str, Any]) -> Mapping[str, Any]:
    """A LangChain message as `messages_to_dict` (`{"type": "ai", "data": {...}}`) or `dumpd` writes it."""
    if document.get("type") == "ai" and isinstance(document.get("data"), Mapping):
        return document["data"]
    if document.get("lc") == 1 and isinstance(document.get("kwargs"), Mapping):
        return document["kwargs"]
    return document


def _items(values: list[Any]) -> list[Item]:
    found = (parse_call(value) for value in values)
    return [item for item in found if item is not None]


def parse_call(value: Any) -> Item | None:
    """The call `value` is, `Unrecognized` when it is none, None when it is a part of a message that is no
    call (a text, reasoning or message item: it has a `type` of its own and no `name`)."""
    if not isinstance(value, Mapping):
        return Unrecognized(f"not a tool call: expected a JSON object, got {_kind(value)}")
    kind = value.get("type")
    function = value.get("function")
    if kind in ("tool_call", "invalid_tool_call") or (kind is None and "args" in value):
        return call_from(Shape.LANGCHAIN, value.get("id"), value.get("name"), value.get("args"))
    if kind == "function_call":
        return call_from(Shape.OPENAI_RESPONSES, value.get("call_id"), value.get("name"), value.get("arguments"))
    if kind == "tool_use":
        return call_from(Shape.ANTHROPIC, value.get("id"), value.get("name"), value.get("input"))
    if kind == "function" or isinstance(function, Mapping):
        function = function if isinstance(function, Mapping) else {}
        return call_from(Shape.OPENAI_CHAT, value.get("id"), function.get("name"), function.get("arguments"))
    if isinstance(kind, str) and "name" not in value:
        return None
    return Unrecognized(f"not a tool call: expected {_EXPECTED}")


def call_from(shape: Shape, call_id: Any, name: Any, raw: Any) -> ParsedCall:
    """A call of `shape` from its parts as sent: a missing id is made up, arguments as text are parsed."""
    if isinstance(call_id, int) and not isinstance(call_id, bool):
        call_id = str(call_id)
    if not isinstance(call_id, str) or not call_id:
        call_id = _ID_PREFIX.get(shape, "call_") + secrets.token_hex(12)
    arguments, bad_json = parse_arguments(raw)
    return ParsedCall(shape, call_id, name if isinstance(name, str) else "", arguments, bad_json)


def parse_arguments(raw: Any) -> tuple[Any, str | None]:
    """Arguments given as an object or as its JSON text (blank text and null are no arguments)."""
    if raw is None:
        return {}, None
    if isinstance(raw, str):
        if not raw.strip():
            return {}, None
        try:
            return safe_json.loads(raw), None
        except safe_json.JsonDecodeError as exc:
            return None, str(exc).splitlines()[0][:120]
    return raw, None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", str: "a string", int: "a number", float: "a number", list: "a list"}.get(
        type(value), type(value).__name__
    )
