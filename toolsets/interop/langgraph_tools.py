"""LangChain tools of a profile, for LangGraph's `ToolNode` and `create_agent` (the `langgraph` extra).

    from toolsets.interop.langgraph_tools import langchain_tools
    tools = langchain_tools(assemble(services), Caller("alice", timezone="Asia/Seoul"), "member")
    agent = create_agent(model, tools, checkpointer=InMemorySaver())

The tools are the profile's MCP tool list (same names, descriptions, input schemas). Each runs through the
deployment's front door like an MCP call (gates, audit, canary, confirmation), and answers a tool call with a
`ToolMessage` (`status` "success" or "error", the structured result as `artifact`). The calls of one graph thread
(`configurable.thread_id`) are one conversation for the gates.

A destructive tool asks the user the LangGraph way: `interrupt()` with `{"type": "confirmation", "tool",
"arguments", "message"}`; resume with `Command(resume=True)` (or `{"action": "accept"}`) to run it, `False` /
`{"action": "decline"}` or `{"action": "cancel"}` not to. A deferred tool (confirm_interaction,
get_permission_status, get_calendar_events) asks the `device` resolver first when one is given; with no device to
reach, it calls LangGraph's `interrupt()` with the seed's JSON-RPC request, and resuming the graph with the device's
JSON-RPC response (`Command(resume={"jsonrpc": "2.0", "id": ..., "result": ...})`, or an error -32010 / -32001 /
-32002) finishes the tool exactly as the device route does. Only code that imports this module imports
langchain/langgraph.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from pydantic import ConfigDict

from toolsets.core import safe_json
from toolsets.core.context import Caller, ConfirmPolicy, ConfirmRequest, Decision, DeferredCall, DeferredResolver
from toolsets.core.device_answer import DeviceError, device_answer
from toolsets.core.envelope import ToolInputRequired
from toolsets.core.errors import ErrorCode, InputRequired, ToolError
from toolsets.interop.replies import reply
from toolsets.interop.runner import InteropRunner, runner_for
from toolsets.interop.shapes import Shape, call_from

if TYPE_CHECKING:
    from toolsets.front_door import FrontDoor
    from toolsets.services import Services


def langchain_tools(
    door: FrontDoor | Services,
    caller: Caller | str,
    profile: str = "member",
    *,
    confirm_policy: ConfirmPolicy | None = None,
    device: DeferredResolver | None = None,
) -> list[BaseTool]:
    """The tools of `profile` (member, notification-safe, guest) for `caller`, as LangChain tools, over a
    deployment's front door (`toolsets.assembly.assemble(services)`; given `Services`, one is assembled).

    `confirm_policy` (default: the door's): destructive tools are confirmed with `interrupt()`; `off` never
    asks; outside a graph run nobody can be asked, so `auto` runs them (the caller approved) and `strict`
    cancels them. `device`: a resolver that reaches the user's device (the interrupt is the fallback when it
    answers `no_route`).
    """
    resolver = InterruptResolver(device)
    runner = runner_for(
        door,
        caller,
        profile,
        confirm_policy=confirm_policy,
        confirmer=InterruptConfirmer(),
        deferred=resolver,
        transport="langgraph",
    )
    return [TruloopTool.of(runner, tool.name, resolver) for tool in runner.toolset]


class TruloopTool(BaseTool):
    """One tool of a profile; `runner` carries the caller, the profile and the policy, `resolver` answers its
    deferred calls (each call's own, with the id of the LangChain tool call it answers)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    runner: InteropRunner
    resolver: InterruptResolver

    @classmethod
    def of(cls, runner: InteropRunner, name: str, resolver: InterruptResolver | None = None) -> TruloopTool:
        tool = runner.toolset.get(name)
        assert tool is not None
        return cls(
            name=name,
            description=tool.description,
            args_schema=tool.input_schema,
            runner=runner,
            resolver=resolver or InterruptResolver(),
        )

    def _to_args_and_kwargs(self, tool_input: str | dict[str, Any], tool_call_id: str | None) -> Any:
        """LangChain hands the tool call's id here (None: invoked with bare arguments), as it does to an
        `InjectedToolCallId` argument: `_run`/`_arun` get the arguments and the id as two keywords of their own
        (so no argument of a tool can clash with LangChain's `config` or `run_manager`)."""
        args, kwargs = super()._to_args_and_kwargs(tool_input, tool_call_id)
        return (), {"arguments": args[0] if args else kwargs, "tool_call_id": tool_call_id}

    def _run(self, *, arguments: Any, tool_call_id: str | None, config: RunnableConfig) -> Any:
        def run() -> Any:
            return asyncio.run(self._arun(arguments=arguments, tool_call_id=tool_call_id, config=config))

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return run()
        # invoked synchronously from inside an event loop: run on a thread of its own, in this context
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(contextvars.copy_context().run, run).result()

    async def _arun(self, *, arguments: Any, tool_call_id: str | None, config: RunnableConfig) -> Any:
        tool_call_id = None if tool_call_id is None else str(tool_call_id)
        call = call_from(Shape.LANGCHAIN, tool_call_id, self.name, arguments)
        thread = (config.get("configurable") or {}).get("thread_id")
        outcome = await self.runner.outcome(
            call,
            conversation=None if thread is None else f"langgraph:{thread}",
            deferred=self.resolver.for_call(tool_call_id),
        )
        if isinstance(outcome, ToolInputRequired) and isinstance(outcome.payload, _Paused):
            raise outcome.payload.signal  # LangGraph's interrupt, raised outside the dispatcher that settled it
        message = reply(call, outcome)
        if tool_call_id is None:  # invoked with bare arguments: LangChain returns the content alone
            return message["content"]
        return ToolMessage(
            content=message["content"],
            name=self.name,
            tool_call_id=tool_call_id,
            status=message["status"],
            artifact=message["artifact"],
        )


@dataclass(frozen=True, slots=True)
class _Paused:
    """LangGraph's interrupt signal, carried through the dispatcher as an `InputRequired` payload."""

    signal: BaseException


class InterruptConfirmer:
    """Confirmation of destructive tools the LangGraph way: `interrupt()` with the question, and the graph's owner
    resumes with the user's answer (outside a graph run nobody can be asked, and the policy decides)."""

    async def confirm(self, request: ConfirmRequest) -> Decision:
        from langgraph.errors import GraphBubbleUp
        from langgraph.types import interrupt

        question = {
            "type": "confirmation",
            "tool": request.tool_name,
            "arguments": dict(request.arguments),
            "message": request.message,
        }
        try:
            answer = interrupt(question)
        except GraphBubbleUp as signal:
            raise InputRequired(_Paused(signal)) from None
        except Exception:  # not inside a LangGraph run
            return Decision.UNAVAILABLE
        return decision_of(answer)


def decision_of(answer: Any) -> Decision:
    """The resume value as a decision: True / "accept" / {"action": "accept"} run the tool, False / "decline" /
    {"action": "decline"} decline it; anything else (including "cancel") cancels it."""
    if isinstance(answer, Mapping):
        answer = answer.get("action", answer.get("confirmed"))
    if answer is True or answer == "accept":
        return Decision.ACCEPTED
    if answer is False or answer == "decline":
        return Decision.DECLINED
    return Decision.CANCELLED


class InterruptResolver:
    """Deferred calls: the `device` resolver when it can reach the device, else LangGraph's `interrupt()`. The
    interrupt's JSON-RPC id is `tool_call_id` (the LangChain tool call's id, None: the call had none), so it stays
    the same when LangGraph runs the tool again on resume."""

    def __init__(self, device: DeferredResolver | None = None, tool_call_id: str | None = None) -> None:
        self.device = device
        self.tool_call_id = tool_call_id

    def for_call(self, tool_call_id: str | None) -> InterruptResolver:
        """This resolver, for the calls of the LangChain tool call `tool_call_id`."""
        return InterruptResolver(self.device, tool_call_id)

    async def resolve(self, call: DeferredCall) -> Any:
        if self.device is not None:
            try:
                return await self.device.resolve(call)
            except ToolError as exc:
                if exc.code is not ErrorCode.NO_ROUTE:
                    raise
        from langgraph.errors import GraphBubbleUp
        from langgraph.types import interrupt

        request = jsonrpc_request(call, self.tool_call_id)
        try:
            answer = interrupt(request)
        except GraphBubbleUp as signal:
            raise InputRequired(_Paused(signal)) from None
        except Exception:  # not inside a LangGraph run: nobody to interrupt
            raise ToolError(
                f"{call.tool_name} runs on the user's device: run it inside a LangGraph graph with a checkpointer, "
                "so it can interrupt() for the device's answer, or pass a device resolver.",
                code=ErrorCode.NO_ROUTE,
            ) from None
        result, error = read_response(answer, request["id"], call.tool_name)
        return device_answer(call.tool, result, error)


def jsonrpc_request(call: DeferredCall, tool_call_id: str | None = None) -> dict[str, Any]:
    """The seed's request to the device; its id is the same each time LangGraph runs the tool for this call: from
    the LangChain tool call's id, or without one from the tool and its arguments."""
    assert call.tool.device is not None
    if tool_call_id is None:
        canonical = json.dumps([call.tool_name, dict(call.arguments)], sort_keys=True, ensure_ascii=False)
        tool_call_id = hashlib.sha256(canonical.encode()).hexdigest()[:24]
    request_id = tool_call_id if tool_call_id.startswith("call_") else "call_" + tool_call_id
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": call.tool.device.method,
        "params": call.tool.device.wire_params(call.arguments),
    }


