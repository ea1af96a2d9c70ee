"""Exceptions a tool may raise; the dispatcher turns each into an envelope."""

from __future__ import annotations

from typing import Any


class ToolError(Exception):
    """A failure the model should read and act on (the message is shown verbatim).

    `code` is machine-readable (`not_found`, `forbidden`, `upstream_unavailable`, ...);
    `retryable` tells the model that the same call may succeed later.
    """

    def __init__(self, message: str, *, code: str = "tool_error", retryable: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.retryable = retryable


class ToolInputError(ToolError):
    """An argument is well-typed but not acceptable; the message says what a valid value looks like."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="validation")


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
