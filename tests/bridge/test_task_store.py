"""MCP tasks' state, in memory and on the real Redis alike: scoped to the caller who made a task, final once
finished, gone when its TTL runs out, listed a page at a time, bounded per user, and shared by two replicas."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from toolsets.infra.redis_client import redis_of
from toolsets.infra.store.tasks import (
    MAX_RECORD_BYTES,
    InMemoryTaskStore,
    TaskBudgetError,
    TaskLimitError,
    TaskRecord,
    TaskSummary,
    TaskTooLargeError,
)
from toolsets.infra.store.tasks.redis import RedisTaskStore

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

Make = Callable[..., Any]  # a store of the parameter's kind, with the bounds given


@pytest.fixture(params=["memory", "redis"])
def make(request: pytest.FixtureRequest) -> Make:
    if request.param == "memory":
        return InMemoryTaskStore
    url, prefix = request.getfixturevalue("redis_url"), request.getfixturevalue("redis_prefix")
    return lambda **bounds: RedisTaskStore(url, prefix=prefix, **bounds)


@pytest.fixture
def store(make: Make) -> Any:
    return make()


def done(record: TaskRecord) -> TaskRecord:
    return record.model_copy(update={"status": "completed", "result": {"content": [], "isError": False}})


async def test_a_task_is_its_callers_only_and_final_once_finished(store: Any) -> None:
    made = await store.create(TaskRecord(owner="alice", tool="get_calendar_events", ttl_ms=60_000))
    assert (await store.get("alice", made.task_id)) == made
    assert await store.get("bob", made.task_id) is None  # another user: not found, as for no task at all
    assert await store.change("bob", made.task_id, done) is None
    asked = await store.change(
        "alice", made.task_id, lambda r: r.model_copy(update={"status": "input_required", "input_requests": {"a": 1}})
    )
    assert asked is not None and asked.status == "input_required" and asked.updated_ms >= made.updated_ms
    finished = await store.change("alice", made.task_id, done)
    assert finished is not None and finished.status == "completed"
    revived = await store.change("alice", made.task_id, lambda r: r.model_copy(update={"status": "working"}))
    assert revived is not None and revived.status == "completed"  # a finished task stays finished
    cancelled = await store.change("alice", made.task_id, lambda r: r.model_copy(update={"status": "cancelled"}))
    assert cancelled is not None and cancelled.status == "completed"
    assert await store.get("alice", "no-such-task") is None


async def test_a_task_is_gone_when_its_ttl_runs_out(store: Any) -> None:
    made = await store.create(TaskRecord(owner="alice", tool="t", ttl_ms=300))
    assert await store.get("alice", made.task_id) is not None
    await anyio.sleep(0.5)
    assert await store.get("alice", made.task_id) is None
    assert await store.change("alice", made.task_id, done) is None
    assert (await store.list("alice", None, 10))[0] == []


async def test_the_list_pages_oldest_first_and_holds_only_the_callers(store: Any) -> None:
    now = int(time.time() * 1000)
    for n in range(5):
        await store.create(TaskRecord(owner="alice", tool=f"t{n}", ttl_ms=60_000, created_ms=now + n))
    await store.create(TaskRecord(owner="bob", tool="theirs", ttl_ms=60_000))
    first, cursor = await store.list("alice", None, 2)
    second, cursor2 = await store.list("alice", cursor, 2)
    third, end = await store.list("alice", cursor2, 2)
    assert [r.tool for r in first + second + third] == ["t0", "t1", "t2", "t3", "t4"] and end is None
    with pytest.raises(ValueError):
        await store.list("alice", "not-a-cursor", 2)


async def test_a_user_has_a_bounded_number_of_live_tasks(make: Make) -> None:
    store = make(max_unfinished=3)
    for _ in range(3):
        await store.create(TaskRecord(owner="alice", tool="t", ttl_ms=60_000))
    with pytest.raises(TaskLimitError):
        await store.create(TaskRecord(owner="alice", tool="t", ttl_ms=60_000))
    await store.create(TaskRecord(owner="bob", tool="t", ttl_ms=60_000))  # someone else is not held back


async def test_two_replicas_share_a_task_and_race_to_finish_it_once(redis_url: str, redis_prefix: str) -> None:
    a, b = RedisTaskStore(redis_url, prefix=redis_prefix), RedisTaskStore(redis_url, prefix=redis_prefix)
    made = await a.create(TaskRecord(owner="alice", tool="get_calendar_events", ttl_ms=60_000))
    seen = await b.get("alice", made.task_id)
    assert seen == made
    outcomes: list[str] = []

    async def finish(store: RedisTaskStore, status: str) -> None:
        after = await store.change(
            "alice", made.task_id, lambda r: r.model_copy(update={"status": status}) if not r.terminal else None
        )
        assert after is not None
        outcomes.append(after.status)

    async with anyio.create_task_group() as tg:
        tg.start_soon(finish, a, "completed")
        tg.start_soon(finish, b, "cancelled")
    final = await a.get("alice", made.task_id)
    assert final is not None and final.status in ("completed", "cancelled")
    assert outcomes.count(final.status) == 2  # whoever came second saw the first one's finish, and kept it


def big(owner: str = "alice", size: int = 0, **fields: Any) -> TaskRecord:
    return TaskRecord(owner=owner, tool="t", ttl_ms=60_000, arguments={"note": "x" * size}, **fields)


async def test_a_record_past_64_kib_is_refused_and_nothing_is_kept(store: Any) -> None:
    with pytest.raises(TaskTooLargeError) as refused:
        await store.create(big(size=MAX_RECORD_BYTES))
    assert "64 KiB" in refused.value.message
    assert (await store.list("alice", None, 10))[0] == []
    kept = await store.create(big(size=MAX_RECORD_BYTES - 2000))  # just under: kept
    huge = {"content": [{"type": "text", "text": "y" * MAX_RECORD_BYTES}], "isError": False}
    failed = await store.change(
        "alice", kept.task_id, lambda r: r.model_copy(update={"status": "completed", "result": huge})
    )
    assert failed is not None and failed.status == "failed" and failed.result is None  # a result too large fails it
    answers = await store.create(big())
    with pytest.raises(TaskTooLargeError):  # the client's answers too large: refused, the task unchanged
        await store.change("alice", answers.task_id, lambda r: r.model_copy(update={"answers": {"k": "z" * 70_000}}))
    assert (await store.get("alice", answers.task_id)) == answers


async def test_a_users_records_hold_at_most_their_byte_budget(make: Make) -> None:
    store = make(max_user_bytes=200_000)
    made = [await store.create(big(size=60_000)) for _ in range(3)]
    with pytest.raises(TaskBudgetError) as refused:
        await store.create(big(size=60_000))
    assert "16 MiB" in refused.value.message
    await store.create(big(owner="bob", size=60_000))  # someone else is not held back
    await store.create(big(size=100))  # a small one still fits
    result = {"content": [{"type": "text", "text": "r" * 30_000}], "isError": False}
    over = await store.change(
        "alice", made[0].task_id, lambda r: r.model_copy(update={"status": "completed", "result": result})
    )
    assert over is not None and over.status == "failed" and over.result is None  # it would pass the budget


async def test_the_cap_counts_only_unfinished_tasks(make: Make) -> None:
    store = make(max_unfinished=3)
    for _ in range(3):
        made = await store.create(big())
        await store.change("alice", made.task_id, done)
    waiting = [await store.create(big()) for _ in range(3)]  # three finished ones block nothing
    with pytest.raises(TaskLimitError):
        await store.create(big())
    await store.change("alice", waiting[0].task_id, lambda r: r.model_copy(update={"status": "cancelled"}))
    await store.create(big())


async def test_a_refused_create_reads_no_record(redis_url: str, redis_prefix: str) -> None:
    store = RedisTaskStore(redis_url, prefix=redis_prefix, max_unfinished=100)
    for _ in range(100):
        await store.create(big(size=30_000))
    started = time.perf_counter()
    for _ in range(20):
        with pytest.raises(TaskLimitError):
            await store.create(big())
    assert time.perf_counter() - started < 1.0  # (a running total, not 100 records read per refusal)


async def test_an_expired_task_gives_its_place_back(make: Make) -> None:
    store = make(max_unfinished=1)
    await store.create(TaskRecord(owner="alice", tool="t", ttl_ms=300))
    with pytest.raises(TaskLimitError):
        await store.create(big())
    await anyio.sleep(0.5)
    await store.create(big())


async def test_the_list_reads_summaries_not_records(store: Any) -> None:
    made = await store.create(big(size=50_000))
    result = {"content": [], "isError": True}
    await store.change("alice", made.task_id, lambda r: r.model_copy(update={"status": "completed", "result": result}))
    (summary,), _ = await store.list("alice", None, 10)
    assert isinstance(summary, TaskSummary) and summary.status == "completed" and summary.tool_error
    assert 50_000 < summary.bytes < 51_000 and len(summary.model_dump_json()) < 500


async def test_the_redis_list_never_parses_a_record(redis_url: str, redis_prefix: str) -> None:
    store = RedisTaskStore(redis_url, prefix=redis_prefix)
    now = int(time.time() * 1000)
    made = [await store.create(big(size=10, created_ms=now + n)) for n in range(3)]
    client = redis_of(redis_url)
    for record in made:  # a record the list would have to parse is no longer JSON at all
        await client.set(f"{redis_prefix}task:{record.task_id}", "not json", keepttl=True)
    first, cursor = await store.list("alice", None, 2)
    rest, end = await store.list("alice", cursor, 2)
    assert [s.task_id for s in first + rest] == [r.task_id for r in made] and end is None
    await client.aclose()