def read_response(answer: Any, request_id: str, tool_name: str) -> tuple[Any, DeviceError | None]:
    """The `result` or `error` of the device's JSON-RPC response (a dict or its JSON text) to `request_id`."""
    if isinstance(answer, str | bytes):
        try:
            answer = safe_json.loads(answer)
        except safe_json.JsonDecodeError:
            answer = None
    malformed = ToolError(
        f"The answer to {tool_name} was not the device's JSON-RPC response to request {request_id!r}: resume the "
        f'graph with {{"jsonrpc": "2.0", "id": "{request_id}", "result": ...}} or an "error" '
        "(-32010 PermissionRequired, -32001 PermissionDenied, -32002 UserCanceled).",
        code=ErrorCode.DEVICE_ERROR,
    )
    if (
        not isinstance(answer, Mapping)
        or answer.get("jsonrpc") != "2.0"
        or answer.get("id") != request_id
        or ("result" in answer) == ("error" in answer)
    ):
        raise malformed
    if "result" in answer:
        return answer["result"], None
    error = answer["error"]
    if not (
        isinstance(error, Mapping)
        and isinstance(error.get("code"), int)
        and not isinstance(error.get("code"), bool)
        and isinstance(error.get("message"), str)
    ):
        raise malformed
    return None, DeviceError(error["code"], error["message"], error.get("data"))
