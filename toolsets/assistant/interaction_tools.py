"""interaction toolset: a confirmation dialog on the user's device (deferred)."""

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, Field

from toolsets.core.annotations import ToolHints
from toolsets.core.deferred import DeviceMethod, ElicitationForm
from toolsets.core.errors import CallDeferred
from toolsets.core.toolset import Toolset
from toolsets.words.catalog import tr

interaction_toolset = Toolset("interaction")


class ConfirmationResult(BaseModel):
    confirmed: bool = Field(description="True when the user confirmed, False when they chose the other option")


def _ask_in_client(arguments: Mapping[str, Any], locale: str) -> ElicitationForm:
    label = arguments.get("confirm_label") or tr(locale, "Confirm")
    schema = {
        "type": "object",
        "properties": {"confirmed": {"type": "boolean", "title": label, "description": arguments["message"]}},
        "required": ["confirmed"],
    }
    return ElicitationForm(f"{arguments['title']}: {arguments['message']}", schema)


CONFIRM_DIALOG = DeviceMethod(
    "interaction.confirm",
    {
        "title": "title",
        "message": "message",
        "confirm_label": "confirmLabel",
        "cancel_label": "cancelLabel",
        "permission": "permission",
    },
    form=_ask_in_client,
)


@interaction_toolset.tool(hints=ToolHints(idempotent=False), device=CONFIRM_DIALOG)
async def confirm_interaction(
    notification_message: Annotated[
        str, Field(description="Short text shown while the dialog is pending", max_length=200)
    ],
    title: Annotated[str, Field(description="Dialog title", min_length=1, max_length=100)],
    message: Annotated[str, Field(description="The question to confirm", min_length=1, max_length=1000)],
    confirm_label: Annotated[str | None, Field(description="Label of the confirm button", max_length=40)] = None,
    cancel_label: Annotated[str | None, Field(description="Label of the other button", max_length=40)] = None,
    permission: Annotated[
        str | None,
        Field(description="An OS permission to request when the user confirms, e.g. calendar.read", max_length=100),
    ] = None,
) -> ConfirmationResult:
    """Ask the user to confirm something in a dialog on their device (optionally requesting an OS permission on
    confirm). Use before acting on the user's behalf when you are not sure they want it."""
    raise CallDeferred(notification_message=notification_message)
