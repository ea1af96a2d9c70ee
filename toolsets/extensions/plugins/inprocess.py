"""`--plugin-isolation inprocess` (the default): a plugin's code runs in the server's process.

Sync code runs on the catalog's plugin threads (threads.py: daemon threads, so a slow plugin never takes the
threads the stores use and a stuck one never holds the process's exit); async code runs on the version's own loop
(plugin_loop.py). Either way the server's event loop is never blocked, and a call past its timeout is abandoned at
once (its thread finishes, or not, in the background; the overrun is logged when it does). Whatever the plugin
raises, `SystemExit` and `KeyboardInterrupt` included, ends that call only (failures.contained).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import anyio

from toolsets.extensions.plugins.context import PluginContext, ProgressSink, plugin_logger
from toolsets.extensions.plugins.module import PluginModule, fitted, forget
from toolsets.extensions.plugins.plugin_loop import PluginLoop, is_async
from toolsets.extensions.plugins.plugin_runner import CallInfo, PluginLoadError
from toolsets.extensions.plugins.threads import PluginThreads

logger = logging.getLogger("truloop.plugins")


class InProcessRunner:
    def __init__(
        self,
        loaded: PluginModule,
        *,
        tool_name: str,
        version: str,
        data_dir: Path,
        threads: PluginThreads,
        owner: str | None = None,
    ) -> None:
        self._loaded = loaded
        self._threads = threads
        self._owner = owner or tool_name  # what its threads abandoned at a timeout are counted under
        self._tool_name = tool_name
        self._version = version
        self._data_dir = data_dir
        self._run: Callable[..., Any] | None = loaded.run
        self._instance: Any = None
        self._loop: PluginLoop | None = None

    def _context(self, info: CallInfo | None = None, progress: ProgressSink | None = None) -> PluginContext:
        extra: dict[str, Any] = {} if progress is None else {"_progress": progress}
        info = info or CallInfo()
        if info.call_tool is not None:
            extra["_nested"] = _on_this_loop(info.call_tool)
        if info.ask_client is not None:
            extra["_client"] = _on_this_loop(info.ask_client)
        if info.log is not None:
            extra["_log"] = info.log
        if info.max_read_bytes is not None:
            extra["max_read_bytes"] = info.max_read_bytes
        return PluginContext(
            tool_name=self._tool_name,
            version=self._version,
            data_dir=self._data_dir,
            logger=plugin_logger(self._tool_name),
            caller_id=info.caller_id,
            role=info.role,
            request_id=info.request_id,
            kind=info.kind,
            client_capabilities=dict(info.client_capabilities),
            **extra,
        )

    async def start(self) -> None:
        create = self._loaded.create
        if create is None:
            return
        try:
            self._instance = await self._invoke(create, self._context())
        except Exception as exc:
            raise PluginLoadError(f"create(context) raised {type(exc).__name__}: {exc}") from None
        run = getattr(self._instance, "run", None)
        if not callable(run):
            await self.stop()
            raise PluginLoadError("create(context) returned an object without a run(input_data, context) method")
        self._run = run

    async def call(self, input_data: dict[str, Any], info: CallInfo, progress: ProgressSink) -> Any:
        assert self._run is not None  # module.py guarantees run or create; start() guarantees the object's run
        return await self._invoke(self._run, input_data, self._context(info, progress))

    async def stop(self) -> None:
        try:
            close = getattr(self._instance, "close", None) if self._instance is not None else None
            if callable(close):
                await self._invoke(close)
        finally:
            self._instance = None
            if self._loop is not None:
                self._loop.stop()
            forget(self._loaded.name)

    async def _invoke(self, function: Callable[..., Any], *args: Any) -> Any:
        args = fitted(function, *args)
        started = time.monotonic()
        abandoned = False

        def overran() -> None:
            if abandoned:
                logger.warning(
                    "plugin %s (version %s): a call abandoned at its timeout ended %.1f s after it started",
                    self._tool_name,
                    self._version,
                    time.monotonic() - started,
                )

        def in_thread() -> Any:
            try:
                return function(*args)
            finally:
                overran()

        async def on_loop() -> Any:
            try:
                return await function(*args)
            finally:
                overran()

        try:
            if is_async(function):
                return await self._plugin_loop().run(on_loop())
            result = await self._threads.run(partial(in_thread), owner=self._owner)
            if hasattr(result, "__await__"):  # a sync function that returned an awaitable
                return await self._plugin_loop().run(result)
            return result
        except anyio.get_cancelled_exc_class():
            abandoned = True
            raise

    def _plugin_loop(self) -> PluginLoop:
        if self._loop is None:
            self._loop = PluginLoop(self._tool_name)
        return self._loop


def _on_this_loop(serve: Any) -> Any:
    """`context.call_tool` or `context.ask` from the plugin's threads or loop: served on the server's loop."""
    loop = asyncio.get_running_loop()

    def on_loop(*args: Any) -> concurrent.futures.Future[dict[str, Any]]:
        return asyncio.run_coroutine_threadsafe(serve(*args), loop)

    return on_loop
