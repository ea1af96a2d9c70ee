"""The device bridge: sends deferred calls to the user's device and waits for the answer.

Delivery is at-least-once (a call created while a device reconnects is sent again when it
comes back); completion is at-most-once (the backend decides which answer wins).
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from toolsets.words.catalog import tr

if TYPE_CHECKING:
    from bridge.jsonrpc import RpcResponse
    from bridge.pending import BackendFactory, Outcome, PendingCall

logger = logging.getLogger("truloop.bridge")

DEVICE_BACKLOG = 1024  # envelopes waiting for one device stream; past it the stream is closed (see `envelope_arrived`)

Progress = Callable[[float, float | None, str | None], Awaitable[None]]


class DeviceTimeout(Exception):  # noqa: N818
    pass


class PendingLost(Exception):  # noqa: N818
    """The call's record vanished from the shared store (Redis restarted without persistence)."""


class DeviceUnreachable(Exception):  # noqa: N818
    """No channel took the request (the device went away, or Sendbird refused it)."""


class TaskAnswers(Protocol):
    """Who finishes an MCP task when the device answers the call it waits on (server/tasks/engine.py)."""

    async def device_answered(self, call: PendingCall, response: RpcResponse) -> None: ...


class ChannelSender(Protocol):
    """An extra way to reach a device (e.g. Sendbird); True when it accepted the envelope."""

    async def send(self, user_id: str, envelope: dict[str, Any]) -> bool: ...


async def no_progress(progress: float, total: float | None, message: str | None) -> None:
    return None


class _Waiting:
    """A call this replica waits on: its device's answer is checked against `call` without reading the store,
    and an answer arriving here is put in `answer` (handed over in memory) before `woken` is set."""

    __slots__ = ("answer", "call", "woken")

    def __init__(self, call: PendingCall) -> None:
        self.call = call
        self.woken = anyio.Event()
        self.answer: RpcResponse | None = None


