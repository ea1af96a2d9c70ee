"""The bridge's shared state in Redis, so several replicas act as one.

Keys (under a prefix, `truloop:` by default): `call:{id}` the pending call (TTL 1 h);
`user-calls:{user}` a sorted set of the user's pending ids; `answered:{id}` a tombstone that
tells a second answer from an unknown id; `result:{id}` the answer, until the waiter takes it
(not written when the waiter runs on the replica the answer arrived at: it is handed over in memory);
`presence:{user}` a sorted set of device ids scored by when their heartbeat runs out.
Channels: `results` (a call id was answered: wake its waiter, wherever it runs) and `devices`
(an envelope for a user: every other replica hands it to that user's streams it holds; the sender
hands it to its own at once and ignores its copy, recognised by the `origin` it tags it with).
Completion is one Lua script, so two answers racing on two replicas resume the call once.
"""

from __future__ import annotations

import contextlib
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio

from bridge.pending import (
    ANSWERED_TTL_SECONDS,
    CALL_TTL_SECONDS,
    NOBODY,
    RESULT_TTL_SECONDS,
    BackendListener,
    Outcome,
    PendingCall,
)
from toolsets.infra.redis_client import redis_of

logger = logging.getLogger("truloop.redis")

COMPLETE = """
local raw = redis.call('GET', KEYS[1])
if not raw then
  if redis.call('GET', KEYS[3]) == ARGV[2] then return 2 end
  return 0
end
if cjson.decode(raw)['user_id'] ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('SET', KEYS[3], ARGV[2], 'EX', ARGV[4])
if ARGV[7] == '1' then return 1 end
redis.call('SET', KEYS[4], ARGV[3], 'EX', ARGV[5])
redis.call('PUBLISH', ARGV[6], ARGV[1])
return 1
"""
# Store a pending call; with a message (ARGV[7]), also publish it if the user has a device online (1 if so).
CREATE_AND_SEND = """
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[4])
if ARGV[7] ~= '' and redis.call('ZCOUNT', KEYS[3], ARGV[5], '+inf') > 0 then
  redis.call('PUBLISH', ARGV[6], ARGV[7])
  return 1
end
return 0
"""
TAKE = "local v = redis.call('GET', KEYS[1]); if v then redis.call('DEL', KEYS[1]) end; return v"


