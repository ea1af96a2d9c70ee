"""One mapping from upstream HTTP failures to `ErrorCode`s, shared by Google Places, Supermemory
and Notion; each service supplies its name and its own advice, so the wording stays helpful.

    401, 403              -> upstream_auth           (the operator must fix the key)
    429                   -> upstream_rate_limited   (retryable)
    5xx, 408              -> upstream_unavailable    (retryable)
    other 4xx (400, 404, 422, ...) -> upstream_rejected
    timeout, connection   -> upstream_unavailable    (retryable)
    an unreadable answer  -> upstream_error          (retryable)
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from toolsets.core.errors import ErrorCode, ToolError

logger = logging.getLogger("truloop.upstream")

DETAIL_LIMIT = 300


@dataclass(frozen=True, slots=True)
class UpstreamService:
    """How a failure of one upstream is told: `{name} ... so this server could not {action}; ...`."""

    name: str  # "Google Places"
    key_variable: str  # the setting holding the key, e.g. "GOOGLE_MAPS_API_KEY"
    fix_key: str  # what to tell the user and the operator about a refused key
    retry_later: str = "the call may be retried in a moment"
    change_request: str = "Change the request before trying again."


def code_for_status(status: int) -> ErrorCode:
    """The code of an HTTP failure status (>= 400)."""
    if status in (401, 403):
        return ErrorCode.UPSTREAM_AUTH
    if status == 429:
        return ErrorCode.UPSTREAM_RATE_LIMITED
    if status >= 500 or status == 408:
        return ErrorCode.UPSTREAM_UNAVAILABLE
    return ErrorCode.UPSTREAM_REJECTED


def status_failure(
    service: UpstreamService,
    status: int,
    *,
    action: str,
    detail: str = "",
    label: str = "",
    code: ErrorCode | None = None,
) -> ToolError:
    """The ToolError of an HTTP failure. `detail` is the upstream's own explanation (already free of
    secrets), `label` what to print after "HTTP" (default: the status), `code` overrides the mapping
    for an upstream that signals a key problem some other way."""
    code = code or code_for_status(status)
    label = label or str(status)
    logger.warning("%s answered HTTP %s to %s", service.name, label, action)
    if code is ErrorCode.UPSTREAM_AUTH:
        message = (
            f"{service.name} refused the {service.key_variable} (HTTP {label}), so this server could not {action}. "
            f"{service.fix_key} Retrying will not help."
        )
    elif code is ErrorCode.UPSTREAM_RATE_LIMITED:
        message = (
            f"{service.name} rate limited this server (HTTP {label}: too many requests or quota used up), so it "
            f"could not {action}; the call may be retried after a short wait."
        )
    elif code is ErrorCode.UPSTREAM_UNAVAILABLE:
        message = (
            f"{service.name} is unavailable (HTTP {label}), so this server could not {action}; {service.retry_later}."
        )
    else:
        shown = clip(detail) or "no reason given"
        message = f"{service.name} refused to {action} (HTTP {label}: {shown}). {service.change_request}"
    return ToolError(message, code=code)


def transport_failure(service: UpstreamService, exc: Exception, *, action: str, hint: str = "") -> ToolError:
    """The ToolError of a request that got no answer (an httpx.TransportError); `hint` is appended."""
    import httpx

    what = "it did not answer in time" if isinstance(exc, httpx.TimeoutException) else "it could not be reached"
    logger.warning("%s: %s failed: %s", service.name, action, type(exc).__name__)
    message = f"{service.name} is unavailable ({what}), so this server could not {action}; {service.retry_later}."
    return ToolError(message + (f" {hint}" if hint else ""), code=ErrorCode.UPSTREAM_UNAVAILABLE)


def unreadable_answer(service: UpstreamService, *, action: str) -> ToolError:
    logger.warning("%s answered %s in an unexpected form", service.name, action)
    return ToolError(
        f"{service.name} answered the request to {action} in a form this server does not understand; the call "
        "may be retried later, and the operator should check the server log.",
        code=ErrorCode.UPSTREAM_ERROR,
    )


def redact(text: str, secret: str | None) -> str:
    """`text` with `secret` replaced, so an upstream echoing the key never shows it."""
    return text.replace(secret, "[redacted]") if secret else text


def clip(text: str, limit: int = DETAIL_LIMIT) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."
