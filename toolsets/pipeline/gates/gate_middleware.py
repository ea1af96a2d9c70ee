"""The gate middleware: refuses a gated call with a `precondition` result naming what to call first,
and remembers what the conversation has done.

`GateMiddleware(gates)` is composed once with the deployment's gates; the conversation is the call's own
(`ctx.conversation`, which every front fills: the MCP session or caller, the pipe's process, the LangGraph
thread). A call without a conversation passes ungated."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from toolsets.core.call import ToolCall
from toolsets.core.envelope import ToolErr, ToolOk, ToolResult
from toolsets.core.errors import ErrorCode
from toolsets.core.middleware import CallNext
from toolsets.pipeline.gates.spec import EXEMPT, GateSet, SameValueGate

MAX_VALUE_CHARS = 200


class GateMiddleware:
    __slots__ = ("gates",)

    def __init__(self, gates: GateSet) -> None:
        self.gates = gates

    async def __call__(self, call: ToolCall, call_next: CallNext) -> ToolResult:
        gates, conversation = self.gates, call.ctx.conversation
        name = call.tool.name
        if not gates or conversation is None or name in EXEMPT:
            return await call_next(call)
        refusal = await _refusal(gates, call)
        if refusal is not None:
            return refusal
        outcome = await call_next(call)
        if isinstance(outcome, ToolOk) and name in gates.remembered:
            values = _values(call.arguments, outcome.data) if name in gates.value_tools else ()
            await conversation.record(name, values)
        return outcome


async def _refusal(gates: GateSet, call: ToolCall) -> ToolErr | None:
    conversation = call.ctx.conversation
    assert conversation is not None
    name = call.tool.name
    if gates.first and name != gates.first and not await conversation.succeeded((gates.first,)):
        return _precondition(
            f"Call {gates.first} first: in this conversation it must run before any other tool. Then call {name} "
            "again with the same arguments, and it will run."
        )
    for gate in gates.by_tool.get(name, ()):
        value = getattr(call.arguments, gate.argument, None) if isinstance(gate, SameValueGate) else None
        if value is not None:
            if not await conversation.has_seen(gate.after, str(value)):
                return _precondition(_unseen(name, gate, str(value)))  # type: ignore[arg-type]  # a value is only read for a SameValueGate
        elif not await conversation.succeeded(gate.after):
            return _precondition(
                f"{name} needs a successful call of {_one_of(gate.after)} first in this conversation. Call "
                f"{_one_of(gate.after)}, then call {name} again with the same arguments, and it will run."
            )
    return None


def _unseen(name: str, gate: SameValueGate, value: str) -> str:
    return (
        f"{name}: {gate.argument}={value!r} has not appeared in a result of {_one_of(gate.after)} in this "
        f"conversation. Call {_one_of(gate.after)} first and use a {gate.argument} it returns "
        f"(do not invent ids); then call {name} again."
    )


def _one_of(tools: tuple[str, ...]) -> str:
    return tools[0] if len(tools) == 1 else ", ".join(tools[:-1]) + " or " + tools[-1]


def _precondition(text: str) -> ToolErr:
    return ToolErr(ErrorCode.PRECONDITION, text, retryable=True)


def _values(arguments: BaseModel, result: BaseModel) -> list[str]:
    found: list[str] = []
    for source in (arguments.model_dump(mode="json"), result.model_dump(mode="json")):
        found.extend(_scalars(source))
    return found


def _scalars(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        if 0 < len(value) <= MAX_VALUE_CHARS:
            yield value
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int | float):
        yield str(value)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _scalars(item)
    elif isinstance(value, list):
        for item in value:
            yield from _scalars(item)
