"""`context.ask` (and `elicit`, `sample`, `list_roots`), the server's side: a plugin's questions to the MCP client.

They go through the call's `ClientPort` (`ToolContext.client`), the same port the built-in tools' confirmation and
composing use, so they work in both protocol eras. What crosses back to the plugin is JSON only, one envelope:

    {"ok": true, "value": {key: the client's result}}
    {"ok": false, "code": "input_required"}           2026-07-28: the questions went out; the run must end
    {"ok": false, "code": "client_capability" | "not_configured" | "validation", "reason": "..."}

On 2026-07-28 the `InputRequired` is kept here (`pending`) and raised once the plugin's run has ended, whatever the
plugin did meanwhile; a refusal for a missing client capability is kept too (`refused`), so a plugin that lets it
end the call ends it with that error rather than a crash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolsets.core.context import ToolContext
from toolsets.core.errors import ErrorCode, InputRequired, ToolError
from toolsets.extensions.plugins.context import METHODS, START_TASK_KEY, START_TASK_METHOD
from toolsets.extensions.plugins.nested import refusal

MAX_REQUESTS = 16  # questions in one ask
MAX_ASKS = 32  # asks in one run of a handler
MAX_KEY = 100


@dataclass(eq=False)
class ClientRequests:
    ctx: ToolContext[Any]
    may_ask: bool = True  # a tool declares it (TOOL_SPEC asks_client); resources and prompts always may
    may_start_task: bool = False  # a tool declares it (TOOL_SPEC task_start "run")
    pending: Any = None  # the InputRequired payload of a 2026-07-28 round
    refused: ToolError | None = None
    made: int = field(default=0)

    def capabilities(self) -> dict[str, Any]:
        """What the client declared; nothing for a tool that does not ask (its calls never look: that costs)."""
        port = self.ctx.client
        return dict(port.capabilities()) if port is not None and self.may_ask else {}

    async def ask(self, requests: Any) -> dict[str, Any]:
        if requests == {START_TASK_KEY: {"method": START_TASK_METHOD, "params": {}}}:
            return await self._start_task()
        problem = _problem(requests)
        if problem is not None:
            return refusal("validation", problem)
        port = self.ctx.client
        if port is None:
            return refusal("not_configured", "there is no MCP client to ask in this call (in-process, the pipe)")
        if not self.may_ask:
            return refusal("not_configured", 'a tool that asks the client declares "asks_client": True (TOOL_SPEC)')
        if self.pending is not None:
            return {"ok": False, "code": "input_required", "reason": "questions are already waiting for the client"}
        self.made += 1
        if self.made > MAX_ASKS:
            return refusal("forbidden", f"a call may ask the client at most {MAX_ASKS} times")
        try:
            answers = await port.ask(requests)
        except InputRequired as exc:
            self.pending = exc.payload
            return {"ok": False, "code": "input_required", "reason": "the questions went to the client"}
        except ToolError as exc:
            if exc.code is ErrorCode.CLIENT_CAPABILITY:
                self.refused = exc
            return refusal(exc.code.value, exc.message)
        return {"ok": True, "value": answers}

    async def _start_task(self) -> dict[str, Any]:
        if not self.may_start_task:
            return refusal("not_configured", 'a tool that starts its task in run declares "task_start": "run"')
        port = self.ctx.client
        if port is not None:
            if self.pending is not None:
                return {"ok": False, "code": "input_required", "reason": "questions are already waiting for the client"}
            try:
                await port.start_task()
            except InputRequired as exc:
                self.pending = exc.payload
                return {"ok": False, "code": "input_required", "reason": "the call goes on as a task"}
        return {"ok": True, "value": {START_TASK_KEY: {}}}


def _problem(requests: Any) -> str | None:
    if not isinstance(requests, dict) or not requests:
        return "ask needs {key: {'method': ..., 'params': {...}}} with at least one request"
    if len(requests) > MAX_REQUESTS:
        return f"at most {MAX_REQUESTS} questions at once"
    for key, request in requests.items():
        if not isinstance(key, str) or not key or len(key) > MAX_KEY:
            return f"each key is a string of 1 to {MAX_KEY} characters"
        if not isinstance(request, dict) or request.get("method") not in METHODS.values():
            return f"{key}: method must be one of {', '.join(METHODS.values())}"
        if not isinstance(request.get("params", {}), dict):
            return f"{key}: params must be an object"
    return None
