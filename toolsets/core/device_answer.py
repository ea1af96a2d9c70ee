"""A device's JSON-RPC answer to a deferred call, read as the tool's result or the tool error it means.

One mapping for every front that carries a device's answer (the agent-rpc bridge, a LangGraph resume):
a result is validated strictly as the tool's result model; -32010 / -32001 / -32002 become
`permission_required` / `permission_denied` / `user_canceled`; any other error is a `device_error`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from toolsets.core.deferred import device_result
from toolsets.core.errors import ErrorCode, ToolError

if TYPE_CHECKING:
    from toolsets.core.tool import Tool

# Device-side JSON-RPC error codes
PERMISSION_REQUIRED = -32010
PERMISSION_DENIED = -32001
USER_CANCELED = -32002


@dataclass(frozen=True, slots=True)
class DeviceError:
    """The `error` member of a device's JSON-RPC response."""

    code: int
    message: str
    data: Any = None


def denied(tool: str, where: str = "on their device") -> ToolError:
    """`where`: how the user was asked ("on their device", "in the form their MCP host showed")."""
    return ToolError(
        f"The user denied {tool} {where} (PermissionDenied). Do not retry; tell the user what could not be "
        "done without it.",
        code=ErrorCode.PERMISSION_DENIED,
    )


def canceled(tool: str) -> ToolError:
    return ToolError(f"The user canceled {tool} (UserCanceled); nothing was done.", code=ErrorCode.USER_CANCELED)


def device_answer(tool: Tool, result: Any, error: DeviceError | None) -> dict[str, Any]:
    """The tool's result (as JSON data) from the device's `result`, or the `ToolError` its `error` means."""
    if error is None:
        try:
            return device_result(tool, result).model_dump(mode="json")
        except ValidationError:
            raise ToolError(
                f"The device answered {tool.name} with a malformed result.", code=ErrorCode.DEVICE_ERROR
            ) from None
    if error.code == PERMISSION_REQUIRED:
        data = error.data if isinstance(error.data, dict) else {}
        permission = data.get("requiredPermission") or "an OS permission"
        hint = (
            "The device can still ask: call confirm_interaction with permission set to it, then retry."
            if data.get("canPromptAgain")
            else "The device cannot ask again: tell the user to enable it in the system settings."
        )
        raise ToolError(
            f"{tool.name} needs the '{permission}' permission on the user's device (PermissionRequired). {hint}",
            code=ErrorCode.PERMISSION_REQUIRED,
        )
    if error.code == PERMISSION_DENIED:
        raise denied(tool.name)
    if error.code == USER_CANCELED:
        raise canceled(tool.name)
    raise ToolError(f"The device could not run {tool.name}: {error.message[:200]}", code=ErrorCode.DEVICE_ERROR)
