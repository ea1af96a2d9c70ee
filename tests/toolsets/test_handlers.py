"""The deferred tools, declared once as data, and the agent-rpc wire models."""

from __future__ import annotations

import json
from typing import Annotated

import pytest
from pydantic import BaseModel, Field, ValidationError

from bridge.jsonrpc import INVALID_REQUEST, PARSE_ERROR, BadMessage, Envelope, RpcRequest, parse_response
from toolsets.core.annotations import READ_ONLY
from toolsets.core.deferred import DeviceMethod, DeviceTools, device_result
from toolsets.core.errors import CallDeferred
from toolsets.core.toolset import Toolset
from toolsets.profiles import build_profiles

PROFILES = build_profiles()
DEVICE = PROFILES.device_tools


def wire(tool: str, **arguments: object) -> dict[str, object]:
    found = DEVICE.get(tool)
    assert found is not None and found.device is not None
    return found.device.wire_params(arguments)


def answer(tool: str, data: object) -> dict[str, object]:
    found = DEVICE.get(tool)
    assert found is not None
    return device_result(found, data).model_dump(mode="json")


def test_the_registry_is_derived_from_the_tools() -> None:
    assert {name: DEVICE.get(name).device.method for name in DEVICE.names()} == {  # type: ignore[union-attr]
        "get_calendar_events": "calendar.getEvents",
        "confirm_interaction": "interaction.confirm",
        "get_permission_status": "permissions.getStatus",
    }
    for method in ("calendar.getEvents", "interaction.confirm", "permissions.getStatus"):
        assert DEVICE.by_method(method) is not None
    deferred = {tool.name for toolset in PROFILES.values() for tool in toolset if tool.deferred}
    assert deferred == set(DEVICE.names())


def test_params_are_camel_case_and_never_carry_the_notification_message() -> None:
    calendar = wire(
        "get_calendar_events", start_date="2026-03-09T00:00:00+09:00", end_date="2026-03-15T23:59:59+09:00",
        notification_message="Checking your phone...",
    )  # fmt: skip
    assert calendar == {"startDate": "2026-03-09T00:00:00+09:00", "endDate": "2026-03-15T23:59:59+09:00"}
    confirm = wire(
        "confirm_interaction", title="Share", message="Share your calendar?", confirm_label="Share",
        cancel_label=None, permission="calendar.read", notification_message="Checking your phone...",
    )  # fmt: skip
    assert confirm == {"title": "Share", "message": "Share your calendar?", "confirmLabel": "Share",
                       "permission": "calendar.read"}  # fmt: skip
    permission = wire("get_permission_status", permission="location", notification_message="Checking your phone...")
    assert permission == {"permission": "location"}
    for params in (calendar, confirm, permission):
        assert "notification_message" not in params and "Checking" not in json.dumps(params)


def test_results_are_validated_strictly_into_the_tools_own_result() -> None:
    seed_result = {
        "events": [
            {"id": "event_1", "title": "팀 미팅", "start": {"dateTime": "2026-03-10T10:00:00+09:00"},
             "end": {"dateTime": "2026-03-10T11:00:00+09:00"}}
        ]
    }  # fmt: skip
    assert answer("get_calendar_events", seed_result) == {
        "events": [{"id": "event_1", "title": "팀 미팅", "start": "2026-03-10T10:00:00+09:00",
                    "end": "2026-03-10T11:00:00+09:00"}]
    }  # fmt: skip
    bad_calendars = (
        {}, {"events": [{"id": "x"}]}, {"events": "none"}, None,
        {"events": [{"id": "x", "start": {"dateTime": "tomorrow"}, "end": {"dateTime": "2026-03-10T11:00:00"}}]},
    )  # fmt: skip
    for bad in bad_calendars:
        with pytest.raises(ValidationError):
            answer("get_calendar_events", bad)
    assert answer("confirm_interaction", {"confirmed": False}) == {"confirmed": False}
    for loose in ("maybe", "yes", 1, "true"):
        with pytest.raises(ValidationError):
            answer("confirm_interaction", {"confirmed": loose})
    assert answer("get_permission_status", {"status": "notDetermined"}) == {"status": "notDetermined"}
    with pytest.raises(ValidationError):
        answer("get_permission_status", {"status": "sometimes"})


class Out(BaseModel):
    ok: bool = Field(description="ok")


def test_a_declaration_that_does_not_fit_its_tool_is_refused_at_assembly() -> None:
    broken = Toolset("broken")

    @broken.tool(hints=READ_ONLY, device=DeviceMethod("things.get", {"thing": "thing", "colour": "colour"}))
    async def get_thing(thing: Annotated[str, Field(description="which")]) -> Out:
        """Read a thing on the device."""
        raise CallDeferred()

    with pytest.raises(ValueError, match="colour"):
        DeviceTools([broken])
    with pytest.raises(ValueError, match=r"namespace\.methodName"):
        DeviceMethod("get things")


def test_wire_format_is_the_seeds() -> None:
    request = RpcRequest(id="call_abc123", method="calendar.getEvents", params={"startDate": "a", "endDate": "b"})
    envelope = Envelope.wrap(request, "Reading your calendar")
    assert envelope.model_dump() == {
        "custom_type": "agent-rpc",
        "message": "Reading your calendar",
        "data": '{"jsonrpc":"2.0","id":"call_abc123","method":"calendar.getEvents",'
        '"params":{"startDate":"a","endDate":"b"}}',
    }
    error = parse_response(
        b'{"jsonrpc":"2.0","id":"call_abc123","error":{"code":-32010,"message":"PermissionRequired",'
        b'"data":{"requiredPermission":"calendar.read","canPromptAgain":true}}}'
    )
    assert error.error is not None and error.error.code == -32010 and error.error.data["canPromptAgain"] is True


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"not json", PARSE_ERROR),
        (b'{"jsonrpc":"2.0","id":"x"}', INVALID_REQUEST),
        (b'{"jsonrpc":"2.0","id":"x","result":{},"error":{"code":1,"message":"m"}}', INVALID_REQUEST),
        (b'{"jsonrpc":"1.0","id":"x","result":{}}', INVALID_REQUEST),
        (b'{"jsonrpc":"2.0","result":{}}', INVALID_REQUEST),
        (b'[{"jsonrpc":"2.0","id":"x","result":{}}]', INVALID_REQUEST),
        (b'{"jsonrpc":"2.0","id":"x","error":{"message":"no code"}}', INVALID_REQUEST),
    ],
)
def test_malformed_responses_are_refused(body: bytes, code: int) -> None:
    with pytest.raises(BadMessage) as caught:
        parse_response(body)
    assert caught.value.code == code