class RedisBackend:
    def __init__(self, client: Any, listener: BackendListener = NOBODY, *, prefix: str = "truloop:") -> None:
        """`client`: the deployment's Redis client (toolsets/infra/redis_client.py), or a URL to open one on;
        `listener`: who is told what reaches this replica through Redis (its `DeviceBridge`)."""
        self._redis = redis_of(client)
        self._prefix = prefix
        # Envelopes this replica publishes reach its own device streams directly, not back through Redis.
        self._origin = secrets.token_hex(8)
        self._complete = self._redis.register_script(COMPLETE)
        self._take = self._redis.register_script(TAKE)
        self._create_and_send = self._redis.register_script(CREATE_AND_SEND)
        self._listener = listener
        self.listening = anyio.Event()

    def _key(self, *parts: str) -> str:
        return self._prefix + ":".join(parts)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._listen)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()
        await self._redis.aclose()

    async def _listen(self) -> None:
        """Relay the two channels to this replica; reconnect with backoff while Redis is away."""
        results, devices = self._key("results"), self._key("devices")
        delay = 0.2
        lost = False
        while True:
            if lost:  # pooled connections from before the restart are dead: open fresh ones, the pubsub's too
                with contextlib.suppress(Exception):
                    await self._redis.connection_pool.disconnect()
            pubsub = self._redis.pubsub()
            try:
                await pubsub.subscribe(results, devices)
                confirmed = 0
                while confirmed < 2:  # only once Redis confirmed both is anyone told the bridge is back
                    message = await pubsub.get_message(timeout=1.0)
                    if message is not None and message["type"] == "subscribe":
                        confirmed += 1
                    elif message is not None:
                        self._relay(message, results)
                self.listening.set()
                delay = 0.2
                if lost:
                    lost = False
                    logger.info("Redis subscription restored")
                    await self._listener.store_restored()
                while True:
                    message = await pubsub.get_message(timeout=1.0)
                    if message is not None:
                        self._relay(message, results)
            except anyio.get_cancelled_exc_class():
                raise
            except Exception as exc:
                lost = True
                self.listening = anyio.Event()
                logger.warning("Redis subscription lost (%s); retrying in %.1f s", type(exc).__name__, delay)
                await anyio.sleep(delay)
                delay = min(delay * 2, 5.0)
            finally:
                with contextlib.suppress(Exception):
                    with anyio.CancelScope(shield=True):
                        await pubsub.aclose()

    def _relay(self, message: dict[str, Any], results: str) -> None:
        if message["type"] != "message":
            return
        if message["channel"] == results:
            self._listener.call_answered(message["data"])
        else:
            payload = json.loads(message["data"])
            if payload.get("origin") != self._origin:  # this replica's own were handed over when sent
                self._listener.envelope_arrived(payload["user"], payload["envelope"])

    async def ping(self) -> None:
        await self._redis.ping()

    async def create(self, call: PendingCall) -> None:
        await self._store(call, "")

    async def create_and_send(self, call: PendingCall, envelope: dict[str, Any]) -> bool:
        """`create`, then `publish_envelope` if the user has a device online, in one round trip; True if online."""
        online = await self._store(call, self._devices_message(call.user_id, envelope))
        if online:
            self._listener.envelope_arrived(call.user_id, envelope)
        return online

    async def _store(self, call: PendingCall, message: str) -> bool:
        keys = [
            self._key("call", call.call_id),
            self._key("user-calls", call.user_id),
            self._key("presence", call.user_id),
        ]
        args = [
            call.model_dump_json(), call.call_id, call.created_at, CALL_TTL_SECONDS, time.time(), self._key("devices"),
            message,
        ]  # fmt: skip
        return int(await self._create_and_send(keys=keys, args=args)) == 1

    def _devices_message(self, user_id: str, envelope: dict[str, Any]) -> str:
        return json.dumps({"user": user_id, "envelope": envelope, "origin": self._origin})

    async def get(self, call_id: str) -> PendingCall | None:
        raw = await self._redis.get(self._key("call", call_id))
        return PendingCall.model_validate_json(raw) if raw else None

    async def pending_for(self, user_id: str) -> list[PendingCall]:
        index = self._key("user-calls", user_id)
        await self._redis.zremrangebyscore(index, "-inf", time.time() - CALL_TTL_SECONDS)
        ids = await self._redis.zrange(index, 0, -1)
        if not ids:
            return []
        raws = await self._redis.mget([self._key("call", call_id) for call_id in ids])
        now = time.time()
        calls = [PendingCall.model_validate_json(raw) for raw in raws if raw]
        return [call for call in calls if call.live(now)]

    async def complete(
        self, call_id: str, user_id: str, response: dict[str, Any], *, waiter_here: bool = False
    ) -> Outcome:
        keys = [
            self._key("call", call_id),
            self._key("user-calls", user_id),
            self._key("answered", call_id),
            self._key("result", call_id),
        ]
        args = [
            call_id, user_id, "" if waiter_here else json.dumps(response), ANSWERED_TTL_SECONDS, RESULT_TTL_SECONDS,
            self._key("results"), "1" if waiter_here else "0",
        ]  # fmt: skip
        code = int(await self._complete(keys=keys, args=args))
        return {1: Outcome.COMPLETED, 2: Outcome.ALREADY_ANSWERED}.get(code, Outcome.UNKNOWN)

    async def take_result(self, call_id: str) -> dict[str, Any] | None:
        raw = await self._take(keys=[self._key("result", call_id)])
        return json.loads(raw) if raw else None

    async def discard(self, call_id: str) -> None:
        raw = await self._redis.get(self._key("call", call_id))
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.delete(self._key("call", call_id), self._key("result", call_id))
            if raw:
                pipe.zrem(self._key("user-calls", json.loads(raw)["user_id"]), call_id)
            await pipe.execute()

    async def mark_online(self, user_id: str, device_id: str, ttl: float) -> None:
        key = self._key("presence", user_id)
        now = time.time()
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.zadd(key, {device_id: now + ttl})
            pipe.zremrangebyscore(key, "-inf", now)
            pipe.expire(key, int(ttl) + 5)
            await pipe.execute()

    async def mark_offline(self, user_id: str, device_id: str) -> None:
        await self._redis.zrem(self._key("presence", user_id), device_id)

    async def online(self, user_id: str) -> bool:
        return int(await self._redis.zcount(self._key("presence", user_id), time.time(), "+inf")) > 0

    async def publish_envelope(self, user_id: str, envelope: dict[str, Any]) -> None:
        await self._redis.publish(self._key("devices"), self._devices_message(user_id, envelope))
        self._listener.envelope_arrived(user_id, envelope)
