"""permission toolset: the state of an OS permission on the user's device (deferred, never requests it)."""

from collections.abc import Mapping
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, Field

from toolsets.core.annotations import READ_ONLY
from toolsets.core.deferred import DeviceMethod, ElicitationForm
from toolsets.core.errors import CallDeferred
from toolsets.core.toolset import Toolset
from toolsets.words.catalog import tr

permission_toolset = Toolset("permission")

PermissionState = Literal["granted", "denied", "notDetermined", "restricted"]
PERMISSION_STATES: tuple[PermissionState, ...] = get_args(PermissionState)
STATE_LABELS: Mapping[PermissionState, str] = {
    "granted": "Granted",
    "denied": "Denied",
    "notDetermined": "Not asked yet",
    "restricted": "Restricted by the system",
}


class PermissionStatusResult(BaseModel):
    status: PermissionState = Field(
        description="granted, denied, notDetermined (never asked) or restricted (blocked by the system)"
    )


def _ask_status(arguments: Mapping[str, Any], locale: str) -> ElicitationForm:
    permission = arguments["permission"]
    schema = {
        "type": "object",
        "properties": {
            "status": {
                "type": "string",
                "title": tr(locale, "Status of {permission}", permission=permission),
                "enum": list(PERMISSION_STATES),
                "enumNames": [tr(locale, STATE_LABELS[state]) for state in PERMISSION_STATES],
            }
        },
        "required": ["status"],
    }
    asked = tr(locale, "What is this device's '{permission}' permission set to?", permission=permission)
    return ElicitationForm(asked, schema)


@permission_toolset.tool(
    hints=READ_ONLY, device=DeviceMethod("permissions.getStatus", {"permission": "permission"}, form=_ask_status)
)
async def get_permission_status(
    notification_message: Annotated[str, Field(description="Short text shown while the device checks", max_length=200)],
    permission: Annotated[
        str,
        Field(
            description="The OS permission to check, e.g. calendar.read, location, notifications",
            min_length=1,
            max_length=100,
            pattern=r"^[A-Za-z][A-Za-z0-9_.\-]*$",
        ),
    ],
) -> PermissionStatusResult:
    """Check whether an OS permission is granted on the user's device, without asking the user for it."""
    raise CallDeferred(notification_message=notification_message)
