"""An asyncio loop on a daemon thread of its own, for one plugin version's async code.

A plugin's `async def run` that blocks (a `time.sleep`, a busy loop) then blocks only this loop, never
the server's: the server awaits the result from afar and gives up at the plugin's timeout. What the plugin
raises, `SystemExit` and `KeyboardInterrupt` included (asyncio would let those stop the loop and reach the
server's task), comes back as an `Exception` for that call only.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from typing import Any, TypeVar

from toolsets.extensions.plugins.failures import contained

T = TypeVar("T")


async def _awaited(awaitable: Awaitable[T]) -> T:
    try:
        return await awaitable
    except Exception:
        raise
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise  # the caller withdrew the call (its timeout)
        raise contained(asyncio.CancelledError("the plugin raised CancelledError")) from None
    except BaseException as exc:  # SystemExit, KeyboardInterrupt, GeneratorExit...: this call's failure only
        raise contained(exc) from None


class PluginLoop:
    def __init__(self, label: str) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name=f"plugin-loop-{label}", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    async def run(self, awaitable: Awaitable[T]) -> T:
        """The awaitable's result, awaited on this loop; cancelling the caller cancels it there too."""
        future = asyncio.run_coroutine_threadsafe(_awaited(awaitable), self._loop)
        return await asyncio.wrap_future(future)

    def stop(self) -> None:
        """Stop the loop once what it runs yields (a task stuck in blocking code keeps its thread until then)."""
        if not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._loop.stop)

    @property
    def thread(self) -> threading.Thread:
        return self._thread


def is_async(function: Any) -> bool:
    import inspect

    # a function, a bound method, or an object whose class defines `async def __call__`
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(function.__call__)
