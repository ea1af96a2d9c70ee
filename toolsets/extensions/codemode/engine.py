"""`CodeMode`: runs the programs `execute_code` receives, one sandboxed interpreter each, every call through the door.

A program's `tools.NAME(**arguments)` becomes a call of the front door as the caller of `execute_code`, in their
profile and conversation (`nested_context`: the gates, the confirmation of destructive tools with the person,
exposure, the per-user rate limits, and an audit line naming the program). Bounded: `max_calls` tool calls per
program (then `rate_limited` inside it), `programs_per_user` programs of one user at once, `timeout_s` of wall time,
and `output_cap` bytes of printed output and of the result.
"""

from __future__ import annotations

import secrets
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anyio.abc import Process

from toolsets.core.context import ToolContext, nested_context
from toolsets.core.errors import ErrorCode, ToolError
from toolsets.extensions.codemode import CODE_TOOL
from toolsets.extensions.codemode.outcome import ProgramOutcome, failure, outcome_of
from toolsets.extensions.codemode.pool import InterpreterPool, Start
from toolsets.extensions.codemode.program import (
    ProgramAnswer,
    ProgramFailedError,
    ProgramTimedOutError,
    run_program,
)
from toolsets.extensions.plugins.nested import MAX_DEPTH, envelope, refusal
from toolsets.infra.sandbox.config import Limits

if TYPE_CHECKING:
    from toolsets.infra.sandbox.plugin_worker import PluginWorkerSandbox

# One program's interpreter (prlimit inside the sandbox's own user namespace, so they bind whoever runs the server).
PROGRAM_LIMITS = Limits(processes=64, address_space=1 << 30, open_files=64, file_size=16 << 20, cpu_seconds=125)


@dataclass(frozen=True, slots=True)
class CodeModeLimits:
    max_calls: int = 50  # tool calls of one program
    programs_per_user: int = 4  # programs of one user running at once (in this process)
    output_cap: int = 64 * 1024  # bytes of printed output kept, and of the result's JSON
    warm: int = 2  # interpreters waiting, started ahead


@dataclass(eq=False)
class ProgramCalls:
    """The tool calls one program may make, each through the front door as the program's caller."""

    ctx: ToolContext[Any]
    limit: int
    made: int = field(default=0)

    async def __call__(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.made += 1
        if self.made > self.limit:
            return refusal(
                "rate_limited",
                f"a program makes at most {self.limit} tool calls; this was call {self.made}. Do the rest in "
                "another program, or ask for less at once",
            )
        if name == CODE_TOOL:
            return refusal("forbidden", "a program cannot start another program; call the tools it needs directly")
        assert self.ctx.door is not None
        return envelope(await self.ctx.door.call(self.ctx, name, arguments))


class CodeMode:
    """One per deployment (the composition root builds it with the deployment's sandbox)."""

    def __init__(self, start: Start, limits: CodeModeLimits | None = None) -> None:
        self.limits = limits or CodeModeLimits()
        self.pool = InterpreterPool(start, self.limits.warm)
        self._running: dict[str, int] = {}  # user id -> their programs running now (no entry at zero)

    @classmethod
    def sandboxed(cls, sandbox: PluginWorkerSandbox, limits: CodeModeLimits | None = None) -> CodeMode:
        """Programs run in `sandbox` (code mode's own: no network, whatever the plugins may use)."""
        # -S: the standard library only (no site-packages), which also starts faster
        mode = cls(lambda: sandbox.open_program(["-S", "-c", mode.child_source]), limits)
        return mode

    @cached_property
    def child_source(self) -> str:
        return (Path(__file__).parent / "child.py").read_text("utf-8")

    def serving(self) -> AbstractAsyncContextManager[None]:
        """While the deployment serves: the warm interpreters started, kept ready, and killed at the end."""
        return self.pool.serving()

    async def execute(self, ctx: ToolContext[Any], code: str, timeout_s: float) -> ProgramOutcome:
        if ctx.program is not None:
            raise ToolError("A program cannot start another program.", code=ErrorCode.FORBIDDEN)
        if ctx.door is None:
            raise ToolError("This call did not come through the front door; a program has nothing to call.",
                            code=ErrorCode.NOT_CONFIGURED)  # fmt: skip
        if ctx.depth + 1 > MAX_DEPTH:
            raise ToolError(f"Calls inside calls go at most {MAX_DEPTH} deep.", code=ErrorCode.FORBIDDEN)
        user = ctx.caller.user_id
        running = self._running.get(user, 0)
        if running >= self.limits.programs_per_user:
            raise ToolError(
                f"At most {self.limits.programs_per_user} programs of one user run at once; wait for one to finish, "
                "then run this one again.",
                code=ErrorCode.RATE_LIMITED,
                retryable=True,
            )
        self._running[user] = running + 1
        try:
            return await self._run(ctx, code, timeout_s)
        finally:
            left = self._running.get(user, 1) - 1
            if left > 0:
                self._running[user] = left
            else:
                self._running.pop(user, None)

    async def _run(self, ctx: ToolContext[Any], code: str, timeout_s: float) -> ProgramOutcome:
        program = secrets.token_hex(6)
        calls = ProgramCalls(replace(nested_context(ctx), program=program), self.limits.max_calls)
        cap = self.limits.output_cap
        answer = await _answer(await self.pool.take(), code, timeout_s, cap, calls)
        if isinstance(answer, ToolError):
            raise answer
        made = min(calls.made, calls.limit)
        if answer.error is not None:
            raise failure(answer, made, program)
        return outcome_of(answer, made, cap, program)


async def _answer(
    process: Process, code: str, timeout_s: float, cap: int, calls: ProgramCalls
) -> ProgramAnswer | ToolError:
    """The program's answer, or the error `execute_code` answers with when it did not finish."""
    try:
        return await run_program(process, code, timeout_s=timeout_s, cap=cap, call_tool=calls)
    except ProgramTimedOutError:
        return ToolError(
            f"The program did not finish within timeout_s={timeout_s:g} s and was stopped (it had made "
            f"{min(calls.made, calls.limit)} tool calls). Make it do less, or give it more time (at most 120 s).",
            code=ErrorCode.TIMEOUT,
            retryable=False,
        )
    except ProgramFailedError as exc:
        return ToolError(f"The program stopped: {exc}.", code=ErrorCode.TOOL_ERROR)
