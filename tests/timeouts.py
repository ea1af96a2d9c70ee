"""What a test's timeout reports before pytest-timeout's thread dump ends the run: the test's id and the phase it
hung in (setup, call or teardown), then every running asyncio task of every event loop with its whole await chain
(pytest-timeout's `thread` method prints the threads' stacks, where a task waiting on a lock, an event or a
connection does not appear at all, and names no test). tests/conftest.py installs it as the timer of every test."""

from __future__ import annotations

import asyncio
import gc
import inspect
import textwrap
import threading
import traceback
from collections.abc import Iterator
from types import FrameType
from typing import Any

import pytest
import pytest_timeout

PHASE = pytest.StashKey[str]()


def await_chain(awaited: Any) -> Iterator[FrameType]:
    """The frames of a coroutine (or generator, or async generator) and of everything it awaits, outermost first.
    The chain ends at an awaitable without frames: `asend()` of an async generator, where `waiting_generators`
    takes over."""
    seen = 0
    while awaited is not None and seen < 200:
        seen += 1
        frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
        frame = frame or getattr(awaited, "ag_frame", None)
        if frame is not None:
            yield frame
        following = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
        awaited = following or getattr(awaited, "ag_await", None)


def waiting_generators() -> list[Any]:
    """The async generators suspended inside an await, not at a `yield`: an async fixture in its setup or teardown, an
    `asynccontextmanager` entering or leaving (a task's await chain cannot reach them through `asend()`)."""
    return [o for o in gc.get_objects() if inspect.isasyncgen(o) and o.ag_await is not None]


def _formatted(frames: Iterator[FrameType]) -> list[str]:
    entries = traceback.format_list(traceback.StackSummary.extract((frame, frame.f_lineno) for frame in frames))
    return [textwrap.indent(entry, "  ") for entry in entries]


def running_loops() -> list[asyncio.AbstractEventLoop]:
    return [o for o in gc.get_objects() if isinstance(o, asyncio.AbstractEventLoop) and o.is_running()]


def task_report() -> str:
    """Every running loop's tasks, each with its await chain (file, line, function, the line's text)."""
    threads = {thread.ident: thread.name for thread in threading.enumerate()}
    out: list[str] = []
    for loop in running_loops():
        ident = getattr(loop, "_thread_id", None)
        try:
            tasks = asyncio.all_tasks(loop)
        except RuntimeError as exc:  # the set changed under us too often
            out.append(f"loop {loop!r}: tasks unreadable ({exc})\n")
            continue
        out.append(
            f"event loop {type(loop).__name__} on thread {threads.get(ident, '?')} ({ident}): {len(tasks)} tasks\n"
        )
        for task in sorted(tasks, key=lambda t: t.get_name()):
            out.append(f"  task {task.get_name()}{' (cancelling)' if task.cancelling() else ''}:\n")
            out += _formatted(await_chain(task.get_coro()))
    if not out:
        out.append("no event loop is running\n")
    for generator in waiting_generators():
        out.append(f"async generator {generator.__qualname__}, waiting:\n")
        out += _formatted(await_chain(generator))
    return "".join(out)


def report_and_exit(item: pytest.Item, settings: Any) -> None:
    """The timer's end: the test's id, its phase and its tasks, then pytest-timeout's report (captured output, the
    threads' stacks) and its `os._exit(1)`."""
    if not settings.disable_debugger_detection and pytest_timeout.is_debugging():
        return
    terminal = item.config.get_terminal_writer()
    try:
        capture = item.config.pluginmanager.getplugin("capturemanager")
        if capture:
            capture.suspend_global_capture(item)  # what is written next reaches the terminal, not the capture
        phase = item.stash.get(PHASE, "setup")
        terminal.line()
        terminal.sep("+", title=f"Timeout after {settings.timeout:g} s in {phase}: {item.nodeid}")
        terminal.sep("~", title="asyncio tasks")
        terminal.write(task_report())
        terminal.flush()
    except Exception:
        traceback.print_exc()
    pytest_timeout.timeout_timer(item, settings)


def start_timer(item: pytest.Item, settings: Any) -> bool | None:
    """pytest-timeout's `thread` timer, ending in `report_and_exit`; None leaves other methods to pytest-timeout."""
    if settings.method != "thread":
        return None
    timer = threading.Timer(settings.timeout, report_and_exit, (item, settings))
    timer.name = f"timeout {item.nodeid}"
    timer.daemon = True

    def cancel() -> None:
        timer.cancel()
        timer.join()

    item.cancel_timeout = cancel  # type: ignore[attr-defined]  # where pytest-timeout's cancel hook looks
    timer.start()
    return True
