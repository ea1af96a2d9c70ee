"""What a call learns about itself on its way down, for its audit line: a small per-call record.

The audit middleware opens one per call; code far below it that does not hold the call (the deferred
router, the canary router) writes into it through `note_*`, which do nothing outside a call.
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
_preset: ContextVar[tuple[str, Route] | None] = ContextVar("truloop_preset_version", default=None)


class OpenNotes:
    """A call's notes while it runs (`OpenNotes()` ... `close`): a context manager's work, without a generator."""

    __slots__ = ("_token", "_unset", "notes")

    def __init__(self) -> None:
        preset = _preset.get()  # a version chosen before the call's notes opened: both its lines carry it
        self.notes = CallNotes() if preset is None else CallNotes(tool_version=preset[0], route=preset[1])
        self._token = _current.set(self.notes)
        self._unset = _preset.set(None) if preset is not None else None  # not inherited by nested calls

    def close(self) -> None:
        if self._unset is not None:
            _preset.reset(self._unset)
        _current.reset(self._token)


@contextmanager
def preset_version(tool_version: str, route: Route) -> Iterator[None]:
    """For a router that picks the version before the audit middleware opens the call's notes (the canary)."""
    token = _preset.set((tool_version, route))
    try:
        yield
    finally:
        _preset.reset(token)


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