class DeviceBridge:
    """Also its backend's `BackendListener`: the backend is built here, by `backend`, with the bridge to tell."""

    def __init__(
        self,
        backend: BackendFactory,
        *,
        heartbeat: float = 15.0,
        presence_ttl: float = 45.0,
        poll_interval: float = 1.0,
        progress_interval: float = 5.0,
        extra_channel: ChannelSender | None = None,
    ) -> None:
        self.heartbeat = heartbeat
        self.presence_ttl = presence_ttl
        self.poll_interval = poll_interval
        self.progress_interval = progress_interval
        self.extra_channel = extra_channel
        self._waiting: dict[str, _Waiting] = {}
        self._streams: dict[str, dict[str, MemoryObjectSendStream[dict[str, Any]]]] = {}
        self.backend = backend(self)  # last: it may tell the bridge at once

    def running(self) -> contextlib.AbstractAsyncContextManager[None]:
        return self.backend.running()

    @property
    def waiting_calls(self) -> int:
        """How many device calls requests on this replica are waiting on now (`call_device`)."""
        return len(self._waiting)

    def call_answered(self, call_id: str) -> None:
        waiting = self._waiting.get(call_id)
        if waiting is not None:
            waiting.woken.set()

    async def store_restored(self) -> None:
        """The store is back, perhaps empty: say at once which devices are here (instead of at their
        next heartbeat), and wake every waiting call so it checks that its record survived."""
        for user_id, streams in list(self._streams.items()):
            for device_id in list(streams):
                try:
                    await self.backend.mark_online(user_id, device_id, self.presence_ttl)
                except Exception as exc:
                    logger.warning("device presence not re-announced (%s)", type(exc).__name__)
                    return
        for waiting in list(self._waiting.values()):
            waiting.woken.set()

    def envelope_arrived(self, user_id: str, envelope: dict[str, Any]) -> None:
        for stream in list(self._streams.get(user_id, {}).values()):
            # a closing stream: its device gets the pending calls again when it reconnects
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                try:
                    stream.send_nowait(envelope)
                except anyio.WouldBlock:
                    logger.warning(
                        "a device stream of %s was closed: its device left %d envelopes unread", user_id, DEVICE_BACKLOG
                    )
                    stream.close()

    async def reachable(self, user_id: str) -> bool:
        return self.extra_channel is not None or await self.backend.online(user_id)

    async def send_to_device(self, user_id: str, envelope: dict[str, Any]) -> bool:
        """Hand an envelope to the user's device(s), on whichever replica they are connected."""
        online = await self.backend.online(user_id)
        if online:
            await self.backend.publish_envelope(user_id, envelope)
        return await self._send_extra(user_id, envelope) or online

    async def _send_extra(self, user_id: str, envelope: dict[str, Any]) -> bool:
        if self.extra_channel is None:
            return False
        try:
            return await self.extra_channel.send(user_id, envelope)
        except Exception:
            logger.warning("the extra device channel failed for %s", user_id, exc_info=True)
            return False

    async def deliver(self, call: PendingCall) -> None:
        """Store the call and send it to the user's device, in one store round trip, without waiting for the answer
        (`call_device` waits; an MCP task's call is answered on whichever replica, which finishes the task). Raises
        `DeviceUnreachable` (the call no longer stored)."""
        from bridge.jsonrpc import Envelope

        envelope = Envelope.wrap(call.request(), call.notification_message).model_dump()
        online = await self.backend.create_and_send(call, envelope)
        if not await self._send_extra(call.user_id, envelope) and not online:
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await self.backend.discard(call.call_id)
            raise DeviceUnreachable(call.call_id)

    async def withdraw(self, call_id: str, user_id: str) -> None:
        """Nobody wants the answer any more (its task was cancelled): a late answer is refused as already answered."""
        await self.backend.complete(call_id, user_id, {}, waiter_here=True)

    async def call_device(
        self, call: PendingCall, *, give_up_after: float, progress: Progress = no_progress
    ) -> RpcResponse:
        """Store the call, deliver it, and wait for the device's answer (raises DeviceTimeout).

        The critical path is one store round trip to deliver (store, presence, publish in one; this replica's
        own device streams get the envelope at once) and the completion: an answer arriving here is handed
        over in memory, one arriving elsewhere wakes this wait through the store and is taken in one more
        round trip. The store is otherwise read only when a wait runs out (`poll_interval`: a wake-up lost
        with a dropped subscription still finds the answer)."""
        from bridge.jsonrpc import RpcResponse

        waiting = self._waiting[call.call_id] = _Waiting(call)
        answered = False
        try:
            call.deadline = time.time() + give_up_after
            await self.deliver(call)
            started = time.monotonic()
            deadline = started + give_up_after
            next_progress = started
            while True:
                now = time.monotonic()
                if now >= next_progress:
                    told = call.notification_message or tr(call.locale, "Waiting for your device")
                    await progress(round(now - started, 1), None, told)
                    next_progress = now + self.progress_interval
                with anyio.move_on_after(max(0.0, min(self.poll_interval, deadline - now, next_progress - now))):
                    await waiting.woken.wait()
                if waiting.woken.is_set():
                    waiting.woken = anyio.Event()
                if waiting.answer is not None:
                    answered = True
                    return waiting.answer
                try:
                    result = await self.backend.take_result(call.call_id)
                except Exception as exc:  # a store hiccup must not turn an accepted answer into a failure
                    logger.warning("could not read the answer to %s yet (%s)", call.call_id, type(exc).__name__)
                    result = None
                if result is None:
                    result = await self._answer_or_lost(call.call_id)
                if result is not None:
                    answered = True
                    return RpcResponse.model_validate(result)
                if time.monotonic() >= deadline:
                    raise DeviceTimeout(call.call_id)
        finally:
            self._waiting.pop(call.call_id, None)
            if not answered:
                with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                    await self.backend.discard(call.call_id)

    async def _answer_or_lost(self, call_id: str) -> dict[str, Any] | None:
        """Raise `PendingLost` when neither the call nor its answer is stored any more (completion removes
        the one and writes the other atomically, so both missing means the store lost them)."""
        try:
            if await self.backend.get(call_id) is not None:
                return None
            result = await self.backend.take_result(call_id)
        except Exception:  # the store is away: keep waiting, it may come back with the call
            return None
        if result is None:
            raise PendingLost(call_id)
        return result

    def close_streams(self) -> None:
        """End every device stream this replica holds (shutdown): devices reconnect elsewhere."""
        for streams in list(self._streams.values()):
            for stream in list(streams.values()):
                stream.close()

    async def answer(self, user_id: str, response: RpcResponse, *, taken: bool = False) -> Outcome:
        """Record a device's answer once; a waiter on this replica gets it in memory (no store round trip
        to fetch it, no wake-up through the store), a waiter elsewhere through the store. `taken`: the answer
        was already handed to its task (`TaskAnswers`), so nobody waits for it."""
        from bridge.pending import Outcome

        call_id = str(response.id)
        waiting = self._waiting.get(call_id)
        keep = waiting is not None or taken
        outcome = await self.backend.complete(call_id, user_id, response.wire(), waiter_here=keep)
        # if the wait ended meanwhile (timed out, cancelled), nobody is left to tell
        if waiting is not None and outcome is Outcome.COMPLETED and self._waiting.get(call_id) is waiting:
            waiting.answer = response
            waiting.woken.set()
        return outcome

    async def pending_call(self, call_id: str) -> PendingCall | None:
        """The call `call_id` names, for checking a device's answer to it (whose it is, what it asked): one this
        replica waits on is known here; another is read from the store. Either way `answer` decides whether
        the answer still counts (it may have been answered or withdrawn meanwhile)."""
        waiting = self._waiting.get(call_id)
        return waiting.call if waiting is not None else await self.backend.get(call_id)

    @contextlib.asynccontextmanager
    async def device_stream(self, user_id: str) -> AsyncIterator[MemoryObjectReceiveStream[dict[str, Any]]]:
        """A device's live feed of envelopes; pending calls are sent again on (re)connect."""
        from bridge.jsonrpc import Envelope

        device_id = secrets.token_hex(8)
        # A device that stops reading has its stream closed once DEVICE_BACKLOG envelopes wait (`envelope_arrived`):
        # nothing is lost, its pending calls are sent again when it reconnects.
        send, receive = anyio.create_memory_object_stream[dict[str, Any]](DEVICE_BACKLOG)
        self._streams.setdefault(user_id, {})[device_id] = send
        try:
            await self.backend.mark_online(user_id, device_id, self.presence_ttl)
            for call in (await self.backend.pending_for(user_id))[:DEVICE_BACKLOG]:
                send.send_nowait(Envelope.wrap(call.request(), call.notification_message).model_dump())
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._keep_present, user_id, device_id)
                try:
                    yield receive
                finally:
                    tg.cancel_scope.cancel()
        finally:
            self._streams.get(user_id, {}).pop(device_id, None)
            if not self._streams.get(user_id):
                self._streams.pop(user_id, None)
            send.close()
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await self.backend.mark_offline(user_id, device_id)

    async def _keep_present(self, user_id: str, device_id: str) -> None:
        while True:
            await anyio.sleep(self.heartbeat)
            try:
                await self.backend.mark_online(user_id, device_id, self.presence_ttl)
            except Exception as exc:
                logger.warning("device presence not refreshed (%s)", type(exc).__name__)
