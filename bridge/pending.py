"""Pending deferred calls and the device channel's shared state, behind one backend interface.

`InMemoryBridgeBackend` serves one process (the embedded default); `bridge.redis_backend.RedisBackend`
lets several replicas share pending calls (TTL 1 h), device presence, deliveries to a device
connected elsewhere, and the wake-up of a call waiting on another replica.
"""

import contextlib
import enum
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from bridge.jsonrpc import RpcRequest


CALL_TTL_SECONDS = 3600
ANSWERED_TTL_SECONDS = 3600
RESULT_TTL_SECONDS = 300


class PendingCall(BaseModel):
    call_id: str
    tool_name: str
    method: str
    params: dict[str, Any]
    notification_message: str | None = None
    user_id: str
    locale: str = "en"  # the language its user reads (what a wait for the device is told in)
    channel: str = "rpc-stream"
    created_at: float = Field(default_factory=time.time)
    deadline: float | None = None  # when its waiter gives up; a call past it is never sent again
    task_id: str | None = None  # the MCP task it belongs to: its answer finishes that task (server/tasks/)

    def live(self, now: float) -> bool:
        return now - self.created_at < CALL_TTL_SECONDS and (self.deadline is None or now < self.deadline)

    def request(self) -> "RpcRequest":
        from bridge.jsonrpc import RpcRequest

        return RpcRequest(id=self.call_id, method=self.method, params=self.params)


class Outcome(enum.Enum):
    COMPLETED = "completed"
    UNKNOWN = "unknown"  # no such call, expired, or another user's (indistinguishable on purpose)
    ALREADY_ANSWERED = "already_answered"


class BackendListener(Protocol):
    """Who a backend tells what reached this replica through it (the `DeviceBridge` that owns it), given to the
    backend when it is built (`BackendFactory`)."""

    def call_answered(self, call_id: str) -> None:
        """`call_id` was answered and its answer stored for `take_result`: wake its waiter, if it waits here."""
        ...

    def envelope_arrived(self, user_id: str, envelope: dict[str, Any]) -> None:
        """An envelope for `user_id`'s devices: hand it to the device streams this replica holds."""
        ...

    async def store_restored(self) -> None:
        """The shared store came back (possibly empty): re-announce what this replica holds."""
        ...


class NoListener:
    """A backend used on its own (tests, tools): nobody is told."""

    def call_answered(self, call_id: str) -> None:
        return None

    def envelope_arrived(self, user_id: str, envelope: dict[str, Any]) -> None:
        return None

    async def store_restored(self) -> None:
        return None


NOBODY = NoListener()


class BridgeBackend(Protocol):
    def running(self) -> contextlib.AbstractAsyncContextManager[None]: ...

    async def create(self, call: PendingCall) -> None: ...
    async def create_and_send(self, call: PendingCall, envelope: dict[str, Any]) -> bool: ...
    async def get(self, call_id: str) -> PendingCall | None: ...
    async def pending_for(self, user_id: str) -> list[PendingCall]: ...
    async def complete(
        self, call_id: str, user_id: str, response: dict[str, Any], *, waiter_here: bool = False
    ) -> Outcome:
        """Resume `call_id` once with `response`. `waiter_here`: the caller hands the answer to its waiter
        itself, so it is neither stored for `take_result` nor announced to its listener's `call_answered`."""
        ...

    async def take_result(self, call_id: str) -> dict[str, Any] | None: ...
    async def discard(self, call_id: str) -> None: ...

    async def mark_online(self, user_id: str, device_id: str, ttl: float) -> None: ...
    async def mark_offline(self, user_id: str, device_id: str) -> None: ...
    async def online(self, user_id: str) -> bool: ...
    async def publish_envelope(self, user_id: str, envelope: dict[str, Any]) -> None: ...
    async def ping(self) -> None: ...


# what a `DeviceBridge` builds its backend with, handing it the listener (itself): `InMemoryBridgeBackend`, or
# `functools.partial(RedisBackend, client, prefix=...)`
BackendFactory = Callable[[BackendListener], BridgeBackend]


class InMemoryBridgeBackend:
    """In-process state; completions are at-most-once because the event loop runs them one at a time."""

    def __init__(self, listener: BackendListener = NOBODY) -> None:
        self._listener = listener
        self._calls: dict[str, PendingCall] = {}
        self._answered: dict[str, tuple[str, float]] = {}
        self._results: dict[str, dict[str, Any]] = {}
        self._presence: dict[str, dict[str, float]] = {}

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        yield

    def _expire(self) -> None:
        now = time.time()
        for call_id in [k for k, c in self._calls.items() if now - c.created_at > CALL_TTL_SECONDS]:
            del self._calls[call_id]
        for call_id in [k for k, (_, at) in self._answered.items() if now - at > ANSWERED_TTL_SECONDS]:
            del self._answered[call_id]

    async def create(self, call: PendingCall) -> None:
        self._expire()
        self._calls[call.call_id] = call

    async def create_and_send(self, call: PendingCall, envelope: dict[str, Any]) -> bool:
        """Store the call, and hand the envelope to the user's devices if one is online; True if so."""
        await self.create(call)
        online = await self.online(call.user_id)
        if online:
            await self.publish_envelope(call.user_id, envelope)
        return online

    async def get(self, call_id: str) -> PendingCall | None:
        self._expire()
        return self._calls.get(call_id)

    async def pending_for(self, user_id: str) -> list[PendingCall]:
        self._expire()
        now = time.time()
        mine = (c for c in self._calls.values() if c.user_id == user_id and c.live(now))
        return sorted(mine, key=lambda c: c.created_at)

    async def complete(
        self, call_id: str, user_id: str, response: dict[str, Any], *, waiter_here: bool = False
    ) -> Outcome:
        self._expire()
        call = self._calls.get(call_id)
        if call is None:
            answered = self._answered.get(call_id)
            return Outcome.ALREADY_ANSWERED if answered and answered[0] == user_id else Outcome.UNKNOWN
        if call.user_id != user_id:
            return Outcome.UNKNOWN
        del self._calls[call_id]
        self._answered[call_id] = (user_id, time.time())
        if not waiter_here:
            self._results[call_id] = response
            self._listener.call_answered(call_id)
        return Outcome.COMPLETED

    async def take_result(self, call_id: str) -> dict[str, Any] | None:
        return self._results.pop(call_id, None)

    async def discard(self, call_id: str) -> None:
        self._calls.pop(call_id, None)
        self._results.pop(call_id, None)

    async def mark_online(self, user_id: str, device_id: str, ttl: float) -> None:
        self._presence.setdefault(user_id, {})[device_id] = time.time() + ttl

    async def mark_offline(self, user_id: str, device_id: str) -> None:
        self._presence.get(user_id, {}).pop(device_id, None)

    async def online(self, user_id: str) -> bool:
        now = time.time()
        return any(until > now for until in self._presence.get(user_id, {}).values())

    async def publish_envelope(self, user_id: str, envelope: dict[str, Any]) -> None:
        self._listener.envelope_arrived(user_id, envelope)

    async def ping(self) -> None:
        return None
