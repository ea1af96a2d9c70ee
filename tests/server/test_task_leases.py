"""Exactly-once runs of MCP tasks across replicas: two task engines on one Redis, each with its own lease id and a
short lease. A run renews its lease while it goes on; one whose lease lapsed fails as interrupted and never runs
again; `tasks/update` starts a run only on the change from input_required to working, once."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from server.runtime.composition import Deployment
from server.tasks.engine import TaskEngine, TaskStart
from tests.support import eventually, settings
from toolsets.core.context import Caller, RequestInfo
from toolsets.core.envelope import ToolOk
from toolsets.infra.store.tasks import ClientFlags, TaskRecord, now_ms
from toolsets.infra.store.tasks.redis import RedisTaskStore

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(40)]

ALICE = Caller("alice")
LEASE = 0.6  # seconds; renewed every 0.2 s


class Done(BaseModel):
    ok: bool = True


class CountingDoor:
    """A front door that counts the calls that reach it (what a tool charging once per run would count), each one
    taking `seconds`, before it hands them to `inner` (or answers itself without one)."""

    def __init__(self, runs: list[str], seconds: float, inner: Any = None) -> None:
        self.runs, self.seconds, self.inner = runs, seconds, inner

    def context_for(self, caller: Caller, profile: str, **parts: Any) -> Any:
        return self.inner.context_for(caller, profile, **parts) if self.inner is not None else None

    async def call(self, ctx: Any, name: str, arguments: dict[str, Any], **_: Any) -> Any:
        self.runs.append(name)
        await anyio.sleep(self.seconds)
        return await self.inner.call(ctx, name, arguments) if self.inner is not None else ToolOk(Done())


class Severable(RedisTaskStore):
    """A replica's store that it can lose touch with (`away`): every change then fails, as over a cut network."""

    away = False

    async def change(self, *args: Any) -> Any:
        if self.away:
            raise ConnectionError("the store is away")
        return await super().change(*args)


@contextlib.asynccontextmanager
async def engines(url: str, prefix: str, door: Any) -> AsyncIterator[tuple[TaskEngine, TaskEngine]]:
    made = [
        TaskEngine(Severable(url, prefix=prefix), lambda: door, None, deferred_timeout=5, stdio=False,
                   lease_seconds=LEASE)
        for _ in range(2)
    ]  # fmt: skip
    async with made[0].running(), made[1].running():
        yield made[0], made[1]


def start(tool: str, arguments: dict[str, Any]) -> TaskStart:
    return TaskStart(
        caller=ALICE,
        profile="member",
        tool=tool,
        arguments=arguments,
        modern=True,
        client=ClientFlags(elicit_form=True),
        ttl_ms=60_000,
        poll_interval_ms=100,
        request=RequestInfo(transport="test"),
    )


async def status(engine: TaskEngine, task_id: str, *wanted: str, seconds: float = 10) -> TaskRecord:
    with anyio.fail_after(seconds):
        while True:
            record = await engine.get("alice", "member", task_id)
            assert record is not None
            if record.status in wanted:
                return record
            await anyio.sleep(0.02)


async def test_a_long_run_renews_its_lease_and_finishes_once(redis_url: str, redis_prefix: str) -> None:
    runs: list[str] = []
    async with engines(redis_url, redis_prefix, CountingDoor(runs, seconds=LEASE * 4)) as (a, b):
        made = await a.start(start("slow", {}))
        seen = set()
        with anyio.fail_after(10):
            while (record := await b.get("alice", "member", made.task_id)) is not None and not record.terminal:
                seen.add(record.status)
                assert record.lease_owner is not None and record.lease_owner.startswith(a.replica)
                await anyio.sleep(0.05)
        assert record is not None and record.status == "completed" and record.lease_owner is None
        assert seen == {"working"} and runs == ["slow"]


async def test_a_lapsed_lease_fails_the_task_as_interrupted_and_it_never_runs_again(
    redis_url: str, redis_prefix: str
) -> None:
    runs: list[str] = []
    store = RedisTaskStore(redis_url, prefix=redis_prefix)
    # what a replica that died one second into its run leaves: a working task whose lease nobody renews
    gone = TaskRecord(
        owner="alice", tool="charge", ttl_ms=60_000, lease_owner="dead-replica/1", lease_expires_ms=now_ms() + 300
    )
    await store.create(gone)
    async with engines(redis_url, redis_prefix, CountingDoor(runs, seconds=0)) as (_, b):
        assert (await b.get("alice", "member", gone.task_id)).status == "working"  # type: ignore[union-attr]
        failed = await status(b, gone.task_id, "failed", "completed", seconds=5)
        assert failed.status == "failed" and "interrupted" in (failed.status_message or "")
        assert failed.error is not None and "interrupted" in failed.error["message"]
        await b.update("alice", "member", gone.task_id, {"anything": {"action": "accept"}})
        await b._run("alice", gone.task_id, None)  # what a device's answer or a tasks/get would start: nothing
        await anyio.sleep(0.2)
    assert runs == []


async def test_a_run_that_loses_the_store_is_reported_interrupted_by_the_other_replica(
    redis_url: str, redis_prefix: str
) -> None:
    runs: list[str] = []
    door = CountingDoor(runs, seconds=30)
    async with engines(redis_url, redis_prefix, door) as (a, b):
        made = await a.start(start("charge", {}))
        await status(b, made.task_id, "working")
        await eventually(lambda: bool(runs))
        a.store.away = True  # type: ignore[attr-defined]  # A can no longer renew its lease: it lapses
        failed = await status(b, made.task_id, "failed", seconds=5)
        assert "interrupted" in (failed.status_message or "")
        await b.update("alice", "member", made.task_id, {"x": {"action": "accept"}})
        await anyio.sleep(LEASE)
    assert runs == ["charge"]


async def test_an_update_with_unrelated_keys_on_another_replica_starts_no_run(
    redis_url: str, redis_prefix: str, tmp_path: Path
) -> None:
    deployment = Deployment(settings(data_dir=tmp_path / "data"))
    async with deployment:
        door = deployment.front_door
        saved = await door.call(door.context_for(ALICE, "member"), "save_memory", {"content": "a note"})
        memory_id = str(saved.data.model_dump()["id"])  # type: ignore[union-attr]
        runs: list[str] = []
        async with engines(redis_url, redis_prefix, CountingDoor(runs, seconds=0.5, inner=door)) as (a, b):
            made = await a.start(start("forget_memory", {"memory_id": memory_id}))
            asking = await status(a, made.task_id, "input_required")
            (key,) = asking.input_requests or {}
            accepted = await a.update(
                "alice", "member", made.task_id, {key: {"action": "accept", "content": {"confirm": True}}}
            )
            assert accepted is not None and accepted.status == "working"
            for engine in (b, a):  # while the confirmed run goes on: an unrelated key, and the same answer again
                await engine.update("alice", "member", made.task_id, {"unrelated": {"x": 1}})
                await engine.update(
                    "alice", "member", made.task_id, {key: {"action": "accept", "content": {"confirm": True}}}
                )
            done = await status(b, made.task_id, "completed")
            assert done.result is not None and done.result["structuredContent"]["forgotten"] is True
            await anyio.sleep(0.7)
        assert runs == ["forget_memory", "forget_memory"]  # the run that asked, and the one confirmed: no third
