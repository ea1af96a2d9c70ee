"""The one error vocabulary (`ErrorCode`) and the exceptions a tool may raise; the dispatcher
turns each into an envelope."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    """Every machine-readable code a tool, the dispatcher or the bridge puts in an error envelope.

    `.meaning` is what the code tells a model (docs/errors.md is checked against it) and
    `.retryable` whether the same call may succeed later (the default of `ToolError.retryable`).
    """

    # the dispatcher
    UNKNOWN_TOOL = "unknown_tool"
    VALIDATION = "validation"
    CANCELLED = "cancelled"
    HANDLER_ERROR = "handler_error"
    TOOL_ERROR = "tool_error"
    # refusals raised by tools
    NOT_FOUND = "not_found"
    FORBIDDEN = "forbidden"
    NOT_CONFIGURED = "not_configured"
    RATE_LIMITED = "rate_limited"
    STORE_UNAVAILABLE = "store_unavailable"
    PRECONDITION = "precondition"
    # deferred tools and the device bridge
    NO_ROUTE = "no_route"
    BRIDGE_UNAVAILABLE = "bridge_unavailable"
    TIMEOUT = "timeout"
    DEVICE_ERROR = "device_error"
    PERMISSION_DENIED = "permission_denied"
    PERMISSION_REQUIRED = "permission_required"
    USER_CANCELED = "user_canceled"
    # the MCP client
    CLIENT_CAPABILITY = "client_capability"
    # upstream APIs (Google Places, Supermemory, Notion): toolsets/infra/upstream/failures.py
    UPSTREAM_AUTH = "upstream_auth"
    UPSTREAM_RATE_LIMITED = "upstream_rate_limited"
    UPSTREAM_REJECTED = "upstream_rejected"
    UPSTREAM_UNAVAILABLE = "upstream_unavailable"
    UPSTREAM_ERROR = "upstream_error"

    @property
    def retryable(self) -> bool:
        return _ABOUT[self].retryable

    @property
    def meaning(self) -> str:
        return _ABOUT[self].meaning


@dataclass(frozen=True, slots=True)
class _About:
    retryable: bool
    meaning: str


_ABOUT: dict[ErrorCode, _About] = {
    ErrorCode.UNKNOWN_TOOL: _About(
        False, "The tool name is not in the caller's profile; the text lists the tools that are."
    ),
    ErrorCode.VALIDATION: _About(
        False,
        "The arguments (or a device's answer) fail the schema or a tool's own check; "
        "the text says what a valid value looks like.",
    ),
    ErrorCode.CANCELLED: _About(
        False,
        "A destructive tool the user declined or dismissed, or that could not be confirmed under "
        "`--confirm strict` (envelope status `cancelled`).",
    ),
    ErrorCode.HANDLER_ERROR: _About(
        False, "The tool crashed; the model sees only the exception type (the server log has the rest)."
    ),
    ErrorCode.TOOL_ERROR: _About(False, "A tool refused without naming a more specific code."),
    ErrorCode.NOT_FOUND: _About(
        False, "The user, event, memory or other object named does not exist or is not visible to the caller."
    ),
    ErrorCode.FORBIDDEN: _About(
        False, "The caller may see the object but not do this to it (only the organiser edits an event)."
    ),
    ErrorCode.NOT_CONFIGURED: _About(
        False, "The server lacks a setting the tool needs (an API key, the docs folder); the text names it."
    ),
    ErrorCode.RATE_LIMITED: _About(
        True,
        "This server's own per-caller limit was reached (`--calls-per-minute`, `--max-concurrent-calls`, relay "
        "messages); the text says how many seconds to wait. A resource read or prompt get past the same bounds gets "
        "the JSON-RPC error `-32000` with `data.code` `rate_limited` and `data.retryAfter` "
        "([security.md](security.md#per-user-rate-limits)).",
    ),
    ErrorCode.PRECONDITION: _About(
        True,
        "A gate (`--gates`) or progressive exposure: the tool did not run; the text names what to call first "
        "(and with which argument value), after which the same call succeeds.",
    ),
    ErrorCode.STORE_UNAVAILABLE: _About(
        True,
        "The shared database (PostgreSQL) cannot be reached right now (down or restarting); nothing was "
        "changed, retry in a moment.",
    ),
    ErrorCode.NO_ROUTE: _About(
        False, "A deferred tool cannot reach the user's device in this session; the text says which route to add."
    ),
    ErrorCode.BRIDGE_UNAVAILABLE: _About(
        True, "The store of pending device calls (Redis) is unreachable, or lost the call."
    ),
    ErrorCode.TIMEOUT: _About(
        True,
        "The device did not answer within `--deferred-timeout`; the call was withdrawn; or a plugin "
        "ran past its `timeout_s` (then `retryable: false`: the same call would likely time out again).",
    ),
    ErrorCode.DEVICE_ERROR: _About(False, "The device could not run the call, or answered with a malformed result."),
    ErrorCode.PERMISSION_DENIED: _About(False, "The user denied the request on the device (or declined the form)."),
    ErrorCode.PERMISSION_REQUIRED: _About(
        False, "The device needs an OS permission first; the text names it and whether the app can still ask."
    ),
    ErrorCode.USER_CANCELED: _About(
        False, "The user cancelled on the device (or dismissed the form); nothing was done."
    ),
    ErrorCode.CLIENT_CAPABILITY: _About(
        False,
        "The call needs the client to answer something it did not declare it can (elicitation, sampling or "
        "roots); on 2026-07-28 this is the JSON-RPC error -32021 instead of a tool result.",
    ),
    ErrorCode.UPSTREAM_AUTH: _About(
        False, "An upstream API refused the server's key (HTTP 401/403); the operator must fix the key."
    ),
    ErrorCode.UPSTREAM_RATE_LIMITED: _About(
        True, "An upstream API is rate limiting this server (HTTP 429); retry after a short wait."
    ),
    ErrorCode.UPSTREAM_REJECTED: _About(
        False, "An upstream API refused the request itself (HTTP 400, 404, 422, other 4xx); change the request."
    ),
    ErrorCode.UPSTREAM_UNAVAILABLE: _About(
        True, "An upstream API failed (HTTP 5xx), timed out or could not be reached; retry in a moment."
    ),
    ErrorCode.UPSTREAM_ERROR: _About(True, "An upstream API answered in a form this server does not understand."),
}


class ToolError(Exception):
    """A failure the model should read and act on (the message is shown verbatim).

    `code` is an `ErrorCode` or its string value (an unknown string raises ValueError);
    `retryable` tells the model that the same call may succeed later, and defaults to the code's.
    """

    def __init__(
        self,
        message: str,
        *,
        code: ErrorCode | str = ErrorCode.TOOL_ERROR,
        retryable: bool | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = ErrorCode(code)
        self.retryable = self.code.retryable if retryable is None else retryable
        self.detail = detail  # machine-readable particulars a front may need (e.g. the capabilities missing)


class ToolInputError(ToolError):
    """An argument is well-typed but not acceptable; the message says what a valid value looks like."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code=ErrorCode.VALIDATION)


class CallDeferred(Exception):  # noqa: N818 - the seed's name (pydantic-ai's too)
    """Raised by a tool that cannot run in the server: the client's side must answer it.

    `arguments` are the validated tool arguments; `notification_message` is the text the
    client shows while it works and never travels inside the JSON-RPC params.
    """

    def __init__(self, arguments: dict[str, Any] | None = None, *, notification_message: str | None = None) -> None:
        super().__init__("call deferred to the client")
        self.arguments = arguments or {}
        self.notification_message = notification_message


class InputRequired(Exception):  # noqa: N818 - a control-flow signal, not an error
    """A front-end port needs another round trip with the client before the call can finish.

    The payload is opaque to the toolsets layer (the MCP front puts an
    `InputRequiredResult` in it); the dispatcher hands it back unchanged.
    """

    def __init__(self, payload: Any) -> None:
        super().__init__("input required from the client")
        self.payload = payload


class CallCancelled(Exception):  # noqa: N818 - an outcome, not a failure
    """The call did not run because the user (or the policy on their behalf) said no; the reason is shown."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
