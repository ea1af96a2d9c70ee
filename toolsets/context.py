"""What a tool receives: who is calling, and the services and ports it may use.

Ports are protocols the front end fills (the MCP server, an agent-rpc shim, a test);
the toolsets never know which front is calling.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Role = Literal["member", "guest"]


@dataclass(frozen=True, slots=True)
class Caller:
    user_id: str
    role: Role = "member"
    timezone: str = "UTC"
    claims: Mapping[str, Any] = field(default_factory=dict)


class ConfirmPolicy(enum.StrEnum):
    """How destructive tools are confirmed (`--confirm`)."""

    AUTO = "auto"  # ask when the client can be asked, else rely on the host's own approval
    STRICT = "strict"  # ask; when nobody can be asked, cancel
    OFF = "off"  # never ask


class Decision(enum.StrEnum):
    ACCEPTED = "accepted"
    DECLINED = "declined"
    CANCELLED = "cancelled"
    UNAVAILABLE = "unavailable"  # there is no way to ask this client


@dataclass(frozen=True, slots=True)
class ConfirmRequest:
    tool_name: str
    arguments: Mapping[str, Any]
    message: str


class Confirmer(Protocol):
    """Asks the human behind the client to confirm; may raise `InputRequired`."""

    async def confirm(self, request: ConfirmRequest) -> Decision: ...


@dataclass(frozen=True, slots=True)
class DeferredCall:
    tool_name: str
    arguments: Mapping[str, Any]
    notification_message: str | None
    caller: Caller


class DeferredResolver(Protocol):
    """Gets the answer to a deferred call from the user's side (device, elicitation, ...).

    Returns the tool's result value, or raises `ToolError` / `InputRequired`.
    """

    async def resolve(self, call: DeferredCall) -> Any: ...


@dataclass(frozen=True, slots=True)
class ComposeRequest:
    """Write the notification a recipient sees for a relayed message."""

    sender_name: str
    recipient_name: str
    message: str
    recipient_timezone: str
    tools: Any  # the notification-safe toolset the composing agent may use


class Composer(Protocol):
    """Composes notification text with a model (e.g. the client's, through MCP sampling); None = cannot."""

    async def compose(self, request: ComposeRequest, ctx: ToolContext) -> str | None: ...


class ProgressReporter(Protocol):
    async def __call__(self, progress: float, total: float | None = None, message: str | None = None) -> None: ...


async def _no_progress(progress: float, total: float | None = None, message: str | None = None) -> None:
    return None


@dataclass(slots=True)
class ToolContext:
    caller: Caller
    confirm_policy: ConfirmPolicy = ConfirmPolicy.AUTO
    confirmer: Confirmer | None = None
    deferred: DeferredResolver | None = None
    report_progress: ProgressReporter = _no_progress
    composer: Composer | None = None
    services: Any = None  # the stores and upstream clients a deployment provides
