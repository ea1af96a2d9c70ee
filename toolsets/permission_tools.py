"""permission toolset: the state of an OS permission on the user's device (deferred, never requests it)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from toolsets.annotations import READ_ONLY
from toolsets.errors import CallDeferred
from toolsets.toolset import Toolset

permission_toolset = Toolset("permission")


class PermissionStatusResult(BaseModel):
    status: Literal["granted", "denied", "notDetermined", "restricted"] = Field(
        description="granted, denied, notDetermined (never asked) or restricted (blocked by the system)"
    )


@permission_toolset.tool(hints=READ_ONLY, deferred=True)
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
    raise CallDeferred({"permission": permission}, notification_message=notification_message)
