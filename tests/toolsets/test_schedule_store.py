"""The schedules' store on both backends: the owner's cap, a tick claimed once (also when two claims race), the
kept runs bounded, ended schedules staying ended, and each owner's list."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import anyio
import pytest

from tests.support import services_for
from toolsets.infra.store.schedules import MAX_RUNS_KEPT, Schedule, ScheduleCapReachedError, ScheduleRun

pytestmark = pytest.mark.anyio


def _schedule(number: int, owner: str = "alice") -> Schedule:
    return Schedule(
        id=f"sch_{number:04d}{owner}", owner_id=owner, timezone="Asia/Seoul", profile="member", tool="get_events",
        tool_ref={"kind": "builtin", "tool_name": "get_events"}, when="PT5S", kind="interval",
        created_at=f"2026-11-27T00:00:{number % 60:02d}+00:00",
    )  # fmt: skip


def _run(schedule_id: str, second: int) -> ScheduleRun:
    planned = (dt.datetime(2026, 11, 27, tzinfo=dt.UTC) + dt.timedelta(seconds=second)).isoformat()
    return ScheduleRun(schedule_id=schedule_id, planned_at=planned, started_at=planned, replica="r")


async def test_cap_claims_runs_and_status(tmp_path: Path, store_backend: str) -> None:
    store = services_for(tmp_path / "data").schedules
    for number in range(3):
        await store.create(_schedule(number), cap=3)
    with pytest.raises(ScheduleCapReachedError):
        await store.create(_schedule(9), cap=3)
    await store.create(_schedule(1, owner="bob"), cap=3)  # a cap is per owner
    assert [s.id for s in await store.listed("alice")] == ["sch_0002alice", "sch_0001alice", "sch_0000alice"]
    assert [s.id for s in await store.listed("bob")] == ["sch_0001bob"]
    assert len(await store.listed(None)) == 4

    first = _run("sch_0000alice", 0)
    claimed = []

    async def claim() -> None:
        claimed.append(await store.claim(first))

    async with anyio.create_task_group() as group:  # two replicas taking the same tick
        group.start_soon(claim)
        group.start_soon(claim)
    assert sorted(claimed) == [False, True]
    await store.finish(first.model_copy(update={"status": "error", "code": "timeout", "summary": "late"}))
    for second in range(5, 5 * (MAX_RUNS_KEPT + 5), 5):
        run = _run("sch_0000alice", second)
        assert await store.claim(run)
        await store.finish(run.model_copy(update={"status": "ok"}))
    runs = await store.recent_runs("sch_0000alice")
    assert len(runs) == MAX_RUNS_KEPT and runs[0].planned_at > runs[-1].planned_at
    kept = await store.get("sch_0000alice")
    assert kept is not None and kept.runs == MAX_RUNS_KEPT + 5 and kept.failures == 1

    cancelled = await store.set_status("sch_0001alice", "cancelled", "by alice")
    assert cancelled is not None and cancelled.status == "cancelled" and cancelled.next_run_at is None
    again = await store.set_status("sch_0001alice", "paused", "should not apply")
    assert again is not None and again.status == "cancelled"  # ended stays ended
    await store.planned("sch_0001alice", "2030-01-01T00:00:00+00:00")
    assert (await store.get("sch_0001alice")).next_run_at is None  # type: ignore[union-attr]
    assert "sch_0001alice" not in {s.id for s in await store.listed("alice")}
    assert "sch_0001alice" in {s.id for s in await store.listed("alice", include_ended=True)}
    await store.create(_schedule(7), cap=3)  # the cancelled one no longer counts
    assert await store.get("sch_nope") is None and await store.set_status("sch_nope", "paused", None) is None
