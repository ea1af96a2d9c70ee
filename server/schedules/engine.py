"""The engine that fires scheduled runs: docket (pydocket), a distributed task queue on Redis.

With `--redis-url` the schedules' next ticks live in the deployment's Redis: each tick is one docket task under the
schedule's key (`schedule:<id>`), so however many replicas add it, one is queued; any replica's worker takes it,
runs the tick (`TickRunner`) and queues the next under the same key. A replica that dies leaves its queued ticks to
the others; a tick it had taken is delivered again after `REDELIVERY_SECONDS`, and the store's claim of each tick
(schedule id + planned instant, once) keeps it from running twice. Without Redis the same code runs in-process on
docket's `memory://` backend, with the schedules in the store (SQLite on one laptop). Either way, every replica
puts back the ticks of the active schedules when it starts (a no-op for those already queued).

The worker starts once there are schedules: at start when the store has some (on the embedded store, once the
tools are first needed, after `initialize`), with the first `schedule_tool_run`, and, with Redis, when another
replica made one (each replica looks every `LOOK_SECONDS` until its worker runs). A server that never schedules
anything never imports docket.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

if TYPE_CHECKING:
    from server.schedules.ticks import TickRunner
    from toolsets.infra.store.schedules import Schedule, ScheduleStore

logger = logging.getLogger("truloop.schedules")

TASK = "truloop_schedule_tick"  # the name of the task function in `_work`
CHECK_SECONDS = 0.05  # how often a worker looks for due ticks: the drift of a run's start is about this
REDELIVERY_SECONDS = 120  # a tick taken by a replica that died is run again after this (its claim stops a twin)
CONCURRENCY = 8  # ticks one replica runs at once
MAX_PER_USER = 50  # active or paused schedules per user
STORE_RETRY_SECONDS = 10.0  # a tick the store could not take is tried again this much later
LOOK_SECONDS = 5.0  # with Redis and no worker yet: how often a replica looks for schedules another one made


def key_of(schedule_id: str) -> str:
    return f"schedule:{schedule_id}"


class ScheduleEngine:
    """The `SchedulerPort` of a deployment (toolsets/scheduling/port.py), and its docket worker while serving."""

    def __init__(
        self,
        runner: Callable[[], TickRunner],
        store: Callable[[], ScheduleStore],
        *,
        tools_ready: Callable[[], Awaitable[None]] | None = None,
        redis_url: str | None,
        name: str,
        min_interval: float,
        max_per_user: int = MAX_PER_USER,
    ) -> None:
        self._make_runner = runner  # made on the first tick: a server that never schedules never imports it
        self._runner: TickRunner | None = None
        self._store = store
        self._url = redis_url or "memory://"
        self._name = name
        self._min_interval = min_interval
        self._max_per_user = max_per_user
        self._docket: Any = None
        self._group: anyio.abc.TaskGroup | None = None
        self._starting = anyio.Lock()
        # awaited before an embedded store's schedules are first looked at (not before a stdio server has answered
        # `initialize`, whose start-up opens no store); None: at once
        self._tools_ready = tools_ready
        self.shared = redis_url is not None

    @property
    def runner(self) -> TickRunner:
        if self._runner is None:
            self._runner = self._make_runner()
        return self._runner

    @property
    def min_interval(self) -> float:
        return self._min_interval

    @property
    def max_per_user(self) -> int:
        return self._max_per_user

    # -- SchedulerPort ----------------------------------------------------------------------------------------

    async def start(self, schedule: Schedule) -> None:
        planned = schedule.next_run_at
        if planned is not None and self._group is not None:  # not serving: the next server to start queues it
            docket = await self._running()
            first = dt.datetime.fromisoformat(planned)
            await docket.add(TASK, when=first, key=key_of(schedule.id))(schedule.id, planned)

    async def stop(self, schedule_id: str) -> None:
        if self._docket is not None:
            await self._docket.cancel(key_of(schedule_id))
        # on another replica, or before this one started: the tick finds the schedule cancelled and ends there

    # -- serving ------------------------------------------------------------------------------------------------

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """While the server serves: the worker, started now when Redis is shared or schedules exist."""
        async with anyio.create_task_group() as group:
            self._group = group
            group.start_soon(self._start_if_needed)
            try:
                yield
            finally:
                self._group = None
                group.cancel_scope.cancel()

    async def _start_if_needed(self) -> None:
        """The worker, once there are schedules to run: at start if the store has some; on the embedded store else
        with the first `schedule_tool_run` (`start`); with Redis, also when another replica made one (looked for
        every `LOOK_SECONDS`), so every replica works on the shared schedules and a replica's death loses none."""
        if not self.shared and self._tools_ready is not None:
            await self._tools_ready()
        while self._docket is None:
            try:
                if await self._store().listed(None):
                    await self._running()
                    return
            except Exception:
                logger.warning("scheduled runs could not start yet; looking again shortly", exc_info=True)
            if not self.shared:
                return
            await anyio.sleep(LOOK_SECONDS)

    async def _running(self) -> Any:
        async with self._starting:
            if self._docket is None:
                if self._group is None:
                    raise RuntimeError("the schedule engine runs only while the server serves")
                self._docket = await self._group.start(self._work)
            return self._docket

    async def _work(self, *, task_status: anyio.abc.TaskStatus[Any]) -> None:
        from docket import Docket, Perpetual, Worker

        runner = self.runner

        # docket queues the next tick by the function's own name: it is the task's name on every replica
        async def truloop_schedule_tick(schedule_id: str, planned_at: str, perpetual: Perpetual = Perpetual()) -> None:  # noqa: B008 - docket's way to declare it
            """One tick, then the next one queued under the same key (none: the schedule ends here)."""
            try:
                following = await runner.tick(schedule_id, planned_at)
            except Exception:  # the store away: the same tick again shortly (its claim keeps it to one run)
                logger.warning("schedule %s: tick %s not run; trying again", schedule_id, planned_at, exc_info=True)
                perpetual.after(dt.timedelta(seconds=STORE_RETRY_SECONDS))
                return
            if following is None:
                perpetual.cancel()
                return
            perpetual.perpetuate(schedule_id, following)
            perpetual.at(dt.datetime.fromisoformat(following))

        async with Docket(name=self._name, url=self._url) as docket:
            docket.register(truloop_schedule_tick)
            worker = Worker(
                docket,
                name=f"{socket.gethostname()}#{os.getpid()}",
                concurrency=CONCURRENCY,
                redelivery_timeout=dt.timedelta(seconds=REDELIVERY_SECONDS),
                minimum_check_interval=dt.timedelta(seconds=CHECK_SECONDS),
                scheduling_resolution=dt.timedelta(seconds=CHECK_SECONDS),
                schedule_automatic_tasks=False,
            )
            async with worker:
                await self._restore(docket)
                task_status.started(docket)
                try:
                    await worker.run_forever()
                finally:
                    self._docket = None

    async def _restore(self, docket: Any) -> None:
        """Queue the next tick of every active schedule (a no-op for those already queued). One that cannot be
        planned is paused with its reason; it never keeps the others from being queued."""
        now = dt.datetime.now(dt.UTC)
        for schedule in await self._store().listed(None):
            if schedule.status != "active":
                continue
            try:
                await self._put_back(docket, schedule, now)
            except Exception:  # the next replica to start puts this one back; the others are queued now
                logger.warning("schedule %s: its next tick could not be queued", schedule.id, exc_info=True)

    async def _put_back(self, docket: Any, schedule: Schedule, now: dt.datetime) -> None:
        from toolsets.scheduling.when import WhenError

        try:
            when = _restored_tick(schedule, now)
        except WhenError as exc:
            await self.runner.pause(schedule, f"its next run cannot be planned: {exc}")
            return
        if when is not None:
            iso = when.astimezone(dt.UTC).isoformat(timespec="milliseconds")
            await docket.add(TASK, when=max(when, now), key=key_of(schedule.id))(schedule.id, iso)


def _restored_tick(schedule: Schedule, now: dt.datetime) -> dt.datetime | None:
    """Where a schedule stands: its recorded next tick, else its first from now; `WhenError` when its `when` cannot
    be planned or its recorded tick cannot be read."""
    from server.schedules.ticks import first_tick
    from toolsets.scheduling.when import WhenError

    first = first_tick(schedule, now)  # also for one with a recorded tick: what cannot be planned is told now
    if schedule.next_run_at is None:
        return first
    try:
        when = dt.datetime.fromisoformat(schedule.next_run_at)
    except ValueError:
        raise WhenError(f"its recorded next run {schedule.next_run_at!r} is not an ISO 8601 date-time") from None
    if when.tzinfo is None:
        raise WhenError(f"its recorded next run {schedule.next_run_at!r} has no UTC offset")
    return when
