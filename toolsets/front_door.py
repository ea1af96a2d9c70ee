"""The one way into a deployment's tools, whichever front a call comes from.

Every front (MCP over stdio, MCP over HTTP/SSE, the pipe of `truloop-mcp call`, the in-process interop
runner, the LangGraph tools) holds the deployment's `FrontDoor`, builds each call's context with
`context_for(...)` and runs it with `call(...)`. So each guarantee lives in one place and holds on every
front: the profile's tool list, the exposure mode, the gates, confirmation of destructive tools, the audit
log and the canary (both in the profiles' middleware), and the caller's entry in the user directory.

What differs between fronts is only what they can reach, and they say it through the context: how to ask the
user to confirm (`confirmer`), how to reach the user's device (`deferred`), whether the host shows each call
to its user (`host_approves`), which conversation a call belongs to, and where it came from (`request`).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from toolsets.admission.admission import Admission, unlimited
from toolsets.admission.kinds import RequestKind
from toolsets.admission.limits import Refused, RequestRefusedError
from toolsets.core.context import (
    Caller,
    ClientPort,
    Composer,
    Confirmer,
    ConfirmPolicy,
    DeferredResolver,
    ProgressReporter,
    RequestInfo,
    ToolContext,
    no_progress,
)

if TYPE_CHECKING:
    from toolsets.core.conversation import Conversation, Conversations
    from toolsets.core.envelope import ToolErr, ToolResult
    from toolsets.core.tool import Tool
    from toolsets.core.toolset import AbstractToolset
    from toolsets.extensions.exposure.policy import ToolExposure
    from toolsets.profiles import Profiles
    from toolsets.services import Services

logger = logging.getLogger("truloop.front_door")

KNOWN_USERS = 10_000  # callers remembered as already in the directory (then forgotten all at once)


class FrontDoor:
    def __init__(
        self,
        profiles: Profiles,
        services: Services,
        *,
        exposure: ToolExposure,
        conversations: Conversations,
        confirm_policy: ConfirmPolicy = ConfirmPolicy.AUTO,
        admission: Admission | None = None,
        version: str | None = None,
    ) -> None:
        self.profiles = profiles
        self.services = services
        self.exposure = exposure
        self.conversations = conversations
        self.confirm_policy = confirm_policy
        self.admission = admission if admission is not None else unlimited()
        self._builtin_version = version  # (None: read with the first audited request)
        self._known_users: dict[str, str] = {}
        # (user, role) -> (the event loop writing their entry, the event set when it is written)
        self._entering: dict[tuple[str, str], tuple[Any, Any]] = {}

    def toolset(self, profile: str) -> AbstractToolset:
        return self.profiles.profile(profile)

    def gate_refusing_alone(self, name: str) -> str | None:
        """The gate that refuses a call of `name` made in a conversation with no call before it, in words."""
        return self.exposure.gates.refusing_alone(name)

    def conversation(self, key: str) -> Conversation:
        """The conversation named `key` (a front that has no session of its own names it, e.g. by caller)."""
        return self.conversations.get(key)

    def context_for(
        self,
        caller: Caller,
        profile: str,
        *,
        request: RequestInfo | None = None,
        conversation: Conversation | None = None,
        confirm_policy: ConfirmPolicy | None = None,
        confirmer: Confirmer | None = None,
        deferred: DeferredResolver | None = None,
        composer: Composer | None = None,
        client: ClientPort | None = None,
        report_progress: ProgressReporter | None = None,
        host_approves: bool = True,
        unasked: str | None = None,
    ) -> ToolContext[Services]:
        """The context of one call of `caller` in `profile`. Without a `conversation`, the caller's own in this
        profile (what a 2026-07-28 client, the pipe and an in-process runner share)."""
        info = request or RequestInfo()
        if info.profile != profile:
            from dataclasses import replace

            info = replace(info, profile=profile)
        ctx: ToolContext[Services] = ToolContext(
            caller=caller,
            deps=self.services,
            request=info,
            confirm_policy=confirm_policy or self.confirm_policy,
            confirmer=confirmer,
            deferred=deferred,
            composer=composer,
            client=client,
            conversation=conversation or self.conversation(f"{caller.user_id}:{profile}"),
            profiles=self.profiles,
            host_approves=host_approves,
            unasked=unasked,
            door=self,
            report_progress=report_progress if report_progress is not None else no_progress,
        )
        return ctx

    async def visible(self, ctx: ToolContext[Any], *, fixed_list: bool = True) -> list[Tool]:
        """The tools this call's conversation sees (a changing list only for handshake-era MCP sessions)."""
        assert ctx.conversation is not None, "contexts come from context_for, which always names a conversation"
        return await self.exposure.visible(self._toolset_of(ctx), fixed_list, ctx.conversation)

    async def call(
        self,
        ctx: ToolContext[Any],
        name: str,
        arguments: Any,
        *,
        fixed_list: bool = True,
        kind: RequestKind | None = None,
    ) -> ToolResult:
        """Run one call: exposure, the caller's bounds (`kind`: a call from a front, or nested when made inside
        another), the caller's directory entry, then dispatch (lookup, validation, the profile's middleware and
        confirmation, the tool). Never raises but for cancellation."""
        from toolsets.core.dispatch import dispatch

        toolset = self._toolset_of(ctx)
        tool = toolset.get(name)
        if tool is not None and ctx.conversation is not None:
            refusal = await self.exposure.refusal(toolset, tool, fixed_list, ctx.conversation)
            if refusal is not None:
                return refusal
        if kind is None:
            kind = RequestKind.NESTED if ctx.depth else RequestKind.CALL
        ticket = await self.admission.enter(ctx.caller.user_id, kind)
        if isinstance(ticket, Refused):
            limited = rate_limited(ticket)
            toolset.refuse(name, arguments, ctx, limited)
            return limited
        try:
            await self.enter_directory(ctx.caller)
            return await dispatch(toolset, name, arguments, ctx)
        finally:
            if ticket.holds:  # (a free ticket's `leave` is a no-op: not awaited on the hot path)
                await ticket.leave()

    async def admit_once(self, caller: Caller, kind: RequestKind) -> ToolErr | None:
        """A request that holds no slot while it runs (a task being made: its runs hold one), counted against the
        caller's bounds: None when admitted, else the `rate_limited` result to answer with."""
        ticket = await self.admission.enter(caller.user_id, kind)
        if isinstance(ticket, Refused):
            return rate_limited(ticket)
        await ticket.leave()
        return None

    @contextlib.asynccontextmanager
    async def admitted(
        self,
        caller: Caller,
        request: RequestInfo,
        kind: RequestKind,
        target: str,
        arguments: Any = None,
    ) -> AsyncIterator[None]:
        """A request that is not a tool call (a resource read, a prompt get, a completion), through the same bounds
        as calls, with its audit line (reads and prompts) when it ends. Raises `RequestRefusedError` past a bound."""
        ticket = await self.admission.enter(caller.user_id, kind)
        started = time.perf_counter()
        status, code = "error", None
        try:
            if isinstance(ticket, Refused):
                code = "rate_limited"
                raise RequestRefusedError(ticket)
            try:
                yield
                status = "ok"
            finally:
                if ticket.holds:
                    await ticket.leave()
        finally:
            sink = self.services.audit if self.services is not None and kind.audited else None
            if sink is not None:
                from toolsets.admission.request_audit import audit_request

                latency = (time.perf_counter() - started) * 1000
                audit_request(
                    sink, caller, request, kind.value, target, arguments,
                    status=status, error_code=code, latency_ms=latency, version=self._version(),
                )  # fmt: skip

    async def call_noting_list(
        self, ctx: ToolContext[Any], name: str, arguments: Any, *, fixed_list: bool = False
    ) -> tuple[ToolResult, bool]:
        """`call`, and whether the caller's tool list changed with it (progressive exposure loads and unloads
        tools): what a front that can tell its client (`notifications/tools/list_changed`) needs to know."""
        if fixed_list or not self.exposure.lists_can_change:
            return await self.call(ctx, name, arguments, fixed_list=fixed_list), False
        before = [tool.name for tool in await self.visible(ctx, fixed_list=False)]
        outcome = await self.call(ctx, name, arguments, fixed_list=False)
        return outcome, before != [tool.name for tool in await self.visible(ctx, fixed_list=False)]

    async def enter_directory(self, caller: Caller) -> None:
        """Users enter the directory on first use, from their token's claims (or by id alone). Calls of a caller
        arriving while their entry is being written wait for it (one write, not one per call)."""
        if self.services is None or self._known_users.get(caller.user_id) == caller.role:
            return  # a door without services (a test's bare toolsets) has no directory
        import anyio.lowlevel

        key = (caller.user_id, caller.role)
        loop = anyio.lowlevel.current_token()  # a door may serve several event loops (a synchronous LangGraph run)
        entering = self._entering.get(key)
        if entering is not None and entering[0] == loop:
            await entering[1].wait()
            if self._known_users.get(caller.user_id) == caller.role:
                return
        import anyio

        from toolsets.assistant.directory import enter_directory

        done = anyio.Event()
        self._entering[key] = (loop, done)
        try:
            await enter_directory(self.services.users, caller)
        except Exception:
            logger.warning("could not record user %s in the directory", caller.user_id, exc_info=True)
            return
        else:
            if len(self._known_users) > KNOWN_USERS:
                self._known_users.clear()
            self._known_users[caller.user_id] = caller.role
        finally:
            if self._entering.get(key, (None, None))[1] is done:
                del self._entering[key]
            done.set()

    def _version(self) -> str:
        version = self._builtin_version
        if version is None:
            from toolsets.pipeline.audit.audit_middleware import builtin_version

            version = self._builtin_version = builtin_version()
        return version

    def _toolset_of(self, ctx: ToolContext[Any]) -> AbstractToolset:
        return self.toolset(ctx.request.profile or ctx.caller.role)


def rate_limited(refused: Refused) -> ToolErr:
    """The result a tool call past its caller's bounds gets: `rate_limited`, retryable, with the wait in its text."""
    from toolsets.core.envelope import ToolErr
    from toolsets.core.errors import ErrorCode

    detail = {"limit": refused.limit, "retry_after_s": refused.retry_after_s}
    return ToolErr(ErrorCode.RATE_LIMITED, refused.reason, retryable=True, detail=detail)
