"""The pending-call contract against the real Redis (and the in-process backend): TTL, user index,
at-most-once completion across replicas, cross-replica wake-up and delivery, presence."""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from bridge.jsonrpc import RpcResponse
from bridge.pending import BackendFactory, BackendListener, InMemoryBridgeBackend, Outcome, PendingCall
from bridge.redis_backend import RedisBackend
from bridge.service import DeviceBridge
from tests.support import eventually

pytestmark = pytest.mark.anyio


def call(call_id: str, user: str = "alice") -> PendingCall:
    return PendingCall(call_id=call_id, tool_name="confirm_interaction", method="interaction.confirm",
                       params={"title": "t", "message": "m"}, user_id=user, notification_message="Asking")  # fmt: skip


def answer(call_id: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": call_id, "result": {"confirmed": True}}


@pytest.fixture(params=["memory", "redis"])
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    if request.param == "memory":
        yield InMemoryBridgeBackend()
        return
    url = request.getfixturevalue("redis_url")
    redis_backend = RedisBackend(url, prefix=request.getfixturevalue("redis_prefix"))
    async with redis_backend.running():
        yield redis_backend


async def test_call_lifecycle_and_user_index(backend: Any) -> None:
    await backend.create(call("c1"))
    await backend.create(call("c2"))
    await backend.create(call("c3", user="bob"))
    assert [c.call_id for c in await backend.pending_for("alice")] == ["c1", "c2"]
    stored = await backend.get("c1")
    assert stored is not None and stored.params == {"title": "t", "message": "m"} and stored.channel == "rpc-stream"
    assert await backend.complete("c1", "bob", answer("c1")) is Outcome.UNKNOWN  # a stranger
    assert await backend.complete("c1", "alice", answer("c1")) is Outcome.COMPLETED
    assert await backend.complete("c1", "alice", answer("c1")) is Outcome.ALREADY_ANSWERED
    assert await backend.complete("nope", "alice", answer("nope")) is Outcome.UNKNOWN
    assert await backend.get("c1") is None
    assert [c.call_id for c in await backend.pending_for("alice")] == ["c2"]
    assert await backend.take_result("c1") == answer("c1")
    assert await backend.take_result("c1") is None
    await backend.discard("c2")
    assert await backend.pending_for("alice") == []


async def test_redis_keys_carry_the_one_hour_ttl(redis_url: str, redis_prefix: str) -> None:
    import redis.asyncio as redis

    backend = RedisBackend(redis_url, prefix=redis_prefix)
    await backend.create(call("ttl1"))
    client = redis.from_url(redis_url)
    try:
        ttl = await client.ttl(f"{redis_prefix}call:ttl1")
        assert 3590 <= ttl <= 3600
        await backend.complete("ttl1", "alice", answer("ttl1"))
        assert 3590 <= await client.ttl(f"{redis_prefix}answered:ttl1") <= 3600
    finally:
        await client.aclose()


async def test_two_replicas_racing_answers_complete_once(redis_url: str, redis_prefix: str) -> None:
    replica_a, replica_b = RedisBackend(redis_url, prefix=redis_prefix), RedisBackend(redis_url, prefix=redis_prefix)
    ids = [f"race{n}" for n in range(100)]
    for call_id in ids:
        await replica_a.create(call(call_id))
    outcomes: list[Outcome] = []

    async def complete(backend: RedisBackend, call_id: str) -> None:
        outcomes.append(await backend.complete(call_id, "alice", answer(call_id)))

    async with anyio.create_task_group() as tg:
        for call_id in ids:
            tg.start_soon(complete, replica_a, call_id)
            tg.start_soon(complete, replica_b, call_id)
    assert outcomes.count(Outcome.COMPLETED) == 100
    assert outcomes.count(Outcome.ALREADY_ANSWERED) == 100


async def test_answer_on_replica_b_wakes_the_call_waiting_on_replica_a(redis_url: str, redis_prefix: str) -> None:
    bridge_a = DeviceBridge(functools.partial(RedisBackend, redis_url, prefix=redis_prefix), poll_interval=30)
    bridge_b = DeviceBridge(functools.partial(RedisBackend, redis_url, prefix=redis_prefix), poll_interval=30)
    got: list[RpcResponse] = []
    woken = anyio.Event()
    async with bridge_a.running(), bridge_b.running():
        with anyio.fail_after(5):
            await bridge_a.backend.listening.wait()  # type: ignore[attr-defined]
            await bridge_b.backend.listening.wait()  # type: ignore[attr-defined]
        async with bridge_b.device_stream("alice") as envelopes, anyio.create_task_group() as tg:

            async def wait_on_a() -> None:
                got.append(await bridge_a.call_device(call("x1"), give_up_after=10))
                woken.set()

            tg.start_soon(wait_on_a)
            with anyio.fail_after(5):
                envelope = await envelopes.receive()  # delivered to the device connected to B
            request = json.loads(envelope["data"])
            assert (
                await bridge_b.answer("alice", RpcResponse.model_validate(answer(request["id"]))) is Outcome.COMPLETED
            )
            with anyio.fail_after(5):  # woken by pub/sub, not by the 30 s poll
                await woken.wait()
    assert got and got[0].result == {"confirmed": True}


class Announced:
    """A bridge's listener that also keeps the ids of the calls its backend announced as answered."""

    def __init__(self, listener: BackendListener) -> None:
        self.listener = listener
        self.ids: list[str] = []

    def call_answered(self, call_id: str) -> None:
        self.ids.append(call_id)
        self.listener.call_answered(call_id)

    def envelope_arrived(self, user_id: str, envelope: dict[str, Any]) -> None:
        self.listener.envelope_arrived(user_id, envelope)

    async def store_restored(self) -> None:
        await self.listener.store_restored()


@pytest.fixture(params=["memory", "redis"])
def backend_factory(request: pytest.FixtureRequest) -> BackendFactory:
    if request.param == "memory":
        return InMemoryBridgeBackend
    url = request.getfixturevalue("redis_url")
    return functools.partial(RedisBackend, url, prefix=request.getfixturevalue("redis_prefix"))


async def test_an_answer_arriving_where_its_call_waits_is_handed_over_in_memory(
    backend_factory: BackendFactory,
) -> None:
    """The device and the waiting call on one replica: the answer resumes the call without being stored for a
    later take or announced to the other replicas, and a second answer still counts as already answered."""
    heard: list[Announced] = []

    def counted(listener: BackendListener) -> Any:
        heard.append(Announced(listener))
        return backend_factory(heard[-1])

    bridge = DeviceBridge(counted, poll_interval=30)
    backend: Any = bridge.backend
    got: list[RpcResponse] = []
    returned = anyio.Event()
    async with bridge.running(), bridge.device_stream("alice") as envelopes, anyio.create_task_group() as tg:

        async def wait() -> None:
            got.append(await bridge.call_device(call("here1"), give_up_after=10))
            returned.set()

        tg.start_soon(wait)
        with anyio.fail_after(5):
            request = json.loads((await envelopes.receive())["data"])
        response = RpcResponse.model_validate(answer(request["id"]))
        assert await bridge.answer("alice", response) is Outcome.COMPLETED
        assert await bridge.answer("alice", response) is Outcome.ALREADY_ANSWERED
        with anyio.fail_after(5):  # not the 30 s poll
            await returned.wait()
        assert got[0].result == {"confirmed": True}
        assert heard[0].ids == [] and await backend.take_result("here1") is None and await backend.get("here1") is None
        if isinstance(backend, RedisBackend):
            assert not [key async for key in backend._redis.scan_iter(f"{backend._prefix}result:*")]


async def test_each_device_stream_gets_an_envelope_once_on_either_replica(redis_url: str, redis_prefix: str) -> None:
    """The sending replica hands the envelope to its own streams at once and skips its pub/sub copy; the other
    replica gets it through Redis: every stream, local or remote, sees each call exactly once."""
    bridge_a = DeviceBridge(functools.partial(RedisBackend, redis_url, prefix=redis_prefix), poll_interval=30)
    bridge_b = DeviceBridge(functools.partial(RedisBackend, redis_url, prefix=redis_prefix), poll_interval=30)
    async with bridge_a.running(), bridge_b.running():
        with anyio.fail_after(5):
            await bridge_a.backend.listening.wait()  # type: ignore[attr-defined]
            await bridge_b.backend.listening.wait()  # type: ignore[attr-defined]
        async with (
            bridge_a.device_stream("alice") as on_a,
            bridge_b.device_stream("alice") as on_b,
            anyio.create_task_group() as tg,
        ):
            for n in range(3):
                tg.start_soon(lambda n=n: bridge_a.call_device(call(f"once{n}"), give_up_after=10))
            await bridge_a.send_to_device("alice", {"data": "relayed"})
            seen: dict[str, list[str]] = {"a": [], "b": []}
            for name, stream in (("a", on_a), ("b", on_b)):
                with anyio.fail_after(5):
                    while len(seen[name]) < 4:
                        envelope = await stream.receive()
                        seen[name].append(envelope["data"] if envelope["data"] == "relayed" else
                                          json.loads(envelope["data"])["id"])  # fmt: skip
            await anyio.sleep(0.3)  # a duplicate would come through pub/sub by now
            for name, stream in (("a", on_a), ("b", on_b)):
                with pytest.raises(anyio.WouldBlock):
                    stream.receive_nowait()
                assert sorted(seen[name]) == ["once0", "once1", "once2", "relayed"], name
            tg.cancel_scope.cancel()


async def test_presence_is_shared_and_expires(redis_url: str, redis_prefix: str) -> None:
    replica_a, replica_b = RedisBackend(redis_url, prefix=redis_prefix), RedisBackend(redis_url, prefix=redis_prefix)
    assert not await replica_b.online("alice")
    await replica_a.mark_online("alice", "dev1", ttl=0.5)
    assert await replica_b.online("alice")

    async def expired() -> bool:
        return not await replica_b.online("alice")

    await eventually(expired, seconds=5)  # Redis expires the key on its own clock
    await replica_a.mark_online("alice", "dev1", ttl=30)
    await replica_a.mark_offline("alice", "dev1")
    assert not await replica_b.online("alice")


async def test_calls_whose_waiter_gave_up_are_not_sent_again(backend: Any) -> None:
    import time

    stale = call("gone")
    stale.deadline = time.time() - 1
    await backend.create(stale)
    await backend.create(call("live"))
    assert [c.call_id for c in await backend.pending_for("alice")] == ["live"]


async def test_a_burst_beyond_the_redis_pool_waits_instead_of_failing(redis_url: str, redis_prefix: str) -> None:
    backend = RedisBackend(redis_url, prefix=redis_prefix)
    outcomes: list[Outcome] = []

    async def one(n: int) -> None:
        await backend.create(call(f"burst{n}"))
        outcomes.append(await backend.complete(f"burst{n}", "alice", answer(f"burst{n}")))

    async with anyio.create_task_group() as tg:
        for n in range(300):
            tg.start_soon(one, n)
    assert outcomes.count(Outcome.COMPLETED) == 300
