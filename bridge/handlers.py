"""Deferred-tool handlers: each maps one deferred tool to one JSON-RPC method on the device.

A new deferred tool = one handler class here plus the tool in its toolset.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Protocol

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from toolsets.context import DeferredCall


class DeferredToolHandler(Protocol):
    def get_tool_name(self) -> str: ...
    def get_method_name(self) -> str: ...
    def create_params(self, call: DeferredCall) -> dict[str, Any]: ...
    def validate_result(self, data: Any) -> BaseModel: ...
    def transform_result(self, value: BaseModel) -> dict[str, Any]: ...

    # How the MCP client can answer when no device is online (None: it cannot).
    def elicitation_form(self, call: DeferredCall) -> tuple[str, dict[str, Any]] | None: ...
    def from_elicitation(self, content: Mapping[str, Any]) -> dict[str, Any]: ...


class _Strict(BaseModel):
    """A device's result, checked strictly: `"yes"`, `1` or `"on"` are not booleans."""

    model_config = ConfigDict(extra="ignore", strict=True)


def _real_datetime(value: str) -> str:
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        raise ValueError("must be an ISO 8601 date-time such as 2026-03-10T09:00:00+09:00") from None
    if parsed.tzinfo is None and "T" in value:
        raise ValueError("must carry a UTC offset, e.g. 2026-03-10T09:00:00+09:00 or ...Z")
    return value


DateTimeText = Annotated[str, Field(min_length=10, max_length=64), AfterValidator(_real_datetime)]


# -- calendar.getEvents ------------------------------------------------------------------


class CalendarTime(_Strict):
    dateTime: DateTimeText  # noqa: N815 - the wire's name


class CalendarEvent(_Strict):
    id: str = Field(max_length=500)
    title: str = Field(default="", max_length=1000)
    start: CalendarTime
    end: CalendarTime


class CalendarEvents(_Strict):
    events: list[CalendarEvent] = Field(max_length=2000)


class EventToolHandler:
    def get_tool_name(self) -> str:
        return "get_calendar_events"

    def get_method_name(self) -> str:
        return "calendar.getEvents"

    def create_params(self, call: DeferredCall) -> dict[str, Any]:
        return {"startDate": call.arguments["start_date"], "endDate": call.arguments["end_date"]}

    def validate_result(self, data: Any) -> CalendarEvents:
        return CalendarEvents.model_validate(data)

    def transform_result(self, value: BaseModel) -> dict[str, Any]:
        assert isinstance(value, CalendarEvents)
        return {
            "events": [
                {"id": e.id, "title": e.title, "start": e.start.dateTime, "end": e.end.dateTime} for e in value.events
            ]
        }

    def elicitation_form(self, call: DeferredCall) -> tuple[str, dict[str, Any]] | None:
        return None  # a form cannot stand in for reading the device's calendar

    def from_elicitation(self, content: Mapping[str, Any]) -> dict[str, Any]:
        raise NotImplementedError


# -- interaction.confirm ------------------------------------------------------------------


class Confirmation(_Strict):
    confirmed: bool


class InteractionToolHandler:
    def get_tool_name(self) -> str:
        return "confirm_interaction"

    def get_method_name(self) -> str:
        return "interaction.confirm"

    def create_params(self, call: DeferredCall) -> dict[str, Any]:
        params = {"title": call.arguments["title"], "message": call.arguments["message"]}
        for key, wire in (
            ("confirm_label", "confirmLabel"),
            ("cancel_label", "cancelLabel"),
            ("permission", "permission"),
        ):
            if call.arguments.get(key):
                params[wire] = call.arguments[key]
        return params

    def validate_result(self, data: Any) -> Confirmation:
        return Confirmation.model_validate(data)

    def transform_result(self, value: BaseModel) -> dict[str, Any]:
        assert isinstance(value, Confirmation)
        return {"confirmed": value.confirmed}

    def elicitation_form(self, call: DeferredCall) -> tuple[str, dict[str, Any]] | None:
        label = call.arguments.get("confirm_label") or "Confirm"
        schema = {
            "type": "object",
            "properties": {"confirmed": {"type": "boolean", "title": label, "description": call.arguments["message"]}},
            "required": ["confirmed"],
        }
        return f"{call.arguments['title']}: {call.arguments['message']}", schema

    def from_elicitation(self, content: Mapping[str, Any]) -> dict[str, Any]:
        return {"confirmed": content.get("confirmed") is True}


# -- permissions.getStatus ----------------------------------------------------------------

PermissionState = Literal["granted", "denied", "notDetermined", "restricted"]
PERMISSION_STATES: tuple[str, ...] = ("granted", "denied", "notDetermined", "restricted")


class PermissionStatus(_Strict):
    status: PermissionState


class PermissionToolHandler:
    def get_tool_name(self) -> str:
        return "get_permission_status"

    def get_method_name(self) -> str:
        return "permissions.getStatus"

    def create_params(self, call: DeferredCall) -> dict[str, Any]:
        return {"permission": call.arguments["permission"]}

    def validate_result(self, data: Any) -> PermissionStatus:
        return PermissionStatus.model_validate(data)

    def transform_result(self, value: BaseModel) -> dict[str, Any]:
        assert isinstance(value, PermissionStatus)
        return {"status": value.status}

    def elicitation_form(self, call: DeferredCall) -> tuple[str, dict[str, Any]] | None:
        permission = call.arguments["permission"]
        schema = {
            "type": "object",
            "properties": {
                "status": {
                    "type": "string",
                    "title": f"Status of {permission}",
                    "enum": list(PERMISSION_STATES),
                    "enumNames": ["Granted", "Denied", "Not asked yet", "Restricted by the system"],
                }
            },
            "required": ["status"],
        }
        return f"What is this device's '{permission}' permission set to?", schema

    def from_elicitation(self, content: Mapping[str, Any]) -> dict[str, Any]:
        return {"status": content.get("status")}


HANDLERS: dict[str, DeferredToolHandler] = {
    handler.get_tool_name(): handler
    for handler in (EventToolHandler(), InteractionToolHandler(), PermissionToolHandler())
}
BY_METHOD: dict[str, DeferredToolHandler] = {handler.get_method_name(): handler for handler in HANDLERS.values()}
