"""Two replicas on one Redis (two store clients, two routers): they route by the same share, judge the same shared
samples, reach the same decision, and exactly one of them writes it (and audits it)."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from toolsets.extensions.plugins.catalog import PluginCatalog
from toolsets.pipeline.canary import actions
from toolsets.pipeline.canary.metrics import Sample, windows
from toolsets.pipeline.canary.policy import LOW_RISK_LADDER
from toolsets.pipeline.canary.redis_store import RedisCanaryStore
from toolsets.pipeline.canary.router import CanaryRouter, CanarySetup
from toolsets.pipeline.canary.routing import to_candidate
from toolsets.pipeline.canary.rules import decide

pytestmark = pytest.mark.anyio


async def replicas(redis_url: str, redis_prefix: str) -> tuple[CanaryRouter, CanaryRouter]:
    routers = []
    for _ in range(2):
        router = CanaryRouter(
            PluginCatalog(reserved=frozenset), CanarySetup(RedisCanaryStore(redis_url, prefix=redis_prefix), "user")
        )
        routers.append(router)
    first = actions.start("lookup", "stable000001", "cand00000001", LOW_RISK_LADDER)
    assert await routers[0].store.save(first, None)
    assert not await routers[1].store.save(first, None)  # the second replica's start loses: one state
    return routers[0], routers[1]


async def feed(routers: tuple[CanaryRouter, CanaryRouter], *, calls: int, failing: set[int]) -> None:
    """`calls` candidate calls and as many stable ones, taken alternately by the two replicas."""
    state = await routers[0].store.load("lookup")
    assert state is not None
    now = time.time()
    for n in range(calls):
        store = routers[n % 2].store
        outcome = "error" if n in failing else "ok"
        await store.record(state.step_key(), Sample(now, outcome, 5.0 + n % 3))
        await store.record(state.stable_key(), Sample(now, "ok", 5.0 + n % 4))


async def close(routers: tuple[CanaryRouter, CanaryRouter]) -> None:
    for router in routers:
        await router.store.aclose()


async def both_evaluate(routers: tuple[CanaryRouter, CanaryRouter]) -> tuple[list[Any], list[dict[str, Any]]]:
    written: list[Any] = [None, None]
    events: list[dict[str, Any]] = []

    async def evaluate(index: int) -> None:
        written[index] = await routers[index].evaluate("lookup", events.append)

    async with anyio.create_task_group() as tg:
        tg.start_soon(evaluate, 0)
        tg.start_soon(evaluate, 1)
    return written, events


async def test_two_replicas_agree_on_a_promotion_and_write_it_once(redis_url: str, redis_prefix: str) -> None:
    routers = await replicas(redis_url, redis_prefix)
    try:
        await feed(routers, calls=100, failing=set())
        views = []
        for router in routers:
            state = await router.store.load("lookup")
            assert state is not None
            cand = windows(await router.store.samples(state.step_key()))
            stab = windows(await router.store.samples(state.stable_key()))
            views.append(decide(state, cand, stab))
        assert views[0] == views[1] and views[0].action == "promote"

        written, events = await both_evaluate(routers)
        assert sum(state is not None for state in written) == 1  # one write wins; the other read it back
        assert [(e["action"], e["share_to"]) for e in events] == [("promote", 30)]
        seen = [await router.store.load("lookup") for router in routers]
        assert seen[0] == seen[1] and seen[0] is not None and seen[0].share == 30 and seen[0].revision == 1
        keys = [f"user:{n}" for n in range(2000)]
        assert [to_candidate("lookup", k, seen[0].share) for k in keys] == [
            to_candidate("lookup", k, seen[1].share) for k in keys
        ]
    finally:
        await close(routers)


async def test_two_replicas_roll_back_on_errors_neither_saw_enough_of_alone(redis_url: str, redis_prefix: str) -> None:
    routers = await replicas(redis_url, redis_prefix)
    try:
        await feed(routers, calls=40, failing={3, 17, 29})  # 7.5% in all: 2 on one replica, 1 on the other
        written, events = await both_evaluate(routers)
        assert sum(state is not None for state in written) == 1
        assert [e["action"] for e in events] == ["rollback"]
        for router in routers:
            state = await router.store.load("lookup")
            assert state is not None and state.status == "rolled_back" and state.routed_share == 0
    finally:
        await close(routers)
