"""What a tool receives: who is calling, what the deployment provides (`deps`), and the ports.

`ToolContext[Deps]` is generic over the deployment's dependencies (the role pydantic-ai's
`RunContext[Deps]` plays): the product's tools take `ToolContext[Services]`. Ports are protocols
the front end fills (the MCP server, a test); the toolsets never know which front is calling.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from toolsets.core.roles import Role

if TYPE_CHECKING:
    from toolsets.core.call_notes import CallNotes
    from toolsets.core.conversation import Conversation
    from toolsets.core.envelope import ToolResult
    from toolsets.core.tool import Tool
    from toolsets.core.toolset import AbstractToolset

DepsT = TypeVar("DepsT")


@dataclass(frozen=True, slots=True)
class Caller:
    user_id: str
    role: Role = "member"
    timezone: str = "UTC"
    claims: Mapping[str, Any] = field(default_factory=dict)
    locale: str = "en"  # a BCP 47 tag (`ko-KR`, `en`): the language of the text this caller reads


@dataclass(frozen=True, slots=True)
class RequestInfo:
    """Where a call came from, for logs and audit: never used to decide what a caller may do."""

    request_id: str | None = None
    session_id: str | None = None  # the MCP session (handshake era); None on 2026-07-28 and in-process
    transport: str = "in-process"  # stdio | http | sse | in-process | cli | scheduled
    protocol_version: str | None = None
    profile: str | None = None


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
    message: str  # the question, in the language of the person asked (`locale`)
    key: str  # names this question (tool and arguments), so an answer is never reused for another
    locale: str = "en"  # the language the question and its form are worded in (a BCP 47 tag)
    fields: tuple[tuple[str, str], ...] = ()  # the call's arguments as labelled values, for a card that lists them


class Confirmer(Protocol):
    """Asks the human behind the client to confirm; may raise `InputRequired`."""

    async def confirm(self, request: ConfirmRequest) -> Decision: ...


@dataclass(frozen=True, slots=True)
class DeferredCall:
    """A call of a deferred tool, for the user's side to answer (see `Tool.device`)."""

    tool: Tool
    arguments: Mapping[str, Any]
    notification_message: str | None
    caller: Caller
    notes: CallNotes | None = None  # the call's notes: the route that answered is written here

    @property
    def tool_name(self) -> str:
        return self.tool.name


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
    tools: AbstractToolset  # the notification-safe toolset the composing agent may use


class Composer(Protocol):
    """Composes notification text with a model (e.g. the client's, through MCP sampling); None = cannot."""

    async def compose(self, request: ComposeRequest, ctx: ToolContext[Any]) -> str | None: ...


class ProgressReporter(Protocol):
    async def __call__(self, progress: float, total: float | None = None, message: str | None = None) -> None: ...


async def no_progress(progress: float, total: float | None = None, message: str | None = None) -> None:
    return None


class ClientPort(Protocol):
    """The MCP client behind one call, as a tool (a plugin) may reach it: questions and log messages.

    `ask` takes MCP requests by key, `{"method": "elicitation/create" | "sampling/createMessage" | "roots/list",
    "params": {...}}`, and returns the client's results by the same keys (plain JSON). A handshake-era client is
    asked in turn on its session; on 2026-07-28 the unanswered ones leave together as one `InputRequired` (the
    call runs again with the answers). A client that did not declare what a request needs raises `ToolError`
    with `ErrorCode.CLIENT_CAPABILITY` (detail: `{"capabilities": [...]}`).
    """

    def capabilities(self) -> Mapping[str, Any]:
        """What the client declared (its `ClientCapabilities`, as JSON)."""
        ...

    async def ask(self, requests: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]: ...

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """A `notifications/message` on this call's stream, if the client listens at `level`."""
        ...

    async def start_task(self) -> None:
        """Where a call that may run as an MCP task becomes one: what came before ran while the client waited (its
        questions answered in the request); on a request that asked for a task, raises `InputRequired` so the front
        makes the task, which runs the call again from the start, with those answers. Elsewhere, nothing."""
        ...


class ToolDoor(Protocol):
    """The way back in for a call made inside a call (a plugin's `context.call_tool`): the front door."""

    async def call(self, ctx: ToolContext[Any], name: str, arguments: Any) -> ToolResult: ...

    def gate_refusing_alone(self, name: str) -> str | None:
        """The gate that refuses a call of `name` made in a conversation with no call before it (a scheduled run's),
        in words; None when no gate would."""
        ...


@dataclass(slots=True)
class ToolContext(Generic[DepsT]):
    caller: Caller
    deps: DepsT
    request: RequestInfo = field(default_factory=RequestInfo)
    confirm_policy: ConfirmPolicy = ConfirmPolicy.AUTO
    confirmer: Confirmer | None = None
    deferred: DeferredResolver | None = None
    report_progress: ProgressReporter = no_progress
    composer: Composer | None = None
    client: ClientPort | None = None  # the MCP client of this call (None: in-process, the pipe, a test)
    conversation: Conversation | None = None  # what this conversation did so far (gates, exposure)
    # the deployment's profiles by name (tools that list or hand on another profile's tools read them here)
    profiles: Mapping[str, AbstractToolset] = field(default_factory=dict)
    # The user's MCP host shows each call of this context before it runs (false for a nested run).
    host_approves: bool = True
    door: ToolDoor | None = None  # the front door this call came through (None for a bare dispatch)
    depth: int = 0  # calls made inside calls: 0 for the model's own
    # A front where nobody can ever be asked says why, and what the operator can do (a refused confirmation
    # quotes it); None: the wording for a client that cannot be asked.
    unasked: str | None = None
    program: str | None = None  # the code-mode program (`execute_code`) this call was made from: its id


def nested_context(ctx: ToolContext[DepsT]) -> ToolContext[DepsT]:
    """The context of calls a model makes inside a tool call (the relay's composing model).

    Same caller, deps, confirmation policy, confirmer and deferred resolver as the outer call; no
    composer (no composing inside composing), no progress of its own, and no host approval: the host
    only ever saw the outer call.
    """
    return replace(ctx, composer=None, report_progress=no_progress, host_approves=False, depth=ctx.depth + 1)
