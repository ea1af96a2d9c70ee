"""One loaded version of one plugin file: its spec, its runner, and the calls running on it.

A call holds the version it started with, so a reload never changes the code under a running call.
A retired version (its file changed, went away, or the server stops) is closed once its last call
ends: `close()` runs exactly once per version, never under a running call.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

import anyio

from toolsets.core.call_notes import Route
from toolsets.core.context import ToolContext
from toolsets.core.errors import ErrorCode, InputRequired, ToolError
from toolsets.extensions.plugins.failures import contained
from toolsets.extensions.plugins.plugin_runner import CallInfo, PluginRunner
from toolsets.extensions.plugins.source import PluginSource

if TYPE_CHECKING:
    from toolsets.extensions.plugins.spec import PluginSpec
    from toolsets.extensions.plugins.spec_kinds import AnySpec

logger = logging.getLogger("truloop.plugins")

START_SECONDS = 30.0  # create(context) may take this long
CLOSE_SECONDS = 10.0
PROGRESS_SECONDS = 2.0  # one progress notification may wait this long for the client
PROGRESS_WAITING = 64  # progress reports of one call waiting to be sent to the client; past it they are dropped


class PluginVersion:
    def __init__(self, spec: AnySpec, source: PluginSource, runner: PluginRunner) -> None:
        self.spec = spec
        self.source = source
        self.runner = runner
        self.loaded_at = time.time()
        self._active = 0
        self._retired = False
        self._closed = False

    @property
    def name(self) -> str:
        """Its key in the catalog: a tool's name, a resource's URI or template, `prompt:<name>`."""
        return self.spec.key

    @property
    def version(self) -> str:
        return self.source.version

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def active_calls(self) -> int:
        return self._active

    @cached_property
    def tool(self) -> Any:
        from toolsets.extensions.plugins.tool import PluginTool

        return PluginTool(self)

    @property
    def tool_spec(self) -> PluginSpec:
        """The spec of a tool version (a resource's or a prompt's has no schemas)."""
        from toolsets.extensions.plugins.spec import PluginSpec

        if not isinstance(self.spec, PluginSpec):
            raise TypeError(f"{self.name} is a {self.spec.kind}, not a tool")
        return self.spec

    @cached_property
    def input_validator(self) -> Any:
        return _validator(self.tool_spec.input_schema) if self.spec.kind == "tool" else None

    @cached_property
    def output_validator(self) -> Any:
        schema = self.tool_spec.output_schema if self.spec.kind == "tool" else None
        return None if schema is None else _validator(schema)

    async def start(self) -> None:
        with anyio.fail_after(START_SECONDS):
            await self.runner.start()

    async def call(
        self,
        arguments: Mapping[str, Any],
        ctx: ToolContext[Any],
        route: Route = "stable",
        *,
        max_read_bytes: int | None = None,
    ) -> Any:
        """The plugin's result for these (validated) arguments, on this version whatever is reloaded meanwhile;
        `route` is how the canary router chose it (for the audit line); `max_read_bytes`: a resource's bound."""
        if self._closed:
            raise ToolError(
                f"The tool {self.name} was replaced or removed while this call waited; call it again.",
                retryable=True,
            )
        self._active += 1
        try:
            return await self._run(dict(arguments), ctx, max_read_bytes)
        finally:
            self._active -= 1
            if self._retired and not self._active:
                await self._close()

    async def retire(self, close_seconds: float = CLOSE_SECONDS) -> None:
        """No new calls will find this version; close it now (waiting `close_seconds` at most), or when its last
        call ends."""
        self._retired = True
        if not self._active:
            await self._close(close_seconds)

    async def _run(self, arguments: dict[str, Any], ctx: ToolContext[Any], max_read_bytes: int | None = None) -> Any:
        from toolsets.extensions.plugins.client_requests import ClientRequests
        from toolsets.extensions.plugins.nested import NestedCalls

        tool = self.spec.kind == "tool"
        client = ClientRequests(
            ctx,
            may_ask=not tool or self.tool_spec.asks_client,
            may_start_task=tool and self.tool_spec.task_start == "run",
        )
        send, receive = anyio.create_memory_object_stream[tuple[Any, ...]](PROGRESS_WAITING)
        put = _thread_safe_put(send)
        info = CallInfo(
            ctx.caller.user_id,
            ctx.caller.role,
            ctx.request.request_id,
            call_tool=NestedCalls(ctx),
            ask_client=client.ask,
            log=lambda level, data, logger: put(("log", level, data, logger)),
            client_capabilities=client.capabilities(),
            kind=self.spec.kind,
            max_read_bytes=max_read_bytes,
        )

        def progress(value: float, total: float | None, message: str | None) -> None:
            put(("progress", value, total, None if message is None else str(message)[:1000]))

        timeout = self.spec.timeout_s
        started = time.monotonic()
        value: Any = None
        failure: Exception | None = None
        async with anyio.create_task_group() as tg:
            tg.start_soon(_forward_notes, receive, ctx)
            try:
                with anyio.move_on_after(timeout) as deadline:
                    value = await self.runner.call(arguments, info, progress)
            except Exception as exc:  # raised here rather than through the task group (which would wrap it)
                failure = exc
            except BaseException as exc:
                if isinstance(exc, anyio.get_cancelled_exc_class()):
                    raise
                failure = contained(exc)  # a runner that let a SystemExit through: still this call's failure
            finally:
                send.close()
        if client.pending is not None:  # 2026-07-28: the questions went out; the client calls again with answers
            raise InputRequired(client.pending)
        if failure is not None:
            raise client.refused if client.refused is not None else failure
        if deadline.cancelled_caught:
            logger.warning(
                "plugin %s (version %s) did not finish within its timeout_s=%g; the call returned timeout",
                self.name,
                self.version,
                timeout,
            )
            raise ToolError(
                f"The tool {self.name} did not finish within {timeout:g} s and was stopped waiting for; "
                "its result is unknown. Tell the user it timed out rather than calling it again at once.",
                code=ErrorCode.TIMEOUT,
                retryable=False,
            )
        logger.debug("plugin %s answered in %.1f ms", self.name, (time.monotonic() - started) * 1000)
        return value

    async def _close(self, seconds: float = CLOSE_SECONDS) -> None:
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True), anyio.move_on_after(seconds) as scope:
            try:
                await self.runner.stop()
            except Exception as exc:
                logger.warning(
                    "plugin %s (version %s): close() raised %s: %s", self.name, self.version, type(exc).__name__, exc
                )
        if scope.cancelled_caught:
            logger.warning("plugin %s (version %s): close() took longer than %g s", self.name, self.version, seconds)

    def __repr__(self) -> str:
        return f"<PluginVersion {self.name}@{self.version} {self.source.path.name}>"


def _validator(schema: Mapping[str, Any]) -> Any:
    from jsonschema import validators

    cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _thread_safe_put(send: Any) -> Any:
    """Progress reports and log messages may come from the plugin's threads or loop: hop onto this loop to queue
    them, in order. Past PROGRESS_WAITING waiting, one is dropped; after the call nobody listens any more."""
    import asyncio

    loop = asyncio.get_running_loop()
    home = threading.get_ident()

    def queue(item: tuple[Any, ...]) -> None:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.WouldBlock):
            send.send_nowait(item)

    def put(item: tuple[Any, ...]) -> None:
        if threading.get_ident() == home:
            queue(item)
        elif not loop.is_closed():
            loop.call_soon_threadsafe(queue, item)

    return put


async def _forward_notes(receive: Any, ctx: ToolContext[Any]) -> None:
    """The call's progress reports and log messages, to the client, in the order the plugin made them."""
    async with receive:
        async for item in receive:
            with anyio.move_on_after(PROGRESS_SECONDS):
                try:
                    if item[0] == "progress":
                        await ctx.report_progress(*item[1:])
                    elif ctx.client is not None:
                        await ctx.client.log(*item[1:])
                except Exception:
                    logger.debug("a progress report or log message was not sent", exc_info=True)
