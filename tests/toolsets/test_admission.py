"""The admission step's limiters (toolsets/admission): the rate as a GCRA, the slots, both in memory and shared in
Redis, and what happens when Redis is away."""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator

import pytest

from toolsets.admission.admission import Admission
from toolsets.admission.kinds import RequestKind
from toolsets.admission.limits import Limits, Refused
from toolsets.admission.memory_limiter import MemoryLimiter
from toolsets.admission.redis_limiter import RedisLimiter
from toolsets.infra.redis_client import open_redis

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")


class Counted:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def limited(self, kind: str, limit: str) -> None:
        self.seen.append((kind, limit))


@pytest.fixture
async def redis() -> AsyncIterator[object]:
    client = open_redis(REDIS_URL)
    try:
        yield client
    finally:
        await client.aclose()


async def test_the_rate_lets_a_burst_through_then_says_how_long_to_wait() -> None:
    limits = Limits(per_minute=3)
    limiter = MemoryLimiter(limits)
    for _ in range(3):
        assert await limiter.acquire("alice", count=True, slot=None) is None
    refused = await limiter.acquire("alice", count=True, slot=None)
    assert isinstance(refused, Refused) and refused.limit == "rate"
    assert 19 <= refused.retry_after_s <= 20  # one of 3 a minute comes back every 20 s
    assert "at most 3 a minute" in refused.reason and f"{refused.retry_after_s} s" in refused.reason
    assert await limiter.acquire("bob", count=True, slot=None) is None  # per user


async def test_slots_are_given_back() -> None:
    limiter = MemoryLimiter(Limits(concurrent=2))
    assert await limiter.acquire("alice", count=False, slot="a") is None
    assert await limiter.acquire("alice", count=False, slot="b") is None
    busy = await limiter.acquire("alice", count=False, slot="c")
    assert isinstance(busy, Refused) and busy.limit == "concurrency" and "at once" in busy.reason
    await limiter.release("alice", "a")
    assert await limiter.acquire("alice", count=False, slot="c") is None


async def test_a_refused_request_takes_neither_count_nor_slot() -> None:
    limiter = MemoryLimiter(Limits(per_minute=1, concurrent=1))
    assert await limiter.acquire("alice", count=True, slot="a") is None
    assert await limiter.acquire("alice", count=True, slot="b") is not None  # busy: not counted either
    await limiter.release("alice", "a")
    refused = await limiter.acquire("alice", count=True, slot="c")
    assert refused is not None and refused.limit == "rate"
    assert await limiter.acquire("alice", count=False, slot="d") is None  # the refusal left no slot held


async def test_kinds_decide_what_is_counted_and_what_holds_a_slot() -> None:
    counter = Counted()
    admission = Admission(MemoryLimiter(Limits(per_minute=2, concurrent=1)), Limits(2, 1), refusals=counter)
    held = await admission.enter("alice", RequestKind.CALL)
    assert not isinstance(held, Refused) and held.holds
    nested = await admission.enter("alice", RequestKind.NESTED)  # inside its parent's slot, but counted
    assert not isinstance(nested, Refused) and not nested.holds
    third = await admission.enter("alice", RequestKind.TASK)
    assert isinstance(third, Refused) and third.limit == "rate"
    run = await admission.enter("alice", RequestKind.TASK_RUN)  # its making was counted; it needs a slot
    assert isinstance(run, Refused) and run.limit == "concurrency"
    await held.leave()
    run = await admission.enter("alice", RequestKind.TASK_RUN)
    assert not isinstance(run, Refused) and run.holds
    await run.leave()
    assert counter.seen == [("task", "rate"), ("task_run", "concurrency")]


async def test_no_limits_costs_nothing() -> None:
    admission = Admission(MemoryLimiter(Limits()), Limits())
    for _ in range(1000):
        ticket = await admission.enter("alice", RequestKind.CALL)
        assert not isinstance(ticket, Refused) and not ticket.holds


async def test_replicas_share_the_rate_and_the_slots_in_redis(redis: object) -> None:
    prefix = f"t-adm-{secrets.token_hex(4)}:"
    limits = Limits(per_minute=4, concurrent=2)
    a, b = RedisLimiter(redis, limits, prefix=prefix), RedisLimiter(redis, limits, prefix=prefix)
    assert await a.acquire("alice", count=True, slot="s1") is None
    assert await b.acquire("alice", count=True, slot="s2") is None
    busy = await a.acquire("alice", count=True, slot="s3")
    assert isinstance(busy, Refused) and busy.limit == "concurrency"
    await b.release("alice", "s2")
    assert await a.acquire("alice", count=True, slot="s3") is None
    assert await b.acquire("alice", count=True, slot=None) is None
    refused = await a.acquire("alice", count=True, slot=None)
    assert isinstance(refused, Refused) and refused.limit == "rate" and 1 <= refused.retry_after_s <= 15
    assert await b.acquire("bob", count=True, slot="x") is None


async def test_without_redis_each_replica_counts_alone_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    gone = open_redis("redis://127.0.0.1:1/0")
    try:
        limiter = RedisLimiter(gone, Limits(per_minute=2, concurrent=1))
        assert await limiter.acquire("alice", count=True, slot="a") is None
        busy = await limiter.acquire("alice", count=True, slot="b")
        assert isinstance(busy, Refused) and busy.limit == "concurrency"
        await limiter.release("alice", "a")
        assert await limiter.acquire("alice", count=True, slot=None) is None
        assert isinstance(await limiter.acquire("alice", count=True, slot=None), Refused)
    finally:
        await gone.aclose()
    warnings = [r for r in caplog.records if "per-user limits are counted on this replica" in r.getMessage()]
    assert len(warnings) == 1
