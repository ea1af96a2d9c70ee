"""The composition root: one `Deployment` per set of settings builds everything once and passes it down.

    settings -> store backend (SQLite or PostgreSQL, chosen once) and services -> one Redis client
    -> device bridge -> extensions (plugin catalog, workspace) -> the metrics registry (HTTP only) -> gates
    -> profiles with their middleware instances -> the front door -> fronts (MCP servers for stdio and each HTTP
    surface, the pipe of `truloop-mcp call`, in-process runners, LangGraph tools)

Nothing here is module state: two deployments in one process (say one with `--tools-dir` and gates, one
without) share no object. What a stdio server does not need to answer `initialize` (the profiles, the
toolsets, the plugin catalog, the gates, Redis conversations) is built on first use, once per deployment.

A deployment is also one async context (`async with Deployment(settings) as deployment:`, or `deployment.open()`),
the one lifecycle every front uses: the bridge, resource changes, tasks, schedules, code mode and plugins run while
it is open; the audit log is flushed and the store closed when it closes. Collaborators are passed at construction.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import anyio

from server.settings import Settings
from server.speed.list_cache import ToolListCache
from toolsets.core.context import Caller

if TYPE_CHECKING:
    from bridge.service import ChannelSender, DeviceBridge
    from server.mcp.mcp_server import TruloopMCP
    from server.runtime.metrics import ServerMetrics
    from server.schedules.engine import ScheduleEngine
    from server.schedules.ticks import TickRunner
    from server.tasks.engine import TaskEngine
    from toolsets.admission.admission import Admission
    from toolsets.assistant.directory_localities import DirectoryLocalities
    from toolsets.core.conversation import Conversations
    from toolsets.core.toolset import AbstractToolset
    from toolsets.extensions.authoring import ToolAuthoring
    from toolsets.extensions.codemode.engine import CodeMode
    from toolsets.extensions.plugins.catalog import PluginCatalog
    from toolsets.front_door import FrontDoor
    from toolsets.infra.locality import Locality
    from toolsets.profiles import Extensions, Profiles
    from toolsets.services import Services
    from toolsets.views.changes import ChangeRelay

T = TypeVar("T")

READY_WAIT_SECONDS = 2.0  # how long `ready()` waits for the user directory before the front answers anyway


class Deployment:
    """Everything one deployment is made of, built from its settings (each part once, most on first use)."""

    def __init__(
        self,
        settings: Settings,
        *,
        services: Services | None = None,
        bridge: DeviceBridge | None = None,
        stdio_front: bool = False,
        metered: bool = False,
    ) -> None:
        """`stdio_front`: this deployment serves an MCP client over stdio, which no device can connect to; unless a
        device reaches it through Redis shared with an HTTP replica, it publishes no tool only a device answers.

        `services` and `bridge` given here are the caller's: the deployment uses them, but neither runs the bridge
        nor closes the store (it does both for those it builds)."""
        self.settings = settings
        self._stdio_front = stdio_front
        self.metered = metered  # its calls are counted and timed for /metrics (the HTTP server's deployment)
        self._redis: Any = None
        self._located: tuple[Locality, Caller] | None = None  # (the directory's answer, the caller it made)
        self._door: Once[FrontDoor] = Once(self._assemble)
        self.tool_lists = ToolListCache(keep=settings.fast_paths)  # every path's `tools/list` answers, kept once
        self._closing: contextlib.AsyncExitStack | None = None  # while open by `async with`
        self._owns_bridge = bridge is None
        self._owns_services = services is None
        self.bridge = bridge if bridge is not None else self._build_bridge()
        self.services = services if services is not None else self._build_services()

    # -- shared infrastructure -------------------------------------------------------------------------------

    @property
    def redis(self) -> Any:
        """The deployment's one Redis client (None without `--redis-url`), opened on first use."""
        url = self.settings.redis_url
        if url is None:
            return None
        if self._redis is None:
            from toolsets.infra.redis_client import open_redis

            self._redis = open_redis(url.get_secret_value())
        return self._redis

    def _build_bridge(self) -> DeviceBridge:
        from bridge.pending import BackendFactory, InMemoryBridgeBackend
        from bridge.service import DeviceBridge

        backend: BackendFactory = InMemoryBridgeBackend
        if self.settings.redis_url is not None:
            from bridge.redis_backend import RedisBackend

            backend = functools.partial(RedisBackend, self.redis, prefix=self.settings.redis_prefix)
        return DeviceBridge(backend, extra_channel=sendbird_channel(self.settings))

    def _build_services(self) -> Services:
        from bridge.delivery import DeviceDelivery
        from server.runtime.audit_log import open_audit_log
        from toolsets.infra.store.backend import open_backend
        from toolsets.services import Services
        from toolsets.views.changes import ResourceChanges

        settings = self.settings
        return Services(
            backend=open_backend(settings.data_dir, settings.database_url),  # opens nothing until first used
            data_dir=settings.data_dir,
            docs_dir=settings.resolved_docs_dir,
            keys=settings.upstream_keys,
            delivery=DeviceDelivery(self.bridge),
            scheduler=self.schedules,  # runs ticks only while the deployment is open
            open_audit=functools.partial(open_audit_log, settings),  # on the first audit line, not at start
            resource_changes=ResourceChanges(self._change_relay()),
        )

    def _change_relay(self) -> ChangeRelay | None:
        """How resource changes reach the other replicas (Redis pub/sub, run while the deployment is open), when
        there is a Redis."""
        if self.settings.redis_url is None:
            return None
        from server.mcp.resource_relay import RedisChangeRelay

        return RedisChangeRelay(self.redis, prefix=self.settings.redis_prefix)

    # -- extensions --------------------------------------------------------------------------------------------

    @cached_property
    def plugins(self) -> PluginCatalog | None:
        """The tools folder's catalog (`--tools-dir`), built with its canary's store, key and audit; None without."""
        settings = self.settings
        if settings.tools_dir is None:
            return None
        from server.runtime.feedback_recorder import feedback_recorder
        from server.runtime.plugin_catalog import plugin_catalog
        from toolsets.pipeline.canary.router import CanarySetup

        feedback = feedback_recorder(settings, lambda: self.services.feedback, self._audit_event)
        canary = CanarySetup(
            self._canary_store(), settings.canary_key, self._audit_event, settings.canary_scheduled_gap
        )
        return plugin_catalog(settings, feedback, canary)

    def _audit_event(self, entry: dict[str, Any]) -> None:
        """An audit line of the deployment's own (a canary decision); the log opens on its first line."""
        sink = self.services.audit
        if sink is not None:
            sink.emit(entry)

    def _canary_store(self) -> Any:
        if self.redis is not None:
            from toolsets.pipeline.canary.redis_store import RedisCanaryStore

            return RedisCanaryStore(self.redis, prefix=self.settings.redis_prefix)
        from server.runtime.canary_setup import open_canary_store

        return open_canary_store(self.settings)

    @cached_property
    def workspace(self) -> AbstractToolset | None:
        """The workspace toolset where it is published: stdio, or HTTP with --workspace-http (member tokens)."""
        settings = self.settings
        if settings.workspace is None or not (settings.transport == "stdio" or settings.workspace_http):
            return None
        from toolsets.extensions.workspace import workspace_toolset
        from toolsets.infra.sandbox import SandboxConfig, WorkspaceSandbox

        audit = settings.audit_target
        sandbox = WorkspaceSandbox(
            SandboxConfig(
                settings.workspace,
                network=settings.workspace_network,
                unsandboxed=settings.workspace_unsandboxed,
                hidden=(settings.data_dir, *((audit.parent, audit) if isinstance(audit, Path) else ())),
            )
        )
        return workspace_toolset(
            settings.workspace,
            strict=settings.workspace_strict,
            sandbox=sandbox,
            allowed_programs=settings.workspace_allow,
        )

    @cached_property
    def tool_authoring(self) -> ToolAuthoring | None:
        """The model managing its own tools where it is published: `--tool-authoring` with `--tools-dir`, on stdio,
        or over HTTP with `--tool-authoring-http` (member tokens; never guests)."""
        settings = self.settings
        if not settings.tool_authoring or self.plugins is None or settings.tools_dir is None:
            return None
        if not (settings.transport == "stdio" or settings.tool_authoring_http):
            return None
        from toolsets.extensions.authoring import ToolAuthoring

        return ToolAuthoring(self.plugins, settings.tools_dir, self._audit_event)

    @cached_property
    def authoring(self) -> AbstractToolset | None:
        """The custom_tools toolset over `tool_authoring`, where it is published."""
        authoring = self.tool_authoring
        if authoring is None:  # (its module, ~35 ms of imports, is not loaded where it is not published)
            return None
        from toolsets.extensions.authoring import authoring_toolset

        return authoring_toolset(authoring)

    @cached_property
    def code_mode(self) -> CodeMode | None:
        """Code mode's engine (`execute_code`'s programs in the sandbox, a warm pool of interpreters) when it is on."""
        sandbox = self.settings.code_sandbox()
        if sandbox is None:
            return None
        from toolsets.extensions.codemode.engine import CodeMode, CodeModeLimits

        limits = CodeModeLimits(
            programs_per_user=self.settings.code_mode_programs_per_user, warm=self.settings.code_mode_warm
        )
        return CodeMode.sandboxed(sandbox, limits)

    @cached_property
    def extensions(self) -> Extensions:
        from toolsets.profiles import Extensions

        code = None
        if self.code_mode is not None:
            from toolsets.extensions.codemode.tools import code_toolset

            code = code_toolset(self.code_mode)
        return Extensions(
            plugins=self.plugins,
            workspace=self.workspace,
            authoring=self.authoring,
            code=code,
            code_for_guests=self.settings.code_mode_guests,
            trials=self.tool_authoring,
        )

    @cached_property
    def tasks(self) -> TaskEngine:
        """MCP tasks (server/tasks/): kept in Redis when configured, so any replica reads and finishes them and they
        outlive a restart; in memory otherwise."""
        from server.tasks.engine import TaskEngine
        from toolsets.infra.store.tasks import InMemoryTaskStore, TaskStore
        from toolsets.infra.store.tasks.redis import RedisTaskStore

        settings = self.settings
        store: TaskStore
        if self.redis is not None:
            store = RedisTaskStore(self.redis, prefix=settings.redis_prefix)
        else:
            store = InMemoryTaskStore()
        return TaskEngine(
            store,
            lambda: self.front_door,
            self.bridge,
            deferred_timeout=settings.deferred_timeout,
            stdio=settings.transport == "stdio",
        )

    @cached_property
    def schedules(self) -> ScheduleEngine:
        """Scheduled tool runs (server/schedules/): fired by docket on the deployment's Redis, or in-process."""
        from server.schedules.engine import ScheduleEngine

        settings = self.settings
        return ScheduleEngine(
            self._tick_runner,
            lambda: self.services.schedules,
            tools_ready=self._door.built,  # an embedded store is first looked at once the tools are (after initialize)
            redis_url=settings.redis_url.get_secret_value() if settings.redis_url is not None else None,
            name=f"{settings.redis_prefix}schedules",
            min_interval=settings.schedule_min_interval,
        )

    def _tick_runner(self) -> TickRunner:
        import socket

        from server.schedules.ticks import TickRunner

        return TickRunner(self.services, lambda: self.front_door, self._scheduled_deferred, socket.gethostname())

    def _scheduled_deferred(self) -> Any:
        """How a scheduled run reaches its owner's device: the bridge (nobody else can be asked)."""
        from bridge.deferred_router import DeferredRouter

        return DeferredRouter(self.bridge, None, timeout=self.settings.deferred_timeout, stdio=not self.reaches_devices)

    # -- lifecycle ---------------------------------------------------------------------------------------------

    async def __aenter__(self) -> Deployment:
        if self._closing is not None:
            raise RuntimeError("this deployment is already open")
        stack = contextlib.AsyncExitStack()
        await stack.enter_async_context(self.open())
        self._closing = stack
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        stack, self._closing = self._closing, None
        if stack is not None:
            await stack.__aexit__(*exc_info)  # type: ignore[arg-type]

    @asynccontextmanager
    async def open(self) -> AsyncIterator[Deployment]:
        """The deployment's one lifecycle, for every front (stdio, HTTP's lifespan, in-process): the bridge it built
        running, the workspace checked and the tools folder loaded before the first request, the folder watched,
        resource changes relayed, MCP tasks and scheduled runs run, code mode's interpreters warm; at the end every
        plugin closed, and (for the services it built) the audit log's queued lines written and the store closed.
        Nothing here builds the front door: a stdio server still answers `initialize` first."""
        _ = self.workspace
        try:
            async with (
                self.bridge.running() if self._owns_bridge else contextlib.nullcontext(),
                self._resource_changes(),
                self.tasks.running(),
                self.schedules.serving(),
                self._code_mode(),
                self._plugins(),
            ):
                yield self
        finally:
            if self._owns_services:
                await self._close_services()

    async def _close_services(self) -> None:
        audit = vars(self.services).get("audit")  # opened on its first line: never opened here to be flushed
        flush = getattr(audit, "flush", None)  # a sink that writes at once has none
        if flush is not None:
            flush()
        await self.services.aclose()

    @asynccontextmanager
    async def _plugins(self) -> AsyncIterator[None]:
        """While serving: the tools folder loaded, watched, and every plugin closed at the end."""
        if self.plugins is None:
            yield
            return
        async with self.plugins.running():
            yield

    @asynccontextmanager
    async def _code_mode(self) -> AsyncIterator[None]:
        """While serving: code mode's warm interpreters started, and killed at the end."""
        code_mode = self.code_mode
        if code_mode is None:
            yield
            return
        async with code_mode.serving():
            yield

    @asynccontextmanager
    async def _resource_changes(self) -> AsyncIterator[None]:
        """While serving: the docs folder watched while documents are subscribed to, and changes relayed to and
        from the other replicas by the hub's relay (`server/mcp/resource_relay.py`, built into the hub of the
        services built here when Redis is configured; services given bring their own hub, relay or not)."""
        changes = self.services.resource_changes
        if changes is None:  # services given without them: nobody hears of changes
            yield
            return
        async with anyio.create_task_group() as tg:
            tg.start_soon(changes.watch_documents, lambda: self.services.knowledge.ensure_fresh())
            await tg.start(changes.relaying)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()

    # -- composition -------------------------------------------------------------------------------------------

    @cached_property
    def toolsets(self) -> dict[str, AbstractToolset]:
        """The member and guest toolsets before policy."""
        from toolsets.profiles import assistant_toolsets

        return assistant_toolsets(self.extensions, self.settings.exposure)

    @property
    def reaches_devices(self) -> bool:
        """Whether a device can answer this deployment's deferred tools: over HTTP, or through Redis shared with the
        HTTP replica the device is connected to; in-process fronts bring their own resolver (LangGraph's interrupt)."""
        return not self._stdio_front or self.settings.redis_url is not None

    @cached_property
    def conversations(self) -> Conversations:
        """What each conversation did (gates, exposure): in Redis when configured, so replicas agree."""
        if self.redis is not None:
            from toolsets.core.redis_conversations import RedisConversations

            return RedisConversations(self.redis, prefix=self.settings.redis_prefix)
        from toolsets.core.conversation import MemoryConversations

        return MemoryConversations()

    @cached_property
    def metrics(self) -> ServerMetrics | None:
        """The deployment's own metrics registry when it is metered (docs/metrics.md), else None."""
        if not self.metered:
            return None
        from server.runtime.metrics import ServerMetrics

        bridge = self.bridge
        return ServerMetrics(deferred_waiting=lambda: bridge.waiting_calls, redis=self.settings.redis_url is not None)

    @cached_property
    def admission(self) -> Admission:
        """Each caller's bounds (`--calls-per-minute`, `--max-concurrent-calls`): counted in Redis when there is one,
        so every replica shares them, else in this process."""
        from toolsets.admission.admission import Admission

        limits = self.settings.request_limits
        limiter: Any
        if self.redis is not None:
            from toolsets.admission.redis_limiter import RedisLimiter

            limiter = RedisLimiter(self.redis, limits, prefix=self.settings.redis_prefix)
        else:
            from toolsets.admission.memory_limiter import MemoryLimiter

            limiter = MemoryLimiter(limits)
        return Admission(limiter, limits, refusals=self.metrics)

    @property
    def front_door(self) -> FrontDoor:
        """The door every front of this deployment enters by, built on first use, once."""
        return self._door.get()

    def _assemble(self) -> FrontDoor:
        """`toolsets.assembly.assemble` with what the settings add (the gates file, the extensions, conversations in
        Redis, the audit log through the services)."""
        from server import __version__
        from toolsets.assembly import assemble

        settings = self.settings
        return assemble(
            self.services,
            confirm_policy=settings.confirm,
            gates_file=settings.gates,
            exposure=settings.exposure,
            extensions=self.extensions,
            conversations=self.conversations,
            toolsets=self.toolsets,
            device_only_hidden=not self.reaches_devices,
            metrics=self.metrics,
            admission=self.admission,
            version=__version__,
        )

    async def ready(self) -> FrontDoor:
        """What a front's first call would otherwise wait for, done before the front answers anyone: the door
        composed, the default caller read from the user directory (the store opened) and, where that caller is the
        one the front serves (stdio, HTTP without sign-in), entered in it; the masking loaded. A front calls it
        before its first answer (stdio's `initialize`, HTTP's listening socket), so the first call costs what any
        other does."""
        door = self.front_door
        with anyio.move_on_after(READY_WAIT_SECONDS):  # a store slow to answer delays no answer for long
            caller = await self.caller()
            if self.settings.transport == "stdio" or not self.settings.auth_enabled:
                await door.enter_directory(caller)  # the one user this front serves: entered now, not on a first call
        # the masking's patterns compile on import (~10 ms): every audit line and told outcome needs them
        import toolsets.pipeline.audit.masking  # noqa: F401

        return door

    @property
    def profiles(self) -> Profiles:
        return self.front_door.profiles

    # -- fronts ------------------------------------------------------------------------------------------------

    def default_caller(self) -> Caller:
        """The caller without a token, in the server's zone and language (`caller()`: in their own)."""
        return default_caller(self.settings)

    @cached_property
    def directory_localities(self) -> DirectoryLocalities:
        """The zone and language the user directory holds for each user (`toolsets.infra.locality.located`)."""
        from toolsets.assistant.directory_localities import DirectoryLocalities

        return DirectoryLocalities(lambda: self.services.users)

    def caller_now(self) -> Caller | None:
        """`caller()` without awaiting, while the directory's answer it was made from is fresh (None: await it).
        Every stdio call asks: making it, or even awaiting it, each time cost ~10 µs a call."""
        made = self._located
        if made is not None and self.directory_localities.fresh(self.settings.user) is made[0]:
            return made[1]
        return None

    async def caller(self) -> Caller:
        """The caller without a token (stdio's `--user`, the pipe, in-process), in their zone and language; made
        again only when the directory's answer changes (it keeps one answer per user for a while)."""
        listed = await self.directory_localities.of(self.settings.user)
        made = self._located
        if made is not None and made[0] is listed:
            return made[1]
        from toolsets.infra.locality import located

        caller = located({}, listed, self.default_caller())
        self._located = (listed, caller)
        return caller

    def mcp_server(self, member_profile: str | None = None, **kwargs: Any) -> TruloopMCP:
        """An MCP server over this deployment; `member_profile` None is stdio's (or unauthenticated HTTP's)
        `--profile`, else what member tokens get on that surface (guests always get `guest`)."""
        from server.auth.identity import Surface
        from server.mcp.mcp_server import TruloopMCP
        from server.runtime.audit_log import known_secrets

        settings = self.settings
        profile = member_profile or settings.profile
        surface = Surface(
            member_profile=profile,
            default_caller=self.default_caller(),
            default_profile=profile,
            directory=self.directory_localities,
        )
        if settings.state_keys:
            from mcp.server.request_state import RequestStateSecurity

            kwargs["request_state_security"] = RequestStateSecurity(
                keys=[key.get_secret_value() for key in settings.state_keys]
            )
        return TruloopMCP(
            surface,
            self,
            bridge=self.bridge,
            deferred_timeout=settings.deferred_timeout,
            stdio=settings.transport == "stdio",
            log_level=settings.log_level,
            fast_paths=settings.fast_paths,  # server/speed/: installed by the server when on
            tool_lists=self.tool_lists,
            page_size=settings.page_size,
            known_secrets=known_secrets(settings),
            **kwargs,
        )


class Once(Generic[T]):
    """A part built on its first use, once; others may wait, without building it, until someone has used it."""

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._value: T | None = None
        self._made: anyio.Event | None = None  # made by the first waiter (in its event loop)

    def get(self) -> T:
        if self._value is None:
            self._value = self._build()
            if self._made is not None:
                self._made.set()
        return self._value

    async def built(self) -> None:
        """Returns once the part is built (by another's `get`)."""
        if self._value is not None:
            return
        if self._made is None:
            self._made = anyio.Event()
        await self._made.wait()


def default_caller(settings: Settings) -> Caller:
    return Caller(user_id=settings.user, role="member", timezone=settings.timezone, locale=settings.locale)


def sendbird_channel(settings: Settings) -> ChannelSender | None:
    """The Sendbird route to the user's app, when both its app id and its token are set."""
    if settings.sendbird_app_id is None or settings.sendbird_api_token is None:
        return None
    from bridge.sendbird import SendbirdChannel

    return SendbirdChannel(
        settings.sendbird_app_id,
        settings.sendbird_api_token,
        sender_id=settings.sendbird_sender_id,
        channel_url_template=settings.sendbird_channel_url_template,
    )
