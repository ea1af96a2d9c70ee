"""What a version needs from whatever runs its code (in this process, or in a supervised worker)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from toolsets.extensions.plugins.context import LogSink, ProgressSink


class PluginLoadError(Exception):
    """A version could not be loaded or started; the message says why (reported, never published)."""


@dataclass(frozen=True, slots=True)
class CallInfo:
    """Who is calling, as the plugin's context shows it."""

    caller_id: str | None = None
    role: str | None = None
    request_id: str | None = None
    # `context.call_tool`: (name, arguments) -> the nested call's JSON envelope (nested.py); None: not offered
    call_tool: Callable[[Any, Any], Awaitable[dict[str, Any]]] | None = field(default=None, compare=False)
    # `context.ask` and friends: (requests) -> the JSON envelope of the client's answers (client_requests.py)
    ask_client: Callable[[Any], Awaitable[dict[str, Any]]] | None = field(default=None, compare=False)
    log: LogSink | None = field(default=None, compare=False)  # `context.log`, thread-safe, in order with progress
    client_capabilities: dict[str, Any] = field(default_factory=dict, compare=False)
    kind: str = "tool"
    max_read_bytes: int | None = None  # a resource's bound (`context.read_data`, and what crosses from a worker)

    def shown(self) -> dict[str, Any]:
        """What crosses to a worker process: the plain data of the context."""
        return {
            "caller_id": self.caller_id,
            "role": self.role,
            "request_id": self.request_id,
            "client_capabilities": self.client_capabilities,
            "kind": self.kind,
            "max_read_bytes": self.max_read_bytes,
        }


class PluginRunner(Protocol):
    async def start(self) -> None:
        """Call `create(context)` when the plugin has one. Raises PluginLoadError."""

    async def call(self, input_data: dict[str, Any], info: CallInfo, progress: ProgressSink) -> Any:
        """The plugin's `run` result; an exception raised by the plugin propagates (a handler_error)."""

    async def stop(self) -> None:
        """Call `close()` when the object has one, and release what the runner holds."""
