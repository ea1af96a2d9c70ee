"""Changed resources across replicas: a Redis pub/sub channel on the deployment's one Redis client.

A replica that notices a change (its knowledge index re-indexed a document, a message reached an inbox) tells its
own sessions at once and publishes the change on `<prefix>resources`; every other replica hands what it hears to
its own `ResourceChanges` (the hub this relay was built into, whose `relaying` runs it), whose servers tell their
subscribed sessions. A replica ignores its own messages (they were delivered when sent); nothing is published while
the relay does not run. Delivery is best effort, like MCP's notifications: while Redis is away, changes reach
this replica's sessions only, and the listener reconnects with backoff.
"""

from __future__ import annotations

import contextlib
import json
import logging
import secrets
from typing import Any

import anyio
from anyio.abc import TaskStatus

from toolsets.views.changes import Listener, ResourceChange

logger = logging.getLogger("truloop.resources")


class RedisChangeRelay:
    def __init__(self, redis: Any, *, prefix: str = "truloop:") -> None:
        self._redis = redis
        self._channel = f"{prefix}resources"
        self._origin = secrets.token_hex(8)
        self._runs = 0  # how many `run`s are under way: `send` publishes only while one is
        self.listening = anyio.Event()

    async def send(self, change: ResourceChange) -> None:
        if not self._runs:
            return
        message = {"origin": self._origin, "uris": list(change.uris), "listed": change.listed, "user": change.user_id}
        await self._redis.publish(self._channel, json.dumps(message, ensure_ascii=False))

    async def run(self, deliver: Listener, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Relay changes both ways until cancelled, what the other replicas publish to `deliver` (started at once:
        Redis being away never delays serving)."""
        self._runs += 1
        task_status.started()
        delay = 0.2
        try:
            while True:
                pubsub = self._redis.pubsub()
                try:
                    await pubsub.subscribe(self._channel)
                    while True:
                        message = await pubsub.get_message(timeout=1.0)
                        if message is None:
                            continue
                        if message["type"] == "subscribe":
                            self.listening.set()
                            delay = 0.2
                        elif message["type"] == "message":
                            await self._heard(message["data"], deliver)
                except anyio.get_cancelled_exc_class():
                    raise
                except Exception as exc:
                    self.listening = anyio.Event()
                    logger.warning("Redis resource channel lost (%s); retrying in %.1f s", type(exc).__name__, delay)
                    await anyio.sleep(delay)
                    delay = min(delay * 2, 5.0)
                finally:
                    with contextlib.suppress(Exception), anyio.CancelScope(shield=True):
                        await pubsub.aclose()
        finally:
            self._runs -= 1

    async def _heard(self, data: str, deliver: Listener) -> None:
        try:
            message = json.loads(data)
            if message.get("origin") == self._origin:
                return
            change = ResourceChange(
                tuple(str(uri) for uri in message.get("uris") or ()),
                listed=bool(message.get("listed")),
                user_id=message.get("user") if isinstance(message.get("user"), str) else None,
            )
        except (ValueError, TypeError, AttributeError):
            logger.warning("ignoring a malformed message on the Redis resource channel")
            return
        await deliver(change)
