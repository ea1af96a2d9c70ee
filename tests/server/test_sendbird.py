"""SendbirdChannel against a fake Sendbird Platform API (httpx.MockTransport) shaped like the real one."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from pydantic import SecretStr, ValidationError

from bridge.jsonrpc import Envelope, RpcRequest
from bridge.sendbird import SendbirdChannel
from server.runtime.composition import sendbird_channel
from server.settings import Settings
from server.settings_text import explain

APP_ID = "A1B2C3D4-E5F6-4711-8899-AABBCCDDEEFF"
TOKEN = "sb-api-token-" + "f" * 28


def envelope(user_note: str = "Checking your calendar") -> dict[str, Any]:
    request = RpcRequest(
        id="call_Q2xbNf3kZ0u1Ww",
        method="calendar.getEvents",
        params={"startDate": "2026-03-10T00:00:00+09:00", "endDate": "2026-03-11T00:00:00+09:00"},
    )
    return Envelope.wrap(request, user_note).model_dump()


def sent_message(body: dict[str, Any], channel_url: str) -> dict[str, Any]:
    """What Sendbird answers to a sent text message (trimmed to the fields that matter)."""
    return {
        "type": "MESG",
        "message_id": 6738194201,
        "message": body["message"],
        "data": body["data"],
        "custom_type": body["custom_type"],
        "channel_url": channel_url,
        "channel_type": "group",
        "created_at": 1773100800123,
        "updated_at": 0,
        "is_removed": False,
        "mention_type": "users",
        "mentioned_users": [],
        "message_survival_seconds": -1,
        "silent": False,
        "user": {
            "user_id": body["user_id"],
            "nickname": "Truloop",
            "profile_url": "",
            "require_auth_for_profile_image": False,
            "metadata": {},
            "role": "",
            "is_active": True,
        },
    }


class FakeSendbird:
    def __init__(self, answer: Callable[[httpx.Request], httpx.Response] | None = None) -> None:
        self.requests: list[httpx.Request] = []
        self.answer = answer or self.accept

    def accept(self, request: httpx.Request) -> httpx.Response:
        channel = request.url.path.split("/")[4]
        return httpx.Response(200, json=sent_message(json.loads(request.content), channel))

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.answer(request)


def channel_with(fake: FakeSendbird, **options: str) -> SendbirdChannel:
    return SendbirdChannel(APP_ID, SecretStr(TOKEN), transport=httpx.MockTransport(fake), **options)


@pytest.mark.anyio
async def test_sends_the_envelope_as_a_group_channel_message() -> None:
    fake = FakeSendbird()
    wrapped = envelope()
    assert await channel_with(fake).send("alice", wrapped) is True
    (request,) = fake.requests
    assert request.method == "POST"
    assert request.url.scheme == "https" and request.url.host == f"api-{APP_ID}.sendbird.com".lower()
    assert request.url.path == "/v3/group_channels/truloop-agent-alice/messages"
    assert request.headers["Api-Token"] == TOKEN
    assert request.headers["Content-Type"].startswith("application/json")
    body = json.loads(request.content)
    assert body == {
        "message_type": "MESG",
        "user_id": "truloop-assistant",
        "message": "Checking your calendar",
        "custom_type": "agent-rpc",
        "data": wrapped["data"],
    }
    # the app parses `data` as the JSON-RPC request, untouched
    assert json.loads(body["data"]) == {
        "jsonrpc": "2.0",
        "id": "call_Q2xbNf3kZ0u1Ww",
        "method": "calendar.getEvents",
        "params": {"startDate": "2026-03-10T00:00:00+09:00", "endDate": "2026-03-11T00:00:00+09:00"},
    }


@pytest.mark.anyio
async def test_channel_url_comes_from_the_template_and_is_url_encoded() -> None:
    fake = FakeSendbird()
    channel = channel_with(fake, channel_url_template="agents/{user_id}", sender_id="bot-7")
    assert await channel.send("kim min/ji@x", envelope()) is True
    (request,) = fake.requests
    assert request.url.raw_path == b"/v3/group_channels/agents%2Fkim%20min%2Fji%40x/messages"
    assert json.loads(request.content)["user_id"] == "bot-7"


@pytest.mark.anyio
async def test_an_empty_notification_still_sends_a_message_text() -> None:
    fake = FakeSendbird()
    assert await channel_with(fake).send("alice", envelope(user_note="")) is True
    assert json.loads(fake.requests[0].content)["message"] == "agent-rpc"


def sendbird_error(status: int, code: int, message: str) -> Callable[[httpx.Request], httpx.Response]:
    return lambda request: httpx.Response(status, json={"error": True, "code": code, "message": message})


def timing_out(request: httpx.Request) -> httpx.Response:
    raise httpx.ReadTimeout("timed out", request=request)


def refusing(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("connection refused", request=request)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("answer", "logged"),
    [
        (sendbird_error(400, 400201, '"Channel" not found.'), "400201"),
        (sendbird_error(400, 400401, f"Invalid value: API-Token {TOKEN}."), "400401"),
        (sendbird_error(500, 500901, "Unexpected Server Error."), "HTTP 500"),
        (lambda request: httpx.Response(503, text="<html>Service Unavailable</html>"), "HTTP 503"),
        (timing_out, "did not answer in time"),
        (refusing, "could not reach Sendbird"),
    ],
    ids=["channel-not-found", "bad-token", "500", "503-html", "timeout", "refused"],
)
async def test_upstream_failures_return_false_and_never_log_the_token(
    answer: Callable[[httpx.Request], httpx.Response], logged: str, caplog: pytest.LogCaptureFixture
) -> None:
    fake = FakeSendbird(answer)
    with caplog.at_level(logging.DEBUG):
        assert await channel_with(fake).send("alice", envelope()) is False
    assert len(fake.requests) == 1
    assert logged in caplog.text
    assert TOKEN not in caplog.text
    assert TOKEN not in repr(channel_with(fake))


def test_configuration_from_settings() -> None:
    assert sendbird_channel(Settings()) is None
    assert sendbird_channel(Settings(sendbird_app_id=APP_ID)) is None  # the token is needed too
    channel = sendbird_channel(Settings(sendbird_app_id=APP_ID, sendbird_api_token=TOKEN))
    assert isinstance(channel, SendbirdChannel)
    assert channel.sender_id == "truloop-assistant" and channel.channel_url("bob") == "truloop-agent-bob"
    custom = Settings(
        sendbird_app_id=APP_ID,
        sendbird_api_token=TOKEN,
        sendbird_sender_id="bot-7",
        sendbird_channel_url_template="agents/{user_id}",
    )
    channel = sendbird_channel(custom)
    assert channel is not None and channel.sender_id == "bot-7" and channel.channel_url("bob") == "agents/bob"
    assert TOKEN not in repr(custom) and TOKEN not in repr(channel)


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ({"sendbird_app_id": "evil.example.com/x"}, "SENDBIRD_APP_ID: a Sendbird application id is"),
        ({"sendbird_channel_url_template": "agent-{user}"}, "SENDBIRD_CHANNEL_URL_TEMPLATE: a channel URL template"),
    ],
)
def test_a_bad_sendbird_setting_is_refused_by_name(values: dict[str, str], named: str) -> None:
    with pytest.raises(ValidationError) as refused:
        Settings(sendbird_api_token=TOKEN, **values)
    assert named in explain(refused.value)
    with pytest.raises(ValueError, match="application id"):
        SendbirdChannel("evil.example.com/x", SecretStr(TOKEN))
    with pytest.raises(ValueError, match="API token"):
        SendbirdChannel(APP_ID, SecretStr(""))
