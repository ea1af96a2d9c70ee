"""The relay toolset's delivery port over the device channel."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bridge.service import DeviceBridge

RELAY_METHOD = "relay.message"


class DeviceDelivery:
    """Relayed messages travel as agent-rpc envelopes holding a JSON-RPC notification (no id, no answer)."""

    def __init__(self, bridge: DeviceBridge) -> None:
        self._bridge = bridge

    async def deliver(self, recipient_id: str, message: Mapping[str, Any]) -> bool:
        from bridge.jsonrpc import Envelope

        notification = {"jsonrpc": "2.0", "method": RELAY_METHOD, "params": dict(message)}
        envelope = Envelope.wrap(notification, str(message.get("text") or "")).model_dump()
        return await self._bridge.send_to_device(recipient_id, envelope)
