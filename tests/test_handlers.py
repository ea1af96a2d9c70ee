"""The three deferred-tool handlers and the agent-rpc wire models."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from bridge.handlers import BY_METHOD, HANDLERS
from bridge.jsonrpc import INVALID_REQUEST, PARSE_ERROR, BadMessage, Envelope, RpcRequest, parse_response
from toolsets.context import Caller, DeferredCall


def call(tool: str, **arguments: object) -> DeferredCall:
    return DeferredCall(tool, arguments, "Checking your phone...", Caller("alice"))


def test_one_handler_per_deferred_tool() -> None:
    assert {name: h.get_method_name() for name, h in HANDLERS.items()} == {
        "get_calendar_events": "calendar.getEvents",
        "confirm_interaction": "interaction.confirm",
        "get_permission_status": "permissions.getStatus",
    }
    assert set(BY_METHOD) == {"calendar.getEvents", "interaction.confirm", "permissions.getStatus"}


def test_params_are_camel_case_and_never_carry_the_notification_message() -> None:
    calendar = HANDLERS["get_calendar_events"].create_params(
        call("get_calendar_events", start_date="2026-03-09T00:00:00+09:00", end_date="2026-03-15T23:59:59+09:00")
    )
    assert calendar == {"startDate": "2026-03-09T00:00:00+09:00", "endDate": "2026-03-15T23:59:59+09:00"}
    confirm = HANDLERS["confirm_interaction"].create_params(
        call("confirm_interaction", title="Share", message="Share your calendar?", confirm_label="Share",
             cancel_label=None, permission="calendar.read")
    )  # fmt: skip
    assert confirm == {"title": "Share", "message": "Share your calendar?", "confirmLabel": "Share",
                       "permission": "calendar.read"}  # fmt: skip
    permission = HANDLERS["get_permission_status"].create_params(call("get_permission_status", permission="location"))
    assert permission == {"permission": "location"}
    for params in (calendar, confirm, permission):
        assert "notification_message" not in params and "Checking" not in json.dumps(params)


def test_results_are_validated_and_transformed() -> None:
    calendar = HANDLERS["get_calendar_events"]
    seed_result = {
        "events": [
            {"id": "event_1", "title": "팀 미팅", "start": {"dateTime": "2026-03-10T10:00:00+09:00"},
             "end": {"dateTime": "2026-03-10T11:00:00+09:00"}}
        ]
    }  # fmt: skip
    assert calendar.transform_result(calendar.validate_result(seed_result)) == {
        "events": [{"id": "event_1", "title": "팀 미팅", "start": "2026-03-10T10:00:00+09:00",
                    "end": "2026-03-10T11:00:00+09:00"}]
    }  # fmt: skip
    for bad in ({}, {"events": [{"id": "x"}]}, {"events": "none"}, None):
        with pytest.raises(ValidationError):
            calendar.validate_result(bad)
    confirm = HANDLERS["confirm_interaction"]
    assert confirm.transform_result(confirm.validate_result({"confirmed": False})) == {"confirmed": False}
    with pytest.raises(ValidationError):
        confirm.validate_result({"confirmed": "maybe"})
    permission = HANDLERS["get_permission_status"]
    assert permission.transform_result(permission.validate_result({"status": "notDetermined"})) == {
        "status": "notDetermined"
    }
    with pytest.raises(ValidationError):
        permission.validate_result({"status": "sometimes"})


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
