"""Reaching the user's app through Sendbird: agent-rpc envelopes as group channel messages.

`POST https://api-{APP_ID}.sendbird.com/v3/group_channels/{channel_url}/messages` with the key in
`Api-Token`, a text message (`MESG`) from the assistant's bot user whose `custom_type` is
`agent-rpc` and whose `data` is the JSON-RPC request as a string, exactly as the app already reads
it (`if (message.customType === 'agent-rpc') JSON.parse(message.data)`). The group channel of each
user (default `truloop-agent-{user_id}`, with the user and the bot as members) must already exist.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from pydantic import SecretStr

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger("truloop.sendbird")

DEFAULT_SENDER = "truloop-assistant"
DEFAULT_CHANNEL_TEMPLATE = "truloop-agent-{user_id}"
READ_TIMEOUT_S = 10.0
CONNECT_TIMEOUT_S = 5.0
EMPTY_MESSAGE_TEXT = "agent-rpc"  # a MESG needs some text; the app acts on `data`, not on this
_APP_ID = re.compile(r"^[A-Za-z0-9-]{1,64}$")  # it becomes part of the host name


def check_app_id(app_id: str) -> str:
    if not _APP_ID.fullmatch(app_id):
        raise ValueError("a Sendbird application id is letters, digits and dashes")
    return app_id


def check_channel_template(template: str) -> str:
    try:
        template.format(user_id="probe")
    except (KeyError, IndexError, ValueError):
        raise ValueError("a channel URL template may use only the {user_id} placeholder") from None
    return template


class SendbirdChannel:
    """`bridge.service.ChannelSender` over the Sendbird Chat Platform API; upstream failures give False, never raise."""

    def __init__(
        self,
        app_id: str,
        api_token: SecretStr,
        *,
        sender_id: str = DEFAULT_SENDER,
        channel_url_template: str = DEFAULT_CHANNEL_TEMPLATE,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not api_token.get_secret_value():
            raise ValueError("a Sendbird API token is required")
        self.app_id = check_app_id(app_id)
        self.channel_url_template = check_channel_template(channel_url_template)
        self.sender_id = sender_id
        self._api_token = api_token
        self._transport = transport

    def __repr__(self) -> str:
        return f"SendbirdChannel(app_id={self.app_id!r}, sender_id={self.sender_id!r})"

    def channel_url(self, user_id: str) -> str:
        return self.channel_url_template.format(user_id=user_id)

    def messages_url(self, user_id: str) -> str:
        channel = quote(self.channel_url(user_id), safe="")
        return f"https://api-{self.app_id}.sendbird.com/v3/group_channels/{channel}/messages"

    async def send(self, user_id: str, envelope: dict[str, Any]) -> bool:
        import httpx  # here, so the settings can check an app id without loading the HTTP stack

        body = {
            "message_type": "MESG",
            "user_id": self.sender_id,
            "message": envelope.get("message") or EMPTY_MESSAGE_TEXT,
            "custom_type": envelope.get("custom_type") or "agent-rpc",
            "data": envelope["data"],
        }
        headers = {"Api-Token": self._api_token.get_secret_value(), "Content-Type": "application/json; charset=utf8"}
        channel = self.channel_url(user_id)
        timeout = httpx.Timeout(READ_TIMEOUT_S, connect=CONNECT_TIMEOUT_S)
        try:
            async with httpx.AsyncClient(transport=self._transport, timeout=timeout) as client:
                response = await client.post(self.messages_url(user_id), json=body, headers=headers)
        except httpx.TimeoutException:
            logger.warning("Sendbird did not answer in time; the call for %s was not sent to %s", user_id, channel)
            return False
        except httpx.HTTPError as exc:
            logger.warning("could not reach Sendbird (%s); the call for %s was not sent", type(exc).__name__, user_id)
            return False
        if response.is_success:
            logger.debug("sent to Sendbird channel %s as message %s", channel, _field(response, "message_id"))
            return True
        code, message = _field(response, "code"), self._redacted(str(_field(response, "message") or ""))
        hint = " (does the group channel exist with the user and the sender as members?)" if code == 400201 else ""
        logger.warning(
            "Sendbird refused the message to channel %s: HTTP %d, code %s: %s%s",
            channel,
            response.status_code,
            code,
            message[:200],
            hint,
        )
        return False

    def _redacted(self, text: str) -> str:
        return text.replace(self._api_token.get_secret_value(), "[redacted]")


def _field(response: httpx.Response, name: str) -> Any:
    """A field of Sendbird's JSON answer (`{"error": true, "code": 400201, "message": ...}` on failure)."""
    try:
        payload = response.json()
    except ValueError:
        return None
    return payload.get(name) if isinstance(payload, dict) else None
