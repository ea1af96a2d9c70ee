"""The tools in-process, configured exactly as a server with the same settings would be.

    from server.runtime.in_process import in_process

    async with in_process() as app:                 # flags as keywords, over TRULOOP_* over defaults
        runner = app.runner()                       # toolsets.interop: every framework's call shape
        tools = app.langchain_tools()               # LangGraph / LangChain

`in_process(...)` reads the settings the way `truloop-mcp` does (`server.settings.load_settings`: the keywords
given, then the environment, then the defaults) and builds the deployment the server would build from them:
the gates file, the tools folder's plugins (loaded, watched, in the sandbox where the settings say so) with
their canary, the audit log, the workspace, conversations in Redis when `TRULOOP_REDIS_URL` is set. Every call
goes through that deployment's front door, as an MCP call does. On the way out the plugins stop, the audit log
is flushed and the store is closed.

For a custom setup (your own `Services`, toolsets or middleware), `toolsets.assembly.assemble(...)` stays.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from server.runtime.composition import Deployment
from server.settings import Settings, load_settings

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from toolsets.core.context import Caller, DeferredResolver
    from toolsets.front_door import FrontDoor
    from toolsets.interop.runner import InteropRunner


class SandboxUnavailableError(RuntimeError):
    """The settings run the tools folder only in the plugin sandbox, and it cannot start here."""


@dataclass(frozen=True)
class InProcess:
    """A deployment opened for in-process use: its front door, the settings' caller (`--user`) and profile."""

    deployment: Deployment
    caller: Caller
    profile: str
    deferred: DeferredResolver | None

    @property
    def door(self) -> FrontDoor:
        return self.deployment.front_door

    @property
    def settings(self) -> Settings:
        return self.deployment.settings

    def runner(self, **options: Any) -> InteropRunner:
        """`toolsets.interop.runner_for` over this door, for the settings' caller and profile (options override,
        e.g. `confirmer=`, `confirm_policy=`, `profile=`)."""
        from toolsets.interop.runner import runner_for

        options.setdefault("deferred", self.deferred)
        caller, profile = options.pop("caller", self.caller), options.pop("profile", self.profile)
        return runner_for(self.door, caller, profile, **options)

    def langchain_tools(self, **options: Any) -> list[BaseTool]:
        """`toolsets.interop.langgraph_tools.langchain_tools` over this door (the `langgraph` extra)."""
        from toolsets.interop.langgraph_tools import langchain_tools

        options.setdefault("device", self.deferred)
        caller, profile = options.pop("caller", self.caller), options.pop("profile", self.profile)
        return langchain_tools(self.door, caller, profile, **options)


@contextlib.asynccontextmanager
async def in_process(settings: Settings | None = None, **flags: Any) -> AsyncIterator[InProcess]:
    """The deployment `settings` (or `load_settings(flags)`: keywords by setting name, e.g. `tools_dir=`,
    `gates=`, `audit_log=`, over the environment) describes, running until the block ends."""
    settings = settings if settings is not None else load_settings(flags)
    _check_sandbox(settings)
    async with Deployment(settings) as deployment:  # its one lifecycle (server/runtime/composition.py)
        deferred: DeferredResolver | None = None
        if settings.redis_url is not None:  # a device connected to a server on the same Redis answers deferred tools
            from bridge.deferred_router import DeferredRouter

            deferred = DeferredRouter(deployment.bridge, None, timeout=settings.deferred_timeout)
        yield InProcess(deployment, await deployment.caller(), settings.profile, deferred)


def _check_sandbox(settings: Settings) -> None:
    from server.runtime.plugin_catalog import sandbox_problem

    problem = sandbox_problem(settings)
    if problem is not None:
        raise SandboxUnavailableError(problem)
