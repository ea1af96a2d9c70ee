"""What a call learns about itself on its way down, for its audit line: a small per-call record.

The audit middleware opens one per call; code far below it that does not hold the call (the deferred
router, later the canary router) writes into it through `note_*`, which do nothing outside a call.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

Route = Literal["stable", "canary"]
DeferredRoute = Literal["device", "elicitation", "none"]


@dataclass(slots=True)
class CallNotes:
    tool_version: str | None = None  # None: the package's version (a built-in tool)
    route: Route = "stable"
    deferred_route: DeferredRoute | None = None  # who answered a deferred tool


_current: ContextVar[CallNotes | None] = ContextVar("truloop_call_notes", default=None)


@contextmanager
def call_notes() -> Iterator[CallNotes]:
    notes = CallNotes()
    token = _current.set(notes)
    try:
        yield notes
    finally:
        _current.reset(token)


def current_notes() -> CallNotes | None:
    return _current.get()


def note_deferred_route(route: DeferredRoute) -> None:
    notes = _current.get()
    if notes is not None:
        notes.deferred_route = route


def note_version(tool_version: str, route: Route) -> None:
    """For a router that picked which version of a tool runs this call."""
    notes = _current.get()
    if notes is not None:
        notes.tool_version, notes.route = tool_version, route
